//! A whole row of fixed-width values, nulls included, in one call
//! (`quiver_append_slots`, the JVM binding's `Writer.appendRow`), on a plan
//! made once for the call's kinds: whether they are the writer's top-level
//! columns in order, each taking its kind natively, the width each writes
//! and which take nulls. Rows the plan does not cover (a row already begun,
//! a memory limit, other kinds, a null on a column that is not nullable)
//! take the per-value fast paths and then the full appends.

use crate::buffer::bits::put_bit;
use crate::buffer::Counters;
use crate::layout::Layout;
use crate::node::fast::native_width;
use crate::node::{Input, Node, NO_OPEN};

use super::{ArrowWriter, SlotsPlan};

impl SlotsPlan {
    #[inline(always)]
    fn is_for(&self, first: usize, kinds: &[u8]) -> bool {
        self.first == first && self.kinds.len() == kinds.len() && self.kinds.iter().zip(kinds).all(|(a, b)| a == b)
    }
}

impl ArrowWriter {
    /// Appends `slots[k]` (its low bytes), or a null where bit `k` of
    /// `nulls` is set, to node `first + k` for every `k`, and ends the row,
    /// when that is the whole row: no value of it written yet, nothing open,
    /// no memory limit, nodes `first ..` all the top-level columns, each
    /// taking `input_of(kinds[k])` natively, and a null only where the
    /// column takes one (`kinds` and `slots` of one length, `nulls` without
    /// bits past them). Else changes nothing and returns false. A value or
    /// null is written with no branch on which (random nulls would
    /// mispredict it): the value ANDed with zero under a null, the bit from
    /// the mask.
    #[inline]
    pub(crate) fn try_slots_row(
        &mut self,
        first: usize,
        kinds: &[u8],
        slots: &[u64],
        nulls: u64,
        input_of: impl Fn(u8) -> Option<Input>,
    ) -> bool {
        // `open_top == NO_OPEN`: started, nothing open, no memory limit.
        if self.row_written != 0 || self.open_top != NO_OPEN || kinds.len() != self.top.len() {
            return false;
        }
        if !self.slots_plan.is_for(first, kinds) {
            self.plan_slots(first, kinds, input_of);
        }
        let (plan, nodes, counters) = (&self.slots_plan, &mut self.nodes, &mut self.counters);
        if plan.widths.is_empty() || slots.len() != plan.widths.len() || nulls & !plan.nullable != 0 {
            return false;
        }
        // Two copies of the loop: rows without nulls (most rows of most
        // producers) skip the null's masks and counts altogether.
        let columns = &mut nodes[first..first + slots.len()];
        if nulls == 0 {
            write_row::<false>(columns, counters, &plan.widths, slots, 0, self.rows);
        } else {
            write_row::<true>(columns, counters, &plan.widths, slots, nulls, self.rows);
        }
        self.rows += 1;
        self.commit();
        true
    }

    /// Makes the plan for `(first, kinds)`.
    #[cold]
    #[inline(never)]
    fn plan_slots(&mut self, first: usize, kinds: &[u8], input_of: impl Fn(u8) -> Option<Input>) {
        let nodes = &self.nodes;
        // Nodes `first ..` are distinct top-level columns (their key says
        // so), as many as there are: all of them.
        let widths: Option<Vec<u8>> = kinds
            .iter()
            .enumerate()
            .map(|(k, &kind)| {
                let n = nodes.get(first.checked_add(k)?)?;
                let input = input_of(kind)?;
                (n.top_key == input as u8 + 1).then(|| native_width(input) as u8)
            })
            .collect();
        let plan = &mut self.slots_plan;
        plan.first = first;
        plan.kinds.clear();
        plan.kinds.extend_from_slice(kinds);
        plan.widths = widths.filter(|w| w.len() == self.top.len()).unwrap_or_default();
        plan.nullable = (0..plan.widths.len())
            .filter(|&k| nodes[first + k].nullable && nodes[first + k].validity.is_some())
            .fold(0, |m, k| m | 1 << k);
    }
}

/// The values of one row on a plan (see `try_slots_row`): `slots[k]`, or
/// a null where bit `k` of `nulls` is set (`NULLS`: whether any is), into
/// top-level column `columns[k]` of width `widths[k]`, `rows` values long.
#[inline(always)]
fn write_row<const NULLS: bool>(
    columns: &mut [Node],
    counters: &mut Counters,
    widths: &[u8],
    slots: &[u64],
    nulls: u64,
    rows: usize,
) {
    for (k, ((n, &width), &v)) in columns.iter_mut().zip(widths).zip(slots).enumerate() {
        debug_assert_eq!(n.len, rows, "a top-level column out of step at the row's start");
        let null = NULLS && (nulls >> k) & 1 != 0;
        // The column's first null of the batch ends its lazy validity
        // (the lazy flag tested first: it is false once the batch has a
        // null, and a branch on `null` would mispredict).
        if NULLS && n.valid_lazy && null {
            n.materialize_validity(counters);
        }
        let v = if NULLS { v & (null as u64).wrapping_sub(1) } else { v };
        let Layout::Fixed { values, .. } = &mut n.layout else {
            unreachable!("the plan takes fixed-width columns only")
        };
        // Capacity for the batch's rows is reserved at its start; `push`
        // grows only past that.
        match width {
            1 => values.buf.push(v as u8),
            2 => values.buf.push(v as u16),
            4 => values.buf.push(v as u32),
            _ => values.buf.push(v),
        }
        if !n.valid_lazy {
            if let Some(valid) = &mut n.validity {
                put_bit(valid, n.len, !null);
            }
        }
        if NULLS {
            n.null_count += null as usize;
        }
        n.len += 1;
    }
}
