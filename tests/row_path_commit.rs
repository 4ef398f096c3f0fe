//! The row path's O(1) commit: the per-row counter of top-level columns
//! stays exact when the column path writes top-level columns in the same
//! row, and abort_row restores nested and encoded columns exactly.

use arrow_array::{
    cast::AsArray,
    types::{Int32Type, Int64Type},
    Array,
};
use quiver::{ArrowWriter, WriterOptions};

#[test]
fn row_counter_and_column_path_mix() {
    let mut w = ArrowWriter::from_text("a: int64, b: int32", WriterOptions::default()).unwrap();
    // Row path a, column path b one row: the column path commits the row.
    w.append_i64(0, 1).unwrap();
    w.write_column(1, &[10i32], None).unwrap();
    assert_eq!(w.rows(), 1);
    // Row path a, then the column path on a again (two values ahead), b by
    // the row path: the counter says complete, end_row must still refuse.
    w.append_i64(0, 2).unwrap();
    w.write_column(0, &[3i64], None).unwrap();
    w.append_i32(1, 20).unwrap();
    assert!(w.end_row().is_err(), "a has two uncommitted values");
    w.abort_row().unwrap();
    assert_eq!(w.rows(), 1);
    // Rows again, with nulls and aborts.
    for i in 0..10 {
        if i % 3 == 0 {
            w.append_null(0).unwrap()
        } else {
            w.append_i64(0, i).unwrap()
        }
        if i % 4 == 0 {
            w.append_i32(1, i as i32).unwrap();
            w.abort_row().unwrap();
            continue;
        }
        w.append_i32(1, i as i32).unwrap();
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    let a = b.column(0).as_primitive::<Int64Type>();
    let c = b.column(1).as_primitive::<Int32Type>();
    assert_eq!(b.num_rows(), 1 + 7);
    assert_eq!(a.value(0), 1);
    assert_eq!(c.value(0), 10);
    assert_eq!(a.null_count(), 3); // i = 3, 6, 9
    assert!(a.is_null(3) && a.value(1) == 1 && a.value(2) == 2 && c.value(7) == 9);
}

#[test]
fn nested_abort_restores() {
    use arrow_schema::{DataType, Field, Fields, Schema};
    let schema = Schema::new(vec![
        Field::new(
            "s",
            DataType::Struct(Fields::from(vec![
                Field::new("x", DataType::Int32, true),
                Field::new("y", DataType::Utf8, true),
            ])),
            true,
        ),
        Field::new("l", DataType::List(std::sync::Arc::new(Field::new("item", DataType::Int64, true))), true),
        Field::new("d", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
    ]);
    let mut w = ArrowWriter::create(std::sync::Arc::new(schema), WriterOptions::default()).unwrap();
    for r in 0..50usize {
        w.begin(0).unwrap();
        if r % 5 == 1 {
            w.append_null(1).unwrap()
        } else {
            w.append_i32(1, r as i32).unwrap()
        }
        w.append_str(2, "yy").unwrap();
        w.end(0).unwrap();
        if r % 7 == 3 {
            w.append_null(3).unwrap()
        } else {
            w.begin(3).unwrap();
            for k in 0..(r % 4) {
                w.append_i64(4, k as i64).unwrap();
            }
            w.end(3).unwrap();
        }
        let d = w.node("d").unwrap();
        w.append_str(d, if r % 3 == 0 { "p" } else { "q" }).unwrap();
        if r % 6 == 5 {
            // A complete row dropped.
            w.abort_row().unwrap();
            continue;
        }
        if r % 11 == 4 {
            w.abort_row().unwrap();
            w.begin(0).unwrap();
            w.append_i32(1, 7).unwrap();
            w.abort_row().unwrap();
            continue;
        }
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
}
