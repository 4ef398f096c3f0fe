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
