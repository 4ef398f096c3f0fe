//! The C ABI (docs/design.md §6): one file per C object. Every `extern "C"` function
//! checks its pointers before use and catches panics; errors are errno values
//! with a message naming the call, the node and the problem.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::QuiverError;

pub mod options;
pub mod schema;
pub mod stream;
pub mod writer;

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

pub(crate) fn c_string(message: &str) -> CString {
    CString::new(message.replace('\0', "\\0")).expect("NULs replaced")
}

/// Records `message` as this thread's last error.
pub(crate) fn set_thread_error(message: &str) {
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c_string(message)));
}

/// Records `e` as this thread's last error and returns its errno.
pub(crate) fn fail(e: QuiverError) -> c_int {
    set_thread_error(e.message());
    e.errno()
}

pub(crate) fn null_arg(call: &str, arg: &str) -> c_int {
    fail(QuiverError::invalid(format!("{call}: {arg} is NULL")))
}

/// Runs `f` with panics caught; a panic becomes `ENOTRECOVERABLE`.
pub(crate) fn guard(call: &str, f: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(rc) => rc,
        Err(panic) => {
            set_thread_error(&format!("{call}: panic caught: {}", crate::stream::panic_message(&panic)));
            libc::ENOTRECOVERABLE
        }
    }
}

/// Message of the last failure on this thread of a call that had no writer
/// yet (e.g. `quiver_writer_new`, `quiver_schema_parse`); every failing call
/// also sets it. NULL if none. Valid until the next failing call on this
/// thread. Ownership: the string belongs to the library; do not free it.
#[no_mangle]
pub extern "C" fn quiver_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |m| m.as_ptr()))
}

/// The crate version, e.g. "0.1.0". Ownership: a static string; do not free it.
#[no_mangle]
pub extern "C" fn quiver_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Number of `ArrowArray` structs this process got from quiver (batches from
/// `quiver_writer_finish` and stream `get_next`, and each of their children
/// and dictionaries, counted separately) whose `release` has not run yet.
/// Zero once a consumer has released everything. Ownership: nothing to free.
#[no_mangle]
pub extern "C" fn quiver_live_arrays() -> i64 {
    crate::export::live_arrays()
}
