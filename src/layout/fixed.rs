//! Fixed-width and boolean values: zero values for nulls, and the column
//! copies, with the branch-free zeroing of copied values under nulls
//! (docs/design.md §2 rule 6).

use arrow_buffer::bit_chunk_iterator::BitChunks;

use crate::buffer::bits::{for_each_zero, Bits};
use crate::buffer::masks::{MASK16, MASK32, MASK64, MASK8};
use crate::buffer::Slot;
#[cfg(target_arch = "x86_64")]
use crate::layout::avx512::masked_into_avx512;

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
/// zeros under every null of `bits`. Widths of 1 to 32 bytes (powers of
/// two) are copied and masked in one pass ([`masked_append`]); others are
/// copied, then zeroed value by value under their nulls.
pub(crate) fn copy_values(values: &mut Slot, at: usize, width: usize, src: &[u8], bits: Option<Bits>) {
    debug_assert_eq!(values.buf.len(), at * width, "the values are appended");
    match bits {
        None => values.buf.extend_from_slice(src),
        Some(b) if matches!(width, 1 | 2 | 4 | 8 | 16 | 32) => masked_append(&mut values.buf, width, src, b),
        Some(b) => {
            values.buf.extend_from_slice(src);
            let copied = &mut values.buf.as_slice_mut()[at * width..];
            for_each_zero(b, src.len() / width.max(1), |i| copied[i * width..(i + 1) * width].fill(0));
        }
    }
}

/// Appends the `src.len() / width` values of `src` to `buf`, each one ANDed
/// with the mask of its validity bit in `bits` (all ones or zero), in one
/// pass over the source: 64 rows at a time, an all-valid word copied as it
/// is, an all-null one as zeros, the others 8 rows at a time with the masks
/// looked up by validity byte. `width` is 1, 2, 4, 8, 16 or 32. The same
/// code is compiled for AVX2 too and chosen at run time where the CPU has it
/// (the build targets plain x86_64, whose vectors are 16 bytes); widths of
/// 4 and 8 bytes take src/layout/avx512.rs's kernel where the CPU has
/// AVX-512F.
pub(crate) fn masked_append(buf: &mut arrow_buffer::MutableBuffer, width: usize, src: &[u8], bits: Bits) {
    assert!(matches!(width, 1 | 2 | 4 | 8 | 16 | 32), "masked_append takes widths of 1 to 32 bytes");
    let n = src.len() / width * width;
    let old = buf.len();
    buf.reserve(n);
    // SAFETY: `reserve` made the `n` bytes after `old` writable, and
    // `masked_into` writes each of them (a value or zeros) before `set_len`
    // makes them part of the buffer.
    unsafe {
        let dst = buf.as_mut_ptr().add(old);
        #[cfg(target_arch = "x86_64")]
        if matches!(width, 4 | 8) && std::arch::is_x86_feature_detected!("avx512f") {
            masked_into_avx512(dst, width, &src[..n], bits);
        } else if std::arch::is_x86_feature_detected!("avx2") {
            masked_into_avx2(dst, width, &src[..n], bits);
        } else {
            masked_into(dst, width, &src[..n], bits);
        }
        #[cfg(not(target_arch = "x86_64"))]
        masked_into(dst, width, &src[..n], bits);
        buf.set_len(old + n);
    }
}

/// [`masked_into`] compiled for AVX2.
///
/// # Safety
///
/// As [`masked_into`]; and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn masked_into_avx2(dst: *mut u8, width: usize, src: &[u8], bits: Bits) {
    // SAFETY: the caller's contract is masked_into's.
    unsafe { masked_into(dst, width, src, bits) }
}

/// Writes `src` (whole values of `width` bytes, a power of two up to 32) to
/// `dst`, zeros under the nulls of `bits`.
///
/// # Safety
///
/// `dst` is valid for writes of `src.len()` bytes and overlaps no part of
/// `src` or `bits`.
#[inline(always)]
unsafe fn masked_into(dst: *mut u8, width: usize, src: &[u8], bits: Bits) {
    use std::ptr::{copy_nonoverlapping, write_bytes, write_unaligned};
    macro_rules! masked {
        ($t:ty, $lut:expr, $lanes:expr) => {{
            const L: usize = $lanes;
            const S: usize = std::mem::size_of::<$t>();
            const ROW: usize = S * L;
            let chunks = BitChunks::new(bits.bytes, bits.offset, src.len() / ROW);
            let mut blocks = src.chunks_exact(64 * ROW);
            // Rows `r..r + k` of `src` go to bytes `r * ROW..(r + k) * ROW`
            // of `dst`, which the caller says are writable, as `src` has
            // those rows.
            for (c, (word, block)) in chunks.iter().zip(&mut blocks).enumerate() {
                // SAFETY: rows c * 64.. of `src` exist (`block`).
                let d = unsafe { dst.add(c * 64 * ROW) };
                match word {
                    // SAFETY: the 64 rows of `block` to their bytes of `dst`.
                    u64::MAX => unsafe { copy_nonoverlapping(block.as_ptr(), d, 64 * ROW) },
                    // SAFETY: as above, zeros.
                    0 => unsafe { write_bytes(d, 0, 64 * ROW) },
                    _ => {
                        for (k, rows) in block.chunks_exact(8 * ROW).enumerate() {
                            let masks = &$lut[(word >> (8 * k)) as u8 as usize];
                            let mut y = [0 as $t; 8 * L];
                            for (i, y) in y.iter_mut().enumerate() {
                                let x = <$t>::from_le_bytes(rows[i * S..(i + 1) * S].try_into().expect("one lane"));
                                *y = x & masks[i / L];
                            }
                            // SAFETY: the 8 rows `rows` of `block` to their bytes of `dst`.
                            unsafe { write_unaligned(d.add(k * 8 * ROW).cast::<[$t; 8 * L]>(), y) };
                        }
                    }
                }
            }
            let word = chunks.remainder_bits();
            let base = chunks.chunk_len() * 64;
            for (i, row) in blocks.remainder().chunks_exact(ROW).enumerate() {
                // SAFETY: row base + i of `src` (`row`) to its bytes of `dst`.
                unsafe {
                    let d = dst.add((base + i) * ROW);
                    if (word >> i) & 1 == 1 {
                        copy_nonoverlapping(row.as_ptr(), d, ROW);
                    } else {
                        write_bytes(d, 0, ROW);
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
        _ => masked!(u64, MASK64, 4),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::layout::fixed::*;

    pub(crate) use crate::buffer::masks::tests::{gen, patterns};

    /// The previous code: copy everything, then zero each null row.
    pub(crate) fn reference(prefix: &[u8], width: usize, src: &[u8], bits: Bits) -> Vec<u8> {
        let mut out = prefix.to_vec();
        for (i, row) in src.chunks_exact(width).enumerate() {
            if bits.get(i) {
                out.extend_from_slice(row);
            } else {
                out.extend(std::iter::repeat_n(0, width));
            }
        }
        out
    }

    /// Every width, row count (around the 8- and 64-row blocks), bit offset
    /// of the validity (not only multiples of 8), misaligned source, rows
    /// already in the buffer, and null pattern: the bytes are the copy with
    /// zeros under each null, through the dispatched code (AVX-512 for 4
    /// and 8 bytes where the CPU has it, else AVX2) and the plain code.
    #[test]
    fn masked_append_is_copy_then_zero() {
        let mut r = gen(3);
        let raw: Vec<u8> = (0..(300 * 32 + 1)).map(|_| r() as u8 | 1).collect();
        for width in [1, 2, 4, 8, 16, 32] {
            for rows in [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 200, 300] {
                for bit_offset in [0, 1, 3, 8, 13, 64, 71] {
                    for misalign in [0, 1] {
                        let src = &raw[misalign..misalign + rows * width];
                        for (name, validity) in patterns(bit_offset + rows) {
                            let bits = Bits { bytes: &validity, offset: bit_offset };
                            let prefix = &raw[..3 * width];
                            let want = reference(prefix, width, src, bits);
                            let mut buf = arrow_buffer::MutableBuffer::new(0);
                            buf.extend_from_slice(prefix);
                            masked_append(&mut buf, width, src, bits);
                            let case = format!("width {width}, {rows} rows at bit {bit_offset}+{misalign}, {name}");
                            assert_eq!(buf.as_slice(), &want[..], "{case}");
                            let mut plain = vec![0xEEu8; rows * width];
                            // SAFETY: `plain` has `src.len()` bytes and is its own allocation.
                            unsafe { masked_into(plain.as_mut_ptr(), width, src, bits) };
                            assert_eq!(plain, &want[prefix.len()..], "{case}: plain code");
                        }
                    }
                }
            }
        }
    }

    /// Widths outside the masked kernels (3, 12 bytes) are zeroed under nulls too.
    #[test]
    fn other_widths_are_zeroed_under_nulls() {
        let raw: Vec<u8> = (0..2000).map(|i| (i % 251) as u8 | 1).collect();
        for width in [3, 12] {
            for (name, validity) in patterns(5 + 100) {
                let bits = Bits { bytes: &validity, offset: 5 };
                let src = &raw[..100 * width];
                let mut slot = Slot::default();
                slot.buf.extend_from_slice(&raw[..width]);
                copy_values(&mut slot, 1, width, src, Some(bits));
                assert_eq!(slot.buf.as_slice(), &reference(&raw[..width], width, src, bits)[..], "{width} {name}");
            }
        }
    }
}
