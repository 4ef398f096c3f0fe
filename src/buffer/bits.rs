//! Bitmap helpers: a source validity bitmap ([`Bits`]) and walks over its
//! runs and zero bits, and setting one validity bit in place.

use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::bit_iterator::BitSliceIterator;

use crate::error::Result;

use super::Slot;

/// Source validity: a bitmap and the bit where the copied range starts.
#[derive(Clone, Copy)]
pub(crate) struct Bits<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
}

impl Bits<'_> {
    /// Whether row `i` of the copied range is valid.
    pub(crate) fn get(&self, i: usize) -> bool {
        arrow_buffer::bit_util::get_bit(self.bytes, self.offset + i)
    }

    pub(crate) fn count_zeros(&self, len: usize) -> usize {
        len - BitChunks::new(self.bytes, self.offset, len).iter_padded().map(|c| c.count_ones() as usize).sum::<usize>()
    }
}

/// Calls `f(start, end, valid)` for each run of equal validity in `0..len`.
pub(crate) fn for_each_run(
    bits: Option<Bits>,
    len: usize,
    mut f: impl FnMut(usize, usize, bool) -> Result<()>,
) -> Result<()> {
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

/// Calls `f(i)` for every zero bit in `0..len`.
pub(crate) fn for_each_zero(bits: Bits, len: usize, mut f: impl FnMut(usize)) {
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

/// Sets validity bit `i` (growing the bitmap if needed: nested nodes).
#[inline(always)]
pub(crate) fn set_valid(valid: &mut Slot, i: usize) {
    match valid.buf.as_slice_mut().get_mut(i >> 3) {
        Some(byte) => *byte |= 1 << (i & 7),
        None => valid.set_bit(i),
    }
}

/// Bit `i` of a bitmap whose bits from `i` on are clear, set to `valid`.
#[inline(always)]
pub(crate) fn put_bit(bits: &mut Slot, i: usize, valid: bool) {
    match bits.buf.as_slice_mut().get_mut(i >> 3) {
        Some(b) => *b |= (valid as u8) << (i & 7),
        None => grow_put_bit(bits, i, valid),
    }
}

#[cold]
#[inline(never)]
fn grow_put_bit(bits: &mut Slot, i: usize, valid: bool) {
    bits.ensure_bits(i + 1);
    if valid {
        bits.set_bit(i);
    }
}

#[cfg(test)]
mod tests {
    use crate::buffer::bits::*;
    use crate::buffer::masks::tests::patterns;

    /// Runs and zeros against a bit-by-bit reference, for every null
    /// pattern, bit offset and length (0 included): the runs cover `0..len`
    /// in order, none empty, neighbours of different validity; no bitmap is
    /// one valid run (none when `len` is 0); the zeros are the null rows.
    #[test]
    fn runs_and_zeros_match_bit_by_bit() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 130, 200] {
            for offset in [0usize, 3, 8, 64] {
                for (name, bytes) in patterns(offset + len) {
                    let bits = Bits { bytes: &bytes, offset };
                    let case = format!("{len} bits at {offset}, {name}");
                    let mut want: Vec<(usize, usize, bool)> = Vec::new();
                    for i in 0..len {
                        let v = bits.get(i);
                        match want.last_mut() {
                            Some(last) if last.2 == v => last.1 = i + 1,
                            _ => want.push((i, i + 1, v)),
                        }
                    }
                    let mut got = Vec::new();
                    for_each_run(Some(bits), len, |s, e, v| {
                        got.push((s, e, v));
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!(got, want, "{case}");
                    let mut zeros = Vec::new();
                    for_each_zero(bits, len, |i| zeros.push(i));
                    let want_zeros: Vec<usize> = (0..len).filter(|&i| !bits.get(i)).collect();
                    assert_eq!(zeros, want_zeros, "{case}");
                    assert_eq!(bits.count_zeros(len), want_zeros.len(), "{case}");
                }
            }
            let mut got = Vec::new();
            for_each_run(None, len, |s, e, v| {
                got.push((s, e, v));
                Ok(())
            })
            .unwrap();
            let want = if len > 0 { vec![(0, len, true)] } else { vec![] };
            assert_eq!(got, want, "no bitmap, {len}");
        }
    }

    /// An error from the callback stops the walk and is returned.
    #[test]
    fn runs_stop_at_an_error() {
        let bytes = [0b0101_0101u8; 2];
        let mut calls = 0;
        let r = for_each_run(Some(Bits { bytes: &bytes, offset: 0 }), 16, |_, _, _| {
            calls += 1;
            if calls == 3 {
                Err(crate::error::QuiverError::invalid("stop"))
            } else {
                Ok(())
            }
        });
        assert!(r.is_err());
        assert_eq!(calls, 3);
    }
}
