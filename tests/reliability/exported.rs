//! Helpers shared by tests/bad_input.rs, tests/stress.rs and the fuzz target
//! (included with `#[path]`): a renderer that turns any array the writer makes
//! into one string per row (independent of quiver), borrowed imports of
//! exported C structs, and moving a child out of an exported batch.
#![allow(dead_code)]

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{make_array, Array, ArrayRef, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::ArrayData;
use arrow_schema::DataType;
pub use quiver::ffi::abi::ArrowArray;

pub fn raw(a: &mut FFI_ArrowArray) -> &mut ArrowArray {
    // SAFETY: quiver's mirror of `struct ArrowArray`, at the same address.
    unsafe { &mut *ArrowArray::from_ffi_mut(a) }
}

/// Moves child `i` out of an exported array (a bitwise copy; the parent's
/// slot is marked released), as the C Data Interface allows.
pub fn take_child(parent: &mut FFI_ArrowArray, i: usize) -> FFI_ArrowArray {
    let r = raw(parent);
    assert!(r.release.is_some(), "parent released");
    assert!((i as i64) < r.n_children);
    // SAFETY: children[i] is a valid child struct of a live exported array.
    unsafe {
        let slot = *r.children.add(i);
        assert!((*slot).release.is_some(), "child {i} already moved out");
        let moved = std::ptr::read(slot as *const FFI_ArrowArray);
        (*slot).release = None;
        moved
    }
}

/// Whether child `i` of `parent` is still in place (not moved out).
pub fn child_in_place(parent: &mut FFI_ArrowArray, i: usize) -> bool {
    let r = raw(parent);
    // SAFETY: as in take_child.
    unsafe { (**r.children.add(i)).release.is_some() }
}

unsafe extern "C" fn keep(array: *mut FFI_ArrowArray) {
    // SAFETY: a borrowed copy made below; nothing to free.
    unsafe { (*array).set_release(None) };
}

/// Imports `array` without taking it: a bitwise copy whose release does
/// nothing, so the original stays owned (and is released) by its holder.
/// The returned data must be dropped before the original is released.
pub fn borrow_import(array: &FFI_ArrowArray, data_type: &DataType) -> ArrayData {
    // SAFETY: a live exported array; the copy only reads it.
    unsafe {
        let mut copy = std::ptr::read(array);
        copy.set_release(Some(keep));
        arrow_array::ffi::from_ffi_and_data_type(copy, data_type.clone()).expect("import exported array")
    }
}

/// Imports a child column of an exported batch by index, borrowed.
pub fn borrow_child(parent: &mut FFI_ArrowArray, i: usize, data_type: &DataType) -> ArrayData {
    let r = raw(parent);
    // SAFETY: as in take_child.
    let child = unsafe { &*(*r.children.add(i) as *const FFI_ArrowArray) };
    borrow_import(child, data_type)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn join(a: &dyn Array) -> String {
    let cells: Vec<String> = (0..a.len()).map(|i| cell(a, i)).collect();
    format!("[{}]", cells.join(", "))
}

/// One value of `a` as text: numbers as Rust prints them (floats with `{:?}`),
/// strings quoted with `{:?}`, binaries as hex, decimals as their unscaled
/// integer, lists / fixed-size lists / maps as `[a, b]`, structs as `{a, b}`.
pub fn cell(a: &dyn Array, i: usize) -> String {
    if a.is_null(i) {
        return "null".into();
    }
    match a.data_type() {
        DataType::Null => "null".into(),
        DataType::Boolean => a.as_boolean().value(i).to_string(),
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i).to_string(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i).to_string(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i).to_string(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).to_string(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).to_string(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).to_string(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).to_string(),
        DataType::Float32 => format!("{:?}", a.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => format!("{:?}", a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => format!("{:?}", a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => format!("{:?}", a.as_string::<i64>().value(i)),
        DataType::Binary => hex(a.as_binary::<i32>().value(i)),
        DataType::LargeBinary => hex(a.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(_) => hex(a.as_fixed_size_binary().value(i)),
        DataType::Decimal128(..) => a.as_primitive::<Decimal128Type>().value(i).to_string(),
        DataType::Decimal64(..) => a.as_primitive::<Decimal64Type>().value(i).to_string(),
        DataType::List(_) => join(a.as_list::<i32>().value(i).as_ref()),
        DataType::LargeList(_) => join(a.as_list::<i64>().value(i).as_ref()),
        DataType::FixedSizeList(..) => join(a.as_fixed_size_list().value(i).as_ref()),
        DataType::Map(..) => join(&a.as_map().value(i)),
        DataType::Struct(_) => {
            let s = a.as_struct();
            let cells: Vec<String> = s.columns().iter().map(|c| cell(c.as_ref(), i)).collect();
            format!("{{{}}}", cells.join(", "))
        }
        other => panic!("renderer: type {other} not covered"),
    }
}

/// Every row of a column as text.
pub fn column_cells(a: &dyn Array) -> Vec<String> {
    (0..a.len()).map(|i| cell(a, i)).collect()
}

/// Every row of a batch (struct array) as one cell per column.
pub fn rows_of(batch: &StructArray) -> Vec<Vec<String>> {
    (0..batch.len()).map(|i| batch.columns().iter().map(|c| cell(c.as_ref(), i)).collect()).collect()
}

/// Imports (borrowed) a whole exported batch of `struct_type`, validates it
/// fully, and renders its rows.
pub fn render_exported(array: &FFI_ArrowArray, struct_type: &DataType) -> Vec<Vec<String>> {
    let data = borrow_import(array, struct_type);
    data.validate_full().expect("exported batch passes validate_full");
    let a: ArrayRef = make_array(data);
    rows_of(a.as_struct())
}
