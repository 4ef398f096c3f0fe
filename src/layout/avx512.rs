//! The column path's kernels for CPUs with AVX-512F, where a vector's
//! lanes are loaded under a mask: the validity bits themselves, so that a
//! null's lanes are zero as loaded and no mask is built per value.
//!
//! - [`masked_into_avx512`]: values of 4 or 8 bytes, zeros under nulls,
//!   16 or 8 rows to a 64-byte vector.
//! - [`checked_into_128_avx512`]: decimal128s, zeros under nulls, and the
//!   precision test of `decimal::all_fit_128_in` on the same bounds; four
//!   values to a vector, each validity bit twice (a value's two halves).
//!
//! A last vector's missing rows are left out by the same mask, loaded,
//! stored and tested.

use arrow_buffer::bit_chunk_iterator::BitChunks;

use crate::buffer::bits::Bits;

/// Lane masks of four rows by their four validity bits: bit `k` of the
/// index set gives lanes `2k` and `2k + 1`.
const SPREAD: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut n = 0;
    while n < 16 {
        let mut k = 0;
        while k < 4 {
            if n >> k & 1 == 1 {
                t[n] |= 3 << (2 * k);
            }
            k += 1;
        }
        n += 1;
    }
    t
};

/// Writes the decimal128s `src` (16 little-endian bytes each) to `dst`,
/// zeros under the nulls of `bits`, and returns whether every value as
/// written has its low half (as signed) within `bounds.0..=bounds.1` and
/// `t` (the high half plus the low half's sign bit) within
/// `bounds.2..=bounds.3`.
///
/// # Safety
///
/// The CPU has AVX-512F; `dst` is valid for writes of `src.len()` bytes (a
/// multiple of 16) and overlaps neither `src` nor `bits`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn checked_into_128_avx512(
    dst: *mut u8,
    src: &[u8],
    bits: Option<Bits>,
    (a, b, c, d): (i64, i64, i64, i64),
) -> bool {
    use std::arch::x86_64::*;
    let rows = src.len() / 16;
    let (s, out) = (src.as_ptr(), dst);
    let lower = _mm512_setr_epi64(a, c, a, c, a, c, a, c);
    let upper = _mm512_setr_epi64(b, d, b, d, b, d, b, d);
    // The largest and smallest of each lane as written (over or under the
    // bounds once, over or under at the end): no mask traffic per vector.
    let (mut most, mut least) = (_mm512_set1_epi64(i64::MIN), _mm512_set1_epi64(i64::MAX));
    let zero = _mm512_setzero_si512();
    // Vector `q` covers rows 4q .. 4q + 4, bytes 64q .. 64q + 64 of `src`
    // and of `dst`; the lanes `exist` leaves out (rows past the last) are
    // neither loaded nor stored, and a masked load or store does not touch
    // their memory. `t`: each value's high lane plus the sign bit of its
    // low lane (moved up by the unpack), its low lane plus zero.
    macro_rules! quad {
        ($q:expr, $valid:expr, $exist:expr) => {{
            let exist: __mmask8 = $exist;
            // SAFETY: the lanes of `exist` are inside `src` (above).
            let v = unsafe { _mm512_maskz_loadu_epi64($valid & exist, s.add($q * 64).cast()) };
            // SAFETY: the lanes of `exist` are inside `dst` (above).
            unsafe { _mm512_mask_storeu_epi64(out.add($q * 64).cast(), exist, v) };
            let t = _mm512_add_epi64(v, _mm512_unpacklo_epi64(zero, _mm512_srli_epi64::<63>(v)));
            most = _mm512_mask_max_epi64(most, exist, most, t);
            least = _mm512_mask_min_epi64(least, exist, least, t);
        }};
    }
    let full = rows / 4;
    // The lanes of the last vector's rows, when it has fewer than four.
    let tail = (1u16 << (2 * (rows % 4))) as u8 - 1;
    match bits {
        None => {
            // Opaque, so that the loop stays one pass rather than becoming
            // a memcpy and a second pass for the test.
            let all: __mmask8 = std::hint::black_box(0xFF);
            for q in 0..full {
                quad!(q, all, all);
            }
            if tail != 0 {
                quad!(full, 0xFF, tail);
            }
        }
        Some(bits) => {
            let chunks = BitChunks::new(bits.bytes, bits.offset, rows);
            for (w, word) in chunks.iter().enumerate() {
                for k in 0..16 {
                    quad!(w * 16 + k, SPREAD[(word >> (4 * k) & 15) as usize], 0xFF);
                }
            }
            let (base, word, left) = (chunks.chunk_len() * 16, chunks.remainder_bits(), chunks.remainder_len());
            for k in 0..left.div_ceil(4) {
                let exist = if 4 * k + 4 <= left { 0xFF } else { tail };
                quad!(base + k, SPREAD[(word >> (4 * k) & 15) as usize], exist);
            }
        }
    }
    _mm512_cmpgt_epi64_mask(most, upper) | _mm512_cmpgt_epi64_mask(lower, least) == 0
}

/// Writes `src` (whole values of `width` bytes, 4 or 8) to `dst`, zeros
/// under the nulls of `bits`: each vector of 16 or 8 rows loaded with its
/// validity bits as the lane mask.
///
/// # Safety
///
/// The CPU has AVX-512F; `dst` is valid for writes of `src.len()` bytes and
/// overlaps no part of `src` or `bits`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn masked_into_avx512(dst: *mut u8, width: usize, src: &[u8], bits: Bits) {
    use std::arch::x86_64::*;
    let rows = src.len() / width;
    let chunks = BitChunks::new(bits.bytes, bits.offset, rows);
    let (s, out) = (src.as_ptr(), dst);
    // Rows `r..r + L` are bytes `r * width..(r + L) * width` of `src` and
    // of `dst`; the lanes `exist` leaves out (rows past the last) are
    // neither loaded nor stored, and a masked load or store does not touch
    // their memory.
    macro_rules! lanes {
        ($l:expr, $m:ty, $load:ident, $store:ident) => {{
            const L: usize = $l;
            for (w, word) in chunks.iter().enumerate() {
                for k in 0..64 / L {
                    let at = (w * 64 + k * L) * width;
                    // SAFETY: the L rows from row w * 64 + k * L exist (a whole word's).
                    let v = unsafe { $load((word >> (k * L)) as $m, s.add(at).cast()) };
                    // SAFETY: as above, in `dst`.
                    unsafe { _mm512_storeu_si512(out.add(at).cast(), v) };
                }
            }
            let (base, word, left) = (chunks.chunk_len() * 64, chunks.remainder_bits(), chunks.remainder_len());
            for k in 0..left.div_ceil(L) {
                let exist = ((1u32 << (left - k * L).min(L)) - 1) as $m;
                let at = (base + k * L) * width;
                // SAFETY: the remainder's bits past its rows are zero, so
                // every lane loaded is a row that exists (above).
                let v = unsafe { $load((word >> (k * L)) as $m, s.add(at).cast()) };
                // SAFETY: as above, in `dst`.
                unsafe { $store(out.add(at).cast(), exist, v) };
            }
        }};
    }
    match width {
        4 => lanes!(16, u16, _mm512_maskz_loadu_epi32, _mm512_mask_storeu_epi32),
        _ => lanes!(8, u8, _mm512_maskz_loadu_epi64, _mm512_mask_storeu_epi64),
    }
}
