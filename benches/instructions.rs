//! A fixed workload for instruction counts (valgrind's cachegrind), which a
//! noisy machine does not disturb: one case writes `batches` batches of 8192
//! rows through the row path, the column path or one
//! `RecordLayout::write_records` call (the `rec_` cases) and finishes each
//! one.
//!
//!     cargo build --release --bench instructions
//!     valgrind --tool=cachegrind target/release/deps/instructions-* <case> <batches>
//!
//! `<case>` is `<path>_<type>` (`row_int32_nulls`, `col_utf8`,
//! `rec_rec3_half`, ...; no argument lists them). Run a case with 1 and with 11 batches: the
//! difference over 10 is the cost of one steady-state batch, without the
//! set-up (data generation, writer creation, the first batch's allocations).

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use quiver::{ArrowWriter, WriterOptions};

const ROWS: usize = 8192;

#[path = "common/encoded.rs"]
mod encoded;

const TYPES: [&str; 16] = [
    "int32",
    "int32_nulls",
    "int64",
    "int64_nulls",
    "float64",
    "float64_nulls",
    "utf8_nulls",
    "utf8_checked_nulls",
    "decimal128_nulls",
    "struct",
    "list",
    "dictionary",
    // benches/common/encoded.rs: 50 distinct values, random (dict) or in runs (ree).
    "dict_utf8",
    "dict_int64",
    "ree_utf8",
    "ree_int64",
];

/// xorshift64*: the same values on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The input of one case: one column of `ROWS` rows, and its schema text.
struct Input {
    schema: &'static str,
    array: ArrayRef,
    /// Validity per row (`true`: valid).
    valid: Vec<bool>,
    /// The rows of the `dict_*` and `ree_*` cases.
    enc: Option<encoded::EncData>,
}

fn input(ty: &str) -> Input {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let nulls = ty.ends_with("_nulls");
    let valid: Vec<bool> = (0..ROWS).map(|_| !nulls || !g.next().is_multiple_of(10)).collect();
    let nb = || nulls.then(|| NullBuffer::from(valid.clone()));
    let ints: Vec<i64> = (0..ROWS).map(|_| (g.next() >> 33) as i64).collect();
    let (schema, array): (&'static str, ArrayRef) = match ty {
        "int32" | "int32_nulls" => {
            ("c: int32", Arc::new(Int32Array::new(ints.iter().map(|&v| v as i32).collect(), nb())))
        }
        "int64" | "int64_nulls" => ("c: int64", Arc::new(Int64Array::new(ints.clone().into(), nb()))),
        "float64" | "float64_nulls" => {
            ("c: float64", Arc::new(Float64Array::new(ints.iter().map(|&v| v as f64 * 0.5).collect(), nb())))
        }
        "utf8_nulls" | "utf8_checked_nulls" => {
            let words = ["ada", "grace", "edsger", "barbara", "a somewhat longer string value", ""];
            let values: Vec<Option<&str>> =
                (0..ROWS).map(|i| valid[i].then_some(words[ints[i] as usize % words.len()])).collect();
            ("c: utf8", Arc::new(StringArray::from(values)))
        }
        "decimal128_nulls" => {
            let values = Decimal128Array::new(ints.iter().map(|&v| v as i128 * 1000 - 7).collect(), nb());
            ("c: decimal128(38, 2)", Arc::new(values.with_precision_and_scale(38, 2).expect("valid precision")))
        }
        "struct" => {
            let x: ArrayRef = Arc::new(Float64Array::from_iter_values(ints.iter().map(|&v| v as f64)));
            let y: ArrayRef = Arc::new(Int64Array::from_iter_values(ints.iter().map(|&v| v ^ 5)));
            let fields =
                Fields::from(vec![Field::new("x", DataType::Float64, true), Field::new("y", DataType::Int64, true)]);
            ("c: struct<x: float64, y: int64>", Arc::new(StructArray::new(fields, vec![x, y], None)))
        }
        "list" => {
            let mut b = ListBuilder::new(Int32Builder::new());
            for &v in &ints {
                for k in 0..(v % 4) {
                    b.values().append_value((v + k) as i32);
                }
                b.append(true);
            }
            ("c: list<int32>", Arc::new(b.finish()))
        }
        "dictionary" => {
            let words = ["red", "green", "blue", "cyan", "magenta", "yellow", "black"];
            let mut b = StringDictionaryBuilder::<Int32Type>::new();
            for &v in &ints {
                b.append_value(words[v as usize % words.len()]);
            }
            ("c: dictionary<int32, utf8>", Arc::new(b.finish()))
        }
        "dict_utf8" | "dict_int64" | "ree_utf8" | "ree_int64" => {
            let d = encoded::EncData::new(ty.starts_with("ree"));
            let (schema, array) = match ty {
                "dict_utf8" => ("c: dictionary<int32, utf8>", encoded::builder_dict_utf8(&d)),
                "dict_int64" => ("c: dictionary<int32, int64>", encoded::builder_dict_int64(&d)),
                "ree_utf8" => ("c: run_end_encoded<int32, utf8>", encoded::builder_ree_utf8(&d)),
                _ => ("c: run_end_encoded<int32, int64>", encoded::builder_ree_int64(&d)),
            };
            return Input { schema, array, valid, enc: Some(d) };
        }
        other => panic!("unknown type {other}"),
    };
    Input { schema, array, valid, enc: None }
}

/// Writes the input's rows one by one through the typed appends (the type
/// is matched and the input downcast once, outside the row loop, so that the
/// counts are mostly the writer's).
fn write_rows(w: &mut ArrowWriter, ty: &str, inp: &Input) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, Float64Type, Int64Type};
    let a = &inp.array;
    let valid = &inp.valid;
    macro_rules! rows {
        (|$i:ident| $append:expr) => {
            for $i in 0..ROWS {
                if valid[$i] {
                    $append.expect("append");
                } else {
                    w.append_null(0).expect("null");
                }
                w.end_row().expect("row");
            }
        };
    }
    match ty {
        "int32" | "int32_nulls" => {
            let v = a.as_primitive::<Int32Type>().values();
            rows!(|i| w.append_i32(0, v[i]))
        }
        "int64" | "int64_nulls" => {
            let v = a.as_primitive::<Int64Type>().values();
            rows!(|i| w.append_i64(0, v[i]))
        }
        "float64" | "float64_nulls" => {
            let v = a.as_primitive::<Float64Type>().values();
            rows!(|i| w.append_f64(0, v[i]))
        }
        "utf8_nulls" => {
            let v = a.as_string::<i32>();
            rows!(|i| w.append_str(0, v.value(i)))
        }
        "utf8_checked_nulls" => write_checked_rows(w, inp),
        "decimal128_nulls" => {
            let v = a.as_primitive::<Decimal128Type>().values();
            rows!(|i| w.append_decimal(0, v[i]))
        }
        "struct" => {
            let s = a.as_struct();
            let (x, y) =
                (s.column(0).as_primitive::<Float64Type>().values(), s.column(1).as_primitive::<Int64Type>().values());
            rows!(|i| {
                w.begin(0).expect("begin");
                w.append_f64(1, x[i]).expect("x");
                w.append_i64(2, y[i]).expect("y");
                w.end(0)
            })
        }
        "list" => {
            let l = a.as_list::<i32>();
            let (offsets, items) = (l.value_offsets(), l.values().as_primitive::<Int32Type>().values());
            rows!(|i| {
                w.begin(0).expect("begin");
                for v in &items[offsets[i] as usize..offsets[i + 1] as usize] {
                    w.append_i32(1, *v).expect("item");
                }
                w.end(0)
            })
        }
        "dictionary" => {
            let d = a.as_dictionary::<Int32Type>();
            let (keys, values) = (d.keys().values(), d.values().as_string::<i32>());
            rows!(|i| w.append_str(0, values.value(keys[i] as usize)))
        }
        "dict_utf8" | "ree_utf8" => {
            let d = inp.enc.as_ref().expect("encoded rows");
            rows!(|i| w.append_str(0, d.str_at(i)))
        }
        "dict_int64" | "ree_int64" => {
            let d = inp.enc.as_ref().expect("encoded rows");
            rows!(|i| w.append_i64(0, d.int_at(i)))
        }
        other => panic!("unknown type {other}"),
    }
}

/// The utf8_nulls strings as bytes: UTF-8 checked (the default), as the C
/// API's quiver_append_bytes. A function of its own, so that the other cases
/// of `write_rows` are compiled (inlined) as they were without it.
#[inline(never)]
fn write_checked_rows(w: &mut ArrowWriter, inp: &Input) {
    use arrow_array::cast::AsArray;
    let v = inp.array.as_string::<i32>();
    for i in 0..ROWS {
        if inp.valid[i] {
            w.append_bytes(0, v.value(i).as_bytes()).expect("append");
        } else {
            w.append_null(0).expect("null");
        }
        w.end_row().expect("row");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(case) = args.get(1).filter(|a| !a.starts_with('-')) else {
        for ty in TYPES {
            println!("row_{ty}\ncol_{ty}");
        }
        for ty in RECORD_TYPES {
            println!("rec_{ty}");
        }
        return;
    };
    let batches: usize = args.get(2).map_or(1, |b| b.parse().expect("batches: a number"));
    if let Some(ty) = case.strip_prefix("rec_") {
        return write_records(ty, batches);
    }
    let (path, ty) = case.split_once('_').expect("<path>_<type>");
    assert!(TYPES.contains(&ty), "unknown case {case}");
    let inp = input(ty);
    let mut w = ArrowWriter::from_text(inp.schema, WriterOptions::default()).expect("writer");
    let mut rows = 0;
    for b in 0..batches {
        match path {
            "row" => write_rows(&mut w, ty, &inp),
            "col" => w.write_array(0, inp.array.as_ref()).expect("write_array"),
            other => panic!("unknown path {other}"),
        }
        let batch = w.finish().expect("finish");
        if b == 0 {
            assert_eq!(batch.column(0).to_data(), inp.array.to_data(), "{case}: the batch differs from the input");
        }
        rows += black_box(batch).num_rows();
    }
    assert_eq!(rows, batches * ROWS);
}

// ---- records: one RecordLayout::write_records per batch -----------------------------------

/// The record cases (`rec_<type>`): `rec3` the 24-byte {int64, float64,
/// int32, null bits} records of benches/write.rs's rec3 groups (`_half`:
/// each value null with probability 1/2); `utf8` 32-byte records, a u32
/// offset and length at 0 and 4, a null flag byte at 8 and a 0..11-byte
/// ASCII string at 16 (`_half`: half of them null).
const RECORD_TYPES: [&str; 4] = ["rec3", "rec3_half", "utf8", "utf8_half"];

fn write_records(ty: &str, batches: usize) {
    use quiver::{Encoding, NullMark, RecordLayout};
    assert!(RECORD_TYPES.contains(&ty), "unknown case rec_{ty}");
    let half = ty.ends_with("_half");
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let (schema, stride) =
        if ty.starts_with("rec3") { ("a: int32, b: int64, c: float64", 24) } else { ("s: utf8", 32) };
    let schema = Arc::new(quiver::parse_schema(schema).expect("schema"));
    let mut layout = RecordLayout::new(schema.clone());
    let mut bytes = vec![0u8; ROWS * stride];
    if stride == 24 {
        for (col, at) in [(0, 16), (1, 0), (2, 8)] {
            layout.set(col, Encoding::Fixed { at }, NullMark::Bit { at: 20, bit: col }).expect("layout");
        }
        for r in bytes.chunks_exact_mut(24) {
            let x = g.next();
            r[0..8].copy_from_slice(&(x as i64).to_le_bytes());
            r[8..16].copy_from_slice(&((x >> 11) as f64).to_le_bytes());
            r[16..20].copy_from_slice(&(x as i32).to_le_bytes());
            r[20] = if half { ((x >> 40) & 7) as u8 } else { 0 };
        }
    } else {
        layout.set(0, Encoding::RelLen { offset_at: 0, len_at: 4 }, NullMark::Byte { at: 8 }).expect("layout");
        for r in bytes.chunks_exact_mut(32) {
            let x = g.next();
            let len = (x % 12) as usize;
            r[0..4].copy_from_slice(&16u32.to_le_bytes());
            r[4..8].copy_from_slice(&(len as u32).to_le_bytes());
            r[8] = (half && (x >> 40) & 1 == 1) as u8;
            for (k, b) in r[16..16 + len].iter_mut().enumerate() {
                *b = b'a' + ((x >> (k * 4)) % 26) as u8;
            }
        }
    }
    let mut w = ArrowWriter::create(schema, WriterOptions::default()).expect("writer");
    let mut rows = 0;
    for _ in 0..batches {
        assert_eq!(layout.write_records(&mut w, black_box(&bytes), stride), Ok(ROWS));
        rows += black_box(w.finish().expect("finish")).num_rows();
    }
    assert_eq!(rows, batches * ROWS);
}
