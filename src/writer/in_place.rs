//! The records path's in-place appends (src/records): the next values and
//! validity bits of a top-level fixed-width or boolean column written by
//! the caller straight into the column's own buffers, with the column path's
//! checks (position, memory limit) before and its commit rule after: the
//! rows count once every top-level column has them.

use arrow_buffer::MutableBuffer;

use crate::error::{overflow, QuiverError, Result};
use crate::layout::Layout;

use super::ArrowWriter;

/// Bits `at..at + count` of a bitmap, all zero when handed out; bit `i` is
/// bit `i % 8` of byte `i / 8` (LSB first), and `bytes` reaches bit
/// `at + count - 1`.
pub(crate) struct BitsOut<'a> {
    pub bytes: &'a mut [u8],
    pub at: usize,
}

/// Where the values of an in-place append go.
pub(crate) enum ValuesOut<'a> {
    /// Room for `count` values of `width` bytes (not initialised): the
    /// caller writes every byte.
    Fixed { ptr: *mut u8, width: usize },
    /// A boolean column's value bits.
    Bits(BitsOut<'a>),
}

/// The buffers of a utf8/binary in-place append: push each value's bytes
/// onto `data` and its end (`data`'s length after it) onto `offsets`, as an
/// i64 when `large`, else an i32.
pub(crate) struct VarOut<'a> {
    pub offsets: &'a mut MutableBuffer,
    pub data: &'a mut MutableBuffer,
    pub large: bool,
}

impl ArrowWriter {
    /// Appends `count` values to the top-level utf8/binary column `node`:
    /// `fill` pushes them (see [`VarOut`]) and, for a nullable column, sets
    /// the validity bit of each valid one; it returns `Some(i)` to refuse
    /// the append (value `i` is bad), and then the column is cut back to
    /// where it was and this returns `Ok(Some(i))`. `data_bytes` (the
    /// values' total length) is used for the memory limit only. Refused
    /// (nothing written) as `write_array` refuses: not a top-level utf8 /
    /// binary column, a node open, over the memory limit, 32-bit offsets
    /// past 2^31-1.
    pub(crate) fn append_var_in_place(
        &mut self,
        node: usize,
        call: &str,
        count: usize,
        data_bytes: usize,
        fill: impl FnOnce(VarOut<'_>, Option<BitsOut<'_>>) -> Option<usize>,
    ) -> Result<Option<usize>> {
        self.column_target(node, call)?;
        let n = &self.nodes[node];
        let Layout::Var { offsets, data, large, .. } = &n.layout else {
            return Err(QuiverError::invalid(format!("{call}: {} is not a utf8/binary column", n.describe(node))));
        };
        if self.options.memory_limit != 0 {
            let end = n.len.saturating_add(count);
            let growth = n.validity.as_ref().map_or(0, |v| v.bits_growth(end))
                + offsets.growth_for(count * if *large { 8 } else { 4 })
                + data.growth_for(data_bytes);
            self.check_growth(call, growth)?;
        }
        let mut refused = None;
        let result = self.column_write(node, |w| {
            let n = &mut w.nodes[node];
            // The caller sets the bits of the valid values it writes: the
            // bits the row path still owes (lazy validity) are written first.
            n.materialize_validity(&mut w.counters);
            let at = n.len;
            let end = at + count;
            let validity = n.validity.as_mut().map(|v| {
                v.ensure_bits(end);
                BitsOut { bytes: v.buf.as_slice_mut(), at }
            });
            let Layout::Var { offsets, data, large, .. } = &mut n.layout else { unreachable!("checked above") };
            let large = *large;
            refused = fill(VarOut { offsets: &mut offsets.buf, data: &mut data.buf, large }, validity);
            let bytes = data.buf.len();
            if refused.is_some() {
                return Err(QuiverError::invalid(format!("{call}: refused")));
            }
            if !large && bytes > i32::MAX as usize {
                return Err(overflow(call, &n.describe(node), bytes));
            }
            let nulls = w.nulls_in(node, at, end);
            let n = &mut w.nodes[node];
            n.null_count += nulls;
            n.len = end;
            Ok(())
        });
        match (result, refused) {
            (Ok(()), _) => Ok(None),
            (Err(_), Some(i)) => Ok(Some(i)),
            (Err(e), None) => Err(e),
        }
    }

    /// Appends `count` values to the top-level fixed-width or boolean column
    /// `node`: `fill` gets the room for the values and, for a nullable
    /// column, its validity bits (set a bit for each valid value), and
    /// writes them. The null count follows from the validity bits. Refused
    /// (nothing written) as `write_column_bytes` refuses: not a top-level
    /// fixed-width column, a node open, over the memory limit.
    ///
    /// # Safety
    /// `fill` writes every byte of a [`ValuesOut::Fixed`] room, and for a
    /// column that is not nullable (no validity given) only values that may
    /// be valid.
    pub(crate) unsafe fn append_in_place(
        &mut self,
        node: usize,
        call: &str,
        count: usize,
        fill: impl FnOnce(ValuesOut<'_>, Option<BitsOut<'_>>),
    ) -> Result<()> {
        self.column_target(node, call)?;
        let bytes = self.column_value_bytes(node, count, call)?;
        self.check_column(call, node, bytes, count)?;
        self.column_write(node, |w| {
            let n = &mut w.nodes[node];
            // The caller sets the bits of the valid values it writes: the
            // bits the row path still owes (lazy validity) are written first.
            n.materialize_validity(&mut w.counters);
            let at = n.len;
            let end = at + count;
            let validity = n.validity.as_mut().map(|v| {
                v.ensure_bits(end);
                BitsOut { bytes: v.buf.as_slice_mut(), at }
            });
            match &mut n.layout {
                Layout::Bool { values } => {
                    values.ensure_bits(end);
                    fill(ValuesOut::Bits(BitsOut { bytes: values.buf.as_slice_mut(), at }), validity);
                }
                Layout::Fixed { values, width, .. } => {
                    let start = at * *width;
                    debug_assert_eq!(values.buf.len(), start, "a fixed-width column's values end at its length");
                    values.buf.reserve(bytes);
                    // SAFETY: `bytes` are reserved past `start`, the end of
                    // the values.
                    let ptr = unsafe { values.buf.as_mut_ptr().add(start) };
                    fill(ValuesOut::Fixed { ptr, width: *width }, validity);
                    // SAFETY: `fill` wrote every byte (the contract).
                    unsafe { values.buf.set_len(start + bytes) };
                }
                _ => unreachable!("column_value_bytes takes fixed-width and boolean columns only"),
            }
            let nulls = w.nulls_in(node, at, end);
            let n = &mut w.nodes[node];
            n.null_count += nulls;
            n.len = end;
            Ok(())
        })
    }
}

/// One column's room in [`ArrowWriter::append_in_place_columns`]: `count`
/// values of `width` bytes at `values` (not initialised: the caller writes
/// every byte) and, for a nullable column, its validity bitmap: `bits_len`
/// bytes at `bits`, the append's bits from bit `at` on, all zero. Raw
/// pointers, valid for the `fill` call only.
#[derive(Clone, Copy)]
pub(crate) struct ColumnRoom {
    pub values: *mut u8,
    pub width: usize,
    pub bits: Option<(*mut u8, usize)>,
    pub at: usize,
}

/// The most columns `append_in_place_columns` takes at once.
pub(crate) const MAX_IN_PLACE_COLUMNS: usize = 32;

impl ArrowWriter {
    /// `append_in_place` of several top-level fixed-width columns at once
    /// (`nodes`, at most [`MAX_IN_PLACE_COLUMNS`], in increasing order):
    /// `fill` gets the room of each, in the order of `nodes`, and writes
    /// them all, in one pass if it likes. Refused (nothing written) as
    /// `append_in_place` refuses; under a memory limit (whose check is per
    /// column) or for other nodes it returns `Ok(false)`, having changed
    /// nothing, and the caller goes column by column. The rows commit when
    /// every top-level column has them.
    ///
    /// # Safety
    /// `fill` writes every byte of every column's room and sets the
    /// validity bit of each valid value (only values that may be valid for
    /// a column without validity), through the room's pointers alone.
    pub(crate) unsafe fn append_in_place_columns(
        &mut self,
        nodes: &[usize],
        call: &str,
        count: usize,
        fill: impl FnOnce(&[ColumnRoom]),
    ) -> Result<bool> {
        if self.options.memory_limit != 0
            || nodes.len() > MAX_IN_PLACE_COLUMNS
            || !nodes.windows(2).all(|p| p[0] < p[1])
        {
            return Ok(false);
        }
        for &node in nodes {
            self.column_target(node, call)?;
            if !matches!(self.nodes.get(node).map(|n| &n.layout), Some(Layout::Fixed { .. })) {
                return Ok(false);
            }
            self.column_value_bytes(node, count, call)?;
        }
        let empty = ColumnRoom { values: std::ptr::null_mut(), width: 0, bits: None, at: 0 };
        let mut rooms = [empty; MAX_IN_PLACE_COLUMNS];
        for (room, &node) in rooms.iter_mut().zip(nodes) {
            let n = &mut self.nodes[node];
            // The caller sets the bits of the valid values it writes: the
            // bits the row path still owes (lazy validity) are written first.
            n.materialize_validity(&mut self.counters);
            let at = n.len;
            let bits = n.validity.as_mut().map(|v| {
                v.ensure_bits(at + count);
                (v.buf.as_mut_ptr(), v.buf.len())
            });
            let Layout::Fixed { values, width, .. } = &mut n.layout else { unreachable!("checked above") };
            let start = at * *width;
            debug_assert_eq!(values.buf.len(), start, "a fixed-width column's values end at its length");
            values.buf.reserve(count * *width);
            // SAFETY: `count * width` bytes are reserved past `start`, the
            // end of the values.
            let ptr = unsafe { values.buf.as_mut_ptr().add(start) };
            *room = ColumnRoom { values: ptr, width: *width, bits, at };
        }
        // No buffer of these nodes moves until the lengths are set below.
        fill(&rooms[..nodes.len()]);
        for &node in nodes {
            let n = &mut self.nodes[node];
            let at = n.len;
            let Layout::Fixed { values, width, .. } = &mut n.layout else { unreachable!("checked above") };
            let end = (at + count) * *width;
            // SAFETY: reserved above, and `fill` wrote every byte (the contract).
            unsafe { values.buf.set_len(end) };
            let nulls = self.nulls_in(node, at, at + count);
            let n = &mut self.nodes[node];
            n.null_count += nulls;
            n.len = at + count;
        }
        self.commit_even_columns();
        Ok(true)
    }
}
