//! The direct gather of fixed-width and boolean columns: each column's
//! values are read from the records straight into the column's own value
//! buffer (`ArrowWriter::append_in_place`), zeros under nulls written in the
//! same pass, and the validity bits built 8 records at a time into a byte
//! from the null marks. For the native fixed widths the mark bytes of the
//! records are gathered first, once per byte a layout marks nulls in
//! (`gather_marks`); 8 records' validity byte is then a few word operations
//! on 8 mark bytes, 8 valid values are copied as they are, and the values of
//! a byte with nulls are ANDed with that byte's row masks (no branch per
//! record, which would mispredict on random nulls).

use super::check::{decimal_value, read, var_bytes};
use super::types::{Class, ColumnLayout, Encoding, NullMark};
use crate::buffer::masks::{MASK16, MASK32, MASK64, MASK8};
use crate::error::Result;
use crate::writer::in_place::{BitsOut, ValuesOut, VarOut};
use crate::ArrowWriter;

/// Writes whole bytes of bits into a [`BitsOut`], byte `j` of the input
/// being bits `at + 8j ..` of the output.
struct ByteSink<'a> {
    bytes: &'a mut [u8],
    base: usize,
    shift: u32,
}

impl<'a> ByteSink<'a> {
    fn new(out: BitsOut<'a>) -> Self {
        ByteSink { bytes: out.bytes, base: out.at / 8, shift: (out.at % 8) as u32 }
    }

    /// ORs byte `j` of bits in (the bits it covers are zero, those past the
    /// append's `count` must be zero in `b`).
    #[inline(always)]
    fn put(&mut self, j: usize, b: u8) {
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

/// Calls `put(i, record, valid)` for records `0..k` and writes their
/// validity bits (when `validity` is given) 8 records a byte. `null` is how the column
/// marks its nulls; `validity` is None for a column that is not nullable,
/// whose records were checked to hold no null.
///
/// # Safety
/// Every record holds the null mark's byte.
#[inline(always)]
unsafe fn for_each_record(
    k: usize,
    rec: impl Fn(usize) -> (*const u8, usize),
    null: NullMark,
    validity: Option<BitsOut<'_>>,
    mut put: impl FnMut(usize, (*const u8, usize), bool),
) {
    let Some(validity) = validity else {
        for i in 0..k {
            put(i, rec(i), true);
        }
        return;
    };
    let mut sink = ByteSink::new(validity);
    // The loop over the records, instantiated once per kind of mark.
    macro_rules! marked {
        ($is_null:expr) => {{
            let is_null = $is_null;
            let mut record = |i: usize| {
                let r = rec(i);
                let valid = !is_null(r.0);
                put(i, r, valid);
                valid as u8
            };
            // Whole bytes (8 records, unrolled), then the last part byte.
            for c in 0..k / 8 {
                let mut b = 0u8;
                for j in 0..8 {
                    b |= record(c * 8 + j) << j;
                }
                sink.put(c, b);
            }
            if k % 8 != 0 {
                let c = k / 8;
                let mut b = 0u8;
                for j in 0..k % 8 {
                    b |= record(c * 8 + j) << j;
                }
                sink.put(c, b);
            }
        }};
    }
    match null {
        NullMark::Never => {
            for i in 0..k {
                put(i, rec(i), true);
            }
            for c in 0..k.div_ceil(8) {
                let left = k - c * 8;
                sink.put(c, if left >= 8 { 0xFF } else { (1u8 << left) - 1 });
            }
        }
        NullMark::Bit { at, bit } => {
            let (at, shift) = (at + bit / 8, bit % 8);
            // SAFETY: the mark's byte is inside the record.
            marked!(|p: *const u8| unsafe { (*p.add(at) >> shift) & 1 == 1 })
        }
        // SAFETY: the mark's byte is inside the record.
        NullMark::Byte { at } => marked!(|p: *const u8| unsafe { *p.add(at) != 0 }),
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

/// Gathers the `$t` value at byte `at` of each of records `0..k` into
/// `dst`, 8 records at a time: validity byte from the records' mark bytes
/// (`marks`), the 8 values copied as they are when all 8 are valid, ANDed
/// with the masks of that byte (`$mask(b, j)`: all ones or zero) when not,
/// and the byte written to `validity`. Without `marks` the column is never
/// null in the records (all bits set); without `validity` it is not
/// nullable (records checked to hold no null) and only the values are copied.
macro_rules! gather_fixed {
    ($t:ty, $mask:expr, $dst:expr, $rec:expr, $at:expr, $k:expr, $null:expr, $marks:expr, $validity:expr) => {{
        let (dst, rec, at, k, null) = ($dst.cast::<$t>(), $rec, $at, $k, $null);
        let value = |i: usize| <$t>::from_le_bytes(read(rec(i).0, at));
        let mask = $mask;
        match ($validity, $marks) {
            (Some(validity), Some(marks)) => {
                let marks: &[u8] = marks;
                let mut sink = ByteSink::new(validity);
                let chunks = k / 8;
                for c in 0..chunks {
                    let i0 = c * 8;
                    let m = u64::from_le_bytes(marks[i0..i0 + 8].try_into().expect("8 bytes"));
                    let b = valid_byte(m, null);
                    if b == 0xFF {
                        for j in 0..8 {
                            dst.add(i0 + j).write_unaligned(value(i0 + j));
                        }
                    } else {
                        for j in 0..8 {
                            dst.add(i0 + j).write_unaligned(value(i0 + j) & mask(b, j));
                        }
                    }
                    sink.put(c, b);
                }
                let (i0, left) = (chunks * 8, k % 8);
                if left != 0 {
                    let mut m = [0u8; 8];
                    m[..left].copy_from_slice(&marks[i0..k]);
                    let b = valid_byte(u64::from_le_bytes(m), null) & ((1u8 << left) - 1);
                    for j in 0..left {
                        dst.add(i0 + j).write_unaligned(value(i0 + j) & mask(b, j));
                    }
                    sink.put(chunks, b);
                }
            }
            (validity, _) => {
                for i in 0..k {
                    dst.add(i).write_unaligned(value(i));
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
    }};
}

/// Gathers column `col` (fixed-width or boolean) of records `0..k`, all
/// checked good, into top-level column `node` of `w`.
///
/// # Safety
/// The records hold what the layout reads at fixed offsets (the size check
/// against `min_record_size`), and were checked good (`check`).
pub(super) unsafe fn write_fixed(
    w: &mut ArrowWriter,
    call: &str,
    node: usize,
    col: &ColumnLayout,
    rec: impl Fn(usize) -> (*const u8, usize),
    k: usize,
    marks: Option<&[u8]>,
) -> Result<()> {
    let (class, encoding, null) = (col.class, col.encoding, col.null);
    let fill = |values: ValuesOut<'_>, validity: Option<BitsOut<'_>>| {
        match (values, class, encoding) {
            // SAFETY: the value byte is inside the record, as are the marks.
            (ValuesOut::Bits(out), Class::Bool, Encoding::Fixed { at }) => unsafe {
                let mut sink = ByteSink::new(out);
                let mut b = 0u8;
                let put = |i: usize, (p, _): (*const u8, usize), valid: bool| {
                    b |= ((valid & (*p.add(at) != 0)) as u8) << (i % 8);
                    if i % 8 == 7 || i + 1 == k {
                        sink.put(i / 8, b);
                        b = 0;
                    }
                };
                for_each_record(k, rec, null, validity, put);
            },
            // SAFETY: the value is inside the record; `ptr` has room for
            // `k` values of `width` bytes, each written once.
            (ValuesOut::Fixed { ptr, width }, Class::Fixed { .. }, Encoding::Fixed { at }) => unsafe {
                let m = marks;
                match width {
                    1 => gather_fixed!(u8, |b: u8, j| MASK8[b as usize][j], ptr, rec, at, k, null, m, validity),
                    2 => gather_fixed!(u16, |b: u8, j| MASK16[b as usize][j], ptr, rec, at, k, null, m, validity),
                    4 => gather_fixed!(u32, |b: u8, j| MASK32[b as usize][j], ptr, rec, at, k, null, m, validity),
                    8 => gather_fixed!(u64, |b: u8, j| MASK64[b as usize][j], ptr, rec, at, k, null, m, validity),
                    16 => {
                        let mask = |b: u8, j| MASK64[b as usize][j] as i64 as i128 as u128;
                        gather_fixed!(u128, mask, ptr, rec, at, k, null, m, validity)
                    }
                    _ => {
                        let put = |i: usize, (p, _): (*const u8, usize), valid: bool| {
                            let dst = ptr.add(i * width);
                            if valid {
                                std::ptr::copy_nonoverlapping(p.add(at), dst, width);
                            } else {
                                std::ptr::write_bytes(dst, 0, width);
                            }
                        };
                        for_each_record(k, rec, null, validity, put)
                    }
                }
            },
            // Decimals from an integer or big-endian bytes. SAFETY: the
            // fields are inside the record, the value checked good; `ptr`
            // as above.
            (ValuesOut::Fixed { ptr, width }, Class::Fixed { .. }, encoding) => unsafe {
                let mut le = [0u8; 32];
                let put = |i: usize, (p, size): (*const u8, usize), valid: bool| {
                    let dst = ptr.add(i * width);
                    if valid && decimal_value(encoding, p, size, width, &mut le) {
                        std::ptr::copy_nonoverlapping(le.as_ptr(), dst, width);
                    } else {
                        std::ptr::write_bytes(dst, 0, width);
                    }
                };
                for_each_record(k, rec, null, validity, put);
            },
            _ => unreachable!("a boolean column takes Fixed; the writer's column is the layout's"),
        }
    };
    // SAFETY: `fill` writes all `k` values (each arm: every record).
    unsafe { w.append_in_place(node, call, k, fill) }
}

/// Gathers utf8/binary column `col` of records `0..k`, all checked good
/// (but for UTF-8), into top-level column `node` of `w`: one pass pushes
/// each value's bytes and end offset onto the column's own buffers; with
/// `utf8`, one UTF-8 check over the bytes pushed, with the test that no
/// value starts with a continuation byte (a character split across two
/// values): the values are each UTF-8 exactly when both hold. Only when
/// they do not is each value checked; `Ok(Some(i))`, the column as it was,
/// when record `i` is the first bad one.
///
/// # Safety
/// As [`write_fixed`]; pointer values point to their lengths of bytes.
pub(super) unsafe fn write_var(
    w: &mut ArrowWriter,
    call: &str,
    node: usize,
    col: &ColumnLayout,
    rec: impl Fn(usize) -> (*const u8, usize),
    k: usize,
    utf8: bool,
) -> Result<Option<usize>> {
    let (encoding, null) = (col.encoding, col.null);
    let data_bytes = if w.options().memory_limit == 0 {
        0
    } else {
        // SAFETY: as below.
        (0..k).map(|i| unsafe { var_bytes(encoding, rec(i).0, rec(i).1).len() }).sum()
    };
    let fill = |out: VarOut<'_>, validity: Option<BitsOut<'_>>| {
        let VarOut { offsets, data, large } = out;
        let (start, first) = (data.len(), offsets.len());
        let width = if large { 8 } else { 4 };
        offsets.reserve(k * width);
        let mut split = false;
        let put = |_: usize, (p, size): (*const u8, usize), valid: bool| {
            if valid {
                // SAFETY: checked good: inside the record, or the caller's
                // pointer and length.
                let v = unsafe { var_bytes(encoding, p, size) };
                split |= v.first().is_some_and(|&b| (b as i8) < -64);
                data.extend_from_slice(v);
            }
            if large {
                offsets.push(data.len() as i64);
            } else {
                offsets.push(data.len() as i32);
            }
        };
        // SAFETY: the null marks are inside the records.
        unsafe { for_each_record(k, rec, null, validity, put) };
        if !utf8 || (!split && std::str::from_utf8(&data[start..]).is_ok()) {
            return None;
        }
        let end = |i: usize| {
            let b = &offsets[first + i * width..first + (i + 1) * width];
            if large {
                i64::from_le_bytes(b.try_into().expect("8 bytes")) as usize
            } else {
                i32::from_le_bytes(b.try_into().expect("4 bytes")) as usize
            }
        };
        let mut from = start;
        for i in 0..k {
            let to = end(i);
            if std::str::from_utf8(&data[from..to]).is_err() {
                return Some(i);
            }
            from = to;
        }
        unreachable!("a value that is not UTF-8")
    };
    w.append_var_in_place(node, call, k, data_bytes, fill)
}
