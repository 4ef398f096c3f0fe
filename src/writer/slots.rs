//! A whole row of fixed-width values without nulls in one call
//! (`quiver_append_slots`, the JVM binding's `Writer.appendRow`), on a plan
//! made once for the call's kinds: whether they are the writer's top-level
//! columns in order, each taking its kind natively, and the width each
//! writes. Rows the plan does not cover (nulls, a row already begun, a
//! memory limit, other kinds) take the per-value fast paths and then the
//! full appends.

use crate::buffer::bits::set_valid;
use crate::layout::Layout;
use crate::node::fast::native_width;
use crate::node::{Input, NO_OPEN};

use super::{ArrowWriter, SlotsPlan};

impl SlotsPlan {
    #[inline(always)]
    fn is_for(&self, first: usize, kinds: &[u8]) -> bool {
        self.first == first && self.kinds.len() == kinds.len() && self.kinds.iter().zip(kinds).all(|(a, b)| a == b)
    }
}

impl ArrowWriter {
    /// Appends `slots[k]` (its low bytes) to node `first + k` for every
    /// `k`, and ends the row, when that is the whole row: no value of it
    /// written yet, nothing open, no memory limit, and nodes `first ..` are
    /// all the top-level columns, each taking `input_of(kinds[k])` natively
    /// (`kinds` and `slots` of one length). Else changes nothing and
    /// returns false. The values are not null (the caller's mask is 0).
    #[inline]
    pub(crate) fn try_slots_row(
        &mut self,
        first: usize,
        kinds: &[u8],
        slots: &[u64],
        input_of: impl Fn(u8) -> Option<Input>,
    ) -> bool {
        // `open_top == NO_OPEN`: started, nothing open, no memory limit.
        if self.row_written != 0 || self.open_top != NO_OPEN || kinds.len() != self.top.len() {
            return false;
        }
        if !self.slots_plan.is_for(first, kinds) {
            self.plan_slots(first, kinds, input_of);
        }
        let (plan, nodes) = (&self.slots_plan, &mut self.nodes);
        if plan.widths.is_empty() || slots.len() != plan.widths.len() {
            return false;
        }
        for ((n, &width), &v) in nodes[first..first + slots.len()].iter_mut().zip(&plan.widths).zip(slots) {
            debug_assert_eq!(n.len, self.rows, "a top-level column out of step at the row's start");
            let Layout::Fixed { values, .. } = &mut n.layout else {
                unreachable!("the plan takes fixed-width columns only")
            };
            // Capacity for the batch's rows is reserved at its start;
            // `push` grows only past that.
            match width {
                1 => values.buf.push(v as u8),
                2 => values.buf.push(v as u16),
                4 => values.buf.push(v as u32),
                _ => values.buf.push(v),
            }
            if !n.valid_lazy {
                if let Some(valid) = &mut n.validity {
                    set_valid(valid, n.len);
                }
            }
            n.len += 1;
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
                (n.top_key == input as u8 + 1 && n.top_key != 0).then(|| native_width(input) as u8)
            })
            .collect();
        let plan = &mut self.slots_plan;
        plan.first = first;
        plan.kinds.clear();
        plan.kinds.extend_from_slice(kinds);
        plan.widths = widths.filter(|w| w.len() == self.top.len()).unwrap_or_default();
    }
}
