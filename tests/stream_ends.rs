//! How a C stream ends (docs/ffi.md, "What a consumer must do"): a fill that
//! writes no row and returns 0 ends the stream; the end is a released array
//! with return 0, repeated on every later call, and the fill is not called
//! again. `get_next(stream, NULL)` is refused with EINVAL and changes
//! nothing: the next `get_next` gets the batch it would have got.

use std::ffi::{c_int, c_void, CStr};
use std::ptr::null_mut;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, Int64Array, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Fields};
use quiver::ffi::stream::quiver_stream_new;
use quiver::ffi::writer::{quiver_append_i64, quiver_end_row, QuiverWriter};

/// Rows each call writes, by call number; then 0.
const PLAN: [i64; 3] = [3, 1, 2];

struct Ctx {
    calls: usize,
    next: i64,
}

unsafe extern "C" fn fill(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int {
    // SAFETY: the Ctx given to quiver_stream_new, alive for the test.
    let c = unsafe { &mut *(ctx as *mut Ctx) };
    let rows = PLAN.get(c.calls).copied().unwrap_or(0).min(max_rows);
    c.calls += 1;
    for _ in 0..rows {
        // SAFETY: the stream's writer, for the duration of the call.
        unsafe {
            assert_eq!(quiver_append_i64(w, 0, c.next), 0);
            assert_eq!(quiver_end_row(w), 0);
        }
        c.next += 1;
    }
    0
}

fn next(s: &mut FFI_ArrowArrayStream) -> (c_int, FFI_ArrowArray) {
    let mut a = FFI_ArrowArray::empty();
    // SAFETY: a live stream made by quiver.
    let rc = unsafe { (s.get_next().unwrap())(s, &mut a) };
    (rc, a)
}

fn values(a: FFI_ArrowArray) -> Vec<i64> {
    let ty = DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int64, false)]));
    // SAFETY: a batch exported by quiver with this type.
    let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(a, ty) }.unwrap();
    let s = StructArray::from(data);
    s.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()
}

#[test]
fn a_fill_writing_no_row_ends_the_stream_and_a_null_out_loses_no_batch() {
    let schema = FFI_ArrowSchema::try_from(&quiver::parse_schema("a: int64 not null").unwrap()).unwrap();
    let mut ctx = Ctx { calls: 0, next: 0 };
    let mut s = FFI_ArrowArrayStream::empty();
    // SAFETY: valid pointers; ctx outlives the stream (no release_ctx).
    let rc = unsafe {
        quiver_stream_new(&schema, std::ptr::null(), Some(fill), (&mut ctx as *mut Ctx).cast(), None, &mut s)
    };
    assert_eq!(rc, 0);
    let mut want = 0;
    for (k, &rows) in PLAN.iter().enumerate() {
        // A NULL out first: refused, nothing consumed, the fill not called.
        // SAFETY: a live stream; out deliberately NULL.
        let rc = unsafe { (s.get_next().unwrap())(&mut s, null_mut()) };
        assert_eq!(rc, libc::EINVAL);
        // SAFETY: as above; the message is the stream's.
        let msg = unsafe { CStr::from_ptr((s.get_last_error().unwrap())(&mut s)) }.to_string_lossy().into_owned();
        assert!(msg.contains("get_next: out is NULL"), "{msg}");
        assert_eq!(ctx.calls, k, "a refused get_next called the fill");
        let (rc, a) = next(&mut s);
        assert_eq!(rc, 0, "batch {k}");
        assert!(!a.is_released(), "batch {k} is a batch, not the end");
        assert_eq!(values(a), (want..want + rows).collect::<Vec<_>>(), "batch {k}");
        want += rows;
    }
    // The fill writes no row: the end, repeated, without calling the fill again.
    for _ in 0..3 {
        let (rc, a) = next(&mut s);
        assert_eq!(rc, 0);
        assert!(a.is_released(), "the end of the stream is a released array");
    }
    assert_eq!(ctx.calls, PLAN.len() + 1, "the fill is not called after the end");
    drop(s);
}
