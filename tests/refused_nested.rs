//! A `write_array` refused because of a nested value changes nothing: the
//! next batch, written through the column path or through the row path, is
//! byte for byte the batch of a writer that never saw the refused call. The
//! two cases of the bug report (a struct and a list holding a decimal over
//! its precision), and the same under a fixed-size list and a map.

mod exact;

use std::sync::Arc;

use arrow_array::builder::{Decimal128Builder, MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{Array, ArrayRef, Decimal128Array, FixedSizeListArray, Int32Array, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use exact::assert_same_batch;
use quiver::{ArrowWriter, ErrorCode, WriterOptions};

/// Over precision 5.
const BIG: i128 = 10_000_000;

fn dec(values: &[Option<i128>]) -> Decimal128Array {
    values.iter().copied().collect::<Decimal128Array>().with_precision_and_scale(5, 0).unwrap()
}

fn dec_type() -> DataType {
    DataType::Decimal128(5, 0)
}

/// How the rows after the refused call are written.
#[derive(Clone, Copy, Debug)]
enum Next {
    Columns,
    Rows,
}

/// Writes `bad` (must be refused with ERANGE), then the good rows (`good`
/// through `write_array`, or `rows` through the row path), and compares the
/// batch with a writer that wrote only the good rows; then a second batch,
/// to see that nothing of the refused call reaches the recycled buffers.
fn check(schema: &str, bad: ArrayRef, good: ArrayRef, rows: fn(&mut ArrowWriter)) {
    for next in [Next::Columns, Next::Rows] {
        let write_good = |w: &mut ArrowWriter| match next {
            Next::Columns => w.write_array(0, good.as_ref()).unwrap(),
            Next::Rows => rows(w),
        };
        let mut reference = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
        let mut subject = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
        write_good(&mut reference);
        let e = subject.write_array(0, bad.as_ref()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutOfRange, "{schema}: {e}");
        assert_eq!(subject.rows(), 0, "{schema}: the refused call committed rows");
        write_good(&mut subject);
        let (want, got) = (reference.finish().unwrap(), subject.finish().unwrap());
        for c in got.columns() {
            c.to_data().validate_full().unwrap_or_else(|e| panic!("{schema} ({next:?}): {e}"));
        }
        assert_eq!(got.column(0).null_count(), want.column(0).null_count(), "{schema} ({next:?})");
        assert_same_batch(&got, &want, &format!("{schema}, {next:?} after the refused call"));
        // The good rows again, in a batch that reuses the first one's buffers.
        drop((want, got));
        write_good(&mut reference);
        write_good(&mut subject);
        assert_same_batch(&subject.finish().unwrap(), &reference.finish().unwrap(), &format!("{schema}: second batch"));
        let (s, r) = (subject.stats(), reference.stats());
        assert_eq!(
            (s.batches, s.buffers_allocated, s.buffers_reused),
            (r.batches, r.buffers_allocated, r.buffers_reused)
        );
    }
}

fn struct_fields() -> Fields {
    Fields::from(vec![Field::new("a", DataType::Int32, true), Field::new("d", dec_type(), true)])
}

fn struct_array(a: &[Option<i32>], d: &[Option<i128>], valid: &[bool]) -> ArrayRef {
    Arc::new(StructArray::new(
        struct_fields(),
        vec![Arc::new(Int32Array::from(a.to_vec())), Arc::new(dec(d))],
        Some(NullBuffer::from(valid.to_vec())),
    ))
}

/// The first case of the report: `[null, {a: 2, d: 10^7}]` is refused; then
/// `[{a: 1, d: 5}, null, {a: 3, d: 7}]` must give a null struct in row 1
/// (null count 1), not `{a: None, d: None}` with null count 2.
#[test]
fn refused_struct_with_a_decimal_over_precision_leaves_no_null_behind() {
    let bad = struct_array(&[None, Some(2)], &[None, Some(BIG)], &[false, true]);
    let good = struct_array(&[Some(1), None, Some(3)], &[Some(5), None, Some(7)], &[true, false, true]);
    check("s: struct<a: int32, d: decimal128(5, 0)>", bad, good, |w| {
        for (i, v) in [Some((1, 5)), None, Some((3, 7))].into_iter().enumerate() {
            match v {
                Some((a, d)) => {
                    w.begin(0).unwrap();
                    w.append_i32(1, a).unwrap();
                    w.append_decimal(2, d).unwrap();
                    w.end(0).unwrap();
                }
                None => w.append_null(0).unwrap(),
            }
            w.end_row().unwrap_or_else(|e| panic!("row {i}: {e}"));
        }
    });
    // The batch itself, as the report states it.
    let mut w = ArrowWriter::from_text("s: struct<a: int32, d: decimal128(5, 0)>", WriterOptions::default()).unwrap();
    w.write_array(0, struct_array(&[None, Some(2)], &[None, Some(BIG)], &[false, true]).as_ref()).unwrap_err();
    w.write_array(0, struct_array(&[Some(1), None, Some(3)], &[Some(5), None, Some(7)], &[true, false, true]).as_ref())
        .unwrap();
    let b = w.finish().unwrap();
    let s = b.column(0).as_any().downcast_ref::<StructArray>().unwrap();
    assert_eq!(s.null_count(), 1);
    assert!(s.is_valid(0) && s.is_null(1) && s.is_valid(2));
}

fn list_array(offsets: &[i32], values: &[Option<i128>], valid: &[bool]) -> ArrayRef {
    Arc::new(ListArray::new(
        Arc::new(Field::new("item", dec_type(), true)),
        OffsetBuffer::new(offsets.to_vec().into()),
        Arc::new(dec(values)),
        Some(NullBuffer::from(valid.to_vec())),
    ))
}

/// The second case of the report: `[null (spanning one value), [2, 10^6]]`
/// is refused; then `[[7], [8, 9], null]` must be a valid batch with offsets
/// `[0, 1, 3, 3]` and null count 1.
#[test]
fn refused_list_with_a_decimal_over_precision_leaves_no_offsets_behind() {
    let bad = list_array(&[0, 1, 3], &[Some(0), Some(2), Some(1_000_000)], &[false, true]);
    let good = list_array(&[0, 1, 3, 3], &[Some(7), Some(8), Some(9)], &[true, true, false]);
    check("l: list<decimal128(5, 0)>", bad, good, |w| {
        for v in [Some(&[7][..]), Some(&[8, 9][..]), None] {
            match v {
                Some(items) => {
                    w.begin(0).unwrap();
                    for &x in items {
                        w.append_decimal(1, x).unwrap();
                    }
                    w.end(0).unwrap();
                }
                None => w.append_null(0).unwrap(),
            }
            w.end_row().unwrap();
        }
    });
}

#[test]
fn refused_fixed_size_list_with_a_decimal_over_precision_changes_nothing() {
    let fsl = |values: &[Option<i128>], valid: &[bool]| -> ArrayRef {
        Arc::new(FixedSizeListArray::new(
            Arc::new(Field::new("item", dec_type(), true)),
            2,
            Arc::new(dec(values)),
            Some(NullBuffer::from(valid.to_vec())),
        ))
    };
    let bad = fsl(&[None, None, Some(2), Some(BIG)], &[false, true]);
    let good = fsl(&[Some(7), Some(1), Some(8), Some(9), None, None], &[true, true, false]);
    check("f: fixed_size_list<decimal128(5, 0), 2>", bad, good, |w| {
        for v in [Some([7, 1]), Some([8, 9]), None] {
            match v {
                Some(items) => {
                    w.begin(0).unwrap();
                    for x in items {
                        w.append_decimal(1, x).unwrap();
                    }
                    w.end(0).unwrap();
                }
                None => w.append_null(0).unwrap(),
            }
            w.end_row().unwrap();
        }
    });
}

#[test]
fn refused_map_with_a_decimal_over_precision_changes_nothing() {
    // Entries named as the text form names them.
    let map = |rows: &[Option<&[(&str, i128)]>]| -> ArrayRef {
        let names = MapFieldNames { entry: "entries".into(), key: "key".into(), value: "value".into() };
        let mut b =
            MapBuilder::new(Some(names), StringBuilder::new(), Decimal128Builder::new().with_data_type(dec_type()));
        for row in rows {
            match row {
                Some(entries) => {
                    for (k, v) in entries.iter() {
                        b.keys().append_value(k);
                        b.values().append_value(*v);
                    }
                    b.append(true).unwrap();
                }
                None => {
                    // A null spanning one entry.
                    b.keys().append_value("x");
                    b.values().append_value(1);
                    b.append(false).unwrap();
                }
            }
        }
        Arc::new(b.finish())
    };
    let schema = "m: map<utf8, decimal128(5, 0)>";
    let w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
    let bad = map(&[None, Some(&[("a", 2), ("b", BIG)])]);
    assert!(w.schema().field(0).data_type().equals_datatype(bad.data_type()), "{}", w.schema().field(0));
    let good = map(&[Some(&[("k", 7)]), Some(&[("p", 8), ("q", 9)]), None]);
    check(schema, bad, good, |w| {
        for v in [Some(&[("k", 7)][..]), Some(&[("p", 8), ("q", 9)][..]), None] {
            match v {
                Some(entries) => {
                    w.begin(0).unwrap();
                    for &(k, x) in entries {
                        w.begin(1).unwrap();
                        w.append_str(2, k).unwrap();
                        w.append_decimal(3, x).unwrap();
                        w.end(1).unwrap();
                    }
                    w.end(0).unwrap();
                }
                None => w.append_null(0).unwrap(),
            }
            w.end_row().unwrap();
        }
    });
}

/// Issue 12 item 4: the error names the input row holding the refused
/// value, not its index within the copied run of the nested node.
#[test]
fn a_nested_precision_error_names_the_input_row() {
    let cases: Vec<(&str, ArrayRef, usize)> = vec![
        (
            "s: struct<a: int32, d: decimal128(5, 0)>",
            struct_array(&[None, Some(2)], &[None, Some(BIG)], &[false, true]),
            1,
        ),
        (
            "s: struct<a: int32, d: decimal128(5, 0)>",
            struct_array(&[Some(1), Some(2), None, Some(4)], &[Some(1), Some(2), None, Some(BIG)], &[true; 4])
                .slice(1, 3),
            2,
        ),
        ("l: list<decimal128(5, 0)>", list_array(&[0, 1, 3], &[Some(0), Some(2), Some(1_000_000)], &[false, true]), 1),
        ("l: list<decimal128(5, 0)>", list_array(&[0, 2, 2, 3], &[Some(1), Some(2), Some(BIG)], &[true; 3]), 2),
    ];
    for (schema, bad, row) in cases {
        let mut w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
        let e = w.write_array(0, bad.as_ref()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutOfRange);
        assert!(e.message().ends_with(&format!("in input row {row}")), "{schema}: {e}");
        assert!(e.message().contains("does not fit precision 5"), "{schema}: {e}");
    }
}
