//! Records written after row-path rows of the same batch: the row path
//! leaves a column's validity unwritten until its first null (lazy
//! validity), so a records call that brings nulls must not lose the
//! validity of the rows before it. Every fixed-width and utf8 column, every
//! null marking, nulls in the rows before or not, checked value by value
//! and against `validate_full`.

use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Int32Array, StringArray};
use quiver::{parse_schema, ArrowWriter, Encoding, NullMark, RecordLayout, WriterOptions};

/// Records of 24 bytes: an int32 at 0, a null flag byte for it at 4, a null
/// bitmap byte at 5 (bit 2 marks the string null), a boolean at 6, a null
/// flag for it at 7, the string as {u32 offset, u32 len} at 8 and 12, its
/// bytes at 16..24.
const STRIDE: usize = 24;

fn records(n: usize, null_every: usize) -> Vec<u8> {
    let mut r = vec![0u8; n * STRIDE];
    for (i, rec) in r.chunks_exact_mut(STRIDE).enumerate() {
        let null = null_every != 0 && i % null_every == 0;
        rec[0..4].copy_from_slice(&(i as i32 * 3).to_le_bytes());
        rec[4] = null as u8;
        rec[5] = (null as u8) << 2;
        rec[6] = (i % 3 == 0) as u8;
        rec[7] = null as u8;
        let s = format!("r{i}");
        rec[8..12].copy_from_slice(&16u32.to_le_bytes());
        rec[12..16].copy_from_slice(&(s.len() as u32).to_le_bytes());
        rec[16..16 + s.len()].copy_from_slice(s.as_bytes());
    }
    r
}

#[test]
fn records_with_nulls_after_rows_without_nulls_keep_the_rows_valid() {
    let schema = Arc::new(parse_schema("a: int32, b: boolean, s: utf8").unwrap());
    for rows_null in [false, true] {
        for rows in [1usize, 7, 8, 9, 64, 100] {
            for null_every in [0usize, 1, 2, 5] {
                let mut w = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
                let mut layout = RecordLayout::new(schema.clone());
                layout.set(0, Encoding::Fixed { at: 0 }, NullMark::Byte { at: 4 }).unwrap();
                layout.set(1, Encoding::Fixed { at: 6 }, NullMark::Byte { at: 7 }).unwrap();
                layout.set(2, Encoding::RelLen { offset_at: 8, len_at: 12 }, NullMark::Bit { at: 5, bit: 2 }).unwrap();
                // Two batches: the second one reuses the first one's buffers.
                for _batch in 0..2 {
                    for i in 0..rows {
                        if rows_null && i == rows / 2 {
                            for c in 0..3 {
                                w.append_null(c).unwrap();
                            }
                        } else {
                            w.append_i32(0, -(i as i32)).unwrap();
                            w.append_bool(1, true).unwrap();
                            w.append_str(2, "row").unwrap();
                        }
                        w.end_row().unwrap();
                    }
                    let n = 20;
                    assert_eq!(layout.write_records(&mut w, &records(n, null_every), STRIDE), Ok(n));
                    let batch = w.finish().unwrap();
                    batch.columns().iter().for_each(|c| c.to_data().validate_full().unwrap());
                    let a = batch.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
                    let b = batch.column(1).as_any().downcast_ref::<BooleanArray>().unwrap();
                    let s = batch.column(2).as_any().downcast_ref::<StringArray>().unwrap();
                    let ctx = format!("rows {rows} (a null row: {rows_null}), a null every {null_every}");
                    for i in 0..rows {
                        let null = rows_null && i == rows / 2;
                        assert_eq!(a.is_null(i), null, "{ctx}: row {i}");
                        assert_eq!(b.is_null(i), null, "{ctx}: row {i}");
                        assert_eq!(s.is_null(i), null, "{ctx}: row {i}");
                        if !null {
                            assert_eq!(
                                (a.value(i), b.value(i), s.value(i)),
                                (-(i as i32), true, "row"),
                                "{ctx}: row {i}"
                            );
                        }
                    }
                    for j in 0..n {
                        let null = null_every != 0 && j % null_every == 0;
                        let i = rows + j;
                        assert_eq!((a.is_null(i), b.is_null(i), s.is_null(i)), (null, null, null), "{ctx}: record {j}");
                        if null {
                            assert_eq!(a.values()[i], 0, "{ctx}: zero under the null of record {j}");
                        } else {
                            assert_eq!(a.value(i), j as i32 * 3, "{ctx}: record {j}");
                            assert_eq!(b.value(i), j % 3 == 0, "{ctx}: record {j}");
                            assert_eq!(s.value(i), format!("r{j}"), "{ctx}: record {j}");
                        }
                    }
                    let nulls = (rows_null as usize) + if null_every == 0 { 0 } else { n.div_ceil(null_every) };
                    assert_eq!(a.null_count(), nulls, "{ctx}");
                    assert_eq!(s.null_count(), nulls, "{ctx}");
                }
            }
        }
    }
}
