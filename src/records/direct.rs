//! The direct gather of fixed-width and boolean columns: each column's
//! values are read from the records straight into the column's own value
//! buffer (`ArrowWriter::append_in_place`), zeros under nulls written in the
//! same pass (the value ANDed with a mask, no branch per record), and the
//! validity bits built 8 records at a time into a byte from the null marks.

use super::check::{decimal_value, read, var_bytes};
use super::types::{Class, ColumnLayout, Encoding, NullMark};
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

/// All ones for a valid value, zero for a null, as an AND mask: passed
/// through an `asm!` block whose template is only a comment (x86_64,
/// aarch64), so that the compiler
/// cannot turn `value & mask` back into a branch per record (which
/// mispredicts on random nulls).
#[inline(always)]
fn mask(valid: bool) -> u128 {
    #[allow(unused_mut)]
    let mut x = valid as u64;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: a template of only a comment: `x` goes in and out of a register unchanged.
    unsafe {
        std::arch::asm!("/* {0} */", inlateout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x.wrapping_neg() as i64 as i128 as u128
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
                macro_rules! masked {
                    ($t:ty) => {{
                        let dst = ptr.cast::<$t>();
                        let put = |i: usize, (p, _): (*const u8, usize), valid: bool| {
                            let v = <$t>::from_le_bytes(read(p, at));
                            dst.add(i).write_unaligned(v & mask(valid) as $t);
                        };
                        for_each_record(k, rec, null, validity, put)
                    }};
                }
                match width {
                    1 => masked!(u8),
                    2 => masked!(u16),
                    4 => masked!(u32),
                    8 => masked!(u64),
                    16 => masked!(u128),
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
