//! The column path's copies of dictionary and run-end encoded arrays (see
//! `encoded`): a dictionary's used values interned once per call, its keys
//! remapped in bulk; run-end arrays run by run.

use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::buffer::bits::{for_each_run, Bits};
use crate::buffer::offsets::read_int;
use crate::error::{QuiverError, Result};
use crate::layout::{Encoding, Kind, Layout};

use super::ArrowWriter;

impl ArrowWriter {
    fn encoding_mut(&mut self, node: usize) -> &mut Encoding {
        self.nodes[node].layout.encoding_slot().as_mut().expect("an encoded node, its encoding not taken")
    }

    /// Removes the last key of dictionary `node` and returns it (the column
    /// path interns a value through `append_encoded`, which pushes its key).
    fn pop_key(&mut self, node: usize) -> usize {
        let n = &mut self.nodes[node];
        let len = n.len - 1;
        let Layout::Dictionary { keys, width, .. } = &mut n.layout else { unreachable!("a dictionary layout") };
        let mut raw = [0u8; 8];
        raw[..*width].copy_from_slice(&keys.buf.as_slice()[len * *width..(len + 1) * *width]);
        keys.buf.truncate(len * *width);
        if let Some(v) = &mut n.validity {
            v.clear_bits(len, len + 1);
        }
        n.len = len;
        u64::from_le_bytes(raw) as usize
    }

    /// Column path: rows `start..start+count` of a dictionary array with
    /// keys of `K` into dictionary `node`. First each input index a valid
    /// row uses is interned, at its first use in row order (`remap`: input
    /// index -> this dictionary's index); then the keys are remapped in bulk
    /// (0 under a null) and the validity copied.
    fn copy_dictionary<K: DictKey>(
        &mut self,
        node: usize,
        data: &ArrayData,
        start: usize,
        count: usize,
        bits: Option<Bits>,
        remap: &mut Vec<usize>,
    ) -> Result<()> {
        const NEW: usize = usize::MAX;
        let v = self.nodes[node].value_node.expect("encoded node");
        let off = data.offset() + start;
        let values = &data.child_data()[0];
        let Some(input) = data.buffers()[0].as_slice().get(off * K::WIDTH..(off + count) * K::WIDTH) else {
            return Err(QuiverError::invalid("write_array: the dictionary keys are shorter than the array"));
        };
        remap.clear();
        remap.resize(values.len(), NEW);
        for_each_run(bits, count, |s, e, valid| {
            if !valid {
                return Ok(());
            }
            for (i, key) in input[s * K::WIDTH..e * K::WIDTH].chunks_exact(K::WIDTH).enumerate() {
                let key = K::index(key);
                match remap.get(key) {
                    Some(&index) if index != NEW => continue,
                    Some(_) => {}
                    None => {
                        return Err(QuiverError::invalid(format!(
                            "write_array: dictionary key {key} out of range ({} values)",
                            values.len()
                        )))
                    }
                }
                self.append_encoded(node, |w| w.copy_data(v, values, key, 1))
                    .inspect_err(|_| self.refused_at = self.refused_at.map(|_| start + s + i))?;
                remap[key] = self.pop_key(node);
            }
            Ok(())
        })?;
        let n = &mut self.nodes[node];
        let Layout::Dictionary { keys, width, .. } = &mut n.layout else { unreachable!("a dictionary layout") };
        let width = *width;
        let at = keys.buf.len();
        keys.buf.resize(at + count * width, 0);
        let out = &mut keys.buf.as_slice_mut()[at..];
        match width {
            1 => remap_keys::<K, 1>(input, out, remap, bits),
            2 => remap_keys::<K, 2>(input, out, remap, bits),
            4 => remap_keys::<K, 4>(input, out, remap, bits),
            _ => remap_keys::<K, 8>(input, out, remap, bits),
        }
        self.copy_validity(node, "write_array", bits, count)?;
        self.nodes[node].len += count;
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

/// An input dictionary key type: its width and how one key reads as an
/// index (a negative key reads as an index past any dictionary).
trait DictKey {
    const WIDTH: usize;
    fn index(bytes: &[u8]) -> usize;
}

macro_rules! dict_keys {
    ($($t:ty),*) => {$(
        impl DictKey for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn index(bytes: &[u8]) -> usize {
                let v = <$t>::from_le_bytes(bytes.try_into().expect("one key"));
                usize::try_from(v).unwrap_or(usize::MAX)
            }
        }
    )*};
}

dict_keys!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Writes this dictionary's index of each valid row (`remap` of its input
/// key in `input`, keys of `K`) as `OUT`-byte keys into `out`, which holds
/// zeros: the key under a null stays 0.
fn remap_keys<K: DictKey, const OUT: usize>(input: &[u8], out: &mut [u8], remap: &[usize], bits: Option<Bits>) {
    let count = out.len() / OUT;
    let _ = for_each_run(bits, count, |s, e, valid| {
        if valid {
            let keys = input[s * K::WIDTH..e * K::WIDTH].chunks_exact(K::WIDTH);
            for (key, slot) in keys.zip(out[s * OUT..e * OUT].chunks_exact_mut(OUT)) {
                slot.copy_from_slice(&(remap[K::index(key)] as u64).to_le_bytes()[..OUT]);
            }
        }
        Ok(())
    });
}
