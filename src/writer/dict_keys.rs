//! The key copy of the dictionary column path (see `encoded_copy`): input
//! keys of every width read as indexes, remapped 64 at a time without a
//! branch per key, copied as they are while the input dictionary comes in
//! the order of first use, and key by key after a value not seen yet.

use crate::buffer::bits::Bits;

/// An input dictionary key type: its width and how one key reads as an
/// index (a negative key reads as an index past any dictionary).
pub(super) trait DictKey {
    const WIDTH: usize;
    /// One key's bytes.
    type Raw: Copy;
    /// The whole keys of `bytes`.
    fn split(bytes: &[u8]) -> &[Self::Raw];
    fn index(raw: Self::Raw) -> usize;
    /// The key's bits as an unsigned index: `index` for a key in the
    /// dictionary, past it for any other key.
    fn unsigned(raw: Self::Raw) -> usize;
    /// Whether every `unsigned` of `block` is below `m` (true for none).
    fn all_below(block: &[Self::Raw], m: usize) -> bool;
}

/// The whole `N`-byte arrays at the start of `bytes` (a trailing part
/// shorter than `N` is left out), borrowed from `bytes`.
#[inline(always)]
fn whole_keys<const N: usize>(bytes: &[u8]) -> &[[u8; N]] {
    // SAFETY: `[u8; N]` has the size `N`, the alignment 1 and no invalid
    // bit pattern, so the first `len / N * N` bytes of `bytes` are exactly
    // `len / N` of them, borrowed for as long as `bytes`.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), bytes.len() / N) }
}

macro_rules! dict_keys {
    ($($t:ty => $u:ty),*) => {$(
        impl DictKey for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            type Raw = [u8; std::mem::size_of::<$t>()];
            #[inline(always)]
            fn split(bytes: &[u8]) -> &[Self::Raw] {
                whole_keys(bytes)
            }
            #[inline(always)]
            fn unsigned(raw: Self::Raw) -> usize {
                // A negative key reads as an index past any dictionary.
                <$u>::from_le_bytes(raw) as usize
            }
            #[inline(always)]
            fn all_below(block: &[Self::Raw], m: usize) -> bool {
                let Ok(m) = <$u>::try_from(m) else { return true };
                // A compare and an or per key in the key's own width, which
                // vectorises (an unsigned maximum does not, on plain x86_64).
                !block.iter().fold(false, |any, &r| any | (<$u>::from_le_bytes(r) >= m))
            }
            #[inline(always)]
            fn index(raw: Self::Raw) -> usize {
                usize::try_from(<$t>::from_le_bytes(raw)).unwrap_or(usize::MAX)
            }
        }
    )*};
}

dict_keys!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, u8 => u8, u16 => u16, u32 => u32, u64 => u64);

/// `remap` of an input index not seen yet.
pub(super) const NEW: usize = usize::MAX;

/// The bit of `NEW` no dictionary index has (an index is below
/// `isize::MAX`).
const NEW_BIT: usize = 1 << (usize::BITS - 1);

/// Where `push_keys` stopped.
pub(super) enum Stop {
    /// At the end of the input.
    End,
    /// At a valid row whose input index is not in `remap` yet.
    New(usize),
    /// At a valid row whose input index is past the input dictionary.
    OutOfRange(usize),
}

/// An output key type (u8 to u64: the key width of the node).
pub(super) trait OutKey: Copy {
    fn of(index: usize) -> Self;
}

macro_rules! out_keys {
    ($($t:ty),*) => {$(
        impl OutKey for $t {
            #[inline(always)]
            fn of(index: usize) -> Self {
                index as $t
            }
        }
    )*};
}

out_keys!(u8, u16, u32, u64);

/// Pushes the keys of rows `first..` (`input`: their keys of `K`) onto
/// `out` as `O`: `remap` of each valid row's input index, 0 under a null,
/// until a row whose index is new or out of range; returns the keys pushed
/// and where it stopped. `remap` holds one entry past the input dictionary,
/// `NEW`; `ident` is `Some(m)` when `remap` is the identity on `0..m` and
/// `NEW` elsewhere. Keys go out 64 at a time, through a buffer on the stack
/// (`map_block`), and a block where one was missing is done again key by
/// key (`key_by_key`), to stop at the first.
#[inline(always)]
pub(super) fn push_keys<K: DictKey, O: OutKey + arrow_buffer::ArrowNativeType>(
    input: &[u8],
    out: &mut arrow_buffer::MutableBuffer,
    remap: &[usize],
    ident: Option<usize>,
    bits: Option<Bits>,
    first: usize,
) -> (usize, Stop) {
    let top = remap.len() - 1;
    let table = &remap[..=top];
    let mut staged = [O::of(0); 64];
    let mut done = 0;
    // Rows `as_is..done` go out as the input's bytes, in one copy when a
    // block that cannot (or the end) comes.
    let mut as_is = 0;
    let flush = |out: &mut arrow_buffer::MutableBuffer, from: usize, to: usize| {
        if to > from {
            out.extend_from_slice(&input[from * K::WIDTH..to * K::WIDTH]);
        }
    };
    for block in K::split(input).chunks(64) {
        let n = block.len();
        // Right after a stop (`first` > 0), more new values are likely near:
        // the first block goes key by key rather than twice.
        if done == 0 && first > 0 {
            match key_by_key::<K, O>(block, out, &remap[..top], bits, first, &mut staged) {
                Some((pushed, stop)) => return (pushed, stop),
                None => {
                    done = n;
                    as_is = n;
                    continue;
                }
            }
        }
        let valid = bits.map(|b| valid_word(b, first + done, n)).filter(|&v| v != u64::MAX >> (64 - n));
        // Every row valid and every key below the identity's end: the output
        // keys are the input's bytes (the node's key type is the input's).
        if let (None, Some(m)) = (valid, ident) {
            if K::WIDTH == std::mem::size_of::<O>() && K::all_below(block, m) {
                done += n;
                continue;
            }
        }
        flush(out, as_is, done);
        as_is = done + n;
        let seen = match ident {
            Some(m) => map_block::<K, O>(block, &mut staged, valid, |k| if k < m { k } else { NEW }),
            None => map_block::<K, O>(block, &mut staged, valid, |k| table[k.min(top)]),
        };
        if seen & NEW_BIT != 0 {
            let (pushed, stop) = key_by_key::<K, O>(block, out, &remap[..top], bits, first + done, &mut staged)
                .expect("a block where map_block saw a missing index holds one");
            return (done + pushed, stop);
        }
        out.extend_from_slice(&staged[..n]);
        done += n;
    }
    flush(out, as_is, done);
    (done, Stop::End)
}

/// Remaps the keys of `block` into `slots` (as long) with `map` (an unsigned key to
/// its index, `NEW` when it has none), 0 under a null (`valid`: the block's
/// validity bits, `None` when every row is valid), without a branch per
/// key; returns the indexes of valid rows ored together, whose top bit
/// (`NEW_BIT`) says one was `NEW`. An or, not a compare: nothing but one
/// `or` is carried from key to key.
#[inline(always)]
fn map_block<K: DictKey, O: OutKey>(
    block: &[K::Raw],
    slots: &mut [O],
    valid: Option<u64>,
    map: impl Fn(usize) -> usize,
) -> usize {
    let mut seen = 0;
    match valid {
        None => {
            for (slot, &key) in slots.iter_mut().zip(block) {
                let index = map(K::unsigned(key));
                seen |= index;
                *slot = O::of(index);
            }
        }
        Some(valid) => {
            for (j, (slot, &key)) in slots.iter_mut().zip(block).enumerate() {
                let keep = 0usize.wrapping_sub(((valid >> j) & 1) as usize);
                let index = map(K::unsigned(key)) & keep;
                seen |= index;
                *slot = O::of(index);
            }
        }
    }
    seen
}

/// The validity of rows `at..at + n` (`n` ≤ 64) of `b` as the low `n` bits
/// of a word (the bits above them 0).
#[inline(always)]
fn valid_word(b: Bits, at: usize, n: usize) -> u64 {
    let bit = b.offset + at;
    let (byte, shift) = (bit / 8, bit % 8);
    let mut raw = [0u8; 16];
    let have = b.bytes.len().saturating_sub(byte).min(9);
    raw[..have].copy_from_slice(&b.bytes[byte..byte + have]);
    let word = (u128::from_le_bytes(raw) >> shift) as u64;
    word & (u64::MAX >> (64 - n))
}

/// `push_keys` of one block, key by key: the keys up to the first row whose
/// index is new or out of range are pushed and the stop returned; with no
/// such row, the whole block is pushed (`remap`: one entry per input
/// dictionary value).
#[inline(never)]
fn key_by_key<K: DictKey, O: OutKey + arrow_buffer::ArrowNativeType>(
    block: &[K::Raw],
    out: &mut arrow_buffer::MutableBuffer,
    remap: &[usize],
    bits: Option<Bits>,
    at: usize,
    staged: &mut [O; 64],
) -> Option<(usize, Stop)> {
    for (n, (slot, &key)) in staged.iter_mut().zip(block).enumerate() {
        if bits.is_some_and(|b| !b.get(at + n)) {
            *slot = O::of(0);
            continue;
        }
        let key = K::index(key);
        let stop = match remap.get(key) {
            Some(&index) if index != NEW => {
                *slot = O::of(index);
                continue;
            }
            Some(_) => Stop::New(key),
            None => Stop::OutOfRange(key),
        };
        out.extend_from_slice(&staged[..n]);
        return Some((n, stop));
    }
    out.extend_from_slice(&staged[..block.len()]);
    None
}

/// How many of the `width`-byte values of `bytes` come before the first
/// that equals the one before it (all of them when none does).
pub(super) fn distinct_prefix(bytes: &[u8], width: usize) -> usize {
    fn by<const N: usize>(bytes: &[u8]) -> usize {
        let v = whole_keys::<N>(bytes);
        // Eight neighbours compared at a time without a branch each; the
        // block with a repeat is then searched.
        let mut i = 0;
        while i + 9 <= v.len() {
            let b = &v[i..i + 9];
            if (0..8).fold(false, |any, j| any | (b[j] == b[j + 1])) {
                break;
            }
            i += 8;
        }
        v[i..].windows(2).position(|p| p[0] == p[1]).map_or(v.len(), |j| i + j + 1)
    }
    match width {
        1 => by::<1>(bytes),
        2 => by::<2>(bytes),
        4 => by::<4>(bytes),
        8 => by::<8>(bytes),
        16 => by::<16>(bytes),
        32 => by::<32>(bytes),
        _ => {
            let n = bytes.len() / width;
            let at = |i: usize| &bytes[i * width..(i + 1) * width];
            (1..n).find(|&i| at(i) == at(i - 1)).unwrap_or(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{distinct_prefix, DictKey};

    /// `all_below` against a key-by-key compare of the unsigned keys, for
    /// every key type, bounds around 0, 1, the signed and unsigned ends of
    /// the width, and blocks of 0 to 64 keys with each kind of key (zero,
    /// just below and at the bound, top bit set, the largest) at each place.
    #[test]
    fn all_below_matches_key_by_key() {
        fn check<K: DictKey>(name: &str, to_raw: impl Fn(u64) -> K::Raw) {
            let bits = 8 * K::WIDTH as u32;
            let max = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let half = max / 2 + 1;
            let bounds = [0, 1, 2, 50, half - 1, half, half + 1, max, max.saturating_add(1)];
            for &m in &bounds {
                let m = m as usize;
                let keys = [0, 1, m.saturating_sub(1) as u64, m as u64, half - 1, half, max - 1, max];
                for len in [0usize, 1, 7, 8, 9, 63, 64] {
                    for at in 0..len.max(1) {
                        for &special in &keys {
                            let special = special & max;
                            let ks: Vec<u64> = (0..len).map(|i| if i == at { special } else { 0 }).collect();
                            let block: Vec<K::Raw> = ks.iter().map(|&k| to_raw(k)).collect();
                            let want = ks.iter().all(|&k| (k as u128) < m as u128);
                            assert_eq!(
                                K::all_below(&block, m),
                                want,
                                "{name}: bound {m}, {len} keys, {special} at {at}"
                            );
                        }
                    }
                }
            }
        }
        check::<i8>("i8", |k| (k as u8).to_le_bytes());
        check::<u8>("u8", |k| (k as u8).to_le_bytes());
        check::<i16>("i16", |k| (k as u16).to_le_bytes());
        check::<u16>("u16", |k| (k as u16).to_le_bytes());
        check::<i32>("i32", |k| (k as u32).to_le_bytes());
        check::<u32>("u32", |k| (k as u32).to_le_bytes());
        check::<i64>("i64", |k| k.to_le_bytes());
        check::<u64>("u64", |k| k.to_le_bytes());
    }

    /// Against a value-by-value search, for every width the copies use (and
    /// one they do not, 3), every length up to 40 values, with no repeat and
    /// with a repeat after each position; values that differ only in their
    /// last byte.
    #[test]
    fn distinct_prefix_matches_value_by_value() {
        for width in [1usize, 2, 3, 4, 8, 16, 32] {
            for n in 0..=40usize {
                let value = |i: usize| {
                    let mut v = vec![0xA5u8; width];
                    v[width - 1] = i as u8;
                    v
                };
                let distinct: Vec<u8> = (0..n).flat_map(value).collect();
                assert_eq!(distinct_prefix(&distinct, width), n, "width {width}, {n} distinct");
                for at in 1..n {
                    let mut bytes = distinct.clone();
                    let before = bytes[(at - 1) * width..at * width].to_vec();
                    bytes[at * width..(at + 1) * width].copy_from_slice(&before);
                    // Value `at` repeats `at - 1`: the prefix ends before it.
                    let want = (1..n).find(|&i| bytes[i * width..(i + 1) * width] == bytes[(i - 1) * width..i * width]);
                    assert_eq!(want, Some(at));
                    assert_eq!(distinct_prefix(&bytes, width), at, "width {width}, {n} values, repeat at {at}");
                }
            }
        }
    }
}
