//! Dictionary and run-end encoded nodes. The logical values live in a hidden
//! value node; how an equal earlier value is found depends on its layout
//! (see `layout::encoded`).
//!
//! Flat values (utf8, binary and their large forms, fixed-width types and
//! fixed-size binary) given as the bytes they are stored as take the direct
//! path on the row path (the direct entries of `encoded_row`, at the fast
//! paths' position check: a typed value compared at its width, a byte
//! string, or any flat value as its bytes; `append_flat` on the full path,
//! under a memory limit):
//! the incoming bytes are hashed and looked up in the dictionary's table,
//! which compares them with the value node's own bytes, or compared with the
//! last run's value; the value node is written only for a new dictionary
//! value or a new run. Every other value (nested, boolean, view, any decimal
//! append, and the appends that convert, such as an `f32` into a float16)
//! is written into the value node first, then looked up (`commit_encoded`:
//! by the table for flat values, by a serialised key otherwise) and, when
//! found, rolled back out. Nested dictionary values thus keep the general
//! mechanism.
//!
//! The column path (`encoded_copy`) copies a dictionary array by merging its
//! values once per call (each input index used by a valid row is interned at
//! its first use, in row order, as the row path would) and then remapping
//! the keys in bulk; a run-end encoded array is copied run by run, a run
//! equal to the last one extending it, as on the row path.

use crate::buffer::bits::set_valid;
use crate::buffer::offsets::read_int;
use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::layout::encoded::{flat_hash, push_index, same_value, set_last_run_end};
use crate::layout::view::view_value;
use crate::layout::{flat_value, is_flat};
use crate::layout::{union, Encoding, Kind, Layout};

use super::ArrowWriter;

impl ArrowWriter {
    /// Takes the interning state out of encoded `node`, so that the writer
    /// can work on the value nodes meanwhile; `put_encoding` puts it back.
    pub(super) fn take_encoding(&mut self, node: usize) -> Box<Encoding> {
        self.nodes[node].layout.encoding_slot().take().expect("an encoded node, its encoding not taken")
    }

    pub(super) fn put_encoding(&mut self, node: usize, enc: Box<Encoding>) {
        *self.nodes[node].layout.encoding_slot() = Some(enc);
    }

    /// Records the value subtree of encoded `node` before a value is written.
    pub(crate) fn snapshot_values(&mut self, node: usize) {
        let mut enc = self.take_encoding(node);
        enc.snapshot.clear();
        enc.snapshot.extend(enc.subtree.iter().map(|&i| (self.nodes[i].len, self.nodes[i].null_count)));
        self.put_encoding(node, enc);
    }

    pub(super) fn restore_values(&mut self, enc: &Encoding) {
        self.truncate_nodes(&enc.subtree, &enc.snapshot);
    }

    /// Writes one value of encoded `node` with `write` (into its value node)
    /// and commits it as the node's next value.
    pub(crate) fn append_encoded(&mut self, node: usize, write: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        self.snapshot_values(node);
        if let Err(e) = write(self) {
            let enc = self.take_encoding(node);
            self.rollback_nodes(&enc.subtree, &enc.snapshot);
            self.put_encoding(node, enc);
            return Err(e);
        }
        self.commit_encoded(node)
    }

    /// The value just written into the value node becomes the next value of
    /// encoded `node`: a dictionary index, or a run.
    pub(crate) fn commit_encoded(&mut self, node: usize) -> Result<()> {
        let v = self.nodes[node].value_node.expect("encoded node");
        let Kind::Encoded { ree, .. } = self.nodes[node].kind() else { unreachable!("encoded node") };
        let written = self.nodes[v].len - 1;
        let mut enc = self.take_encoding(node);
        let max = enc.max;
        let result = if is_flat(&self.nodes[v].layout) {
            self.commit_flat(node, v, &mut enc, written, ree)
        } else if !ree {
            let mut key = Vec::new();
            self.value_key(v, written, &mut key);
            match enc.index.get(&key) {
                Some(&index) => {
                    self.restore_values(&enc);
                    self.push_key(node, index);
                    Ok(())
                }
                None if written > max => {
                    self.restore_values(&enc);
                    Err(self.encoded_full(node, "dictionary", max))
                }
                None => {
                    enc.index.insert(key, written);
                    self.push_key(node, written);
                    Ok(())
                }
            }
        } else {
            let mut key = Vec::new();
            self.value_key(v, written, &mut key);
            let len = self.nodes[node].len;
            if len + 1 > max {
                self.restore_values(&enc);
                Err(self.encoded_full(node, "run-end encoded column", max))
            } else if len > 0 && enc.last.as_deref() == Some(&key[..]) {
                self.restore_values(&enc);
                self.extend_last_run(node, 1);
                Ok(())
            } else {
                enc.last = Some(key);
                self.push_run(node, 1);
                Ok(())
            }
        };
        self.put_encoding(node, enc);
        result
    }

    /// `commit_encoded` of a flat value node `v`: value `written` (just
    /// written) is compared by its stored bytes.
    pub(super) fn commit_flat(
        &mut self,
        node: usize,
        v: usize,
        enc: &mut Encoding,
        written: usize,
        ree: bool,
    ) -> Result<()> {
        let max = enc.max;
        let vn = &self.nodes[v];
        let value = flat_value(vn.validity.as_ref(), &vn.layout, written);
        if !ree {
            let hash = flat_hash(value);
            let found = enc.table.find(hash, |i| same_value(flat_value(vn.validity.as_ref(), &vn.layout, i), value));
            match found {
                Some(index) => {
                    self.restore_values(enc);
                    self.push_key(node, index);
                    Ok(())
                }
                None if written > max => {
                    self.restore_values(enc);
                    Err(self.encoded_full(node, "dictionary", max))
                }
                None => {
                    debug_assert_eq!(enc.table.len(), written, "every value a dictionary entry");
                    enc.table.push(hash);
                    self.push_key(node, written);
                    Ok(())
                }
            }
        } else {
            let len = self.nodes[node].len;
            if len + 1 > max {
                self.restore_values(enc);
                Err(self.encoded_full(node, "run-end encoded column", max))
            } else if len > 0 && same_value(flat_value(vn.validity.as_ref(), &vn.layout, written - 1), value) {
                self.restore_values(enc);
                self.extend_last_run(node, 1);
                Ok(())
            } else {
                self.push_run(node, 1);
                Ok(())
            }
        }
    }

    /// Row path, flat values: the value of encoded `node` whose value node
    /// `v` stores it as the bytes `value` (checked by the caller: a
    /// variable-width value node, or a fixed-width one of `value.len()`
    /// bytes that needs no conversion). `write` writes it into `v`, which is
    /// done only for a new dictionary value or a new run; a refused value
    /// (by `write`, or a full key or run-end type) changes nothing.
    #[inline]
    pub(crate) fn append_flat(
        &mut self,
        node: usize,
        v: usize,
        value: &[u8],
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let mut enc = self.take_encoding(node);
        let result = self.append_flat_with(node, v, &mut enc, value, write);
        self.put_encoding(node, enc);
        result
    }

    #[inline(always)]
    fn append_flat_with(
        &mut self,
        node: usize,
        v: usize,
        enc: &mut Encoding,
        value: &[u8],
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let max = enc.max;
        let Kind::Encoded { ree, .. } = self.nodes[node].kind() else { unreachable!("encoded node") };
        if !ree {
            let hash = flat_hash(Some(value));
            let vn = &self.nodes[v];
            if let Some(index) =
                enc.table.find(hash, |i| same_value(flat_value(vn.validity.as_ref(), &vn.layout, i), Some(value)))
            {
                self.push_key(node, index);
                return Ok(());
            }
            let index = vn.len;
            if index > max {
                return Err(self.encoded_full(node, "dictionary", max));
            }
            write(self)?;
            debug_assert_eq!(self.nodes[v].len, index + 1, "one value written");
            debug_assert_eq!(enc.table.len(), index, "every value a dictionary entry");
            enc.table.push(hash);
            self.push_key(node, index);
            return Ok(());
        }
        let len = self.nodes[node].len;
        if len + 1 > max {
            return Err(self.encoded_full(node, "run-end encoded column", max));
        }
        let vn = &self.nodes[v];
        if len > 0 && same_value(flat_value(vn.validity.as_ref(), &vn.layout, vn.len - 1), Some(value)) {
            self.extend_last_run(node, 1);
            return Ok(());
        }
        write(self)?;
        self.push_run(node, 1);
        Ok(())
    }

    /// A new run of `len` values (its value just written into the value node).
    pub(super) fn push_run(&mut self, node: usize, len: usize) {
        let n = &mut self.nodes[node];
        n.len += len;
        let end = n.len;
        let Layout::RunEnd { run_ends, width, .. } = &mut n.layout else { unreachable!("a run-end layout") };
        push_index(run_ends, *width, end);
    }

    pub(super) fn encoded_full(&self, node: usize, what: &str, max: usize) -> QuiverError {
        QuiverError::new(
            ErrorCode::Overflow,
            format!(
                "{}: the {what} is full ({max} is the largest index its type holds); finish this batch and write the value into the next",
                self.nodes[node].describe(node)
            ),
        )
    }

    #[inline]
    pub(super) fn push_key(&mut self, node: usize, index: usize) {
        let n = &mut self.nodes[node];
        let Layout::Dictionary { keys, width, .. } = &mut n.layout else { unreachable!("a dictionary layout") };
        push_index(keys, *width, index);
        if let Some(v) = &mut n.validity {
            set_valid(v, n.len);
        }
        n.len += 1;
    }

    /// Makes the last run `extra` values longer.
    pub(crate) fn extend_last_run(&mut self, node: usize, extra: usize) {
        let n = &mut self.nodes[node];
        n.len += extra;
        let Layout::RunEnd { run_ends, width, .. } = &mut n.layout else { unreachable!("a run-end layout") };
        set_last_run_end(run_ends, *width, n.len);
    }

    /// `count` nulls of encoded `node` (a null key; for run-end encoding a
    /// null value, which extends a run of nulls).
    pub(crate) fn fill_null_encoded(&mut self, node: usize, count: usize) {
        let n = &mut self.nodes[node];
        if let Layout::Dictionary { keys, width, .. } = &mut n.layout {
            if let Some(v) = &mut n.validity {
                keys.buf.extend_zeros(count * *width);
                v.ensure_bits(n.len + count);
                n.null_count += count;
                n.len += count;
                return;
            }
        }
        // A run-end null, or a non-nullable dictionary under a null parent:
        // the value node's null (or zero) value, interned like any value.
        let v = n.value_node.expect("encoded node");
        for _ in 0..count {
            self.snapshot_values(node);
            self.fill_null(v, 1);
            // Cannot overflow: the one null value is interned once.
            let _ = self.commit_encoded(node);
        }
    }

    /// After a truncation: forget dictionary entries past the value node's
    /// length; cut run ends back to the runs left and end the last run at the
    /// node's length.
    pub(crate) fn repair_encoded(&mut self, node: usize) {
        let Kind::Encoded { ree, index_width } = self.nodes[node].kind() else { return };
        let v = self.nodes[node].value_node.expect("encoded node");
        let values = self.nodes[v].len;
        let mut enc = self.take_encoding(node);
        if ree {
            let n = &mut self.nodes[node];
            let Layout::RunEnd { run_ends, .. } = &mut n.layout else { unreachable!("a run-end layout") };
            run_ends.buf.truncate(values * index_width);
            if values > 0 {
                set_last_run_end(run_ends, index_width, n.len);
            }
            enc.last = None;
            if values > 0 && !is_flat(&self.nodes[v].layout) {
                let mut key = Vec::new();
                self.value_key(v, values - 1, &mut key);
                enc.last = Some(key);
            }
        } else {
            enc.index.retain(|_, index| *index < values);
            enc.table.truncate(values);
        }
        self.put_encoding(node, enc);
    }

    /// Appends a key identifying value `idx` of `node` to `out`: equal keys
    /// for equal values (nulls included), within one batch.
    pub(crate) fn value_key(&self, node: usize, idx: usize, out: &mut Vec<u8>) {
        let n = &self.nodes[node];
        if let Some(v) = &n.validity {
            if !v.get_bit(idx) {
                out.push(0);
                return;
            }
        }
        out.push(1);
        let list_key = |s: usize, e: usize, out: &mut Vec<u8>| {
            out.extend_from_slice(&((e - s) as u64).to_le_bytes());
            for j in s..e {
                self.value_key(n.children[0], j, out);
            }
        };
        match &n.layout {
            Layout::Null => {}
            Layout::Bool { values } => out.push(values.get_bit(idx) as u8),
            Layout::Fixed { values, width, .. } => {
                out.extend_from_slice(&bytes(values)[idx * width..(idx + 1) * width])
            }
            Layout::Var { offsets, data, large, .. } => {
                let w = if *large { 8 } else { 4 };
                let (s, e) = (read_int(bytes(offsets), w, idx) as usize, read_int(bytes(offsets), w, idx + 1) as usize);
                out.extend_from_slice(&((e - s) as u64).to_le_bytes());
                out.extend_from_slice(&bytes(data)[s..e]);
            }
            Layout::View { views, data, .. } => {
                let value = view_value(&bytes(views)[idx * 16..idx * 16 + 16], &[bytes(data)]);
                out.extend_from_slice(&(value.len() as u64).to_le_bytes());
                out.extend_from_slice(value);
            }
            Layout::List { offsets, large } => {
                let w = if *large { 8 } else { 4 };
                list_key(read_int(bytes(offsets), w, idx) as usize, read_int(bytes(offsets), w, idx + 1) as usize, out)
            }
            Layout::ListView { offsets, sizes, large, .. } => {
                let w = if *large { 8 } else { 4 };
                let s = read_int(bytes(offsets), w, idx) as usize;
                list_key(s, s + read_int(bytes(sizes), w, idx) as usize, out)
            }
            Layout::FixedList { size } => {
                for j in idx * size..(idx + 1) * size {
                    self.value_key(n.children[0], j, out);
                }
            }
            Layout::Struct => {
                for &c in &n.children {
                    self.value_key(c, idx, out);
                }
            }
            Layout::Union { type_ids, offsets, ids, .. } => {
                let type_id = bytes(type_ids)[idx] as i8;
                out.push(type_id as u8);
                let member = union::member_of(ids, type_id).expect("written type ids are known");
                let at = offsets.as_ref().map_or(idx, |o| read_int(bytes(o), 4, idx) as usize);
                self.value_key(n.children[member], at, out);
            }
            Layout::Dictionary { keys, width, .. } => {
                out.extend_from_slice(&bytes(keys)[idx * width..(idx + 1) * width]);
            }
            Layout::RunEnd { run_ends, width, .. } => {
                let runs = bytes(run_ends).len() / width;
                let run = (0..runs)
                    .position(|r| read_int(bytes(run_ends), *width, r) as usize > idx)
                    .expect("idx within the runs");
                self.value_key(n.value_node.expect("an encoded node has a value node"), run, out);
            }
        }
    }
}

/// The bytes of `slot` written so far.
fn bytes(slot: &Slot) -> &[u8] {
    slot.buf.as_slice()
}
