//! The buffer life cycle seen by consumers (docs/design.md §2, §3): reuse when
//! released, new memory when held, the retain ring, and ownership over the
//! C Data Interface (children moved out, releases on other threads, the
//! stream released before its batches).

mod all_types;

use std::sync::{Arc, Mutex};

use all_types::*;
use arrow_array::ffi::from_ffi_and_data_type;
use arrow_array::ffi_stream::RecordBatchStreamReader;
use arrow_array::{cast::AsArray, types::Int64Type, Array, RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use quiver::ffi::abi::ArrowArray;
use quiver::{export_array, ArrowWriter, Step, WriterOptions, WriterStats, WriterStream};

const SCHEMA: &str = "id: int64 not null, v: int32, s: utf8, l: list<int32>, st: struct<a: float64, b: utf8>";

fn writer(options: WriterOptions) -> ArrowWriter {
    ArrowWriter::from_text(SCHEMA, options).unwrap()
}

/// Writes `rows` rows whose values depend on `batch`.
fn write_rows(w: &mut ArrowWriter, batch: usize, rows: usize) {
    for i in 0..rows {
        let k = (batch * 1000 + i) as i64;
        w.append_i64(0, k).unwrap();
        if i % 3 == 0 {
            w.append_null(1).unwrap()
        } else {
            w.append_i32(1, k as i32).unwrap()
        }
        w.append_str(2, &format!("s{}", k % 97)).unwrap();
        w.begin(3).unwrap();
        for j in 0..(i % 4) {
            w.append_i32(4, j as i32).unwrap();
        }
        w.end(3).unwrap();
        w.begin(5).unwrap();
        w.append_f64(6, k as f64).unwrap();
        w.append_str(7, "b").unwrap();
        w.end(5).unwrap();
        w.end_row().unwrap();
    }
}

fn check_batch(b: &RecordBatch, batch: usize, rows: usize) {
    validate(b);
    assert_eq!(b.num_rows(), rows);
    let ids = b.column(0).as_primitive::<Int64Type>();
    for i in 0..rows {
        assert_eq!(ids.value(i), (batch * 1000 + i) as i64, "batch {batch} row {i}");
    }
    let s = b.column(2).as_string::<i32>();
    assert_eq!(s.value(rows - 1), format!("s{}", (batch * 1000 + rows - 1) % 97));
}

#[test]
fn released_batches_are_reused_from_the_second_batch_on() {
    let mut w = writer(WriterOptions { batch_rows: 100, ..Default::default() });
    let mut first: Option<Vec<usize>> = None;
    let mut allocated_after_first = 0;
    for batch in 0..6 {
        write_rows(&mut w, batch, 100);
        let b = w.finish().unwrap();
        check_batch(&b, batch, 100);
        let addrs = buffer_addresses(&b);
        match &first {
            None => {
                first = Some(addrs);
                allocated_after_first = w.stats().buffers_allocated;
            }
            Some(f) => {
                assert_eq!(&addrs, f, "batch {batch}: same buffer addresses as batch 0");
                assert_eq!(w.stats().buffers_allocated, allocated_after_first, "batch {batch}: no new buffers");
            }
        }
        drop(b);
    }
    let s = w.stats();
    assert_eq!(s.batches, 6);
    assert!(s.buffers_reused >= 5 * allocated_after_first, "{s:?}");
    assert!(s.bytes_retained > 0);
}

#[test]
fn held_batches_stay_intact_and_get_new_memory_until_released() {
    let mut w = writer(WriterOptions { batch_rows: 64, ..Default::default() });
    write_rows(&mut w, 0, 64);
    let held = w.finish().unwrap();
    let held_copy = deep_copy(&held);
    let held_addrs = buffer_addresses(&held);
    let allocated = w.stats().buffers_allocated;
    let mut later = Vec::new();
    for batch in 1..4 {
        write_rows(&mut w, batch, 64);
        let b = w.finish().unwrap();
        check_batch(&b, batch, 64);
        let addrs = buffer_addresses(&b);
        assert!(addrs.iter().all(|a| !held_addrs.contains(a)), "batch {batch} reuses memory of the held batch");
        later.push(b);
        // Each consumer pattern: keep the latest too, release the older ones.
        if later.len() > 1 {
            later.remove(0);
        }
        assert_eq!(held, held_copy, "the held batch changed while batch {batch} was written");
    }
    assert!(w.stats().buffers_allocated > allocated, "held batches force new buffers");
    // Release everything: reuse resumes from the retain ring.
    drop(held);
    drop(later);
    let before = w.stats();
    write_rows(&mut w, 9, 64);
    let b = w.finish().unwrap();
    check_batch(&b, 9, 64);
    let after = w.stats();
    assert_eq!(after.buffers_allocated, before.buffers_allocated, "{before:?} -> {after:?}");
    assert!(after.buffers_reused > before.buffers_reused);
}

#[test]
fn a_consumer_holding_one_batch_until_the_next_reaches_steady_state() {
    let mut w = writer(WriterOptions { batch_rows: 50, retain: 3, ..Default::default() });
    let mut previous: Option<RecordBatch> = None;
    let mut allocated = Vec::new();
    for batch in 0..8 {
        write_rows(&mut w, batch, 50);
        let b = w.finish().unwrap();
        check_batch(&b, batch, 50);
        if let Some(p) = previous.take() {
            check_batch(&p, batch - 1, 50);
        }
        previous = Some(b);
        allocated.push(w.stats().buffers_allocated);
    }
    assert!(allocated[1] > allocated[0], "the second batch needs new buffers while the first is held");
    assert!(allocated[2..].iter().all(|&a| a == allocated[1]), "steady state from the third batch: {allocated:?}");
}

#[test]
fn retain_ring_bounds_what_the_writer_keeps() {
    let mut w = writer(WriterOptions { batch_rows: 40, retain: 2, ..Default::default() });
    let mut held = Vec::new();
    let mut per_batch = 0;
    for batch in 0..10 {
        write_rows(&mut w, batch, 40);
        held.push(w.finish().unwrap());
        if batch == 0 {
            per_batch = w.stats().bytes_retained;
        }
        assert!(w.stats().bytes_retained <= 2 * per_batch + 1024, "batch {batch}: {:?}", w.stats());
    }
    for (batch, b) in held.iter().enumerate() {
        check_batch(b, batch, 40);
    }
}

#[test]
fn recycling_off_allocates_every_batch() {
    let mut w = writer(WriterOptions { batch_rows: 10, recycle: false, ..Default::default() });
    let mut last = 0;
    for batch in 0..3 {
        write_rows(&mut w, batch, 10);
        let b = w.finish().unwrap();
        check_batch(&b, batch, 10);
        drop(b);
        let s = w.stats();
        assert!(s.buffers_allocated > last);
        assert_eq!(s.buffers_reused, 0);
        assert_eq!(s.bytes_retained, 0);
        last = s.buffers_allocated;
    }
}

/// A stream of `batches` batches of `rows` rows; the writer's stats after
/// each fill are pushed to `stats`.
fn stream(
    batches: usize,
    rows: usize,
    stats: Arc<Mutex<Vec<WriterStats>>>,
) -> WriterStream<impl FnMut(&mut ArrowWriter, usize) -> quiver::Result<Step> + Send> {
    let mut next = 0;
    WriterStream::new(writer(WriterOptions { batch_rows: rows, ..Default::default() }), move |w, max_rows| {
        assert_eq!(max_rows, rows);
        if next == batches {
            return Ok(Step::End);
        }
        write_rows(w, next, rows);
        next += 1;
        stats.lock().unwrap().push(w.stats());
        Ok(Step::Batch)
    })
}

#[test]
fn c_stream_imported_by_arrow_rs_reuses_released_batches() {
    let stats = Arc::new(Mutex::new(Vec::new()));
    let ffi = stream(6, 128, stats.clone()).into_ffi();
    let reader = RecordBatchStreamReader::try_new(ffi).unwrap();
    let mut first = None;
    for (batch, b) in reader.enumerate() {
        let b = b.unwrap();
        check_batch(&b, batch, 128);
        let addrs = buffer_addresses(&b);
        match &first {
            None => first = Some(addrs),
            Some(f) => assert_eq!(&addrs, f, "batch {batch}: imported buffers are the recycled ones"),
        }
        drop(b); // releases the imported ArrowArray
    }
    let stats = stats.lock().unwrap();
    assert_eq!(stats.len(), 6);
    assert!(stats.windows(2).all(|w| w[1].buffers_allocated == w[0].buffers_allocated), "{stats:?}");
    assert_eq!(quiver_live(), 0);
}

#[test]
fn c_stream_consumer_holding_batches_gets_new_memory() {
    let stats = Arc::new(Mutex::new(Vec::new()));
    let reader = RecordBatchStreamReader::try_new(stream(5, 32, stats.clone()).into_ffi()).unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let copies: Vec<RecordBatch> = batches.iter().map(deep_copy).collect();
    let mut seen = std::collections::HashSet::new();
    for (batch, b) in batches.iter().enumerate() {
        check_batch(b, batch, 32);
        assert_eq!(b, &copies[batch]);
        for a in buffer_addresses(b) {
            assert!(seen.insert(a), "batch {batch} shares a buffer with an earlier held batch");
        }
    }
    let stats = stats.lock().unwrap();
    assert!(stats.windows(2).all(|w| w[1].buffers_allocated > w[0].buffers_allocated));
}

/// The arrays this test's thread exported that are not released yet (tests
/// run in parallel: the process-wide count is every test's).
fn quiver_live() -> i64 {
    quiver::live_arrays_of_this_thread()
}

/// Exports a finished batch as the C Data Interface struct.
fn export(b: RecordBatch) -> FFI_ArrowArray {
    export_array(StructArray::from(b).into())
}

/// Moves child `i` out of an exported struct array (the consumer's move:
/// bitwise copy, then mark the original released).
unsafe fn move_child_out(parent: &mut FFI_ArrowArray, i: usize) -> FFI_ArrowArray {
    let raw = ArrowArray::from_ffi_mut(parent);
    // SAFETY: an exported struct array with at least i + 1 children.
    unsafe {
        let child = *(*raw).children.add(i);
        FFI_ArrowArray::from_raw(child.cast())
    }
}

#[test]
fn child_moved_out_outlives_its_parent_and_blocks_only_its_own_reuse() {
    for parent_first in [true, false] {
        let mut w = writer(WriterOptions { batch_rows: 20, ..Default::default() });
        write_rows(&mut w, 0, 20);
        let b0 = w.finish().unwrap();
        let addrs0 = buffer_addresses(&b0);
        let s_type = b0.schema().field(2).data_type().clone();
        let mut parent = Some(export(b0));
        // SAFETY: an exported struct array of 5 columns.
        let child = unsafe { move_child_out(parent.as_mut().unwrap(), 2) };
        assert_eq!(quiver_live(), EXPORTED_PER_BATCH);
        if parent_first {
            parent = None; // releases the parent; the moved child stays
            assert_eq!(quiver_live(), 1);
        }
        // The writer writes the next batch while the child is held.
        write_rows(&mut w, 1, 20);
        let b1 = w.finish().unwrap();
        check_batch(&b1, 1, 20);
        let addrs1 = buffer_addresses(&b1);
        let col2_b1: Vec<usize> = buffer_addresses_of(b1.column(2));
        assert!(col2_b1.iter().all(|a| !addrs0.contains(a)), "the held child's buffers were reused");
        if parent_first {
            // Everything but column 2 was released and is reused.
            let col0_b1 = buffer_addresses_of(b1.column(0));
            assert!(col0_b1.iter().all(|a| addrs0.contains(a)), "released column 0 not reused");
        }
        // The child's values are intact.
        // SAFETY: the moved-out child, of the type of column 2.
        let data = unsafe { from_ffi_and_data_type(child, s_type) }.unwrap();
        let s = arrow_array::StringArray::from(data);
        for i in 0..20 {
            assert_eq!(s.value(i), format!("s{}", i % 97));
        }
        drop(s); // releases the child
        if !parent_first {
            assert_eq!(quiver_live(), EXPORTED_PER_BATCH - 1);
        }
        drop(parent);
        drop(b1);
        assert_eq!(quiver_live(), 0);
        // Nothing holds anything now: the next batch reuses the first batch's memory.
        write_rows(&mut w, 2, 20);
        let b2 = w.finish().unwrap();
        check_batch(&b2, 2, 20);
        let addrs2 = buffer_addresses(&b2);
        assert!(addrs2.iter().all(|a| addrs0.contains(a) || addrs1.contains(a)));
        let _ = addrs1;
    }
}

/// The struct array, its 5 columns, the list's child and the struct's 2
/// children: 9 exported arrays.
const EXPORTED_PER_BATCH: i64 = 9;

fn buffer_addresses_of(a: &dyn Array) -> Vec<usize> {
    let batch = RecordBatch::try_from_iter(vec![("x", arrow_array::make_array(a.to_data()))]).unwrap();
    buffer_addresses(&batch)
}

#[test]
fn releases_on_other_threads_while_the_writer_writes() {
    let mut w = writer(WriterOptions { batch_rows: 30, ..Default::default() });
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, usize, FFI_ArrowArray)>(2);
    let consumer = std::thread::spawn(move || {
        let schema = arrow_schema::DataType::Struct(writer(WriterOptions::default()).schema().fields().clone());
        let mut n = 0;
        for (batch, rows, array) in rx {
            // SAFETY: an exported batch of this schema, moved to this thread.
            let data = unsafe { from_ffi_and_data_type(array, schema.clone()) }.unwrap();
            let b = RecordBatch::from(StructArray::from(data));
            check_batch(&b, batch, rows);
            drop(b); // released on this thread
            n += 1;
        }
        n
    });
    for batch in 0..500 {
        write_rows(&mut w, batch, 30);
        tx.send((batch, 30, export(w.finish().unwrap()))).unwrap();
    }
    drop(tx);
    assert_eq!(consumer.join().unwrap(), 500);
    assert!(w.stats().buffers_reused > 0);
    // Released on the consumer's thread, counted back on the exporting one.
    assert_eq!(quiver_live(), 0);
    // Each buffer was reused only when released: values were checked above.
}

#[test]
fn stream_released_before_its_batches_leaves_them_valid() {
    let stats = Arc::new(Mutex::new(Vec::new()));
    let mut reader = RecordBatchStreamReader::try_new(stream(3, 16, stats).into_ffi()).unwrap();
    let b0 = reader.next().unwrap().unwrap();
    let b1 = reader.next().unwrap().unwrap();
    drop(reader); // releases the stream and its writer
    check_batch(&b0, 0, 16);
    check_batch(&b1, 1, 16);
    drop(b0);
    drop(b1);
    assert_eq!(quiver_live(), 0);
}

/// `export_array` of arrays quiver did not write (`export_array` is public):
/// for every data offset 0..=9 and null buffer offset 0..=9 (equal, or the
/// null buffer's own, as `ArrayDataBuilder::nulls` allows), with nulls and
/// without, the exported bitmap holds element `i`'s bit at `offset + i`,
/// the import reads the same values and nulls, and an array without a
/// null (a slice's null buffer of all ones included) exports no bitmap;
/// the null type exports no buffer and its length as its null count, a
/// dictionary array its values as the dictionary.
#[test]
fn exported_bitmaps_follow_the_data_offset() {
    use arrow_array::{Int32Array, NullArray};
    use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
    use arrow_data::ArrayDataBuilder;
    use arrow_schema::DataType;

    let len = 21;
    for data_offset in 0..10usize {
        for nulls_offset in 0..10usize {
            for pattern in 0..3u32 {
                let valid = |i: usize| match pattern {
                    0 => true,
                    1 => !(i * 7 + data_offset).is_multiple_of(3),
                    _ => i % 2 == 1,
                };
                let values: Vec<i32> = (0..data_offset + len).map(|i| i as i32 * 11 - 5).collect();
                let bits: Vec<bool> =
                    (0..nulls_offset + len).map(|i| i < nulls_offset || valid(i - nulls_offset)).collect();
                let nulls = NullBuffer::new(BooleanBuffer::from(bits).slice(nulls_offset, len));
                assert_eq!(nulls.offset(), nulls_offset);
                let data = ArrayDataBuilder::new(DataType::Int32)
                    .len(len)
                    .offset(data_offset)
                    .add_buffer(Buffer::from_vec(values))
                    .nulls(Some(nulls))
                    .build()
                    .unwrap();
                let want = Int32Array::from(data.clone());
                let mut out = export_array(data);
                let raw = ArrowArray::from_ffi_mut(&mut out);
                // SAFETY: just exported: an int32 array of two buffers.
                let (offset, bitmap) = unsafe { ((*raw).offset as usize, *(*raw).buffers as *const u8) };
                assert_eq!(offset, data_offset);
                let case = format!("data offset {data_offset}, null buffer offset {nulls_offset}, pattern {pattern}");
                if pattern == 0 {
                    assert!(bitmap.is_null(), "{case}: no null, so no bitmap");
                } else {
                    for i in 0..len {
                        let at = offset + i;
                        // SAFETY: the bitmap covers offset + length bits.
                        let bit = unsafe { *bitmap.add(at / 8) } >> (at % 8) & 1 == 1;
                        assert_eq!(bit, valid(i), "{case}: element {i}");
                    }
                }
                // SAFETY: an exported int32 array.
                let got = unsafe { from_ffi_and_data_type(out, DataType::Int32) }.unwrap();
                let got = Int32Array::from(got);
                assert_eq!(got, want, "{case}");
                assert_eq!(got.null_count(), (0..len).filter(|&i| !valid(i)).count(), "{case}");
            }
        }
    }
    // A slice past the only null keeps a null buffer of all ones (arrow's
    // `ArrayData::slice` does not drop it): no bitmap either.
    let sliced = Int32Array::from(vec![None, Some(1), Some(2), Some(3)]).into_data().slice(1, 3);
    assert_eq!(sliced.nulls().map(|n| n.null_count()), Some(0));
    let mut out = export_array(sliced);
    // SAFETY: just exported: an int32 array of two buffers.
    assert!(unsafe { (*(*ArrowArray::from_ffi_mut(&mut out)).buffers).is_null() }, "a slice without nulls: no bitmap");
    // SAFETY: an exported int32 array.
    let got = Int32Array::from(unsafe { from_ffi_and_data_type(out, DataType::Int32) }.unwrap());
    assert_eq!(got, Int32Array::from(vec![1, 2, 3]));
    // The null type: no buffers, every element null.
    let mut out = export_array(NullArray::new(5).into_data());
    // SAFETY: just exported.
    let (n_buffers, null_count) = unsafe {
        let raw = ArrowArray::from_ffi_mut(&mut out);
        ((*raw).n_buffers, (*raw).null_count)
    };
    assert_eq!((n_buffers, null_count), (0, 5), "a null array: no buffers, 5 nulls");
    // A dictionary array: its values as the dictionary, not as a child.
    let dict: arrow_array::DictionaryArray<arrow_array::types::Int8Type> =
        vec![Some("a"), None, Some("b"), Some("a")].into_iter().collect();
    let mut out = export_array(dict.to_data());
    // SAFETY: just exported.
    let (n_children, has_dictionary) = unsafe {
        let raw = ArrowArray::from_ffi_mut(&mut out);
        ((*raw).n_children, !(*raw).dictionary.is_null())
    };
    assert_eq!((n_children, has_dictionary), (0, true), "a dictionary array: no child, a dictionary");
    // SAFETY: an exported dictionary array of this type.
    let got = unsafe { from_ffi_and_data_type(out, dict.data_type().clone()) }.unwrap();
    assert_eq!(arrow_array::make_array(got).as_ref(), &dict as &dyn Array);
}
