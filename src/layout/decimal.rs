//! Decimals: sign extension of an unscaled value and the precision check,
//! one value at a time (row path) or over a whole slice (column path).

use arrow_buffer::i256;

use crate::buffer::bits::Bits;
#[cfg(target_arch = "x86_64")]
use crate::layout::avx512::checked_into_128_avx512;

/// The parameters of a decimal layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    pub precision: u8,
    /// The unscaled values the decimal128 fast path takes, `lo..=hi`: the
    /// precision's range, or all of i128 when the check is off (set by
    /// `node::prepare_fast_paths`; unused for other widths).
    pub lo: i128,
    pub hi: i128,
}

/// Sign-extends the little-endian two's complement `bytes` (1 to 32 of
/// them) to 32 bytes: the one sign extension of the crate.
#[inline]
pub(crate) fn sign_extend(bytes: &[u8]) -> Option<[u8; 32]> {
    let last = *bytes.last()?;
    if bytes.len() > 32 {
        return None;
    }
    let mut le = [if last & 0x80 != 0 { 0xFF } else { 0 }; 32];
    le[..bytes.len()].copy_from_slice(bytes);
    Some(le)
}

/// The unscaled value of a decimal given as 1 to 32 little-endian bytes.
pub(crate) fn value_of(bytes: &[u8]) -> Option<i256> {
    sign_extend(bytes).map(i256::from_le_bytes)
}

/// `10^precision`, the bound of the unscaled values (exclusive, both signs).
pub(crate) fn bound(precision: u8) -> i256 {
    i256::from_i128(10).wrapping_pow(precision as u32)
}

/// The precision check: whether `value` has at most `precision` digits.
#[inline]
pub(crate) fn fits(value: i256, precision: u8) -> bool {
    let limit = bound(precision);
    value < limit && value > limit.wrapping_neg()
}

/// The fast path's range (`Spec::lo..=hi`) of a decimal128 of `precision`.
pub(crate) fn fast_range(precision: u8, checked: bool) -> (i128, i128) {
    match bound(precision).to_i128() {
        Some(b) if checked => (1 - b, b - 1),
        // Unchecked, or over 38 digits (every i128 fits).
        _ => (i128::MIN, i128::MAX),
    }
}

/// Index of the first valid (per `bits`) decimal value in `values`
/// (little-endian, `width` bytes each) whose magnitude needs more than
/// `precision` digits. Values under nulls are not looked at: they become
/// zeros.
pub(crate) fn first_over_precision(values: &[u8], width: usize, precision: u8, bits: Option<Bits>) -> Option<usize> {
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
        _ => values
            .chunks_exact(width)
            .enumerate()
            .position(|(i, v)| !fits(value_of(v).expect("1 to 32 bytes"), precision) && valid(i)),
    }
}

/// The bounds of [`all_fit_128_in`]'s test for `precision`: `lo` within
/// `.0..=.1`, `t` within `.2..=.3`.
type Bounds = (i64, i64, i64, i64);

fn bounds_128(precision: u8) -> Bounds {
    let s = 10i128.pow(u32::from(precision.min(38))) - 1;
    match i64::try_from(s) {
        Ok(s) => (-s, s, 0, 0),
        Err(_) => (i64::MIN, i64::MAX, ((-s) >> 64) as i64 + 2, (s >> 64) as i64 - 1),
    }
}

/// Whether every decimal128 of `values` (16 little-endian bytes each) surely
/// has at most the digits `bounds_128` was given: `false` sends the caller to the exact
/// check. Branch free over the whole slice, on the two 64-bit halves of each
/// value (the low half `lo` as signed, and `t`, the high half plus the sign
/// bit of `lo`, which is 0 exactly when the value is `lo` sign-extended):
/// `lo` within `a..=b` and `t` within `c..=d`. Up to 18 digits that is the
/// exact test (`t == 0`, `|lo| <= 10^p - 1`); over 18 it takes every value
/// whose high half lies strictly between those of `-(10^p - 1)` and
/// `10^p - 1`, which is all but a sliver at either end of the range.
#[inline(always)]
fn all_fit_128_in(values: &[u8], (a, b, c, d): Bounds) -> bool {
    let mut out = false;
    for v in values.chunks_exact(16) {
        let lo = i64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
        let hi = i64::from_le_bytes(v[8..].try_into().expect("8 bytes"));
        let t = hi.wrapping_add((lo as u64 >> 63) as i64);
        out |= (lo < a) | (lo > b) | (t < c) | (t > d);
    }
    !out
}

/// Appends the decimal128s of `src` (16 little-endian bytes each) to `buf`,
/// zeros under the nulls of `bits`, and returns [`all_fit_128_in`] of the
/// values as appended (a null's zero fits). On CPUs with AVX-512 or AVX2
/// the copy, the masking and the test are one pass over the source
/// (src/layout/avx512.rs, `checked_into_128_avx2`); elsewhere the
/// copy (and masking) and the test are two.
pub(crate) fn append_checked_128(
    buf: &mut arrow_buffer::MutableBuffer,
    src: &[u8],
    bits: Option<Bits>,
    precision: u8,
) -> bool {
    append_checked_128_on(buf, src, bits, precision, Kernel::best())
}

/// The ways [`append_checked_128`] copies and tests, by the CPU's vector
/// units (each one the others' answer and bytes, tested).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kernel {
    Plain,
    Avx2,
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub(crate) fn best() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Plain
    }

    /// Every kernel this CPU runs.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Kernel> {
        let best = Kernel::best();
        [Kernel::Plain, Kernel::Avx2, Kernel::Avx512].into_iter().filter(|&k| k <= best).collect()
    }
}

/// [`append_checked_128`] with `kernel`, which the CPU must run (see [`Kernel::best`]).
fn append_checked_128_on(
    buf: &mut arrow_buffer::MutableBuffer,
    src: &[u8],
    bits: Option<Bits>,
    precision: u8,
    kernel: Kernel,
) -> bool {
    let bounds = bounds_128(precision);
    let n = src.len() / 16 * 16;
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Plain {
        let old = buf.len();
        buf.reserve(n);
        // SAFETY: the CPU has the kernel's feature (`Kernel::best` found
        // it); `reserve` made the `n` bytes after `old` writable, and the
        // kernel writes each of them before `set_len` makes them part of
        // the buffer.
        unsafe {
            let dst = buf.as_mut_ptr().add(old);
            let fit = match kernel {
                Kernel::Avx512 => checked_into_128_avx512(dst, &src[..n], bits, bounds),
                _ => checked_into_128_avx2(dst, &src[..n], bits, bounds),
            };
            buf.set_len(old + n);
            return fit;
        }
    }
    append_checked_128_plain(buf, &src[..n], bits, bounds)
}

/// [`append_checked_128`] without AVX2: the copy (and masking), then the test.
fn append_checked_128_plain(
    buf: &mut arrow_buffer::MutableBuffer,
    src: &[u8],
    bits: Option<Bits>,
    bounds: Bounds,
) -> bool {
    let old = buf.len();
    match bits {
        None => buf.extend_from_slice(src),
        Some(b) => crate::layout::fixed::masked_append(buf, 16, src, b),
    }
    all_fit_128_in(&buf.as_slice()[old..], bounds)
}

/// Writes the decimal128s `src` to `dst`, zeros under the nulls of `bits`,
/// two values to a 32-byte vector (`[lo, hi, lo, hi]`), and tests each
/// vector as written: `t` is the vector plus the sign bit of each `lo`
/// shifted into its `hi` lane, compared lane by lane with `[b, d, b, d]`
/// and `[a, c, a, c]`. Returns whether no value failed.
///
/// # Safety
///
/// The CPU has AVX2; `dst` is valid for writes of `src.len()` bytes (a
/// multiple of 16) and overlaps neither `src` nor `bits`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checked_into_128_avx2(dst: *mut u8, src: &[u8], bits: Option<Bits>, bounds: Bounds) -> bool {
    use arrow_buffer::bit_chunk_iterator::BitChunks;
    use std::arch::x86_64::*;
    // SAFETY: AVX2 is there (the caller's contract); every load reads the
    // 32 bytes of `src` of pair `p` (rows 2p, 2p + 1) and every store writes
    // the same bytes of `dst`, with 2p + 1 < src.len() / 16; the last odd
    // row is 16 bytes of each.
    unsafe {
        let (a, b, c, d) = bounds;
        let lower = _mm256_setr_epi64x(a, c, a, c);
        let upper = _mm256_setr_epi64x(b, d, b, d);
        // Row masks of a pair by its two validity bits.
        let pair_masks = [
            _mm256_setzero_si256(),
            _mm256_setr_epi64x(-1, -1, 0, 0),
            _mm256_setr_epi64x(0, 0, -1, -1),
            _mm256_set1_epi64x(-1),
        ];
        let (mut over, mut under) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        let rows = src.len() / 16;
        let (s, out) = (src.as_ptr(), dst);
        macro_rules! pair {
            ($p:expr, $mask:expr) => {{
                let v = _mm256_and_si256(_mm256_loadu_si256(s.add($p * 32).cast()), $mask);
                _mm256_storeu_si256(out.add($p * 32).cast(), v);
                let t = _mm256_add_epi64(v, _mm256_srli_epi64::<63>(_mm256_slli_si256::<8>(v)));
                over = _mm256_or_si256(over, _mm256_cmpgt_epi64(t, upper));
                under = _mm256_or_si256(under, _mm256_cmpgt_epi64(lower, t));
            }};
        }
        // Opaque, so that the unmasked loop stays one pass rather than
        // becoming a memcpy and a second pass for the test.
        let all = std::hint::black_box(pair_masks[3]);
        match bits {
            None => {
                for p in 0..rows / 2 {
                    pair!(p, all);
                }
            }
            Some(bits) => {
                let chunks = BitChunks::new(bits.bytes, bits.offset, rows);
                // A pair's row masks from its two bits of the word, in the
                // vector unit: the word in every lane, each lane's bit
                // selected and compared, the selectors moved on by two bits
                // a pair (no scalar shift and table load per pair).
                let first = _mm256_setr_epi64x(1, 1, 2, 2);
                for (c, word) in chunks.iter().enumerate() {
                    let w = _mm256_set1_epi64x(word as i64);
                    let mut sel = first;
                    for k in 0..32 {
                        pair!(c * 32 + k, _mm256_cmpeq_epi64(_mm256_and_si256(w, sel), sel));
                        sel = _mm256_slli_epi64::<2>(sel);
                    }
                }
                let (base, word) = (chunks.chunk_len() * 32, chunks.remainder_bits());
                for k in 0..chunks.remainder_len() / 2 {
                    pair!(base + k, pair_masks[((word >> (2 * k)) & 3) as usize]);
                }
            }
        }
        let mut fit = _mm256_testz_si256(_mm256_or_si256(over, under), all) == 1;
        if rows % 2 == 1 {
            // The last row alone.
            let at = (rows - 1) * 16;
            let valid = bits.is_none_or(|b| b.get(rows - 1));
            let row: [u8; 16] = if valid { src[at..].try_into().expect("one value") } else { [0; 16] };
            std::ptr::copy_nonoverlapping(row.as_ptr(), out.add(at), 16);
            fit &= all_fit_128_in(&row, bounds);
        }
        fit
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::decimal::*;
    use crate::layout::fixed::tests::{gen, patterns, reference};

    /// Decimal128s of every kind for `p` digits: the edges ±(10^p - 1) and
    /// ±10^p, values that differ from an in-range one only in the high
    /// half or only in its sign, and random ones of every size.
    fn values(p: u32, rows: usize, seed: u64) -> Vec<i128> {
        let max = 10i128.pow(p) - 1;
        let mut r = gen(seed);
        // The high half of ±max with every kind of low half.
        let (hi, nhi) = (max >> 64 << 64, (-max) >> 64 << 64);
        let (l63, l64) = (i64::MAX as i128, u64::MAX as i128);
        let edges = [
            0,
            1,
            -1,
            max,
            -max,
            max + 1,
            -max - 1,
            max - 1,
            -max + 1,
            hi,
            hi | l63,
            hi | l64,
            hi | (l63 + 1),
            nhi,
            nhi | l63,
            nhi | l64,
            nhi | (l63 + 1),
        ];
        (0..rows)
            .map(|i| match r() % 6 {
                0 => edges[i % edges.len()],
                1 => (r() as i64 as i128) % (max + 1),
                2 => ((r() as i128) << 64 | r() as i128) % (max + 1),
                3 => (r() as i128) << 64 | (r() % 1000) as i128,
                4 => -((r() % 1000) as i128) & !(1i128 << 64),
                _ => ((r() as i128) << 64 | r() as i128) >> (r() % 128),
            })
            .collect()
    }

    /// The bytes are the copy with zeros under nulls; a `true` means every
    /// valid value fits; up to 18 digits the answer is exact; and on CPUs
    /// with AVX2 it is the plain code's answer. Every precision class, row
    /// count around the 2- and 64-row blocks, validity bit offset and null
    /// pattern, with rows already in the buffer.
    #[test]
    fn append_checked_128_copies_and_tests() {
        for p in [1, 4, 9, 17, 18, 19, 20, 30, 37, 38] {
            for rows in [0, 1, 2, 3, 4, 5, 7, 63, 64, 65, 66, 67, 68, 129, 130, 200] {
                for bit_offset in [0, 3, 8, 13, 64] {
                    for (name, validity) in patterns(bit_offset + rows) {
                        for mix in [0, 1] {
                            let vals: Vec<i128> = match mix {
                                0 => values(p, rows, 11 + rows as u64),
                                // In range only: most precisions must then answer true.
                                _ => values(p, rows, 5).into_iter().map(|v| v % 10i128.pow(p.min(37))).collect(),
                            };
                            let src: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
                            let bits = Bits { bytes: &validity, offset: bit_offset };
                            let prefix = [7u8; 16];
                            let want = reference(&prefix, 16, &src, bits);
                            for kernel in Kernel::available() {
                                let mut buf = arrow_buffer::MutableBuffer::new(0);
                                buf.extend_from_slice(&prefix);
                                let fit = append_checked_128_on(&mut buf, &src, Some(bits), p as u8, kernel);
                                let case =
                                    format!("p {p}, {rows} rows at bit {bit_offset}, {name}, mix {mix}, {kernel:?}");
                                assert_eq!(buf.as_slice(), &want[..], "{case}");
                                let exact = (0..rows).all(|i| !bits.get(i) || fits(i256::from_i128(vals[i]), p as u8));
                                assert!(!fit || exact, "{case}: a value over the precision passed");
                                if p <= 18 {
                                    assert_eq!(fit, exact, "{case}");
                                }
                                let mut plain = arrow_buffer::MutableBuffer::new(0);
                                plain.extend_from_slice(&prefix);
                                let plain_fit =
                                    append_checked_128_plain(&mut plain, &src, Some(bits), bounds_128(p as u8));
                                assert_eq!((plain.as_slice(), plain_fit), (&want[..], fit), "{case}: plain code");
                                // Without validity: every value counts.
                                let mut buf = arrow_buffer::MutableBuffer::new(0);
                                let fit = append_checked_128_on(&mut buf, &src, None, p as u8, kernel);
                                assert_eq!(buf.as_slice(), &src[..], "{case}: no validity");
                                let exact = vals.iter().all(|&v| fits(i256::from_i128(v), p as u8));
                                assert!(!fit || exact, "{case}: no validity: a value over the precision passed");
                                if p <= 18 {
                                    assert_eq!(fit, exact, "{case}: no validity");
                                }
                                let plain_fit = all_fit_128_in(&src, bounds_128(p as u8));
                                assert_eq!(fit, plain_fit, "{case}: no validity: plain code");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Each edge value alone among zeros, at every position of 1 to 5 rows
    /// (both halves of a vector, and the odd last row): over the precision
    /// it is never taken, and up to 18 digits the answer is exact.
    #[test]
    fn each_edge_alone() {
        for p in [1, 9, 18, 19, 20, 38] {
            let max = 10i128.pow(p) - 1;
            for e in values(p, 64, 1).into_iter().chain([max, -max, max + 1, -max - 1]) {
                for rows in 1..=5 {
                    for at in 0..rows {
                        let mut vals = vec![0i128; rows];
                        vals[at] = e;
                        let src: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
                        for kernel in Kernel::available() {
                            let mut buf = arrow_buffer::MutableBuffer::new(0);
                            let fit = append_checked_128_on(&mut buf, &src, None, p as u8, kernel);
                            assert_eq!(buf.as_slice(), &src[..], "p {p}: {e} at {at} of {rows}, {kernel:?}");
                            let exact = fits(i256::from_i128(e), p as u8);
                            assert!(!fit || exact, "p {p}: {e} at {at} of {rows} passed, {kernel:?}");
                            if p <= 18 || (e >> 64) > (-max >> 64) + 1 && (e >> 64) < (max >> 64) - 1 {
                                assert_eq!(fit, exact, "p {p}: {e} at {at} of {rows}, {kernel:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
