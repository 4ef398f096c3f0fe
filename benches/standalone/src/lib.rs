//! Endless C streams of `a: int32, b: int64, c: float64, s: utf8` (8192-row
//! batches, half nulls), from quiver or from arrow-rs builders: the same
//! producers as benches/stream.rs, for consumers outside Rust
//! (benches/peers/stream_pyarrow.py).

#[allow(dead_code)]
#[path = "../../common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../../common/stream_producers.rs"]
mod producers;

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
