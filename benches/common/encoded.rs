//! Data and writers of the dictionary and run-end encoded benchmarks
//! (benches/write.rs `enc_*` groups, benches/alloc.rs `enc_*` cases): 8192
//! rows of 50 distinct values, utf8 (10- and 11-byte strings) or int64;
//! dictionary rows pick a value at random, run-end rows come in runs of 1 to
//! 8 rows of a random value. Included with `#[path]` by the benches that
//! use it.
#![allow(dead_code)]

use std::sync::Arc;

use arrow_array::builder::{
    PrimitiveDictionaryBuilder, PrimitiveRunBuilder, StringDictionaryBuilder, StringRunBuilder,
};
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use quiver::{ArrowWriter, WriterOptions};

pub const ROWS: usize = 8192;
pub const DISTINCT: usize = 50;

/// The xorshift64* generator of benches/common/mod.rs.
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

/// One case's rows: which of the `DISTINCT` values each row holds.
pub struct EncData {
    pub words: Vec<String>,
    pub ints: Vec<i64>,
    /// Per row, an index into `words` / `ints`.
    pub pick: Vec<usize>,
    /// `dictionary` (random picks) or `run` (runs of 1 to 8 equal picks).
    pub runs: bool,
}

impl EncData {
    pub fn new(runs: bool) -> Self {
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let words: Vec<String> =
            (0..DISTINCT).map(|k| if k % 2 == 0 { format!("value{k:05}") } else { format!("value-{k:05}") }).collect();
        let ints: Vec<i64> = (0..DISTINCT as i64).map(|k| k * 1_000_003 - 17).collect();
        let mut pick = Vec::with_capacity(ROWS);
        while pick.len() < ROWS {
            let v = (g.next() % DISTINCT as u64) as usize;
            let n = if runs { 1 + (g.next() % 8) as usize } else { 1 };
            pick.extend(std::iter::repeat_n(v, n.min(ROWS - pick.len())));
        }
        EncData { words, ints, pick, runs }
    }

    pub fn str_at(&self, i: usize) -> &str {
        &self.words[self.pick[i]]
    }

    pub fn int_at(&self, i: usize) -> i64 {
        self.ints[self.pick[i]]
    }

    /// The same values as a plain utf8 / int64 array.
    pub fn plain_utf8(&self) -> ArrayRef {
        Arc::new(StringArray::from_iter_values((0..ROWS).map(|i| self.str_at(i))))
    }

    pub fn plain_int64(&self) -> ArrayRef {
        Arc::new(Int64Array::from_iter_values((0..ROWS).map(|i| self.int_at(i))))
    }
}

/// A writer of one column `c` of `schema` (8192-row batches).
pub fn writer(schema: &str) -> ArrowWriter {
    ArrowWriter::from_text(&format!("c: {schema}"), WriterOptions { batch_rows: ROWS, ..WriterOptions::default() })
        .expect("schema")
}

/// quiver's row path: `append_str` + `end_row` per row, then `finish`.
pub fn quiver_rows_str(w: &mut ArrowWriter, d: &EncData) -> RecordBatch {
    for i in 0..ROWS {
        w.append_str(0, d.str_at(i)).expect("append");
        w.end_row().expect("end_row");
    }
    w.finish().expect("finish")
}

/// quiver's row path: `append_i64` + `end_row` per row, then `finish`.
pub fn quiver_rows_i64(w: &mut ArrowWriter, d: &EncData) -> RecordBatch {
    for i in 0..ROWS {
        w.append_i64(0, d.int_at(i)).expect("append");
        w.end_row().expect("end_row");
    }
    w.finish().expect("finish")
}

/// quiver's column path: one `write_array`, then `finish`.
pub fn quiver_array(w: &mut ArrowWriter, a: &ArrayRef) -> RecordBatch {
    w.write_array(0, a.as_ref()).expect("write_array");
    w.finish().expect("finish")
}

/// arrow-rs `StringDictionaryBuilder<Int32Type>::append_value` per row.
pub fn builder_dict_utf8(d: &EncData) -> ArrayRef {
    let mut b = StringDictionaryBuilder::<Int32Type>::with_capacity(ROWS, DISTINCT, DISTINCT * 11);
    for i in 0..ROWS {
        b.append_value(d.str_at(i));
    }
    Arc::new(b.finish())
}

/// arrow-rs `PrimitiveDictionaryBuilder<Int32Type, Int64Type>::append_value` per row.
pub fn builder_dict_int64(d: &EncData) -> ArrayRef {
    let mut b = PrimitiveDictionaryBuilder::<Int32Type, Int64Type>::with_capacity(ROWS, DISTINCT);
    for i in 0..ROWS {
        b.append_value(d.int_at(i));
    }
    Arc::new(b.finish())
}

/// arrow-rs `StringRunBuilder<Int32Type>::append_value` per row.
pub fn builder_ree_utf8(d: &EncData) -> ArrayRef {
    let mut b = StringRunBuilder::<Int32Type>::with_capacity(ROWS, ROWS * 11);
    for i in 0..ROWS {
        b.append_value(d.str_at(i));
    }
    Arc::new(b.finish())
}

/// arrow-rs `PrimitiveRunBuilder<Int32Type, Int64Type>::append_value` per row.
pub fn builder_ree_int64(d: &EncData) -> ArrayRef {
    let mut b = PrimitiveRunBuilder::<Int32Type, Int64Type>::with_capacity(ROWS);
    for i in 0..ROWS {
        b.append_value(d.int_at(i));
    }
    Arc::new(b.finish())
}
