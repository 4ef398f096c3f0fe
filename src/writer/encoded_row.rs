//! The row path's direct entry for dictionary and run-end encoded nodes of
//! flat values (see `encoded`): the value looked up by its bytes without
//! taking the encoding out of the node, written into the value node only
//! when it is new.
//!
//! Three forms of the same entry, by how the value comes (a [`Flat`]): any
//! flat value as its stored bytes (`try_encoded`, compared as a slice of
//! any length), a typed value of the width its value node stores
//! (`try_encoded_native`, compared as one word), and a byte string into a
//! variable-width value node (`try_encoded_bytes`). The last two are taken
//! by the nodes whose `Node::enc_key` names their input.

use arrow_buffer::{ArrowNativeType, ToByteSlice};

use crate::buffer::bits::set_valid;
use crate::buffer::push::push_value;
use crate::error::Result;
use crate::layout::encoded::{flat_hash, push_index, same_value, set_last_run_end};
use crate::layout::{flat_value, var, Encoding, Layout};
use crate::node::{Input, Node, NO_OPEN};

use super::ArrowWriter;

/// A value on its way into an encoded node's value node: how it compares
/// with a stored value, and how it is written there.
trait Flat {
    /// Its bytes as stored (what the dictionary's table hashes).
    fn bytes(&self) -> &[u8];
    /// Whether value `i` of value node `vn` equals it (a null does not).
    fn stored(&self, vn: &Node, i: usize) -> bool;
    /// Appends it to value node `vn`; false, having written nothing, when
    /// refused (invalid UTF-8, an offset overflow).
    fn push(&self, vn: &mut Node) -> bool;
}

/// Any flat value as its stored bytes.
struct AnyFlat<'a> {
    bytes: &'a [u8],
    check_utf8: bool,
}

impl Flat for AnyFlat<'_> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.bytes
    }

    #[inline(always)]
    fn stored(&self, vn: &Node, i: usize) -> bool {
        same_value(flat_value(vn.validity.as_ref(), &vn.layout, i), Some(self.bytes))
    }

    #[inline(always)]
    fn push(&self, vn: &mut Node) -> bool {
        push_flat(vn, self.bytes, self.check_utf8)
    }
}

/// A typed value into a fixed-width value node of its width.
struct Native<T>(T);

impl<T: ArrowNativeType> Flat for Native<T> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.0.to_byte_slice()
    }

    #[inline(always)]
    fn stored(&self, vn: &Node, i: usize) -> bool {
        // The width is `T`'s, known when compiled: one load and compare.
        let w = std::mem::size_of::<T>();
        let Layout::Fixed { values, .. } = &vn.layout else { return false };
        valid_at(vn, i) && values.buf.as_slice()[i * w..(i + 1) * w] == *self.bytes()
    }

    #[inline(always)]
    fn push(&self, vn: &mut Node) -> bool {
        let Layout::Fixed { values, .. } = &mut vn.layout else { return false };
        push_value(&mut values.buf, self.0);
        push_valid(vn);
        true
    }
}

/// A byte string into a variable-width value node (`is_utf8`: known valid).
struct VarBytes<'a> {
    bytes: &'a [u8],
    check_utf8: bool,
}

impl Flat for VarBytes<'_> {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.bytes
    }

    #[inline(always)]
    fn stored(&self, vn: &Node, i: usize) -> bool {
        let Layout::Var { offsets, data, large: false, .. } = &vn.layout else {
            return AnyFlat::stored(&self.any(), vn, i);
        };
        let o = offsets.buf.as_slice();
        let at = i * 4;
        let s = u32::from_ne_bytes(o[at..at + 4].try_into().expect("4 bytes")) as usize;
        let e = u32::from_ne_bytes(o[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        valid_at(vn, i) && same_value(Some(&data.buf.as_slice()[s..e]), Some(self.bytes))
    }

    #[inline(always)]
    fn push(&self, vn: &mut Node) -> bool {
        push_flat(vn, self.bytes, self.check_utf8)
    }
}

impl<'a> VarBytes<'a> {
    fn any(&self) -> AnyFlat<'a> {
        AnyFlat { bytes: self.bytes, check_utf8: self.check_utf8 }
    }
}

/// Whether value `i` of value node `vn` is valid: no bit is read while the
/// node has no null this batch.
#[inline(always)]
fn valid_at(vn: &Node, i: usize) -> bool {
    debug_assert!(vn.null_count > 0 || vn.validity.as_ref().is_none_or(|b| (0..vn.len).all(|j| b.get_bit(j))));
    vn.null_count == 0 || vn.validity.as_ref().is_none_or(|b| b.get_bit(i))
}

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
        let check_utf8 = self.options.validate_utf8;
        flat && self.encoded_direct(node, dst, &AnyFlat { bytes, check_utf8 })
    }

    /// The byte strings past their fast path: encoded `node` of
    /// variable-width values (`Node::enc_key`) at its position takes the
    /// direct entry (`is_utf8`: `v` is known to be UTF-8, not checked again);
    /// false, having changed nothing, otherwise.
    #[inline(always)]
    pub(super) fn try_encoded_bytes(&mut self, node: usize, v: &[u8], is_utf8: bool) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        if n.enc_key != Input::Bytes as u8 + 1 || !self.at_slot(n) {
            return false;
        }
        let dst = n.value_node.expect("an encoded node");
        let check_utf8 = self.options.validate_utf8 && !is_utf8;
        self.encoded_direct(node, dst, &VarBytes { bytes: v, check_utf8 })
    }

    /// The typed appends past their fast path: encoded `node` whose
    /// fixed-width values take `input` as stored (`Node::enc_key`) at its
    /// position takes the typed direct entry; anything else `append_le`
    /// (a call of its own, so that this entry saves only the registers its
    /// own work needs).
    #[inline(never)]
    pub(super) fn append_native_slow<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> Result<()> {
        if self.try_encoded_native(node, input, v) {
            return Ok(());
        }
        self.append_native_le(node, input, v)
    }

    /// `append_le` of the little-endian bytes of `v`.
    #[inline(never)]
    fn append_native_le<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> Result<()> {
        let mut le = [0u8; 8];
        let w = std::mem::size_of::<T>();
        le[..w].copy_from_slice(v.to_byte_slice());
        if cfg!(target_endian = "big") {
            le[..w].reverse();
        }
        self.append_le(node, input, &le[..w])
    }

    /// `try_encoded` of a typed value `v` (stored as it is: `Node::enc_key`
    /// says the value node takes `input` natively), compared as a value of
    /// its width rather than as a slice of any length.
    #[inline(always)]
    fn try_encoded_native<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        if n.enc_key != input as u8 + 1 || !self.at_slot(n) {
            return false;
        }
        let dst = n.value_node.expect("an encoded node");
        self.encoded_direct(node, dst, &Native(v))
    }

    /// The direct entry without taking the encoding out of the node (at its
    /// position, checked by the caller): looks `value` up (the dictionary's
    /// table, or the last run's value) and pushes its key or grows the run,
    /// or writes it into value node `dst` and adds it as a new entry or
    /// run, and counts the row's value. False, having changed nothing, when
    /// it is refused (a full key or run-end type, or the value node refuses
    /// it: invalid UTF-8, an offset overflow), which the full path then
    /// reports.
    #[inline(always)]
    fn encoded_direct(&mut self, node: usize, dst: usize, value: &impl Flat) -> bool {
        // Value nodes come after the public nodes.
        let (public, hidden) = self.nodes.split_at_mut(dst);
        let (n, vn) = (&mut public[node], &mut hidden[0]);
        let top = n.up == NO_OPEN;
        match &mut n.layout {
            Layout::Dictionary { keys, width, encoding: Some(enc) } => {
                let Some(index) = dictionary_index(enc, vn, value) else { return false };
                push_index(keys, *width, index);
                if let Some(v) = &mut n.validity {
                    set_valid(v, n.len);
                }
            }
            Layout::RunEnd { run_ends, width, encoding: Some(enc) } => {
                if n.len + 1 > enc.max {
                    return false;
                }
                if n.len > 0 && value.stored(vn, vn.len - 1) {
                    set_last_run_end(run_ends, *width, n.len + 1);
                } else {
                    if !value.push(vn) {
                        return false;
                    }
                    push_index(run_ends, *width, n.len + 1);
                }
            }
            _ => return false,
        }
        n.len += 1;
        if top {
            self.row_written += 1;
        }
        true
    }

    /// The column path's interning of a flat value (its stored bytes) into
    /// dictionary `node` (value node `dst`), as the row path's direct entry
    /// does it: its index, found or written as a new entry, no key pushed;
    /// `None`, having changed nothing, when it is refused (a full key type,
    /// or the value node refuses it), which the full path then reports.
    pub(super) fn intern_flat(&mut self, node: usize, dst: usize, bytes: &[u8]) -> Option<usize> {
        let (public, hidden) = self.nodes.split_at_mut(dst);
        let Layout::Dictionary { encoding: Some(enc), .. } = &mut public[node].layout else { return None };
        dictionary_index(enc, &mut hidden[0], &AnyFlat { bytes, check_utf8: false })
    }
}

/// The index of `value` in the dictionary whose table is `enc`'s and
/// whose value node is `vn`: found by its hash and bytes, or pushed into
/// `vn` and added to the table; `None`, having changed nothing, when the
/// key type is full or `vn` refuses the value.
#[inline(always)]
fn dictionary_index(enc: &mut Encoding, vn: &mut Node, value: &impl Flat) -> Option<usize> {
    let hash = flat_hash(Some(value.bytes()));
    if let Some(index) = enc.table.find(hash, |i| value.stored(vn, i)) {
        return Some(index);
    }
    let index = vn.len;
    if index > enc.max || !value.push(vn) {
        return None;
    }
    enc.table.push(hash);
    Some(index)
}

/// The value just pushed into value node `vn` is valid: its bit, and its length.
#[inline(always)]
fn push_valid(vn: &mut Node) {
    if let Some(v) = &mut vn.validity {
        set_valid(v, vn.len);
    }
    vn.len += 1;
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
            1 => push_value(&mut values.buf, value[0]),
            2 => push_value(&mut values.buf, u16::from_le_bytes(value.try_into().expect("2 bytes"))),
            4 => push_value(&mut values.buf, u32::from_le_bytes(value.try_into().expect("4 bytes"))),
            8 => push_value(&mut values.buf, u64::from_le_bytes(value.try_into().expect("8 bytes"))),
            _ => values.buf.extend_from_slice(value),
        },
        _ => unreachable!("a flat layout"),
    }
    push_valid(vn);
    true
}
