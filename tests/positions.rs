//! Row-path positions on the checked (slow) path, and the rollback helpers
//! of src/writer/position.rs, in the cases the broader suites reach only by
//! chance. Each test names the mutant of scripts/mutants.sh it was written
//! to kill (docs/reliability.md, "Mutation testing").

use arrow_array::cast::AsArray;
use arrow_array::types::Decimal128Type;
use arrow_array::Array;
use quiver::{ArrowWriter, ErrorCode, WriterOptions};

/// A decimal appended as an i64 is not on the fast path (`append_le` checks
/// the position with `target`), so a fixed-size list item written that way
/// goes through `parent_slot_free`: it takes exactly `size` values per entry.
/// Kills: `delete match arm Layout::FixedList{size} in
/// ArrowWriter::parent_slot_free`, and its `<` / `*` / `+` mutants.
#[test]
fn a_fixed_size_list_item_on_the_checked_path_takes_size_values() {
    let mut w = ArrowWriter::from_text("d: fixed_size_list<decimal128(5, 0), 2>", WriterOptions::default()).unwrap();
    for row in 0..3i64 {
        w.begin(0).unwrap();
        w.append_i64(1, 10 * row + 1).unwrap();
        w.append_i64(1, 10 * row + 2).unwrap();
        let e = w.append_i64(1, 99).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("already has its 2 values"), "{e}");
        w.end(0).unwrap();
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    let items = b.column(0).as_fixed_size_list().values().as_primitive::<Decimal128Type>().clone();
    let got: Vec<i128> = items.iter().map(Option::unwrap).collect();
    assert_eq!(got, [1, 2, 11, 12, 21, 22]);
}

/// A union member is written on the checked path: a union value takes one
/// member value, and a second one in the same value is refused (dense: no
/// member has grown since `begin`; sparse: every member is at the union's
/// length). Kills: `delete match arm Layout::Union{offsets:Some(_), ..} in
/// ArrowWriter::parent_slot_free` and the `==` mutants of both union arms.
#[test]
fn a_union_value_takes_one_member_value() {
    for kind in ["dense_union", "sparse_union"] {
        let text = format!("u: {kind}<a: int32, b: utf8>");
        let mut w = ArrowWriter::from_text(&text, WriterOptions::default()).unwrap();
        for row in 0..4i32 {
            w.begin(0).unwrap();
            if row % 2 == 0 {
                w.append_i32(1, row).unwrap();
            } else {
                w.append_str(2, "x").unwrap();
            }
            for e in [w.append_i32(1, 7).unwrap_err(), w.append_str(2, "y").unwrap_err()] {
                assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text}: {e}");
            }
            w.end(0).unwrap();
            w.end_row().unwrap();
        }
        let b = w.finish().unwrap();
        b.column(0).to_data().validate_full().unwrap();
        let u = b.column(0).as_union();
        assert_eq!(u.type_ids().to_vec(), [0, 1, 0, 1], "{text}");
        let a = u.child(0).as_primitive::<arrow_array::types::Int32Type>();
        let s = u.child(1).as_string::<i32>();
        for row in 0..4usize {
            let at = u.value_offset(row);
            if row % 2 == 0 {
                assert_eq!(a.value(at), row as i32, "{text} row {row}");
            } else {
                assert_eq!(s.value(at), "x", "{text} row {row}");
            }
        }
    }
}

/// A fixed-size list of size 0 takes no item, on the fast path too (there a
/// child's length equals its list's, 0, at the first entry). Kills: `replace
/// == with != in ArrowWriter::child_slot_free` (the struct test taken for
/// every other child: a fixed-size list item "free" when its length equals
/// its list's).
#[test]
fn a_fixed_size_list_of_size_0_takes_no_item() {
    let mut w = ArrowWriter::from_text("e: fixed_size_list<int32, 0>, x: int32", WriterOptions::default()).unwrap();
    for row in 0..3 {
        w.begin(0).unwrap();
        let e = w.append_i32(1, 5).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "row {row}: {e}");
        w.end(0).unwrap();
        w.append_i32(2, row).unwrap();
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    assert_eq!(b.num_rows(), 3);
    assert_eq!(b.column(0).as_fixed_size_list().values().len(), 0);
}

#[path = "exact/mod.rs"]
mod exact;

/// `abort_row` in the middle of a union, list-view, dictionary or run-end
/// encoded value, and after a whole one: the next batch is byte-identical to
/// that of a writer that never saw the aborted row; the members and values
/// those columns grew are cut back too. Kills: `delete match arm
/// Kind::Union{..} | Kind::ListView{..} | Kind::Encoded{..} in
/// ArrowWriter::restore_committed`.
#[test]
fn abort_row_restores_union_list_view_and_encoded_children() {
    type Write = fn(&mut ArrowWriter, i32, bool);
    fn nested(w: &mut ArrowWriter, v: i32, close: bool) {
        w.begin(0).unwrap();
        w.append_i32(1, v).unwrap();
        if close {
            w.end(0).unwrap();
        }
    }
    fn leaf(w: &mut ArrowWriter, v: i32, _: bool) {
        w.append_str(0, &format!("v{v}")).unwrap();
    }
    let cases: [(&str, Write); 6] = [
        ("u: dense_union<a: int32, b: utf8>", nested),
        ("u: sparse_union<a: int32, b: utf8>", nested),
        ("l: list_view<int32>", nested),
        ("l: large_list_view<int32>", nested),
        ("d: dictionary<int32, utf8>", leaf),
        ("r: run_end_encoded<int32, utf8>", leaf),
    ];
    for (schema, write) in cases {
        for close in [false, true] {
            let mut got = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
            let mut want = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
            for w in [&mut got, &mut want] {
                write(w, 1, true);
                w.end_row().unwrap();
            }
            write(&mut got, 99, close);
            got.abort_row().unwrap();
            for w in [&mut got, &mut want] {
                write(w, 2, true);
                w.end_row().unwrap();
            }
            let (g, e) = (got.finish().unwrap(), want.finish().unwrap());
            g.column(0).to_data().validate_full().unwrap();
            exact::assert_same_batch(
                &g,
                &e,
                &format!("{schema}, aborted {}", if close { "after end" } else { "mid-value" }),
            );
        }
    }
}

/// The C appends of every number kind into every fixed-width column type,
/// as a top-level column, a struct field and a list item (the inlined fast
/// path of each keys on the input, the kind and the position; the first
/// row, which starts the batch on the full path, is the column's own
/// append): a call is taken or refused alike in the three places, and a
/// taken one writes one value of the column's own width, read back as
/// appended (a value written at the input's width would shift the next).
/// A struct field or list item appended with its parent not open is
/// refused. Kills: the `+` mutants of the keys in `top_fast` and
/// `keyed_child_slot`, which make an input's key equal the key of a
/// narrower one, and `keyed_child_slot`'s `n.up == self.open_top` made `!=`.
#[test]
fn every_c_append_into_every_fixed_width_column_in_every_place() {
    use arrow::compute::cast;
    use arrow_array::{RecordBatch, StructArray};
    use arrow_data::ffi::FFI_ArrowArray;
    use arrow_schema::ffi::FFI_ArrowSchema;
    use arrow_schema::DataType;
    use quiver::ffi::writer::*;
    use std::ptr::{null, null_mut};

    type Append = unsafe fn(*mut QuiverWriter, u32, f64) -> i32;
    // Each entry is called with a live writer, ours.
    let appends: [(&str, Append); 10] = [
        // SAFETY: a live writer (the caller's).
        ("i8", |w, n, v| unsafe { quiver_append_i8(w, n, v as i8) }),
        // SAFETY: a live writer (the caller's).
        ("i16", |w, n, v| unsafe { quiver_append_i16(w, n, v as i16) }),
        // SAFETY: a live writer (the caller's).
        ("i32", |w, n, v| unsafe { quiver_append_i32(w, n, v as i32) }),
        // SAFETY: a live writer (the caller's).
        ("i64", |w, n, v| unsafe { quiver_append_i64(w, n, v as i64) }),
        // SAFETY: a live writer (the caller's).
        ("u8", |w, n, v| unsafe { quiver_append_u8(w, n, v as u8) }),
        // SAFETY: a live writer (the caller's).
        ("u16", |w, n, v| unsafe { quiver_append_u16(w, n, v as u16) }),
        // SAFETY: a live writer (the caller's).
        ("u32", |w, n, v| unsafe { quiver_append_u32(w, n, v as u32) }),
        // SAFETY: a live writer (the caller's).
        ("u64", |w, n, v| unsafe { quiver_append_u64(w, n, v as u64) }),
        // SAFETY: a live writer (the caller's).
        ("f32", |w, n, v| unsafe { quiver_append_f32(w, n, v as f32) }),
        // SAFETY: a live writer (the caller's).
        ("f64", |w, n, v| unsafe { quiver_append_f64(w, n, v) }),
    ];
    // Column type `i` takes append `i` natively.
    let types = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"];
    for (own, ty) in types.into_iter().enumerate() {
        for (name, append) in appends {
            let mut taken = Vec::new();
            for (place, text) in [
                ("top", format!("c: {ty}")),
                ("struct", format!("s: struct<c: {ty}>")),
                ("list", format!("l: list<{ty}>")),
            ] {
                let case = format!("quiver_append_{name} into {ty} ({place})");
                let schema = quiver::parse_schema(&text).unwrap();
                let ffi = FFI_ArrowSchema::try_from(&schema).unwrap();
                let mut w = null_mut();
                // SAFETY: valid pointers for the call.
                assert_eq!(unsafe { quiver_writer_new(&ffi, null(), &mut w) }, 0);
                let node = if place == "top" { 0 } else { 1 };
                let mut ok = true;
                for (row, v) in [5.0, 7.0, 9.0].into_iter().enumerate() {
                    let f = if row == 0 { appends[own].1 } else { append };
                    // SAFETY: a live writer, ours.
                    unsafe {
                        if place != "top" {
                            // Outside its struct or list: refused, nothing written.
                            assert_ne!(f(w, node, v), 0, "{case}: a value with its parent not open");
                            assert_eq!(quiver_begin(w, 0), 0, "{case}");
                        }
                        ok = f(w, node, v) == 0;
                        if !ok {
                            assert!(row > 0, "{case}: the column's own append is refused");
                            assert_eq!(quiver_abort_row(w), 0);
                            break;
                        }
                        if place != "top" {
                            assert_eq!(quiver_end(w, 0), 0, "{case}");
                        }
                        assert_eq!(quiver_end_row(w), 0, "{case}");
                    }
                }
                let mut out = FFI_ArrowArray::empty();
                // SAFETY: a live writer; `out` is ours; then freed once.
                unsafe {
                    assert_eq!(quiver_writer_finish(w, &mut out), 0);
                    quiver_writer_free(w);
                }
                // SAFETY: exported with this schema's struct type.
                let data =
                    unsafe { arrow_array::ffi::from_ffi_and_data_type(out, DataType::Struct(schema.fields().clone())) }
                        .unwrap();
                let batch = RecordBatch::from(StructArray::from(data));
                batch.column(0).to_data().validate_full().unwrap();
                let column = match place {
                    "top" => batch.column(0).clone(),
                    "struct" => batch.column(0).as_struct().column(0).clone(),
                    _ => batch.column(0).as_list::<i32>().values().clone(),
                };
                let want: &[f64] = if ok { &[5.0, 7.0, 9.0] } else { &[5.0] };
                assert_eq!(batch.num_rows(), want.len(), "{case}");
                let width = column.data_type().primitive_width().unwrap();
                assert_eq!(column.to_data().buffers()[0].len(), want.len() * width, "{case}");
                let got = cast(&column, &DataType::Float64).unwrap();
                assert_eq!(got.as_primitive::<arrow_array::types::Float64Type>().values(), want, "{case}");
                taken.push(ok);
            }
            assert!(
                taken.iter().all(|&t| t == taken[0]),
                "quiver_append_{name} into {ty}: taken {taken:?} (top, struct, list)"
            );
        }
    }
}
