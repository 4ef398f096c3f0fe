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
#[path = "common/stream_producers.rs"]
mod stream_producers;

use std::hint::black_box;
use std::time::Duration;

use arrow::ffi_stream::RecordBatchStreamReader;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use stream_producers::{builder_stream, quiver_stream, Cols, BATCH};

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
