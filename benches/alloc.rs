//! Allocations per batch in steady state, counted by a global allocator.
//!
//! For every case: 10 batches to reach steady state, then 20 measured
//! batches; per batch, the number of allocations (and reallocations that
//! grow) and their bytes, split into buffer allocations (1 KiB or more, or an
//! alignment of 32 or
//! more: arrow's `MutableBuffer` allocates with arrow's ALIGNMENT, 64 or 128
//! bytes; ordinary Rust values use 16 or less) and all allocations. quiver's
//! own counters (`buffers_allocated`, `bytes_allocated`) are reported too.
//!
//! Prints a table and writes JSON lines to `target/bench-results/alloc.jsonl`
//! (or `$QUIVER_BENCH_OUT/alloc.jsonl`).

mod common;
#[path = "common/encoded.rs"]
mod encoded;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use arrow_array::{Array, RecordBatch};
use common::{builder_columns, builder_rows, quiver_batch, quiver_writer, Data, Kind};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static BUF_ALLOCS: AtomicU64 = AtomicU64::new(0);
static BUF_BYTES: AtomicU64 = AtomicU64::new(0);

fn count(layout: Layout, bytes: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(bytes as u64, Relaxed);
    if layout.align() >= 32 || layout.size() >= 1024 {
        BUF_ALLOCS.fetch_add(1, Relaxed);
        BUF_BYTES.fetch_add(bytes as u64, Relaxed);
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout, layout.size());
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout, layout.size());
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            count(layout, new_size - layout.size());
        }
        // SAFETY: `ptr` and `layout` come from this allocator, which is the system one.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in realloc.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Default, Clone, Copy)]
struct Snap {
    allocs: u64,
    bytes: u64,
    buf_allocs: u64,
    buf_bytes: u64,
}

fn snap() -> Snap {
    Snap {
        allocs: ALLOCS.load(Relaxed),
        bytes: BYTES.load(Relaxed),
        buf_allocs: BUF_ALLOCS.load(Relaxed),
        buf_bytes: BUF_BYTES.load(Relaxed),
    }
}

const WARM: usize = 10;
const MEASURED: usize = 20;

struct Row {
    case: String,
    writer: &'static str,
    per_batch: [f64; 4],
    quiver_buffers: Option<f64>,
    quiver_bytes: Option<f64>,
}

/// Runs `batch` WARM + MEASURED times; `hold` keeps each result until the next is made.
fn measure(mut batch: impl FnMut() -> Box<dyn std::any::Any>, hold: bool) -> [f64; 4] {
    let mut held: Option<Box<dyn std::any::Any>> = None;
    let mut start = Snap::default();
    for i in 0..WARM + MEASURED {
        if i == WARM {
            start = snap();
        }
        let b = batch();
        if hold {
            held = Some(b);
        } else {
            drop(b);
        }
    }
    let end = snap();
    drop(held);
    let n = MEASURED as f64;
    [
        (end.buf_allocs - start.buf_allocs) as f64 / n,
        (end.buf_bytes - start.buf_bytes) as f64 / n,
        (end.allocs - start.allocs) as f64 / n,
        (end.bytes - start.bytes) as f64 / n,
    ]
}

fn main() {
    let quick = std::env::var("QUIVER_BENCH_QUICK").is_ok_and(|v| v == "1");
    let rows = 8192;
    let mut out: Vec<Row> = Vec::new();
    for rows_path in [false, true] {
        for kind in Kind::ALL {
            for nulls in [false, true] {
                if quick && nulls {
                    continue;
                }
                let case = format!(
                    "{}_{}_{}",
                    if rows_path { "row" } else { "col" },
                    kind.name(),
                    if nulls { "half" } else { "none" }
                );
                let d = Data::new(kind, rows, nulls);
                for (writer, recycle, hold) in
                    [("quiver", true, false), ("quiver_hold", true, true), ("quiver_norecycle", false, false)]
                {
                    let mut w = quiver_writer(kind, rows, recycle);
                    let mut stats_at_warm = None;
                    let mut i = 0;
                    let per_batch = measure(
                        || {
                            if i == WARM {
                                stats_at_warm = Some(w.stats());
                            }
                            i += 1;
                            let b: RecordBatch = quiver_batch(&mut w, &d, rows_path);
                            Box::new(b)
                        },
                        hold,
                    );
                    let (s0, s1) = (stats_at_warm.expect("warm stats"), w.stats());
                    out.push(Row {
                        case: case.clone(),
                        writer,
                        per_batch,
                        quiver_buffers: Some((s1.buffers_allocated - s0.buffers_allocated) as f64 / MEASURED as f64),
                        quiver_bytes: Some((s1.bytes_allocated - s0.bytes_allocated) as f64 / MEASURED as f64),
                    });
                }
                let per_batch = measure(
                    || {
                        let a = if rows_path { builder_rows(&d) } else { builder_columns(&d) };
                        std::hint::black_box(a.len());
                        Box::new(a)
                    },
                    false,
                );
                out.push(Row { case, writer: "arrow_builder", per_batch, quiver_buffers: None, quiver_bytes: None });
            }
        }
    }
    // Dictionary and run-end encoded columns (benches/common/encoded.rs): the
    // dictionary's lookup table is recycled with the batch, like its buffers.
    {
        use encoded::*;
        let (dict, runs) = (EncData::new(false), EncData::new(true));
        // Inputs of the column path made once, outside the measured batches.
        let (dict_array, ree_array) = (builder_dict_utf8(&dict), builder_ree_int64(&runs));
        type Batch<'a> = Box<dyn Fn(&mut quiver::ArrowWriter) -> RecordBatch + 'a>;
        let enc_cases: [(&str, &str, Batch); 5] = [
            ("enc_dict_utf8_row", "dictionary<int32, utf8>", Box::new(|w| quiver_rows_str(w, &dict))),
            ("enc_dict_int64_row", "dictionary<int32, int64>", Box::new(|w| quiver_rows_i64(w, &dict))),
            ("enc_ree_int64_row", "run_end_encoded<int32, int64>", Box::new(|w| quiver_rows_i64(w, &runs))),
            ("enc_dict_utf8_col", "dictionary<int32, utf8>", Box::new(|w| quiver_array(w, &dict_array))),
            ("enc_ree_int64_col", "run_end_encoded<int32, int64>", Box::new(|w| quiver_array(w, &ree_array))),
        ];
        for (case, schema, batch) in enc_cases {
            for (writer, hold) in [("quiver", false), ("quiver_hold", true)] {
                let mut w = encoded::writer(schema);
                let mut stats_at_warm = None;
                let mut i = 0;
                let per_batch = measure(
                    || {
                        if i == WARM {
                            stats_at_warm = Some(w.stats());
                        }
                        i += 1;
                        Box::new(batch(&mut w))
                    },
                    hold,
                );
                let (s0, s1) = (stats_at_warm.expect("warm stats"), w.stats());
                out.push(Row {
                    case: case.into(),
                    writer,
                    per_batch,
                    quiver_buffers: Some((s1.buffers_allocated - s0.buffers_allocated) as f64 / MEASURED as f64),
                    quiver_bytes: Some((s1.bytes_allocated - s0.bytes_allocated) as f64 / MEASURED as f64),
                });
            }
        }
    }
    let dir = std::env::var("QUIVER_BENCH_OUT").unwrap_or_else(|_| "target/bench-results".into());
    std::fs::create_dir_all(&dir).expect("output dir");
    let path = format!("{dir}/alloc.jsonl");
    let mut f = std::fs::File::create(&path).expect("alloc.jsonl");
    println!(
        "{:<26} {:<17} {:>9} {:>11} {:>9} {:>11} {:>9} {:>11}",
        "case", "writer", "buf/batch", "bufB/batch", "all/batch", "allB/batch", "q.bufs", "q.bytes"
    );
    let opt = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v}"));
    for r in &out {
        println!(
            "{:<26} {:<17} {:>9.2} {:>11.0} {:>9.2} {:>11.0} {:>9} {:>11}",
            r.case,
            r.writer,
            r.per_batch[0],
            r.per_batch[1],
            r.per_batch[2],
            r.per_batch[3],
            r.quiver_buffers.map_or("-".into(), |v| format!("{v:.2}")),
            r.quiver_bytes.map_or("-".into(), |v| format!("{v:.0}")),
        );
        writeln!(
            f,
            "{{\"case\":\"{}\",\"writer\":\"{}\",\"buffer_allocs\":{},\"buffer_bytes\":{},\"allocs\":{},\"bytes\":{},\"quiver_buffers_allocated\":{},\"quiver_bytes_allocated\":{}}}",
            r.case,
            r.writer,
            r.per_batch[0],
            r.per_batch[1],
            r.per_batch[2],
            r.per_batch[3],
            opt(r.quiver_buffers),
            opt(r.quiver_bytes)
        )
        .expect("write");
    }
    println!("wrote {path}");
}
