//! The row path's direct entries of dictionary and run-end encoded columns
//! (typed values compared at their width, byte strings, any flat value as
//! its bytes) find an equal value by its stored bits: a zero value is not a
//! null (whose slot holds zeros too), `-0.0` is not `0.0`, and a NaN equals
//! the NaN of the same bits only. For every key and run-end type and every
//! flat value type, rows built to meet those cases (nulls beside zeros, runs
//! of equal and of merely `==` values) are checked against the rows
//! themselves, decoded from the batch's buffers, against the full path
//! (under a memory limit, which looks values up after writing them) and for
//! an encoding without repeats (dictionary values distinct, adjacent runs
//! different).

mod all_types;

use all_types::validate;
use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use quiver::{ArrowWriter, WriterOptions};

const KEYS: [&str; 8] = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"];
const RUN_ENDS: [&str; 3] = ["int16", "int32", "int64"];

/// A value type and its distinct test values, as the bytes Arrow stores
/// (little-endian for numbers), appended by `append`.
struct ValueType {
    name: &'static str,
    values: Vec<Vec<u8>>,
}

fn value_types() -> Vec<ValueType> {
    let ints = |w: usize| -> Vec<Vec<u8>> {
        [0i64, -1, 1, 2, i64::MIN >> (64 - 8 * w as u32)].iter().map(|v| v.to_le_bytes()[..w].to_vec()).collect()
    };
    let f32s = [0.0f32, -0.0, f32::NAN, f32::from_bits(0x7FC0_0001), -f32::NAN, 1.5];
    let f64s = [0.0f64, -0.0, f64::NAN, f64::from_bits(0x7FF8_0000_0000_0001), -f64::NAN, 1.5];
    let strs: Vec<Vec<u8>> = ["", "a", "\0", "\0\0", "value 1", "value 10", "a string of more than sixteen bytes", "ü"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let mut out = vec![];
    for (name, w) in [("int8", 1), ("int16", 2), ("int32", 4), ("int64", 8)] {
        out.push(ValueType { name, values: ints(w) });
    }
    for (name, w) in [("uint8", 1), ("uint16", 2), ("uint32", 4), ("uint64", 8)] {
        out.push(ValueType { name, values: ints(w) });
    }
    out.push(ValueType { name: "float32", values: f32s.iter().map(|v| v.to_le_bytes().to_vec()).collect() });
    out.push(ValueType { name: "float64", values: f64s.iter().map(|v| v.to_le_bytes().to_vec()).collect() });
    out.push(ValueType { name: "date32", values: ints(4) });
    out.push(ValueType { name: "timestamp(ms)", values: ints(8) });
    out.push(ValueType { name: "fixed_size_binary(2)", values: vec![vec![0, 0], vec![0, 1], vec![1, 0]] });
    for name in ["utf8", "large_utf8", "binary", "large_binary"] {
        out.push(ValueType { name, values: strs.clone() });
    }
    out
}

/// Appends `v` (stored bytes) to column 0 with the append of its type.
fn append(w: &mut ArrowWriter, ty: &str, v: &[u8]) -> quiver::Result<()> {
    let a = |n: usize| -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(v);
        b
    };
    match ty {
        "int8" => w.append_i8(0, v[0] as i8),
        "int16" => w.append_i16(0, i16::from_le_bytes([v[0], v[1]])),
        "int32" | "date32" => w.append_i32(0, i32::from_le_bytes(a(4)[..4].try_into().unwrap())),
        "int64" | "timestamp(ms)" => w.append_i64(0, i64::from_le_bytes(a(8))),
        "uint8" => w.append_u8(0, v[0]),
        "uint16" => w.append_u16(0, u16::from_le_bytes([v[0], v[1]])),
        "uint32" => w.append_u32(0, u32::from_le_bytes(a(4)[..4].try_into().unwrap())),
        "uint64" => w.append_u64(0, u64::from_le_bytes(a(8))),
        "float32" => w.append_f32(0, f32::from_le_bytes(a(4)[..4].try_into().unwrap())),
        "float64" => w.append_f64(0, f64::from_le_bytes(a(8))),
        "utf8" | "large_utf8" => w.append_str(0, std::str::from_utf8(v).unwrap()),
        _ => w.append_bytes(0, v),
    }
}

/// Rows meeting the cases: each value beside nulls, in runs, alternating
/// with the other values (`-0.0` after `0.0`, one NaN after another), and
/// a pseudo-random tail.
fn rows(n_values: usize) -> Vec<Option<usize>> {
    let mut out = vec![];
    for k in 0..n_values {
        out.extend([None, Some(k), Some(k), None, None, Some(k), None]);
        for j in 0..n_values {
            out.extend([Some(k), Some(j), Some(j), Some(k)]);
        }
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = (x % (n_values as u64 + 1)) as usize;
        out.push((v < n_values).then_some(v));
    }
    out
}

/// Value `i` of flat array `d` as its stored bytes (None: null).
fn stored(d: &ArrayData, i: usize) -> Option<Vec<u8>> {
    if d.is_null(i) {
        return None;
    }
    let i = i + d.offset();
    let b = d.buffers();
    let width = match d.data_type() {
        arrow_schema::DataType::FixedSizeBinary(n) => Some(*n as usize),
        t => t.primitive_width(),
    };
    match width {
        Some(w) => Some(b[0].as_slice()[i * w..(i + 1) * w].to_vec()),
        None => {
            use arrow_schema::DataType::{LargeBinary, LargeUtf8};
            let w = if matches!(d.data_type(), LargeUtf8 | LargeBinary) { 8 } else { 4 };
            let at = |j: usize| {
                let mut o = [0u8; 8];
                o[..w].copy_from_slice(&b[0].as_slice()[j * w..(j + 1) * w]);
                u64::from_le_bytes(o) as usize
            };
            let (s, e) = (at(i), at(i + 1));
            Some(b[1].as_slice()[s..e].to_vec())
        }
    }
}

/// Values as their stored bytes (None: null).
type Values = Vec<Option<Vec<u8>>>;

/// Column 0's row values decoded from its buffers, and the encoded
/// column's own values (the dictionary, or each run's value).
fn decode(batch: &RecordBatch, ree: bool) -> (Values, Values) {
    let d = batch.column(0).to_data();
    let read_int = |c: &ArrayData, i: usize| -> usize {
        let w = match c.data_type() {
            arrow_schema::DataType::Dictionary(k, _) => k.primitive_width().unwrap(),
            t => t.primitive_width().unwrap(),
        };
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&c.buffers()[0].as_slice()[(c.offset() + i) * w..(c.offset() + i + 1) * w]);
        u64::from_le_bytes(b) as usize
    };
    if ree {
        let (ends, values) = (&d.child_data()[0], &d.child_data()[1]);
        let own: Vec<_> = (0..values.len()).map(|i| stored(values, i)).collect();
        let mut rows = vec![];
        for (r, value) in own.iter().enumerate() {
            rows.resize(read_int(ends, r), value.clone());
        }
        (rows, own)
    } else {
        let values = &d.child_data()[0];
        let own: Vec<_> = (0..values.len()).map(|i| stored(values, i)).collect();
        let rows = (0..d.len()).map(|i| if d.is_null(i) { None } else { own[read_int(&d, i)].clone() }).collect();
        (rows, own)
    }
}

fn write(schema: &str, ty: &ValueType, rows: &[Option<usize>], options: WriterOptions) -> RecordBatch {
    let mut w = ArrowWriter::from_text(&format!("c: {schema}"), options).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for r in rows {
        match r {
            Some(k) => append(&mut w, ty.name, &ty.values[*k]).unwrap_or_else(|e| panic!("{schema}: {e}")),
            None => w.append_null(0).unwrap(),
        }
        w.end_row().unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn equal_values_are_found_by_their_stored_bits() {
    let mut cases = 0;
    for ty in value_types() {
        let rows = rows(ty.values.len());
        let want: Values = rows.iter().map(|r| r.map(|k| ty.values[k].clone())).collect();
        let schemas = KEYS
            .iter()
            .map(|k| (format!("dictionary<{k}, {}>", ty.name), false))
            .chain(RUN_ENDS.iter().map(|r| (format!("run_end_encoded<{r}, {}>", ty.name), true)));
        for (schema, ree) in schemas {
            let batch = write(&schema, &ty, &rows, WriterOptions::default());
            validate(&batch);
            let (got, own) = decode(&batch, ree);
            assert_eq!(got, want, "{schema}: the rows read back");
            if ree {
                assert!(own.windows(2).all(|p| p[0] != p[1]), "{schema}: two adjacent runs of one value");
                let runs = 1 + want.windows(2).filter(|p| p[0] != p[1]).count();
                assert_eq!(own.len(), runs, "{schema}: runs");
            } else {
                let mut distinct = own.clone();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), own.len(), "{schema}: a repeated dictionary value");
                assert_eq!(own.len(), ty.values.len(), "{schema}: dictionary entries");
            }
            let limited = write(&schema, &ty, &rows, WriterOptions { memory_limit: 1 << 30, ..Default::default() });
            assert!(decode(&limited, ree) == (got, own), "{schema}: the full path differs");
            cases += 1;
        }
    }
    assert_eq!(cases, value_types().len() * (KEYS.len() + RUN_ENDS.len()));
}
