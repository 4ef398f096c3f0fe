//! Endless C streams of `a: int32, b: int64, c: float64, s: utf8` (8192-row
//! batches, half nulls), from quiver or from arrow-rs builders: the same
//! producers as benches/stream.rs, for consumers outside Rust
//! (benches/peers/stream_pyarrow.py); and the recycling benchmark's data,
//! writers and producer-thread stream (`recycle`, used by the `recycle`
//! program and by benches/peers/recycle_pyarrow.py).

// common/mod.rs allows dead code itself.
#[path = "../../common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../../common/stream_producers.rs"]
mod producers;

pub mod recycle;

use std::sync::Arc;

use arrow::ffi_stream::FFI_ArrowArrayStream;

/// Writes a new stream into `out` (which must be valid for writes); the
/// caller must release it. `rows_path` != 0: quiver's row path / arrow-rs
/// append_value, else the column path / bulk builder calls.
///
/// # Safety
/// `out` points to writable memory for one `ArrowArrayStream`.
#[no_mangle]
pub unsafe extern "C" fn bench_quiver_stream(rows_path: i32, out: *mut FFI_ArrowArrayStream) {
    let s = producers::quiver_stream(producers::Cols::new(), rows_path != 0);
    // SAFETY: per the contract above.
    unsafe { std::ptr::write(out, s) };
}

/// As `bench_quiver_stream`, made by arrow-rs builders.
///
/// # Safety
/// As `bench_quiver_stream`.
#[no_mangle]
pub unsafe extern "C" fn bench_builder_stream(rows_path: i32, out: *mut FFI_ArrowArrayStream) {
    let s = producers::builder_stream(producers::Cols::new(), rows_path != 0);
    // SAFETY: per the contract above.
    unsafe { std::ptr::write(out, s) };
}

/// Writes into `out` a C stream of `batches` batches of `kind` (0: two
/// int64 columns, 1: large utf8 strings) whose largest buffer has `bytes`
/// bytes, written by a producer thread into a bounded queue of `depth`
/// batches (see the `recycle` module). Returns 0, or -1 for an unknown kind.
/// The caller owns the stream and must release it.
///
/// # Safety
/// `out` points to writable memory for one `ArrowArrayStream`.
#[no_mangle]
pub unsafe extern "C" fn bench_recycle_stream(
    kind: i32,
    bytes: u64,
    recycle: i32,
    retain: u32,
    batches: u64,
    depth: u32,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    let kind = match kind {
        0 => recycle::Kind::Int64,
        1 => recycle::Kind::Utf8,
        _ => return -1,
    };
    let rows = kind.rows(bytes as usize);
    let input = Arc::new(recycle::Input::new(kind, rows));
    let (s, _producer) =
        recycle::queue_stream(kind, input, rows, recycle != 0, retain as usize, batches as usize, 0, depth as usize);
    // SAFETY: per the contract above.
    unsafe { std::ptr::write(out, s) };
    0
}
