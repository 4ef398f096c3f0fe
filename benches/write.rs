//! Writing one batch: quiver (column path, row path; recycling on with the
//! consumer releasing each batch before the next, recycling on with the
//! consumer holding each batch until the next is written, recycling off)
//! against arrow-rs builders and a plain memcpy of the same bytes into an
//! already-allocated buffer. Each case reports Throughput::Elements(rows).
//!
//! Group names: `col_<type>_<nulls>` (8192-row batches, column path),
//! `col1m_<type>_<nulls>` (1M-row batches), `col64_<type>_<nulls>` (64-row
//! batches: the per-batch fixed cost), `row_<type>_<nulls>` (row path),
//! `enc_<dict|ree>_<values>_<row|col>` (dictionary and run-end encoded
//! columns, see `encoded_cases`), `rec3_<nulls>` (3-column rows from row-major records: per-value appends,
//! one `write_records` per batch, builders, memcpy of the records).
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
/// Rows of the small batches, where the per-batch cost (taking, freezing
/// and releasing the buffers) outweighs the copy.
const SMALL: usize = 64;

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

fn column_path_small(c: &mut Criterion) {
    for kind in [Kind::I32, Kind::I64, Kind::F64] {
        for nulls in [false, true] {
            case(c, &format!("col64_{}_{}", kind.name(), nulls_name(nulls)), kind, SMALL, nulls, false);
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

// ---- records: the 3-column rows of benches/peers/c_bench.c ------------------------------

/// `struct rec3` of c_bench.c: {int64 b; float64 c; int32 a; uint8 nulls}, 24 bytes.
const REC3: usize = 24;

/// c_bench.c's records (xorshift 13/7/17 from its seed); `half`: bit k of
/// byte 20 says column k is null, each with probability 1/2.
fn rec3_bytes(half: bool) -> Vec<u8> {
    let mut out = vec![0u8; REC3 * BATCH];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for r in out.chunks_exact_mut(REC3) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r[0..8].copy_from_slice(&(x.wrapping_mul(31) as i64).to_le_bytes());
        r[8..16].copy_from_slice(&((x as i64) as f64 / 7.0).to_le_bytes());
        r[16..20].copy_from_slice(&(x as i32).to_le_bytes());
        r[20] = if half { ((x >> 40) & 7) as u8 } else { 0 };
    }
    out
}

/// One record's fields: (a, b, c, nulls).
fn rec3_at(bytes: &[u8], i: usize) -> (i32, i64, f64, u8) {
    let r = &bytes[i * REC3..(i + 1) * REC3];
    let b = i64::from_le_bytes(r[0..8].try_into().unwrap());
    let c = f64::from_le_bytes(r[8..16].try_into().unwrap());
    let a = i32::from_le_bytes(r[16..20].try_into().unwrap());
    (a, b, c, r[20])
}

/// The 3-column rows (int32, int64, float64) from row-major records:
/// per-value appends (the row path, one append per value and `end_row`),
/// one `RecordLayout::write_records` per batch, arrow-rs builders appending
/// row by row, and a memcpy of the record bytes. Groups `rec3_<none|half>`.
fn records3(c: &mut Criterion) {
    use arrow_array::builder::{Float64Builder, Int32Builder, Int64Builder};
    use quiver::{Encoding, NullMark, RecordLayout};
    for nulls in [false, true] {
        let bytes = rec3_bytes(nulls);
        let schema = std::sync::Arc::new(quiver::parse_schema("a: int32, b: int64, c: float64").unwrap());
        let options = quiver::WriterOptions { batch_rows: BATCH, ..Default::default() };
        let writer = || quiver::ArrowWriter::create(schema.clone(), options.clone()).unwrap();
        let mut layout = RecordLayout::new(schema.clone());
        for (col, at) in [(0, 16), (1, 0), (2, 8)] {
            layout.set(col, Encoding::Fixed { at }, NullMark::Bit { at: 20, bit: col }).unwrap();
        }
        let values = |w: &mut quiver::ArrowWriter| {
            for i in 0..BATCH {
                let (a, b, c, n) = rec3_at(&bytes, i);
                if n & 1 != 0 { w.append_null(0) } else { w.append_i32(0, a) }.unwrap();
                if n & 2 != 0 { w.append_null(1) } else { w.append_i64(1, b) }.unwrap();
                if n & 4 != 0 { w.append_null(2) } else { w.append_f64(2, c) }.unwrap();
                w.end_row().unwrap();
            }
            w.finish().unwrap()
        };
        let builders = || {
            let (mut a, mut b, mut c) = (
                Int32Builder::with_capacity(BATCH),
                Int64Builder::with_capacity(BATCH),
                Float64Builder::with_capacity(BATCH),
            );
            for i in 0..BATCH {
                let (x, y, z, n) = rec3_at(&bytes, i);
                a.append_option((n & 1 == 0).then_some(x));
                b.append_option((n & 2 == 0).then_some(y));
                c.append_option((n & 4 == 0).then_some(z));
            }
            (a.finish(), b.finish(), c.finish())
        };
        // The three writers make the same columns.
        {
            let mut w = writer();
            let v = values(&mut w);
            assert_eq!(layout.write_records(&mut w, &bytes, REC3), Ok(BATCH));
            let r = w.finish().unwrap();
            let (a, b, c) = builders();
            for (k, built) in [&a as &dyn Array, &b, &c].into_iter().enumerate() {
                assert_eq!(v.column(k).to_data(), built.to_data(), "rec3: per-value appends and builders disagree");
                assert_eq!(r.column(k).to_data(), built.to_data(), "rec3: write_records and builders disagree");
            }
        }
        let mut g = c.benchmark_group(format!("rec3_{}", nulls_name(nulls)));
        g.throughput(Throughput::Elements(BATCH as u64));
        let name = |w: &str| BenchmarkId::from_parameter(w);
        let mut w = writer();
        g.bench_function(name("quiver_values"), |b| b.iter(|| black_box(values(&mut w))));
        let mut w = writer();
        g.bench_function(name("quiver_records"), |b| {
            b.iter(|| {
                layout.write_records(&mut w, black_box(&bytes), REC3).unwrap();
                black_box(w.finish().unwrap())
            })
        });
        g.bench_function(name("arrow_builder"), |b| b.iter(|| black_box(builders())));
        let mut dst = vec![0u8; bytes.len()];
        g.bench_function(name("memcpy"), |b| {
            b.iter(|| {
                dst.copy_from_slice(black_box(&bytes));
                black_box(&dst);
            })
        });
        g.finish();
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
    targets = column_path, column_path_1m, column_path_small, row_path, records3, encoded_cases
}
criterion_main!(benches);
