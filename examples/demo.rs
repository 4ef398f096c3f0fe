//! The main job: streams a few million rows of a mixed schema through the
//! Arrow C Stream Interface into arrow-rs's importer and prints rows/s and
//! the writer's reuse counters.
//!
//!     cargo run --release --example demo [rows]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::RecordBatchStreamReader;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use quiver::{ArrowWriter, Step, WriterOptions, WriterStats, WriterStream};

const SCHEMA: &str = "id: int64 not null, ts: timestamp(us, \"UTC\"), price: decimal128(18, 2), \
                      name: utf8, qty: int32, tags: list<utf8>, pos: struct<x: float64, y: float64>";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(4_000_000);
    let writer = ArrowWriter::from_text(SCHEMA, WriterOptions::default())?;
    let names = ["ada", "grace", "edsger", "barbara", "ken", "dennis", "margaret", "linus"];
    let tags = ["red", "green", "blue"];
    let stats = Arc::new(Mutex::new(WriterStats::default()));
    let seen_stats = stats.clone();
    let mut next = 0usize;
    let fill = move |w: &mut ArrowWriter, max_rows: usize| -> quiver::Result<Step> {
        let end = (next + max_rows).min(total);
        for i in next..end {
            let k = i as i64;
            w.append_i64(0, k)?;
            w.append_i64(1, 1_700_000_000_000_000 + k * 1_000)?;
            w.append_decimal(2, (k % 100_000) as i128 * 25)?;
            w.append_str(3, names[i % names.len()])?;
            if i % 10 == 0 {
                w.append_null(4)?
            } else {
                w.append_i32(4, (i % 500) as i32)?
            }
            w.begin(5)?;
            for tag in &tags[..i % 3] {
                w.append_str(6, tag)?;
            }
            w.end(5)?;
            w.begin(7)?;
            w.append_f64(8, i as f64 * 0.5)?;
            w.append_f64(9, -(i as f64))?;
            w.end(7)?;
            w.end_row()?;
        }
        next = end;
        *seen_stats.lock().expect("stats lock") = w.stats();
        Ok(if end == total { Step::End } else { Step::Batch })
    };
    let stream = WriterStream::new(writer, fill).into_ffi();

    let start = Instant::now();
    let reader = RecordBatchStreamReader::try_new(stream)?;
    let (mut rows, mut batches, mut checksum, mut nulls) = (0usize, 0usize, 0i64, 0usize);
    for batch in reader {
        let batch = batch?;
        let ids = batch.column(0).as_primitive::<Int64Type>();
        checksum = checksum.wrapping_add(ids.values().iter().sum::<i64>());
        nulls += batch.column(4).null_count();
        rows += batch.num_rows();
        batches += 1;
        // The batch is released here, before the next one is pulled.
    }
    let secs = start.elapsed().as_secs_f64();
    let s = *stats.lock().expect("stats lock");
    let expected: i64 = (0..total as i64).sum();
    println!("quiver demo: {rows} rows in {batches} batches through the C Stream into arrow-rs");
    println!("  schema: {SCHEMA}");
    println!("  {:.2} s, {:.1} M rows/s", secs, rows as f64 / secs / 1e6);
    println!(
        "  writer (after the last fill): {} batches, {} buffers reused, {} buffers allocated, {} bytes allocated, {} bytes retained",
        s.batches, s.buffers_reused, s.buffers_allocated, s.bytes_allocated, s.bytes_retained
    );
    println!("  live exported arrays after the stream: {}", quiver::live_arrays());
    if rows != total || checksum != expected || nulls != total.div_ceil(10) {
        return Err(format!("wrong data: {rows} rows, checksum {checksum} (expected {expected}), {nulls} nulls").into());
    }
    println!("  data checked: ids sum to {checksum}, {nulls} null quantities");
    Ok(())
}
