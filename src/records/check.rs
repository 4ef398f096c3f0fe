//! The checks of the batched call: the first record whose value a column
//! refuses, and the readers of a record's fields they share with the gather.

use arrow_buffer::i256;

use super::types::{Class, ColumnLayout, Encoding, NullMark};
use crate::error::{ErrorCode, QuiverError};

/// Reads `N` bytes at `p + at`.
///
/// # Safety
/// `p + at .. p + at + N` is readable.
#[inline(always)]
pub(super) unsafe fn read<const N: usize>(p: *const u8, at: usize) -> [u8; N] {
    // SAFETY: per the contract; unaligned reads.
    unsafe { p.add(at).cast::<[u8; N]>().read_unaligned() }
}

/// Whether record `p`'s null mark says null.
///
/// # Safety
/// The mark's byte is inside the record (checked against `min_record_size`).
#[inline(always)]
pub(super) unsafe fn is_null(p: *const u8, mark: NullMark) -> bool {
    // SAFETY: per the contract.
    unsafe {
        match mark {
            NullMark::Never => false,
            NullMark::Bit { at, bit } => (*p.add(at + bit / 8) >> (bit % 8)) & 1 == 1,
            NullMark::Byte { at } => *p.add(at) != 0,
        }
    }
}

pub(super) fn bad(
    code: ErrorCode,
    call: &str,
    record: usize,
    what: &str,
    problem: impl std::fmt::Display,
) -> QuiverError {
    QuiverError::new(code, format!("{call}: record {record}: {what}: {problem}"))
}

/// The bytes of an offset/length value of record `p` (size `size`).
///
/// # Safety
/// The two u32 fields are inside the record.
pub(super) unsafe fn rel_bytes<'a>(p: *const u8, size: usize, offset_at: usize, len_at: usize) -> Option<&'a [u8]> {
    // SAFETY: per the contract.
    let (off, len) = unsafe { (u32::from_le_bytes(read(p, offset_at)), u32::from_le_bytes(read(p, len_at))) };
    let (off, len) = (off as usize, len as usize);
    if off.checked_add(len).is_none_or(|end| end > size) {
        return None;
    }
    // SAFETY: inside the record.
    Some(unsafe { std::slice::from_raw_parts(p.add(off), len) })
}

/// The first of records `0..k` whose value in column `c` is refused, and
/// why: a null in a non-nullable column, an offset/length outside the
/// record, a NULL pointer with a length, invalid UTF-8 (when the writer
/// checks it), a decimal over its precision (likewise) or too long.
pub(super) fn check(
    col: &ColumnLayout,
    c: usize,
    call: &str,
    src: impl Fn(usize) -> (*const u8, usize),
    k: usize,
    opts: &crate::WriterOptions,
    schema: &arrow_schema::Schema,
) -> Option<(usize, QuiverError)> {
    let what = || format!("column {c} ({})", schema.field(c).name());
    let decimal_limit = match col.class {
        Class::Fixed { precision: Some(p), .. } if opts.check_decimal_precision => {
            Some(i256::from_i128(10).wrapping_pow(p as u32))
        }
        _ => None,
    };
    let needs_values = decimal_limit.is_some()
        || matches!(col.encoding, Encoding::PtrLen { .. } | Encoding::RelLen { .. } | Encoding::BigEndian { .. });
    if !needs_values && (col.nullable || col.null == NullMark::Never) {
        return None; // nothing to refuse
    }
    let mut total = 0usize;
    for i in 0..k {
        let (p, size) = src(i);
        // SAFETY: the record holds `min_record_size` bytes (checked).
        if unsafe { is_null(p, col.null) } {
            if !col.nullable {
                return Some((
                    i,
                    bad(ErrorCode::InvalidArgument, call, i, &what(), "null in a column that is not nullable"),
                ));
            }
            continue;
        }
        if !needs_values {
            continue;
        }
        let refused = |code, problem: &str| Some((i, bad(code, call, i, &what(), problem)));
        match (col.encoding, col.class) {
            (Encoding::PtrLen { ptr_at, len_at }, Class::Var { utf8, .. }) => {
                // SAFETY: both fields are inside the record (min size).
                let (ptr, len) = unsafe { (read::<8>(p, ptr_at), u64::from_le_bytes(read(p, len_at))) };
                let ptr = usize::from_le_bytes(ptr) as *const u8;
                if len > isize::MAX as u64 {
                    return refused(ErrorCode::InvalidArgument, "length over isize::MAX (negative?)");
                }
                if ptr.is_null() && len > 0 {
                    return refused(ErrorCode::InvalidArgument, "NULL pointer with a nonzero length");
                }
                total += len as usize;
                if utf8 && opts.validate_utf8 && len > 0 {
                    // SAFETY: the caller's pointer holds `len` bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
                    if std::str::from_utf8(bytes).is_err() {
                        return refused(ErrorCode::InvalidArgument, "invalid UTF-8");
                    }
                }
            }
            (Encoding::RelLen { offset_at, len_at }, Class::Var { utf8, .. }) => {
                // SAFETY: the fields are inside the record (min size).
                let Some(bytes) = (unsafe { rel_bytes(p, size, offset_at, len_at) }) else {
                    return refused(ErrorCode::InvalidArgument, "offset and length reach past the record");
                };
                if utf8 && opts.validate_utf8 && std::str::from_utf8(bytes).is_err() {
                    return refused(ErrorCode::InvalidArgument, "invalid UTF-8");
                }
                total += bytes.len();
            }
            (_, Class::Fixed { width, .. }) => {
                let mut le = [0u8; 32];
                // SAFETY: the fields are inside the record (min size).
                if unsafe { !decimal_value(col.encoding, p, size, width, &mut le) } {
                    return refused(ErrorCode::OutOfRange, "offset and length reach past the record, or too long");
                }
                if let Some(limit) = decimal_limit {
                    let x = i256::from_le_bytes(le);
                    if x >= limit || x <= limit.wrapping_neg() {
                        return refused(ErrorCode::OutOfRange, "does not fit the decimal's precision");
                    }
                }
            }
            _ => {}
        }
        if matches!(col.class, Class::Var { large: false, .. }) && total > i32::MAX as usize {
            return Some((
                i,
                bad(ErrorCode::Overflow, call, i, &what(), "the batch's values pass 2 GiB (32-bit offsets)"),
            ));
        }
    }
    None
}

/// The decimal value of record `p` as 32 little-endian bytes (sign
/// extended); the low `width` bytes are the column's value. False when a
/// big-endian value lies outside the record or is longer than `width`.
///
/// # Safety
/// The fixed-offset fields are inside the record.
#[inline(always)]
pub(super) unsafe fn decimal_value(
    encoding: Encoding,
    p: *const u8,
    size: usize,
    width: usize,
    le: &mut [u8; 32],
) -> bool {
    let (src, big): (&[u8], bool) = match encoding {
        // SAFETY: inside the record.
        Encoding::Fixed { at } => (unsafe { std::slice::from_raw_parts(p.add(at), width) }, false),
        // SAFETY: inside the record.
        Encoding::Int { at, width: from } => (unsafe { std::slice::from_raw_parts(p.add(at), from) }, false),
        Encoding::BigEndian { offset_at, len_at } => {
            // SAFETY: inside the record.
            match unsafe { rel_bytes(p, size, offset_at, len_at) } {
                Some(b) if b.len() <= width => (b, true),
                _ => return false,
            }
        }
        _ => unreachable!("decimal encodings"),
    };
    let negative = match (src.is_empty(), big) {
        (true, _) => false,
        (false, false) => src[src.len() - 1] & 0x80 != 0,
        (false, true) => src[0] & 0x80 != 0,
    };
    le.fill(if negative { 0xFF } else { 0 });
    if big {
        for (d, s) in le.iter_mut().zip(src.iter().rev()) {
            *d = *s;
        }
    } else {
        le[..src.len()].copy_from_slice(src);
    }
    true
}

/// The bytes of a var-width value of a good record.
///
/// # Safety
/// The record was checked good (see `check`).
pub(super) unsafe fn var_bytes<'a>(encoding: Encoding, p: *const u8, size: usize) -> &'a [u8] {
    // SAFETY: per the contract.
    unsafe {
        match encoding {
            Encoding::PtrLen { ptr_at, len_at } => {
                let ptr = usize::from_le_bytes(read::<8>(p, ptr_at)) as *const u8;
                let len = u64::from_le_bytes(read(p, len_at)) as usize;
                if len == 0 {
                    &[]
                } else {
                    std::slice::from_raw_parts(ptr, len)
                }
            }
            Encoding::RelLen { offset_at, len_at } => rel_bytes(p, size, offset_at, len_at).unwrap_or(&[]),
            _ => unreachable!("var encodings"),
        }
    }
}
