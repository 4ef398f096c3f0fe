//! Row-path positions (may this node take its next value now?), their error
//! messages, and the committed state: commit, `abort_row`, and the
//! truncation and rollback of nodes that both paths use to undo a write.

use crate::error::{QuiverError, Result};
use crate::layout::Layout;
use crate::node::{Input, Kind, Node, Rule, KEY_ANY, KEY_STRUCT, NO_OPEN};

use super::ArrowWriter;
use crate::buffer::offsets::last_offset;

impl ArrowWriter {
    /// Checks that `node` may receive its next value now, for `call`.
    #[inline]
    pub(super) fn target(&mut self, node: usize, call: &str) -> Result<()> {
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

    pub(super) fn parent_slot_free(&self, parent: usize, child_len: usize) -> bool {
        let p = &self.nodes[parent];
        match &p.layout {
            Layout::Struct => child_len == p.len,
            Layout::List { .. } | Layout::ListView { .. } => true,
            Layout::FixedList { size } => child_len < (p.len + 1) * size,
            // Dense: no member has grown since the value began.
            Layout::Union { offsets: Some(_), open_lens, .. } => {
                p.children.iter().map(|&c| self.nodes[c].len).sum::<usize>() == open_lens.iter().sum::<usize>()
            }
            Layout::Union { offsets: None, .. } => p.children.iter().all(|&c| self.nodes[c].len == p.len),
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
    pub(super) fn position_error(&self, node: usize, call: &str) -> QuiverError {
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
            (Some(p), _) => match self.nodes[p].kind() {
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
    pub(super) fn wrong_input(&self, node: usize, input: Input) -> QuiverError {
        let n = &self.nodes[node];
        QuiverError::invalid(format!(
            "{}: {}: wrong type: this node takes {}",
            input.name(),
            n.describe(node),
            n.accepted_names()
        ))
    }

    /// Whether node `n` may take its next value now: what `target` checks,
    /// for the parents the fast paths know. Never true for a hidden node (its
    /// parent is an encoded node: `Rule::Slow`), so the fast paths need no
    /// `public` bound.
    #[inline(always)]
    pub(super) fn at_slot(&self, n: &Node) -> bool {
        // `up == open_top`: started, and the innermost open node is the
        // parent (none, for a top-level column).
        if n.up != self.open_top {
            return false;
        }
        if n.rule == Rule::Top {
            return n.len == self.rows;
        }
        self.child_slot_free(n)
    }

    /// `at_slot` for a child whose parent is the innermost open node.
    #[inline(always)]
    pub(super) fn child_slot_free(&self, n: &Node) -> bool {
        let p = &self.nodes[n.up];
        if n.rule == Rule::Struct {
            return n.len == p.len;
        }
        if n.rule == Rule::Any {
            return true;
        }
        n.rule == Rule::Fixed && matches!(p.layout, Layout::FixedList { size } if n.len < (p.len + 1) * size)
    }

    /// Whether `node` is a top-level column that takes `input` on the fast
    /// path and may take its next value now: `at_slot` and `fast_node` for
    /// the top-level columns in three compares (the key folds the input, the
    /// kind and the position rule into one).
    #[inline(always)]
    pub(super) fn top_fast(&self, node: usize, input: Input) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        if n.top_key != input as u8 + 1 {
            return false;
        }
        // `open_top == NO_OPEN`: started, and nothing open.
        if self.open_top != NO_OPEN {
            return false;
        }
        n.len == self.rows
    }

    /// `top_fast` for a struct field or a list item (by its key,
    /// `Node::top_key`): whether `node` takes `input` on the fast path and
    /// may take its next value now.
    #[inline(always)]
    pub(super) fn keyed_child_slot(&self, node: usize, input: Input) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        let key = input as u8 + 1;
        // `up == open_top`: the parent is the innermost open node.
        if n.top_key == key + KEY_STRUCT {
            return n.up == self.open_top && self.nodes.get(n.up).is_some_and(|p| p.len == n.len);
        }
        n.top_key == key + KEY_ANY && n.up == self.open_top
    }

    /// The public node `node` if it takes `input` on the fast path and may
    /// take its next value now.
    #[inline(always)]
    pub(super) fn fast_node(&self, node: usize, input: Input) -> Option<&Node> {
        let n = self.nodes.get(node)?;
        (n.fast == Some(input) && self.at_slot(n)).then_some(n)
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
            if self.nodes[i].value_node.is_some() {
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
    pub(super) fn restore_committed(&mut self, node: usize, len: usize) {
        let n = &self.nodes[node];
        debug_assert!(len <= n.len, "committed length past the current one");
        if len < n.len {
            let nulls = n.null_count - self.nulls_in(node, len, n.len);
            self.truncate_node(node, len, nulls);
        }
        let n = &self.nodes[node];
        match n.kind() {
            Kind::Struct => {
                for i in 0..n.children.len() {
                    let c = self.nodes[node].children[i];
                    self.restore_committed(c, len);
                }
            }
            Kind::FixedList { size } => self.restore_committed(n.children[0], len * size),
            Kind::List { large } => {
                let Layout::List { offsets, .. } = &n.layout else { unreachable!("a list's layout") };
                let end = last_offset(offsets, if large { 8 } else { 4 });
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
    pub(super) fn nulls_in(&self, node: usize, from: usize, to: usize) -> usize {
        let n = &self.nodes[node];
        match &n.validity {
            // Lazy validity: no null written this batch.
            Some(_) if n.valid_lazy => 0,
            Some(v) => {
                let covered = to.min(v.buf.len() * 8).max(from);
                let set =
                    arrow_buffer::bit_chunk_iterator::UnalignedBitChunk::new(v.buf.as_slice(), from, covered - from)
                        .count_ones();
                (to - from) - set
            }
            None if n.kind() == Kind::Null => to - from,
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
            if self.nodes[i].value_node.is_some() {
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
            n.layout.clear_value_bits_from(len);
        }
        self.truncate_nodes(nodes, to);
    }

    /// Cuts `node` back to `len` values with `nulls` nulls: its buffers end
    /// where `len` values end, even when `len` is its current length (a
    /// refused copy may have written offsets or values past it).
    pub(crate) fn truncate_node(&mut self, node: usize, len: usize, nulls: usize) {
        let n = &mut self.nodes[node];
        if let Some(v) = &mut n.validity {
            v.clear_bits(len, n.len);
        }
        n.layout.truncate(n.len, len);
        n.len = len;
        n.null_count = nulls;
    }
}
