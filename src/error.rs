//! Errors: every failure carries an errno-style code (the C API returns it as is)
//! and a message naming the call, the node and the problem.

use std::fmt;

use arrow_schema::ArrowError;

/// What kind of failure happened; each maps to one errno value of the C API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Bad argument: unknown node, wrong type for the node, row incomplete,
    /// invalid UTF-8, malformed schema (`EINVAL`).
    InvalidArgument,
    /// A type the writer does not support (`ENOSYS`).
    Unsupported,
    /// A call would take the writer past its memory limit (`ENOMEM`; see
    /// `ArrowWriter::set_memory_limit`).
    OutOfMemory,
    /// A batch would exceed what its offsets can address (`EOVERFLOW`).
    Overflow,
    /// Value does not fit the column, e.g. a decimal over its precision (`ERANGE`).
    OutOfRange,
    /// A fill callback reported failure (`EIO`).
    Io,
    /// A panic was caught; the writer is poisoned (`ENOTRECOVERABLE`).
    Poisoned,
}

impl ErrorCode {
    /// The errno value the C API returns for this code.
    pub fn errno(self) -> i32 {
        match self {
            ErrorCode::InvalidArgument => libc::EINVAL,
            ErrorCode::Unsupported => libc::ENOSYS,
            ErrorCode::OutOfMemory => libc::ENOMEM,
            ErrorCode::Overflow => libc::EOVERFLOW,
            ErrorCode::OutOfRange => libc::ERANGE,
            ErrorCode::Io => libc::EIO,
            ErrorCode::Poisoned => libc::ENOTRECOVERABLE,
        }
    }
}

/// A failure of a quiver call. Nothing committed is lost when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuiverError {
    code: ErrorCode,
    message: String,
}

impl QuiverError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        QuiverError { code, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
    /// The error a fill closure returns to end its stream with a failure (`EIO`).
    pub fn fill(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Io, message)
    }
    pub fn code(&self) -> ErrorCode {
        self.code
    }
    pub fn errno(&self) -> i32 {
        self.code.errno()
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The same error with `context: ` in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for QuiverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for QuiverError {}

impl From<QuiverError> for ArrowError {
    fn from(e: QuiverError) -> Self {
        match e.code {
            ErrorCode::Unsupported => ArrowError::NotYetImplemented(e.message),
            ErrorCode::OutOfMemory => ArrowError::MemoryError(e.message),
            ErrorCode::Io => ArrowError::IoError(e.message.clone(), std::io::Error::other(e.message)),
            _ => ArrowError::ExternalError(Box::new(e)),
        }
    }
}

impl From<ArrowError> for QuiverError {
    fn from(e: ArrowError) -> Self {
        let code = match &e {
            ArrowError::NotYetImplemented(_) => ErrorCode::Unsupported,
            ArrowError::MemoryError(_) => ErrorCode::OutOfMemory,
            ArrowError::IoError(..) => ErrorCode::Io,
            ArrowError::ExternalError(inner) => {
                if let Some(q) = inner.downcast_ref::<QuiverError>() {
                    return q.clone();
                }
                ErrorCode::InvalidArgument
            }
            _ => ErrorCode::InvalidArgument,
        };
        QuiverError::new(code, e.to_string())
    }
}

pub type Result<T, E = QuiverError> = std::result::Result<T, E>;

pub(crate) fn overflow(call: &str, what: &str, end: usize) -> QuiverError {
    QuiverError::new(
        ErrorCode::Overflow,
        format!("{call}: {what}: the batch would need offset {end}, past 2^31-1; finish this batch and write the value into the next"),
    )
}
