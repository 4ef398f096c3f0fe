//! The C boundary: every `extern "C"` function of the crate and every
//! callback it hands out runs its body through [`enter`], or, for calls that
//! write through a writer, [`enter_writer`] / [`enter_writer_fast`], or, for
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
use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{ErrorCode, QuiverError, Result};
use crate::ffi::set_thread_error;
use crate::ffi::writer::QuiverWriter;
use crate::writer::ArrowWriter;

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
fn null(call: &str, arg: &str) -> QuiverError {
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
fn record_on_thread(e: &QuiverError) -> c_int {
    set_thread_error(e.message());
    e.errno()
}

/// The boundary of a call that writes through `w`: `w` checked for NULL,
/// a poisoned writer refused, `body` run on its `ArrowWriter` with panics
/// caught (a panic poisons the writer), errors recorded on the writer and
/// the thread. Inlined into each call: the common case is two tests and
/// `body` inside the boundary.
#[inline(always)]
pub(crate) fn enter_writer(
    call: &'static str,
    w: *mut QuiverWriter,
    body: impl FnOnce(&mut ArrowWriter) -> Result<()>,
) -> c_int {
    // SAFETY: non-NULL `w` is a writer made by quiver_writer_new (or handed
    // to a fill callback), used from one thread at a time.
    let Some(qw) = (unsafe { w.as_mut() }) else {
        return record_on_thread(&null(call, "w"));
    };
    if qw.status.flagged() {
        return enter_flagged(call, qw, body);
    }
    let status = &mut qw.status;
    let writer = &mut qw.writer;
    guarded(status, || body(writer).map(|()| 0), |s, e| s.fail(&e), |s, panic| s.panicked(call, panic))
}

/// A row-path call: `fast` (the writer's inlined fast path, which returns
/// false having changed nothing when it does not apply) inside the boundary,
/// else `full` through [`enter_writer`], out of line. Only the fast path is
/// inlined into each call: two tests, `fast`, and a cold call for a panic.
#[inline(always)]
pub(crate) fn enter_writer_fast(
    call: &'static str,
    w: *mut QuiverWriter,
    fast: impl FnOnce(&mut ArrowWriter) -> bool,
    full: impl FnOnce(&mut ArrowWriter) -> Result<()>,
) -> c_int {
    // SAFETY: as in enter_writer.
    if let Some(qw) = unsafe { w.as_mut() } {
        if !qw.status.flagged() {
            let writer = &mut qw.writer;
            // The failure paths take `w` itself, which the call keeps in a
            // register anyway: nothing is set up for them on the fast path.
            let done = guarded(
                w,
                || Ok(fast(writer).then_some(0)),
                // SAFETY: `fast` returned (or unwound), so nothing else
                // borrows the writer behind `w`.
                |w, e| Some(unsafe { (*w).status.fail(&e) }),
                // SAFETY: as above.
                |w, panic| Some(unsafe { (*w).status.panicked(call, panic) }),
            );
            if let Some(rc) = done {
                return rc;
            }
        }
    }
    enter_writer_out_of_line(call, w, full)
}

#[inline(never)]
fn enter_writer_out_of_line(
    call: &'static str,
    w: *mut QuiverWriter,
    full: impl FnOnce(&mut ArrowWriter) -> Result<()>,
) -> c_int {
    enter_writer(call, w, full)
}

/// [`enter_writer`] for a poisoned writer (or, with the `test-hooks`
/// feature, an injected panic).
#[cold]
#[inline(never)]
fn enter_flagged(
    call: &'static str,
    qw: &mut QuiverWriter,
    body: impl FnOnce(&mut ArrowWriter) -> Result<()>,
) -> c_int {
    if qw.status.poisoned {
        let e = QuiverError::new(
            ErrorCode::Poisoned,
            format!("{call}: the writer is poisoned by an earlier panic; free it"),
        );
        return qw.status.fail(&e);
    }
    #[cfg(feature = "test-hooks")]
    let inject = std::mem::take(&mut qw.status.panic_next);
    #[cfg(not(feature = "test-hooks"))]
    let inject = false;
    let status = &mut qw.status;
    let writer = &mut qw.writer;
    let body = || {
        if inject {
            panic!("injected panic (tests of the panic boundary)");
        }
        body(writer).map(|()| 0)
    };
    guarded(status, body, |s, e| s.fail(&e), |s, panic| s.panicked(call, panic))
}
