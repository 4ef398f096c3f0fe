//! The row path's direct entry for dictionary and run-end encoded nodes of
//! flat values (see `encoded`): the value looked up by its bytes without
//! taking the encoding out of the node, written into the value node only
//! when it is new.

use crate::buffer::bits::set_valid;
use crate::layout::encoded::{flat_hash, push_index, same_value, set_last_run_end};
use crate::layout::{flat_value, var, Layout};
use crate::node::{Input, Node, NO_OPEN};

use super::ArrowWriter;

impl ArrowWriter {
    /// The row path's direct entry for encoded `node` (value node `dst`): a
    /// flat value given as the bytes it is stored as, at the node's position
    /// (the fast paths' check, so never under a memory limit). True when
    /// written; false, having changed nothing, when it does not apply or the
    /// value is refused (the full path then gives the error).
    #[inline(always)]
    pub(super) fn try_encoded(&mut self, node: usize, dst: usize, input: Input, bytes: &[u8]) -> bool {
        let n = &self.nodes[node];
        if !self.at_slot(n) {
            return false;
        }
        let d = &self.nodes[dst];
        let flat = match d.layout {
            Layout::Var { .. } => input == Input::Bytes,
            Layout::Fixed { width, decimal: None, .. } => width == bytes.len() && d.accepts(input),
            _ => false,
        };
        if !flat {
            return false;
        }
        let up = n.up;
        if !self.encoded_direct(node, dst, bytes) {
            return false;
        }
        if up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    /// `try_encoded` without taking the encoding out of the node: looks
    /// `value` up (the dictionary's table, or the last run's value) and
    /// pushes its key or grows the run, or writes it into value node `dst`
    /// and adds it as a new entry or run. False, having changed nothing,
    /// when it is refused (a full key or run-end type, invalid UTF-8, an
    /// offset overflow), which the full path then reports.
    #[inline(always)]
    fn encoded_direct(&mut self, node: usize, dst: usize, value: &[u8]) -> bool {
        let check_utf8 = self.options.validate_utf8;
        // Value nodes come after the public nodes.
        let (public, hidden) = self.nodes.split_at_mut(dst);
        let (n, vn) = (&mut public[node], &mut hidden[0]);
        match &mut n.layout {
            Layout::Dictionary { keys, width, encoding: Some(enc) } => {
                let hash = flat_hash(Some(value));
                let found =
                    enc.table.find(hash, |i| same_value(flat_value(vn.validity.as_ref(), &vn.layout, i), Some(value)));
                let index = match found {
                    Some(index) => index,
                    None => {
                        let index = vn.len;
                        if index > enc.max || !push_flat(vn, value, check_utf8) {
                            return false;
                        }
                        enc.table.push(hash);
                        index
                    }
                };
                push_index(keys, *width, index);
                if let Some(v) = &mut n.validity {
                    set_valid(v, n.len);
                }
                n.len += 1;
                true
            }
            Layout::RunEnd { run_ends, width, encoding: Some(enc) } => {
                if n.len + 1 > enc.max {
                    return false;
                }
                if n.len > 0 && same_value(flat_value(vn.validity.as_ref(), &vn.layout, vn.len - 1), Some(value)) {
                    n.len += 1;
                    set_last_run_end(run_ends, *width, n.len);
                    return true;
                }
                if !push_flat(vn, value, check_utf8) {
                    return false;
                }
                n.len += 1;
                push_index(run_ends, *width, n.len);
                true
            }
            _ => false,
        }
    }
}

/// Appends flat `value` (its stored bytes: a variable-width value, or one
/// of the fixed-width node's width) to value node `vn`; false, having
/// written nothing, for invalid UTF-8 (`check_utf8` on a utf8 node) or an
/// offset past what 4-byte offsets address.
#[inline(always)]
pub(super) fn push_flat(vn: &mut Node, value: &[u8], check_utf8: bool) -> bool {
    match &mut vn.layout {
        Layout::Var { offsets, data, large, utf8 } => {
            if (*utf8 && check_utf8 && !var::valid_utf8(value)) || var::push(offsets, data, *large, value).is_err() {
                return false;
            }
        }
        Layout::Fixed { values, .. } => match value.len() {
            1 => values.buf.push(value[0]),
            2 => values.buf.push(u16::from_le_bytes(value.try_into().expect("2 bytes"))),
            4 => values.buf.push(u32::from_le_bytes(value.try_into().expect("4 bytes"))),
            8 => values.buf.push(u64::from_le_bytes(value.try_into().expect("8 bytes"))),
            _ => values.buf.extend_from_slice(value),
        },
        _ => unreachable!("a flat layout"),
    }
    if let Some(v) = &mut vn.validity {
        set_valid(v, vn.len);
    }
    vn.len += 1;
    true
}
