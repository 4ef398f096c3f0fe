//! Dictionary and run-end encoded nodes: the logical values are written into
//! a hidden value node; each finished value is then looked up (dictionary:
//! an earlier equal value gives its index; run-end: equal to the last value
//! extends the run) and, when found, rolled back out of the value node.

use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::buffer::bits::Bits;
use crate::buffer::offsets::read_int;
use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::layout::encoded::{max_key, push_index, set_last_run_end};
use crate::layout::view::view_value;
use crate::layout::{union, Encoding, Kind, Layout};

use super::ArrowWriter;

impl ArrowWriter {
    /// Takes the interning state out of encoded `node`, so that the writer
    /// can work on the value nodes meanwhile; `put_encoding` puts it back.
    fn take_encoding(&mut self, node: usize) -> Box<Encoding> {
        self.nodes[node].layout.encoding_slot().take().expect("an encoded node, its encoding not taken")
    }

    fn put_encoding(&mut self, node: usize, enc: Box<Encoding>) {
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
        let Kind::Encoded { ree, index_width } = self.nodes[node].kind() else { unreachable!("encoded node") };
        let written = self.nodes[v].len - 1;
        let mut key = Vec::new();
        self.value_key(v, written, &mut key);
        let max = max_key(self.nodes[node].field.data_type());
        let mut enc = self.take_encoding(node);
        let result = if !ree {
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
                let n = &mut self.nodes[node];
                let Layout::RunEnd { run_ends, .. } = &mut n.layout else { unreachable!("a run-end layout") };
                push_index(run_ends, index_width, len + 1);
                n.len += 1;
                Ok(())
            }
        };
        self.put_encoding(node, enc);
        result
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

    fn push_key(&mut self, node: usize, index: usize) {
        let n = &mut self.nodes[node];
        let Layout::Dictionary { keys, width, .. } = &mut n.layout else { unreachable!("a dictionary layout") };
        push_index(keys, *width, index);
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
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
                let mut key = Vec::new();
                self.value_key(v, values - 1, &mut key);
                enc.last = Some(key);
            } else {
                enc.last = None;
            }
        } else {
            enc.index.retain(|_, index| *index < values);
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

    /// Column path: rows `start..start+count` of a dictionary or run-end
    /// encoded array into encoded `node`.
    pub(crate) fn copy_encoded(
        &mut self,
        node: usize,
        data: &ArrayData,
        start: usize,
        count: usize,
        bits: Option<Bits>,
    ) -> Result<()> {
        let Kind::Encoded { ree, .. } = self.nodes[node].kind() else { unreachable!("encoded node") };
        let v = self.nodes[node].value_node.expect("encoded node");
        let off = data.offset() + start;
        if !ree {
            let key_width = match data.data_type() {
                DataType::Dictionary(k, _) => k.primitive_width().expect("dictionary keys are integers"),
                other => unreachable!("a dictionary node copies dictionary arrays, not {other}"),
            };
            let unsigned = matches!(data.data_type(), DataType::Dictionary(k, _) if !k.is_signed_integer());
            let keys = data.buffers()[0].as_slice();
            let values = &data.child_data()[0];
            let mut ours: Vec<Option<usize>> = vec![None; values.len()];
            for i in 0..count {
                if bits.is_some_and(|b| !b.get(i)) {
                    self.fill_null_encoded(node, 1);
                    continue;
                }
                let raw = read_int(keys, key_width, off + i);
                let key = if unsigned && raw < 0 {
                    (raw as u64 & ((1u128 << (key_width * 8)) - 1) as u64) as usize
                } else {
                    raw as usize
                };
                if key >= values.len() {
                    return Err(QuiverError::invalid(format!(
                        "write_array: dictionary key {key} out of range ({} values)",
                        values.len()
                    )));
                }
                let Kind::Encoded { index_width, .. } = self.nodes[node].kind() else { unreachable!() };
                match ours[key] {
                    Some(index) => self.push_key(node, index),
                    None => {
                        self.append_encoded(node, |w| w.copy_data(v, values, key, 1))
                            .inspect_err(|_| self.refused_at = self.refused_at.map(|_| start + i))?;
                        let Layout::Dictionary { keys, .. } = &self.nodes[node].layout else {
                            unreachable!("a dictionary layout")
                        };
                        ours[key] =
                            Some(read_int(keys.buf.as_slice(), index_width, self.nodes[node].len - 1) as u64 as usize);
                    }
                }
            }
            return Ok(());
        }
        let run_ends = &data.child_data()[0];
        let values = &data.child_data()[1];
        let end_width = run_ends.data_type().primitive_width().expect("run ends are integers");
        let ends = run_ends.buffers()[0].as_slice();
        let end_of = |r: usize| read_int(ends, end_width, run_ends.offset() + r) as usize;
        let mut run = (0..run_ends.len()).position(|r| end_of(r) > off).unwrap_or(run_ends.len());
        let mut at = off;
        while at < off + count {
            if run >= run_ends.len() {
                return Err(QuiverError::invalid("write_array: run ends stop before the array's length"));
            }
            let run_end = end_of(run).min(off + count);
            self.append_encoded(node, |w| w.copy_data(v, values, run, 1))
                .inspect_err(|_| self.refused_at = self.refused_at.map(|_| at - data.offset()))?;
            if run_end - at > 1 {
                self.extend_last_run(node, run_end - at - 1);
            }
            at = run_end;
            run += 1;
        }
        Ok(())
    }
}

/// The bytes of `slot` written so far.
fn bytes(slot: &Slot) -> &[u8] {
    slot.buf.as_slice()
}
