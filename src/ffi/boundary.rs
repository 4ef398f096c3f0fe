//! The C boundary: every `extern "C"` function of the crate and every
//! callback it hands out runs its body through [`enter`], or, for calls that
//! write through a writer, `enter_writer` / `enter_writer_fast` (src/ffi/handle.rs,
//! beside the writer's C handle, so that this module depends on no C object), or, for
//! a stream's `get_schema`, `get_next` and `get_last_error`, `enter_stream`
//! (src/stream.rs); all of them are [`guarded`] underneath. (The `release`
//! of exported arrays and streams goes through [`enter`].) They give every
//! call the same four things:
//!
//! - NULL checks of pointer arguments: [`arg`], [`arg_mut`], [`non_null`] and
//!   [`present`] (a callback) turn a NULL into `EINVAL` with the message
//!   `"<call>: <arg> is NULL"`;
//! - a caught panic: `ENOTRECOVERABLE`, message `"<call>: panic caught:
//!   <panic message>"`, and the writer of the call (if any) poisoned, so every
//!   later call on it returns `ENOTRECOVERABLE` too;
//! - one message format, `"<call>: <problem>"`, recorded where the caller
//!   reads it: the thread's `quiver_last_error`, and also the writer's
//!   `quiver_writer_last_error` for calls on a writer (the stream callbacks
//!   record theirs as the stream's `get_last_error`, in src/stream.rs);
//! - the value a refused call returns, by return type ([`Refused`]): the errno
//!   for `int`, -1 for `int64_t`, NULL for pointers, nothing for `void`.
//!
//! Calls that read a writer without changing it (`quiver_writer_rows`,
//! `quiver_writer_stats`, `quiver_writer_export_schema`,
//! `quiver_writer_last_error`) take `const QuiverWriter *` and go through
//! [`enter`]: a panic there cannot leave the writer half changed, so it is
//! reported and the writer is not poisoned. The calls that accept NULL as a
//! no-op (`quiver_writer_free`, `quiver_writer_last_error`,
//! `quiver_options_default`) test for it themselves, inside the boundary.
//!
//! One `extern "C"` function is not inside it: `keep` (src/ffi/writer/column.rs),
//! the `release` of the bitwise copy of a caller's array that
//! `quiver_write_array` hands to arrow-rs's importer. Only arrow-rs calls it,
//! from inside the boundary of `quiver_write_array`, and it only clears a
//! field of the copy.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{ErrorCode, QuiverError, Result};

/// What a call returns when it fails with errno `code` (a NULL argument, an
/// error, a caught panic).
pub(crate) trait Refused {
    fn refused(code: c_int) -> Self;
}

impl Refused for c_int {
    fn refused(code: c_int) -> Self {
        code
    }
}

impl Refused for i64 {
    fn refused(_: c_int) -> Self {
        -1
    }
}

impl Refused for () {
    fn refused(_: c_int) -> Self {}
}

impl Refused for *const c_char {
    fn refused(_: c_int) -> Self {
        std::ptr::null()
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// A caught panic as an error: `ENOTRECOVERABLE`, `"<call>: panic caught: <message>"`.
#[cold]
#[inline(never)]
pub(crate) fn panicked(call: &str, panic: Box<dyn Any + Send>) -> QuiverError {
    QuiverError::new(ErrorCode::Poisoned, format!("{call}: panic caught: {}", panic_message(&*panic)))
}

#[cold]
#[inline(never)]
pub(crate) fn null(call: &str, arg: &str) -> QuiverError {
    QuiverError::invalid(format!("{call}: {arg} is NULL"))
}

/// `Err` (EINVAL, `"<call>: <arg> is NULL"`) if `p` is NULL.
#[inline(always)]
pub(crate) fn non_null<T>(call: &str, arg: &str, p: *const T) -> Result<()> {
    if p.is_null() {
        return Err(null(call, arg));
    }
    Ok(())
}

/// The callback `f`; `Err` (as [`non_null`]) if it is NULL.
#[inline(always)]
pub(crate) fn present<F>(call: &str, arg: &str, f: Option<F>) -> Result<F> {
    f.ok_or_else(|| null(call, arg))
}

/// The caller's `*p`, borrowed for the call; `Err` if `p` is NULL.
///
/// # Safety
/// `p` is NULL or points to a live, readable `T` not written for the call.
#[inline(always)]
pub(crate) unsafe fn arg<'a, T>(call: &str, name: &str, p: *const T) -> Result<&'a T> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| null(call, name))
}

/// The caller's `*p`, borrowed mutably for the call; `Err` if `p` is NULL.
///
/// # Safety
/// `p` is NULL or points to a live `T` that nothing else uses during the call.
#[inline(always)]
pub(crate) unsafe fn arg_mut<'a, T>(call: &str, name: &str, p: *mut T) -> Result<&'a mut T> {
    // SAFETY: per the contract.
    unsafe { p.as_mut() }.ok_or_else(|| null(call, name))
}

/// The core of the boundary: runs `body` with panics caught; its error goes
/// to `on_error`, a caught panic to `on_panic` (kept apart so that the fast
/// path of a call carries no error value: a panic is a cold call with the
/// panic's box), each with `to`, where the failure is recorded; their
/// return is the call's.
#[inline(always)]
pub(crate) fn guarded<T, R>(
    to: T,
    body: impl FnOnce() -> Result<R>,
    on_error: impl FnOnce(T, QuiverError) -> R,
    on_panic: impl FnOnce(T, Box<dyn Any + Send>) -> R,
) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => on_error(to, e),
        Err(panic) => on_panic(to, panic),
    }
}

/// The boundary of a call that has no writer to record errors on (or only
/// reads one): an error or a caught panic becomes this thread's last error
/// and `R::refused(errno)`.
#[inline(always)]
pub(crate) fn enter<R: Refused>(call: &'static str, body: impl FnOnce() -> Result<R>) -> R {
    guarded(
        (),
        body,
        |(), e| R::refused(record_on_thread(&e)),
        |(), panic| R::refused(record_on_thread(&panicked(call, panic))),
    )
}

#[cold]
#[inline(never)]
pub(crate) fn record_on_thread(e: &QuiverError) -> c_int {
    set_thread_error(e.message());
    e.errno()
}

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// `message` as a C string (a NUL inside becomes `\0`).
pub(crate) fn c_string(message: &str) -> CString {
    CString::new(message.replace('\0', "\\0")).expect("NULs replaced")
}

/// Records `message` as this thread's last error.
pub(crate) fn set_thread_error(message: &str) {
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c_string(message)));
}

/// This thread's last error as a C string, or NULL: valid until the next
/// failing call on this thread.
pub(crate) fn thread_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |m| m.as_ptr()))
}
