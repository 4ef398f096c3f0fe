//! Pushes onto a [`MutableBuffer`] with the write inlined while its
//! capacity has room: arrow's `push` and `extend_from_slice` reserve first
//! and do not always inline, and a value of a few bytes paid a `memcpy`
//! call (with its own branches on the length) for each string of the row
//! path.

use arrow_buffer::{ArrowNativeType, MutableBuffer};

/// Pushes `v` (little endian) onto `buf`, growing it only when its
/// capacity is full.
#[inline(always)]
pub(crate) fn push_value<T: ArrowNativeType>(buf: &mut MutableBuffer, v: T) {
    let len = buf.len();
    let size = std::mem::size_of::<T>();
    if len + size <= buf.capacity() {
        // SAFETY: `size` bytes of capacity past the length (checked).
        unsafe {
            buf.as_mut_ptr().add(len).cast::<T>().write_unaligned(v);
            buf.set_len(len + size);
        }
    } else {
        grow_push(buf, v);
    }
}

#[cold]
#[inline(never)]
fn grow_push<T: ArrowNativeType>(buf: &mut MutableBuffer, v: T) {
    buf.push(v);
}

/// Appends the bytes of `v` to `buf`: up to 16 bytes with at most two
/// overlapping word copies (each byte of `v` read, each of the `v.len()`
/// bytes after the length written, none else), longer values and a full
/// buffer through `extend_from_slice`.
#[inline(always)]
pub(crate) fn extend_bytes(buf: &mut MutableBuffer, v: &[u8]) {
    let (len, n) = (buf.len(), v.len());
    if n > 16 || len + n > buf.capacity() {
        buf.extend_from_slice(v);
        return;
    }
    let src = v.as_ptr();
    // SAFETY: `n` bytes of capacity past the length (checked); every read
    // is inside `v` and every write inside `dst .. dst + n`.
    unsafe {
        let dst = buf.as_mut_ptr().add(len);
        match n {
            0 => {}
            1..=3 => {
                *dst = *src;
                *dst.add(n / 2) = *src.add(n / 2);
                *dst.add(n - 1) = *src.add(n - 1);
            }
            4..=7 => {
                let (a, b) = (src.cast::<u32>().read_unaligned(), src.add(n - 4).cast::<u32>().read_unaligned());
                dst.cast::<u32>().write_unaligned(a);
                dst.add(n - 4).cast::<u32>().write_unaligned(b);
            }
            _ => {
                let (a, b) = (src.cast::<u64>().read_unaligned(), src.add(n - 8).cast::<u64>().read_unaligned());
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            }
        }
        buf.set_len(len + n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length to 40 (both sides of 16), from every offset in a
    /// source, onto buffers whose room past the length is none, one short
    /// of the value, exactly the value and more: the bytes are the input's,
    /// the bytes before them are kept, the length is right.
    #[test]
    fn extend_bytes_writes_exactly_the_value() {
        let src: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        for n in 0..=40usize {
            for at in 0..=64 - n {
                let v = &src[at..at + n];
                for room in [0, n.saturating_sub(1), n, n + 1, n + 40] {
                    let mut b = MutableBuffer::new(128);
                    let start = b.capacity() - room;
                    b.extend_from_slice(&vec![0xEEu8; start]);
                    extend_bytes(&mut b, v);
                    assert_eq!(b.len(), start + n, "n {n} room {room}");
                    assert!(b.as_slice()[..start].iter().all(|&x| x == 0xEE), "n {n} room {room}");
                    assert_eq!(&b.as_slice()[start..], v, "n {n} room {room} at {at}");
                }
            }
        }
    }

    #[test]
    fn push_value_pushes_with_and_without_room() {
        for room in [0usize, 3, 4, 64] {
            let mut b = MutableBuffer::new(room);
            for i in 0..100i32 {
                push_value(&mut b, i * 7 - 3);
                push_value(&mut b, (i as i64) << 40);
            }
            let want: Vec<u8> = (0..100i32)
                .flat_map(|i| [(i * 7 - 3).to_le_bytes().to_vec(), ((i as i64) << 40).to_le_bytes().to_vec()])
                .flatten()
                .collect();
            assert_eq!(b.as_slice(), &want[..]);
        }
    }
}
