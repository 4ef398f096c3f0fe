//! The pieces of the records' fixed-width gathers (src/records/direct.rs):
//! bits written a byte at a time, the null-mark bytes of records gathered
//! once, the validity byte of 8 records from their mark bytes, and the
//! gather of a native fixed-width value from every record with zeros under
//! nulls and no branch per record.

use super::types::{ColumnLayout, NullMark};
use crate::writer::in_place::BitsOut;

/// Writes whole bytes of bits into a [`BitsOut`], byte `j` of the input
/// being bits `at + 8j ..` of the output.
pub(super) struct ByteSink<'a> {
    bytes: &'a mut [u8],
    base: usize,
    shift: u32,
}

impl<'a> ByteSink<'a> {
    pub(super) fn new(out: BitsOut<'a>) -> Self {
        ByteSink { bytes: out.bytes, base: out.at / 8, shift: (out.at % 8) as u32 }
    }

    /// ORs byte `j` of bits in (the bits it covers are zero, those past the
    /// append's `count` must be zero in `b`).
    #[inline(always)]
    pub(super) fn put(&mut self, j: usize, b: u8) {
        if self.shift == 0 {
            self.bytes[self.base + j] = b;
        } else {
            self.bytes[self.base + j] |= b << self.shift;
            let high = b >> (8 - self.shift);
            if high != 0 {
                self.bytes[self.base + j + 1] |= high;
            }
        }
    }
}

/// The byte of a record that holds a column's null mark (None: never null).
pub(super) fn mark_byte(null: NullMark) -> Option<usize> {
    match null {
        NullMark::Never => None,
        NullMark::Bit { at, bit } => Some(at + bit / 8),
        NullMark::Byte { at } => Some(at),
    }
}

/// Sets the first entries of `marks` to the distinct bytes of a record that
/// `cols` mark their nulls in (a null bitmap's byte is shared by up to 8
/// columns), keeping the entries' buffers from call to call; returns how
/// many there are.
pub(super) fn mark_bytes<'a>(cols: impl Iterator<Item = &'a ColumnLayout>, marks: &mut Vec<(usize, Vec<u8>)>) -> usize {
    let mut used = 0;
    for at in cols.filter_map(|c| mark_byte(c.null)) {
        if marks[..used].iter().any(|&(a, _)| a == at) {
            continue;
        }
        if used == marks.len() {
            marks.push((at, Vec::new()));
        }
        marks[used].0 = at;
        used += 1;
    }
    used
}

/// The gathered mark bytes (of `mark_bytes`' entries) that a column whose
/// nulls are marked as `null` reads.
pub(super) fn marks_for(marks: &[(usize, Vec<u8>)], null: NullMark) -> Option<&[u8]> {
    let at = mark_byte(null)?;
    marks.iter().find(|&&(a, _)| a == at).map(|(_, bytes)| bytes.as_slice())
}

/// Byte `at` of each of records `0..k`, into `out` (its old bytes dropped):
/// the null-mark bytes every column that reads that byte shares.
///
/// # Safety
/// Every record holds byte `at`.
pub(super) unsafe fn gather_marks(rec: impl Fn(usize) -> (*const u8, usize), k: usize, at: usize, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(k);
    let dst = out.as_mut_ptr();
    for i in 0..k {
        // SAFETY: `dst` has room for `k` bytes; the byte is in the record.
        unsafe { dst.add(i).write(*rec(i).0.add(at)) };
    }
    // SAFETY: the first `k` bytes were written.
    unsafe { out.set_len(k) };
}

/// The validity byte (bit j set: record j valid) of 8 records whose mark
/// bytes are the bytes of `m`, byte j (little endian) for record j.
#[inline(always)]
fn valid_byte(m: u64, null: NullMark) -> u8 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const SEVEN: u64 = !(LOW << 7);
    let nulls = match null {
        NullMark::Never => 0,
        NullMark::Bit { bit, .. } => (m >> (bit % 8)) & LOW,
        // Bit 7 of each byte set when the byte is nonzero.
        NullMark::Byte { .. } => ((((m & SEVEN) + SEVEN) | m) >> 7) & LOW,
    };
    // Gathers bit 0 of byte j into bit 56 + j.
    !((nulls.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8)
}

/// A native fixed-width value of a record: read from its bytes, and kept
/// or zeroed by a validity bit without a branch.
trait Lane: Copy {
    /// # Safety
    /// `p` points to `size_of::<Self>()` readable bytes.
    unsafe fn load(p: *const u8) -> Self;
    /// The value when `bit` is 1, zero when it is 0.
    fn keep(self, bit: u8) -> Self;
}

macro_rules! lanes {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            #[inline(always)]
            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: per the contract; an unaligned read.
                <$t>::from_le(unsafe { p.cast::<$t>().read_unaligned() })
            }
            #[inline(always)]
            fn keep(self, bit: u8) -> Self {
                self & (bit as $t).wrapping_neg()
            }
        }
    )*};
}
lanes!(u8, u16, u32, u64, u128);

/// Gathers the `T` value at byte `at` of each of records `0..k` into
/// `dst`, 8 records at a time: the validity byte from the records' mark
/// bytes (`marks`, through `valid`), each value ANDed with all ones or zero
/// from its bit (no branch per record, which would mispredict on random
/// nulls: a plain loop of loads, masks and stores), and the byte written to
/// `validity`. Without `marks` the column is never null in the records (all
/// bits set); without `validity` it is not nullable (records checked to
/// hold no null) and only the values are copied.
///
/// # Safety
/// `dst` has room for `k` values; every record holds `T` at `at` and its
/// mark byte; `marks` holds at least `k` bytes.
#[inline(always)]
unsafe fn gather_lanes<T: Lane>(
    dst: *mut T,
    rec: impl Fn(usize) -> (*const u8, usize),
    at: usize,
    k: usize,
    marks: Option<&[u8]>,
    validity: Option<BitsOut<'_>>,
    valid: impl Fn(u64) -> u8,
) {
    let value = |i: usize| {
        // SAFETY: every record holds a `T` at `at` (the contract).
        unsafe { T::load(rec(i).0.add(at)) }
    };
    match (validity, marks) {
        (Some(validity), Some(marks)) => {
            let mut sink = ByteSink::new(validity);
            let chunks = k / 8;
            for (c, m) in marks[..chunks * 8].chunks_exact(8).enumerate() {
                let i0 = c * 8;
                let b = valid(u64::from_le_bytes(m.try_into().expect("8 bytes")));
                if b == 0xFF {
                    // All 8 valid (a branch taken as the data goes: a
                    // column without nulls always, one with many never).
                    for j in 0..8 {
                        // SAFETY: `dst` has room for `k` values (the contract).
                        unsafe { dst.add(i0 + j).write_unaligned(value(i0 + j)) };
                    }
                } else {
                    for j in 0..8 {
                        // SAFETY: `dst` has room for `k` values (the contract).
                        unsafe { dst.add(i0 + j).write_unaligned(value(i0 + j).keep((b >> j) & 1)) };
                    }
                }
                sink.put(c, b);
            }
            let (i0, left) = (chunks * 8, k % 8);
            if left != 0 {
                let mut m = [0u8; 8];
                m[..left].copy_from_slice(&marks[i0..k]);
                let b = valid(u64::from_le_bytes(m)) & ((1u8 << left) - 1);
                for j in 0..left {
                    // SAFETY: `dst` has room for `k` values (the contract).
                    unsafe { dst.add(i0 + j).write_unaligned(value(i0 + j).keep((b >> j) & 1)) };
                }
                sink.put(chunks, b);
            }
        }
        (validity, _) => {
            for i in 0..k {
                // SAFETY: `dst` has room for `k` values (the contract).
                unsafe { dst.add(i).write_unaligned(value(i)) };
            }
            if let Some(validity) = validity {
                let mut sink = ByteSink::new(validity);
                for c in 0..k.div_ceil(8) {
                    let left = k - c * 8;
                    sink.put(c, if left >= 8 { 0xFF } else { (1u8 << left) - 1 });
                }
            }
        }
    }
}

/// `gather_lanes` at the value width `width` (1, 2, 4, 8 or 16 bytes).
///
/// # Safety
/// As [`gather_lanes`], `dst` with room for `k` values of `width` bytes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gather_width(
    width: usize,
    dst: *mut u8,
    rec: impl Fn(usize) -> (*const u8, usize),
    at: usize,
    k: usize,
    marks: Option<&[u8]>,
    validity: Option<BitsOut<'_>>,
    valid: impl Fn(u64) -> u8,
) {
    // SAFETY: per the contract.
    unsafe {
        match width {
            1 => gather_lanes(dst, rec, at, k, marks, validity, valid),
            2 => gather_lanes(dst.cast::<u16>(), rec, at, k, marks, validity, valid),
            4 => gather_lanes(dst.cast::<u32>(), rec, at, k, marks, validity, valid),
            8 => gather_lanes(dst.cast::<u64>(), rec, at, k, marks, validity, valid),
            _ => gather_lanes(dst.cast::<u128>(), rec, at, k, marks, validity, valid),
        }
    }
}

/// `gather_width` for a column whose nulls are marked as `null`: the
/// validity byte's computation chosen once, outside the loops (one
/// instance of the loops per kind of mark).
///
/// # Safety
/// As [`gather_width`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gather_marked(
    width: usize,
    null: NullMark,
    dst: *mut u8,
    rec: impl Fn(usize) -> (*const u8, usize),
    at: usize,
    k: usize,
    marks: Option<&[u8]>,
    validity: Option<BitsOut<'_>>,
) {
    // SAFETY: per the contract.
    unsafe {
        match null {
            NullMark::Never => gather_width(width, dst, rec, at, k, marks, validity, |_| 0xFF),
            NullMark::Bit { at: a, bit } => {
                let null = NullMark::Bit { at: a, bit };
                gather_width(width, dst, rec, at, k, marks, validity, move |m| valid_byte(m, null))
            }
            NullMark::Byte { at: a } => {
                let null = NullMark::Byte { at: a };
                gather_width(width, dst, rec, at, k, marks, validity, move |m| valid_byte(m, null))
            }
        }
    }
}
