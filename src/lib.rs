//! quiver: rows or columns to Apache Arrow record batches, handed out over
//! the Arrow C Data and C Stream interfaces, with recycled buffers and bytes
//! that never depend on what memory held before.
//!
//! The ownership contract is in `docs/ffi.md`; the README follows.
#![doc = include_str!("../README.md")]

mod buffer;
pub mod depth;
pub mod error;
mod layout;
mod node;
pub mod records;
pub mod schema_text;
mod writer;

pub use depth::{MAX_DEPTH, MAX_FIELDS};
pub use error::{ErrorCode, QuiverError, Result};
pub use records::{Encoding, NullMark, RecordLayout, RecordsError};
pub use schema_text::{parse_schema, schema_to_text};
pub use writer::{ArrowWriter, WriterOptions, WriterStats, MAX_BATCH_ROWS};
pub mod export;
pub mod stream;
pub use export::{export_array, live_arrays, live_arrays_of_this_thread};
pub use stream::{export_stream, BatchSource, Step, WriterStream};
pub mod ffi;
