//! Lazy validity on the row path: a node's validity bits are not written
//! value by value until its first null of the batch, when the bits owed
//! are set at once. The batches must be byte for byte those of the eager
//! path (a writer under a memory limit, which keeps every bit up to date
//! and takes no fast path): with no null, with the first null at every
//! position, with nulls after recycling (zeros under nulls, bits past the
//! length clear), after `abort_row`, and mixed with the column path.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_data::ArrayData;
use quiver::{ArrowWriter, WriterOptions};

const SCHEMA: &str = "i: int32, s: utf8, l: list<int64>, st: struct<a: float64, b: utf8>, d: decimal128(10, 2)";

/// The writer under test (lazy validity) and the eager reference.
fn writers(schema: &str, recycle: bool) -> (ArrowWriter, ArrowWriter) {
    let opts = WriterOptions { batch_rows: 256, recycle, ..WriterOptions::default() };
    let lazy = ArrowWriter::from_text(schema, opts.clone()).unwrap();
    let eager = ArrowWriter::from_text(schema, WriterOptions { memory_limit: 1 << 30, ..opts }).unwrap();
    (lazy, eager)
}

/// Row `r` of `SCHEMA`: column `c` is null when `null(r, c)`.
fn write_row(w: &mut ArrowWriter, r: usize, null: &dyn Fn(usize, usize) -> bool) {
    let v = r as i64 * 7 + 3;
    if null(r, 0) { w.append_null(0) } else { w.append_i32(0, v as i32) }.unwrap();
    if null(r, 1) { w.append_null(1) } else { w.append_bytes(1, format!("s{v}").as_bytes()) }.unwrap();
    if null(r, 2) {
        w.append_null(2).unwrap();
    } else {
        w.begin(2).unwrap();
        for k in 0..(r % 3) as i64 {
            if null(r, 3) && k == 1 { w.append_null(3) } else { w.append_i64(3, v + k) }.unwrap();
        }
        w.end(2).unwrap();
    }
    if null(r, 4) {
        w.append_null(4).unwrap();
    } else {
        w.begin(4).unwrap();
        if null(r, 5) { w.append_null(5) } else { w.append_f64(5, v as f64 / 4.0) }.unwrap();
        if null(r, 6) { w.append_null(6) } else { w.append_str(6, "b") }.unwrap();
        w.end(4).unwrap();
    }
    if null(r, 7) { w.append_null(7) } else { w.append_decimal(7, v as i128 * 100 - 1) }.unwrap();
    w.end_row().unwrap();
}

/// The readable bytes of `data` and its children (docs/design.md §2): the
/// validity bytes of its length, then each buffer as arrow hands it out.
fn bytes_of(data: &ArrayData, out: &mut Vec<Vec<u8>>) {
    out.push(match data.nulls() {
        Some(n) => n.buffer().as_slice()[..data.len().div_ceil(8)].to_vec(),
        None => b"no validity".to_vec(),
    });
    out.extend(data.buffers().iter().map(|b| b.as_slice().to_vec()));
    data.child_data().iter().for_each(|c| bytes_of(c, out));
}

fn batch_bytes(b: &RecordBatch) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
        bytes_of(&c.to_data(), &mut out);
    }
    out
}

/// Writes `rows` rows into both writers, finishes both, and checks the
/// batches are the same bytes; returns the lazy writer's batch.
fn same_batch(
    lazy: &mut ArrowWriter,
    eager: &mut ArrowWriter,
    rows: usize,
    null: &dyn Fn(usize, usize) -> bool,
) -> RecordBatch {
    for r in 0..rows {
        write_row(lazy, r, null);
        write_row(eager, r, null);
    }
    let (a, b) = (lazy.finish().unwrap(), eager.finish().unwrap());
    assert_eq!(a, b);
    assert_eq!(batch_bytes(&a), batch_bytes(&b));
    a
}

#[test]
fn no_nulls_gives_no_bitmap() {
    let (mut lazy, mut eager) = writers(SCHEMA, true);
    for _ in 0..3 {
        let b = same_batch(&mut lazy, &mut eager, 200, &|_, _| false);
        for c in b.columns() {
            assert_eq!(c.null_count(), 0);
            assert!(c.nulls().is_none());
        }
    }
}

#[test]
fn first_null_at_every_position() {
    // Every column (and nested child) gets its first null at row `first`,
    // then one every 5 rows; positions cross byte and word boundaries.
    for column in 0..8 {
        let (mut lazy, mut eager) = writers(SCHEMA, true);
        for first in 0..70 {
            let null = move |r: usize, c: usize| c == column && r >= first && (r - first).is_multiple_of(5);
            let b = same_batch(&mut lazy, &mut eager, 70, &null);
            let nulls: usize = b.columns().iter().map(|c| c.null_count()).sum();
            if column <= 2 || column == 4 || column == 7 {
                assert_eq!(nulls, (70 - first).div_ceil(5), "column {column}, first null {first}");
            }
        }
    }
}

#[test]
fn nulls_after_recycling() {
    // A batch full of nulls, released, then batches whose first null comes
    // late: the reused bitmaps and values must carry nothing over.
    let (mut lazy, mut eager) = writers(SCHEMA, true);
    drop(same_batch(&mut lazy, &mut eager, 250, &|r, _| r % 2 == 0));
    for first in [0, 1, 7, 8, 63, 64, 65, 199, 249] {
        let null = move |r: usize, c: usize| r >= first && (r + c).is_multiple_of(3);
        drop(same_batch(&mut lazy, &mut eager, 250, &null));
        drop(same_batch(&mut lazy, &mut eager, 250, &|_, _| false));
    }
    assert!(lazy.stats().buffers_reused > 0);
    // Without recycling too.
    let (mut lazy, mut eager) = writers(SCHEMA, false);
    for first in [0, 9, 100] {
        drop(same_batch(&mut lazy, &mut eager, 150, &move |r, c| r >= first && (r * 3 + c) % 4 == 0));
    }
}

#[test]
fn zeros_under_nulls_after_lazy_values() {
    let (mut w, _) = writers("i: int32, s: utf8", true);
    // Dirty buffers first: every value written, then released.
    for r in 0..100 {
        w.append_i32(0, -1).unwrap();
        w.append_str(1, "dirty").unwrap();
        w.end_row().unwrap();
        let _ = r;
    }
    drop(w.finish().unwrap());
    for r in 0..100 {
        if r >= 40 && r % 2 == 0 {
            w.append_null(0).unwrap();
            w.append_null(1).unwrap();
        } else {
            w.append_i32(0, r).unwrap();
            w.append_str(1, "x").unwrap();
        }
        w.end_row().unwrap();
    }
    let b = w.finish().unwrap();
    let ints = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
    let strs = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    for r in 0..100 {
        let null = r >= 40 && r % 2 == 0;
        assert_eq!(ints.is_null(r), null);
        assert_eq!(ints.values()[r], if null { 0 } else { r as i32 });
        assert_eq!(strs.is_null(r), null);
        assert_eq!(strs.value_length(r), if null { 0 } else { 1 });
    }
    assert_eq!(ints.null_count(), 30);
}

#[test]
fn abort_row_keeps_lazy_and_eager_state_right() {
    for null_in_aborted in [false, true] {
        let (mut lazy, mut eager) = writers(SCHEMA, true);
        for w in [&mut lazy, &mut eager] {
            for r in 0..20 {
                write_row(w, r, &|_, _| false);
            }
            // Half a row, then dropped: a null in it may end laziness.
            if null_in_aborted {
                w.append_null(0).unwrap();
            } else {
                w.append_i32(0, 99).unwrap();
            }
            w.append_str(1, "gone").unwrap();
            w.abort_row().unwrap();
            for r in 20..40 {
                write_row(w, r, &|r, c| r == 30 && c == 0);
            }
        }
        let (a, b) = (lazy.finish().unwrap(), eager.finish().unwrap());
        assert_eq!(batch_bytes(&a), batch_bytes(&b));
        assert_eq!(a.column(0).null_count(), 1);
        assert_eq!(a.column(1).null_count(), 0);
    }
}

#[test]
fn column_path_after_lazy_rows() {
    // Row path values (lazy), then a column copy with nulls: the owed bits
    // of the rows before it must be set.
    let (mut lazy, mut eager) = writers("i: int32", true);
    let with_nulls: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3), None]));
    let without: ArrayRef = Arc::new(Int32Array::from(vec![5, 6, 7]));
    for w in [&mut lazy, &mut eager] {
        for r in 0..13 {
            w.append_i32(0, r).unwrap();
            w.end_row().unwrap();
        }
        w.write_array(0, without.as_ref()).unwrap();
        w.write_array(0, with_nulls.as_ref()).unwrap();
        w.end_row().unwrap_err();
        for r in 0..5 {
            w.append_i32(0, r).unwrap();
            w.end_row().unwrap();
        }
    }
    let (a, b) = (lazy.finish().unwrap(), eager.finish().unwrap());
    assert_eq!(a.num_rows(), 13 + 3 + 4 + 5);
    assert_eq!(a.column(0).null_count(), 2);
    assert_eq!(batch_bytes(&a), batch_bytes(&b));
}

#[test]
fn null_struct_after_lazy_children() {
    let (mut lazy, mut eager) = writers("st: struct<a: int32, b: utf8>", true);
    for w in [&mut lazy, &mut eager] {
        for r in 0..30 {
            if r == 17 {
                w.append_null(0).unwrap();
            } else {
                w.begin(0).unwrap();
                w.append_i32(1, r).unwrap();
                w.append_str(2, "v").unwrap();
                w.end(0).unwrap();
            }
            w.end_row().unwrap();
        }
    }
    let (a, b) = (lazy.finish().unwrap(), eager.finish().unwrap());
    assert_eq!(a.column(0).null_count(), 1);
    assert_eq!(batch_bytes(&a), batch_bytes(&b));
}

/// The C appends of numbers write in place (no buffer grows on their
/// inlined path: a top-level column, struct field or list item with room)
/// and leave growth to the full path. Through the C API, with a row
/// capacity far below the rows written (so buffers grow mid-batch), nulls
/// from a late first null on, and recycled batches: the same bytes as the
/// eager Rust path.
#[test]
fn c_appends_in_place_and_growing() {
    use arrow_array::StructArray;
    use arrow_data::ffi::FFI_ArrowArray;
    use arrow_schema::ffi::FFI_ArrowSchema;
    use arrow_schema::DataType;
    use quiver::ffi::options::{quiver_options_default, QuiverOptions};
    use quiver::ffi::writer::*;

    const C_SCHEMA: &str = "i: int64, st: struct<a: int32, b: float64>, l: list<int32>, f: float32 not null";
    let schema = quiver::parse_schema(C_SCHEMA).unwrap();
    let ffi = FFI_ArrowSchema::try_from(&schema).unwrap();
    let mut opts = QuiverOptions { batch_rows: 0, recycle: false, retain: 0, validate_utf8: true };
    let mut w = std::ptr::null_mut();
    // SAFETY: valid pointers for the calls.
    unsafe {
        quiver_options_default(&mut opts);
        opts.batch_rows = 16;
        assert_eq!(quiver_writer_new(&ffi, &opts, &mut w), 0);
    }
    let mut eager = ArrowWriter::from_text(
        C_SCHEMA,
        WriterOptions { batch_rows: 16, memory_limit: 1 << 30, ..WriterOptions::default() },
    )
    .unwrap();
    for (batch, first) in [200usize, 0, 37, 1000, 5].into_iter().enumerate() {
        let null = |r: usize, c: usize| r >= first && (r + c).is_multiple_of(4);
        for r in 0..150usize {
            let v = (r * 31 + batch) as i64;
            // SAFETY: `w` is a live writer used by this test alone.
            unsafe {
                let c = |rc: i32| assert_eq!(rc, 0, "row {r}");
                c(if null(r, 0) { quiver_append_null(w, 0) } else { quiver_append_i64(w, 0, v) });
                c(quiver_begin(w, 1));
                c(if null(r, 2) { quiver_append_null(w, 2) } else { quiver_append_i32(w, 2, v as i32) });
                c(if null(r, 3) { quiver_append_null(w, 3) } else { quiver_append_f64(w, 3, v as f64) });
                c(quiver_end(w, 1));
                c(quiver_begin(w, 4));
                for k in 0..(r % 4) {
                    c(if null(r + k, 5) { quiver_append_null(w, 5) } else { quiver_append_i32(w, 5, k as i32) });
                }
                c(quiver_end(w, 4));
                c(quiver_append_f32(w, 6, v as f32));
                c(quiver_end_row(w));
            }
            let e = &mut eager;
            if null(r, 0) { e.append_null(0) } else { e.append_i64(0, v) }.unwrap();
            e.begin(1).unwrap();
            if null(r, 2) { e.append_null(2) } else { e.append_i32(2, v as i32) }.unwrap();
            if null(r, 3) { e.append_null(3) } else { e.append_f64(3, v as f64) }.unwrap();
            e.end(1).unwrap();
            e.begin(4).unwrap();
            for k in 0..(r % 4) {
                if null(r + k, 5) { e.append_null(5) } else { e.append_i32(5, k as i32) }.unwrap();
            }
            e.end(4).unwrap();
            e.append_f32(6, v as f32).unwrap();
            e.end_row().unwrap();
        }
        let mut out = FFI_ArrowArray::empty();
        // SAFETY: a live writer; `out` is ours.
        assert_eq!(unsafe { quiver_writer_finish(w, &mut out) }, 0);
        // SAFETY: quiver exported `out` with this schema's struct type.
        let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(out, DataType::Struct(schema.fields().clone())) }
            .unwrap();
        let from_c = RecordBatch::from(StructArray::from(data));
        let reference = eager.finish().unwrap();
        assert_eq!(from_c, reference, "batch {batch}");
        assert_eq!(batch_bytes(&from_c), batch_bytes(&reference), "batch {batch}");
    }
    // SAFETY: made by quiver_writer_new, freed once.
    unsafe { quiver_writer_free(w) };
}
