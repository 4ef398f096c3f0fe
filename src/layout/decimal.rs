//! Decimals: sign extension of an unscaled value and the precision check,
//! one value at a time (row path) or over a whole slice (column path).

use arrow_buffer::i256;

use crate::buffer::bits::Bits;

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
