//! The C Stream end to end: batches of `a: int32, b: int64, c: float64,
//! s: utf8` (half nulls) written by quiver into a `WriterStream`, exported
//! with `into_ffi()` and read back by arrow-rs's importer
//! (`RecordBatchStreamReader`), against arrow-rs builders behind
//! `FFI_ArrowArrayStream::new(Box<dyn RecordBatchReader>)`, read by the same
//! importer. Each iteration pulls one 8192-row batch from an endless stream
//! and drops it (the consumer releases before the next).
//!
//! `stream_col`: quiver's column path (write_column, write_array) against
//! arrow-rs bulk builder calls; `stream_row`: quiver's row path against
//! arrow-rs append_value / append_null.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arrow::ffi_stream::{RecordBatchStreamReader, FFI_ArrowArrayStream};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use common::{Data, Kind, builder_columns, builder_rows, quiver_columns};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quiver::{ArrowWriter, Step, WriterOptions, WriterStream};

const BATCH: usize = 8192;
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

fn fill_columns(w: &mut ArrowWriter, d: &Cols) -> quiver::Result<()> {
    let bits = Some(d.a.bitmap.as_slice());
    w.write_column(0, &d.a.i32s, bits)?;
    w.write_column(1, &d.b.i64s, bits)?;
    w.write_column(2, &d.c.f64s, bits)?;
    w.write_array(3, d.s.array.as_ref())
}

fn fill_rows(w: &mut ArrowWriter, d: &Cols) -> quiver::Result<()> {
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

fn quiver_stream(d: Arc<Cols>, rows_path: bool) -> FFI_ArrowArrayStream {
    let w = ArrowWriter::from_text(SCHEMA, WriterOptions::default()).expect("schema");
    WriterStream::new(w, move |w: &mut ArrowWriter, _max| {
        if rows_path { fill_rows(w, &d)? } else { fill_columns(w, &d)? }
        Ok(Step::Batch)
    })
    .into_ffi()
}

/// arrow-rs builders behind a RecordBatchReader: an endless stream of the same batches.
struct BuilderReader {
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

fn builder_stream(d: Arc<Cols>, rows_path: bool) -> FFI_ArrowArrayStream {
    let schema = Arc::new(quiver::parse_schema(SCHEMA).expect("schema"));
    FFI_ArrowArrayStream::new(Box::new(BuilderReader { d, schema, rows_path }))
}

fn bench(c: &mut Criterion) {
    let d = Cols::new();
    for rows_path in [false, true] {
        let mut g = c.benchmark_group(if rows_path { "stream_row" } else { "stream_col" });
        g.throughput(Throughput::Elements(BATCH as u64));
        // Both producers give the same batches.
        {
            let mut q = RecordBatchStreamReader::try_new(quiver_stream(d.clone(), rows_path)).unwrap();
            let mut b = RecordBatchStreamReader::try_new(builder_stream(d.clone(), rows_path)).unwrap();
            let (qb, bb) = (q.next().unwrap().unwrap(), b.next().unwrap().unwrap());
            assert_eq!(qb, bb, "quiver and arrow-rs builder streams disagree");
            let _ = quiver_columns; // the single-column helper is not used here
        }
        let mut reader = RecordBatchStreamReader::try_new(quiver_stream(d.clone(), rows_path)).unwrap();
        g.bench_function(BenchmarkId::from_parameter("quiver"), |b| {
            b.iter(|| black_box(reader.next().unwrap().unwrap().num_rows()))
        });
        let mut reader = RecordBatchStreamReader::try_new(builder_stream(d.clone(), rows_path)).unwrap();
        g.bench_function(BenchmarkId::from_parameter("arrow_builder"), |b| {
            b.iter(|| black_box(reader.next().unwrap().unwrap().num_rows()))
        });
        g.finish();
    }
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
