//! The per-writer memory limit (`WriterOptions::memory_limit`): a call that
//! would take the writer past it is refused with `ENOMEM`, a message naming
//! the limit, and changes nothing — proven over the writer's types on both
//! paths against a reference writer without a limit that gets the same good
//! calls (byte-identical batches, `tests/exact`), then with the writer still
//! in use; and through the Rust and C streams.

mod exact;

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use arrow_array::ffi_stream::RecordBatchStreamReader;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};
use exact::assert_same_batch;
use quiver::ffi::writer::*;
use quiver::{ArrowWriter, ErrorCode, QuiverError, Result, Step, WriterOptions, WriterStream};

type Call = Box<dyn Fn(&mut ArrowWriter) -> Result<()>>;

/// The calls that write the value of row `i`.
type Value = fn(usize) -> Vec<Call>;

/// An input array of `n` rows.
type MakeArray<'a> = Box<dyn Fn(usize) -> ArrayRef + 'a>;

/// The types of column `x` the row-path cases run over, each with the calls
/// that write its value of row `i` (node 1; node 0 is `a: int64`).
fn cases() -> Vec<(&'static str, Value)> {
    fn one(f: impl Fn(&mut ArrowWriter) -> Result<()> + 'static) -> Vec<Call> {
        vec![Box::new(f)]
    }
    vec![
        ("bool", |i| one(move |w| w.append_bool(1, i % 3 == 0))),
        ("int8", |i| one(move |w| w.append_i8(1, i as i8))),
        ("int16", |i| one(move |w| w.append_i16(1, i as i16))),
        ("int32", |i| one(move |w| w.append_i32(1, i as i32))),
        ("int64", |i| one(move |w| w.append_i64(1, i as i64))),
        ("uint8", |i| one(move |w| w.append_u8(1, i as u8))),
        ("uint64", |i| one(move |w| w.append_u64(1, i as u64))),
        ("float32", |i| one(move |w| w.append_f32(1, i as f32))),
        ("float64", |i| one(move |w| w.append_f64(1, i as f64 / 3.0))),
        ("decimal32(5, 2)", |i| one(move |w| w.append_decimal(1, (i % 9999) as i128))),
        ("decimal128(38, 10)", |i| one(move |w| w.append_decimal(1, i as i128 * 1_000_003))),
        ("date32", |i| one(move |w| w.append_i32(1, i as i32))),
        ("timestamp(us)", |i| one(move |w| w.append_i64(1, i as i64 * 1000))),
        ("duration(ns)", |i| one(move |w| w.append_i64(1, i as i64))),
        ("utf8", |i| one(move |w| w.append_str(1, &"s".repeat(i % 40)))),
        ("large_utf8", |i| one(move |w| w.append_str(1, &"t".repeat(i % 40)))),
        ("binary", |i| one(move |w| w.append_bytes(1, &vec![i as u8; i % 40]))),
        ("large_binary", |i| one(move |w| w.append_bytes(1, &vec![7; i % 30]))),
        ("fixed_size_binary(3)", |i| one(move |w| w.append_bytes(1, &[i as u8, 1, 2]))),
        ("dictionary<int32, utf8>", |i| one(move |w| w.append_str(1, &format!("k{}", i % 50)))),
        ("run_end_encoded<int32, int64>", |i| one(move |w| w.append_i64(1, (i / 3) as i64))),
        ("list<int32>", |i| {
            let mut calls: Vec<Call> = vec![Box::new(|w| w.begin(1))];
            for j in 0..i % 5 {
                calls.push(Box::new(move |w| w.append_i32(2, (i + j) as i32)));
            }
            calls.push(Box::new(|w| w.end(1)));
            calls
        }),
        ("struct<p: int32, q: utf8>", |i| {
            vec![
                Box::new(|w| w.begin(1)),
                Box::new(move |w| w.append_i32(2, i as i32)),
                Box::new(move |w| if i % 4 == 0 { w.append_null(3) } else { w.append_str(3, "q") }),
                Box::new(|w| w.end(1)),
            ]
        }),
    ]
}

/// The calls of row `i`: `a`, then every third row a null `x`, else its value; `end_row`.
fn row(i: usize, value: Value) -> Vec<Call> {
    let mut calls: Vec<Call> = vec![Box::new(move |w| w.append_i64(0, i as i64))];
    if i % 3 == 2 {
        calls.push(Box::new(|w| w.append_null(1)));
    } else {
        calls.extend(value(i));
    }
    calls.push(Box::new(|w| w.end_row()));
    calls
}

fn check_refusal(e: &QuiverError, limit: usize) {
    assert_eq!(e.code(), ErrorCode::OutOfMemory, "{e}");
    assert_eq!(e.errno(), libc::ENOMEM);
    assert!(e.message().contains(&format!("memory limit of {limit} bytes")), "{e}");
    assert!(e.message().contains("this call needs"), "{e}");
}

fn limited(schema: &str, limit: usize) -> ArrowWriter {
    ArrowWriter::from_text(schema, WriterOptions { memory_limit: limit, ..WriterOptions::default() }).unwrap()
}

/// Row path: rows are written until a call is refused (mid-row or at a
/// value right after `begin`; `end_row` itself grows nothing); the refused
/// call leaves the writer as it was: with the limit lifted the same call
/// and the rest of the row go on, and the batch is byte-identical to the
/// reference's. Then the writer is used again under the limit.
#[test]
fn row_path_refusals_change_nothing_over_the_types() {
    let (mut refusals, mut mid_row) = (0, 0);
    for (ty, value) in cases() {
        let schema = format!("a: int64, x: {ty}");
        for limit in [1 << 12, 1 << 14] {
            let mut subject = limited(&schema, limit);
            let mut reference = ArrowWriter::from_text(&schema, WriterOptions::default()).unwrap();
            let mut refused = None;
            for i in 0..4000 {
                for (k, call) in row(i, value).into_iter().enumerate() {
                    if refused.is_none() {
                        let before = (subject.stats(), subject.memory_held());
                        if let Err(e) = call(&mut subject) {
                            check_refusal(&e, limit);
                            assert_eq!(
                                (subject.stats(), subject.memory_held()),
                                before,
                                "{ty}: the refusal changed the stats"
                            );
                            assert!(subject.memory_held() <= limit, "{ty}: held {}", subject.memory_held());
                            assert_eq!(subject.rows(), reference.rows(), "{ty}: committed rows changed");
                            refused = Some(i);
                            mid_row += usize::from(k > 0);
                            subject.set_memory_limit(0);
                            call(&mut subject).unwrap_or_else(|e| panic!("{ty}: after lifting the limit: {e}"));
                        }
                    } else {
                        call(&mut subject).unwrap();
                    }
                    call(&mut reference).unwrap();
                }
                if refused.is_some_and(|r| i >= r + 5) {
                    break;
                }
            }
            let r = refused.unwrap_or_else(|| panic!("{ty}: limit {limit} never reached"));
            refusals += 1;
            assert_same_batch(
                &subject.finish().unwrap(),
                &reference.finish().unwrap(),
                &format!("{ty} refused at {r}"),
            );
            let s = subject.stats();
            assert!(s.bytes_allocated >= s.bytes_retained, "{ty}: {s:?}");
            // Under the limit again: the writer goes on; a refusal drops the row.
            subject.set_memory_limit(limit);
            for i in 0..r.min(50) {
                let mut ok = true;
                for call in row(i, value) {
                    match call(&mut subject) {
                        Ok(()) => {}
                        Err(e) => {
                            check_refusal(&e, limit);
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    for call in row(i, value) {
                        call(&mut reference).unwrap();
                    }
                } else {
                    subject.abort_row().unwrap();
                }
            }
            assert_same_batch(&subject.finish().unwrap(), &reference.finish().unwrap(), &format!("{ty} after"));
        }
    }
    println!("{refusals} row-path refusals checked, {mid_row} of them mid-row");
    assert!(mid_row > refusals / 2, "{mid_row} of {refusals} mid-row");
}

/// A single value whose growth passes the limit is refused mid-row; the
/// row is then finished with a small value and `end_row`.
#[test]
fn a_big_value_mid_row_is_refused() {
    for ty in ["utf8", "large_utf8", "binary", "dictionary<int8, utf8>", "list<utf8>"] {
        let schema = format!("a: int64, x: {ty}");
        let mut w = limited(&schema, 1 << 16);
        let mut reference = ArrowWriter::from_text(&schema, WriterOptions::default()).unwrap();
        let leaf = w.node("x.item").unwrap_or(1);
        for w in [&mut w, &mut reference] {
            w.append_i64(0, 1).unwrap();
            if leaf != 1 {
                w.begin(1).unwrap();
            }
        }
        let held = w.memory_held();
        let e = w.append_str(leaf, &"z".repeat(1 << 17)).unwrap_err();
        check_refusal(&e, 1 << 16);
        assert_eq!(w.memory_held(), held, "{ty}: the refusal allocated");
        for w in [&mut w, &mut reference] {
            w.append_str(leaf, "small").unwrap();
            if leaf != 1 {
                w.end(1).unwrap();
            }
            w.end_row().unwrap();
        }
        assert_same_batch(&w.finish().unwrap(), &reference.finish().unwrap(), ty);
    }
}

/// Column path: `write_column` and `write_array` over the limit are refused
/// before writing; smaller writes then go through.
#[test]
fn column_path_refusals_change_nothing() {
    let list = |n: usize| -> ArrayRef {
        let values = Int32Array::from_iter_values(0..(n * 3) as i32);
        let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(3, n));
        Arc::new(ListArray::new(Arc::new(Field::new("item", DataType::Int32, true)), offsets, Arc::new(values), None))
    };
    let strings = |n: usize| -> ArrayRef { Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("v{i}")))) };
    let structs = |n: usize| -> ArrayRef {
        Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("p", DataType::Int64, true)),
                Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
            ),
            (Arc::new(Field::new("q", DataType::Utf8, true)), strings(n)),
        ]))
    };
    let ints = |n: usize| -> ArrayRef { Arc::new(Int64Array::from_iter_values(0..n as i64)) };
    let cases: Vec<(&str, MakeArray)> = vec![
        ("int64", Box::new(ints)),
        ("utf8", Box::new(strings)),
        ("list<int32>", Box::new(list)),
        ("struct<p: int64, q: utf8>", Box::new(structs)),
    ];
    let limit = 1 << 16;
    for (ty, make) in cases {
        let schema = format!("x: {ty}");
        let mut w = limited(&schema, limit);
        let mut reference = ArrowWriter::from_text(&schema, WriterOptions::default()).unwrap();
        let small = make(100);
        for w in [&mut w, &mut reference] {
            w.write_array(0, small.as_ref()).unwrap();
        }
        let (held, stats) = (w.memory_held(), w.stats());
        let e = w.write_array(0, make(1 << 14).as_ref()).unwrap_err();
        check_refusal(&e, limit);
        assert_eq!((w.memory_held(), w.stats(), w.rows()), (held, stats, 100), "{ty}");
        if ty == "int64" {
            let values: Vec<i64> = (0..1 << 14).collect();
            check_refusal(&w.write_column(0, &values, None).unwrap_err(), limit);
            w.write_column(0, &values[..10], None).unwrap();
            reference.write_column(0, &values[..10], None).unwrap();
        }
        // A small slice of a big array counts its own rows, children included.
        let big = make(1 << 16);
        for w in [&mut w, &mut reference] {
            w.write_array(0, small.as_ref()).unwrap();
            w.write_array(0, big.slice(1000, 20).as_ref()).unwrap_or_else(|e| panic!("{ty}: {e}"));
        }
        assert_same_batch(&w.finish().unwrap(), &reference.finish().unwrap(), ty);
        assert!(w.memory_held() <= limit);
    }
}

/// The retained buffers of earlier batches count; when dropping them makes
/// room the writer drops them instead of refusing.
#[test]
fn retained_buffers_count_and_are_dropped_to_make_room() {
    let mut w = limited("x: int64", 1 << 16);
    let values: Vec<i64> = (0..3000).collect();
    let mut kept = Vec::new();
    for _ in 0..2 {
        w.write_column(0, &values, None).unwrap();
        kept.push(w.finish().unwrap()); // held by the consumer: not reclaimable
    }
    // The values of both batches, and one validity bitmap (with no nulls the
    // batches do not use it, so each batch reclaims it).
    assert_eq!(w.stats().bytes_retained, 2 * 24000 + 384);
    // What is retained and a new 24000 bytes would pass 64 KiB:
    // the ring is dropped to make room.
    w.write_column(0, &values, None).unwrap();
    assert_eq!(w.stats().bytes_retained, 0);
    assert!(w.memory_held() <= 1 << 16);
    assert_eq!(w.finish().unwrap().num_rows(), 3000);
}

/// Rust stream: a fill that gets ENOMEM (here through `?`) with rows
/// committed ends the batch early; every row comes out once, in order.
#[test]
fn stream_fill_ending_the_batch_early() {
    let w = limited("id: int64, s: utf8", 1 << 14);
    let mut next = 0i64;
    let stream = WriterStream::new(w, move |w, max_rows| {
        while next < 5000 && w.rows() < max_rows {
            w.append_i64(0, next)?;
            w.append_str(1, &"x".repeat((next % 20) as usize))?;
            w.end_row()?;
            next += 1;
        }
        Ok(if next < 5000 { Step::Batch } else { Step::End })
    });
    let mut expect = 0i64;
    let mut batches = 0;
    for batch in stream {
        let batch = batch.unwrap();
        let ids = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        for id in ids.values() {
            assert_eq!(*id, expect);
            expect += 1;
        }
        batches += 1;
    }
    assert_eq!(expect, 5000);
    assert!(batches > 2, "the limit ended batches early: {batches}");
}

/// A fill whose first row does not fit fails the stream with ENOMEM.
#[test]
fn stream_fails_with_enomem_when_no_row_fits() {
    let w = limited("s: utf8", 1 << 12);
    let mut stream = WriterStream::new(w, |w, _| {
        w.append_str(0, &"x".repeat(1 << 13))?;
        w.end_row()?;
        Ok(Step::End)
    });
    let e = quiver::BatchSource::next_batch(&mut stream).unwrap().unwrap_err();
    assert_eq!(e.code(), ErrorCode::OutOfMemory, "{e}");
    assert!(e.message().contains("memory limit of 4096 bytes"), "{e}");
}

struct Fill {
    next: i64,
    total: i64,
}

unsafe extern "C" fn c_fill(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int {
    // SAFETY: `ctx` is the test's `Fill`; `w` the stream's writer.
    unsafe {
        let f = &mut *(ctx as *mut Fill);
        if f.next == 0 {
            assert_eq!(quiver_writer_set_memory_limit(w, 1 << 14), 0);
        }
        let mut rows = 0;
        while f.next < f.total && rows < max_rows {
            for rc in [quiver_append_i64(w, 0, f.next), quiver_append_i64(w, 1, f.next * 2), quiver_end_row(w)] {
                if rc != 0 {
                    return rc;
                }
            }
            f.next += 1;
            rows += 1;
        }
        0
    }
}

/// C stream: the callback returns the ENOMEM it got; the stream emits the
/// committed rows and asks for the rest.
#[test]
fn c_stream_fill_returning_enomem_ends_the_batch_early() {
    let schema =
        arrow_schema::Schema::new(vec![Field::new("a", DataType::Int64, true), Field::new("b", DataType::Int64, true)]);
    let ffi_schema = arrow_schema::ffi::FFI_ArrowSchema::try_from(&schema).unwrap();
    let mut fill = Fill { next: 0, total: 20_000 };
    let mut out = arrow_array::ffi_stream::FFI_ArrowArrayStream::empty();
    // SAFETY: valid pointers; `fill` outlives the stream.
    let rc = unsafe {
        quiver::ffi::stream::quiver_stream_new(
            &ffi_schema,
            std::ptr::null(),
            Some(c_fill),
            &mut fill as *mut Fill as *mut c_void,
            None,
            &mut out,
        )
    };
    assert_eq!(rc, 0);
    let reader = RecordBatchStreamReader::try_new(out).unwrap();
    let (mut expect, mut batches) = (0i64, 0);
    for batch in reader {
        let batch = batch.unwrap();
        let a = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        for v in a.values() {
            assert_eq!(*v, expect);
            expect += 1;
        }
        batches += 1;
    }
    assert_eq!(expect, 20_000);
    assert!(batches > 2, "{batches}");
}

/// The C setter refuses a negative limit.
#[test]
fn c_setter_refuses_a_negative_limit() {
    let schema = arrow_schema::Schema::new(vec![Field::new("a", DataType::Int64, true)]);
    let ffi_schema = arrow_schema::ffi::FFI_ArrowSchema::try_from(&schema).unwrap();
    let mut w = std::ptr::null_mut();
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(quiver_writer_new(&ffi_schema, std::ptr::null(), &mut w), 0);
        assert_eq!(quiver_writer_set_memory_limit(w, -1), libc::EINVAL);
        assert_eq!(quiver_writer_set_memory_limit(w, 1 << 20), 0);
        quiver_writer_free(w);
    }
}

/// Records (`write_records`) go through the column path: a call over the
/// limit is refused with ENOMEM, nothing written (the columns already
/// written are dropped again), and smaller calls go through.
#[test]
fn records_over_the_limit_are_refused() {
    use quiver::{Encoding, NullMark, RecordLayout};
    const STRIDE: usize = 16;
    let schema = Arc::new(quiver::parse_schema("a: int64, b: float64").unwrap());
    let mut layout = RecordLayout::new(schema.clone());
    layout.set(0, Encoding::Fixed { at: 0 }, NullMark::Never).unwrap();
    layout.set(1, Encoding::Fixed { at: 8 }, NullMark::Never).unwrap();
    let records = |n: usize| -> Vec<u8> {
        (0..n).flat_map(|i| (i as i64).to_le_bytes().into_iter().chain((i as f64).to_le_bytes())).collect()
    };
    let limit = 1 << 15;
    let opts = WriterOptions { memory_limit: limit, ..WriterOptions::default() };
    let mut w = ArrowWriter::create(schema.clone(), opts).unwrap();
    let mut reference = ArrowWriter::create(schema, WriterOptions::default()).unwrap();
    for w in [&mut w, &mut reference] {
        assert_eq!(layout.write_records(w, &records(100), STRIDE), Ok(100));
    }
    // 3000 more rows: column a (24800 bytes) fits, b would pass the limit.
    let e = layout.write_records(&mut w, &records(3000), STRIDE).unwrap_err();
    assert_eq!(e.written, 0);
    check_refusal(&e.error, limit);
    assert_eq!(w.rows(), 100);
    for w in [&mut w, &mut reference] {
        assert_eq!(layout.write_records(w, &records(10), STRIDE), Ok(10));
    }
    assert_same_batch(&w.finish().unwrap(), &reference.finish().unwrap(), "records");
}

/// A value's bytes count once (in the data buffer), so a value of half the
/// limit fits, on both paths; a second one does not (the data buffer would
/// double past the limit).
#[test]
fn a_value_of_half_the_limit_fits() {
    let limit = 1 << 22;
    let mut w = limited("s: utf8", limit);
    w.append_str(0, &"h".repeat(1 << 21)).unwrap();
    w.end_row().unwrap();
    w.write_array(0, &StringArray::from(vec!["k".repeat((1 << 21) - 64)])).unwrap_err();
    assert_eq!(w.finish().unwrap().num_rows(), 1);
    let mut w = limited("s: utf8", limit);
    w.write_array(0, &StringArray::from(vec!["k".repeat(1 << 21)])).unwrap();
    assert!(w.memory_held() <= limit);
}
