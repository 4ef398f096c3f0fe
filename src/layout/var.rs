//! Variable-width layouts (utf8, binary and their large forms): one value's
//! bytes and offset, and UTF-8 checks.

use crate::buffer::offsets::push_offset;
use crate::buffer::push::extend_bytes;
use crate::buffer::Slot;

/// Appends the bytes `v` and their end offset; `Err(end)`, having written
/// nothing, when the end would pass what 4-byte offsets address (not `large`).
#[inline(always)]
pub(crate) fn push(offsets: &mut Slot, data: &mut Slot, large: bool, v: &[u8]) -> Result<(), usize> {
    let end = data.buf.len() + v.len();
    if !large && end > i32::MAX as usize {
        return Err(end);
    }
    extend_bytes(&mut data.buf, v);
    push_offset(offsets, if large { 8 } else { 4 }, end);
    Ok(())
}

/// Whether `v` is UTF-8: ASCII first, the full check otherwise.
#[inline(always)]
pub(crate) fn valid_utf8(v: &[u8]) -> bool {
    is_ascii(v) || std::str::from_utf8(v).is_ok()
}

/// Whether `v` is ASCII: up to 16 bytes as two overlapping 8-byte (or
/// 4-byte) words tested at once, no loop (the standard library's test
/// goes byte by byte below 8 bytes); longer values word at a time.
#[inline(always)]
pub(crate) fn is_ascii(v: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = v.len();
    let word = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u32::from_le_bytes(v[at..at + 4].try_into().expect("4 bytes")) as u64;
    match n {
        0 => true,
        1..=3 => (v[0] | v[n / 2] | v[n - 1]) < 0x80,
        4..=7 => (half(0) | half(n - 4)) & HIGH == 0,
        8..=16 => (word(0) | word(n - 8)) & HIGH == 0,
        _ => v.is_ascii(),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_ascii, valid_utf8};

    #[test]
    fn ascii_test_sees_every_byte() {
        // Every length up to 40, a high bit at every position.
        for n in 0..40 {
            let clean = vec![b'a'; n];
            assert!(is_ascii(&clean), "len {n}");
            for at in 0..n {
                let mut v = clean.clone();
                v[at] = 0x80;
                assert!(!is_ascii(&v), "len {n}, high bit at {at}");
                v[at] = 0xFF;
                assert!(!is_ascii(&v), "len {n}, 0xFF at {at}");
                assert_eq!(valid_utf8(&v), std::str::from_utf8(&v).is_ok());
            }
        }
        assert!(valid_utf8("héllo wörld, ünïcode".as_bytes()));
        assert!(valid_utf8("é".as_bytes()));
        assert!(!valid_utf8(&[b'a', 0xC3]));
    }
}
