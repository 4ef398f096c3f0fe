//! Offset helpers: pushing and reading 4- or 8-byte offsets, reading
//! little-endian integers, and the [`Offset`] type that rebases copied offsets.

use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::ArrowNativeType;

use super::bits::Bits;
use super::Slot;

#[inline]
pub(crate) fn push_offset(offsets: &mut Slot, width: usize, value: usize) {
    if width == 8 {
        offsets.buf.push(value as i64);
    } else {
        offsets.buf.push(value as i32);
    }
}

#[inline]
pub(crate) fn last_offset(offsets: &Slot, width: usize) -> usize {
    let b = offsets.buf.as_slice();
    let at = b.len() - width;
    if width == 8 {
        i64::from_le_bytes(b[at..].try_into().expect("8 bytes")) as usize
    } else {
        i32::from_le_bytes(b[at..].try_into().expect("4 bytes")) as usize
    }
}

/// Reads the `i`-th little-endian integer of `width` bytes (signed).
pub(crate) fn read_int(bytes: &[u8], width: usize, i: usize) -> i64 {
    let b = &bytes[i * width..(i + 1) * width];
    match width {
        1 => b[0] as i8 as i64,
        2 => i16::from_le_bytes([b[0], b[1]]) as i64,
        4 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64,
        _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
    }
}

/// An offset type (i32 or i64).
pub(crate) trait Offset: ArrowNativeType + TryFrom<i64> + Into<i64> {
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
pub(crate) fn null_spans_are_empty<O: ArrowNativeType + Into<i64>>(
    offsets: &[O],
    off: usize,
    count: usize,
    bits: Bits,
) -> bool {
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
