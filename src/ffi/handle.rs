//! `QuiverWriter`, the C handle of a writer: the writer, what the boundary
//! keeps beside it (its last error, whether a panic poisoned it), and the
//! boundary of every call made through it (`enter_writer`,
//! `enter_writer_fast`), built on [`boundary`](super::boundary)'s `guarded`.

use std::any::Any;
use std::ffi::{c_int, CString};

use crate::error::{ErrorCode, QuiverError, Result};
use crate::ffi::boundary::{c_string, guarded, null, panicked, record_on_thread, set_thread_error};
use crate::writer::ArrowWriter;

/// A writer (opaque). Not thread-safe: use one writer from one thread at a
/// time. Batches it has exported may be released on any thread.
pub struct QuiverWriter {
    pub(crate) writer: ArrowWriter,
    pub(crate) status: Status,
}

/// What the C boundary keeps of a writer besides the writer itself.
#[derive(Default)]
pub(crate) struct Status {
    pub(crate) last_error: Option<CString>,
    pub(crate) poisoned: bool,
    /// Fault injection for tests of the panic boundary.
    #[cfg(feature = "test-hooks")]
    pub(crate) panic_next: bool,
}

impl Status {
    /// Whether a call must take the boundary's cold path.
    #[inline(always)]
    pub(crate) fn flagged(&self) -> bool {
        #[cfg(feature = "test-hooks")]
        return self.poisoned || self.panic_next;
        #[cfg(not(feature = "test-hooks"))]
        return self.poisoned;
    }

    /// Records a failed call on the writer and the thread; returns its errno.
    #[cold]
    #[inline(never)]
    pub(crate) fn fail(&mut self, e: &QuiverError) -> c_int {
        self.last_error = Some(c_string(e.message()));
        set_thread_error(e.message());
        e.errno()
    }

    /// Records a panic caught in `call` and poisons the writer; returns
    /// `ENOTRECOVERABLE`.
    #[cold]
    #[inline(never)]
    pub(crate) fn panicked(&mut self, call: &str, panic: Box<dyn Any + Send>) -> c_int {
        self.poisoned = true;
        let e = panicked(call, panic);
        self.fail(&QuiverError::new(e.code(), format!("{}; the writer is poisoned", e.message())))
    }
}

impl QuiverWriter {
    pub(crate) fn new(writer: ArrowWriter) -> Self {
        QuiverWriter { writer, status: Status::default() }
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.status.poisoned
    }

    pub(crate) fn last_error_message(&self) -> Option<String> {
        self.status.last_error.as_ref().map(|m| m.to_string_lossy().into_owned())
    }
}

/// Makes the next call on `w` panic inside its panic boundary: how tests
/// reach the boundary and the poisoned state without a bug to trigger. Not
/// part of the C API; built only with the `test-hooks` feature.
///
/// # Safety
/// `w` is NULL or a live writer from `quiver_writer_new`, not in use by
/// another call.
#[cfg(feature = "test-hooks")]
pub unsafe fn inject_panic_for_tests(w: *mut QuiverWriter) {
    // SAFETY: per the contract.
    if let Some(qw) = unsafe { w.as_mut() } {
        qw.status.panic_next = true;
    }
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
