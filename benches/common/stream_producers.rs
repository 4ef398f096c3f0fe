//! The stream producers of benches/stream.rs (also built into
//! benches/standalone for consumers outside Rust).

use std::sync::Arc;

use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use quiver::{ArrowWriter, Step, WriterOptions, WriterStream};

use super::common::{builder_columns, builder_rows, Data, Kind};

pub const BATCH: usize = 8192;
pub const SCHEMA: &str = "a: int32, b: int64, c: float64, s: utf8";

pub struct Cols {
    pub a: Data,
    pub b: Data,
    pub c: Data,
    pub s: Data,
}

impl Cols {
    pub fn new() -> Arc<Self> {
        Arc::new(Cols {
            a: Data::new(Kind::I32, BATCH, true),
            b: Data::new(Kind::I64, BATCH, true),
            c: Data::new(Kind::F64, BATCH, true),
            s: Data::new(Kind::Utf8, BATCH, true),
        })
    }
}

pub fn fill_columns(w: &mut ArrowWriter, d: &Cols) -> quiver::Result<()> {
    let bits = Some(d.a.bitmap.as_slice());
    w.write_column(0, &d.a.i32s, bits)?;
    w.write_column(1, &d.b.i64s, bits)?;
    w.write_column(2, &d.c.f64s, bits)?;
    w.write_array(3, d.s.array.as_ref())
}

pub fn fill_rows(w: &mut ArrowWriter, d: &Cols) -> quiver::Result<()> {
    for i in 0..BATCH {
        if d.a.valid[i] {
            w.append_i32(0, d.a.i32s[i])?;
            w.append_i64(1, d.b.i64s[i])?;
            w.append_f64(2, d.c.f64s[i])?;
            w.append_str(3, &d.s.strings[i])?;
        } else {
            for c in 0..4 {
                w.append_null(c)?;
            }
        }
        w.end_row()?;
    }
    Ok(())
}

pub fn quiver_stream(d: Arc<Cols>, rows_path: bool) -> FFI_ArrowArrayStream {
    let w = ArrowWriter::from_text(SCHEMA, WriterOptions::default()).expect("schema");
    WriterStream::new(w, move |w: &mut ArrowWriter, _max| {
        if rows_path {
            fill_rows(w, &d)?
        } else {
            fill_columns(w, &d)?
        }
        Ok(Step::Batch)
    })
    .into_ffi()
}

/// arrow-rs builders behind a RecordBatchReader: an endless stream of the same batches.
pub struct BuilderReader {
    d: Arc<Cols>,
    schema: SchemaRef,
    rows_path: bool,
}

impl Iterator for BuilderReader {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        let build = if self.rows_path { builder_rows } else { builder_columns };
        let cols: Vec<ArrayRef> = vec![build(&self.d.a), build(&self.d.b), build(&self.d.c), build(&self.d.s)];
        Some(RecordBatch::try_new(self.schema.clone(), cols))
    }
}

impl RecordBatchReader for BuilderReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

pub fn builder_stream(d: Arc<Cols>, rows_path: bool) -> FFI_ArrowArrayStream {
    let schema = Arc::new(quiver::parse_schema(SCHEMA).expect("schema"));
    FFI_ArrowArrayStream::new(Box::new(BuilderReader { d, schema, rows_path }))
}
