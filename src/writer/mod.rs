//! [`ArrowWriter`]: the type, its options and statistics, and the batch life
//! cycle (taking the buffers of a batch lazily at its first write). The row
//! path, the column path, positions and finishing are `impl ArrowWriter`
//! blocks in the child modules; this module uses none of them.

use std::sync::Arc;

use arrow_schema::SchemaRef;

use crate::buffer::{Counters, Fill, Slot, Start};
use crate::error::{QuiverError, Result};
use crate::node::build::build_nodes;
use crate::node::fast::prepare_fast_paths;
use crate::node::{Kind, Node, NO_OPEN};

mod column;
mod column_values;
mod dict_keys;
mod encoded;
mod encoded_copy;
mod encoded_row;
mod finish;
pub(crate) mod in_place;
mod limit;
mod nested;
mod position;
mod row;
mod row_bytes;
mod run_ends;
mod slots;

/// Options of a writer; start from `WriterOptions::default()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Row capacity of a batch: reserved before the row path writes (up to
    /// 2^20 rows up front; buffers grow beyond that), and the `max_rows` a
    /// stream asks its fill closure for. 1 to [`MAX_BATCH_ROWS`]; default 8192.
    pub batch_rows: usize,
    /// Reuse released buffers of earlier batches. Default true.
    pub recycle: bool,
    /// Batches whose buffers stay reclaimable (the retain ring). Default 3.
    pub retain: usize,
    /// Check that utf8 appends are valid UTF-8. Default true.
    pub validate_utf8: bool,
    /// Refuse decimals over their precision (`ERANGE`). Default true; turn
    /// off only to carry data that is already out of range as it is.
    pub check_decimal_precision: bool,
    /// Bytes of buffer capacity the writer may hold (0: no limit, the
    /// default): see [`ArrowWriter::set_memory_limit`] for what counts. A
    /// call that would take the writer past it is refused with `ENOMEM`.
    pub memory_limit: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            batch_rows: 8192,
            recycle: true,
            retain: 3,
            validate_utf8: true,
            check_decimal_precision: true,
            memory_limit: 0,
        }
    }
}

/// Counters of a writer (docs/design.md §2 rule 8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Batches finished.
    pub batches: u64,
    /// Buffers taken back after their consumer released them.
    pub buffers_reused: u64,
    /// Buffers newly allocated.
    pub buffers_allocated: u64,
    /// Bytes of capacity newly allocated: new buffers, and the growth of any
    /// buffer (a reused one reserved for the batch, or one that grows while
    /// the batch is written, counted when the batch is finished). Never less
    /// than `bytes_retained`.
    pub bytes_allocated: u64,
    /// Bytes of earlier batches' buffers the writer holds for reuse right now.
    pub bytes_retained: u64,
}

/// Writes rows or columns into Arrow record batches, recycling the buffers
/// of earlier batches once their consumers have released them.
///
/// Every field, nested ones included, is a *node*, numbered in pre-order
/// (`node("tags.item")` finds one by path). The row path appends one value
/// per node and commits with `end_row`; the column path writes whole
/// top-level columns (`write_column`, `write_array`); `finish` hands the
/// committed rows out as a `RecordBatch`, which owns its buffers until it is
/// dropped, after which the writer may reuse them.
///
/// ```
/// use quiver::{ArrowWriter, WriterOptions};
///
/// let mut w = ArrowWriter::from_text("id: int64 not null, name: utf8, tags: list<utf8>", WriterOptions::default())?;
/// let (id, name, tags, tag) = (0, 1, 2, w.node("tags.item").unwrap());
/// for i in 0..3 {
///     w.append_i64(id, i)?;
///     if i == 1 { w.append_null(name)? } else { w.append_str(name, "quiver")? }
///     w.begin(tags)?;
///     w.append_str(tag, "a")?;
///     w.end(tags)?;
///     w.end_row()?;
/// }
/// let batch = w.finish()?;
/// assert_eq!((batch.num_rows(), batch.column(1).null_count()), (3, 1));
/// # Ok::<(), quiver::QuiverError>(())
/// ```
#[derive(Debug)]
pub struct ArrowWriter {
    pub(crate) schema: SchemaRef,
    pub(crate) nodes: Vec<Node>,
    /// Public nodes come first; hidden value nodes of encoded nodes after.
    pub(crate) public: usize,
    /// Node numbers of the top-level columns.
    pub(crate) top: Vec<usize>,
    pub(crate) options: WriterOptions,
    /// Committed rows in the current batch.
    pub(crate) rows: usize,
    /// Nodes opened by `begin`, innermost last.
    pub(crate) open: Vec<usize>,
    /// The innermost open node; [`NO_OPEN`] when none is open, [`NOT_STARTED`]
    /// before the batch's first write. The fast paths compare it with a
    /// node's `up`, which answers "started, and is this node's parent the
    /// innermost open one" in one test. Under a memory limit it stays
    /// [`LIMITED`], which no fast path takes.
    open_top: usize,
    /// Top-level columns that got the value of the open row through the row
    /// path, or [`ROW_UNKNOWN`] once the column path may have written
    /// top-level columns since the last commit (`end_row` then checks every
    /// column). Each top-level column takes one value per row (its length
    /// must equal `rows` to take it), so `row_written == top.len()` means the
    /// row is complete.
    row_written: usize,
    /// Children of unions, list views and encoded nodes: the nodes whose
    /// committed length `commit` records (every other node's follows from
    /// its parent's, see `restore_committed`).
    snapshot: Vec<usize>,
    /// Debug builds: every node's `(len, null_count)` at the last commit, to
    /// check that `abort_row` restores exactly that.
    #[cfg(debug_assertions)]
    debug_committed: Vec<(usize, usize)>,
    /// Whether the current batch's buffers have been taken (lazily, at the
    /// first write, so that a consumer's release just before counts).
    started: bool,
    counters: Counters,
    /// Column path: the value a nested copy refused, as an index into the
    /// array being copied at the current level (each level maps it to its
    /// own rows on the way out), so the error can name the input row.
    pub(crate) refused_at: Option<usize>,
    batches: u64,
    /// Column path: the nodes of the column being written and their
    /// `(len, null_count)` before it, kept between calls so that a call
    /// allocates neither.
    pub(crate) column_scratch: (Vec<usize>, Vec<(usize, usize)>, Vec<usize>),
    /// `quiver_append_slots`: the plan for the last kinds it saw.
    slots_plan: SlotsPlan,
}

/// What `try_slots_row` (src/writer/slots.rs) found about one `(first,
/// kinds)` of `quiver_append_slots`: the last one it saw, as a producer
/// sends the same kinds row after row.
#[derive(Debug, Default)]
pub(crate) struct SlotsPlan {
    first: usize,
    kinds: Vec<u8>,
    /// The width of each value's column; empty when the kinds do not fill
    /// a row on that path.
    widths: Vec<u8>,
    /// Bit `k`: value `k`'s column takes nulls (nullable, with a bitmap).
    nullable: u64,
}

/// The largest `batch_rows` a writer takes: 2^31 - 1 rows, the most a
/// batch can hold for the many consumers whose lengths are 32-bit.
pub const MAX_BATCH_ROWS: usize = i32::MAX as usize;

/// Rows of capacity reserved up front when a batch starts. With a larger
/// `batch_rows` the buffers grow as rows arrive, and from the second batch on
/// start at what the previous one used; a huge `batch_rows` never becomes one
/// huge up-front allocation.
const RESERVE_ROWS: usize = 1 << 20;

/// Bytes of capacity a batch reserves up front over all its top-level
/// columns: a schema of wide rows (up to `depth::MAX_ROW_BYTES` each)
/// reserves fewer rows than `RESERVE_ROWS` and grows as rows arrive, so
/// that what a schema alone makes a writer allocate stays bounded.
const RESERVE_BYTES: usize = 1 << 26;

/// Bytes one row of top-level column `n` reserves in its own buffers at the
/// start of a batch (a bit of validity counted as a byte).
fn reserved_row_bytes(n: &Node) -> usize {
    n.layout.reserved_value_bytes() + usize::from(n.validity.is_some())
}

/// `open_top` before the batch's first write: no node's `up`.
const NOT_STARTED: usize = usize::MAX - 1;

/// `open_top` under a memory limit: no node's `up` and no node number, so
/// every row-path call takes its full path, which checks the limit.
const LIMITED: usize = usize::MAX - 2;

/// `row_written` when the column path may have written top-level columns.
const ROW_UNKNOWN: usize = 1 << 62;

impl ArrowWriter {
    /// Creates a writer for `schema`. An unsupported type is an `ENOSYS`
    /// error naming the type and the field.
    pub fn create(schema: SchemaRef, options: WriterOptions) -> Result<Self> {
        crate::depth::check_schema(&schema, "create")?;
        if options.batch_rows == 0 || options.batch_rows > MAX_BATCH_ROWS {
            return Err(QuiverError::invalid(format!(
                "create: batch_rows must be between 1 and {MAX_BATCH_ROWS}, got {}",
                options.batch_rows
            )));
        }
        let mut nodes = build_nodes(&schema)?;
        let top = nodes.iter().enumerate().filter(|(_, n)| n.parent.is_none()).map(|(i, _)| i).collect();
        let public = nodes.iter().filter(|n| !n.hidden).count();
        let snapshot = nodes
            .iter()
            .filter(|n| matches!(n.kind(), Kind::Union { .. } | Kind::ListView { .. } | Kind::Encoded { .. }))
            .flat_map(|n| n.children.iter().copied())
            .collect();
        prepare_fast_paths(&mut nodes, options.check_decimal_precision);
        Ok(ArrowWriter {
            schema,
            public,
            #[cfg(debug_assertions)]
            debug_committed: vec![(0, 0); nodes.len()],
            nodes,
            top,
            options,
            rows: 0,
            open: Vec::new(),
            open_top: NOT_STARTED,
            row_written: 0,
            snapshot,
            started: false,
            counters: Counters::default(),
            refused_at: None,
            batches: 0,
            column_scratch: (Vec::new(), Vec::new(), Vec::new()),
            slots_plan: SlotsPlan::default(),
        })
    }

    /// Creates a writer from the text form of a schema (see docs/schema-text.md).
    pub fn from_text(schema: &str, options: WriterOptions) -> Result<Self> {
        Self::create(Arc::new(crate::schema_text::parse_schema(schema)?), options)
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub fn options(&self) -> &WriterOptions {
        &self.options
    }

    /// Committed rows in the current batch.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Whether the current row has values or open nodes not yet committed.
    pub(crate) fn row_pending(&self) -> bool {
        self.started && (!self.open.is_empty() || self.top.iter().any(|&c| self.nodes[c].len != self.rows))
    }

    /// Number of nodes (fields, nested ones included).
    pub fn node_count(&self) -> usize {
        self.public
    }

    /// The node number of a top-level column by name.
    pub fn column_node(&self, name: &str) -> Option<usize> {
        self.top.iter().copied().find(|&i| self.nodes[i].field.name() == name)
    }

    /// The node number of a field by its dotted path (`pt.x`, `tags.item`).
    pub fn node(&self, path: &str) -> Option<usize> {
        self.nodes[..self.public].iter().position(|n| n.path == path)
    }

    pub fn stats(&self) -> WriterStats {
        let bytes_retained =
            self.nodes.iter().flat_map(|n| n.validity.iter().chain(n.layout.slots())).map(Slot::retained_bytes).sum();
        WriterStats {
            batches: self.batches,
            buffers_reused: self.counters.buffers_reused,
            buffers_allocated: self.counters.buffers_allocated,
            bytes_allocated: self.counters.bytes_allocated,
            bytes_retained,
        }
    }

    /// Starts the batch if this is its first write.
    #[inline]
    fn start(&mut self) {
        if !self.started {
            self.start_batch();
        }
    }

    /// The entry of the column path (and of any call outside the row path
    /// that may write top-level columns): starts the batch like `start`, and
    /// makes the next `end_row` check every top-level column, since the
    /// column path writes them without counting.
    #[inline]
    pub(crate) fn ensure_started(&mut self) {
        self.start();
        self.row_written = ROW_UNKNOWN;
    }

    /// Takes the buffers of the new batch: released ones back from the ring,
    /// new ones otherwise (docs/design.md §2 rules 2, 3, 5, 7).
    fn start_batch(&mut self) {
        // Under a memory limit nothing is reserved up front: buffers grow
        // through writes that check the limit.
        let limited = self.options.memory_limit > 0;
        let how = Start { recycle: self.options.recycle, reserve: !limited };
        let row_bytes: usize =
            self.nodes.iter().filter(|n| n.parent.is_none()).map(reserved_row_bytes).sum::<usize>().max(1);
        let cap =
            if limited { 0 } else { self.options.batch_rows.min(RESERVE_ROWS).min((RESERVE_BYTES / row_bytes).max(1)) };
        let counters = &mut self.counters;
        for n in &mut self.nodes {
            let rows = if n.parent.is_none() { cap } else { 0 };
            n.len = 0;
            n.null_count = 0;
            n.committed_len = 0;
            // Lazy validity (`Node::valid_lazy`) until the node's first null;
            // not under a memory limit, where every write is checked anyway.
            n.valid_lazy = n.validity.is_none() || (n.lazy_ok && !limited);
            if let Some(v) = &mut n.validity {
                // A lazy bitmap takes its buffer at the node's first null:
                // a batch without one neither zeroes nor freezes it.
                if n.valid_lazy {
                    v.defer(rows.div_ceil(8), how);
                } else {
                    v.start(rows.div_ceil(8), Fill::ZeroedBits, how, counters);
                }
            }
            n.layout.start(rows, how, counters);
        }
        self.rows = 0;
        self.open.clear();
        self.open_top = if limited { LIMITED } else { NO_OPEN };
        self.row_written = 0;
        #[cfg(debug_assertions)]
        self.debug_committed.iter_mut().for_each(|c| *c = (0, 0));
        self.started = true;
    }

    /// Sets `open_top` from `open` after a push or pop ([`LIMITED`] under
    /// a memory limit).
    #[inline]
    fn sync_open(&mut self) {
        self.open_top =
            if self.options.memory_limit > 0 { LIMITED } else { self.open.last().copied().unwrap_or(NO_OPEN) };
    }

    /// Counts a top-level value of the open row (after a successful write of `node`).
    #[inline]
    fn count_top(&mut self, node: usize) {
        if self.nodes[node].up == NO_OPEN {
            self.row_written += 1;
        }
    }
}
