//! Row-major records through the C API (docs/records.md): a `QuiverLayout`
//! described once, then one call per batch of records.

use std::ffi::{c_int, c_void};

use crate::error::{QuiverError, Result};
use crate::ffi::boundary::{arg, arg_mut, enter, non_null};
use crate::ffi::handle::enter_writer;
use crate::ffi::handle::QuiverWriter;
use crate::records::gather::Source;
use crate::records::{Encoding, NullMark, RecordLayout, RecordsError};

/// `quiver_layout_set` encoding: the column's native little-endian value at
/// `at` (boolean: one byte, nonzero = true).
pub const QUIVER_RECORD_FIXED: i32 = 0;
/// `quiver_layout_set` encoding (decimal columns): a little-endian signed
/// integer of `at2` bytes (1, 2, 4, 8 or 16) at `at`, sign-extended.
pub const QUIVER_RECORD_INT: i32 = 1;
/// `quiver_layout_set` encoding (utf8/binary): a `const uint8_t *` at `at`
/// and a 64-bit length at `at2`.
pub const QUIVER_RECORD_PTR_LEN: i32 = 2;
/// `quiver_layout_set` encoding (utf8/binary): a uint32 offset from the
/// record's start at `at` and a uint32 length at `at2`.
pub const QUIVER_RECORD_REL_LEN: i32 = 3;
/// `quiver_layout_set` encoding (decimal columns): big-endian two's
/// complement bytes found as with `QUIVER_RECORD_REL_LEN`.
pub const QUIVER_RECORD_BIG_ENDIAN: i32 = 4;
/// `quiver_layout_set` null mark: never null.
pub const QUIVER_NULL_NEVER: i32 = 0;
/// `quiver_layout_set` null mark: bit `null_bit` of the bitmap at byte
/// `null_at` (least significant bit first; set = null).
pub const QUIVER_NULL_BIT: i32 = 1;
/// `quiver_layout_set` null mark: the byte at `null_at`, nonzero = null.
pub const QUIVER_NULL_BYTE: i32 = 2;

/// Where each top-level column of a writer's schema sits in a row-major
/// record (opaque), with the scratch buffers of the batched calls. Use one
/// layout from one thread at a time.
pub struct QuiverLayout {
    layout: RecordLayout,
}

/// Stores a new layout in `*out`.
///
/// # Safety
/// `out` is non-NULL and valid for writes.
unsafe fn give(out: *mut *mut QuiverLayout, layout: RecordLayout) {
    // SAFETY: per the contract.
    unsafe { out.write(Box::into_raw(Box::new(QuiverLayout { layout }))) };
}

/// Creates a layout for the top-level columns of `w`'s schema, none
/// described yet: describe each with `quiver_layout_set`. Errors: EINVAL
/// (NULL argument). Ownership: `w` is borrowed; on success the caller owns
/// `*out` and frees it with `quiver_layout_free`; on failure `*out` is
/// untouched.
///
/// # Safety
/// `w` is NULL or a live writer; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_layout_new(w: *const QuiverWriter, out: *mut *mut QuiverLayout) -> c_int {
    const CALL: &str = "quiver_layout_new";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer.
        let qw = unsafe { arg(CALL, "w", w)? };
        non_null(CALL, "out", out)?;
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { give(out, RecordLayout::new(qw.writer.schema())) };
        Ok(0)
    })
}

/// Creates the layout of Spark's UnsafeRow for `w`'s schema: the null
/// bitset words, then one 8-byte slot per field (docs/records.md). Errors:
/// EINVAL (NULL argument), ENOSYS (a column type the preset does not carry).
/// Ownership: as `quiver_layout_new`.
///
/// # Safety
/// `w` is NULL or a live writer; `out` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_layout_unsafe_row(w: *const QuiverWriter, out: *mut *mut QuiverLayout) -> c_int {
    const CALL: &str = "quiver_layout_unsafe_row";
    enter(CALL, || {
        // SAFETY: `w` is NULL or a live writer.
        let qw = unsafe { arg(CALL, "w", w)? };
        non_null(CALL, "out", out)?;
        let layout = RecordLayout::unsafe_row(qw.writer.schema())?;
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { give(out, layout) };
        Ok(0)
    })
}

/// Frees a layout. NULL is a no-op. Ownership: `l` is consumed.
///
/// # Safety
/// `l` is NULL or a layout from `quiver_layout_new` or
/// `quiver_layout_unsafe_row`, not freed yet and not used after this call.
#[no_mangle]
pub unsafe extern "C" fn quiver_layout_free(l: *mut QuiverLayout) {
    enter("quiver_layout_free", || {
        if !l.is_null() {
            // SAFETY: `l` came from quiver_layout_new and is freed once.
            drop(unsafe { Box::from_raw(l) });
        }
        Ok(())
    })
}

/// Describes top-level column `column` (schema order) of `l`: its value
/// `encoding` (`QUIVER_RECORD_*`, with byte offsets `at` and `at2` as each
/// constant says; `at2` unused for `QUIVER_RECORD_FIXED`) and its null mark
/// `null_kind` (`QUIVER_NULL_*`, at byte `null_at`, bit `null_bit`).
/// Errors: EINVAL (unknown column or constant, an encoding the column's
/// type does not take), ENOSYS (a type records do not cover).
/// Ownership: nothing changes hands.
///
/// # Safety
/// `l` is NULL or a live layout, used by this call alone.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn quiver_layout_set(
    l: *mut QuiverLayout,
    column: u32,
    encoding: i32,
    at: u64,
    at2: u64,
    null_kind: i32,
    null_at: u64,
    null_bit: u32,
) -> c_int {
    const CALL: &str = "quiver_layout_set";
    enter(CALL, || {
        // SAFETY: `l` is NULL or a live layout.
        let l = unsafe { arg_mut(CALL, "l", l)? };
        let offset = |v: u64| {
            usize::try_from(v)
                .ok()
                .filter(|&v| v <= u32::MAX as usize)
                .ok_or_else(|| QuiverError::invalid(format!("{CALL}: offset {v} is over 2^32 - 1")))
        };
        let (at, at2, null_at) = (offset(at)?, offset(at2)?, offset(null_at)?);
        let encoding = match encoding {
            QUIVER_RECORD_FIXED => Encoding::Fixed { at },
            QUIVER_RECORD_INT => Encoding::Int { at, width: at2 },
            QUIVER_RECORD_PTR_LEN => Encoding::PtrLen { ptr_at: at, len_at: at2 },
            QUIVER_RECORD_REL_LEN => Encoding::RelLen { offset_at: at, len_at: at2 },
            QUIVER_RECORD_BIG_ENDIAN => Encoding::BigEndian { offset_at: at, len_at: at2 },
            e => return Err(QuiverError::invalid(format!("{CALL}: unknown encoding {e}"))),
        };
        let null = match null_kind {
            QUIVER_NULL_NEVER => NullMark::Never,
            QUIVER_NULL_BIT => NullMark::Bit { at: null_at, bit: null_bit as usize },
            QUIVER_NULL_BYTE => NullMark::Byte { at: null_at },
            k => return Err(QuiverError::invalid(format!("{CALL}: unknown null mark {k}"))),
        };
        l.layout.set(column as usize, encoding, null).map_err(|e| strip(e, CALL))?;
        Ok(0)
    })
}

/// The layout's error named after the C call.
fn strip(e: QuiverError, call: &str) -> QuiverError {
    let message = e.message().strip_prefix("RecordLayout::set: ").unwrap_or(e.message()).to_string();
    QuiverError::new(e.code(), format!("{call}: {message}"))
}

/// The count through `written` (if not NULL) and the call's result.
///
/// # Safety
/// `written` is NULL or valid for writes.
unsafe fn report(r: Result<usize, RecordsError>, written: *mut i64) -> Result<()> {
    let (n, e) = match r {
        Ok(n) => (n, None),
        Err(RecordsError { written, error }) => (written, Some(error)),
    };
    if !written.is_null() {
        // SAFETY: per the contract.
        unsafe { written.write(n as i64) };
    }
    e.map_or(Ok(()), Err)
}

fn count(call: &str, n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| QuiverError::invalid(format!("{call}: n is negative ({n})")))
}

/// Writes `n` records, one every `stride` bytes from `records`, as
/// committed rows of `w`. On a bad record (a null in a non-nullable column,
/// invalid UTF-8, a decimal over its precision, a value outside its record)
/// the records before it are committed, it and the ones after change
/// nothing, and the call returns its errno (the message names the record).
/// `*written` (if `written` is not NULL) gets the number of records
/// committed: `n` on success, 0 when the call is refused as a whole. EINVAL
/// (nothing written) when a row is half written through the row path,
/// `stride` is under the layout's record size or `l` is for another schema.
/// Ownership: `records` (and the bytes its pointers point at) are borrowed
/// (copied); `l` is borrowed (its scratch buffers are reused).
///
/// # Safety
/// `w` is NULL or a live writer and `l` NULL or a live layout, each used by
/// this call alone; `records` points to `n * stride` readable bytes; every
/// pointer a `QUIVER_RECORD_PTR_LEN` value holds points to its length of
/// readable bytes (unless that length is 0); `written` is NULL or valid for
/// writes.
#[no_mangle]
pub unsafe extern "C" fn quiver_write_records(
    w: *mut QuiverWriter,
    l: *mut QuiverLayout,
    records: *const c_void,
    stride: i64,
    n: i64,
    written: *mut i64,
) -> c_int {
    const CALL: &str = "quiver_write_records";
    enter_writer(CALL, w, |x| {
        // SAFETY: `written` is NULL or valid for writes.
        unsafe { report(Ok(0), written)? };
        // SAFETY: `l` is NULL or a live layout used by this call alone.
        let l = unsafe { arg_mut(CALL, "l", l)? };
        let n = count(CALL, n)?;
        let stride =
            usize::try_from(stride).map_err(|_| QuiverError::invalid(format!("{CALL}: stride is negative")))?;
        if n > 0 {
            non_null(CALL, "records", records)?;
        }
        if n > 0 && stride < l.layout.min_record_size() {
            return Err(QuiverError::invalid(format!(
                "{CALL}: stride {stride} is under the layout's record size {}",
                l.layout.min_record_size()
            )));
        }
        let source = Source::Strided { base: records.cast(), stride, size: stride };
        // SAFETY: `records` holds `n * stride` bytes, pointers per the contract.
        let r = unsafe { l.layout.write(x, CALL, source, n) };
        // SAFETY: `written` is NULL or valid for writes.
        unsafe { report(r, written) }
    })
}

/// Writes the `n` records `records[0..n]` point at as committed rows of `w`;
/// `sizes` (NULL, or `n` sizes in bytes) bounds each record: one shorter
/// than the layout needs, or with an offset/length value outside it, is a
/// bad record. Otherwise as `quiver_write_records` (Spark UnsafeRows: the
/// row pointers and their sizes).
/// Ownership: `records`, `sizes` and the bytes they point at are borrowed
/// (copied); `l` is borrowed.
///
/// # Safety
/// `w` and `l` as in `quiver_write_records`; `records` points to `n`
/// record pointers, each to `sizes[i]` readable bytes (`sizes` NULL: to
/// the layout's record size and every offset/length value inside it);
/// `sizes` is NULL or points to `n` values; pointers of
/// `QUIVER_RECORD_PTR_LEN` values and `written` as in `quiver_write_records`.
#[no_mangle]
pub unsafe extern "C" fn quiver_write_record_ptrs(
    w: *mut QuiverWriter,
    l: *mut QuiverLayout,
    records: *const *const u8,
    sizes: *const i64,
    n: i64,
    written: *mut i64,
) -> c_int {
    const CALL: &str = "quiver_write_record_ptrs";
    enter_writer(CALL, w, |x| {
        // SAFETY: `written` is NULL or valid for writes.
        unsafe { report(Ok(0), written)? };
        // SAFETY: `l` is NULL or a live layout used by this call alone.
        let l = unsafe { arg_mut(CALL, "l", l)? };
        let n = count(CALL, n)?;
        if n == 0 {
            // SAFETY: `written` is NULL or valid for writes.
            return unsafe { report(Ok(0), written) };
        }
        non_null(CALL, "records", records)?;
        // SAFETY: `records` points to `n` pointers.
        let ptrs = unsafe { std::slice::from_raw_parts(records, n) };
        let source = if sizes.is_null() {
            Source::Ptrs { ptrs, sizes: None }
        } else {
            // SAFETY: non-NULL `sizes` points to `n` values. A negative
            // size bounds its record to nothing: a bad record.
            Source::PtrsC { ptrs, sizes: unsafe { std::slice::from_raw_parts(sizes, n) } }
        };
        // SAFETY: the records and pointers per the contract.
        let r = unsafe { l.layout.write(x, CALL, source, n) };
        // SAFETY: `written` is NULL or valid for writes.
        unsafe { report(r, written) }
    })
}
