//! The column path: bulk copies of whole top-level columns from native slices
//! or from any arrow array, with zeros under every null (docs/design.md §2 rule 6).

use arrow_array::Array;
use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::bit_iterator::BitSliceIterator;
use arrow_buffer::{i256, ArrowNativeType};
use arrow_data::ArrayData;

use crate::error::{QuiverError, Result};
use crate::node::Kind;
use crate::writer::{last_offset, overflow, ArrowWriter};

/// Source validity: a bitmap and the bit where the copied range starts.
#[derive(Clone, Copy)]
pub(crate) struct Bits<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl Bits<'_> {
    /// Whether row `i` of the copied range is valid.
    pub(crate) fn get(&self, i: usize) -> bool {
        arrow_buffer::bit_util::get_bit(self.bytes, self.offset + i)
    }

    fn count_zeros(&self, len: usize) -> usize {
        len - BitChunks::new(self.bytes, self.offset, len).iter_padded().map(|c| c.count_ones() as usize).sum::<usize>()
    }
}

/// Calls `f(start, end, valid)` for each run of equal validity in `0..len`.
fn for_each_run(bits: Option<Bits>, len: usize, mut f: impl FnMut(usize, usize, bool) -> Result<()>) -> Result<()> {
    let Some(bits) = bits else {
        return if len > 0 { f(0, len, true) } else { Ok(()) };
    };
    let mut at = 0;
    for (s, e) in BitSliceIterator::new(bits.bytes, bits.offset, len) {
        if s > at {
            f(at, s, false)?;
        }
        f(s, e, true)?;
        at = e;
    }
    if at < len {
        f(at, len, false)?;
    }
    Ok(())
}

/// Row masks by validity byte: `lut[b][k]` is all ones when bit `k` of `b`
/// is set, else zero.
const fn row_masks<T: Copy>(ones: T, zero: T) -> [[T; 8]; 256] {
    let mut t = [[zero; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            if (b >> k) & 1 == 1 {
                t[b][k] = ones;
            }
            k += 1;
        }
        b += 1;
    }
    t
}

static MASK8: [[u8; 8]; 256] = row_masks(u8::MAX, 0);
static MASK16: [[u16; 8]; 256] = row_masks(u16::MAX, 0);
static MASK32: [[u32; 8]; 256] = row_masks(u32::MAX, 0);
static MASK64: [[u64; 8]; 256] = row_masks(u64::MAX, 0);

/// Zeroes the values of rows `row..row + len` of `buf` (`width` bytes each)
/// whose bit in `bits` is 0. Branch-free: 64 rows at a time, all-valid words
/// skipped, the others ANDed 8 rows at a time with a mask looked up by
/// validity byte (a branch per value would mispredict on random nulls).
fn zero_under_nulls(buf: &mut arrow_buffer::MutableBuffer, row: usize, width: usize, bits: Bits, len: usize) {
    macro_rules! masked {
        ($t:ty, $lut:expr, $lanes:expr) => {{
            const LANES: usize = $lanes;
            let lanes = LANES;
            let values = &mut buf.typed_data_mut::<$t>()[row * lanes..(row + len) * lanes];
            for (c, word) in BitChunks::new(bits.bytes, bits.offset, len).iter_padded().enumerate() {
                if word == u64::MAX {
                    continue;
                }
                for (k, byte) in word.to_le_bytes().into_iter().enumerate() {
                    let first = (c * 64 + k * 8) * lanes;
                    if byte == u8::MAX || first >= values.len() {
                        continue;
                    }
                    let masks = &$lut[byte as usize];
                    if first + 8 * lanes <= values.len() {
                        let v: &mut [$t; 8 * LANES] =
                            (&mut values[first..first + 8 * lanes]).try_into().expect("8 rows");
                        // Load, mask and store the 8 rows as one block (SIMD).
                        let mut x = *v;
                        let mut m = [0 as $t; 8 * LANES];
                        for (i, mi) in m.iter_mut().enumerate() {
                            *mi = masks[i / LANES];
                        }
                        for (xi, mi) in x.iter_mut().zip(m) {
                            *xi &= mi;
                        }
                        *v = x;
                    } else {
                        for (i, x) in values[first..].iter_mut().enumerate() {
                            *x &= masks[i / LANES];
                        }
                    }
                }
            }
        }};
    }
    match width {
        1 => masked!(u8, MASK8, 1),
        2 => masked!(u16, MASK16, 1),
        4 => masked!(u32, MASK32, 1),
        8 => masked!(u64, MASK64, 1),
        16 => masked!(u64, MASK64, 2),
        32 => masked!(u64, MASK64, 4),
        _ => {
            let values = &mut buf.as_slice_mut()[row * width..(row + len) * width];
            for_each_zero(bits, len, |i| values[i * width..(i + 1) * width].fill(0))
        }
    }
}

/// An offset type (i32 or i64).
trait Offset: ArrowNativeType + TryFrom<i64> + Into<i64> {
    /// `dst[i] = src[i] + shift` (in range by the caller's check).
    fn rebase(dst: &mut [Self], src: &[Self], shift: i64);
}

impl Offset for i32 {
    fn rebase(dst: &mut [i32], src: &[i32], shift: i64) {
        let shift = shift as i32;
        for (d, &o) in dst.iter_mut().zip(src) {
            *d = o.wrapping_add(shift);
        }
    }
}

impl Offset for i64 {
    fn rebase(dst: &mut [i64], src: &[i64], shift: i64) {
        for (d, &o) in dst.iter_mut().zip(src) {
            *d = o.wrapping_add(shift);
        }
    }
}

/// Whether every null row of `off..off + count` spans no values
/// (`offsets[i + 1] == offsets[i]`).
fn null_spans_are_empty<O: ArrowNativeType + Into<i64>>(offsets: &[O], off: usize, count: usize, bits: Bits) -> bool {
    for (c, word) in BitChunks::new(bits.bytes, bits.offset, count).iter_padded().enumerate() {
        if word == u64::MAX {
            continue;
        }
        let start = off + c * 64;
        let end = (start + 64).min(off + count);
        let mut spanned = 0i64;
        for (j, w) in offsets[start..=end].windows(2).enumerate() {
            let len: i64 = w[1].into() - w[0].into();
            spanned |= len & ((((word >> j) & 1) as i64) - 1);
        }
        if spanned != 0 {
            return false;
        }
    }
    true
}

/// Calls `f(i)` for every zero bit in `0..len`.
fn for_each_zero(bits: Bits, len: usize, mut f: impl FnMut(usize)) {
    let chunks = BitChunks::new(bits.bytes, bits.offset, len);
    let mut base = 0;
    for chunk in chunks.iter() {
        let mut zeros = !chunk;
        while zeros != 0 {
            f(base + zeros.trailing_zeros() as usize);
            zeros &= zeros - 1;
        }
        base += 64;
    }
    let rem = chunks.remainder_len();
    if rem > 0 {
        let mut zeros = !chunks.remainder_bits() & ((1u64 << rem) - 1);
        while zeros != 0 {
            f(base + zeros.trailing_zeros() as usize);
            zeros &= zeros - 1;
        }
    }
}

impl ArrowWriter {
    /// Checks that `node` is a top-level column the column path may write now.
    fn column_target(&mut self, node: usize, call: &str) -> Result<()> {
        self.ensure_started();
        let Some(n) = self.nodes.get(node) else {
            return Err(self.unknown_node(call, node));
        };
        if n.parent.is_some() {
            return Err(QuiverError::invalid(format!("{call}: {} is not a top-level column", n.describe(node))));
        }
        if let Some(&o) = self.open.last() {
            return Err(QuiverError::invalid(format!(
                "{call}: {} is open: end it (or abort_row) first",
                self.nodes[o].describe(o)
            )));
        }
        Ok(())
    }

    /// Runs one column write; on failure the column is cut back to where it
    /// was, so nothing else changes. When every top-level column then has the
    /// same length, those rows are committed.
    fn column_write(&mut self, node: usize, write: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let subtree = crate::node::subtree_of(&self.nodes, node);
        let before: Vec<(usize, usize)> =
            subtree.iter().map(|&i| (self.nodes[i].len, self.nodes[i].null_count)).collect();
        self.refused_at = None;
        if let Err(e) = write(self) {
            self.rollback_nodes(&subtree, &before);
            // A nested value was refused: name the input row that holds it.
            return Err(match self.refused_at.take() {
                Some(row) => QuiverError::new(e.code(), format!("{} in input row {row}", e.message())),
                None => e,
            });
        }
        let len = self.nodes[self.top[0]].len;
        if len > self.rows && self.top.iter().all(|&c| self.nodes[c].len == len) {
            self.rows = len;
            self.commit();
        }
        Ok(())
    }

    /// Bytes of values `length` rows of a fixed-width (or boolean) top-level
    /// column take in the column path.
    pub fn column_value_bytes(&self, node: usize, length: usize, call: &str) -> Result<usize> {
        let Some(n) = self.nodes.get(node) else {
            return Err(self.unknown_node(call, node));
        };
        match n.kind {
            Kind::Fixed { width } => length.checked_mul(width).filter(|&b| b <= isize::MAX as usize).ok_or_else(|| {
                QuiverError::invalid(format!(
                    "{call}: {}: {length} rows of {width} bytes do not fit in memory",
                    n.describe(node)
                ))
            }),
            Kind::Bool => Ok(length.div_ceil(8)),
            _ => Err(QuiverError::invalid(format!(
                "{call}: {} is not a fixed-width column: use write_array",
                n.describe(node)
            ))),
        }
    }

    /// Appends a whole column of a fixed-width type from a native slice.
    /// `validity` is an LSB-first bitmap of `values.len()` bits (`None`: all
    /// valid). Null slots get zero values whatever `values` holds there.
    pub fn write_column<T: ArrowNativeType>(
        &mut self,
        node: usize,
        values: &[T],
        validity: Option<&[u8]>,
    ) -> Result<()> {
        let bytes: &[u8] = arrow_buffer::ToByteSlice::to_byte_slice(values);
        if let Some(Kind::Fixed { width }) = self.nodes.get(node).map(|n| n.kind) {
            if width != std::mem::size_of::<T>() {
                return Err(QuiverError::invalid(format!(
                    "write_column: {} has {width}-byte values, the slice has {}-byte values",
                    self.nodes[node].describe(node),
                    std::mem::size_of::<T>()
                )));
            }
        }
        self.write_column_bytes(node, bytes, validity, values.len())
    }

    /// Appends `length` rows to a top-level fixed-width or boolean column
    /// from raw little-endian bytes (`length * width` bytes; for boolean an
    /// LSB-first bitmap of `length` bits).
    pub fn write_column_bytes(
        &mut self,
        node: usize,
        values: &[u8],
        validity: Option<&[u8]>,
        length: usize,
    ) -> Result<()> {
        const CALL: &str = "write_column";
        self.column_target(node, CALL)?;
        let need = self.column_value_bytes(node, length, CALL)?;
        let n = &self.nodes[node];
        if values.len() < need {
            return Err(QuiverError::invalid(format!(
                "{CALL}: {}: {length} rows need {need} bytes of values, got {}",
                n.describe(node),
                values.len()
            )));
        }
        if let Some(v) = validity {
            if v.len() < length.div_ceil(8) {
                return Err(QuiverError::invalid(format!(
                    "{CALL}: {}: {length} rows need {} bytes of validity, got {}",
                    n.describe(node),
                    length.div_ceil(8),
                    v.len()
                )));
            }
        }
        let bits = validity.map(|bytes| Bits { bytes, offset: 0 });
        self.column_write(node, |w| w.copy_fixed(node, CALL, values, 0, bits, length))
    }

    /// Appends a whole top-level column copied from `array` (any arrow array
    /// of the column's type, sliced ones included). Null slots get zeros.
    pub fn write_array(&mut self, node: usize, array: &dyn Array) -> Result<()> {
        crate::depth::check_data_type(array.data_type(), "write_array")?;
        self.write_array_data(node, &array.to_data())
    }

    pub(crate) fn write_array_data(&mut self, node: usize, data: &ArrayData) -> Result<()> {
        const CALL: &str = "write_array";
        self.column_target(node, CALL)?;
        let n = &self.nodes[node];
        if !n.field.data_type().equals_datatype(data.data_type()) {
            return Err(QuiverError::invalid(format!(
                "{CALL}: {} cannot take an array of type {}",
                n.describe(node),
                data.data_type()
            )));
        }
        self.column_write(node, |w| w.copy_data(node, data, 0, data.len()))
    }

    /// Validity of `data` for its logical rows `start..`.
    fn bits_of(data: &ArrayData, start: usize) -> Option<Bits<'_>> {
        data.nulls().filter(|n| n.null_count() > 0).map(|n| Bits { bytes: n.validity(), offset: n.offset() + start })
    }

    /// Copies `count` validity bits into `node` (all valid when `bits` is None)
    /// and checks a non-nullable node gets no null.
    fn copy_validity(&mut self, node: usize, call: &str, bits: Option<Bits>, count: usize) -> Result<()> {
        let n = &mut self.nodes[node];
        let at = n.len;
        match (&mut n.validity, bits) {
            (Some(v), Some(b)) => n.null_count += v.copy_bits(at, b.bytes, b.offset, count),
            (Some(v), None) => v.set_bits_range(at, count),
            (None, Some(b)) => {
                let nulls = b.count_zeros(count);
                if nulls > 0 {
                    return Err(QuiverError::invalid(format!(
                        "{call}: {} is not nullable but the input has {nulls} nulls",
                        n.describe(node)
                    )));
                }
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// A non-nullable node refuses input with nulls.
    fn check_no_nulls(&self, node: usize, call: &str, bits: Option<Bits>, count: usize) -> Result<()> {
        let n = &self.nodes[node];
        if let (false, Some(b)) = (n.nullable, bits) {
            let nulls = b.count_zeros(count);
            if nulls > 0 {
                return Err(QuiverError::invalid(format!(
                    "{call}: {} is not nullable but the input has {nulls} nulls",
                    n.describe(node)
                )));
            }
        }
        Ok(())
    }

    /// Fixed-width (and boolean) values `start..start+count` of `values`.
    fn copy_fixed(
        &mut self,
        node: usize,
        call: &str,
        values: &[u8],
        start: usize,
        bits: Option<Bits>,
        count: usize,
    ) -> Result<()> {
        // Every check comes before the first byte is written, so a refused
        // copy leaves the column exactly as it was.
        if let (Kind::Fixed { width }, Some(p)) = (self.nodes[node].kind, self.nodes[node].decimal_precision) {
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
        match n.kind {
            Kind::Bool => {
                let slot = n.values.as_mut().expect("bool values");
                match bits {
                    None => {
                        slot.copy_bits(at, values, start, count);
                    }
                    Some(b) => {
                        // value AND validity, a word at a time: false under every null.
                        let v = BitChunks::new(values, start, count);
                        let m = BitChunks::new(b.bytes, b.offset, count);
                        let anded: Vec<u8> =
                            v.iter_padded().zip(m.iter_padded()).flat_map(|(x, y)| (x & y).to_le_bytes()).collect();
                        slot.copy_bits(at, &anded, 0, count);
                    }
                }
            }
            Kind::Fixed { width } => {
                let slot = n.values.as_mut().expect("fixed values");
                slot.buf.extend_from_slice(&values[start * width..(start + count) * width]);
                if let Some(b) = bits {
                    zero_under_nulls(&mut slot.buf, at, width, b, count);
                }
            }
            _ => unreachable!("copy_fixed on a non-fixed node"),
        }
        n.len += count;
        Ok(())
    }

    /// Offsets (rebased onto this batch's) and the values they point at,
    /// for a utf8/binary or list node: rows `off..off + count` of `data`.
    /// A null row repeats the last offset. Each run of valid rows is one
    /// pass over its offsets and one copy of its values.
    fn copy_offsets<O: Offset>(
        &mut self,
        node: usize,
        data: &ArrayData,
        off: usize,
        count: usize,
        bits: Option<Bits>,
    ) -> Result<()> {
        const CALL: &str = "write_array";
        let src: &[O] = data.buffer::<O>(0);
        let width = std::mem::size_of::<O>();
        let child = self.nodes[node].children.first().copied();
        // Nulls that span no values (what most producers write) need no runs:
        // the whole range is one rebase of its offsets and one copy.
        let bits = match bits {
            Some(b) if null_spans_are_empty(src, off, count, b) => None,
            b => b,
        };
        for_each_run(bits, count, |s, e, valid| {
            let n = &mut self.nodes[node];
            let offsets = n.values.as_mut().expect("offsets");
            let base = last_offset(offsets, width) as i64;
            if !valid {
                let b = O::try_from(base).ok().expect("the last offset fits its own type");
                offsets.buf.extend(std::iter::repeat_n(b, e - s));
                return Ok(());
            }
            let (first, last): (i64, i64) = (src[off + s].into(), src[off + e].into());
            let end = base + (last - first);
            if width == 4 && end > i32::MAX as i64 {
                let what = n.describe(node);
                return Err(overflow(CALL, &what, end as usize));
            }
            // In range: every offset lies between first and last, and the
            // last one rebased is `end`, checked above.
            let at = offsets.buf.len() / width;
            offsets.buf.resize((at + e - s) * width, 0);
            O::rebase(&mut offsets.buf.typed_data_mut::<O>()[at..], &src[off + s + 1..=off + e], base - first);
            let (first, last) = (first as usize, last as usize);
            match child {
                None => {
                    n.data.as_mut().expect("var data").buf.extend_from_slice(&data.buffers()[1].as_slice()[first..last])
                }
                Some(c) => self.copy_data(c, &data.child_data()[0], first, last - first).inspect_err(|_| {
                    // The row whose values hold child value j.
                    self.refused_at = self.refused_at.map(|j| {
                        let row = (off + s..off + e).find(|&p| src[p + 1].into() > j as i64).unwrap_or(off + s);
                        row - data.offset()
                    })
                })?,
            }
            Ok(())
        })
    }

    /// Copies logical rows `start..start+count` of `data` into `node`.
    pub(crate) fn copy_data(&mut self, node: usize, data: &ArrayData, start: usize, count: usize) -> Result<()> {
        const CALL: &str = "write_array";
        let bits = Self::bits_of(data, start);
        let off = data.offset() + start;
        let kind = self.nodes[node].kind;
        match kind {
            Kind::Null => {
                self.nodes[node].len += count;
                self.nodes[node].null_count += count;
                return Ok(());
            }
            Kind::Bool => return self.copy_fixed(node, CALL, data.buffers()[0].as_slice(), off, bits, count),
            Kind::Fixed { .. } => {
                return self.copy_fixed(node, CALL, data.buffers()[0].as_slice(), off, bits, count).inspect_err(|_| {
                    // From an index past `off` to one of `data`.
                    self.refused_at = self.refused_at.map(|bad| start + bad);
                });
            }
            Kind::Encoded { .. } | Kind::Union { .. } | Kind::View { .. } | Kind::ListView { .. } => {
                // Written value by value, which sets validity and length.
                self.check_no_nulls(node, CALL, bits, count)?;
                return match kind {
                    Kind::Encoded { .. } => self.copy_encoded(node, data, start, count, bits),
                    Kind::Union { .. } => self.copy_union(node, data, start, count),
                    Kind::View { .. } => self.copy_views(node, data, start, count, bits),
                    _ => self.copy_list_views(node, data, start, count, bits),
                };
            }
            _ => {}
        }
        self.copy_validity(node, CALL, bits, count)?;
        match kind {
            Kind::Var { large, .. } | Kind::List { large } => {
                if large {
                    self.copy_offsets::<i64>(node, data, off, count, bits)?;
                } else {
                    self.copy_offsets::<i32>(node, data, off, count, bits)?;
                }
            }
            Kind::FixedList { size } => {
                let child = self.nodes[node].children[0];
                for_each_run(bits, count, |s, e, valid| {
                    if valid {
                        self.copy_data(child, &data.child_data()[0], (off + s) * size, (e - s) * size)
                            .inspect_err(|_| self.refused_at = self.refused_at.map(|j| j / size - data.offset()))
                    } else {
                        self.fill_null(child, (e - s) * size);
                        Ok(())
                    }
                })?;
            }
            Kind::Struct => {
                let children = self.nodes[node].children.clone();
                for_each_run(bits, count, |s, e, valid| {
                    for (i, &c) in children.iter().enumerate() {
                        if valid {
                            self.copy_data(c, &data.child_data()[i], off + s, e - s)
                                .inspect_err(|_| self.refused_at = self.refused_at.map(|j| j - data.offset()))?;
                        } else {
                            self.fill_null(c, e - s);
                        }
                    }
                    Ok(())
                })?;
            }
            _ => unreachable!("handled above"),
        }
        self.nodes[node].len += count;
        Ok(())
    }
}

/// Index of the first valid (per `bits`) decimal value in `values`
/// (little-endian, `width` bytes each) whose magnitude needs more than
/// `precision` digits. Values under nulls are not looked at: they become
/// zeros.
fn first_over_precision(values: &[u8], width: usize, precision: u8, bits: Option<Bits>) -> Option<usize> {
    let valid = |i: usize| bits.as_ref().is_none_or(|b| b.get(i));
    match width {
        4 | 8 | 16 => {
            // |x| < 10^p, tested as one unsigned compare per value
            // (x + 10^p - 1 in 0..=2 * (10^p - 1), wrapping), over the whole
            // slice without branches first: most slices are all in range.
            // 10^p - 1 fits the width's own type for every precision that
            // width takes (9, 18, 38 digits).
            macro_rules! search {
                ($s:ty, $u:ty, $w:expr) => {{
                    let lim = (10 as $u).pow((precision as u32).min(<$u>::MAX.ilog10()));
                    let (shift, span) = (lim - 1, 2 * (lim - 1));
                    let out = |v: &[u8]| {
                        let x = <$s>::from_le_bytes(v.try_into().expect("one value")) as $u;
                        x.wrapping_add(shift) > span
                    };
                    if !values.chunks_exact($w).fold(false, |any, v| any | out(v)) {
                        return None;
                    }
                    values.chunks_exact($w).enumerate().position(|(i, v)| out(v) && valid(i))
                }};
            }
            match width {
                4 => search!(i32, u32, 4),
                8 => search!(i64, u64, 8),
                _ => search!(i128, u128, 16),
            }
        }
        _ => {
            let limit = i256::from_i128(10).wrapping_pow(precision as u32);
            values.chunks_exact(width).enumerate().position(|(i, v)| {
                let fill = if v[width - 1] & 0x80 != 0 { 0xFF } else { 0 };
                let mut le = [fill; 32];
                le[..width].copy_from_slice(v);
                let x = i256::from_le_bytes(le);
                (x >= limit || x <= limit.wrapping_neg()) && valid(i)
            })
        }
    }
}
