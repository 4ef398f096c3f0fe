//! Views (utf8_view, binary_view), list views and unions: their row-path
//! ends, nulls and column-path copies.

use arrow_data::ArrayData;

use crate::buffer::Slot;
use crate::columns::Bits;
use crate::encoded::read_int;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::node::Kind;
use crate::writer::{overflow, push_offset, ArrowWriter};

/// The bytes of one 16-byte view; `buffers` are the array's data buffers.
pub(crate) fn view_value<'a>(view: &'a [u8], buffers: &[&'a [u8]]) -> &'a [u8] {
    let len = u32::from_le_bytes(view[..4].try_into().expect("4 bytes")) as usize;
    if len <= 12 {
        return &view[4..4 + len];
    }
    let buffer = u32::from_le_bytes(view[8..12].try_into().expect("4 bytes")) as usize;
    let offset = u32::from_le_bytes(view[12..16].try_into().expect("4 bytes")) as usize;
    &buffers[buffer][offset..offset + len]
}

/// Where the data of the first `len` views of `views` ends.
pub(crate) fn view_data_end(views: &Slot, len: usize) -> usize {
    let b = views.buf.as_slice();
    (0..len)
        .rev()
        .map(|i| &b[i * 16..i * 16 + 16])
        .find_map(|v| {
            let n = u32::from_le_bytes(v[..4].try_into().expect("4 bytes")) as usize;
            (n > 12).then(|| u32::from_le_bytes(v[12..16].try_into().expect("4 bytes")) as usize + n)
        })
        .unwrap_or(0)
}

impl ArrowWriter {
    /// Appends one view value: inline up to 12 bytes, else in the data buffer.
    pub(crate) fn push_view(&mut self, node: usize, v: &[u8]) -> Result<()> {
        let n = &mut self.nodes[node];
        let mut view = [0u8; 16];
        if v.len() > u32::MAX as usize {
            return Err(overflow("append_bytes", &n.describe(node), v.len()));
        }
        view[..4].copy_from_slice(&(v.len() as u32).to_le_bytes());
        if v.len() <= 12 {
            view[4..4 + v.len()].copy_from_slice(v);
        } else {
            let data = n.data.as_mut().expect("view data");
            let at = data.buf.len();
            if at + v.len() > u32::MAX as usize {
                let what = n.describe(node);
                return Err(QuiverError::new(
                    ErrorCode::Overflow,
                    format!("append_bytes: {what}: the batch's view data would pass 2^32-1 bytes; finish this batch and write the value into the next"),
                ));
            }
            view[4..8].copy_from_slice(&v[..4]);
            view[12..16].copy_from_slice(&(at as u32).to_le_bytes());
            data.buf.extend_from_slice(v);
        }
        n.values.as_mut().expect("views").buf.extend_from_slice(&view);
        if let Some(valid) = &mut n.validity {
            valid.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// Ends an open union value: exactly one member got a value.
    pub(crate) fn end_union(&mut self, node: usize) -> Result<()> {
        let n = &self.nodes[node];
        let Kind::Union { dense } = n.kind else { unreachable!("union node") };
        let grown: Vec<usize> =
            (0..n.children.len()).filter(|&i| self.nodes[n.children[i]].len != n.open_lens[i]).collect();
        if grown.len() != 1 {
            return Err(QuiverError::invalid(format!(
                "end: union {} needs exactly one member value, got {}",
                n.describe(node),
                grown.len()
            )));
        }
        let member = grown[0];
        let child = n.children[member];
        let type_id = n.type_ids[member];
        let children = n.children.clone();
        let child_len = self.nodes[child].len;
        if dense {
            let n = &mut self.nodes[node];
            n.data.as_mut().expect("union offsets").buf.push((child_len - 1) as i32);
        } else {
            for &c in children.iter().filter(|&&c| c != child) {
                self.fill_null(c, 1);
            }
        }
        let n = &mut self.nodes[node];
        n.values.as_mut().expect("type ids").buf.push(type_id);
        n.len += 1;
        Ok(())
    }

    /// Ends an open list view value: its offset and size.
    pub(crate) fn end_list_view(&mut self, node: usize) -> Result<()> {
        let n = &self.nodes[node];
        let start = n.open_start;
        let size = self.nodes[n.children[0]].len - start;
        let width = n.offset_width();
        if width == 4 && start + size > i32::MAX as usize {
            return Err(overflow("end", &n.describe(node), start + size));
        }
        let n = &mut self.nodes[node];
        push_offset(n.values.as_mut().expect("offsets"), width, start);
        push_offset(n.data.as_mut().expect("sizes"), width, size);
        Ok(())
    }

    /// `count` null union values: nulls of the first member.
    pub(crate) fn fill_null_union(&mut self, node: usize, count: usize) {
        let n = &self.nodes[node];
        let Kind::Union { dense } = n.kind else { unreachable!("union node") };
        let (first, type_id) = (n.children[0], n.type_ids[0]);
        let children = n.children.clone();
        let base = self.nodes[first].len;
        let n = &mut self.nodes[node];
        for i in 0..count {
            n.values.as_mut().expect("type ids").buf.push(type_id);
            if dense {
                n.data.as_mut().expect("union offsets").buf.push((base + i) as i32);
            }
        }
        n.len += count;
        if dense {
            self.fill_null(first, count);
        } else {
            for c in children {
                self.fill_null(c, count);
            }
        }
    }

    /// Column path: a union array, value by value.
    pub(crate) fn copy_union(&mut self, node: usize, data: &ArrayData, start: usize, count: usize) -> Result<()> {
        let Kind::Union { dense } = self.nodes[node].kind else { unreachable!("union node") };
        let off = data.offset() + start;
        let type_ids = data.buffers()[0].as_slice();
        for i in off..off + count {
            let type_id = type_ids[i] as i8;
            let Some(member) = self.nodes[node].type_ids.iter().position(|&t| t == type_id) else {
                return Err(QuiverError::invalid(format!(
                    "write_array: union type id {type_id} is not one of the union's"
                )));
            };
            let child = self.nodes[node].children[member];
            let children = self.nodes[node].children.clone();
            let at = if dense { read_int(data.buffers()[1].as_slice(), 4, i) as usize } else { i };
            self.copy_data(child, &data.child_data()[member], at, 1)
                .inspect_err(|_| self.refused_at = self.refused_at.map(|_| i - data.offset()))?;
            let n = &mut self.nodes[node];
            n.values.as_mut().expect("type ids").buf.push(type_id);
            if dense {
                let child_len = self.nodes[child].len;
                self.nodes[node].data.as_mut().expect("union offsets").buf.push((child_len - 1) as i32);
            } else {
                for &c in children.iter().filter(|&&c| c != child) {
                    self.fill_null(c, 1);
                }
            }
            self.nodes[node].len += 1;
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
            self.nodes[node].open_start = begin;
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
