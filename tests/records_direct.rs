//! The direct gather of fixed-width and boolean record columns (values and
//! validity written straight into the writer's buffers): every width, every
//! null marking, odd strides and misaligned records, calls that start at a
//! validity bit that is not a byte boundary, and a bad record first or last
//! (the rows before it committed, nothing else changed), each checked byte
//! for byte against a writer fed the same values through the column path.

mod exact;

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_buffer::bit_util;
use arrow_schema::{DataType, SchemaRef};
use exact::assert_same_batch;
use quiver::{parse_schema, ArrowWriter, Encoding, NullMark, RecordLayout, WriterOptions};

/// Record bytes: `v` at 1 (up to 32 bytes), a null bitmap byte at 33 (bit
/// 5), a null flag byte at 34, `id` (int64) at 35; 43 bytes, odd.
const STRIDE: usize = 43;
const N: usize = 77;

const TYPES: [&str; 12] = [
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "decimal128(30, 2)",
    "decimal256(60, 3)",
    "fixed_size_binary(3)",
    "fixed_size_binary(20)",
    "interval(month_day_nano)",
];

const MARKS: [NullMark; 3] = [NullMark::Never, NullMark::Bit { at: 32, bit: 13 }, NullMark::Byte { at: 34 }];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn schema(t: &str, not_null: bool) -> SchemaRef {
    let nn = if not_null { " not null" } else { "" };
    Arc::new(parse_schema(&format!("v: {t}{nn}, id: int64 not null")).unwrap())
}

fn width(dt: &DataType) -> usize {
    match dt {
        DataType::Boolean => 1,
        DataType::FixedSizeBinary(n) => *n as usize,
        dt => dt.primitive_width().unwrap(),
    }
}

/// `n` values of `dt` (little-endian bytes; decimals small enough for
/// their precision), `None` for the nulls of `mark` (every third and the last).
fn values(dt: &DataType, n: usize, mark: NullMark, seed: u64) -> Vec<Option<Vec<u8>>> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let w = width(dt);
            let mut v: Vec<u8> = (0..w).map(|_| rng.next() as u8).collect();
            if matches!(dt, DataType::Decimal128(..) | DataType::Decimal256(..)) {
                let x = (rng.next() % 1_000_000_007) as i128 * if i % 2 == 0 { 1 } else { -1 };
                v.fill(if x < 0 { 0xFF } else { 0 });
                v[..16].copy_from_slice(&x.to_le_bytes());
            }
            let null = mark != NullMark::Never && (i % 3 == 1 || i == n - 1);
            (!null).then_some(v)
        })
        .collect()
}

/// The records (junk wherever the layout reads nothing, junk values under
/// nulls), starting `misalign` bytes into the returned buffer.
fn records(vals: &[Option<Vec<u8>>], mark: NullMark, misalign: usize) -> Vec<u8> {
    let mut out = vec![0u8; misalign + vals.len() * STRIDE];
    let mut rng = Rng(7);
    for b in out.iter_mut() {
        *b = rng.next() as u8;
    }
    for (i, v) in vals.iter().enumerate() {
        let r = &mut out[misalign + i * STRIDE..misalign + (i + 1) * STRIDE];
        match mark {
            NullMark::Never => {}
            NullMark::Bit { at, bit } => {
                let m = 1u8 << (bit % 8);
                r[at + bit / 8] = if v.is_none() { r[at + bit / 8] | m } else { r[at + bit / 8] & !m };
            }
            NullMark::Byte { at } => r[at] = if v.is_none() { 1 + (i % 200) as u8 } else { 0 },
        }
        if let Some(v) = v {
            r[1..1 + v.len()].copy_from_slice(v);
        }
        r[35..43].copy_from_slice(&(i as i64 * 7 - 3).to_le_bytes());
    }
    out
}

/// The reference: the same rows through the column path.
fn reference(schema: &SchemaRef, vals: &[Option<Vec<u8>>]) -> RecordBatch {
    let mut w = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
    let dt = schema.field(0).data_type();
    let n = vals.len();
    let mut validity = vec![0u8; n.div_ceil(8)];
    let mut bytes = Vec::new();
    let mut bits = vec![0u8; n.div_ceil(8)];
    for (i, v) in vals.iter().enumerate() {
        if v.is_some() {
            bit_util::set_bit(&mut validity, i);
        }
        if *dt == DataType::Boolean {
            if v.as_ref().is_some_and(|b| b[0] != 0) {
                bit_util::set_bit(&mut bits, i);
            }
        } else {
            bytes.extend_from_slice(v.as_deref().unwrap_or(&vec![0xEE; width(dt)]));
        }
    }
    let values = if *dt == DataType::Boolean { &bits } else { &bytes };
    let validity = schema.field(0).is_nullable().then_some(&validity[..]);
    w.write_column_bytes(0, values, validity, n).unwrap();
    let ids: Vec<i64> = (0..n).map(|i| i as i64 * 7 - 3).collect();
    w.write_column(1, &ids, None).unwrap();
    w.finish().unwrap()
}

fn layout(schema: &SchemaRef, mark: NullMark) -> RecordLayout {
    let mut l = RecordLayout::new(schema.clone());
    l.set(0, Encoding::Fixed { at: 1 }, mark).unwrap();
    l.set(1, Encoding::Fixed { at: 35 }, NullMark::Never).unwrap();
    l
}

/// Every null slot of a fixed-width column holds zero bytes.
fn zeros_under_nulls(a: &dyn Array, what: &str) {
    let data = a.to_data();
    let Some(nulls) = data.nulls() else { return };
    if *data.data_type() == DataType::Boolean {
        let values = data.buffers()[0].as_slice();
        for i in (0..data.len()).filter(|&i| nulls.is_null(i)) {
            assert!(!bit_util::get_bit(values, data.offset() + i), "{what}: row {i}: a true under a null");
        }
        return;
    }
    let w = width(data.data_type());
    let values = data.buffers()[0].as_slice();
    for i in (0..data.len()).filter(|&i| nulls.is_null(i)) {
        assert!(values[i * w..(i + 1) * w].iter().all(|&b| b == 0), "{what}: row {i}: nonzero under a null");
    }
}

/// Records of a long call: more than the gather's tiles of 512 records.
const LONG: usize = 1500;

#[test]
fn every_width_every_mark_odd_strides_misaligned_split_calls() {
    let mut cases = 0;
    for t in TYPES {
        for mark in MARKS {
            for misalign in [0, 1, 3] {
                // Calls of 0..3, 3..16, 16..77 and of 0..77: the validity
                // and boolean bits of a call start at bits 0, 3 and 16.
                // Long: calls that cross the gather's tiles, one starting
                // at bit 700 (not a byte boundary), 0..1500 whole.
                let long = [3usize, 16, 700, LONG];
                for splits in [&[3usize, 16, N][..], &[N][..], &long[..], &[LONG][..]] {
                    let n = *splits.last().unwrap();
                    let s = schema(t, false);
                    let vals = values(s.field(0).data_type(), n, mark, 0x9E37 ^ cases);
                    let bytes = records(&vals, mark, misalign);
                    let mut l = layout(&s, mark);
                    let mut w = ArrowWriter::create(s.clone(), WriterOptions::default()).unwrap();
                    let mut from = 0;
                    for &to in splits {
                        let chunk = &bytes[misalign + from * STRIDE..misalign + to * STRIDE];
                        assert_eq!(l.write_records(&mut w, chunk, STRIDE), Ok(to - from));
                        from = to;
                    }
                    let what = format!("{t} {mark:?} misalign {misalign} splits {splits:?}");
                    let got = w.finish().unwrap();
                    assert_same_batch(&got, &reference(&s, &vals), &what);
                    zeros_under_nulls(got.column(0).as_ref(), &what);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 12 * 3 * 3 * 4);
}

#[test]
fn a_null_in_a_column_that_is_not_nullable_first_or_last() {
    for t in TYPES {
        for mark in [NullMark::Bit { at: 32, bit: 13 }, NullMark::Byte { at: 34 }] {
            // Long calls too: a bad record in the second tile, and the last.
            for (n, bad) in [(N, 0), (N, 1), (N, N - 1), (LONG, 600), (LONG, LONG - 1)] {
                let s = schema(t, true);
                let mut vals = values(s.field(0).data_type(), n, NullMark::Never, 11);
                let good = vals.clone();
                vals[bad] = None;
                let bytes = records(&vals, mark, 1);
                let mut l = layout(&s, mark);
                let mut w = ArrowWriter::create(s.clone(), WriterOptions::default()).unwrap();
                // 5 rows first, so the refused call starts at bit 5.
                assert_eq!(l.write_records(&mut w, &records(&good[..5], mark, 0), STRIDE), Ok(5));
                let e = l.write_records(&mut w, &bytes[1..], STRIDE).unwrap_err();
                let what = format!("{t} {mark:?} bad {bad}");
                assert_eq!(e.written, bad, "{what}: {e}");
                assert!(e.error.message().contains(&format!("record {bad}")), "{what}: {e}");
                assert_eq!(w.rows(), 5 + bad, "{what}");
                let got = w.finish().unwrap();
                let mut want = good[..5].to_vec();
                want.extend_from_slice(&good[..bad]);
                // The reference's ids count from 0 across both calls; the
                // records' restart at the second call.
                let want_batch = reference(&s, &want);
                assert_same_batch(&got.project(&[0]).unwrap(), &want_batch.project(&[0]).unwrap(), &what);
                let ids = got.column(1).to_data();
                let ids = &ids.buffers()[0].typed_data::<i64>()[..5 + bad];
                let expect: Vec<i64> = (0..5).chain(0..bad).map(|i| i as i64 * 7 - 3).collect();
                assert_eq!(ids, &expect[..], "{what}");
            }
        }
    }
}

// ---- utf8: one UTF-8 check over a column's gathered bytes ---------------------------------

/// `s: utf8, t: utf8, n: int32 not null` records of 48 bytes: s and t as
/// offset/length at 0/4 and 8/12 (bytes at 24 and 36, up to 12 each), n
/// at 16 with a null flag byte at 20.
const U_STRIDE: usize = 48;

fn utf8_layout() -> (SchemaRef, RecordLayout) {
    let s = Arc::new(parse_schema("s: utf8, t: utf8, n: int32 not null").unwrap());
    let mut l = RecordLayout::new(s.clone());
    l.set(0, Encoding::RelLen { offset_at: 0, len_at: 4 }, NullMark::Never).unwrap();
    l.set(1, Encoding::RelLen { offset_at: 8, len_at: 12 }, NullMark::Never).unwrap();
    l.set(2, Encoding::Fixed { at: 16 }, NullMark::Byte { at: 20 }).unwrap();
    (s, l)
}

fn utf8_records(s: &[&[u8]], t: &[&[u8]], null_n: &[usize]) -> Vec<u8> {
    let mut out = vec![0u8; s.len() * U_STRIDE];
    for (i, r) in out.chunks_exact_mut(U_STRIDE).enumerate() {
        r[0..4].copy_from_slice(&24u32.to_le_bytes());
        r[4..8].copy_from_slice(&(s[i].len() as u32).to_le_bytes());
        r[8..12].copy_from_slice(&36u32.to_le_bytes());
        r[12..16].copy_from_slice(&(t[i].len() as u32).to_le_bytes());
        r[16..20].copy_from_slice(&(i as i32).to_le_bytes());
        r[20] = null_n.contains(&i) as u8;
        r[24..24 + s[i].len()].copy_from_slice(s[i]);
        r[36..36 + t[i].len()].copy_from_slice(t[i]);
    }
    out
}

/// Writes the records after 3 good ones; returns (written, the error's
/// message) and checks the writer holds the 3 + written rows.
fn utf8_call(s: &[&[u8]], t: &[&[u8]], null_n: &[usize], validate: bool) -> (usize, String) {
    let (schema, mut l) = utf8_layout();
    let opts = WriterOptions { validate_utf8: validate, ..WriterOptions::default() };
    let mut w = ArrowWriter::create(schema, opts).unwrap();
    let good: [&[u8]; 3] = [b"a", "é".as_bytes(), b""];
    assert_eq!(l.write_records(&mut w, &utf8_records(&good, &good, &[]), U_STRIDE), Ok(3));
    let (written, msg) = match l.write_records(&mut w, &utf8_records(s, t, null_n), U_STRIDE) {
        Ok(n) => (n, String::new()),
        Err(e) => (e.written, e.error.message().to_string()),
    };
    assert_eq!(w.rows(), 3 + written, "{msg}");
    let batch = w.finish().unwrap();
    assert_eq!(batch.num_rows(), 3 + written);
    if validate {
        // What was written is UTF-8 (arrow's own check).
        batch.column(0).to_data().validate_full().unwrap();
        batch.column(1).to_data().validate_full().unwrap();
    }
    (written, msg)
}

#[test]
fn utf8_bad_first_last_and_split_characters() {
    let ok: &[u8] = "añb".as_bytes();
    let bad: &[u8] = b"x\xFFy";
    let n = 10;
    let col = |bad_at: Option<usize>, with: &'static [u8]| -> Vec<&[u8]> {
        (0..n).map(|i| if Some(i) == bad_at { with } else { ok }).collect()
    };
    // All good.
    assert_eq!(utf8_call(&col(None, ok), &col(None, ok), &[], true), (n, String::new()));
    for at in [0, 1, n - 1] {
        let (written, msg) = utf8_call(&col(Some(at), bad), &col(None, ok), &[], true);
        assert_eq!(written, at, "{msg}");
        assert!(msg.contains(&format!("record {at}: column 0 (s): invalid UTF-8")), "{msg}");
        let (written, msg) = utf8_call(&col(None, ok), &col(Some(at), bad), &[], true);
        assert_eq!(written, at, "{msg}");
        assert!(msg.contains(&format!("record {at}: column 1 (t)")), "{msg}");
    }
    // A character split across two values: each value is invalid alone,
    // their concatenation is valid.
    let mut s = col(None, ok);
    s[4] = b"ab\xC3";
    s[5] = b"\xA9cd";
    let (written, msg) = utf8_call(&s, &col(None, ok), &[], true);
    assert_eq!(written, 4, "{msg}");
    assert!(msg.contains("record 4: column 0 (s): invalid UTF-8"), "{msg}");
    // A value starting with a continuation byte after an empty one.
    let mut s = col(None, ok);
    s[6] = b"";
    s[7] = b"\xA9";
    let (written, msg) = utf8_call(&s, &col(None, ok), &[], true);
    assert_eq!((written, msg.contains("record 7: column 0")), (7, true), "{msg}");
    // The earliest record wins whichever column; at the same record, the
    // earlier column.
    let (written, msg) = utf8_call(&col(Some(6), bad), &col(Some(2), bad), &[], true);
    assert_eq!((written, msg.contains("record 2: column 1")), (2, true), "{msg}");
    let (written, msg) = utf8_call(&col(Some(3), bad), &col(Some(3), bad), &[], true);
    assert_eq!((written, msg.contains("record 3: column 0")), (3, true), "{msg}");
    // Against a null in the non-nullable column 2: at the same record the
    // utf8 column (earlier) is named; an earlier null wins.
    let (written, msg) = utf8_call(&col(None, ok), &col(Some(5), bad), &[5], true);
    assert_eq!((written, msg.contains("record 5: column 1")), (5, true), "{msg}");
    let (written, msg) = utf8_call(&col(None, ok), &col(Some(5), bad), &[4], true);
    assert_eq!((written, msg.contains("record 4: column 2")), (4, true), "{msg}");
    let (written, msg) = utf8_call(&col(Some(8), bad), &col(None, ok), &[0], true);
    assert_eq!((written, msg.contains("record 0: column 2")), (0, true), "{msg}");
    // Without the UTF-8 check, the bytes are written as they are.
    assert_eq!(utf8_call(&s, &col(Some(0), bad), &[], false), (n, String::new()));
}

#[test]
fn utf8_under_a_memory_limit() {
    let long: Vec<u8> = vec![b'z'; 12];
    let vals: Vec<&[u8]> = (0..2000).map(|_| &long[..]).collect();
    let bytes = utf8_records(&vals, &vals, &[]);
    for (limit, fits) in [(4 << 10, false), (64 << 20, true)] {
        let (schema, mut l) = utf8_layout();
        let opts = WriterOptions { memory_limit: limit, ..WriterOptions::default() };
        let mut w = ArrowWriter::create(schema, opts).unwrap();
        let r = l.write_records(&mut w, &bytes, U_STRIDE);
        if fits {
            assert_eq!(r, Ok(2000));
        } else {
            let e = r.unwrap_err();
            assert_eq!((e.written, e.error.code()), (0, quiver::ErrorCode::OutOfMemory), "{e}");
            assert_eq!(w.rows(), 0);
        }
        assert_eq!(w.finish().unwrap().num_rows(), if fits { 2000 } else { 0 });
    }
}

/// Native fixed widths that share one null bitmap (bit c of bytes 0..2 for
/// column c, so two columns mark nulls in each byte of it and ten columns
/// in two bytes) or a flag byte each, under every null pattern of a group
/// of 8 records (none, all, one, all but one, every third, random), at
/// call sizes that end inside a group and calls that start inside one:
/// byte for byte the column path's batch, with zeros under nulls.
#[test]
fn shared_null_bytes_every_pattern_of_a_group_of_eight() {
    const TYPES: [&str; 10] =
        ["int8", "int16", "int32", "int64", "float32", "float64", "uint16", "decimal128(38, 0)", "uint8", "int64"];
    const W: [usize; 10] = [1, 2, 4, 8, 4, 8, 2, 16, 1, 8];
    // Values from byte 12 (flag bytes at 2..12), packed.
    let offs: Vec<usize> = W.iter().scan(12, |at, &w| Some(std::mem::replace(at, *at + w))).collect();
    let stride = offs[9] + W[9] + 3;
    let patterns: [fn(usize, &mut Rng) -> bool; 7] = [
        |_, _| false,
        |_, _| true,
        |i, _| i % 8 == 5,
        |i, _| i % 8 != 2,
        |i, _| i % 3 == 1,
        |_, r| r.next() % 2 == 0,
        |i, _| (i / 8) % 2 == 1,
    ];
    let mut rng = Rng(0xC0FFEE);
    let mut cases = 0;
    for flags in [false, true] {
        for (p, pattern) in patterns.iter().enumerate() {
            for n in [1usize, 7, 8, 9, 64, 203] {
                let fields: Vec<String> = TYPES.iter().enumerate().map(|(c, t)| format!("c{c}: {t}")).collect();
                let s = Arc::new(parse_schema(&fields.join(", ")).unwrap());
                let mut l = RecordLayout::new(s.clone());
                for (c, &at) in offs.iter().enumerate() {
                    let mark = if flags { NullMark::Byte { at: 2 + c } } else { NullMark::Bit { at: 0, bit: c } };
                    l.set(c, Encoding::Fixed { at }, mark).unwrap();
                }
                // Column c of record i null by the pattern (shifted by c so
                // that the columns sharing a byte differ).
                let null = |c: usize, i: usize, r: &mut Rng| pattern(i + c * 3, r);
                let mut bytes = vec![0u8; n * stride];
                for b in bytes.iter_mut() {
                    *b = rng.next() as u8;
                }
                let mut cols: Vec<(Vec<u8>, Vec<u8>)> =
                    (0..10).map(|_| (Vec::new(), vec![0u8; n.div_ceil(8)])).collect();
                for i in 0..n {
                    let r = &mut bytes[i * stride..(i + 1) * stride];
                    if !flags {
                        r[0] = 0;
                        r[1] &= 0xFC;
                    }
                    for c in 0..10 {
                        let is_null = null(c, i, &mut rng);
                        if c == 7 {
                            // A decimal within its precision: a small i128.
                            let x = (rng.next() % 1_000_000) as i128 - 500_000;
                            r[offs[c]..offs[c] + 16].copy_from_slice(&x.to_le_bytes());
                        }
                        if flags {
                            r[2 + c] = if is_null { 1 + (rng.next() % 255) as u8 } else { 0 };
                        } else if is_null {
                            r[c / 8] |= 1 << (c % 8);
                        }
                        let v = &r[offs[c]..offs[c] + W[c]];
                        cols[c].0.extend_from_slice(if is_null { &[0xEE; 16][..W[c]] } else { v });
                        if !is_null {
                            bit_util::set_bit(&mut cols[c].1, i);
                        }
                    }
                }
                let mut want = ArrowWriter::create(s.clone(), WriterOptions::default()).unwrap();
                for (c, (values, validity)) in cols.iter().enumerate() {
                    want.write_column_bytes(c, values, Some(validity), n).unwrap();
                }
                let want = want.finish().unwrap();
                // One call, then the same records in calls of 3 and the rest.
                for split in [n, 3.min(n)] {
                    let mut w = ArrowWriter::create(s.clone(), WriterOptions::default()).unwrap();
                    assert_eq!(l.write_records(&mut w, &bytes[..split * stride], stride), Ok(split));
                    assert_eq!(l.write_records(&mut w, &bytes[split * stride..], stride), Ok(n - split));
                    let got = w.finish().unwrap();
                    let what = format!("flags {flags} pattern {p} n {n} split {split}");
                    assert_same_batch(&got, &want, &what);
                    for c in 0..10 {
                        zeros_under_nulls(got.column(c).as_ref(), &what);
                    }
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 2 * 7 * 6 * 2);
}
