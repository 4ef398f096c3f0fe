//! Schemas over the C Data Interface: checking and importing a caller's
//! `ArrowSchema`, exporting ours, and the text form.

use std::ffi::{c_char, c_int, CStr};

use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Schema;

use crate::error::{QuiverError, Result};
use crate::ffi::{fail, guard, null_arg};

use crate::depth::MAX_DEPTH;

/// Checks the structure of a caller's `ArrowSchema` before arrow reads it:
/// not released, format present, children present and not NULL, depth bounded.
pub(crate) unsafe fn check_schema_struct(
    schema: *const FFI_ArrowSchema,
    call: &str,
    path: &str,
    depth: usize,
) -> Result<()> {
    #[repr(C)]
    struct Raw {
        format: *const c_char,
        name: *const c_char,
        metadata: *const c_char,
        flags: i64,
        n_children: i64,
        children: *mut *mut Raw,
        dictionary: *mut Raw,
        release: Option<unsafe extern "C" fn(*mut Raw)>,
        private_data: *mut std::ffi::c_void,
    }
    let bad = |what: String| QuiverError::invalid(format!("{call}: malformed ArrowSchema at {path}: {what}"));
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH}")));
    }
    // SAFETY: the caller passes a pointer to an ArrowSchema (C Data Interface
    // layout, which Raw mirrors); we read fields and follow checked pointers.
    unsafe {
        let raw = &*(schema as *const Raw);
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
        let format = CStr::from_ptr(raw.format).to_bytes();
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
            let child = *raw.children.add(i);
            if child.is_null() {
                return Err(bad(format!("children[{i}] is NULL")));
            }
            check_schema_struct(child as *const FFI_ArrowSchema, call, &format!("{path}.children[{i}]"), depth + 1)?;
        }
        if !raw.dictionary.is_null() {
            check_schema_struct(
                raw.dictionary as *const FFI_ArrowSchema,
                call,
                &format!("{path}.dictionary"),
                depth + 1,
            )?;
        }
    }
    Ok(())
}

/// Imports a caller's `ArrowSchema` (borrowed) as a schema: a struct whose
/// children are the columns.
pub(crate) unsafe fn import_schema(schema: *const FFI_ArrowSchema, call: &str) -> Result<Schema> {
    // SAFETY: checked structure first; then arrow reads it (borrowed).
    unsafe {
        crate::depth::check_ffi_schema(schema, call, 0)?;
        check_schema_struct(schema, call, "schema", 0)?;
        // A schema arrow's import still asserts on is malformed input, not a
        // reason to poison anything: its panic becomes EINVAL here.
        match std::panic::catch_unwind(|| Schema::try_from(&*schema)) {
            Ok(r) => r.map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowSchema: {e}"))),
            Err(p) => Err(QuiverError::invalid(format!(
                "{call}: malformed ArrowSchema: the import refused it ({})",
                crate::stream::panic_message(&p)
            ))),
        }
    }
}

pub(crate) fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema, call: &str) -> Result<()> {
    let exported = FFI_ArrowSchema::try_from(schema)
        .map_err(|e| QuiverError::invalid(format!("{call}: cannot export the schema: {e}")))?;
    // SAFETY: `out` is non-NULL (checked by the caller) and valid for writes.
    unsafe { out.write(exported) };
    Ok(())
}

/// Parses the text form of a schema (docs/schema-text.md), e.g.
/// `"id: int64 not null, tags: list<utf8>, pt: struct<x: float64, y: float64>"`,
/// into `*out`. Errors (EINVAL) name the position and what was expected
/// (`quiver_last_error`).
/// Ownership: `text` is borrowed. On success the caller owns `*out` and must
/// call `out->release`; on failure `*out` is untouched and nothing is owed.
#[no_mangle]
pub unsafe extern "C" fn quiver_schema_parse(text: *const c_char, out: *mut FFI_ArrowSchema) -> c_int {
    const CALL: &str = "quiver_schema_parse";
    if text.is_null() {
        return null_arg(CALL, "text");
    }
    if out.is_null() {
        return null_arg(CALL, "out");
    }
    guard(CALL, || {
        // SAFETY: `text` is a NUL-terminated string the caller owns.
        let text = match unsafe { CStr::from_ptr(text) }.to_str() {
            Ok(t) => t,
            Err(e) => return fail(QuiverError::invalid(format!("{CALL}: text is not UTF-8: {e}"))),
        };
        match crate::schema_text::parse_schema(text)
            .map_err(|e| e.context(CALL))
            .and_then(|s| export_schema(&s, out, CALL))
        {
            Ok(()) => 0,
            Err(e) => fail(e),
        }
    })
}
