//! Offset helpers: pushing and reading 4- or 8-byte offsets, reading
//! little-endian integers, and the [`Offset`] type that rebases copied offsets.

use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::{ArrowNativeType, MutableBuffer};

use super::bits::Bits;
use super::push::push_value;
use super::Slot;

#[inline]
pub(crate) fn push_offset(offsets: &mut Slot, width: usize, value: usize) {
    if width == 8 {
        push_value(&mut offsets.buf, value as i64);
    } else {
        push_value(&mut offsets.buf, value as i32);
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
    /// Appends `src[i] + shift` for each `i` to `buf` (in range by the
    /// caller's check), written once: the appended part is not zeroed
    /// first. `buf` holds whole offsets.
    fn rebase_append(buf: &mut MutableBuffer, src: &[Self], shift: i64);

    /// When every null row of `off..off + count` spans no values
    /// (`offsets[i + 1] == offsets[i]`), appends the rebased ends of those
    /// rows, `offsets[off + 1..=off + count]` each plus `shift` (in range by
    /// the caller's check), to `buf` and returns true; else returns false
    /// with `buf` as it was (its length; bytes past it may have changed).
    /// One pass over the offsets, branch free within a word of 64 rows: the
    /// lengths of 8 rows at a time, ANDed with the null rows' masks looked
    /// up by validity byte, ORed together, while the rebased ends are
    /// written (an all-valid word only rebased).
    fn rebase_append_if_nulls_empty(
        buf: &mut MutableBuffer,
        offsets: &[Self],
        off: usize,
        count: usize,
        bits: Bits,
        shift: i64,
    ) -> bool;

    /// The portable pass of `rebase_append_if_nulls_empty` (the one a CPU
    /// without AVX2 runs) into `dst`, for the tests on machines with AVX2.
    #[cfg(test)]
    fn portable_pass(dst: &mut [Self], o: &[Self], bits: Bits, shift: Self) -> bool;
}

macro_rules! offset_type {
    ($t:ty, $u:ty, $lut:expr, $body:ident, $avx2:ident) => {
        /// The pass below, compiled for AVX2.
        ///
        /// # Safety
        ///
        /// As the pass below, on a CPU with AVX2.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2(dst: *mut $t, o: &[$t], bits: Bits, shift: $t) -> bool {
            // SAFETY: the caller's contract is the body's.
            unsafe { $body(dst, o, bits, shift) }
        }

        /// The pass of [`Offset::rebase_append_if_nulls_empty`] over the
        /// `o.len() - 1` rows of `o` (their offsets, one more than the rows):
        /// writes `o[i + 1] + shift` to `dst[i]` for every row and returns
        /// whether no null row of `bits` spans values.
        ///
        /// # Safety
        ///
        /// `dst` is valid for unaligned writes of `o.len() - 1` offsets and
        /// overlaps neither `o` nor `bits`.
        #[inline(always)]
        unsafe fn $body(dst: *mut $t, o: &[$t], bits: Bits, shift: $t) -> bool {
            let count = o.len() - 1;
            let chunks = BitChunks::new(bits.bytes, bits.offset, count);
            // One lane per row of a byte, ORed together at the end.
            let mut lanes: [$u; 8] = [0; 8];
            for (c, word) in chunks.iter().enumerate() {
                let rows = &o[c * 64..=c * 64 + 64];
                if word == u64::MAX {
                    for i in 0..64 {
                        // SAFETY: row c * 64 + i < count (a whole chunk).
                        unsafe { dst.add(c * 64 + i).write_unaligned(rows[i + 1].wrapping_add(shift)) };
                    }
                    continue;
                }
                for k in 0..8 {
                    let nulls = &$lut[!(word >> (8 * k)) as u8 as usize];
                    let at = &rows[8 * k..=8 * k + 8];
                    for j in 0..8 {
                        lanes[j] |= (at[j + 1].wrapping_sub(at[j]) as $u) & nulls[j];
                        // SAFETY: as above.
                        unsafe { dst.add(c * 64 + 8 * k + j).write_unaligned(at[j + 1].wrapping_add(shift)) };
                    }
                }
            }
            let mut spanned = lanes.iter().fold(0, |a, &l| a | l);
            let (base, word) = (chunks.chunk_len() * 64, chunks.remainder_bits());
            for i in 0..chunks.remainder_len() {
                if (word >> i) & 1 == 0 {
                    spanned |= o[base + i + 1].wrapping_sub(o[base + i]) as $u;
                }
                // SAFETY: as above (base + i < count).
                unsafe { dst.add(base + i).write_unaligned(o[base + i + 1].wrapping_add(shift)) };
            }
            spanned == 0
        }

        impl Offset for $t {
            #[cfg(test)]
            fn portable_pass(dst: &mut [$t], o: &[$t], bits: Bits, shift: $t) -> bool {
                assert_eq!(dst.len() + 1, o.len());
                // SAFETY: `dst` holds `o.len() - 1` offsets, its own memory.
                unsafe { $body(dst.as_mut_ptr(), o, bits, shift) }
            }

            fn rebase_append(buf: &mut MutableBuffer, src: &[$t], shift: i64) {
                let shift = shift as $t;
                let bytes = std::mem::size_of_val(src);
                let old = buf.len();
                buf.reserve(bytes);
                // SAFETY: `reserve` made the `bytes` bytes after `old`
                // writable; the loop writes every one of them (unaligned
                // writes, whatever the buffer's alignment) before `set_len`
                // makes them part of the buffer.
                unsafe {
                    let dst = buf.as_mut_ptr().add(old).cast::<$t>();
                    for (i, &o) in src.iter().enumerate() {
                        dst.add(i).write_unaligned(o.wrapping_add(shift));
                    }
                    buf.set_len(old + bytes);
                }
            }

            fn rebase_append_if_nulls_empty(
                buf: &mut MutableBuffer,
                offsets: &[$t],
                off: usize,
                count: usize,
                bits: Bits,
                shift: i64,
            ) -> bool {
                let o = &offsets[off..=off + count];
                let old = buf.len();
                buf.reserve(count * std::mem::size_of::<$t>());
                // SAFETY: `reserve` made `count` offsets after `old`
                // writable, which is the bodies' contract.
                let empty = unsafe {
                    let dst = buf.as_mut_ptr().add(old).cast::<$t>();
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx2") {
                        $avx2(dst, o, bits, shift as $t)
                    } else {
                        $body(dst, o, bits, shift as $t)
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    $body(dst, o, bits, shift as $t)
                };
                if empty {
                    // SAFETY: the body wrote all `count` offsets after `old`.
                    unsafe { buf.set_len(old + count * std::mem::size_of::<$t>()) };
                }
                empty
            }
        }
    };
}

offset_type!(i32, u32, super::masks::MASK32, rebase_check_i32, rebase_check_i32_avx2);
offset_type!(i64, u64, super::masks::MASK64, rebase_check_i64, rebase_check_i64_avx2);

#[cfg(test)]
mod tests {
    use crate::buffer::masks::tests::patterns;
    use crate::buffer::offsets::*;

    /// Every width, sign and index: the `i`-th integer, sign-extended.
    #[test]
    fn read_int_reads_every_width() {
        let values: [i64; 5] = [0, 1, -1, 0x5A, -0x23];
        for width in [1usize, 2, 4, 8] {
            let mut bytes = Vec::new();
            let mut want = Vec::new();
            for (k, &v) in values.iter().enumerate() {
                // A value that needs the whole width (its top byte set) and a small one.
                let big = v.wrapping_mul(0x0102_0304_0506_0708).wrapping_add(k as i64) << (64 - 8 * width)
                    >> (64 - 8 * width);
                for x in [v, big] {
                    bytes.extend_from_slice(&x.to_le_bytes()[..width]);
                    want.push(x);
                }
            }
            for (i, &x) in want.iter().enumerate() {
                assert_eq!(read_int(&bytes, width, i), x, "width {width} index {i}");
            }
        }
    }

    /// Offsets pushed at both widths read back; rebasing adds the shift.
    #[test]
    fn offsets_push_read_and_rebase() {
        for width in [4usize, 8] {
            let mut slot = Slot::default();
            for v in [0usize, 5, 300, 70_000, 1 << 30] {
                push_offset(&mut slot, width, v);
                assert_eq!(last_offset(&slot, width), v, "width {width}");
                assert_eq!(slot.buf.len() % width, 0);
            }
            assert_eq!(slot.buf.len(), 5 * width);
            assert_eq!(read_int(slot.buf.as_slice(), width, 2), 300);
        }
        // Appended after what the buffer holds, into capacity that held
        // other bytes (0xA5), growing past it.
        let mut buf = MutableBuffer::new(8);
        buf.extend_from_slice(&[0xA5u8; 8]);
        buf.truncate(0);
        buf.push(1i32);
        i32::rebase_append(&mut buf, &[0, 3, 9, 20], 7);
        assert_eq!(buf.typed_data::<i32>(), [1, 7, 10, 16, 27]);
        i32::rebase_append(&mut buf, &[], 7);
        assert_eq!(buf.len(), 20);
        let mut buf = MutableBuffer::new(0);
        i64::rebase_append(&mut buf, &[5, 6], -5);
        assert_eq!(buf.typed_data::<i64>(), [0, 1]);
    }

    /// Against a row-by-row reference, for both offset types, every null
    /// pattern, validity bit offset, start row and length, with no null row
    /// spanning values and then with one that does at each of a few rows
    /// (the first, inside and at the end of an 8- and a 64-row block, the last).
    #[test]
    fn rebase_append_if_nulls_empty_matches_row_by_row() {
        fn check<O: Offset>(name: &str, lens: &[i64], validity: &[u8], bit: usize, off: usize, count: usize) {
            let mut offsets = vec![O::usize_as(0)];
            let mut end = 0i64;
            for &l in lens {
                end += l;
                offsets.push(O::try_from(end).ok().expect("fits"));
            }
            let bits = Bits { bytes: validity, offset: bit };
            let want = (0..count).all(|i| bits.get(i) || lens[off + i] == 0);
            // Appended after an offset the buffer holds, into capacity that
            // held other bytes.
            let mut buf = MutableBuffer::new(0);
            buf.extend_from_slice(&[0xA5u8; 4096]);
            buf.truncate(0);
            buf.push(O::usize_as(77));
            let shift = 100i64;
            assert_eq!(O::rebase_append_if_nulls_empty(&mut buf, &offsets, off, count, bits, shift), want, "{name}");
            let mut expect = vec![O::usize_as(77)];
            if want {
                let shifted = |o: O| O::try_from(o.into() + shift).ok().expect("fits");
                expect.extend(offsets[off + 1..=off + count].iter().map(|&o| shifted(o)));
            }
            assert_eq!(buf.typed_data::<O>(), expect, "{name}");
            let mut dst = vec![O::usize_as(0); count];
            let rebased = O::try_from(shift).ok().expect("fits");
            assert_eq!(O::portable_pass(&mut dst, &offsets[off..=off + count], bits, rebased), want, "{name}");
            if want {
                assert_eq!(dst, expect[1..], "{name}: the portable pass");
            }
        }
        for count in [0, 1, 7, 8, 9, 63, 64, 65, 130, 200] {
            for off in [0, 3] {
                for bit in [0, 5, 64] {
                    for (pattern, validity) in patterns(bit + count) {
                        let valid = |i: usize| validity[(bit + i) / 8] >> ((bit + i) % 8) & 1 == 1;
                        // Valid rows span 0..3 values, null rows none.
                        let lens: Vec<i64> = (0..off + count)
                            .map(|i| if i < off || valid(i - off) { (i % 4) as i64 } else { 0 })
                            .collect();
                        let name = format!("{count} rows at {off}, bit {bit}, {pattern}");
                        check::<i32>(&name, &lens, &validity, bit, off, count);
                        check::<i64>(&name, &lens, &validity, bit, off, count);
                        for at in [0, 5, 7, 8, 63, 64, 100, count.saturating_sub(1)] {
                            if at < count && !valid(at) {
                                let mut spanning = lens.clone();
                                spanning[off + at] = 2;
                                let name = format!("{name}, null row {at} spans values");
                                check::<i32>(&name, &spanning, &validity, bit, off, count);
                                check::<i64>(&name, &spanning, &validity, bit, off, count);
                            }
                        }
                    }
                }
            }
        }
    }
}
