//! Threads and memory bounds.
//!
//! `consumers_release_concurrently_with_the_writer`: one writer thread makes
//! 100,000 small batches and exports them; two consumer threads hold a few
//! each, move children out and hand them to the other consumer, and verify
//! every batch's and child's values right before releasing it. Any corruption
//! means the writer reused memory someone still held.
//!
//! `retained_bytes_stay_within_the_ring` and
//! `dropping_the_writer_with_batches_outstanding`: memory bounds.

#[path = "reliability/exported.rs"]
mod exported;

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema};

use exported::{borrow_import, column_cells, render_exported, take_child};
use quiver::{
    export_array, live_arrays, live_arrays_of_this_thread, parse_schema, ArrowWriter, Step, WriterOptions, WriterStream,
};

const SCHEMA: &str = "id: int64 not null, s: utf8, l: list<int32>, p: struct<x: float64, y: int8>";
const ROWS: i64 = 4;

fn schema() -> Schema {
    parse_schema(SCHEMA).unwrap()
}

fn struct_type() -> DataType {
    DataType::Struct(schema().fields().clone())
}

/// Cells of row `k` (over all batches).
fn expected(k: i64) -> Vec<String> {
    let s = if k % 5 == 0 { "null".into() } else { format!("{:?}", format!("v{k}")) };
    let items: Vec<String> = (0..k % 3).map(|j| (k as i32 + j as i32).to_string()).collect();
    let l = if k % 11 == 0 { "null".into() } else { format!("[{}]", items.join(", ")) };
    let p = if k % 7 == 0 { "null".into() } else { format!("{{{:?}, {}}}", k as f64, k as i8) };
    vec![k.to_string(), s, l, p]
}

fn write_batch(w: &mut ArrowWriter, b: i64) -> quiver::Result<()> {
    for r in 0..ROWS {
        let k = b * ROWS + r;
        w.append_i64(0, k)?;
        if k % 5 == 0 {
            w.append_null(1)?
        } else {
            w.append_str(1, &format!("v{k}"))?
        }
        if k % 11 == 0 {
            w.append_null(2)?
        } else {
            w.begin(2)?;
            for j in 0..k % 3 {
                w.append_i32(3, k as i32 + j as i32)?;
            }
            w.end(2)?;
        }
        if k % 7 == 0 {
            w.append_null(4)?
        } else {
            w.begin(4)?;
            w.append_f64(5, k as f64)?;
            w.append_i8(6, k as i8)?;
            w.end(4)?;
        }
        w.end_row()?;
    }
    Ok(())
}

/// What a consumer holds: a whole batch, or a column moved out of batch `b`.
enum Held {
    Batch { b: i64, array: FFI_ArrowArray, moved: Vec<usize> },
    Child { b: i64, col: usize, array: FFI_ArrowArray },
}

// SAFETY: exported arrays may be released on any thread (C Data Interface).
unsafe impl Send for Held {}

fn verify(h: &mut Held, types: &[DataType]) {
    match h {
        Held::Batch { b, array, moved } => {
            let rows: Vec<Vec<String>> = (0..ROWS).map(|r| expected(*b * ROWS + r)).collect();
            if moved.is_empty() {
                assert_eq!(render_exported(array, &struct_type()), rows, "batch {b}: held memory changed");
            } else {
                assert_eq!(array.len() as i64, ROWS);
                for (col, ty) in types.iter().enumerate() {
                    if moved.contains(&col) {
                        assert!(!exported::child_in_place(array, col));
                        continue;
                    }
                    let data = exported::borrow_child(array, col, ty);
                    check_column(&data, *b, col);
                }
            }
        }
        Held::Child { b, col, array } => {
            let data = borrow_import(array, &types[*col]);
            check_column(&data, *b, *col);
        }
    }
}

fn check_column(data: &ArrayData, b: i64, col: usize) {
    data.validate_full().expect("child passes validate_full");
    let a = arrow_array::make_array(data.clone());
    let want: Vec<String> = (0..ROWS).map(|r| expected(b * ROWS + r)[col].clone()).collect();
    assert_eq!(column_cells(a.as_ref()), want, "batch {b} column {col}: held memory changed");
}

fn consumer(rx: Receiver<Held>, to_other: Option<SyncSender<Held>>, hold: usize) -> (u64, u64) {
    let types: Vec<DataType> = schema().fields().iter().map(|f| f.data_type().clone()).collect();
    let mut held: VecDeque<Held> = VecDeque::new();
    let (mut batches, mut children) = (0, 0);
    let mut release = |mut h: Held| {
        verify(&mut h, &types);
        match &h {
            Held::Batch { .. } => batches += 1,
            Held::Child { .. } => children += 1,
        }
        drop(h); // release, on this thread
    };
    for mut h in rx {
        if let (Held::Batch { b, array, moved }, Some(tx)) = (&mut h, &to_other) {
            // Every third batch: move two columns out and give them to the
            // other consumer, which releases them whenever it gets to them.
            if *b % 3 == 0 {
                for col in [1, 2] {
                    let child = take_child(array, col);
                    moved.push(col);
                    tx.send(Held::Child { b: *b, col, array: child }).unwrap();
                }
            }
        }
        held.push_back(h);
        // Hold a varying number, so some releases come before the writer's
        // next batch and some long after.
        let b = match held.back() {
            Some(Held::Batch { b, .. }) | Some(Held::Child { b, .. }) => *b,
            None => 0,
        };
        let keep = (b as usize * 7) % (hold + 1);
        while held.len() > keep {
            release(held.pop_front().unwrap());
        }
    }
    for h in held {
        release(h);
    }
    (batches, children)
}

#[test]
fn consumers_release_concurrently_with_the_writer() {
    let total: i64 = std::env::var("QUIVER_STRESS_BATCHES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let live_before = live_arrays_of_this_thread();
    let (tx_a, rx_a) = sync_channel::<Held>(8);
    let (tx_b, rx_b) = sync_channel::<Held>(64);
    let tx_b_for_a = tx_b.clone();
    let a = std::thread::spawn(move || consumer(rx_a, Some(tx_b_for_a), 4));
    let b = std::thread::spawn(move || consumer(rx_b, None, 6));
    let opts = WriterOptions { batch_rows: ROWS as usize, ..WriterOptions::default() };
    let mut w = ArrowWriter::create(Arc::new(schema()), opts).unwrap();
    for i in 0..total {
        write_batch(&mut w, i).unwrap();
        let batch = w.finish().unwrap();
        let array = export_array(StructArray::from(batch).into());
        let h = Held::Batch { b: i, array, moved: Vec::new() };
        if i % 2 == 0 {
            tx_a.send(h).unwrap()
        } else {
            tx_b.send(h).unwrap()
        }
    }
    let stats = w.stats();
    drop(tx_a);
    let (a_batches, a_children) = a.join().expect("consumer a found no corruption");
    drop(tx_b);
    let (b_batches, b_children) = b.join().expect("consumer b found no corruption");
    assert_eq!(a_batches + b_batches, total as u64, "every batch verified and released");
    // Consumer a gets the even batches and moves 2 columns out of every third.
    assert_eq!(a_children + b_children, 2 * ((total + 5) / 6) as u64, "moved-out children verified and released");
    assert_eq!(stats.batches, total as u64);
    assert!(stats.buffers_reused > 0, "reuse happened: {stats:?}");
    eprintln!("stress: {total} batches, {} children moved out, {stats:?}", a_children + b_children);
    assert_eq!(live_arrays_of_this_thread(), live_before);
}

/// Capacity in bytes of every buffer of `data` and its children.
fn bytes_of(data: &ArrayData) -> u64 {
    let own: u64 = data.buffers().iter().map(|b| b.capacity() as u64).sum();
    let nulls = data.nulls().map_or(0, |n| n.buffer().capacity() as u64);
    own + nulls + data.child_data().iter().map(bytes_of).sum::<u64>()
}

/// Bytes of one batch as the writer holds it: its exported buffers, plus
/// the validity bitmap of every nullable node, which the writer keeps (and
/// retains) even when a batch has no null there and exports none.
fn batch_bytes(b: &RecordBatch, batch_rows: usize) -> u64 {
    fn nullable(f: &arrow_schema::Field) -> u64 {
        let own = f.is_nullable() as u64;
        own + match f.data_type() {
            DataType::List(c) => nullable(c),
            DataType::Struct(cs) => cs.iter().map(|c| nullable(c)).sum(),
            _ => 0,
        }
    }
    let bitmaps: u64 = b.schema().fields().iter().map(|f| nullable(f)).sum();
    let bitmap_bytes = (batch_rows.div_ceil(8) as u64).next_multiple_of(64);
    b.columns().iter().map(|c| bytes_of(&c.to_data())).sum::<u64>() + bitmaps * bitmap_bytes
}

#[test]
fn retained_bytes_stay_within_the_ring() {
    for retain in [0usize, 1, 3, 5] {
        let opts = WriterOptions { batch_rows: 64, retain, ..WriterOptions::default() };
        let mut w = ArrowWriter::create(Arc::new(schema()), opts).unwrap();
        let mut held: VecDeque<RecordBatch> = VecDeque::new();
        let mut max_batch = 0u64;
        let hold = 10;
        for i in 0..200i64 {
            // 16 batches of 4 rows each, then 64 rows: sizes vary.
            for r in 0..if i % 5 == 0 { 16 } else { 1 } {
                write_batch(&mut w, i * 16 + r).unwrap();
            }
            let b = w.finish().unwrap();
            max_batch = max_batch.max(batch_bytes(&b, 64));
            held.push_back(b);
            // The consumer holds `hold` batches at a time, in bursts.
            if held.len() > hold || i % 17 == 0 {
                let n = if i % 17 == 0 { held.len() } else { 1 };
                for _ in 0..n {
                    held.pop_front();
                }
            }
            let retained = w.stats().bytes_retained;
            assert!(
                retained <= retain as u64 * max_batch,
                "retain {retain}: {retained} bytes retained > {retain} x {max_batch} per-batch bytes"
            );
            if retain > 0 && i > 0 {
                assert!(retained > 0, "the ring keeps the last batches");
            }
        }
        for b in &held {
            assert_eq!(b.num_rows() as i64 % ROWS, 0);
        }
        let s = w.stats();
        if retain > 0 {
            assert!(s.buffers_reused > 0, "retain {retain}: {s:?}");
        } else {
            assert_eq!(s.buffers_reused, 0, "nothing retained, nothing reused");
        }
    }
}

#[test]
fn dropping_the_writer_with_batches_outstanding() {
    let live_before = live_arrays_of_this_thread();
    let types: Vec<DataType> = schema().fields().iter().map(|f| f.data_type().clone()).collect();
    // A writer: finish 6 batches, keep them, drop the writer.
    let mut w = ArrowWriter::create(Arc::new(schema()), WriterOptions { batch_rows: 4, ..Default::default() }).unwrap();
    let mut held = Vec::new();
    for i in 0..6 {
        write_batch(&mut w, i).unwrap();
        held.push(Held::Batch {
            b: i,
            array: export_array(StructArray::from(w.finish().unwrap()).into()),
            moved: vec![],
        });
    }
    drop(w);
    // A stream: pull 6 batches, keep them and a moved-out child, release the stream.
    let mut next = 100i64;
    let stream = WriterStream::new(
        ArrowWriter::create(Arc::new(schema()), WriterOptions { batch_rows: 4, ..Default::default() }).unwrap(),
        move |w: &mut ArrowWriter, _| {
            write_batch(w, next)?;
            next += 1;
            Ok(Step::Batch)
        },
    );
    let mut s = stream.into_ffi();
    for i in 0..6 {
        let mut a = FFI_ArrowArray::empty();
        // SAFETY: live stream.
        assert_eq!(unsafe { (s.get_next().unwrap())(&mut s, &mut a) }, 0);
        let mut h = Held::Batch { b: 100 + i, array: a, moved: vec![] };
        if i == 2 {
            if let Held::Batch { array, moved, .. } = &mut h {
                let c = take_child(array, 3);
                moved.push(3);
                held.push(Held::Child { b: 100 + i, col: 3, array: c });
            }
        }
        held.push(h);
    }
    drop(s);
    // Each batch: the struct, 4 columns, the list's item, p's 2 children.
    assert_eq!(live_arrays_of_this_thread() - live_before, 12 * 8, "12 batches outstanding");
    // The process-wide count holds this thread's arrays and whatever other
    // tests running beside it hold, never fewer.
    assert!(live_arrays() >= 12 * 8, "process-wide count {} under this thread's 96", live_arrays());
    for mut h in held {
        verify(&mut h, &types);
    }
    assert_eq!(live_arrays_of_this_thread(), live_before, "everything released");
}
