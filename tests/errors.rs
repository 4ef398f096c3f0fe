//! Bad input gets a clear error and loses nothing (issue: core writer).

mod all_types;

use std::sync::Arc;

use arrow_array::{cast::AsArray, types::Int64Type, Array, Int32Array, StringArray};
use arrow_schema::{DataType, Field, Schema};
use quiver::{ArrowWriter, ErrorCode, Step, WriterOptions, WriterStream};

fn two_rows(w: &mut ArrowWriter) {
    for i in 0..2 {
        w.append_i64(0, i).unwrap();
        w.append_str(1, "x").unwrap();
        w.begin(2).unwrap();
        w.append_i32(3, 5).unwrap();
        w.end(2).unwrap();
        w.end_row().unwrap();
    }
}

fn writer() -> ArrowWriter {
    let mut w = ArrowWriter::from_text("a: int64 not null, s: utf8, l: list<int32>", WriterOptions::default()).unwrap();
    two_rows(&mut w);
    w
}

/// The committed two rows are intact and the writer still works.
fn assert_intact(mut w: ArrowWriter) {
    assert_eq!(w.rows(), 2);
    w.append_i64(0, 2).unwrap();
    w.append_null(1).unwrap();
    w.append_null(2).unwrap();
    w.end_row().unwrap();
    let b = w.finish().unwrap();
    all_types::validate(&b);
    assert_eq!(b.num_rows(), 3);
    let a = b.column(0).as_primitive::<Int64Type>();
    assert_eq!(a.values().to_vec(), vec![0, 1, 2]);
    assert_eq!(b.column(1).as_string::<i32>().value(1), "x");
    assert!(b.column(1).is_null(2));
    assert_eq!(b.column(2).as_list::<i32>().value(1).len(), 1);
}

#[test]
fn wrong_type_for_a_column() {
    let mut w = writer();
    let e = w.append_i32(0, 1).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(
        e.message().contains("append_i32") && e.message().contains("'a'") && e.message().contains("append_i64"),
        "{e}"
    );
    let e = w.append_bool(1, true).unwrap_err();
    assert!(e.message().contains("wrong type"), "{e}");
    assert_intact(w);
}

#[test]
fn append_after_an_incomplete_row() {
    let mut w = writer();
    w.append_i64(0, 9).unwrap();
    let e = w.append_i64(0, 10).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("already has a value in row 2"), "{e}");
    let e = w.end_row().unwrap_err();
    assert!(e.message().contains("row 2 has no value for node 1 's'"), "{e}");
    let e = w.finish().unwrap_err();
    assert!(e.message().contains("incomplete"), "{e}");
    w.abort_row().unwrap();
    assert_intact(w);
}

#[test]
fn abort_row_restores_the_committed_state() {
    let mut w = writer();
    w.append_i64(0, 100).unwrap();
    w.append_str(1, "half a row").unwrap();
    w.begin(2).unwrap();
    w.append_i32(3, 1).unwrap();
    w.append_i32(3, 2).unwrap();
    w.abort_row().unwrap();
    assert_intact(w);
}

#[test]
fn nesting_misuse() {
    let mut w = writer();
    w.append_i64(0, 3).unwrap();
    let e = w.begin(1).unwrap_err();
    assert!(e.message().contains("not a list, struct, map or union"), "{e}");
    w.append_str(1, "y").unwrap();
    let e = w.append_i32(3, 1).unwrap_err();
    assert!(e.message().contains("not open") && e.message().contains("begin"), "{e}");
    let e = w.end(2).unwrap_err();
    assert!(e.message().contains("was not begun"), "{e}");
    w.begin(2).unwrap();
    let e = w.end_row().unwrap_err();
    assert!(e.message().contains("still open"), "{e}");
    let e = w.append_i64(0, 1).unwrap_err();
    assert!(e.message().contains("still open"), "{e}");
    let e = w.append_null(99).unwrap_err();
    assert!(e.message().contains("unknown node 99"), "{e}");
    w.abort_row().unwrap();
    assert_intact(w);
}

#[test]
fn struct_end_names_the_missing_child_and_stays_open() {
    let mut w = ArrowWriter::from_text("p: struct<x: int32, y: int32>", WriterOptions::default()).unwrap();
    w.begin(0).unwrap();
    w.append_i32(1, 1).unwrap();
    let e = w.end(0).unwrap_err();
    assert!(e.message().contains("no value for child node 2 'p.y'"), "{e}");
    let e = w.append_i32(1, 2).unwrap_err();
    assert!(e.message().contains("already has a value"), "{e}");
    w.append_i32(2, 2).unwrap();
    w.end(0).unwrap();
    w.end_row().unwrap();
    assert_eq!(w.finish().unwrap().num_rows(), 1);
}

#[test]
fn values_that_do_not_fit() {
    let mut w = ArrowWriter::from_text(
        "d: decimal128(5, 2), f: fixed_size_binary(4), s: utf8, n: int32 not null",
        WriterOptions::default(),
    )
    .unwrap();
    let e = w.append_decimal(0, 100_000).unwrap_err();
    assert_eq!(e.code(), ErrorCode::OutOfRange);
    assert!(e.message().contains("precision 5"), "{e}");
    w.append_decimal(0, -99_999).unwrap();
    let e = w.append_bytes(1, b"abc").unwrap_err();
    assert!(e.message().contains("exactly 4 bytes"), "{e}");
    w.append_bytes(1, b"abcd").unwrap();
    let e = w.append_bytes(2, b"\xff\xfe").unwrap_err();
    assert!(e.message().contains("invalid UTF-8"), "{e}");
    w.append_str(2, "ok").unwrap();
    let e = w.append_null(3).unwrap_err();
    assert!(e.message().contains("not nullable"), "{e}");
    w.append_i32(3, 1).unwrap();
    w.end_row().unwrap();
    let b = w.finish().unwrap();
    all_types::validate(&b);
    assert_eq!(b.num_rows(), 1);
}

#[test]
fn column_path_errors_change_nothing() {
    let mut w = writer();
    let e = w.write_array(0, &Int32Array::from(vec![1, 2])).unwrap_err();
    assert!(e.message().contains("cannot take an array of type Int32"), "{e}");
    let e = w.write_array(0, &arrow_array::Int64Array::from(vec![Some(1), None])).unwrap_err();
    assert!(e.message().contains("not nullable"), "{e}");
    let e = w.write_column::<i32>(0, &[1, 2], None).unwrap_err();
    assert!(e.message().contains("8-byte values"), "{e}");
    let e = w.write_array(3, &Int32Array::from(vec![1])).unwrap_err();
    assert!(e.message().contains("not a top-level column"), "{e}");
    let e = w.write_column_bytes(1, &[0; 8], None, 1).unwrap_err();
    assert!(e.message().contains("not a fixed-width column"), "{e}");
    assert_intact(w);
}

#[test]
fn column_path_commits_rows_when_every_column_has_them() {
    let mut w = ArrowWriter::from_text("a: int64, s: utf8", WriterOptions::default()).unwrap();
    w.write_column::<i64>(0, &[1, 2, 3], Some(&[0b101])).unwrap();
    assert_eq!(w.rows(), 0);
    w.write_array(1, &StringArray::from(vec!["a", "b", "c"])).unwrap();
    assert_eq!(w.rows(), 3);
    let b = w.finish().unwrap();
    all_types::validate(&b);
    assert!(b.column(0).is_null(1));
    assert_eq!(b.column(0).to_data().buffers()[0].as_slice()[8..16], [0; 8], "zero under the null");
}

#[test]
fn unsupported_type_is_named_at_create() {
    let schema = Schema::new(vec![
        Field::new("ok", DataType::Int32, true),
        Field::new("weird", DataType::Dictionary(Box::new(DataType::Float32), Box::new(DataType::Utf8)), true),
    ]);
    let e = ArrowWriter::create(Arc::new(schema), WriterOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert_eq!(e.errno(), libc_enosys());
    assert!(e.message().contains("'weird'") && e.message().contains("Dictionary"), "{e}");
}

fn libc_enosys() -> i32 {
    38
}

#[test]
fn fill_error_is_reported_and_sticky() {
    let mut calls = 0;
    let s = WriterStream::new(
        ArrowWriter::from_text("a: int64", WriterOptions { batch_rows: 4, ..Default::default() }).unwrap(),
        move |w, _| {
            calls += 1;
            if calls == 2 {
                return Err(quiver::QuiverError::fill("the source went away"));
            }
            w.append_i64(0, calls).unwrap();
            w.end_row()?;
            Ok(Step::Batch)
        },
    );
    let mut ffi = s.into_ffi();
    let raw = &mut ffi as *mut arrow_array::ffi_stream::FFI_ArrowArrayStream;
    // SAFETY: `raw` points to the live exported stream; its callbacks are called as the C Stream Interface says.
    unsafe {
        let get_next = (*raw).get_next().unwrap();
        let last_error = (*raw).get_last_error().unwrap();
        let mut out = arrow_data::ffi::FFI_ArrowArray::empty();
        assert_eq!(get_next(raw, &mut out), 0);
        assert_eq!(out.len(), 1);
        drop(out);
        for _ in 0..2 {
            let mut out = arrow_data::ffi::FFI_ArrowArray::empty();
            assert_eq!(get_next(raw, &mut out), 5, "EIO, again on the next call");
            assert!(out.is_released());
            let msg = std::ffi::CStr::from_ptr(last_error(raw)).to_str().unwrap();
            assert!(msg.contains("the source went away"), "{msg}");
        }
    }
}

#[test]
fn panicking_fill_poisons_the_stream_without_crossing_the_boundary() {
    let s = WriterStream::new(
        ArrowWriter::from_text("a: int64", WriterOptions::default()).unwrap(),
        |_, _| -> quiver::Result<Step> { panic!("fill blew up") },
    );
    let reader = arrow_array::ffi_stream::RecordBatchStreamReader::try_new(s.into_ffi()).unwrap();
    let errors: Vec<String> = reader.take(2).map(|r| r.unwrap_err().to_string()).collect();
    assert_eq!(errors.len(), 2);
    assert!(errors.iter().all(|e| e.contains("fill panicked: fill blew up")), "{errors:?}");
}

#[test]
fn fill_writing_more_than_max_rows_is_refused() {
    let s = WriterStream::new(
        ArrowWriter::from_text("a: int64", WriterOptions { batch_rows: 2, ..Default::default() }).unwrap(),
        |w, _| {
            for i in 0..3 {
                w.append_i64(0, i)?;
                w.end_row()?;
            }
            Ok(Step::Batch)
        },
    );
    let mut it = s;
    let e = it.next().unwrap().unwrap_err().to_string();
    assert!(e.contains("fill wrote 3 rows, more than max_rows 2"), "{e}");
}

#[test]
fn end_of_stream_repeats() {
    let mut s =
        WriterStream::new(ArrowWriter::from_text("a: int64", WriterOptions::default()).unwrap(), |_, _| Ok(Step::End));
    assert!(s.next().is_none());
    assert!(s.next().is_none());
}
