//! [`ArrowWriter`]: the row path, finishing batches, statistics.

use std::sync::Arc;

use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::{i256, ArrowNativeType};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::{DataType, SchemaRef};

use crate::buffer::{Counters, Fill, Slot};
use crate::encoded::is_container;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::node::{build_nodes, Input, Kind, Node};

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
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { batch_rows: 8192, recycle: true, retain: 3, validate_utf8: true, check_decimal_precision: true }
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
    /// innermost open one" in one test.
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
    let own = match n.kind {
        Kind::Null | Kind::Struct | Kind::FixedList { .. } => 0,
        Kind::Bool => 1,
        Kind::Fixed { width } => width,
        Kind::Encoded { ree: false, index_width } => index_width,
        Kind::Encoded { ree: true, .. } => 0,
        Kind::ListView { .. } => 2 * n.offset_width(),
        Kind::Union { dense } => 1 + 4 * usize::from(dense),
        Kind::View { .. } => 16,
        Kind::Var { .. } | Kind::List { .. } => n.offset_width(),
    };
    own + usize::from(n.validity.is_some())
}

/// `open_top` when no node is open; also the `up` of a top-level column.
pub(crate) const NO_OPEN: usize = usize::MAX;
/// `open_top` before the batch's first write: no node's `up`.
const NOT_STARTED: usize = usize::MAX - 1;
/// `row_written` when the column path may have written top-level columns.
const ROW_UNKNOWN: usize = 1 << 62;

/// Position rules of the fast paths (`Node::rule`), by the parent's kind.
/// A top-level column: its length equals the committed rows.
pub(crate) const RULE_TOP: u8 = 0;
/// A struct field: its length equals the struct's.
pub(crate) const RULE_STRUCT: u8 = 1;
/// An item of a list, large list, map or list view: always free.
pub(crate) const RULE_ANY: u8 = 2;
/// An item of a fixed-size list: fewer than `size` values in the open entry.
pub(crate) const RULE_FIXED: u8 = 3;
/// A union member: the full check.
pub(crate) const RULE_SLOW: u8 = 4;

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
            .filter(|n| matches!(n.kind, Kind::Union { .. } | Kind::ListView { .. } | Kind::Encoded { .. }))
            .flat_map(|n| n.children.iter().copied())
            .collect();
        prepare_fast_paths(&mut nodes, &options);
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
            self.nodes.iter().flat_map(|n| [&n.validity, &n.values, &n.data]).flatten().map(Slot::retained_bytes).sum();
        WriterStats {
            batches: self.batches,
            buffers_reused: self.counters.buffers_reused,
            buffers_allocated: self.counters.buffers_allocated,
            bytes_allocated: self.counters.bytes_allocated,
            bytes_retained,
        }
    }

    // ---- batch start -------------------------------------------------------

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
        let recycle = self.options.recycle;
        let row_bytes: usize =
            self.nodes.iter().filter(|n| n.parent.is_none()).map(reserved_row_bytes).sum::<usize>().max(1);
        let cap = self.options.batch_rows.min(RESERVE_ROWS).min((RESERVE_BYTES / row_bytes).max(1));
        let counters = &mut self.counters;
        for n in &mut self.nodes {
            let rows = if n.parent.is_none() { cap } else { 0 };
            n.len = 0;
            n.null_count = 0;
            n.committed_len = 0;
            if let Some(v) = &mut n.validity {
                v.start(rows.div_ceil(8), Fill::ZeroedBits, recycle, counters);
            }
            let offset_width = n.offset_width();
            if let Some(v) = &mut n.values {
                match n.kind {
                    Kind::Bool => v.start(rows.div_ceil(8), Fill::ZeroedBits, recycle, counters),
                    Kind::Fixed { width } => v.start(rows * width, Fill::Push, recycle, counters),
                    Kind::Encoded { ree: false, index_width } => {
                        v.start(rows * index_width, Fill::Push, recycle, counters)
                    }
                    // Run ends and list-view offsets are offsets: zeroed.
                    Kind::Encoded { ree: true, .. } => v.start(0, Fill::ZeroedPush, recycle, counters),
                    Kind::ListView { .. } => v.start(rows * offset_width, Fill::ZeroedPush, recycle, counters),
                    Kind::Union { .. } => v.start(rows, Fill::Push, recycle, counters),
                    Kind::View { .. } => v.start(rows * 16, Fill::Push, recycle, counters),
                    _ => {
                        v.start((rows + 1) * offset_width, Fill::ZeroedPush, recycle, counters);
                        push_offset(v, offset_width, 0);
                    }
                }
            }
            if let Some(d) = &mut n.data {
                match n.kind {
                    Kind::ListView { .. } => d.start(rows * offset_width, Fill::ZeroedPush, recycle, counters),
                    Kind::Union { .. } => d.start(rows * 4, Fill::ZeroedPush, recycle, counters),
                    _ => d.start(0, Fill::Push, recycle, counters),
                }
            }
            if let Some(e) = &mut n.encoding {
                e.index.clear();
                e.last = None;
            }
        }
        self.rows = 0;
        self.open.clear();
        self.open_top = NO_OPEN;
        self.row_written = 0;
        #[cfg(debug_assertions)]
        self.debug_committed.iter_mut().for_each(|c| *c = (0, 0));
        self.started = true;
    }

    /// Sets `open_top` from `open` after a push or pop.
    #[inline]
    fn sync_open(&mut self) {
        self.open_top = self.open.last().copied().unwrap_or(NO_OPEN);
    }

    /// Counts a top-level value of the open row (after a successful write of `node`).
    #[inline]
    fn count_top(&mut self, node: usize) {
        if self.nodes[node].up == NO_OPEN {
            self.row_written += 1;
        }
    }

    // ---- row path: positions -------------------------------------------------

    /// Checks that `node` may receive its next value now, for `call`.
    #[inline]
    fn target(&mut self, node: usize, call: &str) -> Result<()> {
        self.start();
        let Some(n) = self.nodes[..self.public].get(node) else {
            return Err(self.unknown_node(call, node));
        };
        let ok = match n.parent {
            None => self.open.is_empty() && n.len == self.rows,
            Some(p) => self.open.last() == Some(&p) && self.parent_slot_free(p, n.len),
        };
        if ok {
            Ok(())
        } else {
            Err(self.position_error(node, call))
        }
    }

    fn parent_slot_free(&self, parent: usize, child_len: usize) -> bool {
        let p = &self.nodes[parent];
        match p.kind {
            Kind::Struct => child_len == p.len,
            Kind::List { .. } => true,
            Kind::FixedList { size } => child_len < (p.len + 1) * size,
            Kind::ListView { .. } => true,
            Kind::Union { dense: true } => p.children.iter().map(|&c| self.nodes[c].len).sum::<usize>() == p.open_start,
            Kind::Union { dense: false } => p.children.iter().all(|&c| self.nodes[c].len == p.len),
            _ => false,
        }
    }

    pub(crate) fn unknown_node(&self, call: &str, node: usize) -> QuiverError {
        QuiverError::invalid(format!(
            "{call}: unknown node {node}: the schema has {} nodes (0..{})",
            self.public,
            self.public.saturating_sub(1)
        ))
    }

    #[cold]
    fn position_error(&self, node: usize, call: &str) -> QuiverError {
        let n = &self.nodes[node];
        let what = n.describe(node);
        let msg = match (n.parent, self.open.last()) {
            (None, Some(&o)) => {
                format!("{what} is a top-level column but {} is still open: end it first", self.nodes[o].describe(o))
            }
            (None, None) => {
                format!("{what} already has a value in row {}: call end_row (or abort_row) first", self.rows)
            }
            (Some(p), top) if top != Some(&p) => match top {
                None => format!(
                    "{what} is a child of {}, which is not open: call begin on it first",
                    self.nodes[p].describe(p)
                ),
                Some(&o) => format!(
                    "{what} is a child of {}, but the innermost open node is {}",
                    self.nodes[p].describe(p),
                    self.nodes[o].describe(o)
                ),
            },
            (Some(p), _) => match self.nodes[p].kind {
                Kind::FixedList { size } => format!(
                    "{what}: the open fixed-size list entry of {} already has its {size} values",
                    self.nodes[p].describe(p)
                ),
                _ => format!("{what} already has a value in the open entry of {}", self.nodes[p].describe(p)),
            },
        };
        QuiverError::invalid(format!("{call}: {msg}"))
    }

    #[cold]
    fn wrong_input(&self, node: usize, input: Input) -> QuiverError {
        let n = &self.nodes[node];
        QuiverError::invalid(format!(
            "{}: {}: wrong type: this node takes {}",
            input.name(),
            n.describe(node),
            n.accepted_names()
        ))
    }

    // ---- row path: values ----------------------------------------------------

    /// Appends one fixed-width value given as little-endian bytes of its input type.
    #[inline(never)]
    fn append_le(&mut self, node: usize, input: Input, bytes: &[u8]) -> Result<()> {
        self.target(node, input.name())?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        let n = &self.nodes[dst];
        if !n.accepts(input) {
            return Err(self.wrong_input(node, input));
        }
        if dst != node {
            self.append_encoded(node, |w| w.write_le(dst, input, bytes))?;
        } else {
            self.write_le(dst, input, bytes)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Writes one typed value into the fixed-width or boolean node `dst`.
    #[inline]
    fn write_le(&mut self, dst: usize, input: Input, bytes: &[u8]) -> Result<()> {
        let n = &self.nodes[dst];
        let Kind::Fixed { width } = n.kind else {
            // Only Bool is not fixed among the typed inputs.
            return self.push_bool(dst, bytes[0] != 0);
        };
        if width == bytes.len()
            && (n.decimal_precision.is_none() || !self.options.check_decimal_precision)
            && input != Input::Decimal
        {
            self.push_fixed(dst, bytes);
            return Ok(());
        }
        self.append_converted(dst, input, width, bytes)
    }

    #[cold]
    fn append_converted(&mut self, node: usize, input: Input, width: usize, bytes: &[u8]) -> Result<()> {
        let n = &self.nodes[node];
        if n.decimal_precision.is_some() && n.dec_bound != 0 && (input == Input::I64 || (1..=16).contains(&bytes.len()))
        {
            // Width <= 16: the value and its bound fit an i128.
            let value = if input == Input::I64 {
                i64::from_le_bytes(bytes.try_into().expect("i64 is 8 bytes")) as i128
            } else {
                let fill = if bytes[bytes.len() - 1] & 0x80 != 0 { 0xFF } else { 0 };
                let mut le = [fill; 16];
                le[..bytes.len()].copy_from_slice(bytes);
                i128::from_le_bytes(le)
            };
            if self.options.check_decimal_precision && (value >= n.dec_bound || value <= -n.dec_bound) {
                let precision = n.decimal_precision.expect("decimal node");
                return Err(QuiverError::new(
                    ErrorCode::OutOfRange,
                    format!("{}: {}: value {value} does not fit precision {precision}", input.name(), n.describe(node)),
                ));
            }
            let le = value.to_le_bytes();
            self.push_fixed(node, &le[..width]);
            return Ok(());
        }
        if n.decimal_precision.is_some() {
            let value = decimal_value(input, bytes).ok_or_else(|| {
                QuiverError::invalid(format!(
                    "{}: {}: a decimal takes 1 to 32 little-endian bytes, got {}",
                    input.name(),
                    n.describe(node),
                    bytes.len()
                ))
            })?;
            if self.options.check_decimal_precision {
                self.check_decimal(node, input.name(), value)?;
            }
            let le = value.to_le_bytes();
            self.push_fixed(node, &le[..width]);
            return Ok(());
        }
        if input == Input::F32 && width == 2 {
            let v = f32::from_le_bytes(bytes.try_into().expect("f32 is 4 bytes"));
            self.push_fixed(node, &half::f16::from_f32(v).to_le_bytes());
            return Ok(());
        }
        if input == Input::Bytes {
            return Err(QuiverError::invalid(format!(
                "append_bytes: {}: takes exactly {width} bytes, got {}",
                n.describe(node),
                bytes.len()
            )));
        }
        Err(self.wrong_input(node, input))
    }

    fn check_decimal(&self, node: usize, call: &str, value: i256) -> Result<()> {
        let n = &self.nodes[node];
        let precision = n.decimal_precision.expect("decimal node");
        let limit = i256::from_i128(10).wrapping_pow(precision as u32);
        if value >= limit || value <= limit.wrapping_neg() {
            return Err(QuiverError::new(
                ErrorCode::OutOfRange,
                format!("{call}: {}: value {value} does not fit precision {precision}", n.describe(node)),
            ));
        }
        Ok(())
    }

    #[inline]
    fn push_fixed(&mut self, node: usize, bytes: &[u8]) {
        let n = &mut self.nodes[node];
        n.values.as_mut().expect("fixed node has values").buf.extend_from_slice(bytes);
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
        }
        n.len += 1;
    }

    fn push_bool(&mut self, node: usize, value: bool) -> Result<()> {
        let n = &mut self.nodes[node];
        let values = n.values.as_mut().expect("bool node has values");
        if value {
            values.set_bit(n.len);
        } else {
            values.ensure_bits(n.len + 1);
        }
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    // ---- row path: fast paths ---------------------------------------------------
    //
    // The common cases take an inlined path: a public node at its expected
    // position (`at_slot`, the checks of `target`), of a kind written without
    // conversion. Anything else, errors included, goes through the full path
    // (`target`, then the writes above), which makes the same checks again and
    // gives the message.

    /// Whether node `n` may take its next value now: what `target` checks,
    /// for the parents the fast paths know. Never true for a hidden node (its
    /// parent is an encoded node: `RULE_SLOW`), so the fast paths need no
    /// `public` bound.
    #[inline(always)]
    fn at_slot(&self, n: &Node) -> bool {
        // `up == open_top`: started, and the innermost open node is the
        // parent (none, for a top-level column).
        if n.up != self.open_top {
            return false;
        }
        if n.rule == RULE_TOP {
            return n.len == self.rows;
        }
        self.child_slot_free(n)
    }

    /// `at_slot` for a child whose parent is the innermost open node.
    #[inline(always)]
    fn child_slot_free(&self, n: &Node) -> bool {
        let p = &self.nodes[n.up];
        if n.rule == RULE_STRUCT {
            return n.len == p.len;
        }
        if n.rule == RULE_ANY {
            return true;
        }
        n.rule == RULE_FIXED && matches!(p.kind, Kind::FixedList { size } if n.len < (p.len + 1) * size)
    }

    /// The public node `node` if it takes `input` on the fast path and may
    /// take its next value now.
    #[inline(always)]
    fn fast_node(&self, node: usize, input: Input) -> Option<&Node> {
        let n = self.nodes.get(node)?;
        (n.fast == input as u8 && self.at_slot(n)).then_some(n)
    }

    /// The fast path of the typed appends: writes `v` and returns true when
    /// `node` takes `input` natively at its position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_native<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> bool {
        if self.fast_node(node, input).is_none() {
            return false;
        }
        self.push_native(node, v);
        true
    }

    /// The fast path of `append_decimal` (decimal128 within its precision).
    #[inline(always)]
    pub(crate) fn try_decimal(&mut self, node: usize, unscaled: i128) -> bool {
        match self.fast_node(node, Input::Decimal) {
            Some(n) if n.dec_lo <= unscaled && unscaled <= n.dec_hi => {
                self.push_native(node, unscaled);
                true
            }
            _ => false,
        }
    }

    /// Writes `v` as the next value of fixed-width `node` (checked by `fast_node`).
    #[inline(always)]
    fn push_native<T: ArrowNativeType>(&mut self, node: usize, v: T) {
        let n = &mut self.nodes[node];
        debug_assert_eq!(n.kind, Kind::Fixed { width: std::mem::size_of::<T>() });
        // Capacity for the batch's rows is reserved at its start (top-level
        // columns); `push` grows only past that.
        n.values.as_mut().expect("fixed node has values").buf.push(v);
        if let Some(valid) = &mut n.validity {
            set_valid(valid, n.len);
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
    }

    pub fn append_bool(&mut self, node: usize, v: bool) -> Result<()> {
        self.append_le(node, Input::Bool, &[v as u8])
    }
    #[inline(always)]
    pub fn append_i8(&mut self, node: usize, v: i8) -> Result<()> {
        if self.try_native(node, Input::I8, v) {
            return Ok(());
        }
        self.append_le(node, Input::I8, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_i16(&mut self, node: usize, v: i16) -> Result<()> {
        if self.try_native(node, Input::I16, v) {
            return Ok(());
        }
        self.append_le(node, Input::I16, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_i32(&mut self, node: usize, v: i32) -> Result<()> {
        if self.try_native(node, Input::I32, v) {
            return Ok(());
        }
        self.append_le(node, Input::I32, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_i64(&mut self, node: usize, v: i64) -> Result<()> {
        if self.try_native(node, Input::I64, v) {
            return Ok(());
        }
        self.append_le(node, Input::I64, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_u8(&mut self, node: usize, v: u8) -> Result<()> {
        if self.try_native(node, Input::U8, v) {
            return Ok(());
        }
        self.append_le(node, Input::U8, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_u16(&mut self, node: usize, v: u16) -> Result<()> {
        if self.try_native(node, Input::U16, v) {
            return Ok(());
        }
        self.append_le(node, Input::U16, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_u32(&mut self, node: usize, v: u32) -> Result<()> {
        if self.try_native(node, Input::U32, v) {
            return Ok(());
        }
        self.append_le(node, Input::U32, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_u64(&mut self, node: usize, v: u64) -> Result<()> {
        if self.try_native(node, Input::U64, v) {
            return Ok(());
        }
        self.append_le(node, Input::U64, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_f32(&mut self, node: usize, v: f32) -> Result<()> {
        if self.try_native(node, Input::F32, v) {
            return Ok(());
        }
        self.append_le(node, Input::F32, &v.to_le_bytes())
    }
    #[inline(always)]
    pub fn append_f64(&mut self, node: usize, v: f64) -> Result<()> {
        if self.try_native(node, Input::F64, v) {
            return Ok(());
        }
        self.append_le(node, Input::F64, &v.to_le_bytes())
    }
    /// A float16 value (also takes `append_f32`, rounded, and `append_u16`, raw bits).
    #[inline(always)]
    pub fn append_f16(&mut self, node: usize, v: half::f16) -> Result<()> {
        if self.try_native(node, Input::U16, v) {
            return Ok(());
        }
        self.append_le(node, Input::U16, &v.to_le_bytes())
    }
    /// A decimal's unscaled value as little-endian two's complement bytes
    /// (1 to 32 bytes, sign-extended). Over the precision: `ERANGE`.
    #[inline(always)]
    pub fn append_decimal_bytes(&mut self, node: usize, le_bytes: &[u8]) -> Result<()> {
        if let Ok(b) = <[u8; 16]>::try_from(le_bytes) {
            return self.append_decimal(node, i128::from_le_bytes(b));
        }
        self.append_le(node, Input::Decimal, le_bytes)
    }
    /// A decimal's unscaled value. Over the precision: `ERANGE`.
    #[inline(always)]
    pub fn append_decimal(&mut self, node: usize, unscaled: i128) -> Result<()> {
        if self.try_decimal(node, unscaled) {
            return Ok(());
        }
        self.append_le(node, Input::Decimal, &unscaled.to_le_bytes())
    }
    /// A decimal256's unscaled value. Over the precision: `ERANGE`.
    pub fn append_decimal256(&mut self, node: usize, unscaled: i256) -> Result<()> {
        self.append_le(node, Input::Decimal, &unscaled.to_le_bytes())
    }

    /// A string (a `&str` is UTF-8 already: not checked again).
    #[inline(always)]
    pub fn append_str(&mut self, node: usize, v: &str) -> Result<()> {
        if self.try_bytes(node, v.as_bytes(), true) {
            return Ok(());
        }
        self.append_bytes_full(node, v.as_bytes())
    }

    /// Bytes of a utf8, binary, their large forms, or fixed-size binary (exact
    /// width), or the raw little-endian bytes of a day-time / month-day-nano
    /// interval.
    #[inline(always)]
    pub fn append_bytes(&mut self, node: usize, v: &[u8]) -> Result<()> {
        if self.try_bytes(node, v, false) {
            return Ok(());
        }
        self.append_bytes_full(node, v)
    }

    /// The fast path of `append_bytes` (variable-width nodes; `is_utf8`: known
    /// valid): false, having written nothing, when it does not apply or the
    /// value is refused.
    #[inline(always)]
    pub(crate) fn try_bytes(&mut self, node: usize, v: &[u8], is_utf8: bool) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        let Kind::Var { large, utf8 } = n.kind else { return false };
        if !self.at_slot(n) || (utf8 && !is_utf8 && self.options.validate_utf8 && !valid_utf8(v)) {
            return false;
        }
        let n = &mut self.nodes[node];
        let data = n.data.as_mut().expect("var node has data");
        let end = data.buf.len() + v.len();
        if !large && end > i32::MAX as usize {
            return false;
        }
        data.buf.extend_from_slice(v);
        push_offset(n.values.as_mut().expect("var node has offsets"), if large { 8 } else { 4 }, end);
        if let Some(valid) = &mut n.validity {
            set_valid(valid, n.len);
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    #[inline(never)]
    fn append_bytes_full(&mut self, node: usize, v: &[u8]) -> Result<()> {
        self.target(node, "append_bytes")?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        if !self.nodes[dst].accepts(Input::Bytes) {
            return Err(self.wrong_input(node, Input::Bytes));
        }
        if dst != node {
            self.append_encoded(node, |w| w.write_bytes(dst, v))?;
        } else {
            self.write_bytes(dst, v)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Writes one byte-string value into the variable-width, view or
    /// fixed-width node `dst`.
    fn write_bytes(&mut self, dst: usize, v: &[u8]) -> Result<()> {
        let n = &self.nodes[dst];
        let (large, utf8) = match n.kind {
            Kind::Var { large, utf8 } => (large, utf8),
            Kind::View { utf8 } => (false, utf8),
            _ => return self.write_le(dst, Input::Bytes, v),
        };
        if utf8 && self.options.validate_utf8 {
            if let Err(e) = std::str::from_utf8(v) {
                return Err(QuiverError::invalid(format!(
                    "append_bytes: {}: invalid UTF-8 at byte {}",
                    n.describe(dst),
                    e.valid_up_to()
                )));
            }
        }
        if let Kind::View { .. } = n.kind {
            return self.push_view(dst, v);
        }
        let n = &mut self.nodes[dst];
        let data = n.data.as_mut().expect("var node has data");
        let end = data.buf.len() + v.len();
        if !large && end > i32::MAX as usize {
            let what = n.describe(dst);
            return Err(overflow("append_bytes", &what, end));
        }
        data.buf.extend_from_slice(v);
        let width = if large { 8 } else { 4 };
        push_offset(n.values.as_mut().expect("var node has offsets"), width, end);
        if let Some(valid) = &mut n.validity {
            valid.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// A null. On a struct or fixed-size list its children get null, zeroed
    /// values. A non-nullable node refuses it (`EINVAL`).
    #[inline(always)]
    pub fn append_null(&mut self, node: usize) -> Result<()> {
        if self.try_null(node) {
            return Ok(());
        }
        self.append_null_full(node)
    }

    /// The fast path of `append_null`: nullable fixed-width, variable-width
    /// and list nodes at their position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_null(&mut self, node: usize) -> bool {
        match self.nodes.get(node) {
            Some(n) if n.null_fast && self.at_slot(n) => {}
            _ => return false,
        }
        let n = &mut self.nodes[node];
        let width = n.offset_width();
        let values = n.values.as_mut().expect("node has values or offsets");
        match n.kind {
            Kind::Fixed { width } => push_zeros(values, width),
            _ => push_offset(values, width, last_offset(values, width)),
        }
        // Bits past the length are clear: the null's bit is.
        n.validity.as_mut().expect("nullable node has validity").ensure_bits(n.len + 1);
        n.null_count += 1;
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    #[inline(never)]
    fn append_null_full(&mut self, node: usize) -> Result<()> {
        self.target(node, "append_null")?;
        let n = &self.nodes[node];
        if !n.nullable && n.kind != Kind::Null {
            return Err(QuiverError::invalid(format!("append_null: {} is not nullable", n.describe(node))));
        }
        if let (Kind::Union { .. }, Some(&first)) = (n.kind, n.children.first()) {
            // A null union value: a null of its first member.
            if !self.nodes[first].nullable {
                return Err(QuiverError::invalid(format!(
                    "append_null: {}: its first member {} is not nullable; append a null inside begin/end",
                    n.describe(node),
                    self.nodes[first].describe(first)
                )));
            }
        }
        self.fill_null(node, 1);
        self.count_top(node);
        Ok(())
    }

    /// Writes `count` null (or, for a non-nullable node under a null parent,
    /// zero) values into `node` and its children.
    pub(crate) fn fill_null(&mut self, node: usize, count: usize) {
        match self.nodes[node].kind {
            Kind::Encoded { .. } => return self.fill_null_encoded(node, count),
            Kind::Union { .. } => return self.fill_null_union(node, count),
            _ => {}
        }
        let n = &mut self.nodes[node];
        let len = n.len;
        if let Some(v) = &mut n.validity {
            v.ensure_bits(len + count);
            n.null_count += count;
        }
        let width = n.offset_width();
        match n.kind {
            Kind::Null => n.null_count += count,
            Kind::Bool => n.values.as_mut().expect("bool values").ensure_bits(len + count),
            Kind::Fixed { width } => n.values.as_mut().expect("fixed values").buf.extend_zeros(count * width),
            Kind::Var { .. } | Kind::List { .. } => {
                let offsets = n.values.as_mut().expect("offsets");
                let last = last_offset(offsets, width);
                for _ in 0..count {
                    push_offset(offsets, width, last);
                }
            }
            Kind::FixedList { size } => {
                let child = n.children[0];
                n.len += count;
                self.fill_null(child, count * size);
                return;
            }
            Kind::Struct => {
                n.len += count;
                for i in 0..self.nodes[node].children.len() {
                    let child = self.nodes[node].children[i];
                    self.fill_null(child, count);
                }
                return;
            }
            Kind::View { .. } => n.values.as_mut().expect("views").buf.extend_zeros(count * 16),
            Kind::ListView { .. } => {
                n.values.as_mut().expect("list-view offsets").buf.extend_zeros(count * width);
                n.data.as_mut().expect("list-view sizes").buf.extend_zeros(count * width);
            }
            Kind::Union { .. } | Kind::Encoded { .. } => unreachable!("handled above"),
        }
        n.len += count;
    }

    /// Starts one list, large list, fixed-size list, struct or map value.
    #[inline(always)]
    pub fn begin(&mut self, node: usize) -> Result<()> {
        if self.try_begin(node) {
            return Ok(());
        }
        self.begin_full(node)
    }

    /// The fast path of `begin`: a struct, list or fixed-size list at its
    /// position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_begin(&mut self, node: usize) -> bool {
        match self.nodes.get(node) {
            Some(n)
                if matches!(n.kind, Kind::Struct | Kind::List { .. } | Kind::FixedList { .. }) && self.at_slot(n) => {}
            _ => return false,
        }
        self.nodes[node].open_start = 0;
        self.open.push(node);
        self.open_top = node;
        true
    }

    #[inline(never)]
    fn begin_full(&mut self, node: usize) -> Result<()> {
        self.target(node, "begin")?;
        let n = &self.nodes[node];
        let dst = n.value_node.unwrap_or(node);
        if !is_container(self.nodes[dst].kind) {
            return Err(QuiverError::invalid(format!(
                "begin: {} is not a list, struct, map or union",
                n.describe(node)
            )));
        }
        if dst != node {
            self.snapshot_values(node);
        }
        let d = &self.nodes[dst];
        let start = match d.kind {
            Kind::ListView { .. } => self.nodes[d.children[0]].len,
            Kind::Union { .. } => d.children.iter().map(|&c| self.nodes[c].len).sum(),
            _ => 0,
        };
        self.nodes[dst].open_start = start;
        if let Kind::Union { .. } = self.nodes[dst].kind {
            let lens = self.nodes[dst].children.iter().map(|&c| self.nodes[c].len).collect();
            self.nodes[dst].open_lens = lens;
        }
        self.open.push(dst);
        self.sync_open();
        Ok(())
    }

    /// Ends the value `begin(node)` started; `node` must be the innermost open node.
    #[inline(always)]
    pub fn end(&mut self, node: usize) -> Result<()> {
        if self.try_end(node) {
            return Ok(());
        }
        self.end_full(node)
    }

    /// The fast path of `end`: the innermost open node, a complete struct or
    /// list value; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_end(&mut self, node: usize) -> bool {
        if node != self.open_top || node >= self.public || !self.end_fast(node) {
            return false;
        }
        self.open.pop();
        self.sync_open();
        if self.nodes[node].up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    /// Ends the open struct or list value of `node` (the innermost open node,
    /// not encoded) when complete; false, having changed nothing, otherwise.
    #[inline(always)]
    fn end_fast(&mut self, node: usize) -> bool {
        let n = &self.nodes[node];
        match n.kind {
            Kind::Struct => {
                if !n.children.iter().all(|&c| self.nodes[c].len == n.len + 1) {
                    return false;
                }
            }
            Kind::List { large } => {
                let child_len = self.nodes[n.children[0]].len;
                if !large && child_len > i32::MAX as usize {
                    return false;
                }
                let n = &mut self.nodes[node];
                push_offset(n.values.as_mut().expect("list offsets"), if large { 8 } else { 4 }, child_len);
            }
            _ => return false,
        }
        let n = &mut self.nodes[node];
        if let Some(v) = &mut n.validity {
            set_valid(v, n.len);
        }
        n.len += 1;
        true
    }

    #[inline(never)]
    fn end_full(&mut self, node: usize) -> Result<()> {
        self.start();
        if node >= self.public {
            return Err(self.unknown_node("end", node));
        }
        let dst = self.nodes[node].value_node.unwrap_or(node);
        if self.open.last() != Some(&dst) {
            let n = &self.nodes[node];
            let msg = match self.open.last() {
                None => format!("end: {} was not begun (no node is open)", n.describe(node)),
                Some(&o) => format!(
                    "end: {} is not the innermost open node ({} is)",
                    n.describe(node),
                    self.nodes[o].describe(o)
                ),
            };
            return Err(QuiverError::invalid(msg));
        }
        self.end_value(dst)?;
        self.open.pop();
        self.sync_open();
        if dst != node {
            self.commit_encoded(node)?;
        }
        if self.open.is_empty() {
            self.count_top(node);
        }
        Ok(())
    }

    /// Completes the open value of container `node`: checks, offsets, validity.
    fn end_value(&mut self, node: usize) -> Result<()> {
        let n = &self.nodes[node];
        match n.kind {
            Kind::Struct => {
                if let Some(&missing) = n.children.iter().find(|&&c| self.nodes[c].len != n.len + 1) {
                    return Err(QuiverError::invalid(format!(
                        "end: struct {} has no value for child {}",
                        n.describe(node),
                        self.nodes[missing].describe(missing)
                    )));
                }
            }
            Kind::FixedList { size } => {
                let have = self.nodes[n.children[0]].len - n.len * size;
                if have != size {
                    return Err(QuiverError::invalid(format!(
                        "end: fixed-size list {} needs {size} values, got {have}",
                        n.describe(node)
                    )));
                }
            }
            Kind::Union { .. } => return self.end_union(node),
            Kind::ListView { .. } => self.end_list_view(node)?,
            _ => {
                let child_len = self.nodes[n.children[0]].len;
                let width = n.offset_width();
                if width == 4 && child_len > i32::MAX as usize {
                    return Err(overflow("end", &n.describe(node), child_len));
                }
                let n = &mut self.nodes[node];
                push_offset(n.values.as_mut().expect("list offsets"), width, child_len);
            }
        }
        let n = &mut self.nodes[node];
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// Commits the row: every top-level column must have one value and no
    /// node may be open.
    #[inline(always)]
    pub fn end_row(&mut self) -> Result<()> {
        if self.try_end_row() {
            return Ok(());
        }
        self.end_row_checked()
    }

    /// The fast path of `end_row`: every top-level column counted, nothing
    /// open; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_end_row(&mut self) -> bool {
        // `open_top == NO_OPEN`: started and nothing open.
        if self.row_written != self.top.len() || self.open_top != NO_OPEN {
            return false;
        }
        debug_assert!(self.top.iter().all(|&c| self.nodes[c].len == self.rows + 1), "row counter out of step");
        self.rows += 1;
        self.commit();
        true
    }

    /// `end_row` with every top-level column checked.
    #[inline(never)]
    fn end_row_checked(&mut self) -> Result<()> {
        self.start();
        if let Some(&o) = self.open.last() {
            return Err(QuiverError::invalid(format!(
                "end_row: {} is still open: end it first",
                self.nodes[o].describe(o)
            )));
        }
        if let Some(&missing) = self.top.iter().find(|&&c| self.nodes[c].len != self.rows + 1) {
            return Err(QuiverError::invalid(format!(
                "end_row: row {} has no value for {}",
                self.rows,
                self.nodes[missing].describe(missing)
            )));
        }
        self.rows += 1;
        self.commit();
        Ok(())
    }

    /// Makes the current lengths the committed state; called once every
    /// top-level column has `rows` values and nothing is open. Only the
    /// nodes in `snapshot` record their length: a top-level column's
    /// committed length is `rows`, a struct field's its struct's, a
    /// fixed-size list item's `size` times its list's, a list item's the
    /// list's last offset; null counts follow from the validity bits
    /// (`restore_committed`).
    #[inline]
    pub(crate) fn commit(&mut self) {
        self.row_written = 0;
        for &i in &self.snapshot {
            let n = &mut self.nodes[i];
            n.committed_len = n.len;
        }
        #[cfg(debug_assertions)]
        for (c, n) in self.debug_committed.iter_mut().zip(&self.nodes) {
            *c = (n.len, n.null_count);
        }
    }

    /// Drops the uncommitted part of the row (values, open begins); the
    /// committed rows are untouched.
    pub fn abort_row(&mut self) -> Result<()> {
        self.start();
        self.open.clear();
        self.sync_open();
        let rows = self.rows;
        for i in 0..self.top.len() {
            let c = self.top[i];
            self.restore_committed(c, rows);
        }
        for i in 0..self.nodes.len() {
            if self.nodes[i].encoding.is_some() {
                self.repair_encoded(i);
            }
        }
        self.row_written = 0;
        #[cfg(debug_assertions)]
        for (i, (c, n)) in self.debug_committed.iter().zip(&self.nodes).enumerate() {
            assert_eq!(*c, (n.len, n.null_count), "abort_row: node {i} not restored to its committed (len, nulls)");
        }
        Ok(())
    }

    /// Cuts `node` back to its committed length `len`, then its children to
    /// theirs (see `commit`). Encoded nodes are repaired by the caller.
    fn restore_committed(&mut self, node: usize, len: usize) {
        let n = &self.nodes[node];
        debug_assert!(len <= n.len, "committed length past the current one");
        if len < n.len {
            let nulls = n.null_count - self.nulls_in(node, len, n.len);
            self.truncate_node(node, len, nulls);
        }
        let n = &self.nodes[node];
        match n.kind {
            Kind::Struct => {
                for i in 0..n.children.len() {
                    let c = self.nodes[node].children[i];
                    self.restore_committed(c, len);
                }
            }
            Kind::FixedList { size } => self.restore_committed(n.children[0], len * size),
            Kind::List { .. } => {
                let end = last_offset(n.values.as_ref().expect("list offsets"), n.offset_width());
                self.restore_committed(n.children[0], end);
            }
            Kind::Union { .. } | Kind::ListView { .. } | Kind::Encoded { .. } => {
                for i in 0..n.children.len() {
                    let c = self.nodes[node].children[i];
                    self.restore_committed(c, self.nodes[c].committed_len);
                }
            }
            _ => {}
        }
    }

    /// Nulls among values `from..to` of `node`: its zero validity bits (a
    /// node's null count is the number of zero bits below its length), all
    /// of them for a null-type node, none for a node without validity.
    fn nulls_in(&self, node: usize, from: usize, to: usize) -> usize {
        let n = &self.nodes[node];
        match &n.validity {
            Some(v) => {
                let covered = to.min(v.buf.len() * 8).max(from);
                let set =
                    arrow_buffer::bit_chunk_iterator::UnalignedBitChunk::new(v.buf.as_slice(), from, covered - from)
                        .count_ones();
                (to - from) - set
            }
            None if n.kind == Kind::Null => to - from,
            None => 0,
        }
    }

    /// Cuts each of `nodes` back to its `(len, nulls)`, then repairs the
    /// encoded nodes among them.
    pub(crate) fn truncate_nodes(&mut self, nodes: &[usize], to: &[(usize, usize)]) {
        for (&i, &(len, nulls)) in nodes.iter().zip(to) {
            self.truncate_node(i, len, nulls);
        }
        for &i in nodes {
            if self.nodes[i].encoding.is_some() {
                self.repair_encoded(i);
            }
        }
    }

    /// Undoes a refused write into `nodes`: cuts each back to its `(len,
    /// nulls)` from before the write, as `truncate_nodes` does, after clearing
    /// the validity (and boolean value) bits past each node's current length.
    /// A nested copy writes a parent's validity bits, null count and offsets
    /// before the parent's length moves (its children are copied in between),
    /// so when a child refuses its values, those lie past the length: the
    /// bits are cleared here, the offsets and the null count by `truncate_node`.
    pub(crate) fn rollback_nodes(&mut self, nodes: &[usize], to: &[(usize, usize)]) {
        for &i in nodes {
            let n = &mut self.nodes[i];
            let len = n.len;
            if let Some(v) = &mut n.validity {
                v.clear_bits_from(len);
            }
            if let (Kind::Bool, Some(v)) = (n.kind, &mut n.values) {
                v.clear_bits_from(len);
            }
        }
        self.truncate_nodes(nodes, to);
    }

    /// Cuts `node` back to `len` values with `nulls` nulls: its buffers end
    /// where `len` values end, even when `len` is its current length (a
    /// refused copy may have written offsets or values past it).
    pub(crate) fn truncate_node(&mut self, node: usize, len: usize, nulls: usize) {
        let n = &mut self.nodes[node];
        let width = n.offset_width();
        if let Some(v) = &mut n.validity {
            v.clear_bits(len, n.len);
        }
        match n.kind {
            Kind::Bool => n.values.as_mut().expect("bool values").clear_bits(len, n.len),
            Kind::Fixed { width } => n.values.as_mut().expect("fixed values").buf.truncate(len * width),
            Kind::Var { .. } | Kind::List { .. } => {
                let offsets = n.values.as_mut().expect("offsets");
                offsets.buf.truncate((len + 1) * width);
                let end = last_offset(offsets, width);
                if let Some(d) = &mut n.data {
                    d.buf.truncate(end);
                }
            }
            Kind::View { .. } => {
                n.values.as_mut().expect("views").buf.truncate(len * 16);
                let end = crate::layouts::view_data_end(n.values.as_ref().expect("views"), len);
                n.data.as_mut().expect("view data").buf.truncate(end);
            }
            Kind::ListView { .. } => {
                n.values.as_mut().expect("list-view offsets").buf.truncate(len * width);
                n.data.as_mut().expect("list-view sizes").buf.truncate(len * width);
            }
            Kind::Union { dense } => {
                n.values.as_mut().expect("type ids").buf.truncate(len);
                if dense {
                    n.data.as_mut().expect("union offsets").buf.truncate(len * 4);
                }
            }
            // Run ends are repaired by repair_encoded.
            Kind::Encoded { ree: false, index_width } => {
                n.values.as_mut().expect("keys").buf.truncate(len * index_width)
            }
            _ => {}
        }
        n.len = len;
        n.null_count = nulls;
    }

    // ---- finish --------------------------------------------------------------

    /// The committed rows as a record batch; the writer starts the next batch
    /// (lazily, at its first write). An incomplete row is an error and stays.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        self.start();
        if let Some(&o) = self.open.last() {
            return Err(QuiverError::invalid(format!(
                "finish: row {} is incomplete: {} is still open; end_row or abort_row first",
                self.rows,
                self.nodes[o].describe(o)
            )));
        }
        if let Some(&c) = self.top.iter().find(|&&c| self.nodes[c].len != self.rows) {
            return Err(QuiverError::invalid(format!(
                "finish: row {} is incomplete: {} has {} values for {} committed rows; end_row or abort_row first",
                self.rows,
                self.nodes[c].describe(c),
                self.nodes[c].len,
                self.rows
            )));
        }
        let columns: Vec<ArrayRef> = self.top.clone().into_iter().map(|c| make_array(self.freeze(c))).collect();
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        let batch = RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)?;
        self.started = false;
        self.open_top = NOT_STARTED;
        self.rows = 0;
        self.batches += 1;
        Ok(batch)
    }

    /// Freezes the buffers of `node` and its children into array data.
    fn freeze(&mut self, node: usize) -> ArrayData {
        let child_data: Vec<ArrayData> =
            self.nodes[node].children.clone().into_iter().map(|c| self.freeze(c)).collect();
        let (recycle, retain) = (self.options.recycle, self.options.retain);
        let runs = self.nodes[node].value_node.map_or(0, |v| self.nodes[v].len);
        let counters = &mut self.counters;
        let n = &mut self.nodes[node];
        let len = n.len;
        let width = n.offset_width();
        let nulls = n.validity.as_mut().map(|v| v.finish(len.div_ceil(8), recycle, retain, counters));
        let mut buffers = Vec::with_capacity(2);
        if let Some(v) = &mut n.values {
            let (values_bytes, data_bytes) = match n.kind {
                Kind::Bool => (len.div_ceil(8), 0),
                Kind::Fixed { width } => (len * width, 0),
                Kind::View { .. } => (len * 16, n.data.as_ref().map_or(0, |d| d.buf.len())),
                Kind::ListView { .. } => (len * width, len * width),
                Kind::Union { .. } => (len, len * 4),
                Kind::Encoded { ree: false, index_width } => (len * index_width, 0),
                Kind::Encoded { ree: true, index_width } => (runs * index_width, 0),
                _ => ((len + 1) * width, if n.data.is_some() { last_offset(v, width) } else { 0 }),
            };
            buffers.push(v.finish(values_bytes, recycle, retain, counters));
            if let Some(d) = &mut n.data {
                buffers.push(d.finish(data_bytes, recycle, retain, counters));
            }
        }
        let mut child_data = child_data;
        if let DataType::RunEndEncoded(run_ends, _) = n.field.data_type() {
            let run_ends =
                ArrayDataBuilder::new(run_ends.data_type().clone()).len(runs).buffers(std::mem::take(&mut buffers));
            // SAFETY: run ends are increasing, one per value of the value node.
            child_data.insert(0, unsafe { run_ends.build_unchecked() });
        }
        let data_type: DataType = n.field.data_type().clone();
        let null_count = if n.kind == Kind::Null { len } else { n.null_count };
        let builder = ArrayDataBuilder::new(data_type)
            .len(len)
            .null_count(null_count)
            .null_bit_buffer(nulls.filter(|_| n.null_count > 0))
            .buffers(buffers)
            .child_data(child_data);
        // SAFETY: the writer built every buffer for this type: lengths, offsets
        // (monotonic, within the data), validity and null counts agree, children
        // have the lengths their parents address. Tests run `validate_full`.
        unsafe { builder.build_unchecked() }
    }
}

/// Sets each node's `up`, `rule` and fast-path inputs (see `Node`).
fn prepare_fast_paths(nodes: &mut [Node], options: &WriterOptions) {
    for n in nodes.iter_mut() {
        if let (Kind::Fixed { width }, Some(p)) = (n.kind, n.decimal_precision) {
            if width <= 16 && p <= 38 {
                n.dec_bound = 10i128.pow(p as u32);
                if width == 16 {
                    n.fast = Input::Decimal as u8;
                    (n.dec_lo, n.dec_hi) = if options.check_decimal_precision {
                        (1 - n.dec_bound, n.dec_bound - 1)
                    } else {
                        (i128::MIN, i128::MAX)
                    };
                }
            }
        }
        if let Kind::Fixed { width } = n.kind {
            // The input whose native width is the node's, if it takes one
            // (float16 takes f32 too, converted: not on the fast path).
            let native = [
                Input::I8,
                Input::U8,
                Input::I16,
                Input::U16,
                Input::I32,
                Input::U32,
                Input::F32,
                Input::I64,
                Input::U64,
                Input::F64,
            ]
            .into_iter()
            .find(|&i| n.accepts(i) && native_width(i) == width);
            if let (Some(input), None) = (native, n.decimal_precision) {
                n.fast = input as u8;
            }
        }
        n.null_fast = n.nullable
            && n.validity.is_some()
            && matches!(n.kind, Kind::Fixed { .. } | Kind::Var { .. } | Kind::List { .. });
    }
    for i in 0..nodes.len() {
        let (up, rule) = match nodes[i].parent {
            None => (NO_OPEN, RULE_TOP),
            Some(p) => (
                p,
                match nodes[p].kind {
                    Kind::Struct => RULE_STRUCT,
                    Kind::List { .. } | Kind::ListView { .. } => RULE_ANY,
                    Kind::FixedList { .. } => RULE_FIXED,
                    _ => RULE_SLOW,
                },
            ),
        };
        nodes[i].up = up;
        nodes[i].rule = rule;
        debug_assert!(!nodes[i].hidden || rule == RULE_SLOW, "a hidden node is never written through the fast paths");
    }
}

fn native_width(input: Input) -> usize {
    match input {
        Input::I8 | Input::U8 => 1,
        Input::I16 | Input::U16 => 2,
        Input::I32 | Input::U32 | Input::F32 => 4,
        Input::I64 | Input::U64 | Input::F64 => 8,
        _ => 0,
    }
}

/// Whether `v` is UTF-8: ASCII first (word at a time), the full check otherwise.
#[inline(always)]
fn valid_utf8(v: &[u8]) -> bool {
    v.is_ascii() || std::str::from_utf8(v).is_ok()
}

/// Sets validity bit `i` (growing the bitmap if needed: nested nodes).
#[inline(always)]
fn set_valid(valid: &mut Slot, i: usize) {
    match valid.buf.as_slice_mut().get_mut(i >> 3) {
        Some(byte) => *byte |= 1 << (i & 7),
        None => valid.set_bit(i),
    }
}

/// Pushes one zero value of `width` bytes.
#[inline(always)]
fn push_zeros(values: &mut Slot, width: usize) {
    match width {
        1 => values.buf.push(0u8),
        2 => values.buf.push(0u16),
        4 => values.buf.push(0u32),
        8 => values.buf.push(0u64),
        16 => values.buf.push(0i128),
        _ => values.buf.extend_zeros(width),
    }
}

#[inline]
pub(crate) fn push_offset(offsets: &mut Slot, width: usize, value: usize) {
    if width == 8 {
        offsets.buf.push(value as i64);
    } else {
        offsets.buf.push(value as i32);
    }
}

#[inline]
pub(crate) fn last_offset(offsets: &Slot, width: usize) -> usize {
    let b = offsets.buf.as_slice();
    let at = b.len() - width;
    if width == 8 {
        i64::from_le_bytes(b[at..].try_into().expect("8 bytes")) as usize
    } else {
        i32::from_le_bytes(b[at..].try_into().expect("4 bytes")) as usize
    }
}

pub(crate) fn overflow(call: &str, what: &str, end: usize) -> QuiverError {
    QuiverError::new(
        ErrorCode::Overflow,
        format!("{call}: {what}: the batch would need offset {end}, past 2^31-1; finish this batch and write the value into the next"),
    )
}

/// The unscaled value of a decimal append, sign-extended to 256 bits.
fn decimal_value(input: Input, bytes: &[u8]) -> Option<i256> {
    if input == Input::I64 {
        return Some(i256::from_i128(i64::from_le_bytes(bytes.try_into().ok()?) as i128));
    }
    if bytes.is_empty() || bytes.len() > 32 {
        return None;
    }
    let fill = if bytes[bytes.len() - 1] & 0x80 != 0 { 0xFF } else { 0 };
    let mut le = [fill; 32];
    le[..bytes.len()].copy_from_slice(bytes);
    Some(i256::from_le_bytes(le))
}
