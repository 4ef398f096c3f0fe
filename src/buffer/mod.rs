//! The buffer life cycle (docs/design.md §2): one [`Slot`] per buffer of every node.
//!
//! A slot holds the mutable buffer of the batch being written and the writer's
//! own handles on the buffers of its last few finished batches (the retain
//! ring). A retained buffer is reused only when `Buffer::into_mutable`
//! succeeds, which is arrow's atomic "this is the last reference" test.

use std::collections::VecDeque;

use arrow_buffer::{Buffer, MutableBuffer};

pub(crate) mod bits;
pub(crate) mod masks;
pub(crate) mod offsets;

/// Counters of the buffer life cycle, shared by all slots of a writer.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counters {
    pub buffers_reused: u64,
    pub buffers_allocated: u64,
    pub bytes_allocated: u64,
}

/// How a batch takes its buffers: whether released ones are reused, and
/// whether a new buffer is reserved at what the previous batch used (off
/// under a memory limit, where buffers grow only through checked writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Start {
    pub recycle: bool,
    pub reserve: bool,
}

/// How a slot's memory must look when a batch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Validity and boolean bitmaps: the whole reserved part is zeroed and
    /// becomes the buffer's length; bits are set in place.
    ZeroedBits,
    /// Offsets: the reserved part is zeroed, then the length is reset to 0
    /// and entries are pushed.
    ZeroedPush,
    /// Values and data: not zeroed (every slot is written); pushed.
    Push,
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub buf: MutableBuffer,
    ring: VecDeque<Buffer>,
    /// Bytes the previous batch used: the capacity hint for a new buffer.
    last_used: usize,
    /// Capacity of `buf` when the batch started (counted then); `finish`
    /// counts the growth since.
    start_capacity: usize,
}

impl Default for Slot {
    fn default() -> Self {
        Slot { buf: MutableBuffer::new(0), ring: VecDeque::new(), last_used: 0, start_capacity: 0 }
    }
}

impl Slot {
    /// Gets the buffer for the next batch: a released one from the ring if
    /// any, else a new allocation; then reserves `min_bytes` and zeroes what
    /// `fill` says.
    pub fn start(&mut self, min_bytes: usize, fill: Fill, how: Start, counters: &mut Counters) {
        let want = if how.reserve { min_bytes.max(self.last_used) } else { min_bytes };
        let mut reclaimed = None;
        if how.recycle {
            for _ in 0..self.ring.len() {
                let held = self.ring.pop_front().expect("ring length checked");
                match held.into_mutable() {
                    Ok(buf) if reclaimed.is_none() => reclaimed = Some(buf),
                    Ok(buf) => self.ring.push_back(buf.into()),
                    Err(held) => self.ring.push_back(held),
                }
            }
        }
        let mut buf = match reclaimed {
            Some(mut buf) => {
                counters.buffers_reused += 1;
                buf.truncate(0);
                if buf.capacity() < want {
                    let before = buf.capacity();
                    buf.reserve(want);
                    counters.bytes_allocated += (buf.capacity() - before) as u64;
                }
                buf
            }
            None => {
                let buf = MutableBuffer::with_capacity(want);
                counters.buffers_allocated += 1;
                counters.bytes_allocated += buf.capacity() as u64;
                buf
            }
        };
        match fill {
            Fill::ZeroedBits => buf.resize(min_bytes, 0),
            Fill::ZeroedPush => {
                buf.resize(min_bytes, 0);
                buf.truncate(0);
            }
            Fill::Push => {}
        }
        self.start_capacity = buf.capacity();
        self.buf = buf;
    }

    /// Freezes the current buffer (zero copy) at `len` bytes, keeps a handle
    /// in the ring (when recycling) and returns the buffer for the batch.
    /// The capacity the buffer grew by during the batch counts as allocated.
    pub fn finish(&mut self, len: usize, recycle: bool, retain: usize, counters: &mut Counters) -> Buffer {
        let mut buf = std::mem::replace(&mut self.buf, MutableBuffer::new(0));
        buf.resize(len, 0);
        counters.bytes_allocated += buf.capacity().saturating_sub(self.start_capacity) as u64;
        self.start_capacity = 0;
        self.last_used = len;
        let frozen: Buffer = buf.into();
        if recycle && retain > 0 {
            self.ring.push_back(frozen.clone());
            while self.ring.len() > retain {
                self.ring.pop_front();
            }
        }
        frozen
    }

    /// Bytes held in the ring for reuse right now.
    pub fn retained_bytes(&self) -> u64 {
        self.ring.iter().map(|b| b.capacity() as u64).sum()
    }

    /// Bytes of capacity this slot holds: the current buffer and the ring.
    pub fn held_bytes(&self) -> usize {
        self.buf.capacity() + self.ring.iter().map(Buffer::capacity).sum::<usize>()
    }

    /// Drops the writer's handles on the buffers of earlier batches (a
    /// buffer still held by a consumer lives on with it).
    pub fn drop_retained(&mut self) {
        self.ring.clear();
    }

    /// The capacity the current buffer grows by when its length becomes
    /// `new_len` (arrow's rule: the larger of `new_len` rounded up to 64
    /// bytes and twice the capacity).
    pub fn growth_to(&self, new_len: usize) -> usize {
        let cap = self.buf.capacity();
        if new_len <= cap {
            return 0;
        }
        new_len.next_multiple_of(64).max(cap.saturating_mul(2)) - cap
    }

    /// [`growth_to`](Self::growth_to) for pushing `add` bytes.
    pub fn growth_for(&self, add: usize) -> usize {
        self.growth_to(self.buf.len().saturating_add(add))
    }

    /// The growth of a bitmap addressing bits `0..bits` (`ensure_bits`,
    /// which at least doubles the length).
    pub fn bits_growth(&self, bits: usize) -> usize {
        let bytes = bits.div_ceil(8);
        if bytes <= self.buf.len() {
            return 0;
        }
        self.growth_to(bytes.max(self.buf.len() * 2))
    }

    // ---- writing helpers -------------------------------------------------

    #[inline]
    pub fn set_bit(&mut self, i: usize) {
        let byte = i >> 3;
        if byte >= self.buf.len() {
            self.grow_bits(byte + 1);
        }
        self.buf.as_slice_mut()[byte] |= 1 << (i & 7);
    }

    /// Makes sure bits `0..n` are addressable (zero-extending).
    #[inline]
    pub fn ensure_bits(&mut self, n: usize) {
        let bytes = n.div_ceil(8);
        if bytes > self.buf.len() {
            self.grow_bits(bytes);
        }
    }

    #[cold]
    fn grow_bits(&mut self, bytes: usize) {
        let new_len = bytes.max(self.buf.len() * 2);
        self.buf.resize(new_len, 0);
    }

    #[inline]
    pub fn get_bit(&self, i: usize) -> bool {
        let byte = i >> 3;
        byte < self.buf.len() && self.buf.as_slice()[byte] & (1 << (i & 7)) != 0
    }

    /// Clears bits `from..to` (rolling back an uncommitted part).
    pub fn clear_bits(&mut self, from: usize, to: usize) {
        let slice = self.buf.as_slice_mut();
        for i in from..to {
            let byte = i >> 3;
            if byte >= slice.len() {
                break;
            }
            slice[byte] &= !(1 << (i & 7));
        }
    }

    /// Clears every bit from `from` to the end of the bitmap (rolling back
    /// a refused write, whose bits may lie past the node's length).
    pub fn clear_bits_from(&mut self, from: usize) {
        let slice = self.buf.as_slice_mut();
        let byte = from >> 3;
        if byte >= slice.len() {
            return;
        }
        slice[byte] &= (1u8 << (from & 7)) - 1;
        slice[byte + 1..].fill(0);
    }

    /// Copies `len` bits of `src` starting at bit `src_offset` to bit `at`;
    /// returns how many of them are zero.
    /// Both starting on a byte boundary (the usual case: a whole column
    /// at the start of a batch), the whole bytes are one copy and their ones
    /// one count.
    pub fn copy_bits(&mut self, at: usize, src: &[u8], src_offset: usize, len: usize) -> usize {
        self.ensure_bits(at + len);
        if at % 8 == 0 && src_offset % 8 == 0 {
            let (d, s, whole, rest) = (at / 8, src_offset / 8, len / 8, len % 8);
            let dst = self.buf.as_slice_mut();
            dst[d..d + whole].copy_from_slice(&src[s..s + whole]);
            let mut ones = masks::count_ones(&src[s..s + whole]);
            if rest > 0 {
                let mask = (1u8 << rest) - 1;
                let last = src[s + whole] & mask;
                dst[d + whole] = (dst[d + whole] & !mask) | last;
                ones += last.count_ones() as usize;
            }
            return len - ones;
        }
        arrow_buffer::bit_mask::set_bits(self.buf.as_slice_mut(), src, at, src_offset, len)
    }

    /// Sets bits `at..at + len`: the partial bytes at either end bit by
    /// bit, the whole bytes between with one fill.
    pub fn set_bits_range(&mut self, at: usize, len: usize) {
        if len == 0 {
            return;
        }
        self.ensure_bits(at + len);
        let slice = self.buf.as_slice_mut();
        let end = at + len;
        let first_full = at.div_ceil(8);
        let last_full = end / 8;
        if first_full >= last_full {
            for i in at..end {
                slice[i >> 3] |= 1 << (i & 7);
            }
            return;
        }
        for i in at..first_full * 8 {
            slice[i >> 3] |= 1 << (i & 7);
        }
        slice[first_full..last_full].fill(0xFF);
        for i in last_full * 8..end {
            slice[i >> 3] |= 1 << (i & 7);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::masks::tests::{gen, patterns};
    use crate::buffer::*;

    const GROW: Start = Start { recycle: true, reserve: true };

    /// A slot's life cycle, step by step: a new buffer is counted as
    /// allocated (its whole capacity), a released one is reused (only
    /// the first released buffer of the ring; the others stay in it),
    /// grown to the capacity asked for with the growth counted, and the
    /// growth during a batch is counted at `finish`; a buffer a consumer
    /// still holds is never taken.
    #[test]
    fn slot_start_and_finish_count_what_they_take() {
        let mut c = Counters::default();
        let mut slot = Slot::default();
        slot.start(100, Fill::Push, GROW, &mut c);
        assert!(slot.buf.capacity() >= 100);
        assert_eq!(
            c,
            Counters { buffers_reused: 0, buffers_allocated: 1, bytes_allocated: slot.buf.capacity() as u64 }
        );
        let first_cap = slot.buf.capacity();
        slot.buf.extend_from_slice(&[7u8; 10]);
        let b1 = slot.finish(10, true, 2, &mut c);
        assert_eq!(b1.as_slice(), &[7u8; 10]);
        assert_eq!(c.bytes_allocated, first_cap as u64, "no growth during the batch");
        // A second batch while b1 is held: a new buffer.
        slot.start(10, Fill::Push, GROW, &mut c);
        assert_eq!((c.buffers_allocated, c.buffers_reused), (2, 0));
        let second_cap = slot.buf.capacity() as u64;
        // It grows during the batch: the growth counts at finish.
        slot.buf.extend_from_slice(&vec![1u8; 5000]);
        let grown = slot.buf.capacity() as u64;
        let b2 = slot.finish(5000, true, 2, &mut c);
        assert_eq!(c.bytes_allocated, first_cap as u64 + grown);
        assert!(grown > second_cap);
        assert_eq!(slot.retained_bytes(), (first_cap as u64) + grown);
        assert_eq!(slot.held_bytes() as u64, slot.retained_bytes());
        // Both released: the first is reused, the second stays in the ring.
        drop((b1, b2));
        let before = c.bytes_allocated;
        slot.start(10, Fill::Push, Start { recycle: true, reserve: false }, &mut c);
        assert_eq!((c.buffers_allocated, c.buffers_reused), (2, 1));
        assert_eq!(slot.buf.capacity(), first_cap, "the first released buffer is reused");
        assert_eq!(slot.buf.len(), 0);
        assert_eq!(c.bytes_allocated, before, "a reused buffer big enough is not counted");
        assert_eq!(slot.retained_bytes(), grown, "the other released buffer stays in the ring");
        // A reused buffer smaller than asked: reserved, and the growth counted exactly.
        let mut c = Counters::default();
        let mut slot = Slot::default();
        slot.start(64, Fill::Push, GROW, &mut c);
        let small = slot.buf.capacity();
        drop(slot.finish(0, true, 1, &mut c));
        let before = c.bytes_allocated;
        slot.start(4096, Fill::Push, Start { recycle: true, reserve: false }, &mut c);
        assert_eq!(c.buffers_reused, 1);
        assert!(slot.buf.capacity() >= 4096);
        assert_eq!(c.bytes_allocated - before, (slot.buf.capacity() - small) as u64);
        // recycle off: never reused.
        drop(slot.finish(0, true, 1, &mut c));
        slot.start(1, Fill::Push, Start { recycle: false, reserve: false }, &mut c);
        assert_eq!(c.buffers_reused, 1);
        // retain 0 or recycle off at finish: nothing kept.
        let _ = slot.finish(0, false, 3, &mut c);
        slot.drop_retained();
        assert_eq!(slot.retained_bytes(), 0);
    }

    /// What each fill leaves: zeroed bits as the length, zeroed then empty
    /// for offsets, untouched values.
    #[test]
    fn slot_start_fills_a_reused_buffer() {
        for fill in [Fill::ZeroedBits, Fill::ZeroedPush, Fill::Push] {
            let mut c = Counters::default();
            let mut slot = Slot::default();
            slot.start(32, fill, GROW, &mut c);
            slot.buf.truncate(0);
            slot.buf.extend_from_slice(&[0xA5u8; 32]);
            drop(slot.finish(32, true, 1, &mut c));
            slot.start(32, fill, GROW, &mut c);
            assert_eq!(c.buffers_reused, 1);
            match fill {
                Fill::ZeroedBits => assert_eq!(slot.buf.as_slice(), &[0u8; 32]),
                Fill::ZeroedPush | Fill::Push => assert_eq!(slot.buf.len(), 0),
            }
            if fill == Fill::ZeroedPush {
                // SAFETY: the capacity is at least 32 bytes, all initialised by the resize.
                unsafe { slot.buf.set_len(32) };
                assert_eq!(slot.buf.as_slice(), &[0u8; 32]);
            }
        }
    }

    /// The ring keeps at most `retain` handles, the newest.
    #[test]
    fn slot_ring_keeps_the_newest() {
        let mut c = Counters::default();
        let mut slot = Slot::default();
        let (mut caps, mut held) = (Vec::new(), Vec::new());
        for n in [100usize, 1000, 10000] {
            slot.start(n, Fill::Push, Start { recycle: true, reserve: false }, &mut c);
            caps.push(slot.buf.capacity() as u64);
            held.push(slot.finish(0, true, 2, &mut c));
        }
        assert_eq!(c.buffers_reused, 0);
        assert_eq!(slot.retained_bytes(), caps[1] + caps[2]);
    }

    /// Arrow's growth rule, and the bitmap's.
    #[test]
    fn slot_growth_matches_what_the_buffer_does() {
        for cap in [0usize, 64, 128, 1000] {
            for add in [0usize, 1, 63, 64, 65, 200, 5000] {
                let mut slot = Slot::default();
                slot.buf.reserve(cap);
                let start = slot.buf.capacity();
                slot.buf.extend_from_slice(&vec![0u8; cap.min(10)]);
                let want = slot.growth_for(add);
                slot.buf.extend_from_slice(&vec![1u8; add]);
                assert_eq!(slot.buf.capacity() - start, want, "cap {cap} add {add}");
                assert_eq!(slot.growth_to(0), 0);
            }
        }
        for len in [0usize, 1, 8, 100] {
            for bits in [0usize, 1, 8, 9, 64, 65, 1000, 1001] {
                let mut slot = Slot::default();
                slot.buf.resize(len, 0);
                let start = slot.buf.capacity();
                let want = slot.bits_growth(bits);
                slot.ensure_bits(bits);
                assert!(slot.buf.len() >= bits.div_ceil(8));
                assert_eq!(slot.buf.capacity() - start, want, "len {len} bits {bits}");
                if bits.div_ceil(8) > len {
                    assert_eq!(slot.buf.len(), bits.div_ceil(8).max(len * 2));
                } else {
                    assert_eq!(slot.buf.len(), len);
                }
            }
        }
    }

    /// The bit helpers against a `Vec<bool>` model: set, get, set ranges,
    /// clear ranges and clear to the end, at every start and length.
    #[test]
    fn slot_bits_match_a_model() {
        let check = |slot: &Slot, model: &[bool], case: &str| {
            for (i, &b) in model.iter().enumerate() {
                assert_eq!(slot.get_bit(i), b, "{case}: bit {i}");
            }
            let bytes = slot.buf.as_slice();
            for i in model.len()..bytes.len() * 8 {
                assert_eq!(bytes[i / 8] >> (i % 8) & 1, 0, "{case}: bit {i} past the model");
            }
            assert!(!slot.get_bit(bytes.len() * 8), "{case}: past the end");
        };
        let n = 90;
        for at in [0usize, 1, 7, 8, 9, 15, 16, 30] {
            for len in [0usize, 1, 2, 7, 8, 9, 16, 17, 40, 59] {
                let case = format!("at {at} len {len}");
                let mut slot = Slot::default();
                let mut model = vec![false; n];
                slot.set_bit(3);
                model[3] = true;
                slot.set_bits_range(at, len);
                for b in &mut model[at..at + len] {
                    *b = true;
                }
                slot.ensure_bits(n);
                check(&slot, &model, &case);
                slot.set_bits_range(0, n);
                model.fill(true);
                slot.clear_bits(at, at + len);
                for b in &mut model[at..at + len] {
                    *b = false;
                }
                check(&slot, &model, &format!("{case}, cleared"));
                slot.clear_bits(0, 10_000);
                model.fill(false);
                check(&slot, &model, &format!("{case}, all cleared"));
                slot.set_bits_range(0, n);
                model.fill(true);
                slot.clear_bits_from(at + len);
                for b in &mut model[at + len..] {
                    *b = false;
                }
                check(&slot, &model, &format!("{case}, cleared from {}", at + len));
                slot.clear_bits_from(10_000);
                check(&slot, &model, &format!("{case}, cleared past the end"));
                let mut slot = Slot::default();
                slot.set_bit(at + len);
                assert!(slot.buf.len() > (at + len) / 8);
                assert!(slot.get_bit(at + len));
                assert!(!slot.get_bit(at + len + 1));
            }
        }
    }

    /// `copy_bits` (its byte-aligned path and the general one) against
    /// arrow's `set_bits`, into a bitmap holding bits before `at` and zeros
    /// in the range, then zeros or ones after it: the same bytes and the same count of zeros, for every null
    /// pattern, start bit (aligned or not) on both sides and length.
    #[test]
    fn copy_bits_matches_set_bits() {
        let mut r = gen(9);
        let before: Vec<u8> = (0..40).map(|_| r() as u8).collect();
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 200, 513] {
            for src_offset in [0, 8, 16, 5, 13] {
                for at in [0, 8, 24, 3, 17] {
                    for ((name, src), after) in
                        patterns(src_offset + len).into_iter().flat_map(|p| [(p.clone(), false), (p, true)])
                    {
                        let mut want = vec![0u8; (at + len).div_ceil(8) + 8];
                        for i in 0..at {
                            want[i / 8] |= before[i / 8] & (1 << (i % 8));
                        }
                        // Bits after the copied range are left as they are.
                        for i in (at + len..want.len() * 8).filter(|_| after) {
                            want[i / 8] |= 1 << (i % 8);
                        }
                        let mut slot = Slot::default();
                        slot.buf.extend_from_slice(&want);
                        let zeros = slot.copy_bits(at, &src, src_offset, len);
                        let want_zeros = arrow_buffer::bit_mask::set_bits(&mut want, &src, at, src_offset, len);
                        let case = format!("{len} bits from {src_offset} to {at}, {name}, ones after: {after}");
                        assert_eq!(zeros, want_zeros, "{case}");
                        assert_eq!(&slot.buf.as_slice()[..want.len()], &want[..], "{case}");
                    }
                }
            }
        }
    }
}
