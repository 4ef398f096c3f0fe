//! Shared data and writers of the benchmarks: every writer (quiver's row and
//! column paths, arrow-rs builders, a plain memcpy) gets the same data, made
//! by the same xorshift64* generator that benches/peers/bench_data.h uses in C.
#![allow(dead_code)]

use std::sync::Arc;

use arrow_array::builder::{
    Date32Builder, Decimal128Builder, Float64Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Fields};
use quiver::{ArrowWriter, WriterOptions};

/// The xorshift64* generator (same constants as benches/peers/bench_data.h).
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed)
    }
    #[inline]
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

pub const SEED_VALUES: u64 = 0x9E37_79B9_7F4A_7C15;
pub const SEED_VALID: u64 = 0x0123_4567_89AB_CDEF;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    I32,
    I64,
    F64,
    Dec18,
    Dec38,
    Struct,
    Utf8,
    List,
}

impl Kind {
    pub const ALL: [Kind; 8] =
        [Kind::I32, Kind::I64, Kind::F64, Kind::Dec18, Kind::Dec38, Kind::Struct, Kind::Utf8, Kind::List];
    pub fn name(self) -> &'static str {
        match self {
            Kind::I32 => "int32",
            Kind::I64 => "int64",
            Kind::F64 => "float64",
            Kind::Dec18 => "decimal18_2",
            Kind::Dec38 => "decimal38_10",
            Kind::Struct => "struct4",
            Kind::Utf8 => "utf8",
            Kind::List => "list_int32",
        }
    }
    pub fn schema_text(self) -> &'static str {
        match self {
            Kind::I32 => "v: int32",
            Kind::I64 => "v: int64",
            Kind::F64 => "v: float64",
            Kind::Dec18 => "v: decimal128(18, 2)",
            Kind::Dec38 => "v: decimal128(38, 10)",
            Kind::Struct => "v: struct<a: int32, b: int64, c: float64, d: date32>",
            Kind::Utf8 => "v: utf8",
            Kind::List => "v: list<int32>",
        }
    }
}

/// One column of `rows` rows. With `nulls`, about half the rows are null
/// (pseudo-random); a struct's children share that pattern, the struct
/// itself is always valid. Values under nulls are whatever the generator
/// gave (fixed width) or empty (strings, lists).
pub struct Data {
    pub kind: Kind,
    pub rows: usize,
    pub nulls: bool,
    pub valid: Vec<bool>,
    /// LSB-first bitmap of `valid`.
    pub bitmap: Vec<u8>,
    pub i32s: Vec<i32>,
    pub i64s: Vec<i64>,
    pub f64s: Vec<f64>,
    pub i128s: Vec<i128>,
    /// date32 child of the struct.
    pub dates: Vec<i32>,
    pub strings: Vec<String>,
    /// list<int32>: offsets (rows + 1) into `list_values`.
    pub list_offsets: Vec<i32>,
    pub list_values: Vec<i32>,
    /// The same column as an arrow array (input of write_array, source of memcpy).
    pub array: ArrayRef,
}

const P18: i128 = 1_000_000_000_000_000_000;

impl Data {
    pub fn new(kind: Kind, rows: usize, nulls: bool) -> Self {
        let mut g = Gen::new(SEED_VALUES);
        let mut gv = Gen::new(SEED_VALID);
        let valid: Vec<bool> = (0..rows).map(|_| !nulls || (gv.next() >> 63) == 0).collect();
        let mut bitmap = vec![0u8; rows.div_ceil(8)];
        for (i, &v) in valid.iter().enumerate() {
            if v {
                bitmap[i >> 3] |= 1 << (i & 7);
            }
        }
        let mut d = Data {
            kind,
            rows,
            nulls,
            valid,
            bitmap,
            i32s: vec![],
            i64s: vec![],
            f64s: vec![],
            i128s: vec![],
            dates: vec![],
            strings: vec![],
            list_offsets: vec![],
            list_values: vec![],
            array: Arc::new(Int32Array::from(Vec::<i32>::new())),
        };
        match kind {
            Kind::I32 => d.i32s = (0..rows).map(|_| g.next() as i32).collect(),
            Kind::I64 => d.i64s = (0..rows).map(|_| g.next() as i64).collect(),
            Kind::F64 => d.f64s = (0..rows).map(|_| unit(g.next())).collect(),
            Kind::Dec18 => d.i128s = (0..rows).map(|_| (g.next() as i64 % (P18 as i64)) as i128).collect(),
            Kind::Dec38 => {
                d.i128s = (0..rows)
                    .map(|_| {
                        let hi = (g.next() as i64 % (P18 as i64 / 10)) as i128;
                        let lo = (g.next() % P18 as u64) as i128;
                        hi * P18 + if hi < 0 { -lo } else { lo }
                    })
                    .collect()
            }
            Kind::Struct => {
                for _ in 0..rows {
                    d.i32s.push(g.next() as i32);
                    d.i64s.push(g.next() as i64);
                    d.f64s.push(unit(g.next()));
                    d.dates.push((g.next() % 40_000) as i32);
                }
            }
            Kind::Utf8 => {
                for i in 0..rows {
                    let r = g.next();
                    let len = if d.valid[i] { (r % 12) as usize } else { 0 };
                    d.strings.push((0..len).map(|k| (b'a' + ((r >> (8 + 4 * k)) % 26) as u8) as char).collect());
                }
            }
            Kind::List => {
                d.list_offsets.push(0);
                for i in 0..rows {
                    let r = g.next();
                    let len = if d.valid[i] { (r % 8) as usize } else { 0 };
                    for _ in 0..len {
                        d.list_values.push(g.next() as i32);
                    }
                    d.list_offsets.push(d.list_values.len() as i32);
                }
            }
        }
        d.array = d.make_array();
        d
    }

    fn nulls_buf(&self) -> Option<NullBuffer> {
        self.nulls.then(|| NullBuffer::from(self.valid.clone()))
    }

    fn make_array(&self) -> ArrayRef {
        let nb = self.nulls_buf();
        match self.kind {
            Kind::I32 => Arc::new(Int32Array::new(self.i32s.clone().into(), nb)),
            Kind::I64 => Arc::new(Int64Array::new(self.i64s.clone().into(), nb)),
            Kind::F64 => Arc::new(Float64Array::new(self.f64s.clone().into(), nb)),
            Kind::Dec18 | Kind::Dec38 => {
                let (p, s) = if self.kind == Kind::Dec18 { (18, 2) } else { (38, 10) };
                Arc::new(Decimal128Array::new(self.i128s.clone().into(), nb).with_precision_and_scale(p, s).unwrap())
            }
            Kind::Struct => {
                let fields = struct_fields();
                let cols: Vec<ArrayRef> = vec![
                    Arc::new(Int32Array::new(self.i32s.clone().into(), nb.clone())),
                    Arc::new(Int64Array::new(self.i64s.clone().into(), nb.clone())),
                    Arc::new(Float64Array::new(self.f64s.clone().into(), nb.clone())),
                    Arc::new(Date32Array::new(self.dates.clone().into(), nb)),
                ];
                Arc::new(StructArray::new(fields, cols, None))
            }
            Kind::Utf8 => Arc::new(StringArray::from_iter(
                self.strings.iter().zip(&self.valid).map(|(s, &v)| v.then_some(s.as_str())),
            )),
            Kind::List => Arc::new(ListArray::new(
                Arc::new(Field::new("item", DataType::Int32, true)),
                OffsetBuffer::new(self.list_offsets.clone().into()),
                Arc::new(Int32Array::from(self.list_values.clone())),
                nb,
            )),
        }
    }

    /// Bytes of the column's buffers (validity only when there are nulls).
    pub fn bytes(&self) -> usize {
        buffers_of(&self.array.to_data()).iter().map(|b| b.len()).sum()
    }
}

fn unit(r: u64) -> f64 {
    (r >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * 1000.0
}

pub fn struct_fields() -> Fields {
    Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("c", DataType::Float64, true),
        Field::new("d", DataType::Date32, true),
    ])
}

/// Every buffer (validity included, when present) of `data` and its children.
pub fn buffers_of(data: &ArrayData) -> Vec<&[u8]> {
    let mut out = Vec::new();
    if let Some(n) = data.nulls() {
        out.push(n.buffer().as_slice());
    }
    for b in data.buffers() {
        out.push(b.as_slice());
    }
    for c in data.child_data() {
        out.extend(buffers_of(c));
    }
    out
}

// ---- quiver ------------------------------------------------------------------

pub fn quiver_writer(kind: Kind, rows: usize, recycle: bool) -> ArrowWriter {
    ArrowWriter::from_text(kind.schema_text(), WriterOptions { batch_rows: rows, recycle, ..WriterOptions::default() })
        .expect("schema")
}

/// The column path: one call per top-level column.
pub fn quiver_columns(w: &mut ArrowWriter, d: &Data) {
    let bits = d.nulls.then_some(d.bitmap.as_slice());
    match d.kind {
        Kind::I32 => w.write_column(0, &d.i32s, bits),
        Kind::I64 => w.write_column(0, &d.i64s, bits),
        Kind::F64 => w.write_column(0, &d.f64s, bits),
        Kind::Dec18 | Kind::Dec38 => w.write_column(0, &d.i128s, bits),
        Kind::Struct | Kind::Utf8 | Kind::List => w.write_array(0, d.array.as_ref()),
    }
    .expect("write column");
}

/// The row path: typed appends and end_row per row.
pub fn quiver_rows(w: &mut ArrowWriter, d: &Data) {
    let r = (|| -> quiver::Result<()> {
        match d.kind {
            Kind::I32 => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.append_i32(0, d.i32s[i])?
                    } else {
                        w.append_null(0)?
                    }
                    w.end_row()?;
                }
            }
            Kind::I64 => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.append_i64(0, d.i64s[i])?
                    } else {
                        w.append_null(0)?
                    }
                    w.end_row()?;
                }
            }
            Kind::F64 => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.append_f64(0, d.f64s[i])?
                    } else {
                        w.append_null(0)?
                    }
                    w.end_row()?;
                }
            }
            Kind::Dec18 | Kind::Dec38 => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.append_decimal(0, d.i128s[i])?
                    } else {
                        w.append_null(0)?
                    }
                    w.end_row()?;
                }
            }
            Kind::Struct => {
                for i in 0..d.rows {
                    w.begin(0)?;
                    if d.valid[i] {
                        w.append_i32(1, d.i32s[i])?;
                        w.append_i64(2, d.i64s[i])?;
                        w.append_f64(3, d.f64s[i])?;
                        w.append_i32(4, d.dates[i])?;
                    } else {
                        for c in 1..=4 {
                            w.append_null(c)?;
                        }
                    }
                    w.end(0)?;
                    w.end_row()?;
                }
            }
            Kind::Utf8 => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.append_str(0, &d.strings[i])?
                    } else {
                        w.append_null(0)?
                    }
                    w.end_row()?;
                }
            }
            Kind::List => {
                for i in 0..d.rows {
                    if d.valid[i] {
                        w.begin(0)?;
                        let (s, e) = (d.list_offsets[i] as usize, d.list_offsets[i + 1] as usize);
                        for &x in &d.list_values[s..e] {
                            w.append_i32(1, x)?;
                        }
                        w.end(0)?;
                    } else {
                        w.append_null(0)?;
                    }
                    w.end_row()?;
                }
            }
        }
        Ok(())
    })();
    r.expect("row path");
}

pub fn quiver_batch(w: &mut ArrowWriter, d: &Data, rows_path: bool) -> RecordBatch {
    if rows_path {
        quiver_rows(w, d)
    } else {
        quiver_columns(w, d)
    }
    w.finish().expect("finish")
}

// ---- arrow-rs builders -----------------------------------------------------------

/// arrow-rs builders, bulk: append_slice (no nulls) / append_values (with a
/// validity slice) for fixed width; per value for strings and lists.
pub fn builder_columns(d: &Data) -> ArrayRef {
    let n = d.rows;
    macro_rules! prim {
        ($b:expr, $v:expr) => {{
            let mut b = $b;
            if d.nulls {
                b.append_values($v, &d.valid)
            } else {
                b.append_slice($v)
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    match d.kind {
        Kind::I32 => prim!(Int32Builder::with_capacity(n), &d.i32s),
        Kind::I64 => prim!(Int64Builder::with_capacity(n), &d.i64s),
        Kind::F64 => prim!(Float64Builder::with_capacity(n), &d.f64s),
        Kind::Dec18 => prim!(Decimal128Builder::with_capacity(n).with_precision_and_scale(18, 2).unwrap(), &d.i128s),
        Kind::Dec38 => prim!(Decimal128Builder::with_capacity(n).with_precision_and_scale(38, 10).unwrap(), &d.i128s),
        Kind::Struct => {
            let nb = d.nulls.then_some(&d.valid);
            let cols: Vec<ArrayRef> = vec![
                bulk(Int32Builder::with_capacity(n), &d.i32s, nb),
                bulk(Int64Builder::with_capacity(n), &d.i64s, nb),
                bulk(Float64Builder::with_capacity(n), &d.f64s, nb),
                bulk(Date32Builder::with_capacity(n), &d.dates, nb),
            ];
            Arc::new(StructArray::new(struct_fields(), cols, None))
        }
        Kind::Utf8 => {
            let data_len = d.strings.iter().map(|s| s.len()).sum();
            let mut b = StringBuilder::with_capacity(n, data_len);
            b.append_array(d.array.as_any().downcast_ref::<StringArray>().unwrap()).unwrap();
            Arc::new(b.finish())
        }
        Kind::List => {
            let mut b = ListBuilder::with_capacity(Int32Builder::with_capacity(d.list_values.len()), n);
            for i in 0..n {
                if d.valid[i] {
                    let (s, e) = (d.list_offsets[i] as usize, d.list_offsets[i + 1] as usize);
                    b.values().append_slice(&d.list_values[s..e]);
                    b.append(true);
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish())
        }
    }
}

fn bulk<T: arrow_array::ArrowPrimitiveType>(
    mut b: arrow_array::builder::PrimitiveBuilder<T>,
    v: &[T::Native],
    valid: Option<&Vec<bool>>,
) -> ArrayRef {
    match valid {
        Some(valid) => b.append_values(v, valid),
        None => b.append_slice(v),
    }
    Arc::new(b.finish())
}

/// arrow-rs builders, per value: append_value / append_null.
pub fn builder_rows(d: &Data) -> ArrayRef {
    let n = d.rows;
    macro_rules! prim {
        ($b:expr, $v:expr) => {{
            let mut b = $b;
            for i in 0..n {
                if d.valid[i] {
                    b.append_value($v[i])
                } else {
                    b.append_null()
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    match d.kind {
        Kind::I32 => prim!(Int32Builder::with_capacity(n), d.i32s),
        Kind::I64 => prim!(Int64Builder::with_capacity(n), d.i64s),
        Kind::F64 => prim!(Float64Builder::with_capacity(n), d.f64s),
        Kind::Dec18 => prim!(Decimal128Builder::with_capacity(n).with_precision_and_scale(18, 2).unwrap(), d.i128s),
        Kind::Dec38 => prim!(Decimal128Builder::with_capacity(n).with_precision_and_scale(38, 10).unwrap(), d.i128s),
        Kind::Struct => {
            let (mut a, mut b, mut c, mut e) = (
                Int32Builder::with_capacity(n),
                Int64Builder::with_capacity(n),
                Float64Builder::with_capacity(n),
                Date32Builder::with_capacity(n),
            );
            for i in 0..n {
                if d.valid[i] {
                    a.append_value(d.i32s[i]);
                    b.append_value(d.i64s[i]);
                    c.append_value(d.f64s[i]);
                    e.append_value(d.dates[i]);
                } else {
                    a.append_null();
                    b.append_null();
                    c.append_null();
                    e.append_null();
                }
            }
            let cols: Vec<ArrayRef> =
                vec![Arc::new(a.finish()), Arc::new(b.finish()), Arc::new(c.finish()), Arc::new(e.finish())];
            Arc::new(StructArray::new(struct_fields(), cols, None))
        }
        Kind::Utf8 => {
            let data_len = d.strings.iter().map(|s| s.len()).sum();
            let mut b = StringBuilder::with_capacity(n, data_len);
            for i in 0..n {
                if d.valid[i] {
                    b.append_value(&d.strings[i])
                } else {
                    b.append_null()
                }
            }
            Arc::new(b.finish())
        }
        Kind::List => {
            let mut b = ListBuilder::with_capacity(Int32Builder::with_capacity(d.list_values.len()), n);
            for i in 0..n {
                if d.valid[i] {
                    let (s, e) = (d.list_offsets[i] as usize, d.list_offsets[i + 1] as usize);
                    for &x in &d.list_values[s..e] {
                        b.values().append_value(x);
                    }
                    b.append(true);
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish())
        }
    }
}

// ---- memcpy: the physical limit --------------------------------------------------

/// Destination buffers, allocated once, of the sizes of the column's buffers.
pub struct MemcpyDst(pub Vec<Vec<u8>>);

impl MemcpyDst {
    pub fn new(d: &Data) -> Self {
        MemcpyDst(buffers_of(&d.array.to_data()).iter().map(|b| vec![0u8; b.len()]).collect())
    }
}

/// Copies the bytes of every buffer of the column into `dst`.
#[inline(never)]
pub fn memcpy(src: &[&[u8]], dst: &mut MemcpyDst) {
    for (s, d) in src.iter().zip(dst.0.iter_mut()) {
        d.copy_from_slice(s);
    }
}
