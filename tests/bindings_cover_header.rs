//! The Python module (python/quiver.py) and the Java binding (bindings/java)
//! bind every function that include/quiver.h declares: a function added to
//! the C API without a binding fails here. It reads files the crate package
//! leaves out (python/, bindings/), so it runs from a checkout.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The names of the functions include/quiver.h declares (`quiver_...(` at
/// the start of a declaration line, after its return type).
fn header_functions() -> BTreeSet<String> {
    let header = std::fs::read_to_string(root().join("include/quiver.h")).expect("include/quiver.h");
    let mut names = BTreeSet::new();
    for line in header.lines().filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with("typedef")) {
        let Some(open) = line.find('(') else { continue };
        let head = &line[..open];
        if let Some(name) = head.rsplit([' ', '*']).next() {
            if name.starts_with("quiver_") {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// Every `.java` file under `dir`, concatenated.
fn java_sources(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            java_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "java") {
            out.push_str(&std::fs::read_to_string(&path).expect("readable source"));
        }
    }
}

#[test]
fn bindings_cover_every_header_function() {
    let functions = header_functions();
    assert!(functions.len() >= 34, "found only {} functions in include/quiver.h: {functions:?}", functions.len());
    let python = std::fs::read_to_string(root().join("python/quiver.py")).expect("python/quiver.py");
    let mut java = String::new();
    java_sources(&root().join("bindings/java"), &mut java);
    let mut missing = Vec::new();
    for f in &functions {
        // python/quiver.py declares each signature as `"<name>": (restype, [argtypes])`.
        if !python.contains(&format!("\"{f}\": (")) {
            missing.push(format!("python/quiver.py lacks {f}"));
        }
        // bindings/java looks each one up by name: `fn("<name>", FunctionDescriptor...)`.
        if !java.contains(&format!("fn(\"{f}\",")) {
            missing.push(format!("bindings/java lacks {f}"));
        }
    }
    assert!(missing.is_empty(), "functions of include/quiver.h without a binding:\n  {}", missing.join("\n  "));
}
