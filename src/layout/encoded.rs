//! Dictionary and run-end encoded layouts: the interning state of an encoded
//! node, its keys and run ends, and the largest index their types hold. The
//! values themselves live in a hidden value node, which the writer handles.
//!
//! Two ways to find an equal value, by the value node's layout:
//! - *flat* values (variable-width: utf8, binary and their large forms;
//!   fixed-width: integers, floats, decimals, temporal types, fixed-size
//!   binary) are compared as the bytes the value node stores. A dictionary
//!   keeps `table` ([`FlatTable`]), its indexes hashed by their value's bytes
//!   and compared against the value node itself, so a lookup allocates
//!   nothing; run-end encoding compares with the value node's last value.
//! - every other value type (nested, boolean, view) is serialised into a key
//!   (`ArrowWriter::value_key`) kept in `index` / `last`.
//!
//! Either way a dictionary index is the position of the value's first
//! appearance in the batch, so the bytes do not depend on the hash or on
//! what the tables held before.

use std::collections::HashMap;

use arrow_schema::DataType;

use crate::buffer::push::push_value;
use crate::buffer::Slot;

/// What an encoded node needs to find equal values.
#[derive(Debug, Default)]
pub(crate) struct Encoding {
    /// Dictionary of non-flat values: value key -> dictionary index.
    pub index: HashMap<Vec<u8>, usize>,
    /// Run-end encoded, non-flat values: the key of the last run's value.
    pub last: Option<Vec<u8>>,
    /// Dictionary of flat values: the dictionary indexes, by `flat_hash`
    /// of the value they stand for.
    pub table: FlatTable,
    /// The largest index the key or run-end type holds.
    pub max: usize,
    /// Column path scratch, kept for its capacity: a dictionary input's
    /// index -> this dictionary's index (`usize::MAX`: not seen yet); a
    /// run-end input's run ends being copied.
    pub remap: Vec<usize>,
    /// Lengths and null counts of the value subtree before the value being written.
    pub snapshot: Vec<(usize, usize)>,
    /// The value subtree (the value node and its descendants).
    pub subtree: Vec<usize>,
}

impl Encoding {
    /// Forgets the values of the last batch (a new batch starts).
    pub fn clear(&mut self) {
        self.index.clear();
        self.last = None;
        self.table.clear();
    }
}

/// The 128-bit product of `a` and `b`, its halves xored.
#[inline(always)]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Bytes `at..at + 8` of `b`.
#[inline(always)]
fn read8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Bytes `at..at + 4` of `b`.
#[inline(always)]
fn read4(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")))
}

const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7344;
const K2: u64 = 0xa409_3822_299f_31d0;

/// The hash of a flat value (`None`: a null value), for [`FlatTable`]:
/// folded multiplies of its bytes, 16 at a time (up to 16 bytes, which most
/// strings and every fixed-width type but decimal256 are, in one step),
/// with fixed constants. Only where a value sits in the table depends on it,
/// never the output.
#[inline(always)]
pub(crate) fn flat_hash(value: Option<&[u8]>) -> u64 {
    let Some(b) = value else { return 0x9e37_79b9_7f4a_7c15 };
    let n = b.len();
    // Overlapping reads cover every byte of 1..16 bytes; the length the rest.
    let (lo, hi) = match n {
        0 => (0, 0),
        1..=3 => (u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16, 0),
        4..=7 => (read4(b, 0), read4(b, n - 4)),
        8..=16 => (read8(b, 0), read8(b, n - 8)),
        _ => return long_hash(b),
    };
    folded_multiply(folded_multiply(lo ^ K0, hi ^ K1 ^ n as u64), K2)
}

#[inline(never)]
fn long_hash(b: &[u8]) -> u64 {
    let mut h = K2 ^ b.len() as u64;
    let mut chunks = b.chunks_exact(16);
    for c in &mut chunks {
        h = folded_multiply(read8(c, 0) ^ h ^ K0, read8(c, 8) ^ K1);
    }
    // The last 16 bytes (overlapping the chunks before when not a multiple).
    let n = b.len();
    h = folded_multiply(read8(b, n - 16) ^ h ^ K0, read8(b, n - 8) ^ K1);
    folded_multiply(h, K2)
}

/// The dictionary indexes of flat values by their hash: open addressing
/// with linear probing over `slots` (0 for an empty slot, else index + 1 in
/// the low 32 bits and the hash's high 32 bits above, so that a probe
/// compares hashes without a second load; a power of two long, at most an
/// eighth full up to [`SPARSE_SLOTS`] slots, so that most lookups take one
/// probe and their branch is predicted, and half full past that), and each
/// index's hash. Index `i` stands for value `i` of the
/// value node (every value there is a distinct dictionary entry), so the
/// indexes are `0..hashes.len()`, below 2^31 (a batch's rows).
#[derive(Debug, Default)]
pub(crate) struct FlatTable {
    slots: Vec<u64>,
    hashes: Vec<u64>,
}

/// The high half of a hash, as a slot of [`FlatTable`] keeps it.
const TAG: u64 = !0 << 32;

/// Slots of a [`FlatTable`] below which it is kept an eighth full.
const SPARSE_SLOTS: usize = 4096;

impl FlatTable {
    /// Forgets every index, keeping the capacity.
    pub fn clear(&mut self) {
        self.slots.fill(0);
        self.hashes.clear();
    }

    /// The index of `hash` for which `eq` holds, if any.
    #[inline(always)]
    pub fn find(&self, hash: u64, mut eq: impl FnMut(usize) -> bool) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            let index = (slot as u32 - 1) as usize;
            if (slot ^ hash) & TAG == 0 && eq(index) {
                return Some(index);
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds the next index (`len()`), of a value with `hash`.
    pub fn push(&mut self, hash: u64) {
        let index = self.hashes.len();
        self.hashes.push(hash);
        // An eighth full while the slots fit in 32 KiB; half full past that,
        // where a large dictionary's lookups miss the cache anyway.
        let fill = if self.slots.len() < SPARSE_SLOTS { 8 } else { 2 };
        if (index + 1) * fill > self.slots.len() {
            let len = (self.slots.len() * 2).max(256);
            self.slots.clear();
            self.slots.resize(len, 0);
            for i in 0..=index {
                self.place(i);
            }
        } else {
            self.place(index);
        }
    }

    fn place(&mut self, index: usize) {
        let mask = self.slots.len() - 1;
        let hash = self.hashes[index];
        let mut at = hash as usize & mask;
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        debug_assert!(index < 1 << 31, "a batch's rows");
        self.slots[at] = (hash & TAG) | (index as u64 + 1);
    }

    /// Indexes in the table.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Keeps indexes `0..len` only.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.hashes.len() {
            return;
        }
        self.hashes.truncate(len);
        self.slots.fill(0);
        for i in 0..len {
            self.place(i);
        }
    }
}

/// Whether two flat values are equal (short ones without a `memcmp` call).
#[inline(always)]
pub(crate) fn same_value(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let n = a.len();
            if n != b.len() {
                return false;
            }
            match n {
                0 => true,
                1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
                4..=7 => read4(a, 0) == read4(b, 0) && read4(a, n - 4) == read4(b, n - 4),
                8..=16 => read8(a, 0) == read8(b, 0) && read8(a, n - 8) == read8(b, n - 8),
                _ => a == b,
            }
        }
        (None, None) => true,
        _ => false,
    }
}

/// Appends a key or run end `value` of `width` bytes (1, 2, 4 or 8), in the
/// buffer's native byte order as Arrow lays it out.
#[inline(always)]
pub(crate) fn push_index(keys: &mut Slot, width: usize, value: usize) {
    match width {
        1 => push_value(&mut keys.buf, value as u8),
        2 => push_value(&mut keys.buf, value as u16),
        4 => push_value(&mut keys.buf, value as u32),
        _ => push_value(&mut keys.buf, value as u64),
    }
}

/// Sets the last run end (of `width` bytes: 2, 4 or 8) to `end`.
#[inline(always)]
pub(crate) fn set_last_run_end(run_ends: &mut Slot, width: usize, end: usize) {
    let s = run_ends.buf.as_slice_mut();
    let at = s.len() - width;
    match width {
        2 => s[at..].copy_from_slice(&(end as u16).to_ne_bytes()),
        4 => s[at..].copy_from_slice(&(end as u32).to_ne_bytes()),
        _ => s[at..].copy_from_slice(&(end as u64).to_ne_bytes()),
    }
}

/// The largest dictionary index the key type of `dt` holds.
pub(crate) fn max_key(dt: &DataType) -> usize {
    match dt {
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => i8::MAX as usize,
            DataType::UInt8 => u8::MAX as usize,
            DataType::Int16 => i16::MAX as usize,
            DataType::UInt16 => u16::MAX as usize,
            DataType::Int32 => i32::MAX as usize,
            DataType::UInt32 => u32::MAX as usize,
            _ => i64::MAX as usize,
        },
        DataType::RunEndEncoded(run_ends, _) => match run_ends.data_type() {
            DataType::Int16 => i16::MAX as usize,
            DataType::Int32 => i32::MAX as usize,
            _ => i64::MAX as usize,
        },
        _ => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::encoded::FlatTable;

    /// Hashes that share their high half, their low half (where a probe
    /// starts), both, or neither: every index is found by its own hash and
    /// value, never by another's; past a truncation or a clear only the
    /// kept ones are; the table grows through several sizes.
    #[test]
    fn every_index_is_found_by_its_hash_and_value_only() {
        let hash = |i: u64| match i % 4 {
            0 => i << 40 | 7,               // the same start, distinct tags
            1 => 0xABCD_u64 << 32 | i << 8, // the same tag, distinct starts
            2 => 0x5555_5555_5555_5555,     // the same hash
            _ => i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        };
        let mut t = FlatTable::default();
        for n in [1usize, 40, 700, 3000] {
            t.clear();
            for i in 0..n {
                assert_eq!(t.find(hash(i as u64), |j| j == i), None, "{i} before it is added");
                t.push(hash(i as u64));
            }
            assert_eq!(t.len(), n);
            for i in 0..n {
                assert_eq!(t.find(hash(i as u64), |j| j == i), Some(i), "{i} of {n}");
                // The same hash with another value is not index i.
                assert_eq!(t.find(hash(i as u64), |j| j == i + n), None);
            }
            t.truncate(n / 2);
            for i in 0..n {
                let want = (i < n / 2).then_some(i);
                assert_eq!(t.find(hash(i as u64), |j| j == i), want, "{i} after truncating {n} to {}", n / 2);
            }
        }
    }
}
