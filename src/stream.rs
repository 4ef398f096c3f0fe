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

/// The error a failed fill ends its stream with: `EIO` (or `ENOTRECOVERABLE`
/// for a panic), the message kept.
pub(crate) fn fill_error(e: QuiverError) -> QuiverError {
    match e.code() {
        ErrorCode::Io | ErrorCode::Poisoned => e,
        _ => QuiverError::new(ErrorCode::Io, format!("fill failed: {}", e.message())),
    }
}

pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
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
    /// `batch_rows`) and says whether the stream goes on.
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
            Ok(Err(e)) => Err(fill_error(e)),
            Err(panic) => {
                Err(QuiverError::new(ErrorCode::Poisoned, format!("fill panicked: {}", panic_message(&panic))))
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
    /// Exports the stream over the C Stream Interface.
    pub fn into_ffi(self) -> FFI_ArrowArrayStream {
        export_stream(Box::new(self))
    }
}

struct StreamPrivate {
    source: Box<dyn BatchSource>,
    last_error: Option<CString>,
    /// Sticky failure of this stream: code and message.
    failed: Option<(c_int, CString)>,
}

/// Exports any batch source as an `ArrowArrayStream`.
pub fn export_stream(source: Box<dyn BatchSource>) -> FFI_ArrowArrayStream {
    let private = Box::new(StreamPrivate { source, last_error: None, failed: None });
    // SAFETY: the callbacks below implement the C Stream Interface over this
    // private data, which release frees exactly once.
    unsafe {
        FFI_ArrowArrayStream::new_unchecked(
            Some(get_schema),
            Some(get_next),
            Some(get_last_error),
            Some(release_stream),
            Box::into_raw(private).cast(),
        )
    }
}

fn c_message(message: &str) -> CString {
    CString::new(message.replace('\0', "\\0")).expect("NULs replaced")
}

/// # Safety
/// `stream` must be NULL or a live stream made by `export_stream`.
unsafe fn private_of<'a>(stream: *mut FFI_ArrowArrayStream) -> Option<&'a mut StreamPrivate> {
    if stream.is_null() {
        return None;
    }
    // SAFETY: per the contract above.
    unsafe {
        let p = (*stream).private_data().cast::<StreamPrivate>();
        (!p.is_null() && (*stream).release().is_some()).then(|| &mut *p)
    }
}

unsafe extern "C" fn get_schema(stream: *mut FFI_ArrowArrayStream, out: *mut FFI_ArrowSchema) -> c_int {
    // SAFETY: called by the consumer on a stream we exported.
    let Some(private) = (unsafe { private_of(stream) }) else { return libc::EINVAL };
    if out.is_null() {
        private.last_error = Some(c_message("get_schema: out is NULL"));
        return libc::EINVAL;
    }
    let result = catch_unwind(AssertUnwindSafe(|| FFI_ArrowSchema::try_from(private.source.schema().as_ref())));
    match result {
        Ok(Ok(schema)) => {
            // SAFETY: out is valid for writes; it is an uninitialised struct the consumer owns.
            unsafe { std::ptr::write(out, schema) };
            0
        }
        Ok(Err(e)) => {
            private.last_error = Some(c_message(&format!("get_schema: {e}")));
            libc::EINVAL
        }
        Err(panic) => {
            private.last_error = Some(c_message(&format!("get_schema panicked: {}", panic_message(&panic))));
            libc::ENOTRECOVERABLE
        }
    }
}

unsafe extern "C" fn get_next(stream: *mut FFI_ArrowArrayStream, out: *mut FFI_ArrowArray) -> c_int {
    // SAFETY: called by the consumer on a stream we exported.
    let Some(private) = (unsafe { private_of(stream) }) else { return libc::EINVAL };
    if out.is_null() {
        private.last_error = Some(c_message("get_next: out is NULL"));
        return libc::EINVAL;
    }
    if let Some((code, message)) = &private.failed {
        private.last_error = Some(message.clone());
        return *code;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        private.source.next_batch().map(|r| r.map(|batch| export_array(StructArray::from(batch).into())))
    }));
    let failure = match result {
        Ok(None) => {
            // SAFETY: out is valid for writes; a released array marks the end.
            unsafe { std::ptr::write(out, FFI_ArrowArray::empty()) };
            return 0;
        }
        Ok(Some(Ok(array))) => {
            // SAFETY: as above; the consumer now owns `array`.
            unsafe { std::ptr::write(out, array) };
            return 0;
        }
        Ok(Some(Err(e))) => (e.errno(), c_message(e.message())),
        Err(panic) => (libc::ENOTRECOVERABLE, c_message(&format!("get_next panicked: {}", panic_message(&panic)))),
    };
    private.last_error = Some(failure.1.clone());
    private.failed = Some(failure.clone());
    failure.0
}

unsafe extern "C" fn get_last_error(stream: *mut FFI_ArrowArrayStream) -> *const c_char {
    // SAFETY: called by the consumer on a stream we exported.
    match unsafe { private_of(stream) } {
        Some(private) => private.last_error.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
        None => std::ptr::null(),
    }
}

unsafe extern "C" fn release_stream(stream: *mut FFI_ArrowArrayStream) {
    // SAFETY: called by the consumer on a stream we exported, once.
    unsafe {
        if stream.is_null() || (*stream).release().is_none() {
            return;
        }
        let private = (*stream).private_data().cast::<StreamPrivate>();
        if !private.is_null() {
            let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(private))));
        }
        (*stream).set_private_data(std::ptr::null_mut());
        (*stream).set_release(None);
    }
}
