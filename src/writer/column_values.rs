//! The column path's value copies: fixed-width and boolean values (zeros
//! under every null, docs/design.md §2 rule 6), rebased offsets with their
//! bytes or child values, and the layouts copied value by value (unions,
//! views, list views).

use arrow_data::ArrayData;

use crate::buffer::bits::{for_each_run, Bits};
use crate::buffer::offsets::{last_offset, read_int, Offset};
use crate::error::{overflow, QuiverError, Result};
use crate::layout::decimal::{self, first_over_precision};
use crate::layout::view::view_value;
use crate::layout::{fixed, union, Kind, Layout};

use super::ArrowWriter;

impl ArrowWriter {
    /// Fixed-width (and boolean) values `start..start+count` of `values`.
    pub(super) fn copy_fixed(
        &mut self,
        node: usize,
        call: &str,
        values: &[u8],
        start: usize,
        bits: Option<Bits>,
        count: usize,
    ) -> Result<()> {
        // A refused copy leaves the column exactly as it was: every check
        // comes before the first byte is written, but for decimal128s, whose
        // values are checked as they are copied and cut off again if the
        // check or the validity refuses them.
        if let Layout::Fixed { width: 16, decimal: Some(spec), values: slot } = &mut self.nodes[node].layout {
            if self.options.check_decimal_precision {
                let src = &values[start * 16..(start + count) * 16];
                let before = slot.buf.len();
                if decimal::append_checked_128(&mut slot.buf, src, bits, spec.precision) {
                    if let Err(e) = self.copy_validity(node, call, bits, count) {
                        if let Layout::Fixed { values: slot, .. } = &mut self.nodes[node].layout {
                            slot.buf.truncate(before);
                        }
                        return Err(e);
                    }
                    self.nodes[node].len += count;
                    return Ok(());
                }
                // Over the precision, or near enough to need the exact check.
                slot.buf.truncate(before);
            }
        }
        if let Layout::Fixed { width, decimal: Some(spec), .. } = self.nodes[node].layout {
            let p = spec.precision;
            if self.options.check_decimal_precision {
                let src = &values[start * width..(start + count) * width];
                if let Some(bad) = first_over_precision(src, width, p, bits) {
                    let what = self.nodes[node].describe(node);
                    if self.nodes[node].parent.is_none() {
                        return Err(QuiverError::new(
                            crate::error::ErrorCode::OutOfRange,
                            format!("{call}: {what}: row {bad} does not fit precision {p}"),
                        ));
                    }
                    // Nested: the callers map `bad` to the input row.
                    self.refused_at = Some(bad);
                    return Err(QuiverError::new(
                        crate::error::ErrorCode::OutOfRange,
                        format!("{call}: {what}: a value does not fit precision {p}"),
                    ));
                }
            }
        }
        self.copy_validity(node, call, bits, count)?;
        let n = &mut self.nodes[node];
        let at = n.len;
        match &mut n.layout {
            Layout::Bool { values: slot } => fixed::copy_bools(slot, at, values, start, count, bits),
            Layout::Fixed { values: slot, width, .. } => {
                fixed::copy_values(slot, at, *width, &values[start * *width..(start + count) * *width], bits)
            }
            _ => unreachable!("copy_fixed on a fixed-width or boolean node"),
        }
        n.len += count;
        Ok(())
    }

    /// Offsets (rebased onto this batch's) and the values they point at,
    /// for a utf8/binary or list node: rows `off..off + count` of `data`.
    /// A null row repeats the last offset. Each run of valid rows is one
    /// pass over its offsets and one copy of its values.
    pub(super) fn copy_offsets<O: Offset>(
        &mut self,
        node: usize,
        data: &ArrayData,
        off: usize,
        count: usize,
        bits: Option<Bits>,
    ) -> Result<()> {
        let width = std::mem::size_of::<O>();
        // Nulls that span no values (what most producers write) need no runs:
        // the whole range is one rebase of its offsets, checked for such
        // nulls in the same pass, and one copy.
        if let Some(b) = bits {
            if self.copy_offset_run::<O>(node, data, off, 0, count, Some(b))? {
                return Ok(());
            }
        }
        for_each_run(bits, count, |s, e, valid| {
            if valid {
                return self.copy_offset_run::<O>(node, data, off, s, e, None).map(|_| ());
            }
            let (Layout::Var { offsets, .. } | Layout::List { offsets, .. }) = &mut self.nodes[node].layout else {
                unreachable!("copy_offsets on a variable-width or list node")
            };
            let b = O::try_from(last_offset(offsets, width) as i64).ok().expect("the last offset fits its own type");
            offsets.buf.extend(std::iter::repeat_n(b, e - s));
            Ok(())
        })
    }

    /// Rows `off + s..off + e` of `data` as one run of valid rows: their
    /// offsets rebased and appended, their values copied. With `nulls`, the
    /// rows may hold nulls (their validity): then the run is taken only if
    /// no null row spans values and the rebased end is in range, else
    /// `Ok(false)` and nothing has changed.
    fn copy_offset_run<O: Offset>(
        &mut self,
        node: usize,
        data: &ArrayData,
        off: usize,
        s: usize,
        e: usize,
        nulls: Option<Bits>,
    ) -> Result<bool> {
        const CALL: &str = "write_array";
        let src: &[O] = data.buffer::<O>(0);
        let width = std::mem::size_of::<O>();
        let child = self.nodes[node].children.first().copied();
        let n = &mut self.nodes[node];
        let (offsets, bytes) = match &mut n.layout {
            Layout::Var { offsets, data, .. } => (offsets, Some(data)),
            Layout::List { offsets, .. } => (offsets, None),
            _ => unreachable!("copy_offsets on a variable-width or list node"),
        };
        let base = last_offset(offsets, width) as i64;
        let (first, last): (i64, i64) = (src[off + s].into(), src[off + e].into());
        let end = base + (last - first);
        let over = width == 4 && end > i32::MAX as i64;
        match nulls {
            // Left to the runs, which skip the values of null rows.
            Some(_) if over => return Ok(false),
            Some(b) => {
                if !O::rebase_append_if_nulls_empty(&mut offsets.buf, src, off + s, e - s, b, base - first) {
                    return Ok(false);
                }
            }
            None if over => return Err(overflow(CALL, &self.nodes[node].describe(node), end as usize)),
            // In range: every offset lies between first and last, and the
            // last one rebased is `end`, checked above.
            None => O::rebase_append(&mut offsets.buf, &src[off + s + 1..=off + e], base - first),
        }
        let (first, last) = (first as usize, last as usize);
        match (bytes, child) {
            (Some(bytes), _) => bytes.buf.extend_from_slice(&data.buffers()[1].as_slice()[first..last]),
            (None, None) => unreachable!("a list has a child"),
            (None, Some(c)) => self.copy_data(c, &data.child_data()[0], first, last - first).inspect_err(|_| {
                // The row whose values hold child value j.
                self.refused_at = self.refused_at.map(|j| {
                    let row = (off + s..off + e).find(|&p| src[p + 1].into() > j as i64).unwrap_or(off + s);
                    row - data.offset()
                })
            })?,
        }
        Ok(true)
    }

    /// Column path: a union array, value by value.
    pub(crate) fn copy_union(&mut self, node: usize, data: &ArrayData, start: usize, count: usize) -> Result<()> {
        let Kind::Union { dense } = self.nodes[node].kind() else { unreachable!("a union node") };
        let off = data.offset() + start;
        let type_ids = data.buffers()[0].as_slice();
        for (i, &type_id) in type_ids.iter().enumerate().take(off + count).skip(off) {
            let type_id = type_id as i8;
            let Layout::Union { ids, .. } = &self.nodes[node].layout else { unreachable!("a union's layout") };
            let Some(member) = union::member_of(ids, type_id) else {
                return Err(QuiverError::invalid(format!(
                    "write_array: union type id {type_id} is not one of the union's"
                )));
            };
            let child = self.nodes[node].children[member];
            let at = if dense { read_int(data.buffers()[1].as_slice(), 4, i) as usize } else { i };
            self.copy_data(child, &data.child_data()[member], at, 1)
                .inspect_err(|_| self.refused_at = self.refused_at.map(|_| i - data.offset()))?;
            self.push_union_value(node, member);
        }
        Ok(())
    }

    /// Column path: a view array, value by value.
    pub(crate) fn copy_views(
        &mut self,
        node: usize,
        data: &ArrayData,
        start: usize,
        count: usize,
        bits: Option<Bits>,
    ) -> Result<()> {
        let off = data.offset() + start;
        let views = data.buffers()[0].as_slice();
        let buffers: Vec<&[u8]> = data.buffers()[1..].iter().map(|b| b.as_slice()).collect();
        for i in 0..count {
            if bits.is_some_and(|b| !b.get(i)) {
                self.fill_null(node, 1);
                continue;
            }
            let j = off + i;
            self.push_view(node, view_value(&views[j * 16..j * 16 + 16], &buffers))?;
        }
        Ok(())
    }

    /// Column path: a list-view array, value by value.
    pub(crate) fn copy_list_views(
        &mut self,
        node: usize,
        data: &ArrayData,
        start: usize,
        count: usize,
        bits: Option<Bits>,
    ) -> Result<()> {
        let off = data.offset() + start;
        let width = self.nodes[node].offset_width();
        let child = self.nodes[node].children[0];
        for i in 0..count {
            if bits.is_some_and(|b| !b.get(i)) {
                self.fill_null(node, 1);
                continue;
            }
            let j = off + i;
            let (o, size) = (
                read_int(data.buffers()[0].as_slice(), width, j) as usize,
                read_int(data.buffers()[1].as_slice(), width, j) as usize,
            );
            let begin = self.nodes[child].len;
            self.copy_data(child, &data.child_data()[0], o, size)
                .inspect_err(|_| self.refused_at = self.refused_at.map(|_| start + i))?;
            if let Layout::ListView { open_start, .. } = &mut self.nodes[node].layout {
                *open_start = begin;
            }
            self.end_list_view(node)?;
            let n = &mut self.nodes[node];
            if let Some(v) = &mut n.validity {
                v.set_bit(n.len);
            }
            n.len += 1;
        }
        Ok(())
    }
}
