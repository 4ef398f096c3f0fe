//! Streaming: a pull-driven source of batches, as an arrow
//! `RecordBatchReader` and exported as an `ArrowArrayStream` (docs/design.md §3).

use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, SchemaRef};

use crate::error::{ErrorCode, QuiverError, Result};
use crate::export::export_array;
use crate::ffi::abi::{ArrowArray, ArrowArrayStream, ArrowSchema};
use crate::ffi::boundary::c_string;
use crate::ffi::boundary::{enter, guarded, non_null, panic_message, panicked, Refused};
use crate::writer::ArrowWriter;

/// What a fill closure says after writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Emit the rows written in this call as the next batch (even zero rows).
    Batch,
    /// The stream ends: rows written in this call (if any) are emitted as a
    /// last batch first.
    End,
}

/// Anything that yields batches of one schema: the Rust stream below and the
/// C API's callback stream.
pub trait BatchSource: Send {
    fn schema(&self) -> SchemaRef;
    /// The next batch; `None` at the end (and again after). Errors are sticky.
    fn next_batch(&mut self) -> Option<Result<RecordBatch>>;
}

/// Finishes a fill step with the stream rules: more rows than asked for are
/// refused, an incomplete row is refused (also when it is the only thing
/// the fill wrote); an `End` with no rows ends the stream. Returns the batch
/// to emit, if any.
pub(crate) fn finish_step(writer: &mut ArrowWriter, step: Step, max_rows: usize) -> Result<Option<RecordBatch>> {
    let rows = writer.rows();
    if rows > max_rows {
        return Err(QuiverError::invalid(format!("fill wrote {rows} rows, more than max_rows {max_rows}")));
    }
    if step == Step::End && rows == 0 && !writer.row_pending() {
        return Ok(None);
    }
    writer.finish().map(Some).map_err(|e| e.context("after fill"))
}

/// Ends a batch early after its fill got `ENOMEM` (the memory limit) with
/// rows committed: the half-written row is dropped and the committed rows
/// are the batch; the next fill writes the rest.
pub(crate) fn end_early(writer: &mut ArrowWriter, max_rows: usize) -> Result<Option<RecordBatch>> {
    writer.abort_row()?;
    finish_step(writer, Step::Batch, max_rows)
}

/// The error a failed fill ends its stream with: `EIO` (or `ENOTRECOVERABLE`
/// for a panic, `ENOMEM` for the memory limit), the message kept.
pub(crate) fn fill_error(e: QuiverError) -> QuiverError {
    match e.code() {
        ErrorCode::Io | ErrorCode::Poisoned => e,
        ErrorCode::OutOfMemory => QuiverError::new(ErrorCode::OutOfMemory, format!("fill failed: {}", e.message())),
        _ => QuiverError::new(ErrorCode::Io, format!("fill failed: {}", e.message())),
    }
}

#[derive(Debug)]
enum State {
    Running,
    Ending,
    Done,
    Failed(QuiverError),
}

/// A stream of batches written by a fill closure into one recycling writer.
/// It is an arrow `RecordBatchReader`; `into_ffi` exports it over the C
/// Stream Interface.
///
/// The stream owns the writer; each batch it yields owns its buffers until
/// the consumer drops (or, over the C Stream, releases) it, after which the
/// writer may reuse them.
///
/// ```
/// use quiver::{ArrowWriter, Step, WriterOptions, WriterStream};
///
/// let options = WriterOptions { batch_rows: 1000, ..WriterOptions::default() };
/// let writer = ArrowWriter::from_text("id: int64 not null, name: utf8", options)?;
/// let mut next_id = 0i64;
/// let stream = WriterStream::new(writer, move |w, max_rows| {
///     // Write up to max_rows rows, then say whether the stream goes on.
///     while next_id < 2500 && w.rows() < max_rows {
///         w.append_i64(0, next_id)?;
///         if next_id % 3 == 0 {
///             w.append_null(1)?;
///         } else {
///             w.append_str(1, "row")?;
///         }
///         w.end_row()?;
///         next_id += 1;
///     }
///     Ok(if next_id < 2500 { Step::Batch } else { Step::End })
/// });
/// let rows: Vec<usize> = stream.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(rows, [1000, 1000, 500]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WriterStream<F> {
    writer: ArrowWriter,
    fill: F,
    state: State,
}

impl<F> WriterStream<F>
where
    F: FnMut(&mut ArrowWriter, usize) -> Result<Step> + Send,
{
    /// `fill(writer, max_rows)` writes up to `max_rows` rows (the writer's
    /// `batch_rows`) and says whether the stream goes on. A fill that
    /// returns an `ENOMEM` error (the writer's memory limit, e.g. through `?`
    /// on an append) ends the batch early when rows are committed: the half
    /// row is dropped, the committed rows are the batch, and the next call
    /// writes the rest; with no row committed the stream fails with `ENOMEM`.
    pub fn new(writer: ArrowWriter, fill: F) -> Self {
        WriterStream { writer, fill, state: State::Running }
    }

    pub fn writer(&self) -> &ArrowWriter {
        &self.writer
    }
}

impl<F> BatchSource for WriterStream<F>
where
    F: FnMut(&mut ArrowWriter, usize) -> Result<Step> + Send,
{
    fn schema(&self) -> SchemaRef {
        self.writer.schema()
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        match &self.state {
            State::Done => return None,
            State::Failed(e) => return Some(Err(e.clone())),
            State::Ending => {
                self.state = State::Done;
                return None;
            }
            State::Running => {}
        }
        let max_rows = self.writer.options().batch_rows;
        let (writer, fill) = (&mut self.writer, &mut self.fill);
        let result = match catch_unwind(AssertUnwindSafe(|| fill(&mut *writer, max_rows))) {
            Ok(Ok(step)) => finish_step(writer, step, max_rows).map(|b| (step, b)),
            Ok(Err(e)) if e.code() == ErrorCode::OutOfMemory && writer.rows() > 0 => {
                // The memory limit ends the batch early: the committed rows go out.
                end_early(writer, max_rows).map(|b| (Step::Batch, b))
            }
            Ok(Err(e)) => Err(fill_error(e)),
            Err(panic) => {
                Err(QuiverError::new(ErrorCode::Poisoned, format!("fill panicked: {}", panic_message(&*panic))))
            }
        };
        match result {
            Ok((_, None)) => {
                self.state = State::Done;
                None
            }
            Ok((step, Some(batch))) => {
                if step == Step::End {
                    self.state = State::Ending;
                }
                Some(Ok(batch))
            }
            Err(e) => {
                self.state = State::Failed(e.clone());
                Some(Err(e))
            }
        }
    }
}

impl<F> Iterator for WriterStream<F>
where
    F: FnMut(&mut ArrowWriter, usize) -> Result<Step> + Send,
{
    type Item = std::result::Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map(|r| r.map_err(ArrowError::from))
    }
}

impl<F> RecordBatchReader for WriterStream<F>
where
    F: FnMut(&mut ArrowWriter, usize) -> Result<Step> + Send,
{
    fn schema(&self) -> SchemaRef {
        self.writer.schema()
    }
}

impl<F> WriterStream<F>
where
    F: FnMut(&mut ArrowWriter, usize) -> Result<Step> + Send + 'static,
{
    /// Exports the stream over the C Stream Interface. The returned struct
    /// owns the stream: the consumer calls its `release` once, and each
    /// array `get_next` hands out is the consumer's to release.
    ///
    /// ```
    /// use arrow_array::ffi_stream::ArrowArrayStreamReader;
    /// use quiver::{ArrowWriter, Step, WriterOptions, WriterStream};
    ///
    /// let writer = ArrowWriter::from_text("x: int32", WriterOptions::default())?;
    /// let stream = WriterStream::new(writer, |w, _max_rows| {
    ///     w.append_i32(0, 7)?;
    ///     w.end_row()?;
    ///     Ok(Step::End)
    /// });
    /// // Any C Stream consumer can take it; here arrow-rs's importer.
    /// let reader = ArrowArrayStreamReader::try_new(stream.into_ffi())?;
    /// let batches = reader.collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(batches.len(), 1);
    /// assert_eq!(batches[0].num_rows(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_ffi(self) -> FFI_ArrowArrayStream {
        export_stream(Box::new(self))
    }
}

struct StreamPrivate {
    source: Box<dyn BatchSource>,
    last_error: Option<CString>,
    /// Sticky failure of this stream.
    failed: Option<QuiverError>,
}

/// Exports any batch source as an `ArrowArrayStream`.
pub fn export_stream(source: Box<dyn BatchSource>) -> FFI_ArrowArrayStream {
    let private = Box::new(StreamPrivate { source, last_error: None, failed: None });
    // The callbacks below implement the C Stream Interface over this private
    // data, which release frees exactly once.
    ArrowArrayStream {
        get_schema: Some(get_schema),
        get_next: Some(get_next),
        get_last_error: Some(get_last_error),
        release: Some(release_stream),
        private_data: Box::into_raw(private).cast(),
    }
    .into_ffi()
}

/// The private data of a live stream.
///
/// # Safety
/// `stream` must be NULL or a stream made by `export_stream` (released or not).
unsafe fn private_of(stream: *mut ArrowArrayStream) -> Option<*mut StreamPrivate> {
    // SAFETY: per the contract.
    let stream = unsafe { stream.as_ref() }?;
    let p = stream.private_data.cast::<StreamPrivate>();
    (!p.is_null() && stream.release.is_some()).then_some(p)
}

/// The boundary of a stream callback ([`crate::ffi::boundary`]): a NULL or
/// released stream is refused with `EINVAL` (there is no stream to hold a
/// message); `body` runs with panics caught; an error or a caught panic
/// becomes the stream's `get_last_error`, and a panic also fails the stream
/// for good (it is sticky).
///
/// # Safety
/// `stream` must be NULL or a stream made by `export_stream`.
#[inline(always)]
unsafe fn enter_stream<R: Refused>(
    call: &'static str,
    stream: *mut ArrowArrayStream,
    body: impl FnOnce(&mut StreamPrivate) -> Result<R>,
) -> R {
    // SAFETY: per the contract.
    let Some(private) = (unsafe { private_of(stream) }) else { return R::refused(libc::EINVAL) };
    // The three dereferences below: the stream's private data, used by one
    // call at a time (the C Stream Interface is not thread-safe); `body` has
    // returned or unwound before the error paths run, so each is the only
    // reference.
    guarded(
        private,
        // SAFETY: see above.
        || body(unsafe { &mut *private }),
        |private, e| {
            // SAFETY: see above.
            unsafe { &mut *private }.last_error = Some(c_string(e.message()));
            R::refused(e.errno())
        },
        |private, panic| {
            let e = panicked(call, panic);
            // SAFETY: see above.
            let private = unsafe { &mut *private };
            private.last_error = Some(c_string(e.message()));
            let errno = e.errno();
            private.failed = Some(e);
            R::refused(errno)
        },
    )
}

unsafe extern "C" fn get_schema(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int {
    const CALL: &str = "get_schema";
    let body = |private: &mut StreamPrivate| {
        non_null(CALL, "out", out)?;
        let schema = FFI_ArrowSchema::try_from(private.source.schema().as_ref())
            .map_err(|e| QuiverError::invalid(format!("{CALL}: {e}")))?;
        // SAFETY: out is valid for writes; it is an uninitialised struct the consumer owns.
        unsafe { std::ptr::write(out.cast::<FFI_ArrowSchema>(), schema) };
        Ok(0)
    };
    // SAFETY: called by the consumer on a stream we exported.
    unsafe { enter_stream(CALL, stream, body) }
}

unsafe extern "C" fn get_next(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int {
    const CALL: &str = "get_next";
    let body = |private: &mut StreamPrivate| {
        non_null(CALL, "out", out)?;
        if let Some(e) = &private.failed {
            return Err(e.clone());
        }
        let array = match private.source.next_batch() {
            // A released array marks the end.
            None => FFI_ArrowArray::empty(),
            Some(Ok(batch)) => export_array(StructArray::from(batch).into()),
            Some(Err(e)) => {
                private.failed = Some(e.clone());
                return Err(e);
            }
        };
        // SAFETY: out is valid for writes; the consumer now owns `array`.
        unsafe { std::ptr::write(out.cast::<FFI_ArrowArray>(), array) };
        Ok(0)
    };
    // SAFETY: called by the consumer on a stream we exported.
    unsafe { enter_stream(CALL, stream, body) }
}

unsafe extern "C" fn get_last_error(stream: *mut ArrowArrayStream) -> *const c_char {
    let body = |private: &mut StreamPrivate| Ok(private.last_error.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()));
    // SAFETY: called by the consumer on a stream we exported.
    unsafe { enter_stream("get_last_error", stream, body) }
}

unsafe extern "C" fn release_stream(stream: *mut ArrowArrayStream) {
    enter("release", || {
        // SAFETY: called by the consumer on NULL or a stream we exported.
        let Some(stream) = (unsafe { stream.as_mut() }) else { return Ok(()) };
        if stream.release.is_none() {
            return Ok(());
        }
        let private = std::mem::replace(&mut stream.private_data, std::ptr::null_mut()).cast::<StreamPrivate>();
        stream.release = None;
        if !private.is_null() {
            // SAFETY: made by Box::into_raw in export_stream; taken once, as
            // release is NULL from here on.
            drop(unsafe { Box::from_raw(private) });
        }
        Ok(())
    })
}
