//! `quiver_stream_new`: a C Stream whose batches a C fill callback writes.

use std::ffi::{c_int, c_void};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::RecordBatch;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::SchemaRef;

use crate::error::{ErrorCode, QuiverError, Result};
use crate::ffi::boundary::{enter, non_null, present};
use crate::ffi::options::QuiverOptions;
use crate::ffi::writer::{new_writer, QuiverWriter};
use crate::stream::{end_early, export_stream, finish_step, BatchSource, Step};

/// Writes up to `max_rows` rows into `w`. Returns 0 on success; writing no
/// row (and leaving no half row) ends the stream. Returning with a row half
/// written fails the stream with EINVAL. Returning ENOMEM (what a call under
/// the writer's memory limit returned) ends the batch early: the half row is
/// dropped, the committed rows are the batch and the next call writes the
/// rest; with no row committed it fails the stream with ENOMEM. Any other
/// non-zero return ends the stream with EIO and the
/// writer's last error (set one with `quiver_writer_set_error`). The writer
/// belongs to the stream: do not free it or keep it after returning.
pub type QuiverFill = Option<unsafe extern "C" fn(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int>;

/// Releases the callback context when the stream is released.
pub type QuiverReleaseCtx = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

struct Context {
    ctx: *mut c_void,
    release_ctx: QuiverReleaseCtx,
}

impl Drop for Context {
    fn drop(&mut self) {
        if let Some(release) = self.release_ctx {
            // SAFETY: the caller gave us `ctx` with this release function.
            unsafe { release(self.ctx) };
        }
    }
}

struct CallbackSource {
    writer: Box<QuiverWriter>,
    fill: unsafe extern "C" fn(*mut c_void, *mut QuiverWriter, i64) -> c_int,
    context: Context,
    done: bool,
}

// SAFETY: the stream may move between threads (the C Stream Interface allows
// a consumer to pull from another thread); the callback context is the
// caller's, who promises it may be used from the thread that pulls.
unsafe impl Send for CallbackSource {}

impl BatchSource for CallbackSource {
    fn schema(&self) -> SchemaRef {
        self.writer.writer.schema()
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        if self.writer.is_poisoned() {
            return Some(Err(QuiverError::new(
                ErrorCode::Poisoned,
                "get_next: the stream's writer is poisoned by a caught panic",
            )));
        }
        let max_rows = self.writer.writer.options().batch_rows;
        let w: *mut QuiverWriter = &mut *self.writer;
        // SAFETY: the callback gets the stream's own writer for the duration of the call.
        let rc = unsafe { (self.fill)(self.context.ctx, w, max_rows as i64) };
        if self.writer.is_poisoned() {
            let message = self.writer.last_error_message().unwrap_or_default();
            return Some(Err(QuiverError::new(ErrorCode::Poisoned, format!("fill: {message}"))));
        }
        if rc == libc::ENOMEM && self.writer.writer.rows() > 0 {
            // The memory limit ends the batch early: the committed rows go out.
            return end_early(&mut self.writer.writer, max_rows).transpose();
        }
        if rc == libc::ENOMEM {
            let message = self.writer.last_error_message().unwrap_or_else(|| "(no message set)".into());
            return Some(Err(QuiverError::new(
                ErrorCode::OutOfMemory,
                format!("fill callback returned ENOMEM: {message}"),
            )));
        }
        if rc != 0 {
            let message = self.writer.last_error_message().unwrap_or_else(|| "(no message set)".into());
            return Some(Err(QuiverError::new(ErrorCode::Io, format!("fill callback returned {rc}: {message}"))));
        }
        let step = if self.writer.writer.rows() == 0 { Step::End } else { Step::Batch };
        match finish_step(&mut self.writer.writer, step, max_rows) {
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some(batch)) => Some(Ok(batch)),
            Err(e) => Some(Err(e)),
        }
    }
}

/// Creates a stream of batches that `fill(ctx, w, max_rows)` writes into the
/// stream's own writer, one call per `get_next`, until a call writes no row.
/// `opts` may be NULL. Errors as `quiver_writer_new`; EINVAL if `fill` is NULL.
/// Ownership: `schema` and `opts` are borrowed. On success the caller owns
/// `*out` and must call `out->release`; the stream owns its writer and `ctx`,
/// and calls `release_ctx(ctx)` (if not NULL) when released. Batches from
/// `get_next` belong to the consumer and stay valid after the stream is
/// released. On failure `*out` is untouched and `ctx` stays the caller's
/// (`release_ctx` is not called).
///
/// # Safety
/// `schema` is NULL or a valid `ArrowSchema`; `opts` is NULL or a valid
/// `QuiverOptions`; `out` is NULL or valid for writes; `fill` and
/// `release_ctx` are NULL or functions that may be called with `ctx` from
/// the thread that pulls the stream.
#[no_mangle]
pub unsafe extern "C" fn quiver_stream_new(
    schema: *const FFI_ArrowSchema,
    opts: *const QuiverOptions,
    fill: QuiverFill,
    ctx: *mut c_void,
    release_ctx: QuiverReleaseCtx,
    out: *mut FFI_ArrowArrayStream,
) -> c_int {
    const CALL: &str = "quiver_stream_new";
    enter(CALL, || {
        non_null(CALL, "schema", schema)?;
        non_null(CALL, "out", out)?;
        let fill = present(CALL, "fill", fill)?;
        // SAFETY: non-NULL pointers from the caller, borrowed.
        let writer = unsafe { new_writer(schema, opts, CALL)? };
        let source =
            CallbackSource { writer: Box::new(writer), fill, context: Context { ctx, release_ctx }, done: false };
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { out.write(export_stream(Box::new(source))) };
        Ok(0)
    })
}
