//! Fixed-width and boolean values: zero values for nulls, and the column
//! copies, with the branch-free zeroing of copied values under nulls
//! (docs/design.md §2 rule 6).

use arrow_buffer::bit_chunk_iterator::BitChunks;

use crate::buffer::bits::{for_each_zero, Bits};
use crate::buffer::Slot;

/// Pushes one zero value of `width` bytes.
#[inline(always)]
pub(crate) fn push_zeros(values: &mut Slot, width: usize) {
    match width {
        1 => values.buf.push(0u8),
        2 => values.buf.push(0u16),
        4 => values.buf.push(0u32),
        8 => values.buf.push(0u64),
        16 => values.buf.push(0i128),
        _ => values.buf.extend_zeros(width),
    }
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
pub(crate) fn zero_under_nulls(
    buf: &mut arrow_buffer::MutableBuffer,
    row: usize,
    width: usize,
    bits: Bits,
    len: usize,
) {
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

/// Copies `count` boolean values from bit `start` of the bitmap `src` to
/// bit `at` of `values`: false under every null of `bits`.
pub(crate) fn copy_bools(values: &mut Slot, at: usize, src: &[u8], start: usize, count: usize, bits: Option<Bits>) {
    match bits {
        None => {
            values.copy_bits(at, src, start, count);
        }
        Some(b) => {
            // value AND validity, a word at a time.
            let v = BitChunks::new(src, start, count);
            let m = BitChunks::new(b.bytes, b.offset, count);
            let anded: Vec<u8> =
                v.iter_padded().zip(m.iter_padded()).flat_map(|(x, y)| (x & y).to_le_bytes()).collect();
            values.copy_bits(at, &anded, 0, count);
        }
    }
}

/// Appends the values `src` (`width` bytes each) after the `at` there are:
/// zeros under every null of `bits`.
pub(crate) fn copy_values(values: &mut Slot, at: usize, width: usize, src: &[u8], bits: Option<Bits>) {
    values.buf.extend_from_slice(src);
    if let Some(b) = bits {
        zero_under_nulls(&mut values.buf, at, width, b, src.len() / width.max(1));
    }
}
