//! The shape of the code (docs/design.md §1): every file under src/ is at
//! most `MAX_LINES` lines, the modules import each other without a cycle, and
//! the lower layers (buffer, layout, node) never reach up into the writer
//! or the C boundary (`ffi::boundary` and `ffi::abi` sit below every other
//! module of the C layer).
//!
//! A module is one file (`src/a/b.rs` and `src/a/b/mod.rs` are `crate::a::b`).
//! Its dependencies are the modules named by its `use crate::…`, `use
//! super::…` and `use self::…` imports, by the `crate::…` / `super::…`
//! paths in its code and by paths into its own child modules (`use
//! child::…`, `child::f()`) (comments are skipped), each resolved to the
//! longest module path it starts with. The crate root (src/lib.rs) only declares
//! modules and re-exports, so it is left out of the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const MAX_LINES: usize = 450;

/// Layers and the modules (prefixes) none of their modules may depend on.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "crate::buffer",
        &["crate::layout", "crate::node", "crate::writer", "crate::ffi", "crate::stream", "crate::export"],
    ),
    ("crate::layout", &["crate::node", "crate::writer", "crate::ffi", "crate::stream", "crate::export"]),
    ("crate::node", &["crate::writer", "crate::ffi", "crate::stream", "crate::export"]),
    // The C boundary's own floor: the struct mirror and the boundary itself
    // know nothing of the C objects built on them.
    ("crate::ffi::abi", C_OBJECTS),
    ("crate::ffi::boundary", C_OBJECTS),
];

/// The modules of the C layer above `ffi::abi` and `ffi::boundary`.
const C_OBJECTS: &[&str] = &[
    "crate::ffi::handle",
    "crate::ffi::writer",
    "crate::ffi::stream",
    "crate::ffi::schema",
    "crate::ffi::options",
    "crate::export",
    "crate::stream",
];

fn src_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("read src").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            src_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` -> `crate::a::b`; `src/a/mod.rs` -> `crate::a`; `src/lib.rs` -> `crate`.
fn module_of(rel: &str) -> String {
    let stem = rel.trim_start_matches("src/").trim_end_matches(".rs");
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" {
        return "crate".into();
    }
    format!("crate::{}", stem.replace('/', "::"))
}

/// The code of `text` without comments (line comments and block comments;
/// good enough for this crate's sources, which put no `//` in strings that
/// name modules).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        match (rest.find("//"), rest.find("/*")) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

/// Expands one `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    // `a as b` names `a`.
    let tree: String = tree.replace(" as ", "@").chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.split('@').next().unwrap_or(&tree).to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').expect("balanced use tree")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).flat_map(expand).map(|p| format!("{prefix}{p}")).collect()
}

/// The absolute paths (`crate::…`) a module's code names.
fn named_paths(module: &str, code: &str) -> Vec<String> {
    let parent = module.rsplit_once("::").map_or("crate", |(p, _)| p).to_string();
    let absolute = |p: &str| -> Option<String> {
        if let Some(rest) = p.strip_prefix("crate::") {
            Some(format!("crate::{rest}"))
        } else if let Some(rest) = p.strip_prefix("super::") {
            Some(format!("{parent}::{rest}"))
        } else {
            p.strip_prefix("self::").map(|rest| format!("{module}::{rest}"))
        }
    };
    let mut out = Vec::new();
    // `use` declarations (a line starting with one; possibly over several lines).
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let Some(tree) = t.strip_prefix("use ") else { continue };
        let mut tree = tree.to_string();
        while !tree.contains(';') {
            let Some(next) = lines.next() else { break };
            tree.push_str(next);
        }
        let tree = &tree[..tree.find(';').unwrap_or(tree.len())];
        out.extend(expand(tree).iter().filter_map(|p| absolute(p)));
    }
    // Paths in the code.
    for start in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let before = rest[..at].chars().next_back();
            let tail = &rest[at..];
            let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                out.extend(absolute(&tail[..end]));
            }
            rest = &tail[start.len()..];
        }
    }
    out
}

/// The longest module among `modules` that `path` starts with.
fn resolve<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    modules.iter().filter(|m| path == m.as_str() || path.starts_with(&format!("{m}::"))).max_by_key(|m| m.len())
}

struct Crate {
    /// Module -> (file, line count).
    files: BTreeMap<String, (String, usize)>,
    /// Module -> the modules it depends on.
    deps: BTreeMap<String, BTreeSet<String>>,
}

fn load() -> Crate {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    src_files(&root.join("src"), &mut paths);
    let mut files = BTreeMap::new();
    let mut code = BTreeMap::new();
    for p in &paths {
        let rel = p.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(p).expect("read source");
        let module = module_of(&rel);
        files.insert(module.clone(), (rel, text.lines().count()));
        code.insert(module, strip_comments(&text));
    }
    let modules: BTreeSet<String> = files.keys().filter(|m| *m != "crate").cloned().collect();
    let mut deps = BTreeMap::new();
    for (module, text) in &code {
        if module == "crate" {
            continue;
        }
        let mut targets: BTreeSet<String> = named_paths(module, text)
            .iter()
            .filter_map(|p| resolve(p, &modules))
            .filter(|t| *t != module)
            .cloned()
            .collect();
        // Paths relative to the module itself (`use child::X`, `child::f()`).
        for child in children_of(module, &modules) {
            if names_relative(text, child.rsplit("::").next().expect("a last segment")) {
                targets.insert(child.clone());
            }
        }
        deps.insert(module.clone(), targets);
    }
    Crate { files, deps }
}

/// The modules directly under `module`.
fn children_of<'a>(module: &str, modules: &'a BTreeSet<String>) -> Vec<&'a String> {
    modules.iter().filter(|m| m.strip_prefix(&format!("{module}::")).is_some_and(|rest| !rest.contains("::"))).collect()
}

/// Whether `code` names `name::…` as a path of its own (not the tail of
/// `a::name::…`, not part of a longer identifier).
fn names_relative(code: &str, name: &str) -> bool {
    let pattern = format!("{name}::");
    code.match_indices(&pattern)
        .any(|(at, _)| !code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':'))
}

/// A cycle of `deps`, if there is one, as the modules along it.
fn find_cycle(deps: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    fn visit<'a>(
        m: &'a str,
        deps: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let from = path.iter().position(|p| *p == m).expect("on the path");
                let mut cycle: Vec<String> = path[from..].iter().map(|s| s.to_string()).collect();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m, 1);
        path.push(m);
        for d in deps.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, deps, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m, 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in deps.keys() {
        if let Some(c) = visit(m, deps, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let c = load();
    let over: Vec<String> = c
        .files
        .values()
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(file, lines)| format!("{file}: {lines} lines"))
        .collect();
    assert!(over.is_empty(), "files over {MAX_LINES} lines (split them by what they own):\n{}", over.join("\n"));
}

#[test]
fn modules_import_each_other_without_a_cycle() {
    let c = load();
    assert!(c.deps.len() > 10, "too few modules found: {:?}", c.deps.keys());
    if let Some(cycle) = find_cycle(&c.deps) {
        panic!("import cycle among src/ modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn lower_layers_do_not_depend_on_higher_ones() {
    let c = load();
    let mut wrong = Vec::new();
    for (module, targets) in &c.deps {
        for (layer, forbidden) in LAYERS {
            if module != layer && !module.starts_with(&format!("{layer}::")) {
                continue;
            }
            for t in targets {
                if forbidden.iter().any(|f| t == f || t.starts_with(&format!("{f}::"))) {
                    wrong.push(format!("{module} depends on {t}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "a lower layer depends on a higher one:\n{}", wrong.join("\n"));
}

#[test]
fn the_checks_see_what_they_check() {
    // The parser itself: a use tree, a path in code, a comment, a cycle.
    assert_eq!(expand("crate::a::{b, c::{d, e as f}}"), ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]);
    let code = strip_comments("use super::{Y, z::Q};\n// crate::gone\nfn f() { crate::q::r(); }");
    let modules: BTreeSet<String> = ["crate::w", "crate::w::z", "crate::q", "crate::gone"].map(String::from).into();
    let named: BTreeSet<&str> =
        named_paths("crate::w::x", &code).iter().filter_map(|p| resolve(p, &modules)).map(|m| m.as_str()).collect();
    assert_eq!(named, BTreeSet::from(["crate::w", "crate::w::z", "crate::q"]));
    assert!(names_relative("pub(crate) use view::data_end;", "view"));
    assert!(!names_relative("crate::layout::view::data_end(x)", "view"));
    assert!(!names_relative("fn preview::x", "view"));
    assert!(!strip_comments("a // crate::gone\nb /* crate::x */ c").contains("crate::"));
    let deps: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(m, d)| (m.to_string(), BTreeSet::from([d.to_string()])))
        .collect();
    assert_eq!(find_cycle(&deps).expect("a cycle").len(), 4);
}
