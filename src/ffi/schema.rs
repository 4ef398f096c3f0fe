//! Schemas over the C Data Interface: checking and importing a caller's
//! `ArrowSchema`, exporting ours, and the text form.

use std::ffi::{c_char, c_int, CStr};

use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Schema;

use crate::error::{QuiverError, Result};
use crate::ffi::abi::ArrowSchema;
use crate::ffi::boundary::{enter, non_null, panic_message};

use crate::depth::MAX_DEPTH;

/// Checks the structure of a caller's `ArrowSchema` before arrow reads it:
/// not released, format present, children present and not NULL, depth bounded.
///
/// # Safety
/// `schema` is non-NULL and points to a readable `ArrowSchema` whose non-NULL
/// pointers (followed only once checked) point to readable structs.
pub(crate) unsafe fn check_schema_struct(
    schema: *const ArrowSchema,
    call: &str,
    path: &str,
    depth: usize,
) -> Result<()> {
    let bad = |what: String| QuiverError::invalid(format!("{call}: malformed ArrowSchema at {path}: {what}"));
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH}")));
    }
    // SAFETY: per the contract.
    let raw = unsafe { &*schema };
    if raw.release.is_none() {
        return Err(bad("it is released (release is NULL)".into()));
    }
    if raw.format.is_null() {
        return Err(bad("format is NULL".into()));
    }
    if raw.n_children < 0 || raw.n_children > 1 << 20 {
        return Err(bad(format!("n_children is {}", raw.n_children)));
    }
    if raw.n_children > 0 && raw.children.is_null() {
        return Err(bad(format!("n_children is {} but children is NULL", raw.n_children)));
    }
    // Formats whose child count is fixed: checked here, because arrow's
    // import asserts on them.
    // SAFETY: a non-NULL format is a NUL-terminated string.
    let format = unsafe { CStr::from_ptr(raw.format) }.to_bytes();
    let want = match format {
        b"+l" | b"+L" | b"+m" | b"+vl" | b"+vL" => Some(1),
        f if f.starts_with(b"+w:") => Some(1),
        b"+r" => Some(2),
        f if !f.starts_with(b"+") => Some(0),
        _ => None,
    };
    if let Some(want) = want {
        if raw.n_children != want {
            return Err(bad(format!(
                "format {:?} takes {want} children, n_children is {}",
                String::from_utf8_lossy(format),
                raw.n_children
            )));
        }
    }
    for i in 0..raw.n_children as usize {
        // SAFETY: `children` is non-NULL and holds n_children pointers.
        let child = unsafe { *raw.children.add(i) };
        if child.is_null() {
            return Err(bad(format!("children[{i}] is NULL")));
        }
        // SAFETY: a non-NULL child of a checked struct.
        unsafe { check_schema_struct(child, call, &format!("{path}.children[{i}]"), depth + 1)? };
    }
    if !raw.dictionary.is_null() {
        // SAFETY: a non-NULL dictionary of a checked struct.
        unsafe { check_schema_struct(raw.dictionary, call, &format!("{path}.dictionary"), depth + 1)? };
    }
    Ok(())
}

/// Imports a caller's `ArrowSchema` (borrowed) as a schema: a struct whose
/// children are the columns.
///
/// # Safety
/// `schema` is non-NULL and points to a valid `ArrowSchema`, unchanged
/// during the call.
pub(crate) unsafe fn import_schema(schema: *const FFI_ArrowSchema, call: &str) -> Result<Schema> {
    // SAFETY: per the contract; bounds and structure are checked before
    // arrow reads it (borrowed).
    unsafe {
        crate::depth::check_ffi_schema(schema, call, 0)?;
        check_schema_struct(ArrowSchema::from_ffi(schema), call, "schema", 0)?;
    }
    // A schema arrow's import still asserts on is malformed input, not a
    // reason to poison anything: its panic becomes EINVAL here.
    // SAFETY: `schema` is valid and checked.
    match std::panic::catch_unwind(|| Schema::try_from(unsafe { &*schema })) {
        Ok(r) => r.map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowSchema: {e}"))),
        Err(p) => Err(QuiverError::invalid(format!(
            "{call}: malformed ArrowSchema: the import refused it ({})",
            panic_message(&*p)
        ))),
    }
}

/// Exports `schema` into `*out`.
///
/// # Safety
/// `out` is non-NULL and valid for writes.
pub(crate) unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema, call: &str) -> Result<()> {
    let exported = FFI_ArrowSchema::try_from(schema)
        .map_err(|e| QuiverError::invalid(format!("{call}: cannot export the schema: {e}")))?;
    // SAFETY: per the contract.
    unsafe { out.write(exported) };
    Ok(())
}

/// Parses the text form of a schema (docs/schema-text.md), e.g.
/// `"id: int64 not null, tags: list<utf8>, pt: struct<x: float64, y: float64>"`,
/// into `*out`. Errors (EINVAL) name the position and what was expected
/// (`quiver_last_error`).
/// Ownership: `text` is borrowed. On success the caller owns `*out` and must
/// call `out->release`; on failure `*out` is untouched and nothing is owed.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_schema_parse(text: *const c_char, out: *mut FFI_ArrowSchema) -> c_int {
    const CALL: &str = "quiver_schema_parse";
    enter(CALL, || {
        non_null(CALL, "text", text)?;
        non_null(CALL, "out", out)?;
        // SAFETY: `text` is a NUL-terminated string the caller owns.
        let text = unsafe { CStr::from_ptr(text) }
            .to_str()
            .map_err(|e| QuiverError::invalid(format!("{CALL}: text is not UTF-8: {e}")))?;
        let schema = crate::schema_text::parse_schema(text).map_err(|e| e.context(CALL))?;
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { export_schema(&schema, out, CALL)? };
        Ok(0)
    })
}
