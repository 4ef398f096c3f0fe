//! Determinism (docs/design.md §2 rule 6): the readable bytes of a batch depend
//! only on the values written — never on what memory held before, never on
//! whether reuse happened. A global allocator fills every new (non-zeroed)
//! allocation with 0xA5 in "poison" mode and with zeros in "zero" mode; the
//! same batches must have the same bytes in both modes, through the row path
//! and the column path, in fresh writers, reused buffers and one long-lived
//! writer, with recycling on and off.

mod all_types;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use all_types::*;
use arrow_array::{make_array, Array, ArrayRef, RecordBatch};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use quiver::{ArrowWriter, WriterOptions};

static POISON: AtomicBool = AtomicBool::new(false);

struct FillingAllocator;

// SAFETY: every method forwards to the system allocator and only writes inside the block it returns.
unsafe impl GlobalAlloc for FillingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded to the system allocator with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let byte = if POISON.load(Ordering::Relaxed) { 0xA5 } else { 0 };
            // SAFETY: `p` is a new block of `layout.size()` bytes.
            unsafe { std::ptr::write_bytes(p, byte, layout.size()) };
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` and `layout` come from this allocator, which is the system one.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in dealloc.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() && new_size > layout.size() {
            let byte = if POISON.load(Ordering::Relaxed) { 0xA5 } else { 0 };
            // SAFETY: `q` is a block of `new_size` bytes; the bytes past the old size are new.
            unsafe { std::ptr::write_bytes(q.add(layout.size()), byte, new_size - layout.size()) };
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: FillingAllocator = FillingAllocator;

const ROWS: usize = 300;
const SEEDS: [u64; 4] = [1, 99, 12345, 7];

/// `batch` with extra nulls at the top-level positions `is_null` names,
/// keeping the values under them: the input of a bulk copy with non-zero
/// bytes under its nulls.
fn masked(batch: &RecordBatch) -> RecordBatch {
    let schema = batch.schema();
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .enumerate()
        .map(|(c, col)| {
            let field = schema.field(c);
            if c == 0 || !field.is_nullable() || field.data_type() == &arrow_schema::DataType::Null {
                return col.clone();
            }
            let valid = BooleanBuffer::collect_bool(col.len(), |i| !is_null(i, c) && col.is_valid(i));
            let data = col.to_data().into_builder().nulls(Some(NullBuffer::new(valid))).build().unwrap();
            make_array(data)
        })
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}

/// Every way of writing the batches of SEEDS, each as its readable bytes.
fn scenario(recycle: bool) -> Vec<(String, Vec<u8>)> {
    let options = WriterOptions { batch_rows: 256, recycle, ..Default::default() };
    let mut out = Vec::new();
    // One long-lived writer: reused buffers hold the previous batch's bytes.
    let mut long_lived = ArrowWriter::create(all_types_schema(), options.clone()).unwrap();
    let mut long_lived_columns = ArrowWriter::create(all_types_schema(), options.clone()).unwrap();
    for &seed in &SEEDS {
        for nulls in [false, true] {
            let fresh = all_types_batch(ROWS, seed, nulls, options.clone());
            validate(&fresh);
            out.push((format!("row/fresh/{seed}/{nulls}"), batch_bytes(&fresh)));
            for i in 0..ROWS {
                write_all_types_row(&mut long_lived, i, seed, nulls);
            }
            let reused = long_lived.finish().unwrap();
            validate(&reused);
            assert_eq!(
                batch_bytes(&reused),
                batch_bytes(&fresh),
                "row path, long-lived writer, seed {seed}, nulls {nulls}"
            );
            out.push((format!("row/long-lived/{seed}/{nulls}"), batch_bytes(&reused)));
            drop(reused);

            // Column path from an input with garbage under its nulls.
            let input =
                if nulls { masked(&all_types_batch(ROWS, seed, false, options.clone())) } else { fresh.clone() };
            let mut columns = ArrowWriter::create(all_types_schema(), options.clone()).unwrap();
            for target in [&mut columns, &mut long_lived_columns] {
                for (c, col) in input.columns().iter().enumerate() {
                    let node = target.column_node(input.schema().field(c).name()).unwrap();
                    target.write_array(node, col.as_ref()).unwrap();
                }
                let batch = target.finish().unwrap();
                validate(&batch);
                assert_eq!(
                    batch_bytes(&batch),
                    batch_bytes(&fresh),
                    "column path vs row path, seed {seed}, nulls {nulls}"
                );
                out.push((format!("column/{seed}/{nulls}"), batch_bytes(&batch)));
            }
            // Column path from native slices (fixed-width columns), nulls
            // given by a bitmap, garbage under them.
            let mut native = ArrowWriter::create(
                Arc::new(arrow_schema::Schema::new(vec![
                    arrow_schema::Field::new("x", arrow_schema::DataType::Int64, true),
                    arrow_schema::Field::new("y", arrow_schema::DataType::Float64, true),
                ])),
                options.clone(),
            )
            .unwrap();
            let xs: Vec<i64> = (0..ROWS as i64).map(|i| i * seed as i64 + 1).collect();
            let ys: Vec<f64> = xs.iter().map(|&x| x as f64 * 0.5).collect();
            let mut bits = vec![0u8; ROWS.div_ceil(8)];
            for i in 0..ROWS {
                if !(nulls && is_null(i, 1)) {
                    bits[i / 8] |= 1 << (i % 8);
                }
            }
            native.write_column(0, &xs, Some(&bits)).unwrap();
            native.write_column(1, &ys, Some(&bits)).unwrap();
            let batch = native.finish().unwrap();
            validate(&batch);
            for (c, col) in batch.columns().iter().enumerate() {
                let data = col.to_data();
                let values = &data.buffers()[0].as_slice()[..ROWS * 8];
                for i in 0..ROWS {
                    let slot = &values[i * 8..i * 8 + 8];
                    if col.is_null(i) {
                        assert_eq!(slot, &[0u8; 8], "column {c} row {i}: zero under null");
                    }
                }
            }
            out.push((format!("native/{seed}/{nulls}"), batch_bytes(&batch)));
        }
    }
    out
}

#[test]
fn batches_have_the_same_bytes_whatever_memory_held_before() {
    POISON.store(false, Ordering::SeqCst);
    let zeroed_on = scenario(true);
    let zeroed_off = scenario(false);
    POISON.store(true, Ordering::SeqCst);
    // Guard on the test itself: in poison mode new memory really is 0xA5.
    let probe: Vec<u8> = Vec::with_capacity(64);
    // SAFETY: reading the capacity of a fresh allocation as bytes; u8 has no invalid values.
    let fresh = unsafe { std::slice::from_raw_parts(probe.as_ptr(), 64) };
    assert!(fresh.iter().all(|&b| b == 0xA5), "the allocator does not poison");
    drop(probe);
    let poisoned_on = scenario(true);
    let poisoned_off = scenario(false);
    POISON.store(false, Ordering::SeqCst);
    assert!(zeroed_on.len() >= 40);
    for (((a, b), c), d) in zeroed_on.iter().zip(&zeroed_off).zip(&poisoned_on).zip(&poisoned_off) {
        assert_eq!(a.0, c.0);
        assert!(a.1 == c.1, "{}: bytes differ between zeroed and 0xA5-filled memory", a.0);
        assert!(a.1 == b.1, "{}: bytes differ between recycling on and off", a.0);
        assert!(c.1 == d.1, "{}: bytes differ between recycling on and off (0xA5 memory)", a.0);
    }
}
