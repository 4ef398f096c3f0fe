//! Shared helpers of the integration tests: a writer of rows of every type,
//! and the readable bytes of a batch (docs/design.md §2).
#![allow(dead_code)]

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_buffer::i256;
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};
use quiver::{parse_schema, ArrowWriter, WriterOptions};

/// One column of every supported type, nullable, plus nested ones and a
/// non-nullable column.
pub const ALL_TYPES: &str = "id: int64 not null, b: bool, i8: int8, i16: int16, i32: int32, i64: int64, \
    u8: uint8, u16: uint16, u32: uint32, u64: uint64, f16: float16, f32: float32, f64: float64, \
    d32: decimal32(9, 2), d64: decimal64(18, 2), d128: decimal128(38, 10), d256: decimal256(76, 10), \
    date32: date32, date64: date64, t32: time32(ms), t64: time64(ns), ts: timestamp(us), \
    tstz: timestamp(ns, \"Europe/Paris\"), dur: duration(s), iym: interval(year_month), \
    idt: interval(day_time), imdn: interval(month_day_nano), s: utf8, ls: large_utf8, bin: binary, \
    lbin: large_binary, fsb: fixed_size_binary(3), n: null, \
    l: list<int32>, ll: large_list<utf8>, fsl: fixed_size_list<int16, 2>, \
    st: struct<x: float64, y: utf8 not null, z: list<bool>>, m: map<utf8, int64>";

pub fn all_types_schema() -> SchemaRef {
    Arc::new(parse_schema(ALL_TYPES).expect("the test schema parses"))
}

/// Whether column `c` of row `i` is null when nulls are on.
pub fn is_null(i: usize, c: usize) -> bool {
    (i * 7 + c * 3).is_multiple_of(5)
}

/// Writes row `i` (values depend on `seed`) of ALL_TYPES through the row
/// path; top-level columns are null where `is_null` says so if `nulls`.
pub fn write_all_types_row(w: &mut ArrowWriter, i: usize, seed: u64, nulls: bool) {
    let v = (i as u64).wrapping_mul(2654435761).wrapping_add(seed);
    let vi = v as i64;
    let mut node = 0usize;
    for c in 0..w.schema().fields().len() {
        let col = w.column_node(w.schema().field(c).name()).unwrap();
        node = node.max(col);
        let null = c > 0 && nulls && is_null(i, c);
        if null {
            w.append_null(col).unwrap();
            continue;
        }
        let name = w.schema().field(c).name().clone();
        let r = match name.as_str() {
            "id" => w.append_i64(col, i as i64),
            "b" => w.append_bool(col, v.is_multiple_of(3)),
            "i8" => w.append_i8(col, vi as i8),
            "i16" => w.append_i16(col, vi as i16),
            "i32" => w.append_i32(col, vi as i32),
            "i64" => w.append_i64(col, vi),
            "u8" => w.append_u8(col, v as u8),
            "u16" => w.append_u16(col, v as u16),
            "u32" => w.append_u32(col, v as u32),
            "u64" => w.append_u64(col, v),
            "f16" => w.append_f32(col, (v % 1000) as f32 / 8.0),
            "f32" => w.append_f32(col, vi as f32 / 3.0),
            "f64" => w.append_f64(col, vi as f64 / 7.0),
            "d32" => w.append_decimal(col, (vi % 999_999_999) as i128),
            "d64" => w.append_i64(col, vi % 999_999_999_999_999_999),
            "d128" => w.append_decimal(col, vi as i128 * 1_000_000_007),
            "d256" => {
                w.append_decimal256(col, i256::from_i128(vi as i128).wrapping_mul(i256::from_i128(vi as i128 | 1)))
            }
            "date32" => w.append_i32(col, (v % 40000) as i32),
            "date64" => w.append_i64(col, (v % 40000) as i64 * 86_400_000),
            "t32" => w.append_i32(col, (v % 86_400_000) as i32),
            "t64" => w.append_i64(col, (v % 86_400_000_000_000) as i64),
            "ts" | "tstz" => w.append_i64(col, vi >> 8),
            "dur" => w.append_i64(col, vi >> 16),
            "iym" => w.append_i32(col, (v % 1200) as i32),
            "idt" => {
                let mut b = [0u8; 8];
                b[..4].copy_from_slice(&((v % 365) as i32).to_le_bytes());
                b[4..].copy_from_slice(&((v % 86_400_000) as i32).to_le_bytes());
                w.append_bytes(col, &b)
            }
            "imdn" => {
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&((v % 12) as i32).to_le_bytes());
                b[4..8].copy_from_slice(&((v % 31) as i32).to_le_bytes());
                b[8..].copy_from_slice(&(vi >> 4).to_le_bytes());
                w.append_bytes(col, &b)
            }
            "s" | "ls" => w.append_str(col, &"héllo wörld".chars().take((v % 8) as usize).collect::<String>()),
            "bin" | "lbin" => w.append_bytes(col, &v.to_le_bytes()[..(v % 9) as usize]),
            "fsb" => w.append_bytes(col, &v.to_le_bytes()[..3]),
            "n" => w.append_null(col),
            "l" => (|| {
                w.begin(col)?;
                for k in 0..(v % 4) {
                    if k == 1 {
                        w.append_null(col + 1)?
                    } else {
                        w.append_i32(col + 1, (vi + k as i64) as i32)?
                    }
                }
                w.end(col)
            })(),
            "ll" => (|| {
                w.begin(col)?;
                for k in 0..(v % 3) {
                    w.append_str(col + 1, &format!("e{k}{}", v % 10))?;
                }
                w.end(col)
            })(),
            "fsl" => (|| {
                w.begin(col)?;
                w.append_i16(col + 1, vi as i16)?;
                if v.is_multiple_of(4) {
                    w.append_null(col + 1)?
                } else {
                    w.append_i16(col + 1, 7)?
                }
                w.end(col)
            })(),
            "st" => (|| {
                w.begin(col)?;
                if v.is_multiple_of(6) {
                    w.append_null(col + 1)?
                } else {
                    w.append_f64(col + 1, v as f64)?
                }
                w.append_str(col + 2, &format!("y{}", v % 100))?;
                if v.is_multiple_of(5) {
                    w.append_null(col + 3)?;
                } else {
                    w.begin(col + 3)?;
                    for k in 0..(v % 3) {
                        w.append_bool(col + 4, k % 2 == 0)?;
                    }
                    w.end(col + 3)?;
                }
                w.end(col)
            })(),
            "m" => (|| {
                w.begin(col)?;
                for k in 0..(v % 3) {
                    w.begin(col + 1)?;
                    w.append_str(col + 2, &format!("k{k}"))?;
                    if k == 1 {
                        w.append_null(col + 3)?
                    } else {
                        w.append_i64(col + 3, vi + k as i64)?
                    }
                    w.end(col + 1)?;
                }
                w.end(col)
            })(),
            other => panic!("no generator for column {other}"),
        };
        r.unwrap_or_else(|e| panic!("row {i} column {name}: {e}"));
    }
    let _ = node;
    w.end_row().unwrap();
}

/// A batch of `rows` rows of ALL_TYPES from a fresh writer.
pub fn all_types_batch(rows: usize, seed: u64, nulls: bool, options: WriterOptions) -> RecordBatch {
    let mut w = ArrowWriter::create(all_types_schema(), options).unwrap();
    for i in 0..rows {
        write_all_types_row(&mut w, i, seed, nulls);
    }
    w.finish().unwrap()
}

/// The readable bytes of `data` and its children (docs/design.md §2): validity
/// ceil(n/8), fixed values n*width, boolean ceil(n/8), offsets (n+1)*width,
/// data up to the last offset. A marker separates buffers.
pub fn readable_bytes(data: &ArrayData, out: &mut Vec<u8>) {
    let n = data.len();
    assert_eq!(data.offset(), 0, "writer output has offset 0");
    match data.nulls() {
        Some(nulls) => {
            out.extend_from_slice(b"|v");
            out.extend_from_slice(&nulls.buffer().as_slice()[..n.div_ceil(8)]);
        }
        None => out.extend_from_slice(b"|-"),
    }
    let offsets = |width: usize, out: &mut Vec<u8>| -> usize {
        let b = &data.buffers()[0].as_slice()[..(n + 1) * width];
        out.extend_from_slice(b"|o");
        out.extend_from_slice(b);
        let last = &b[n * width..];
        if width == 4 {
            i32::from_le_bytes(last.try_into().unwrap()) as usize
        } else {
            i64::from_le_bytes(last.try_into().unwrap()) as usize
        }
    };
    match data.data_type() {
        DataType::Null => {}
        DataType::Boolean => {
            out.extend_from_slice(b"|b");
            out.extend_from_slice(&data.buffers()[0].as_slice()[..n.div_ceil(8)]);
        }
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            let w = if matches!(data.data_type(), DataType::Utf8 | DataType::Binary) { 4 } else { 8 };
            let end = offsets(w, out);
            out.extend_from_slice(b"|d");
            out.extend_from_slice(&data.buffers()[1].as_slice()[..end]);
        }
        DataType::List(_) | DataType::Map(..) => {
            offsets(4, out);
        }
        DataType::LargeList(_) => {
            offsets(8, out);
        }
        DataType::FixedSizeList(..) | DataType::Struct(_) => {}
        dt => {
            let width = dt.primitive_width().unwrap_or_else(|| match dt {
                DataType::FixedSizeBinary(w) => *w as usize,
                _ => panic!("readable_bytes: no width for {dt}"),
            });
            out.extend_from_slice(b"|f");
            out.extend_from_slice(&data.buffers()[0].as_slice()[..n * width]);
        }
    }
    for child in data.child_data() {
        readable_bytes(child, out);
    }
}

pub fn batch_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    for c in batch.columns() {
        readable_bytes(&c.to_data(), &mut out);
    }
    out
}

/// Every buffer address of a batch (validity included), depth first.
pub fn buffer_addresses(batch: &RecordBatch) -> Vec<usize> {
    fn walk(d: &ArrayData, out: &mut Vec<usize>) {
        if let Some(n) = d.nulls() {
            out.push(n.buffer().as_ptr() as usize);
        }
        out.extend(d.buffers().iter().map(|b| b.as_ptr() as usize));
        for c in d.child_data() {
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    for c in batch.columns() {
        walk(&c.to_data(), &mut out);
    }
    out
}

/// Fully validates every column.
pub fn validate(batch: &RecordBatch) {
    for (i, c) in batch.columns().iter().enumerate() {
        c.to_data().validate_full().unwrap_or_else(|e| panic!("column {i}: {e}"));
    }
}

pub fn deep_copy(batch: &RecordBatch) -> RecordBatch {
    let columns = batch.columns().iter().map(|c| arrow_array::make_array(copy_data(&c.to_data()))).collect();
    RecordBatch::try_new(batch.schema(), columns).unwrap()
}

fn copy_data(d: &ArrayData) -> ArrayData {
    let buffers = d.buffers().iter().map(|b| arrow_buffer::Buffer::from_slice_ref(b.as_slice())).collect();
    let nulls = d.nulls().map(|n| arrow_buffer::Buffer::from_slice_ref(n.buffer().as_slice()));
    d.clone()
        .into_builder()
        .buffers(buffers)
        .null_bit_buffer(nulls)
        .child_data(d.child_data().iter().map(copy_data).collect())
        .build()
        .unwrap()
}

pub fn assert_send<T: Send>(_: &T) {}
pub fn len_of(a: &dyn Array) -> usize {
    a.len()
}
