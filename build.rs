//! Generates include/quiver.h from src/ffi/ with cbindgen (settings in
//! cbindgen.toml). The header is committed; CI fails when it is stale.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let ffi = root.join("src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // A versioned soname, as C users expect: libquiver.so.<major>.
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libquiver.so.{major}");
    }
    println!("cargo:rerun-if-changed=src/ffi");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    // cbindgen follows the `mod` declarations of src/ffi/mod.rs.
    for entry in std::fs::read_dir(&ffi).expect("src/ffi exists") {
        println!("cargo:rerun-if-changed={}", entry.expect("readable dir entry").path().display());
    }
    let builder = cbindgen::Builder::new().with_config(config).with_src(ffi.join("mod.rs"));
    let bindings = builder.generate().expect("cbindgen generates the header");
    bindings.write_to_file(root.join("include/quiver.h"));
}
