//! The row path's byte strings (variable-width, view and fixed-size binary
//! nodes) and nulls, each with its inlined fast path and its full path.

use crate::buffer::bits::set_valid;
use crate::buffer::offsets::{last_offset, push_offset};
use crate::error::{overflow, ErrorCode, QuiverError, Result};
use crate::layout::fixed::push_zeros;
use crate::layout::view::TooLong;
use crate::layout::{var, view, Layout};
use crate::node::{Input, Kind, NO_OPEN};

use super::ArrowWriter;

impl ArrowWriter {
    /// A string (a `&str` is UTF-8 already: not checked again).
    #[inline(always)]
    pub fn append_str(&mut self, node: usize, v: &str) -> Result<()> {
        if self.try_bytes(node, v.as_bytes(), true) {
            return Ok(());
        }
        self.append_bytes_slow(node, v.as_bytes(), true)
    }

    /// Bytes of a utf8, binary, their large forms, or fixed-size binary (exact
    /// width), or the raw little-endian bytes of a day-time / month-day-nano
    /// interval.
    #[inline(always)]
    pub fn append_bytes(&mut self, node: usize, v: &[u8]) -> Result<()> {
        if self.try_bytes(node, v, false) {
            return Ok(());
        }
        self.append_bytes_slow(node, v, false)
    }

    /// The fast path of `append_bytes` (variable-width nodes; `is_utf8`: known
    /// valid): false, having written nothing, when it does not apply or the
    /// value is refused.
    #[inline(always)]
    pub(crate) fn try_bytes(&mut self, node: usize, v: &[u8], is_utf8: bool) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        let Layout::Var { utf8, .. } = n.layout else { return false };
        if !self.at_slot(n) || (utf8 && !is_utf8 && self.options.validate_utf8 && !var::valid_utf8(v)) {
            return false;
        }
        let n = &mut self.nodes[node];
        let Layout::Var { offsets, data, large, .. } = &mut n.layout else { return false };
        if var::push(offsets, data, *large, v).is_err() {
            return false;
        }
        if !n.valid_lazy {
            if let Some(valid) = &mut n.validity {
                set_valid(valid, n.len);
            }
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    /// The direct entry of encoded nodes of variable-width values
    /// (`is_utf8`: `v` is known to be UTF-8), then the rest. (The rest is
    /// a call of its own, so that this entry saves only the registers its
    /// own work needs.)
    #[inline(never)]
    fn append_bytes_slow(&mut self, node: usize, v: &[u8], is_utf8: bool) -> Result<()> {
        if self.try_encoded_bytes(node, v, is_utf8) {
            return Ok(());
        }
        self.append_bytes_rest(node, v)
    }

    /// The direct entry of encoded nodes of other flat values, then the full path.
    #[inline(never)]
    fn append_bytes_rest(&mut self, node: usize, v: &[u8]) -> Result<()> {
        if let Some(dst) = self.nodes.get(node).and_then(|n| n.value_node) {
            if self.try_encoded(node, dst, Input::Bytes, v) {
                return Ok(());
            }
        }
        self.append_bytes_full(node, v)
    }

    #[inline(never)]
    fn append_bytes_full(&mut self, node: usize, v: &[u8]) -> Result<()> {
        self.target(node, "append_bytes")?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        if !self.nodes[dst].accepts(Input::Bytes) {
            return Err(self.wrong_input(node, Input::Bytes));
        }
        self.check_value("append_bytes", node, v.len(), false)?;
        if dst != node {
            // Flat values are looked up by their bytes before being written.
            if matches!(self.nodes[dst].layout, Layout::Var { .. }) || self.fixed_as_is(dst, v.len()) {
                self.append_flat(node, dst, v, |w| w.write_bytes(dst, v))?;
            } else {
                self.append_encoded(node, |w| w.write_bytes(dst, v))?;
            }
        } else {
            self.write_bytes(dst, v)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Writes one byte-string value into the variable-width, view or
    /// fixed-width node `dst`.
    pub(super) fn write_bytes(&mut self, dst: usize, v: &[u8]) -> Result<()> {
        let n = &self.nodes[dst];
        let utf8 = match n.layout {
            Layout::Var { utf8, .. } | Layout::View { utf8, .. } => utf8,
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
        if let Layout::View { .. } = n.layout {
            return self.push_view(dst, v);
        }
        let n = &mut self.nodes[dst];
        let Layout::Var { offsets, data, large, .. } = &mut n.layout else { unreachable!("matched above") };
        if let Err(end) = var::push(offsets, data, *large, v) {
            return Err(overflow("append_bytes", &n.describe(dst), end));
        }
        if !n.valid_lazy {
            if let Some(valid) = &mut n.validity {
                valid.set_bit(n.len);
            }
        }
        n.len += 1;
        Ok(())
    }

    /// Appends one value to view node `node`: inline up to 12 bytes, else in
    /// its data buffer.
    pub(super) fn push_view(&mut self, node: usize, v: &[u8]) -> Result<()> {
        let n = &mut self.nodes[node];
        let Layout::View { views, data, .. } = &mut n.layout else { unreachable!("push_view on a view node") };
        match view::push(views, data, v) {
            Ok(()) => {}
            Err(TooLong::Value) => return Err(overflow("append_bytes", &n.describe(node), v.len())),
            Err(TooLong::Data) => {
                return Err(QuiverError::new(
                    ErrorCode::Overflow,
                    format!("append_bytes: {}: the batch's view data would pass 2^32-1 bytes; finish this batch and write the value into the next", n.describe(node)),
                ))
            }
        }
        if let Some(valid) = &mut n.validity {
            valid.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// A null. On a struct or fixed-size list its children get null, zeroed
    /// values. A non-nullable node refuses it (`EINVAL`).
    ///
    /// ```
    /// # use quiver::{ArrowWriter, ErrorCode, WriterOptions};
    /// let mut w = ArrowWriter::from_text("a: int32 not null, b: utf8", WriterOptions::default())?;
    /// assert_eq!(w.append_null(0).unwrap_err().code(), ErrorCode::InvalidArgument);
    /// w.append_i32(0, 5)?;
    /// w.append_null(1)?;
    /// w.end_row()?;
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
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
        // The node's first null of the batch ends its lazy validity.
        if n.valid_lazy {
            n.materialize_validity(&mut self.counters);
        }
        match &mut n.layout {
            Layout::Fixed { values, width, .. } => push_zeros(values, *width),
            Layout::Var { offsets, large, .. } | Layout::List { offsets, large } => {
                let width = if *large { 8 } else { 4 };
                push_offset(offsets, width, last_offset(offsets, width))
            }
            _ => unreachable!("null_fast is set on fixed-width, variable-width and list nodes only"),
        }
        // Bits past the length are clear: the null's bit is.
        if let Some(valid) = &mut n.validity {
            valid.ensure_bits(n.len + 1);
        }
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
        if !n.nullable && n.kind() != Kind::Null {
            return Err(QuiverError::invalid(format!("append_null: {} is not nullable", n.describe(node))));
        }
        if let (Kind::Union { .. }, Some(&first)) = (n.kind(), n.children.first()) {
            // A null union value: a null of its first member.
            if !self.nodes[first].nullable {
                return Err(QuiverError::invalid(format!(
                    "append_null: {}: its first member {} is not nullable; append a null inside begin/end",
                    n.describe(node),
                    self.nodes[first].describe(first)
                )));
            }
        }
        self.check_value("append_null", node, 0, true)?;
        self.fill_null(node, 1);
        self.count_top(node);
        Ok(())
    }
}
