//! Steady state of the batched record call: a batch written with
//! `write_records` makes no more allocations than the same batch written
//! with `write_column_bytes` from columns gathered beforehand (the layout's
//! scratch buffers are reused), for fixed-width columns with nulls; for a
//! utf8 column, its scratch is reused too: only a few small allocations of
//! the array header it lends to `write_array`, and no buffer (1 KiB or more).
//! Counted per thread by a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use quiver::{parse_schema, ArrowWriter, Encoding, NullMark, RecordLayout, WriterOptions};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    static BIG: Cell<u64> = const { Cell::new(0) };
}

fn count(size: usize) {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    if size >= 1024 {
        let _ = BIG.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            count(new_size);
        }
        // SAFETY: `ptr` and `layout` come from this allocator, the system one.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in realloc.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, allocations of 1 KiB or more) made by `f`.
fn counted(f: impl FnOnce()) -> (u64, u64) {
    let (a, b) = (ALLOCS.with(Cell::get), BIG.with(Cell::get));
    f();
    (ALLOCS.with(Cell::get) - a, BIG.with(Cell::get) - b)
}

const N: usize = 8192;
const STRIDE: usize = 32;

/// a: int32 @0, b: int64 @8, c: float64 @16, null bits @24 (bit k: column k).
fn records(seed: u64) -> Vec<u8> {
    let mut out = vec![0u8; N * STRIDE];
    let mut x = seed;
    for r in out.chunks_exact_mut(STRIDE) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r[0..4].copy_from_slice(&(x as i32).to_le_bytes());
        r[8..16].copy_from_slice(&(x as i64).to_le_bytes());
        r[16..24].copy_from_slice(&(x as f64).to_le_bytes());
        r[24] = (x >> 40) as u8 & 7;
    }
    out
}

#[test]
fn fixed_width_records_allocate_what_the_column_path_does() {
    let schema = Arc::new(parse_schema("a: int32, b: int64, c: float64").unwrap());
    let mut layout = RecordLayout::new(schema.clone());
    for (c, at) in [0, 8, 16].into_iter().enumerate() {
        layout.set(c, Encoding::Fixed { at }, NullMark::Bit { at: 24, bit: c }).unwrap();
    }
    let data = records(0x9E37_79B9_7F4A_7C15);
    // The same columns, gathered beforehand for the column path.
    let mut cols: Vec<Vec<u8>> = vec![Vec::new(); 3];
    let mut validity = vec![vec![0u8; N.div_ceil(8)]; 3];
    for (i, r) in data.chunks_exact(STRIDE).enumerate() {
        cols[0].extend_from_slice(&r[0..4]);
        cols[1].extend_from_slice(&r[8..16]);
        cols[2].extend_from_slice(&r[16..24]);
        for (c, v) in validity.iter_mut().enumerate() {
            if r[24] >> c & 1 == 0 {
                v[i / 8] |= 1 << (i % 8);
            }
        }
    }
    let mut by_records = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
    let mut by_columns = ArrowWriter::create(schema, WriterOptions::default()).unwrap();
    let mut per_batch = Vec::new();
    for batch in 0..12 {
        let r = counted(|| {
            assert_eq!(layout.write_records(&mut by_records, &data, STRIDE), Ok(N));
            drop(by_records.finish().unwrap());
        });
        let c = counted(|| {
            for (node, (v, bits)) in cols.iter().zip(&validity).enumerate() {
                by_columns.write_column_bytes(node, v, Some(bits), N).unwrap();
            }
            drop(by_columns.finish().unwrap());
        });
        if batch >= 4 {
            per_batch.push((r, c));
        }
    }
    for (r, c) in &per_batch {
        assert_eq!(r, c, "allocations per batch (all, >= 1 KiB): records {r:?}, columns {c:?}");
        assert_eq!(r.1, 0, "no buffer allocated per batch in steady state");
    }
    println!("per batch in steady state: {:?}", per_batch[0]);
}

#[test]
fn utf8_records_reuse_their_scratch() {
    let schema = Arc::new(parse_schema("id: int32 not null, s: utf8").unwrap());
    let mut layout = RecordLayout::new(schema.clone());
    layout.set(0, Encoding::Fixed { at: 0 }, NullMark::Never).unwrap();
    layout.set(1, Encoding::RelLen { offset_at: 4, len_at: 8 }, NullMark::Byte { at: 12 }).unwrap();
    let mut data = vec![0u8; N * STRIDE];
    for (i, r) in data.chunks_exact_mut(STRIDE).enumerate() {
        let text = format!("v{}", i % 1000);
        r[0..4].copy_from_slice(&(i as i32).to_le_bytes());
        r[4..8].copy_from_slice(&16u32.to_le_bytes());
        r[8..12].copy_from_slice(&(text.len() as u32).to_le_bytes());
        r[12] = (i % 3 == 0) as u8;
        r[16..16 + text.len()].copy_from_slice(text.as_bytes());
    }
    let mut w = ArrowWriter::create(schema, WriterOptions::default()).unwrap();
    for batch in 0..12 {
        let (all, big) = counted(|| {
            assert_eq!(layout.write_records(&mut w, &data, STRIDE), Ok(N));
            drop(w.finish().unwrap());
        });
        if batch >= 4 {
            assert_eq!(big, 0, "batch {batch}: {big} allocations of 1 KiB or more");
            assert!(all < 64, "batch {batch}: {all} allocations");
            if batch == 11 {
                println!("utf8 records, per batch in steady state: {all} allocations, none of 1 KiB or more");
            }
        }
    }
}
