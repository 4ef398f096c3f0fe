//! The C ABI (docs/design.md §6): one file per C object. Every `extern "C"`
//! function and every callback handed to C goes through the boundary of
//! `boundary`: pointer checks, panics caught, errno values with a message
//! `"<call>: <problem>"`. [`abi`] mirrors the Arrow C structs.

use std::ffi::c_char;

pub mod abi;
pub(crate) mod boundary;
pub(crate) mod handle;
pub mod options;
pub mod records;
pub mod schema;
pub mod stream;
pub mod writer;

/// Message of the last failure on this thread of a call that had no writer
/// yet (e.g. `quiver_writer_new`, `quiver_schema_parse`); every failing call
/// also sets it. NULL if none. Valid until the next failing call on this
/// thread. Ownership: the string belongs to the library; do not free it.
#[no_mangle]
pub extern "C" fn quiver_last_error() -> *const c_char {
    boundary::enter("quiver_last_error", || Ok(boundary::thread_error()))
}

/// The crate version, e.g. "0.1.0". Ownership: a static string; do not free it.
#[no_mangle]
pub extern "C" fn quiver_version() -> *const c_char {
    boundary::enter("quiver_version", || Ok(concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()))
}

/// Number of `ArrowArray` structs this process got from quiver (batches from
/// `quiver_writer_finish` and stream `get_next`, and each of their children
/// and dictionaries, counted separately) whose `release` has not run yet.
/// Zero once a consumer has released everything. Ownership: nothing to free.
#[no_mangle]
pub extern "C" fn quiver_live_arrays() -> i64 {
    boundary::enter("quiver_live_arrays", || Ok(crate::export::live_arrays()))
}
