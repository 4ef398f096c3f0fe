//! Nested values on the row path: `begin` / `end` of lists, structs, maps,
//! list views and unions, `end_row`, and the null fill that gives the
//! children of a null parent their null, zeroed values.

use crate::buffer::bits::set_valid;
use crate::error::{overflow, QuiverError, Result};
use crate::layout::{list, union, Layout};
use crate::node::{is_container, Kind, NO_OPEN};

use super::ArrowWriter;

impl ArrowWriter {
    /// Writes `count` null (or, for a non-nullable node under a null parent,
    /// zero) values into `node` and its children.
    pub(crate) fn fill_null(&mut self, node: usize, count: usize) {
        match self.nodes[node].kind() {
            Kind::Encoded { .. } => return self.fill_null_encoded(node, count),
            Kind::Union { .. } => return self.fill_null_union(node, count),
            _ => {}
        }
        let n = &mut self.nodes[node];
        n.materialize_validity(&mut self.counters);
        let len = n.len;
        if let Some(v) = &mut n.validity {
            v.ensure_bits(len + count);
            n.null_count += count;
        }
        if n.layout.fill_null(len, count) {
            if let Layout::Null = n.layout {
                n.null_count += count;
            }
            n.len += count;
            return;
        }
        n.len += count;
        match n.layout {
            Layout::FixedList { size } => {
                let child = n.children[0];
                self.fill_null(child, count * size);
            }
            Layout::Struct => {
                for i in 0..self.nodes[node].children.len() {
                    let child = self.nodes[node].children[i];
                    self.fill_null(child, count);
                }
            }
            _ => unreachable!("unions and encoded nodes are handled above"),
        }
    }

    /// `count` null union values: nulls of the first member.
    pub(crate) fn fill_null_union(&mut self, node: usize, count: usize) {
        let first = self.nodes[node].children[0];
        let children = self.nodes[node].children.clone();
        let base = self.nodes[first].len;
        let n = &mut self.nodes[node];
        let Layout::Union { type_ids, offsets, ids, .. } = &mut n.layout else { unreachable!("a union's layout") };
        let dense = offsets.is_some();
        for i in 0..count {
            union::push(type_ids, offsets.as_mut(), ids[0], base + i);
        }
        n.len += count;
        if dense {
            self.fill_null(first, count);
        } else {
            for c in children {
                self.fill_null(c, count);
            }
        }
    }

    /// Starts one list, large list, fixed-size list, struct or map value; its
    /// children's values follow, then `end(node)`.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, WriterOptions};
    /// let mut w = ArrowWriter::from_text("pt: struct<x: float64, y: float64>, l: list<int32>", WriterOptions::default())?;
    /// let (pt, x, y, l, item) = (0, 1, 2, 3, 4);
    /// w.begin(pt)?;
    /// w.append_f64(x, 1.5)?;
    /// w.append_f64(y, -2.0)?;
    /// w.end(pt)?;
    /// w.begin(l)?; // a list of three values
    /// for v in [7, 8, 9] {
    ///     w.append_i32(item, v)?;
    /// }
    /// w.end(l)?;
    /// w.end_row()?;
    /// assert_eq!(w.finish()?.num_rows(), 1);
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
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
                if matches!(n.kind(), Kind::Struct | Kind::List { .. } | Kind::FixedList { .. }) && self.at_slot(n) => {
            }
            _ => return false,
        }
        self.open.push(node);
        self.open_top = node;
        true
    }

    #[inline(never)]
    pub(super) fn begin_full(&mut self, node: usize) -> Result<()> {
        self.target(node, "begin")?;
        let n = &self.nodes[node];
        let dst = n.value_node.unwrap_or(node);
        if !is_container(self.nodes[dst].kind()) {
            return Err(QuiverError::invalid(format!(
                "begin: {} is not a list, struct, map or union",
                n.describe(node)
            )));
        }
        // Room for the value's own buffers, which `end` writes.
        self.check_value("begin", node, 0, false)?;
        if dst != node {
            self.snapshot_values(node);
        }
        let lens: Vec<usize> = self.nodes[dst].children.iter().map(|&c| self.nodes[c].len).collect();
        match &mut self.nodes[dst].layout {
            Layout::ListView { open_start, .. } => *open_start = lens[0],
            Layout::Union { open_lens, .. } => *open_lens = lens,
            _ => {}
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
        // No memory limit: `open_top` matched `node`.
        self.open_top = self.open.last().copied().unwrap_or(NO_OPEN);
        if self.nodes[node].up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    /// Ends the open struct or list value of `node` (the innermost open node,
    /// not encoded) when complete; false, having changed nothing, otherwise.
    #[inline(always)]
    pub(super) fn end_fast(&mut self, node: usize) -> bool {
        let n = &self.nodes[node];
        let (complete, child_len) = match n.layout {
            Layout::Struct => (n.children.iter().all(|&c| self.nodes[c].len == n.len + 1), 0),
            Layout::List { .. } => (true, self.nodes[n.children[0]].len),
            _ => (false, 0),
        };
        if !complete {
            return false;
        }
        let n = &mut self.nodes[node];
        if let Layout::List { offsets, large } = &mut n.layout {
            if list::end(offsets, *large, child_len).is_err() {
                return false;
            }
        }
        if !n.valid_lazy {
            if let Some(v) = &mut n.validity {
                set_valid(v, n.len);
            }
        }
        n.len += 1;
        true
    }

    #[inline(never)]
    pub(super) fn end_full(&mut self, node: usize) -> Result<()> {
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
    pub(super) fn end_value(&mut self, node: usize) -> Result<()> {
        let n = &self.nodes[node];
        match n.kind() {
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
                let n = &mut self.nodes[node];
                let Layout::List { offsets, large } = &mut n.layout else {
                    unreachable!("the containers left are lists")
                };
                if let Err(end) = list::end(offsets, *large, child_len) {
                    return Err(overflow("end", &n.describe(node), end));
                }
            }
        }
        let n = &mut self.nodes[node];
        if !n.valid_lazy {
            if let Some(v) = &mut n.validity {
                v.set_bit(n.len);
            }
        }
        n.len += 1;
        Ok(())
    }

    /// Ends an open union value: exactly one member got a value.
    pub(super) fn end_union(&mut self, node: usize) -> Result<()> {
        let n = &self.nodes[node];
        let Layout::Union { open_lens, .. } = &n.layout else { unreachable!("a union's layout") };
        let grown: Vec<usize> =
            (0..n.children.len()).filter(|&i| self.nodes[n.children[i]].len != open_lens[i]).collect();
        if grown.len() != 1 {
            return Err(QuiverError::invalid(format!(
                "end: union {} needs exactly one member value, got {}",
                n.describe(node),
                grown.len()
            )));
        }
        self.push_union_value(node, grown[0]);
        Ok(())
    }

    /// Records the next value of union `node` as the value member `member`
    /// just got: its type id, and for a dense union its offset; the other
    /// members of a sparse union get a null.
    pub(super) fn push_union_value(&mut self, node: usize, member: usize) {
        let child = self.nodes[node].children[member];
        let child_len = self.nodes[child].len;
        let n = &mut self.nodes[node];
        let Layout::Union { type_ids, offsets, ids, .. } = &mut n.layout else { unreachable!("a union's layout") };
        let dense = offsets.is_some();
        union::push(type_ids, offsets.as_mut(), ids[member], child_len - 1);
        n.len += 1;
        if !dense {
            for i in 0..self.nodes[node].children.len() {
                let c = self.nodes[node].children[i];
                if c != child {
                    self.fill_null(c, 1);
                }
            }
        }
    }

    /// Ends an open list view value: its offset and size.
    pub(super) fn end_list_view(&mut self, node: usize) -> Result<()> {
        let child_len = self.nodes[self.nodes[node].children[0]].len;
        let n = &mut self.nodes[node];
        let Layout::ListView { offsets, sizes, large, open_start } = &mut n.layout else {
            unreachable!("a list view's layout")
        };
        let start = *open_start;
        if let Err(end) = list::end_view(offsets, sizes, *large, start, child_len - start) {
            return Err(overflow("end", &n.describe(node), end));
        }
        Ok(())
    }

    /// Commits the row: every top-level column must have one value and no
    /// node may be open. A refused `end_row` changes nothing: the row stays
    /// open to be completed or dropped with `abort_row`.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, ErrorCode, WriterOptions};
    /// let mut w = ArrowWriter::from_text("a: int32, b: utf8", WriterOptions::default())?;
    /// w.append_i32(0, 1)?;
    /// assert_eq!(w.end_row().unwrap_err().code(), ErrorCode::InvalidArgument); // b has no value
    /// w.append_str(1, "x")?;
    /// w.end_row()?;
    /// assert_eq!(w.rows(), 1);
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
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
    pub(super) fn end_row_checked(&mut self) -> Result<()> {
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
}
