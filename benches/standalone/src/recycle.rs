//! The recycling benchmark's data, writers and measurements (used by the
//! `recycle` program and by the `bench_recycle_stream` C export that
//! benches/peers/recycle_pyarrow.py imports).
//!
//! One batch is either two int64 columns (`a` all valid, `b` half null;
//! `--bytes` is the size of one values buffer, so `rows = bytes / 8`) or one
//! utf8 column of large strings (128..384 bytes, 256 on average; `--bytes`
//! is the size of the data buffer, so `rows = bytes / 256`). Both are written
//! through the column path (`write_column`, `write_array`).

use std::fs;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::SchemaRef;
use quiver::{ArrowWriter, BatchSource, WriterOptions, WriterStats};

use crate::common::Gen;

/// What one batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `a: int64, b: int64`, `b` half null.
    Int64,
    /// `s: utf8`, strings of 128..384 bytes.
    Utf8,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "int64" => Some(Kind::Int64),
            "utf8" => Some(Kind::Utf8),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int64 => "int64",
            Kind::Utf8 => "utf8",
        }
    }
    fn schema(self) -> &'static str {
        match self {
            Kind::Int64 => "a: int64, b: int64",
            Kind::Utf8 => "s: utf8",
        }
    }
    /// Rows of a batch whose largest buffer has `bytes` bytes.
    pub fn rows(self, bytes: usize) -> usize {
        match self {
            Kind::Int64 => (bytes / 8).max(1),
            Kind::Utf8 => (bytes / 256).max(1),
        }
    }
}

/// The input of every batch, made once.
pub enum Input {
    Int64 { a: Vec<i64>, b: Vec<i64>, validity: Vec<u8> },
    Utf8 { s: StringArray },
}

impl Input {
    pub fn new(kind: Kind, rows: usize) -> Input {
        let mut g = Gen::new(crate::common::SEED_VALUES);
        match kind {
            Kind::Int64 => {
                let a: Vec<i64> = (0..rows).map(|_| g.next() as i64).collect();
                let b: Vec<i64> = (0..rows).map(|_| g.next() as i64).collect();
                let mut v = Gen::new(crate::common::SEED_VALID);
                let mut validity = vec![0u8; rows.div_ceil(8)];
                for i in 0..rows {
                    if v.next() & 1 == 1 {
                        validity[i / 8] |= 1 << (i % 8);
                    }
                }
                Input::Int64 { a, b, validity }
            }
            Kind::Utf8 => {
                // Strings are windows of one random ASCII pool: cheap to make
                // at hundreds of MiB, and every byte is still copied.
                let pool: Vec<u8> = (0..1 << 16).map(|_| b'a' + (g.next() % 26) as u8).collect();
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0i32);
                let mut values = Vec::with_capacity(rows * 256 + 512);
                for _ in 0..rows {
                    let r = g.next();
                    let len = 128 + (r % 257) as usize;
                    let at = ((r >> 16) as usize) % (pool.len() - len);
                    values.extend_from_slice(&pool[at..at + len]);
                    offsets.push(i32::try_from(values.len()).expect("utf8 data over 2 GiB"));
                }
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
                let s = StringArray::try_new(offsets, Buffer::from_vec(values), None).expect("valid utf8");
                Input::Utf8 { s }
            }
        }
    }

    /// Writes one whole batch into `w`.
    pub fn write(&self, w: &mut ArrowWriter) {
        match self {
            Input::Int64 { a, b, validity } => {
                w.write_column(0, a, None).expect("write a");
                w.write_column(1, b, Some(validity)).expect("write b");
            }
            Input::Utf8 { s } => w.write_array(0, s).expect("write s"),
        }
    }
}

/// A writer for `kind` with batches of `rows` rows.
pub fn writer(kind: Kind, rows: usize, recycle: bool, retain: usize) -> ArrowWriter {
    let options = WriterOptions { batch_rows: rows, recycle, retain, ..WriterOptions::default() };
    ArrowWriter::from_text(kind.schema(), options).expect("schema")
}

/// One batch written and finished.
pub fn batch(w: &mut ArrowWriter, input: &Input) -> RecordBatch {
    input.write(w);
    w.finish().expect("finish")
}

/// The consumer end of a bounded queue, as a quiver batch source (so that it
/// is exported through quiver's C Stream, like any producer of the library).
pub struct QueueSource {
    schema: SchemaRef,
    rx: Receiver<RecordBatch>,
}

impl BatchSource for QueueSource {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn next_batch(&mut self) -> Option<quiver::Result<RecordBatch>> {
        self.rx.recv().ok().map(Ok)
    }
}

/// A producer thread writing `batches` batches into a bounded queue of
/// `depth` batches, and the C stream that reads the queue. The thread ends
/// after the last batch, or when the stream is released; it returns the
/// writer's stats after `warmup` batches and at its end.
#[allow(clippy::too_many_arguments)]
pub fn queue_stream(
    kind: Kind,
    input: Arc<Input>,
    rows: usize,
    recycle: bool,
    retain: usize,
    batches: usize,
    warmup: usize,
    depth: usize,
) -> (FFI_ArrowArrayStream, JoinHandle<(WriterStats, WriterStats)>) {
    let mut w = writer(kind, rows, recycle, retain);
    let schema = w.schema();
    let (tx, rx) = sync_channel::<RecordBatch>(depth);
    let producer = thread::spawn(move || {
        let mut at_warm = w.stats();
        for i in 0..batches {
            if i == warmup {
                at_warm = w.stats();
            }
            if tx.send(batch(&mut w, &input)).is_err() {
                break;
            }
        }
        (at_warm, w.stats())
    });
    (quiver::export_stream(Box::new(QueueSource { schema, rx })), producer)
}

/// Minor page faults so far: of the whole process (`thread = false`) or of
/// the calling thread.
pub fn minflt(thread: bool) -> u64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        let who = if thread { libc::RUSAGE_THREAD } else { libc::RUSAGE_SELF };
        libc::getrusage(who, &mut u);
        u.ru_minflt as u64
    }
}

/// A field of /proc/self/status in KiB (VmRSS, VmHWM), 0 if unreadable.
pub fn status_kib(field: &str) -> u64 {
    let s = fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field).and_then(|r| r.trim_start_matches(':').split_whitespace().next()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0); false
/// when the kernel refused.
pub fn reset_peak_rss() -> bool {
    fs::write("/proc/self/clear_refs", "5").is_ok()
}
