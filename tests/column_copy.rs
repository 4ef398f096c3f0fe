//! The column path's copy of offsets, values under nulls and booleans, for
//! every shape of input: nulls that span values or not, sliced arrays, and
//! offsets that must be rebased onto what the batch already holds.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, ListArray, StringArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use quiver::{ArrowWriter, WriterOptions};

fn write(schema: &str, parts: &[ArrayRef]) -> ArrayRef {
    let mut w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
    for p in parts {
        w.write_array(0, p.as_ref()).unwrap();
    }
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    b.column(0).clone()
}

/// utf8 whose null rows span bytes ("xx" under each null).
fn strings_with_spanning_nulls(n: usize) -> StringArray {
    let mut values = String::new();
    let mut offsets = vec![0i32];
    let mut valid = Vec::new();
    for i in 0..n {
        values.push_str(if i % 3 == 1 { "xx" } else { &"abcdefg"[..i % 7] });
        offsets.push(values.len() as i32);
        valid.push(i % 3 != 1);
    }
    StringArray::new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        values.into_bytes().into(),
        Some(NullBuffer::from(valid)),
    )
}

fn expected_strings(a: &StringArray) -> Vec<Option<String>> {
    a.iter().map(|v| v.map(str::to_owned)).collect()
}

#[test]
fn utf8_with_and_without_spanning_nulls_sliced_and_appended() {
    let spanning = strings_with_spanning_nulls(300);
    let compact: StringArray = expected_strings(&spanning).iter().map(|v| v.as_deref()).collect();
    for (name, src) in [("spanning", &spanning), ("compact", &compact)] {
        let parts: Vec<ArrayRef> =
            vec![Arc::new(src.slice(5, 100)), Arc::new(src.slice(0, 1)), Arc::new(src.slice(130, 170))];
        let out = write("s: utf8", &parts);
        let out = out.as_any().downcast_ref::<StringArray>().unwrap();
        let mut want = expected_strings(&src.slice(5, 100));
        want.extend(expected_strings(&src.slice(0, 1)));
        want.extend(expected_strings(&src.slice(130, 170)));
        assert_eq!(expected_strings(out), want, "{name}");
        // A null row spans nothing in the output, whatever the input did.
        for i in 0..out.len() {
            if out.is_null(i) {
                assert_eq!(out.value_offsets()[i], out.value_offsets()[i + 1], "{name}: row {i}");
            }
        }
        assert_eq!(out.value_data().len(), want.iter().flatten().map(|s| s.len()).sum::<usize>(), "{name}");
    }
}

#[test]
fn list_with_nulls_sliced() {
    let mut b = ListBuilder::new(StringBuilder::new());
    for i in 0..200 {
        if i % 4 == 3 {
            b.append_null();
        } else {
            for j in 0..i % 5 {
                b.values().append_value(format!("{i}.{j}"));
            }
            b.append(true);
        }
    }
    let src = b.finish();
    let parts: Vec<ArrayRef> = vec![Arc::new(src.slice(7, 90)), Arc::new(src.slice(100, 100))];
    let out = write("l: list<utf8>", &parts);
    let out = out.as_any().downcast_ref::<ListArray>().unwrap();
    let want: Vec<ArrayRef> = parts.clone();
    let mut k = 0;
    for p in &want {
        let p = p.as_any().downcast_ref::<ListArray>().unwrap();
        for i in 0..p.len() {
            assert_eq!(out.is_valid(k), p.is_valid(i), "row {k}");
            if p.is_valid(i) {
                assert_eq!(out.value(k).to_data(), p.value(i).to_data(), "row {k}");
            }
            k += 1;
        }
    }
    assert_eq!(k, out.len());
}

#[test]
fn values_under_nulls_are_zero_for_every_width_and_offset() {
    let n = 333;
    let vals: Vec<Option<i64>> =
        (0..n).map(|i| if (i * 7) % 5 < 2 { None } else { Some(i as i64 * 1_000_003 - 7) }).collect();
    let src = Int64Array::from(vals.clone());
    // Put non-zero bytes under the nulls of the input.
    let raw = Int64Array::new(
        ScalarBuffer::from((0..n).map(|i| i as i64 * 1_000_003 - 7).collect::<Vec<_>>()),
        src.nulls().cloned(),
    );
    for (start, len) in [(0, n), (3, 200), (64, 130), (65, 1)] {
        let out = write("a: int64", &[Arc::new(raw.slice(start, len))]);
        let out = out.as_any().downcast_ref::<Int64Array>().unwrap();
        let want: Vec<Option<i64>> = vals[start..start + len].to_vec();
        assert_eq!(out.iter().collect::<Vec<_>>(), want);
        for i in 0..len {
            if out.is_null(i) {
                assert_eq!(out.values()[i], 0, "slice {start}+{len} row {i}");
            }
        }
    }
}

#[test]
fn booleans_under_nulls_are_false() {
    let n = 200;
    let values: Vec<bool> = (0..n).map(|i| i % 3 != 0).collect();
    let valid: Vec<bool> = (0..n).map(|i| i % 7 > 2).collect();
    let src = BooleanArray::new(values.clone().into(), Some(NullBuffer::from(valid.clone())));
    for (start, len) in [(0, n), (5, 150), (63, 70)] {
        let out = write("b: bool", &[Arc::new(src.slice(start, len)), Arc::new(src.slice(1, 9))]);
        let out = out.as_any().downcast_ref::<BooleanArray>().unwrap();
        let rows: Vec<usize> = (start..start + len).chain(1..10).collect();
        for (k, &i) in rows.iter().enumerate() {
            assert_eq!(out.is_valid(k), valid[i], "row {k}");
            assert_eq!(out.values().value(k), valid[i] && values[i], "row {k}: value bit");
        }
    }
}

/// Every fixed width (1, 2, 4, 8, 16, 32 bytes) through `write_column`, with
/// non-zero bytes under the nulls of the input, at offsets that are not a
/// multiple of 8 or 64 rows: the readable bytes under nulls are zero.
#[test]
fn every_width_zeroes_under_nulls() {
    let n: usize = 203;
    let validity: Vec<u8> = (0..n.div_ceil(8)).map(|i| (i as u8).wrapping_mul(37) ^ 0x5A).collect();
    let valid = |i: usize| validity[i / 8] >> (i % 8) & 1 == 1;
    for (schema, width) in [
        ("a: int8", 1usize),
        ("a: int16", 2),
        ("a: float32", 4),
        ("a: int64", 8),
        ("a: decimal128(38, 0)", 16),
        ("a: decimal256(76, 0)", 32),
    ] {
        let values: Vec<u8> =
            (0..n * width).map(|i| if i % width == width - 1 { 0 } else { (i % 251) as u8 | 1 }).collect();
        let mut w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
        // A first short write leaves the second at a row offset of 5.
        w.write_column_bytes(0, &values[..5 * width], None, 5).unwrap();
        w.write_column_bytes(0, &values, Some(&validity), n).unwrap();
        let b = w.finish().unwrap();
        let data = b.column(0).to_data();
        data.validate_full().unwrap();
        let buf = data.buffers()[0].as_slice();
        for i in 0..n {
            let got = &buf[(5 + i) * width..(6 + i) * width];
            if valid(i) {
                assert_eq!(got, &values[i * width..(i + 1) * width], "{schema}: row {i}");
            } else {
                assert!(got.iter().all(|&x| x == 0), "{schema}: null row {i} holds {got:?}");
            }
        }
    }
}

/// The column path's precision check at its edges, for every decimal width:
/// ±(10^p - 1) are taken, ±10^p are refused (ERANGE) with the row named,
/// and a value over the precision under a null is not looked at.
#[test]
fn decimal_precision_edges_in_the_column_path() {
    fn check(schema: &str, width: usize, p: u32) {
        let enc = |x: i128| x.to_le_bytes()[..width].to_vec();
        let max = 10i128.pow(p) - 1;
        for (vals, bad_row) in [
            (vec![0, max, -max, 1, -1], None),
            (vec![0, max, max + 1], Some(2)),
            (vec![-max - 1, 0], Some(0)),
            (vec![3, 4, 5, 6, 7, 8, 9, 10, -(max + 1)], Some(8)),
        ] {
            let mut w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
            let bytes: Vec<u8> = vals.iter().flat_map(|&x| enc(x)).collect();
            let r = w.write_column_bytes(0, &bytes, None, vals.len());
            match bad_row {
                None => r.unwrap(),
                Some(row) => {
                    let e = r.unwrap_err();
                    assert_eq!(e.code(), quiver::ErrorCode::OutOfRange, "{schema}: {e}");
                    assert!(e.message().contains(&format!("row {row} does not fit precision {p}")), "{schema}: {e}");
                    // The same values with the bad one under a null are taken.
                    let mut validity = vec![0xFFu8; vals.len().div_ceil(8)];
                    validity[row / 8] &= !(1 << (row % 8));
                    w.write_column_bytes(0, &bytes, Some(&validity), vals.len()).unwrap();
                }
            }
        }
    }
    check("d: decimal32(9, 2)", 4, 9);
    check("d: decimal32(4, 0)", 4, 4);
    check("d: decimal64(18, 3)", 8, 18);
    check("d: decimal64(10, 3)", 8, 10);
    check("d: decimal128(38, 10)", 16, 38);
    check("d: decimal128(18, 2)", 16, 18);
}

/// Sliced arrays of every masked width (int8, int16, int32, int64,
/// decimal128 with its precision check, decimal256) through `write_array`,
/// at slice starts that put the validity at bit offsets that are not a
/// multiple of 8, appended after rows already written, with half random
/// nulls and with runs: the values read back are the input's and every byte
/// under a null is zero.
#[test]
fn sliced_arrays_of_every_width_zero_under_nulls() {
    use arrow_array::{Decimal128Array, Decimal256Array, Int16Array, Int32Array, Int8Array};
    use arrow_buffer::i256;
    let n = 300;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let random: Vec<bool> = (0..n).map(|_| next() >> 63 == 0).collect();
    let runs: Vec<bool> = (0..n).map(|i| (i / 37) % 2 == 0).collect();
    let raw: Vec<u64> = (0..n).map(|_| next() | 1).collect();
    for (pattern, valid) in [("half", &random), ("runs", &runs)] {
        let nulls = || Some(NullBuffer::from(valid.clone()));
        let arrays: Vec<(&str, usize, ArrayRef)> = vec![
            ("a: int8", 1, Arc::new(Int8Array::new(raw.iter().map(|&v| v as i8 | 1).collect(), nulls()))),
            ("a: int16", 2, Arc::new(Int16Array::new(raw.iter().map(|&v| v as i16 | 1).collect(), nulls()))),
            ("a: int32", 4, Arc::new(Int32Array::new(raw.iter().map(|&v| v as i32 | 1).collect(), nulls()))),
            ("a: int64", 8, Arc::new(Int64Array::new(raw.iter().map(|&v| v as i64).collect(), nulls()))),
            (
                "a: decimal128(18, 2)",
                16,
                Arc::new(
                    Decimal128Array::new(
                        raw.iter().map(|&v| (v % 999_999_999_999_999_999) as i128 - 5).collect(),
                        nulls(),
                    )
                    .with_precision_and_scale(18, 2)
                    .unwrap(),
                ),
            ),
            (
                "a: decimal128(38, 0)",
                16,
                Arc::new(
                    Decimal128Array::new(raw.iter().map(|&v| -((v as i128) << 60) - 3).collect(), nulls())
                        .with_precision_and_scale(38, 0)
                        .unwrap(),
                ),
            ),
            (
                "a: decimal256(76, 0)",
                32,
                Arc::new(
                    Decimal256Array::new(raw.iter().map(|&v| i256::from_i128(v as i128 * 7)).collect(), nulls())
                        .with_precision_and_scale(76, 0)
                        .unwrap(),
                ),
            ),
        ];
        for (schema, width, array) in arrays {
            for (start, len) in [(0, n), (3, 200), (13, 130), (64, 129), (71, 1)] {
                let mut w = ArrowWriter::from_text(schema, WriterOptions::default()).unwrap();
                w.write_array(0, array.slice(5, 3).as_ref()).unwrap();
                w.write_array(0, array.slice(start, len).as_ref()).unwrap();
                let out = w.finish().unwrap().column(0).clone();
                out.to_data().validate_full().unwrap();
                let case = format!("{schema}, {pattern}, slice {start}+{len}");
                let mut want = array.slice(5, 3).to_data();
                assert_eq!(out.slice(0, 3).to_data(), want, "{case}: first rows");
                want = array.slice(start, len).to_data();
                assert_eq!(out.slice(3, len).to_data(), want, "{case}");
                let bytes = out.to_data().buffers()[0].as_slice()[3 * width..].to_vec();
                for i in 0..len {
                    if !valid[start + i] {
                        assert!(bytes[i * width..(i + 1) * width].iter().all(|&b| b == 0), "{case}: null row {i}");
                    }
                }
            }
        }
    }
}
