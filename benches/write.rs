//! Writing one batch: quiver (column path, row path; recycling on with the
//! consumer releasing each batch before the next, recycling on with the
//! consumer holding each batch until the next is written, recycling off)
//! against arrow-rs builders and a plain memcpy of the same bytes into an
//! already-allocated buffer. Each case reports Throughput::Elements(rows).
//!
//! Group names: `col_<type>_<nulls>` (8192-row batches, column path),
//! `col1m_<type>_<nulls>` (1M-row batches), `row_<type>_<nulls>` (row path),
//! `enc_<dict|ree>_<values>_<row|col>` (dictionary and run-end encoded
//! columns, see `encoded_cases`).
//! scripts/bench.sh turns target/criterion/*/*/new/estimates.json into
//! docs/benchmarks.md.

mod common;
#[path = "common/encoded.rs"]
mod encoded;

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

/// Dictionary and run-end encoded columns (8192 rows of 50 distinct values,
/// benches/common/encoded.rs), one batch written and finished: `quiver`
/// against the arrow-rs builder of the same encoding (row path: append per
/// row) and, column path, `quiver_plain`: the same values as a plain
/// utf8 / int64 array through `write_array`. `enc_dict_utf8_row` also has
/// `quiver_plain`: the plain utf8 row path.
fn encoded_cases(c: &mut Criterion) {
    use arrow_array::ArrayRef;
    use encoded::*;
    let dict = EncData::new(false);
    let runs = EncData::new(true);
    type Rows = fn(&mut quiver::ArrowWriter, &EncData) -> RecordBatch;
    type Builder = fn(&EncData) -> ArrayRef;
    let row_cases: [(&str, &str, &EncData, Rows, Builder); 4] = [
        ("enc_dict_utf8_row", "dictionary<int32, utf8>", &dict, quiver_rows_str, builder_dict_utf8),
        ("enc_dict_int64_row", "dictionary<int32, int64>", &dict, quiver_rows_i64, builder_dict_int64),
        ("enc_ree_utf8_row", "run_end_encoded<int32, utf8>", &runs, quiver_rows_str, builder_ree_utf8),
        ("enc_ree_int64_row", "run_end_encoded<int32, int64>", &runs, quiver_rows_i64, builder_ree_int64),
    ];
    for (group, schema, d, rows, builder) in row_cases {
        let mut w = writer(schema);
        assert_eq!(rows(&mut w, d).column(0).to_data(), builder(d).to_data(), "{group}: quiver and arrow-rs differ");
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(ROWS as u64));
        g.bench_function(BenchmarkId::from_parameter("quiver"), |b| b.iter(|| black_box(rows(&mut w, d))));
        g.bench_function(BenchmarkId::from_parameter("arrow_builder"), |b| b.iter(|| black_box(builder(d).len())));
        if group == "enc_dict_utf8_row" {
            let mut plain = writer("utf8");
            g.bench_function(BenchmarkId::from_parameter("quiver_plain"), |b| {
                b.iter(|| black_box(quiver_rows_str(&mut plain, d)))
            });
        }
        g.finish();
    }
    let col_cases: [(&str, &str, ArrayRef, &str, ArrayRef); 3] = [
        ("enc_dict_utf8_col", "dictionary<int32, utf8>", builder_dict_utf8(&dict), "utf8", dict.plain_utf8()),
        ("enc_dict_int64_col", "dictionary<int32, int64>", builder_dict_int64(&dict), "int64", dict.plain_int64()),
        ("enc_ree_int64_col", "run_end_encoded<int32, int64>", builder_ree_int64(&runs), "int64", runs.plain_int64()),
    ];
    for (group, schema, input, plain_schema, plain_input) in col_cases {
        let mut w = writer(schema);
        assert_eq!(quiver_array(&mut w, &input).column(0).to_data(), input.to_data(), "{group}: not the input");
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(ROWS as u64));
        g.bench_function(BenchmarkId::from_parameter("quiver"), |b| b.iter(|| black_box(quiver_array(&mut w, &input))));
        let mut plain = writer(plain_schema);
        g.bench_function(BenchmarkId::from_parameter("quiver_plain"), |b| {
            b.iter(|| black_box(quiver_array(&mut plain, &plain_input)))
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
    targets = column_path, column_path_1m, row_path, encoded_cases
}
criterion_main!(benches);
