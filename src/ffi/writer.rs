//! `QuiverWriter`: creation, errors, counters, batches. The row path is in
//! [`append`], the column path in [`column`](mod@column); both are re-exported here.

use std::ffi::{c_char, c_int, CStr};

use arrow_array::StructArray;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;

use crate::error::{QuiverError, Result};
use crate::export::export_array;
use crate::ffi::boundary::{arg, arg_mut, enter, non_null};
use crate::ffi::handle::enter_writer;
#[cfg(feature = "test-hooks")]
pub use crate::ffi::handle::inject_panic_for_tests;
pub use crate::ffi::handle::QuiverWriter;
use crate::ffi::options::{writer_options, QuiverOptions, QuiverStats};
use crate::ffi::schema::{export_schema, import_schema};
use crate::writer::ArrowWriter;

pub mod append;
pub mod column;

pub use append::*;
pub use column::*;

/// Creates a writer for `schema` (a struct schema whose children are the
/// columns). `opts` may be NULL for defaults. Errors: EINVAL (NULL argument,
/// malformed schema, bad option), ENOSYS (unsupported type, named in
/// `quiver_last_error`).
/// Ownership: `schema` and `opts` are borrowed (copied, not moved; the caller
/// still releases `schema`). On success the caller owns `*out` and frees it
/// with `quiver_writer_free`; on failure `*out` is untouched and nothing is owed.
///
/// # Safety
/// `schema` is NULL or a valid `ArrowSchema`; `opts` is NULL or a valid
/// `QuiverOptions`; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_new(
    schema: *const FFI_ArrowSchema,
    opts: *const QuiverOptions,
    out: *mut *mut QuiverWriter,
) -> c_int {
    const CALL: &str = "quiver_writer_new";
    enter(CALL, || {
        non_null(CALL, "schema", schema)?;
        non_null(CALL, "out", out)?;
        // SAFETY: non-NULL pointers from the caller, per the contract above.
        let w = unsafe { new_writer(schema, opts, CALL)? };
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { out.write(Box::into_raw(Box::new(w))) };
        Ok(0)
    })
}

/// A writer for `schema` with `opts` (NULL: defaults).
///
/// # Safety
/// `schema` is a valid, non-NULL `ArrowSchema`; `opts` is NULL or valid.
pub(crate) unsafe fn new_writer(
    schema: *const FFI_ArrowSchema,
    opts: *const QuiverOptions,
    call: &str,
) -> Result<QuiverWriter> {
    // SAFETY: forwarded from the caller.
    let options = unsafe { writer_options(opts, call)? };
    // SAFETY: forwarded from the caller.
    let schema = unsafe { import_schema(schema, call)? };
    let writer = ArrowWriter::create(schema.into(), options).map_err(|e| e.context(call))?;
    Ok(QuiverWriter::new(writer))
}

/// Frees a writer. NULL is a no-op. Batches already exported stay valid.
/// Ownership: `w` is consumed.
///
/// # Safety
/// `w` is NULL or a writer from `quiver_writer_new`, not freed yet and not
/// used after this call.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_free(w: *mut QuiverWriter) {
    enter("quiver_writer_free", || {
        if !w.is_null() {
            // SAFETY: `w` came from quiver_writer_new and is freed once.
            drop(unsafe { Box::from_raw(w) });
        }
        Ok(())
    })
}

/// Message of the last failure on `w`; valid until the next call on `w`;
/// NULL if none (or if `w` is NULL).
/// Ownership: the string belongs to the writer; do not free it.
///
/// # Safety
/// `w` is NULL or a live writer.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_last_error(w: *const QuiverWriter) -> *const c_char {
    enter("quiver_writer_last_error", || {
        // SAFETY: `w` is NULL or a live writer.
        let message = unsafe { w.as_ref() }.and_then(|qw| qw.status.last_error.as_ref());
        Ok(message.map_or(std::ptr::null(), |m| m.as_ptr()))
    })
}

/// Sets the writer's last error message (a fill callback calls this before
/// returning non-zero, so the stream reports the message). EINVAL if
/// `message` is NULL.
/// Ownership: `message` is borrowed (copied).
///
/// # Safety
/// `w` is NULL or a live writer; `message` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_set_error(w: *mut QuiverWriter, message: *const c_char) -> c_int {
    const CALL: &str = "quiver_writer_set_error";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer, used by this call alone.
        let qw = unsafe { arg_mut(CALL, "w", w)? };
        non_null(CALL, "message", message)?;
        // SAFETY: non-NULL `message` is a NUL-terminated string.
        qw.status.last_error = Some(unsafe { CStr::from_ptr(message) }.to_owned());
        Ok(0)
    })
}

/// Committed rows in the current batch; -1 if `w` is NULL.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_rows(w: *const QuiverWriter) -> i64 {
    const CALL: &str = "quiver_writer_rows";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer.
        let qw = unsafe { arg(CALL, "w", w)? };
        Ok(qw.writer.rows() as i64)
    })
}

/// Writes the writer's counters into `*out`.
/// Ownership: `*out` is the caller's; nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_stats(w: *const QuiverWriter, out: *mut QuiverStats) -> c_int {
    const CALL: &str = "quiver_writer_stats";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer.
        let qw = unsafe { arg(CALL, "w", w)? };
        non_null(CALL, "out", out)?;
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { out.write(qw.writer.stats().into()) };
        Ok(0)
    })
}

/// Exports the writer's schema into `*out`.
/// Ownership: on success the caller owns `*out` and must call `out->release`;
/// on failure `*out` is untouched.
///
/// # Safety
/// `w` is NULL or a live writer; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_export_schema(w: *const QuiverWriter, out: *mut FFI_ArrowSchema) -> c_int {
    const CALL: &str = "quiver_writer_export_schema";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer.
        let qw = unsafe { arg(CALL, "w", w)? };
        non_null(CALL, "out", out)?;
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { export_schema(&qw.writer.schema(), out, CALL)? };
        Ok(0)
    })
}

/// The committed rows as one struct array (a record batch); the writer
/// starts the next batch. EINVAL if a row is incomplete (nothing is lost:
/// finish it or abort it, then call again).
/// Ownership: on success the caller owns `*out` and must call `out->release`
/// (from any thread); its buffers stay valid until then, whatever the writer
/// does. On failure `*out` is untouched.
///
/// # Safety
/// `w` is NULL or a live writer; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_finish(w: *mut QuiverWriter, out: *mut FFI_ArrowArray) -> c_int {
    const CALL: &str = "quiver_writer_finish";
    enter_writer(CALL, w, |writer| {
        non_null(CALL, "out", out)?;
        let batch = writer.finish().map_err(|e| e.context(CALL))?;
        let array = export_array(StructArray::from(batch).into());
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { out.write(array) };
        Ok(())
    })
}

/// Sets the writer's memory limit: the bytes of buffer capacity it may hold,
/// 0 for none (the default). What counts: the capacity of the buffers of
/// the batch being written and of those kept for reuse (`bytes_retained`).
/// A call that would take the writer past it fails with ENOMEM, a message
/// naming the limit and what the call needed, and changes nothing (the
/// retained buffers are dropped first when that makes room). EINVAL if
/// `bytes` is negative. A fill callback may call it on its stream's writer.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer, not in use by another call.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_set_memory_limit(w: *mut QuiverWriter, bytes: i64) -> c_int {
    const CALL: &str = "quiver_writer_set_memory_limit";
    enter_writer(CALL, w, |writer| {
        let bytes = usize::try_from(bytes)
            .map_err(|_| QuiverError::invalid(format!("{CALL}: bytes must be >= 0, got {bytes}")))?;
        writer.set_memory_limit(bytes);
        Ok(())
    })
}
