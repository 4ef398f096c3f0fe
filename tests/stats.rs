//! The writer's counters add up (issue 12 item 3): `bytes_allocated` counts
//! every byte of capacity the writer's buffers take, growth during a batch
//! included, so that what it holds (`bytes_retained`) never exceeds it.
//!
//! With `retain = 1` and a consumer that drops each batch before the next
//! one starts, every buffer is reused, the ring holds exactly the last
//! batch's buffers, and so `bytes_retained == bytes_allocated` after every
//! batch, whatever the batch sizes. With batches held, new buffers come in
//! and `bytes_retained <= bytes_allocated`.

mod all_types;

use std::sync::Arc;

use all_types::{all_types_batch, all_types_schema, write_all_types_row};
use arrow_array::{Array, BinaryArray, RecordBatch};
use quiver::{ArrowWriter, WriterOptions};

/// Rows of the batches, growing and shrinking.
const SIZES: [usize; 9] = [1, 16, 700, 3, 2500, 0, 40, 9000, 5];

fn options(retain: usize) -> WriterOptions {
    WriterOptions { batch_rows: 1024, retain, ..WriterOptions::default() }
}

#[derive(Clone, Copy, Debug)]
enum Path {
    Rows,
    Columns,
}

fn write_batch(w: &mut ArrowWriter, path: Path, rows: usize, seed: u64) -> RecordBatch {
    match path {
        Path::Rows => {
            for i in 0..rows {
                write_all_types_row(w, i, seed, true);
            }
        }
        Path::Columns => {
            let b = all_types_batch(rows, seed, true, WriterOptions::default());
            for (f, col) in b.schema().fields().iter().zip(b.columns()) {
                let node = w.column_node(f.name()).unwrap();
                w.write_array(node, col.as_ref()).unwrap();
            }
        }
    }
    w.finish().unwrap()
}

#[test]
fn bytes_allocated_counts_growth_so_retained_equals_allocated_when_everything_is_reused() {
    for path in [Path::Rows, Path::Columns] {
        let mut w = ArrowWriter::create(all_types_schema(), options(1)).unwrap();
        for (k, &rows) in SIZES.iter().enumerate() {
            let b = write_batch(&mut w, path, rows, k as u64);
            assert_eq!(b.num_rows(), rows);
            drop(b);
            let s = w.stats();
            assert_eq!(
                s.bytes_retained, s.bytes_allocated,
                "{path:?}, batch {k} ({rows} rows): every buffer is reused, so what is held is all that was allocated: {s:?}"
            );
            if k > 0 {
                assert_eq!(s.buffers_allocated, w.stats().buffers_allocated);
            }
        }
        let s = w.stats();
        assert!(s.buffers_reused > 0, "{s:?}");
    }
}

#[test]
fn bytes_retained_never_exceeds_bytes_allocated_when_batches_are_held() {
    for path in [Path::Rows, Path::Columns] {
        for retain in [0, 1, 3] {
            let mut w = ArrowWriter::create(all_types_schema(), options(retain)).unwrap();
            let mut held = Vec::new();
            let mut last_allocated = 0;
            for (k, &rows) in SIZES.iter().enumerate() {
                let b = write_batch(&mut w, path, rows, k as u64);
                // Hold every other batch.
                if k % 2 == 0 {
                    held.push(b);
                }
                let s = w.stats();
                assert!(s.bytes_retained <= s.bytes_allocated, "{path:?} retain {retain} batch {k}: {s:?}");
                assert!(s.bytes_allocated >= last_allocated, "{path:?}: bytes_allocated went down: {s:?}");
                last_allocated = s.bytes_allocated;
                // Every byte a held batch points to was allocated by the writer.
                let held_bytes: usize = held
                    .iter()
                    .flat_map(|b| b.columns().iter().map(|c| c.to_data().get_slice_memory_size().unwrap()))
                    .sum();
                assert!(held_bytes as u64 <= s.bytes_allocated, "{path:?} batch {k}: {held_bytes} held > {s:?}");
            }
        }
    }
}

/// The report's example: a 16-row `binary not null` batch holding 64 KB.
#[test]
fn a_batch_of_large_values_counts_the_bytes_it_took() {
    let schema = Arc::new(quiver::parse_schema("b: binary not null").unwrap());
    for path in [Path::Rows, Path::Columns] {
        let mut w =
            ArrowWriter::create(schema.clone(), WriterOptions { batch_rows: 16, ..WriterOptions::default() }).unwrap();
        let value = vec![7u8; 4096];
        match path {
            Path::Rows => {
                for _ in 0..16 {
                    w.append_bytes(0, &value).unwrap();
                    w.end_row().unwrap();
                }
            }
            Path::Columns => {
                let a = BinaryArray::from_iter_values(std::iter::repeat_n(&value[..], 16));
                w.write_array(0, &a).unwrap();
            }
        }
        let b = w.finish().unwrap();
        assert_eq!(b.column(0).to_data().buffers()[1].len(), 65536);
        drop(b);
        let s = w.stats();
        assert!(s.bytes_allocated >= 65536 + 17 * 4, "{path:?}: {s:?}");
        assert_eq!(s.bytes_allocated, s.bytes_retained, "{path:?}: {s:?}");
    }
}
