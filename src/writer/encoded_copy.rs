//! The column path's copies of dictionary and run-end encoded arrays (see
//! `encoded`): a dictionary's used values interned once per call, its keys
//! remapped in bulk; run-end arrays up to 256 whole runs of a fixed-width
//! value in one copy where the values allow it, else run by run.

use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::buffer::bits::Bits;
use crate::buffer::offsets::read_int;
use crate::error::{QuiverError, Result};
use crate::layout::encoded::same_value;
use crate::layout::{flat_value, is_flat, Encoding, Kind, Layout};

use super::dict_keys::{distinct_prefix, push_keys, DictKey, Stop, NEW};
use super::encoded_row::push_flat;
use super::run_ends::{increasing_prefix, push_ends, read_ends, RUNS_AT_ONCE};

use super::ArrowWriter;

impl ArrowWriter {
    fn encoding_mut(&mut self, node: usize) -> &mut Encoding {
        self.nodes[node].layout.encoding_slot().as_mut().expect("an encoded node, its encoding not taken")
    }

    /// The last key of dictionary `node` (the column path interns a value
    /// through `append_encoded`, which pushes its key).
    fn last_key(&self, node: usize) -> usize {
        let n = &self.nodes[node];
        let Layout::Dictionary { keys, width, .. } = &n.layout else { unreachable!("a dictionary layout") };
        let mut raw = [0u8; 8];
        raw[..*width].copy_from_slice(&keys.buf.as_slice()[(n.len - 1) * *width..n.len * *width]);
        u64::from_le_bytes(raw) as usize
    }

    /// Column path: rows `start..start+count` of a dictionary array with
    /// keys of `K` into dictionary `node`, in one pass: the validity first,
    /// then each row's key, remapped (`remap`: input index -> this
    /// dictionary's index) in tight runs; an input index not seen yet in
    /// this call is interned when a valid row first uses it, in row order
    /// (as the row path would), its key pushed by `append_encoded`. Under a
    /// null the key is 0.
    fn copy_dictionary<K: DictKey>(
        &mut self,
        node: usize,
        data: &ArrayData,
        start: usize,
        count: usize,
        bits: Option<Bits>,
        remap: &mut Vec<usize>,
    ) -> Result<()> {
        let v = self.nodes[node].value_node.expect("encoded node");
        let off = data.offset() + start;
        let values = &data.child_data()[0];
        let Some(input) = data.buffers()[0].as_slice().get(off * K::WIDTH..(off + count) * K::WIDTH) else {
            return Err(QuiverError::invalid("write_array: the dictionary keys are shorter than the array"));
        };
        remap.clear();
        // One entry past the input dictionary, for `push_keys`.
        remap.resize(values.len() + 1, NEW);
        self.copy_validity(node, "write_array", bits, count)?;
        // `Some(m)`: `remap` is the identity on `0..m` and holds no other
        // index (each value used so far was interned in its input order, as
        // the order of first use a builder gives), so a key below `m` is
        // copied as it is.
        let mut ident = Some(0);
        let mut i = 0;
        while i < count {
            let n = &mut self.nodes[node];
            let Layout::Dictionary { keys, width, .. } = &mut n.layout else { unreachable!("a dictionary layout") };
            if i == 0 {
                keys.buf.reserve(count * *width);
            }
            let rest = &input[i * K::WIDTH..];
            let (pushed, stop) = match *width {
                1 => push_keys::<K, u8>(rest, &mut keys.buf, remap, ident, bits, i),
                2 => push_keys::<K, u16>(rest, &mut keys.buf, remap, ident, bits, i),
                4 => push_keys::<K, u32>(rest, &mut keys.buf, remap, ident, bits, i),
                _ => push_keys::<K, u64>(rest, &mut keys.buf, remap, ident, bits, i),
            };
            n.len += pushed;
            i += pushed;
            match stop {
                Stop::End => break,
                Stop::OutOfRange(key) => {
                    return Err(QuiverError::invalid(format!(
                        "write_array: dictionary key {key} out of range ({} values)",
                        values.len()
                    )))
                }
                Stop::New(key) => {
                    let value = match values.nulls().is_some_and(|n| n.is_null(key)) {
                        false => flat_input(&self.nodes[v].layout, values, key),
                        true => None,
                    };
                    // A flat value is looked up by its bytes and written only when
                    // new: directly, or (refused there) through the full path,
                    // which pushes the key or gives the error.
                    let index = match value.and_then(|value| self.intern_flat(node, v, value)) {
                        Some(index) => {
                            self.push_key(node, index);
                            index
                        }
                        None => {
                            match value {
                                Some(value) => self.append_flat(node, v, value, |w| {
                                    match push_flat(&mut w.nodes[v], value, false) {
                                        true => Ok(()),
                                        false => w.copy_data(v, values, key, 1),
                                    }
                                }),
                                None => self.append_encoded(node, |w| w.copy_data(v, values, key, 1)),
                            }
                            .inspect_err(|_| self.refused_at = self.refused_at.map(|_| start + i))?;
                            self.last_key(node)
                        }
                    };
                    remap[key] = index;
                    // Still the identity while the values come in their input order.
                    ident = ident.filter(|&m| key == m && index == m).map(|m| m + 1);
                    i += 1;
                }
            }
        }
        Ok(())
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
            let DataType::Dictionary(key_type, _) = data.data_type() else {
                unreachable!("a dictionary node copies dictionary arrays, not {}", data.data_type())
            };
            let mut remap = std::mem::take(&mut self.encoding_mut(node).remap);
            let r = match key_type.as_ref() {
                DataType::Int8 => self.copy_dictionary::<i8>(node, data, start, count, bits, &mut remap),
                DataType::Int16 => self.copy_dictionary::<i16>(node, data, start, count, bits, &mut remap),
                DataType::Int32 => self.copy_dictionary::<i32>(node, data, start, count, bits, &mut remap),
                DataType::Int64 => self.copy_dictionary::<i64>(node, data, start, count, bits, &mut remap),
                DataType::UInt8 => self.copy_dictionary::<u8>(node, data, start, count, bits, &mut remap),
                DataType::UInt16 => self.copy_dictionary::<u16>(node, data, start, count, bits, &mut remap),
                DataType::UInt32 => self.copy_dictionary::<u32>(node, data, start, count, bits, &mut remap),
                DataType::UInt64 => self.copy_dictionary::<u64>(node, data, start, count, bits, &mut remap),
                other => unreachable!("dictionary keys are integers, not {other}"),
            };
            self.encoding_mut(node).remap = remap;
            return r;
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
            if run_end <= at {
                return Err(QuiverError::invalid("write_array: run ends are not increasing"));
            }
            let max = self.encoding_mut(node).max;
            if self.nodes[node].len + (run_end - at) > max {
                return Err(self.encoded_full(node, "run-end encoded column", max));
            }
            let (runs, to) = self.copy_fixed_runs(node, v, values, run_ends, run, at, off + count, max);
            if runs > 0 {
                (at, run) = (to, run + runs);
                continue;
            }
            if !self.copy_flat_run(node, v, values, run, run_end - at) {
                self.append_encoded(node, |w| w.copy_data(v, values, run, 1))
                    .inspect_err(|_| self.refused_at = self.refused_at.map(|_| at - data.offset()))?;
                if run_end - at > 1 {
                    self.extend_last_run(node, run_end - at - 1);
                }
            }
            at = run_end;
            run += 1;
        }
        Ok(())
    }
}

impl ArrowWriter {
    /// Up to `RUNS_AT_ONCE` whole runs of a run-end input, from run `run`
    /// (which starts at row `at`), ending at or before row `stop`, into
    /// run-end node `node` whose value node `v` is fixed width other than a
    /// decimal, in one copy of the values: taken while no value is null, no
    /// value equals the one before it (nor the first the node's last run)
    /// and the run ends increase, the node staying within `max` rows.
    /// `ends` is the input's run ends child. Returns how many runs it took
    /// and the row after the last; `(0, at)`, having changed nothing, when
    /// the first run does not qualify (the run by run copy then takes it).
    #[allow(clippy::too_many_arguments)]
    fn copy_fixed_runs(
        &mut self,
        node: usize,
        v: usize,
        values: &ArrayData,
        ends: &ArrayData,
        run: usize,
        at: usize,
        stop: usize,
        max: usize,
    ) -> (usize, usize) {
        // The ends are read into the encoding's scratch, kept for its capacity.
        let mut row = std::mem::take(&mut self.encoding_mut(node).remap);
        let r = self.copy_fixed_runs_into(node, v, values, ends, (run, at, stop, max), &mut row);
        self.encoding_mut(node).remap = row;
        r
    }

    /// `copy_fixed_runs` with `row` to read the run ends into (`(run, at,
    /// stop, max)`: its arguments of the same names).
    fn copy_fixed_runs_into(
        &mut self,
        node: usize,
        v: usize,
        values: &ArrayData,
        ends: &ArrayData,
        (run, at, stop, max): (usize, usize, usize, usize),
        row: &mut Vec<usize>,
    ) -> (usize, usize) {
        let Layout::Fixed { width, decimal: None, .. } = self.nodes[v].layout else { return (0, at) };
        if width == 0 {
            return (0, at);
        }
        let input = values.buffers().first().map_or(&[][..], |b| b.as_slice());
        let first = values.offset() + run;
        let held = input.len() / width;
        let runs_left = ends.len().min(values.len()).saturating_sub(run);
        let k = runs_left.min(held.saturating_sub(first)).min(RUNS_AT_ONCE);
        // Whole runs only, their ends increasing, the node within `max`.
        let end_width = ends.data_type().primitive_width().expect("run ends are integers");
        read_ends(ends.buffers()[0].as_slice(), end_width, ends.offset() + run, k, row);
        let (base, limit) = (self.nodes[node].len, stop.min(at + (max - self.nodes[node].len.min(max))));
        let mut k = increasing_prefix(row, at, limit);
        if let Some(n) = values.nulls() {
            if k > 0 && n.inner().slice(run, k).count_set_bits() != k {
                return (0, at);
            }
        }
        let bytes = &input[first * width..(first + k) * width];
        k = distinct_prefix(bytes, width);
        let vn = &self.nodes[v];
        if k == 0 || (vn.len > 0 && flat_value(vn.validity.as_ref(), &vn.layout, vn.len - 1) == Some(&bytes[..width])) {
            return (0, at);
        }
        let vn = &mut self.nodes[v];
        let Layout::Fixed { values: out, .. } = &mut vn.layout else { unreachable!("a fixed-width layout") };
        out.buf.extend_from_slice(&bytes[..k * width]);
        if let Some(valid) = &mut vn.validity {
            valid.set_bits_range(vn.len, k);
        }
        vn.len += k;
        let n = &mut self.nodes[node];
        let Layout::RunEnd { run_ends, width: w, .. } = &mut n.layout else { unreachable!("a run-end layout") };
        let to = row[k - 1];
        push_ends(run_ends, *w, row[..k].iter().map(|&e| base + (e - at)));
        n.len = base + (to - at);
        (k, to)
    }

    /// A run of `len` rows of value `run` of `values` into run-end node
    /// `node` (value node `v`) without the general copy, for flat value
    /// nodes other than decimals (whose copies check the precision): equal
    /// to the last run's value (bytes, or both null), the last run grows;
    /// else the value is pushed and a run added. False, having changed
    /// nothing, when this does not apply (another layout, a null for a value
    /// node without validity, an offset overflow): the general copy then
    /// writes it or gives the error.
    fn copy_flat_run(&mut self, node: usize, v: usize, values: &ArrayData, run: usize, len: usize) -> bool {
        if values.nulls().is_some_and(|n| n.is_null(run)) {
            let vn = &self.nodes[v];
            if !is_flat(&vn.layout) || vn.validity.is_none() {
                return false;
            }
            if self.nodes[node].len > 0 && flat_value(vn.validity.as_ref(), &vn.layout, vn.len - 1).is_none() {
                self.extend_last_run(node, len);
                return true;
            }
            self.fill_null(v, 1);
            self.push_run(node, len);
            return true;
        }
        let Some(value) = flat_input(&self.nodes[v].layout, values, run) else { return false };
        let vn = &self.nodes[v];
        if self.nodes[node].len > 0 && same_value(flat_value(vn.validity.as_ref(), &vn.layout, vn.len - 1), Some(value))
        {
            self.extend_last_run(node, len);
            return true;
        }
        if !push_flat(&mut self.nodes[v], value, false) {
            return false;
        }
        self.push_run(node, len);
        true
    }
}

/// The bytes value `i` of `values` is stored as in a value node of
/// `layout`, for the layouts the direct paths take (variable width from
/// utf8 or binary, fixed width other than decimals, whose copies check the
/// precision); `None` for any other layout, or a value its buffers do not
/// hold. The caller checks that the value is not null.
fn flat_input<'a>(layout: &Layout, values: &'a ArrayData, i: usize) -> Option<&'a [u8]> {
    let at = values.offset() + i;
    let b = values.buffers();
    match (layout, values.data_type()) {
        (
            Layout::Var { large, .. },
            DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary,
        ) => {
            let w = if *large { 8 } else { 4 };
            let offsets = b[0].as_slice();
            if offsets.len() < (at + 2) * w {
                return None;
            }
            let (s, e) = (read_int(offsets, w, at), read_int(offsets, w, at + 1));
            if s < 0 || s > e {
                return None;
            }
            b[1].as_slice().get(s as usize..e as usize)
        }
        (Layout::Fixed { width, decimal: None, .. }, _) => b[0].as_slice().get(at * width..(at + 1) * width),
        _ => None,
    }
}
