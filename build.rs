//! Generates include/quiver.h from src/ffi/ with cbindgen (settings in
//! cbindgen.toml). The header is committed; CI fails when it is stale.
//!
//! cbindgen reads source files and does not expand macros, so the C numeric
//! appends, which one `c_numeric_appends!` table in src/ffi/writer/append.rs
//! defines, would be missing: cbindgen reads a copy of src/ffi in OUT_DIR in
//! which that table is written out as the declarations the macro makes.

use std::path::{Path, PathBuf};

/// The invocation of the table, at the start of a line.
const TABLE: &str = "\nc_numeric_appends! {\n";

/// The doc lines `c_numeric_appends!` adds after an entry's own.
const SAFETY_DOC: &str = "///\n/// # Safety\n/// `w` is NULL or a live writer, used by this call alone.\n";

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ffi = root.join("src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // A versioned soname, as C users expect: libquiver.so.<major>.
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libquiver.so.{major}");
    }
    println!("cargo:rerun-if-changed=src/ffi");
    let copy = out_dir.join("cbindgen-src/ffi");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).expect("the old copy can be removed");
    }
    copy_expanded(&ffi, &copy);
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    // cbindgen follows the `mod` declarations of src/ffi/mod.rs.
    let builder = cbindgen::Builder::new().with_config(config).with_src(copy.join("mod.rs"));
    let bindings = builder.generate().expect("cbindgen generates the header");
    bindings.write_to_file(root.join("include/quiver.h"));
}

/// Copies the `.rs` files under `from` to `to`, with the numeric-append table expanded.
fn copy_expanded(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("OUT_DIR is writable");
    for entry in std::fs::read_dir(from).expect("src/ffi exists") {
        let path = entry.expect("readable dir entry").path();
        println!("cargo:rerun-if-changed={}", path.display());
        let target = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_expanded(&path, &target);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("readable source");
            std::fs::write(&target, expand_table(&text)).expect("OUT_DIR is writable");
        }
    }
}

/// `text` with the body of a `c_numeric_appends!` invocation written out:
/// each entry `fn <name>(v: <type>) => <Input>, <method>;` (after its `///`
/// lines) becomes the `extern "C"` declaration the macro makes.
fn expand_table(text: &str) -> String {
    let Some(start) = text.find(TABLE) else { return text.to_string() };
    let body_start = start + TABLE.len();
    let body_len = text[body_start..].find("\n}\n").expect("the table ends with a `}` line");
    let mut out = text[..start + 1].to_string();
    for line in text[body_start..body_start + body_len].lines().map(str::trim) {
        if line.starts_with("///") {
            out.push_str(line);
            out.push('\n');
        } else if let Some(entry) = line.strip_prefix("fn ") {
            let (name, rest) = entry.split_once("(v: ").expect("an entry reads `fn <name>(v: <type>) => ...;`");
            let (ty, _) = rest.split_once(')').expect("an entry reads `fn <name>(v: <type>) => ...;`");
            out.push_str(SAFETY_DOC);
            out.push_str(&format!(
                "#[no_mangle]\npub unsafe extern \"C\" fn {name}(w: *mut QuiverWriter, node: u32, v: {ty}) -> c_int {{\n    0\n}}\n"
            ));
        } else {
            assert!(line.is_empty(), "unexpected line in the c_numeric_appends! table: {line}");
        }
    }
    out.push_str(&text[body_start + body_len + 3..]);
    out
}
