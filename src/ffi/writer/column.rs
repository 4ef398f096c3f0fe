//! The column path of the C API: whole columns from native buffers or from a
//! caller's Arrow array.

use std::ffi::{c_int, c_void};

use arrow_array::make_array;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Field;

use crate::error::{QuiverError, Result};
use crate::ffi::abi::{ArrowArray, ArrowSchema};
use crate::ffi::boundary::non_null;
use crate::ffi::handle::enter_writer;
use crate::ffi::handle::QuiverWriter;
use crate::ffi::schema::check_schema_struct;
use crate::ffi::writer::append::borrowed_bytes;

/// Appends `length` rows to a whole top-level column of a fixed-width type
/// (native little-endian values, `length * width` bytes; boolean: an
/// LSB-first bitmap of `length` bits). `validity`: LSB-first bitmap, NULL =
/// all valid. Null slots get zero values whatever `values` holds there.
/// Rows are committed once every top-level column has the same length.
/// Ownership: `values` and `validity` are borrowed (copied).
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone; `values` points to
/// the bytes of `length` values of the column's type; `validity` is NULL or
/// points to `ceil(length / 8)` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn quiver_write_column(
    w: *mut QuiverWriter,
    node: u32,
    values: *const c_void,
    validity: *const u8,
    length: i64,
) -> c_int {
    const CALL: &str = "quiver_write_column";
    enter_writer(CALL, w, |x| {
        if length < 0 {
            return Err(QuiverError::invalid(format!("{CALL}: length is negative ({length})")));
        }
        let length = length as usize;
        let need = x.column_value_bytes(node as usize, length, CALL)?;
        // SAFETY: `values` points to the `need` bytes this column's type
        // takes for `length` rows.
        let values = unsafe { borrowed_bytes(values.cast(), need, CALL)? };
        let validity = if validity.is_null() {
            None
        } else {
            // SAFETY: non-NULL `validity` points to ceil(length/8) bytes.
            Some(unsafe { borrowed_bytes(validity, length.div_ceil(8), CALL)? })
        };
        x.write_column_bytes(node as usize, values, validity, length)
    })
}

/// Appends a whole top-level column copied from an Arrow array of the
/// node's type (any offset; nested types included). The array is fully
/// validated first; EINVAL for a malformed array or schema or a type
/// mismatch (nothing is written then).
/// Ownership: `array` and `schema` are borrowed: not moved, not released.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone; `array` and
/// `schema` are NULL or valid C Data Interface structs, unchanged during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn quiver_write_array(
    w: *mut QuiverWriter,
    node: u32,
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> c_int {
    const CALL: &str = "quiver_write_array";
    enter_writer(CALL, w, |x| {
        non_null(CALL, "array", array)?;
        non_null(CALL, "schema", schema)?;
        // SAFETY: non-NULL pointers to the caller's structs, borrowed.
        let data = unsafe { import_borrowed(array, schema, CALL)? };
        x.write_array_data(node as usize, &data)
    })
}

/// Imports a caller's array without taking it: a bitwise copy whose release
/// does nothing, so the caller's struct and buffers stay the caller's.
///
/// # Safety
/// `array` and `schema` are non-NULL and valid C Data Interface structs.
unsafe fn import_borrowed(
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    call: &str,
) -> Result<arrow_data::ArrayData> {
    unsafe extern "C" fn keep(array: *mut FFI_ArrowArray) {
        // SAFETY: arrow calls this on the copy made below (or NULL): mark it
        // released, free nothing.
        if let Some(array) = unsafe { array.as_mut() } {
            // SAFETY: clearing the release of a struct we own.
            unsafe { array.set_release(None) };
        }
    }
    // SAFETY: per the contract; bounds and structure are checked before
    // arrow reads anything recursively.
    unsafe {
        crate::depth::check_ffi_schema(schema, call, 1)?;
        check_schema_struct(ArrowSchema::from_ffi(schema), call, "schema", 0)?;
        check_array_struct(ArrowArray::from_ffi(array), ArrowSchema::from_ffi(schema), call, "array")?;
    }
    // SAFETY: `schema` is valid and checked.
    let field = Field::try_from(unsafe { &*schema })
        .map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowSchema: {e}")))?;
    // SAFETY: a bitwise copy of the caller's checked struct, read only during
    // this call; its release (`keep`) frees nothing.
    let mut copy = unsafe { std::ptr::read(array) };
    // SAFETY: replacing the release of our copy.
    unsafe { copy.set_release(Some(keep)) };
    // SAFETY: the copy's structure is checked against the schema it is read with.
    let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(copy, field.data_type().clone()) }
        .map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowArray: {e}")))?;
    data.validate_full().map_err(|e| QuiverError::invalid(format!("{call}: invalid ArrowArray: {e}")))?;
    // Normalise offsets of nested arrays as arrow-rs arrays hold them.
    Ok(make_array(data).to_data())
}

/// Checks the structure of a caller's `ArrowArray` against its schema before
/// arrow reads it: not released, buffer and child pointers present, child
/// counts matching the schema.
///
/// # Safety
/// `array` and `schema` are non-NULL, readable, and `schema` has passed
/// `check_schema_struct`; pointers the check follows are the ones it has
/// checked non-NULL.
unsafe fn check_array_struct(
    array: *const ArrowArray,
    schema: *const ArrowSchema,
    call: &str,
    path: &str,
) -> Result<()> {
    let bad = |what: String| QuiverError::invalid(format!("{call}: malformed ArrowArray at {path}: {what}"));
    // SAFETY: per the contract.
    let (a, s) = unsafe { (&*array, &*schema) };
    if a.release.is_none() {
        return Err(bad("it is released (release is NULL)".into()));
    }
    if a.length as u64 > i64::MAX as u64 / 2 {
        return Err(bad("length is negative".into()));
    }
    if a.n_children != s.n_children {
        return Err(bad(format!("n_children is {} but the schema has {}", a.n_children, s.n_children)));
    }
    if a.n_buffers < 0 || a.n_buffers > 1 << 16 || (a.n_buffers > 0 && a.buffers.is_null()) {
        return Err(bad(format!("n_buffers is {} and buffers is {:?}", a.n_buffers, a.buffers)));
    }
    if a.n_children > 0 && a.children.is_null() {
        return Err(bad("children is NULL".into()));
    }
    for i in 0..a.n_children.max(0) as usize {
        // SAFETY: `children` holds n_children pointers (n_children matches
        // the checked schema's, so both arrays have entry i).
        let (child, child_schema) = unsafe { (*a.children.add(i), *s.children.add(i)) };
        if child.is_null() {
            return Err(bad(format!("children[{i}] is NULL")));
        }
        // SAFETY: a non-NULL child of each, checked level by level.
        unsafe { check_array_struct(child, child_schema, call, &format!("{path}.children[{i}]"))? };
    }
    match (s.dictionary.is_null(), a.dictionary.is_null()) {
        (false, false) => {
            // SAFETY: both dictionaries are non-NULL.
            unsafe { check_array_struct(a.dictionary, s.dictionary, call, &format!("{path}.dictionary"))? }
        }
        (false, true) => return Err(bad("the schema has a dictionary but the array has none".into())),
        _ => {}
    }
    Ok(())
}
