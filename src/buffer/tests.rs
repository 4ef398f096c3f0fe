//! Unit tests of the buffer helpers against models.

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
    assert_eq!(c, Counters { buffers_reused: 0, buffers_allocated: 1, bytes_allocated: slot.buf.capacity() as u64 });
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

/// A deferred bitmap start takes nothing until `start_deferred`, then
/// takes a buffer the way `start` does (from the ring when one is
/// released, else new), zeroed; `unstart` puts every case back as it was:
/// the ring's buffers in their order, the buffer counts, the deferral (so
/// the next `start_deferred` takes the same buffer again); the bytes it
/// counted stay counted, with the growth since, so the ring never holds
/// more than was counted.
#[test]
fn a_deferred_start_takes_nothing_and_unstart_puts_it_back() {
    let cases = [(0, 0), (0, 1), (0, 3), (1, 2), (2, 0), (1, 1)];
    // `reserve`: the buffer taken grows to the last batch's length (counted).
    for ((held, released), reserve) in cases.into_iter().flat_map(|c| [(c, false), (c, true)]) {
        let how = Start { recycle: true, reserve };
        let mut c = Counters::default();
        let mut slot = Slot::default();
        // `held + released` batches, each buffer filled with 0xFF and a
        // capacity of its own, so each is told apart by its capacity.
        let mut batches = Vec::new();
        for k in 0..held + released {
            slot.start(64 * (k + 1), Fill::ZeroedBits, GROW, &mut c);
            slot.buf.as_slice_mut().fill(0xFF);
            batches.push(slot.finish(64 * (k + 1), true, 8, &mut c));
        }
        // The first `held` stay held by a consumer, the rest are released.
        let kept: Vec<Buffer> = batches.drain(..held).collect();
        drop(batches);
        let ring_caps = |s: &Slot| s.ring.iter().map(Buffer::capacity).collect::<Vec<_>>();
        let (caps, counters) = (ring_caps(&slot), c);
        let counts = |c: &Counters| (c.buffers_reused, c.buffers_allocated);
        slot.defer(16, how);
        assert_eq!((slot.buf.len(), slot.buf.capacity()), (0, 0), "deferred: no buffer");
        assert_eq!((ring_caps(&slot), c), (caps.clone(), counters), "deferred: nothing taken or counted");
        for round in 0..2 {
            slot.start_deferred(&mut c);
            assert_eq!(slot.buf.as_slice(), &[0u8; 16], "zeroed at the deferred length");
            let taken = slot.buf.capacity();
            if released > 0 {
                assert_eq!(c.buffers_reused, counters.buffers_reused + 1);
                if !reserve {
                    assert_eq!(taken, caps[held], "the first released buffer");
                }
            } else {
                assert_eq!(c.buffers_allocated, counters.buffers_allocated + 1);
            }
            slot.start_deferred(&mut c);
            assert_eq!(slot.buf.capacity(), taken, "a second start_deferred is a no-op");
            slot.buf.as_slice_mut()[3] = 9;
            slot.unstart(&mut c);
            assert_eq!((slot.buf.len(), slot.buf.capacity()), (0, 0), "round {round}: back to no buffer");
            let grown: Vec<usize> = ring_caps(&slot);
            assert_eq!(counts(&c), counts(&counters), "round {round}: the buffer counts restored");
            assert_eq!(grown.len(), caps.len(), "round {round}: the ring restored");
            for (i, (&now, &was)) in grown.iter().zip(&caps).enumerate() {
                // The buffer put back may have grown (reserve): counted.
                assert!(now == was || (reserve && i == held), "round {round}: ring entry {i}: {now} vs {was}");
            }
            let in_ring: u64 = grown.iter().map(|&b| b as u64).sum();
            assert!(slot.retained_bytes() == in_ring && in_ring <= c.bytes_allocated);
            assert!(c.bytes_allocated >= counters.bytes_allocated);
        }
        let (ring, before) = (ring_caps(&slot), c);
        slot.unstart(&mut c);
        assert_eq!((ring_caps(&slot), c), (ring, before), "unstart without a deferred start is a no-op");
        // `start` ends the deferral: unstart then does nothing.
        slot.start(8, Fill::ZeroedBits, GROW, &mut c);
        let after = (slot.buf.capacity(), c);
        slot.unstart(&mut c);
        assert_eq!((slot.buf.capacity(), c), after);
        drop(kept);
    }
}
