//! The row path of the C API: typed appends, begin/end of nested values,
//! committing or dropping a row.

use std::ffi::c_int;

use crate::error::{QuiverError, Result};
use crate::ffi::boundary::non_null;
use crate::ffi::handle::QuiverWriter;
use crate::ffi::handle::{enter_writer, enter_writer_fast};
use crate::node::Input;
use crate::writer::ArrowWriter;

/// Defines the C appends of native numbers: for each `fn <name>(v: <type>)
/// => <Input variant>, <ArrowWriter method>;`, an `extern "C"` function that
/// tries the writer's fast path in place (`try_native_in_place`: a
/// top-level column, struct field or list item with room in its buffers)
/// inlined, else the method out of line, inside the writer's boundary. The
/// inlined part calls nothing, so the function needs almost no stack frame.
///
/// cbindgen does not expand macros: build.rs expands the table of the one
/// invocation below into plain declarations (the `///` lines, then the
/// function) for the header, so an entry keeps exactly this form, and the
/// `# Safety` lines the macro adds are the ones build.rs adds.
macro_rules! c_numeric_appends {
    ($($(#[doc = $doc:literal])* fn $name:ident(v: $ty:ty) => $input:ident, $method:ident;)*) => {$(
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// `w` is NULL or a live writer, used by this call alone.
        #[no_mangle]
        pub unsafe extern "C" fn $name(w: *mut QuiverWriter, node: u32, v: $ty) -> c_int {
            enter_writer_fast(
                stringify!($name),
                w,
                |x| x.try_native_in_place(node as usize, Input::$input, v),
                move |x| x.$method(node as usize, v),
            )
        }
    )*};
}

/// Appends a null to `node` (a null struct or fixed-size list gets null,
/// zeroed children). EINVAL for a non-nullable node.
/// Ownership: nothing changes hands (same for every append below).
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_null(w: *mut QuiverWriter, node: u32) -> c_int {
    enter_writer_fast("quiver_append_null", w, |x| x.try_null(node as usize), move |x| x.append_null(node as usize))
}

/// Appends a boolean.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_bool(w: *mut QuiverWriter, node: u32, v: bool) -> c_int {
    enter_writer("quiver_append_bool", w, |x| x.append_bool(node as usize, v))
}

c_numeric_appends! {
    /// Appends an int8.
    fn quiver_append_i8(v: i8) => I8, append_i8;
    /// Appends an int16.
    fn quiver_append_i16(v: i16) => I16, append_i16;
    /// Appends an int32 (also date32, time32, interval year-month).
    fn quiver_append_i32(v: i32) => I32, append_i32;
    /// Appends an int64 (also date64, time64, timestamp, duration, and a
    /// decimal's unscaled value).
    fn quiver_append_i64(v: i64) => I64, append_i64;
    /// Appends a uint8.
    fn quiver_append_u8(v: u8) => U8, append_u8;
    /// Appends a uint16 (also a float16's raw bits).
    fn quiver_append_u16(v: u16) => U16, append_u16;
    /// Appends a uint32.
    fn quiver_append_u32(v: u32) => U32, append_u32;
    /// Appends a uint64.
    fn quiver_append_u64(v: u64) => U64, append_u64;
    /// Appends a float32 (also into a float16 column, rounded to nearest).
    fn quiver_append_f32(v: f32) => F32, append_f32;
    /// Appends a float64.
    fn quiver_append_f64(v: f64) => F64, append_f64;
}

/// Appends `len` bytes to a utf8, binary, large form, or fixed-size binary
/// (exactly its width) node, or the raw bytes of a day-time (8) or
/// month-day-nano (16) interval. EINVAL for invalid UTF-8 (when checked) or a
/// wrong width; EOVERFLOW when a 32-bit-offset column would pass 2^31-1 bytes.
/// Ownership: `data` is borrowed (copied); it may be NULL when `len` is 0.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone; `data` is NULL or
/// points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_bytes(w: *mut QuiverWriter, node: u32, data: *const u8, len: usize) -> c_int {
    const CALL: &str = "quiver_append_bytes";
    let fast = |x: &mut ArrowWriter| {
        // The checks of borrowed_bytes; anything else takes the full path.
        if len > isize::MAX as usize || (len > 0 && data.is_null()) {
            return false;
        }
        // SAFETY: `data` points to `len` readable bytes (or len is 0).
        let bytes = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(data, len) } };
        x.try_bytes(node as usize, bytes, false)
    };
    enter_writer_fast(CALL, w, fast, move |x| {
        // SAFETY: `data` points to `len` readable bytes (or len is 0).
        let bytes = unsafe { borrowed_bytes(data, len, CALL)? };
        x.append_bytes(node as usize, bytes)
    })
}

/// Appends a decimal's unscaled value: `len` (1..=32) little-endian two's
/// complement bytes, sign-extended. ERANGE when over the precision.
/// Ownership: `le_bytes` is borrowed (copied).
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone; `le_bytes` is NULL
/// or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_decimal(
    w: *mut QuiverWriter,
    node: u32,
    le_bytes: *const u8,
    len: usize,
) -> c_int {
    const CALL: &str = "quiver_append_decimal";
    let fast = |x: &mut ArrowWriter| {
        if len != 16 || le_bytes.is_null() {
            return false;
        }
        // SAFETY: `le_bytes` points to `len` (16) readable bytes.
        let v = i128::from_le_bytes(unsafe { le_bytes.cast::<[u8; 16]>().read_unaligned() });
        x.try_decimal(node as usize, v)
    };
    enter_writer_fast(CALL, w, fast, move |x| {
        non_null(CALL, "le_bytes", le_bytes)?;
        // SAFETY: `le_bytes` points to `len` readable bytes.
        let bytes = unsafe { borrowed_bytes(le_bytes, len, CALL)? };
        x.append_decimal_bytes(node as usize, bytes)
    })
}

/// The caller's `len` bytes at `data` (none when `len` is 0, whatever `data`).
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn borrowed_bytes<'a>(data: *const u8, len: usize, call: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(QuiverError::invalid(format!("{call}: data is NULL with len {len}")));
    }
    if len > isize::MAX as usize {
        return Err(QuiverError::invalid(format!("{call}: len {len} is too large")));
    }
    // SAFETY: per the contract; `data` is non-NULL and `len` fits an isize.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Starts one list, large list, fixed-size list, struct or map value of
/// `node`; its children are appended next, then `quiver_end(w, node)`.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_begin(w: *mut QuiverWriter, node: u32) -> c_int {
    enter_writer_fast("quiver_begin", w, |x| x.try_begin(node as usize), move |x| x.begin(node as usize))
}

/// Ends the value begun on `node` (the innermost open node). EINVAL when a
/// struct child or fixed-size list value is missing; the value stays open.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_end(w: *mut QuiverWriter, node: u32) -> c_int {
    enter_writer_fast("quiver_end", w, |x| x.try_end(node as usize), move |x| x.end(node as usize))
}

/// Commits the row: every top-level column must have one value. EINVAL
/// (naming the missing column) leaves the row open.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_end_row(w: *mut QuiverWriter) -> c_int {
    enter_writer_fast("quiver_end_row", w, |x| x.try_end_row(), |x| x.end_row())
}

/// Drops the uncommitted part of the row; committed rows stay intact.
/// Ownership: nothing changes hands.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone.
#[no_mangle]
pub unsafe extern "C" fn quiver_abort_row(w: *mut QuiverWriter) -> c_int {
    enter_writer("quiver_abort_row", w, |x| x.abort_row())
}

/// `quiver_append_slots` kind: a boolean (the slot's low byte, nonzero = true).
pub const QUIVER_SLOT_BOOL: u8 = 0;
/// `quiver_append_slots` kind: an int8 (the slot's low byte).
pub const QUIVER_SLOT_I8: u8 = 1;
/// `quiver_append_slots` kind: an int16 (the slot's low 2 bytes).
pub const QUIVER_SLOT_I16: u8 = 2;
/// `quiver_append_slots` kind: an int32 (the slot's low 4 bytes).
pub const QUIVER_SLOT_I32: u8 = 3;
/// `quiver_append_slots` kind: an int64 (the 8 bytes).
pub const QUIVER_SLOT_I64: u8 = 4;
/// `quiver_append_slots` kind: a uint8 (the slot's low byte).
pub const QUIVER_SLOT_U8: u8 = 5;
/// `quiver_append_slots` kind: a uint16 (the slot's low 2 bytes).
pub const QUIVER_SLOT_U16: u8 = 6;
/// `quiver_append_slots` kind: a uint32 (the slot's low 4 bytes).
pub const QUIVER_SLOT_U32: u8 = 7;
/// `quiver_append_slots` kind: a uint64 (the 8 bytes).
pub const QUIVER_SLOT_U64: u8 = 8;
/// `quiver_append_slots` kind: a float32 (its bits in the slot's low 4 bytes).
pub const QUIVER_SLOT_F32: u8 = 9;
/// `quiver_append_slots` kind: a float64 (its bits, the 8 bytes).
pub const QUIVER_SLOT_F64: u8 = 10;

/// Appends `count` (0..=64) values in one call: value `k` goes to node
/// `node + k`, as `quiver_append_<kinds[k]>(w, node + k, ...)` would append
/// it (`kinds[k]` one of `QUIVER_SLOT_*`, the value in the low bytes of the
/// 8-byte `slots[k]`), or as `quiver_append_null(w, node + k)` when bit `k`
/// of `nulls` is set (then `kinds[k]` and `slots[k]` are not read); then,
/// when `end_row` is true, `quiver_end_row(w)`. Each value gets the checks
/// and the message of its own append (node kind, position in the open row);
/// the call stops at the first one that fails and returns its code, leaving
/// the row as that sequence of calls would: the values before it appended,
/// the row open. EINVAL for an unknown kind or `count` over 64.
/// Ownership: `kinds` and `slots` are borrowed for the call; either may be
/// NULL when `count` is 0.
///
/// # Safety
/// `w` is NULL or a live writer, used by this call alone; `kinds` and
/// `slots` are NULL or point to `count` readable `uint8_t` / `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_slots(
    w: *mut QuiverWriter,
    node: u32,
    count: u32,
    kinds: *const u8,
    slots: *const u64,
    nulls: u64,
    end_row: bool,
) -> c_int {
    const CALL: &str = "quiver_append_slots";
    // A whole row on the plan for its kinds, inside the boundary; anything
    // else (the checks of the arguments included) out of line.
    let fast = move |x: &mut ArrowWriter| {
        let n = count as usize;
        if count == 0 || count > 64 || kinds.is_null() || slots.is_null() || !end_row {
            return false;
        }
        let nulls = nulls & u64::MAX.checked_shl(count).map_or(u64::MAX, |high| !high);
        // SAFETY: both point to `count` readable elements, per the contract.
        let (kinds, slots) = unsafe { (std::slice::from_raw_parts(kinds, n), std::slice::from_raw_parts(slots, n)) };
        x.try_slots_row(node as usize, kinds, slots, nulls, slot_input)
    };
    enter_writer_fast(CALL, w, fast, move |x| {
        // SAFETY: per the contract.
        unsafe { append_slots(x, node, count, kinds, slots, nulls, end_row) }
    })
}

/// The body of `quiver_append_slots`, out of line: its arguments stay in
/// registers instead of being copied into the boundary's closure.
///
/// # Safety
/// As `quiver_append_slots`.
#[inline(never)]
unsafe fn append_slots(
    x: &mut ArrowWriter,
    node: u32,
    count: u32,
    kinds: *const u8,
    slots: *const u64,
    nulls: u64,
    end_row: bool,
) -> Result<()> {
    const CALL: &str = "quiver_append_slots";
    if count > 64 {
        return Err(QuiverError::invalid(format!("{CALL}: count {count} is over 64")));
    }
    let n = count as usize;
    let (kinds, slots) = if n == 0 {
        (&[][..], &[][..])
    } else {
        non_null(CALL, "kinds", kinds)?;
        non_null(CALL, "slots", slots)?;
        // SAFETY: both point to `count` readable elements, per the contract.
        unsafe { (std::slice::from_raw_parts(kinds, n), std::slice::from_raw_parts(slots, n)) }
    };
    let first = node as usize;
    for (k, (&kind, &v)) in kinds.iter().zip(slots).enumerate() {
        let at = first + k;
        let null = nulls >> k & 1 != 0;
        // The writer's inlined fast paths first (they change nothing when they do not
        // apply); anything else, errors included, through the full append, out of line.
        // (A whole row takes the plan in `quiver_append_slots` before this.)
        let done = if null {
            x.try_null(at)
        } else {
            match kind {
                QUIVER_SLOT_I8 => x.try_native(at, Input::I8, v as i8),
                QUIVER_SLOT_I16 => x.try_native(at, Input::I16, v as i16),
                QUIVER_SLOT_I32 => x.try_native(at, Input::I32, v as i32),
                QUIVER_SLOT_I64 => x.try_native(at, Input::I64, v as i64),
                QUIVER_SLOT_U8 => x.try_native(at, Input::U8, v as u8),
                QUIVER_SLOT_U16 => x.try_native(at, Input::U16, v as u16),
                QUIVER_SLOT_U32 => x.try_native(at, Input::U32, v as u32),
                QUIVER_SLOT_U64 => x.try_native(at, Input::U64, v),
                QUIVER_SLOT_F32 => x.try_native(at, Input::F32, f32::from_bits(v as u32)),
                QUIVER_SLOT_F64 => x.try_native(at, Input::F64, f64::from_bits(v)),
                _ => false,
            }
        };
        if !done {
            append_slot(x, at, k, kind, v, null)?;
        }
    }
    if end_row && !x.try_end_row() {
        x.end_row()?;
    }
    Ok(())
}

/// The input of a native slot kind (None: `QUIVER_SLOT_BOOL`, or not a kind).
fn slot_input(kind: u8) -> Option<Input> {
    Some(match kind {
        QUIVER_SLOT_I8 => Input::I8,
        QUIVER_SLOT_I16 => Input::I16,
        QUIVER_SLOT_I32 => Input::I32,
        QUIVER_SLOT_I64 => Input::I64,
        QUIVER_SLOT_U8 => Input::U8,
        QUIVER_SLOT_U16 => Input::U16,
        QUIVER_SLOT_U32 => Input::U32,
        QUIVER_SLOT_U64 => Input::U64,
        QUIVER_SLOT_F32 => Input::F32,
        QUIVER_SLOT_F64 => Input::F64,
        _ => return None,
    })
}

/// One value of `quiver_append_slots` through the full typed append (or
/// `append_null`): every check, and the message of the failure.
#[cold]
#[inline(never)]
fn append_slot(x: &mut ArrowWriter, at: usize, k: usize, kind: u8, v: u64, null: bool) -> Result<()> {
    if null {
        return x.append_null(at);
    }
    match kind {
        QUIVER_SLOT_BOOL => x.append_bool(at, v as u8 != 0),
        QUIVER_SLOT_I8 => x.append_i8(at, v as i8),
        QUIVER_SLOT_I16 => x.append_i16(at, v as i16),
        QUIVER_SLOT_I32 => x.append_i32(at, v as i32),
        QUIVER_SLOT_I64 => x.append_i64(at, v as i64),
        QUIVER_SLOT_U8 => x.append_u8(at, v as u8),
        QUIVER_SLOT_U16 => x.append_u16(at, v as u16),
        QUIVER_SLOT_U32 => x.append_u32(at, v as u32),
        QUIVER_SLOT_U64 => x.append_u64(at, v),
        QUIVER_SLOT_F32 => x.append_f32(at, f32::from_bits(v as u32)),
        QUIVER_SLOT_F64 => x.append_f64(at, f64::from_bits(v)),
        other => {
            Err(QuiverError::invalid(format!("quiver_append_slots: kinds[{k}] is {other}, not a QUIVER_SLOT_ kind")))
        }
    }
}
