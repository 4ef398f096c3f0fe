//! `QuiverOptions` and `QuiverStats`.

use crate::error::{QuiverError, Result};
use crate::ffi::boundary::enter;
use crate::writer::{WriterOptions, WriterStats};

/// Options of a writer or stream. Always start from `quiver_options_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct QuiverOptions {
    /// Row capacity of a batch; default 8192. 1 to 2147483647 (EINVAL
    /// otherwise).
    pub batch_rows: i64,
    /// Reuse released buffers; default true.
    pub recycle: bool,
    /// Batches whose buffers stay reclaimable; default 3. Must be >= 0.
    pub retain: i32,
    /// Check utf8 appends; default true.
    pub validate_utf8: bool,
}

/// Counters of a writer.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct QuiverStats {
    /// Batches finished.
    pub batches: u64,
    /// Buffers taken back after release.
    pub buffers_reused: u64,
    /// Buffers newly allocated.
    pub buffers_allocated: u64,
    /// Bytes of capacity newly allocated: new buffers, and the growth of any
    /// buffer (a reused one reserved for the batch, or one that grows while
    /// the batch is written, counted when the batch is finished). Never less
    /// than `bytes_retained`.
    pub bytes_allocated: u64,
    /// Bytes held for reuse right now.
    pub bytes_retained: u64,
}

impl From<WriterStats> for QuiverStats {
    fn from(s: WriterStats) -> Self {
        QuiverStats {
            batches: s.batches,
            buffers_reused: s.buffers_reused,
            buffers_allocated: s.buffers_allocated,
            bytes_allocated: s.bytes_allocated,
            bytes_retained: s.bytes_retained,
        }
    }
}

impl QuiverOptions {
    pub(crate) fn to_writer_options(self, call: &str) -> Result<WriterOptions> {
        if self.batch_rows < 1 || self.batch_rows as u64 > crate::writer::MAX_BATCH_ROWS as u64 {
            return Err(QuiverError::invalid(format!(
                "{call}: opts->batch_rows must be between 1 and {}, got {}",
                crate::writer::MAX_BATCH_ROWS,
                self.batch_rows
            )));
        }
        if self.retain < 0 {
            return Err(QuiverError::invalid(format!("{call}: opts->retain must be >= 0, got {}", self.retain)));
        }
        Ok(WriterOptions {
            batch_rows: self.batch_rows as usize,
            recycle: self.recycle,
            retain: self.retain as usize,
            validate_utf8: self.validate_utf8,
            ..WriterOptions::default()
        })
    }
}

/// Reads `opts` (NULL: defaults).
///
/// # Safety
/// `opts` is NULL or points to a readable `QuiverOptions`.
pub(crate) unsafe fn writer_options(opts: *const QuiverOptions, call: &str) -> Result<WriterOptions> {
    // SAFETY: per the contract.
    match unsafe { opts.as_ref() } {
        None => Ok(WriterOptions::default()),
        Some(opts) => opts.to_writer_options(call),
    }
}

/// Fills `*opts` with the defaults (batch_rows 8192, recycle true, retain 3,
/// validate_utf8 true). Ownership: `opts` is the caller's; NULL is a no-op.
///
/// # Safety
/// `opts` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_options_default(opts: *mut QuiverOptions) {
    enter("quiver_options_default", || {
        if opts.is_null() {
            return Ok(());
        }
        let d = WriterOptions::default();
        let value = QuiverOptions {
            batch_rows: d.batch_rows as i64,
            recycle: d.recycle,
            retain: d.retain as i32,
            validate_utf8: d.validate_utf8,
        };
        // SAFETY: non-NULL `opts` is valid for writes.
        unsafe { opts.write(value) };
        Ok(())
    })
}
