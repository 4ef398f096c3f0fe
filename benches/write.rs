//! Writing one batch: quiver (column path, row path; recycling on with the
//! consumer releasing each batch before the next, recycling on with the
//! consumer holding each batch until the next is written, recycling off)
//! against arrow-rs builders and a plain memcpy of the same bytes into an
//! already-allocated buffer. Each case reports Throughput::Elements(rows).
//!
//! Group names: `col_<type>_<nulls>` (8192-row batches, column path),
//! `col1m_<type>_<nulls>` (1M-row batches), `row_<type>_<nulls>` (row path).
//! scripts/bench.sh turns target/criterion/*/*/new/estimates.json into
//! docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::time::Duration;

use arrow_array::{Array, RecordBatch};
use common::{buffers_of, builder_columns, builder_rows, memcpy, quiver_batch, quiver_writer, Data, Kind, MemcpyDst};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const BATCH: usize = 8192;
const MILLION: usize = 1 << 20;

fn case(c: &mut Criterion, group: &str, kind: Kind, rows: usize, nulls: bool, rows_path: bool) {
    let d = Data::new(kind, rows, nulls);
    // The writers must produce the same column from the same data.
    {
        let mut w = quiver_writer(kind, rows, true);
        let batch = quiver_batch(&mut w, &d, rows_path);
        let built = if rows_path { builder_rows(&d) } else { builder_columns(&d) };
        assert_eq!(batch.column(0).to_data(), built.to_data(), "{group}: quiver and arrow-rs builders disagree");
        assert_eq!(batch.column(0).to_data(), d.array.to_data(), "{group}: quiver and the input disagree");
    }
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(rows as u64));
    if rows > BATCH {
        // 1M-row batches take milliseconds each: fewer samples keep the run short.
        g.sample_size(10);
    }
    let name = |w: &str| BenchmarkId::from_parameter(w);

    let mut w = quiver_writer(kind, rows, true);
    g.bench_function(name("quiver"), |b| {
        b.iter(|| {
            let batch = quiver_batch(&mut w, &d, rows_path);
            black_box(&batch);
        })
    });

    let mut w = quiver_writer(kind, rows, true);
    let mut held: Option<RecordBatch> = None;
    g.bench_function(name("quiver_hold"), |b| {
        b.iter(|| {
            let batch = quiver_batch(&mut w, &d, rows_path);
            // The previous batch is released only now, after the next was written.
            held = Some(black_box(batch));
        })
    });
    drop(held);

    let mut w = quiver_writer(kind, rows, false);
    g.bench_function(name("quiver_norecycle"), |b| {
        b.iter(|| {
            let batch = quiver_batch(&mut w, &d, rows_path);
            black_box(&batch);
        })
    });

    g.bench_function(name("arrow_builder"), |b| {
        b.iter(|| {
            let array = if rows_path { builder_rows(&d) } else { builder_columns(&d) };
            black_box(array.len());
        })
    });

    let data = d.array.to_data();
    let src = buffers_of(&data);
    let mut dst = MemcpyDst::new(&d);
    g.bench_function(name("memcpy"), |b| {
        b.iter(|| {
            memcpy(black_box(&src), &mut dst);
            black_box(&dst.0);
        })
    });
    g.finish();
}

fn nulls_name(nulls: bool) -> &'static str {
    if nulls {
        "half"
    } else {
        "none"
    }
}

fn quick() -> bool {
    std::env::var("QUIVER_BENCH_QUICK").is_ok_and(|v| v == "1")
}

fn column_path(c: &mut Criterion) {
    for kind in Kind::ALL {
        for nulls in [false, true] {
            case(c, &format!("col_{}_{}", kind.name(), nulls_name(nulls)), kind, BATCH, nulls, false);
        }
    }
}

fn column_path_1m(c: &mut Criterion) {
    for kind in [Kind::I32, Kind::I64, Kind::F64] {
        for nulls in [false, true] {
            let rows = if quick() { BATCH * 4 } else { MILLION };
            case(c, &format!("col1m_{}_{}", kind.name(), nulls_name(nulls)), kind, rows, nulls, false);
        }
    }
}

fn row_path(c: &mut Criterion) {
    for kind in Kind::ALL {
        for nulls in [false, true] {
            case(c, &format!("row_{}_{}", kind.name(), nulls_name(nulls)), kind, BATCH, nulls, true);
        }
    }
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = column_path, column_path_1m, row_path
}
criterion_main!(benches);
