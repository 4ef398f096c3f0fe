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
pub(crate) mod push;

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

/// What [`Slot::start_deferred`] did, for [`Slot::unstart`].
#[derive(Debug, Clone, Copy)]
struct Undo {
    /// The ring index the buffer was taken from (counted as reused);
    /// `None`: a new allocation (counted as allocated).
    from: Option<usize>,
    /// The deferred start, to defer again.
    min_bytes: usize,
    how: Start,
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
    /// A start put off by [`defer`](Self::defer): the bytes to zero and how
    /// the buffer is taken, until [`start_deferred`](Self::start_deferred).
    deferred: Option<(usize, Start)>,
    /// How [`start_deferred`](Self::start_deferred) took the current
    /// buffer (`Some(ring index)` or `None` for a new one) and what it was
    /// deferred with, until [`unstart`](Self::unstart) or the next start.
    undo: Option<Undo>,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            buf: MutableBuffer::new(0),
            ring: VecDeque::new(),
            last_used: 0,
            start_capacity: 0,
            deferred: None,
            undo: None,
        }
    }
}

impl Slot {
    /// Gets the buffer for the next batch: a released one from the ring if
    /// any, else a new allocation; then reserves `min_bytes` and zeroes what
    /// `fill` says.
    pub fn start(&mut self, min_bytes: usize, fill: Fill, how: Start, counters: &mut Counters) {
        self.start_from(min_bytes, fill, how, counters);
    }

    /// [`start`](Self::start), answering where the buffer came from: the
    /// index it had in the ring, or `None` for a new allocation.
    fn start_from(&mut self, min_bytes: usize, fill: Fill, how: Start, counters: &mut Counters) -> Option<usize> {
        self.deferred = None;
        self.undo = None;
        let want = if how.reserve { min_bytes.max(self.last_used) } else { min_bytes };
        // The oldest released buffer of the ring. A count of one is the
        // writer's own handle: no consumer holds the buffer, and none can
        // take a new handle on it, so the scan converts only the buffer it
        // takes (each conversion back would cost an allocation).
        let mut reclaimed = None;
        let mut from = None;
        if how.recycle {
            if let Some(i) = self.ring.iter().position(|b| b.strong_count() == 1) {
                let held = self.ring.remove(i).expect("position is in the ring");
                match held.into_mutable() {
                    Ok(buf) => {
                        reclaimed = Some(buf);
                        from = Some(i);
                    }
                    // Not a buffer of the writer's own allocation: keep the handle.
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
        from
    }

    /// Puts off the start of a bitmap ([`Fill::ZeroedBits`]) for this batch:
    /// no buffer is taken until [`start_deferred`](Self::start_deferred),
    /// and a batch that never calls it neither takes nor freezes one (lazy
    /// validity of a node without nulls). Until then the slot's buffer is
    /// empty: reads see clear bits, clears do nothing.
    pub fn defer(&mut self, min_bytes: usize, how: Start) {
        debug_assert_eq!(self.buf.len(), 0, "a deferred slot holds no bits");
        self.deferred = Some((min_bytes, how));
    }

    /// The start [`defer`](Self::defer) put off, now; a no-op for a slot
    /// already started.
    pub fn start_deferred(&mut self, counters: &mut Counters) {
        if let Some((min_bytes, how)) = self.deferred.take() {
            let from = self.start_from(min_bytes, Fill::ZeroedBits, how, counters);
            self.undo = Some(Undo { from, min_bytes, how });
        }
    }

    /// Undoes the last [`start_deferred`](Self::start_deferred) of this
    /// batch (a refused call that ended a node's lazy validity): a buffer
    /// taken from the ring goes back where it was, a new one is freed, and
    /// the start is deferred again, and the buffer it reused or allocated
    /// is no longer counted. Bytes stay counted (`bytes_allocated` only
    /// grows): those the start counted, and the capacity the buffer grew by
    /// since, which a freeze would have counted. A no-op when the buffer
    /// was not taken that way.
    pub fn unstart(&mut self, counters: &mut Counters) {
        if let Some(undo) = self.undo.take() {
            let buf = std::mem::replace(&mut self.buf, MutableBuffer::new(0));
            counters.bytes_allocated += buf.capacity().saturating_sub(self.start_capacity) as u64;
            self.start_capacity = 0;
            self.deferred = Some((undo.min_bytes, undo.how));
            match undo.from {
                Some(i) => {
                    self.ring.insert(i, buf.into());
                    counters.buffers_reused -= 1;
                }
                None => counters.buffers_allocated -= 1,
            }
        }
    }

    /// Freezes the current buffer (zero copy) at `len` bytes, keeps a handle
    /// in the ring (when recycling) and returns the buffer for the batch.
    /// The capacity the buffer grew by during the batch counts as allocated.
    pub fn finish(&mut self, len: usize, recycle: bool, retain: usize, counters: &mut Counters) -> Buffer {
        self.undo = None;
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
        if at.is_multiple_of(8) && src_offset.is_multiple_of(8) {
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
mod tests;
