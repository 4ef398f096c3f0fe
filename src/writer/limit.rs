//! The memory limit (`WriterOptions::memory_limit`): what the writer holds,
//! what a call would add, and the refusal (`ENOMEM`) of a call that would
//! take it past the limit, made before the call writes anything.

use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::layout::Layout;

use super::{ArrowWriter, LIMITED, NOT_STARTED, NO_OPEN};

/// Bytes a row-path value may add to each buffer of its node besides its
/// payload: an offset, a view, a type id, a key (up to 8 bytes each).
const VALUE_SLACK: usize = 64;

impl ArrowWriter {
    /// Sets the memory limit (`WriterOptions::memory_limit`): the bytes of
    /// buffer capacity the writer may hold, 0 for none.
    ///
    /// What counts is the capacity of every buffer the writer holds: those
    /// of the batch being written and those of earlier batches it keeps for
    /// reuse (`WriterStats::bytes_retained`). The interning tables of
    /// dictionary and run-end encoded columns and the writer's own small
    /// structures do not count.
    ///
    /// A call that would take the writer past the limit is refused with
    /// `ENOMEM` and changes nothing. When dropping the retained buffers would
    /// make room, they are dropped (the ring is emptied) and the call goes
    /// on; a call then refused for another reason, such as a decimal out of
    /// range, leaves them dropped (the batch's bytes are the same either
    /// way).
    ///
    /// The column path computes what a call needs from its input before
    /// writing. The row path checks every value before writing it, for room
    /// for its bytes in the buffer that takes them and for its width plus 64
    /// bytes in each other buffer of its node, so a value close to the limit
    /// may be refused a little early. Under a limit a batch reserves nothing
    /// up front (the first offset of each offset buffer, allocated when the
    /// batch starts, is not checked; every later growth is), and the row
    /// path takes its full path, slower than the fast path taken without a
    /// limit. Lowering the limit below what the writer holds refuses every
    /// later call that grows a buffer, unless dropping the retained buffers
    /// makes room.
    ///
    /// ```
    /// # use quiver::{ArrowWriter, ErrorCode, WriterOptions};
    /// let mut w = ArrowWriter::from_text("s: utf8", WriterOptions::default())?;
    /// w.set_memory_limit(4096);
    /// let e = w.append_str(0, &"x".repeat(10_000)).unwrap_err();
    /// assert_eq!(e.code(), ErrorCode::OutOfMemory);
    /// w.append_str(0, "small")?;
    /// w.end_row()?;
    /// assert_eq!(w.finish()?.num_rows(), 1);
    /// # Ok::<(), quiver::QuiverError>(())
    /// ```
    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.options.memory_limit = bytes;
        if self.open_top != NOT_STARTED {
            self.open_top = if bytes > 0 { LIMITED } else { self.open.last().copied().unwrap_or(NO_OPEN) };
        }
    }

    /// Bytes of buffer capacity the writer holds (what the limit counts).
    pub fn memory_held(&self) -> usize {
        self.nodes.iter().flat_map(|n| n.validity.iter().chain(n.layout.slots())).map(Slot::held_bytes).sum()
    }

    /// Refuses `call` if `growth` more bytes would take the writer past the
    /// limit; drops the retained buffers first when that makes room.
    pub(super) fn check_growth(&mut self, call: &str, growth: usize) -> Result<()> {
        let limit = self.options.memory_limit;
        if growth == 0 || limit == 0 {
            return Ok(());
        }
        let held = self.memory_held();
        if held.saturating_add(growth) <= limit {
            return Ok(());
        }
        let retained = self.stats().bytes_retained as usize;
        if retained > 0 && (held - retained).saturating_add(growth) <= limit {
            for n in &mut self.nodes {
                n.validity.iter_mut().for_each(Slot::drop_retained);
                n.layout.slots_mut().for_each(Slot::drop_retained);
            }
            return Ok(());
        }
        Err(QuiverError::new(
            ErrorCode::OutOfMemory,
            format!(
                "{call}: memory limit of {limit} bytes: the writer holds {held} bytes ({retained} of them retained \
                 for reuse) and this call needs {growth} more"
            ),
        ))
    }

    /// Row path: checks room for one value of `payload` bytes written to
    /// `node` (and to the hidden value node of an encoded node); `deep`: to
    /// the whole subtree, for a null.
    pub(super) fn check_value(&mut self, call: &str, node: usize, payload: usize, deep: bool) -> Result<()> {
        if self.options.memory_limit == 0 {
            return Ok(());
        }
        let growth = self.value_growth(node, payload, 1, deep);
        self.check_growth(call, growth)
    }

    /// The growth of `count` values of `payload` bytes each written to `node`.
    fn value_growth(&self, node: usize, payload: usize, count: usize, deep: bool) -> usize {
        let n = &self.nodes[node];
        let mut growth = n.validity.as_ref().map_or(0, |v| v.bits_growth(n.len + count));
        let small = count.saturating_mul(n.layout.reserved_value_bytes() + VALUE_SLACK);
        let bytes = count.saturating_mul(payload);
        growth += match &n.layout {
            Layout::Bool { values } => values.bits_growth(n.len + count),
            // The payload goes to the data; offsets or views get their own few bytes.
            Layout::Var { offsets, data, .. } | Layout::View { views: offsets, data, .. } => {
                offsets.growth_for(small) + data.growth_for(bytes)
            }
            layout => layout.slots().map(|s| s.growth_for(small.saturating_add(bytes))).sum(),
        };
        if let Some(v) = n.value_node {
            growth += self.value_growth(v, payload, count, deep);
        }
        if deep {
            let per = match n.layout {
                Layout::FixedList { size } => size,
                _ => 1,
            };
            for &c in &n.children {
                growth += self.value_growth(c, 0, count.saturating_mul(per), true);
            }
        }
        growth
    }

    /// Column path: checks room for `values` bytes of values and `length`
    /// validity bits appended to fixed-width or boolean `node`.
    pub(super) fn check_column(&mut self, call: &str, node: usize, values: usize, length: usize) -> Result<()> {
        if self.options.memory_limit == 0 {
            return Ok(());
        }
        let n = &self.nodes[node];
        let end = n.len.saturating_add(length);
        let mut growth = n.validity.as_ref().map_or(0, |v| v.bits_growth(end));
        growth += match &n.layout {
            Layout::Bool { values } => values.bits_growth(end),
            layout => layout.slots().map(|s| s.growth_for(values)).sum(),
        };
        self.check_growth(call, growth)
    }

    /// Column path: checks room for copying `data` into `node`, from the
    /// bytes its logical rows take at each level (exact for fixed-width,
    /// boolean, variable-width, list and struct levels; the whole buffers
    /// and child arrays of the others, an upper bound).
    pub(super) fn check_array(&mut self, call: &str, node: usize, data: &ArrayData) -> Result<()> {
        if self.options.memory_limit == 0 {
            return Ok(());
        }
        let growth = self.array_growth(node, data, 0, data.len());
        self.check_growth(call, growth)
    }

    /// The growth of copying rows `start..start + count` of `data` into `node`.
    fn array_growth(&self, node: usize, data: &ArrayData, start: usize, count: usize) -> usize {
        let n = &self.nodes[node];
        let end = n.len.saturating_add(count);
        let mut growth = n.validity.as_ref().map_or(0, |v| v.bits_growth(end));
        let off = data.offset() + start;
        growth += match &n.layout {
            Layout::Bool { values } => values.bits_growth(end),
            // Offsets and bytes apart: each buffer gets its own share.
            Layout::Var { offsets, data: bytes, large, .. } => {
                let span =
                    span_of(data, *large, off, count).map_or_else(|| level_bytes(data, start, count), |(_, k)| k);
                offsets.growth_for(count * if *large { 8 } else { 4 }) + bytes.growth_for(span)
            }
            layout => layout.slots().map(|s| s.growth_for(level_bytes(data, start, count))).sum(),
        };
        let children = data.child_data();
        let whole = |c: &ArrayData| (0, c.len());
        let range = |c: &ArrayData| -> (usize, usize) {
            match data.data_type() {
                DataType::Struct(_) => (off, count),
                DataType::FixedSizeList(_, size) => (off * *size as usize, count * *size as usize),
                DataType::List(_) | DataType::Map(..) => span_of(data, false, off, count).unwrap_or_else(|| whole(c)),
                DataType::LargeList(_) => span_of(data, true, off, count).unwrap_or_else(|| whole(c)),
                _ => whole(c),
            }
        };
        let mut child_growth = |c: usize, d: &ArrayData, (s, k): (usize, usize)| {
            // A range past the child (a malformed input) counts the whole child.
            let (s, k) = if s.saturating_add(k) <= d.len() { (s, k) } else { whole(d) };
            growth += self.array_growth(c, d, s, k);
        };
        match (n.value_node, data.data_type()) {
            (Some(v), DataType::Dictionary(..)) => {
                if let Some(c) = children.first() {
                    child_growth(v, c, whole(c));
                }
            }
            (Some(v), DataType::RunEndEncoded(..)) => {
                if let Some(c) = children.get(1) {
                    child_growth(v, c, whole(c));
                }
            }
            _ => {
                for (&c, d) in n.children.iter().zip(children) {
                    child_growth(c, d, range(d));
                }
            }
        }
        growth
    }
}

/// The child rows `(first, count)` that rows `off..off + count` of a list
/// (or variable-width) `data` span (`off` counts from the buffer's start);
/// `None` when its offsets do not reach that far.
fn span_of(data: &ArrayData, wide: bool, off: usize, count: usize) -> Option<(usize, usize)> {
    let b = data.buffers().first()?;
    let (first, last) = if wide {
        let o = b.typed_data::<i64>();
        (*o.get(off)?, *o.get(off + count)?)
    } else {
        let o = b.typed_data::<i32>();
        (i64::from(*o.get(off)?), i64::from(*o.get(off + count)?))
    };
    let first = usize::try_from(first).ok()?;
    Some((first, usize::try_from(last).ok()?.checked_sub(first)?))
}

/// Bytes the buffers of one level of `data` (its validity aside) hold for
/// its rows `start..start + count`: exact for fixed-width, boolean,
/// variable-width and list arrays, the whole buffers for the others.
fn level_bytes(data: &ArrayData, start: usize, count: usize) -> usize {
    let off = data.offset() + start;
    let span = |wide: bool| span_of(data, wide, off, count).map_or(0, |(_, k)| k);
    match data.data_type() {
        DataType::Utf8 | DataType::Binary => 4 * (count + 1) + span(false),
        DataType::LargeUtf8 | DataType::LargeBinary => 8 * (count + 1) + span(true),
        DataType::List(_) | DataType::Map(..) => 4 * (count + 1),
        DataType::LargeList(_) => 8 * (count + 1),
        DataType::Boolean => count.div_ceil(8),
        DataType::Struct(_) | DataType::FixedSizeList(..) | DataType::Null => 0,
        t => match t.primitive_width() {
            Some(w) => count * w,
            None => data.buffers().iter().map(|b| b.len()).sum(),
        },
    }
}
