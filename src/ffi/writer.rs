//! `QuiverWriter`: creation, the row path, the column path, batches, stats.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::{make_array, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Field;

use crate::error::{ErrorCode, QuiverError, Result};
use crate::export::export_array;
use crate::ffi::options::{write_stats, writer_options, QuiverOptions, QuiverStats};
use crate::ffi::schema::{check_schema_struct, export_schema, import_schema};
use crate::ffi::{c_string, fail, guard, null_arg, set_thread_error};
use crate::node::Input;
use crate::writer::ArrowWriter;

/// A writer (opaque). Not thread-safe: use one writer from one thread at a
/// time. Batches it has exported may be released on any thread.
pub struct QuiverWriter {
    pub(crate) writer: ArrowWriter,
    last_error: Option<CString>,
    poisoned: bool,
    /// Fault injection for tests of the panic boundary.
    panic_next: bool,
}

impl QuiverWriter {
    pub(crate) fn new(writer: ArrowWriter) -> Self {
        QuiverWriter { writer, last_error: None, poisoned: false, panic_next: false }
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    pub(crate) fn last_error_message(&self) -> Option<String> {
        self.last_error.as_ref().map(|m| m.to_string_lossy().into_owned())
    }

    #[cold]
    #[inline(never)]
    fn record(&mut self, e: &QuiverError) -> c_int {
        self.last_error = Some(c_string(e.message()));
        set_thread_error(e.message());
        e.errno()
    }
}

/// Makes the next call on `w` panic inside its panic boundary: how tests
/// reach the boundary and the poisoned state without a bug to trigger. Not
/// part of the C API.
///
/// # Safety
/// `w` is a live writer from `quiver_writer_new`.
#[doc(hidden)]
pub unsafe fn inject_panic_for_tests(w: *mut QuiverWriter) {
    // SAFETY: the caller passes a live writer.
    if let Some(qw) = unsafe { w.as_mut() } {
        qw.panic_next = true;
    }
}

/// Runs `f` on the writer behind `w`: NULL check, poisoned check, panic
/// boundary (a caught panic poisons the writer), error recording. Inlined
/// into each call: the common case is two tests and `f` inside the boundary.
#[inline(always)]
fn with_writer(w: *mut QuiverWriter, call: &str, f: impl FnOnce(&mut ArrowWriter) -> Result<()>) -> c_int {
    if w.is_null() {
        return null_arg(call, "w");
    }
    // SAFETY: non-NULL `w` is a writer made by quiver_writer_new (or handed
    // to a fill callback), used from one thread at a time.
    let qw = unsafe { &mut *w };
    if qw.poisoned || qw.panic_next {
        return with_writer_flagged(qw, call, f);
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut qw.writer))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => qw.record(&e),
        Err(panic) => caught(qw, call, panic),
    }
}

/// A row-path call: `fast` (the writer's inlined fast path, which returns
/// false having changed nothing when it does not apply) inside the panic
/// boundary, else `full` through `with_writer`.
#[inline(always)]
fn with_fast(
    w: *mut QuiverWriter,
    call: &str,
    fast: impl FnOnce(&mut ArrowWriter) -> bool,
    full: impl FnOnce(&mut ArrowWriter) -> Result<()>,
) -> c_int {
    // SAFETY: as in with_writer.
    if let Some(qw) = unsafe { w.as_mut() } {
        if !(qw.poisoned || qw.panic_next) {
            match catch_unwind(AssertUnwindSafe(|| fast(&mut qw.writer))) {
                Ok(true) => return 0,
                Ok(false) => {}
                Err(panic) => return caught(qw, call, panic),
            }
        }
    }
    with_writer_full(w, call, full)
}

#[inline(never)]
fn with_writer_full(w: *mut QuiverWriter, call: &str, f: impl FnOnce(&mut ArrowWriter) -> Result<()>) -> c_int {
    with_writer(w, call, f)
}

/// A caught panic: the writer is poisoned.
#[cold]
#[inline(never)]
fn caught(qw: &mut QuiverWriter, call: &str, panic: Box<dyn std::any::Any + Send>) -> c_int {
    qw.poisoned = true;
    let e = QuiverError::new(
        ErrorCode::Poisoned,
        format!("{call}: panic caught: {}; the writer is poisoned", crate::stream::panic_message(&panic)),
    );
    qw.record(&e)
}

/// `with_writer` for a poisoned writer or an injected panic.
#[cold]
#[inline(never)]
fn with_writer_flagged(qw: &mut QuiverWriter, call: &str, f: impl FnOnce(&mut ArrowWriter) -> Result<()>) -> c_int {
    if qw.poisoned {
        let e = QuiverError::new(
            ErrorCode::Poisoned,
            format!("{call}: the writer is poisoned by an earlier panic; free it"),
        );
        return qw.record(&e);
    }
    let inject = std::mem::take(&mut qw.panic_next);
    match catch_unwind(AssertUnwindSafe(|| {
        if inject {
            panic!("injected panic (tests of the panic boundary)");
        }
        f(&mut qw.writer)
    })) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => qw.record(&e),
        Err(panic) => caught(qw, call, panic),
    }
}

/// Creates a writer for `schema` (a struct schema whose children are the
/// columns). `opts` may be NULL for defaults. Errors: EINVAL (NULL argument,
/// malformed schema, bad option), ENOSYS (unsupported type, named in
/// `quiver_last_error`).
/// Ownership: `schema` and `opts` are borrowed (copied, not moved; the caller
/// still releases `schema`). On success the caller owns `*out` and frees it
/// with `quiver_writer_free`; on failure `*out` is untouched and nothing is owed.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_new(
    schema: *const FFI_ArrowSchema,
    opts: *const QuiverOptions,
    out: *mut *mut QuiverWriter,
) -> c_int {
    const CALL: &str = "quiver_writer_new";
    if schema.is_null() {
        return null_arg(CALL, "schema");
    }
    if out.is_null() {
        return null_arg(CALL, "out");
    }
    guard(CALL, || {
        // SAFETY: non-NULL pointers from the caller, per the contract above.
        match unsafe { new_writer(schema, opts, CALL) } {
            Ok(w) => {
                // SAFETY: `out` is non-NULL and valid for writes.
                unsafe { out.write(Box::into_raw(Box::new(w))) };
                0
            }
            Err(e) => fail(e),
        }
    })
}

pub(crate) unsafe fn new_writer(
    schema: *const FFI_ArrowSchema,
    opts: *const QuiverOptions,
    call: &str,
) -> Result<QuiverWriter> {
    let options = writer_options(opts, call)?;
    // SAFETY: forwarded from the caller.
    let schema = unsafe { import_schema(schema, call)? };
    let writer = ArrowWriter::create(schema.into(), options).map_err(|e| e.context(call))?;
    Ok(QuiverWriter::new(writer))
}

/// Frees a writer. NULL is a no-op. Batches already exported stay valid.
/// Ownership: `w` is consumed.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_free(w: *mut QuiverWriter) {
    if w.is_null() {
        return;
    }
    // SAFETY: `w` came from quiver_writer_new and is freed once.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(w) })));
}

/// Message of the last failure on `w`; valid until the next call on `w`;
/// NULL if none (or if `w` is NULL).
/// Ownership: the string belongs to the writer; do not free it.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_last_error(w: *const QuiverWriter) -> *const c_char {
    if w.is_null() {
        return std::ptr::null();
    }
    // SAFETY: non-NULL `w` is a live writer.
    unsafe { (*w).last_error.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()) }
}

/// Sets the writer's last error message (a fill callback calls this before
/// returning non-zero, so the stream reports the message). EINVAL if
/// `message` is NULL.
/// Ownership: `message` is borrowed (copied).
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_set_error(w: *mut QuiverWriter, message: *const c_char) -> c_int {
    const CALL: &str = "quiver_writer_set_error";
    if w.is_null() {
        return null_arg(CALL, "w");
    }
    if message.is_null() {
        return null_arg(CALL, "message");
    }
    // SAFETY: non-NULL `message` is a NUL-terminated string.
    let m = unsafe { CStr::from_ptr(message) }.to_owned();
    // SAFETY: non-NULL `w` is a live writer.
    unsafe { (*w).last_error = Some(m) };
    0
}

/// Committed rows in the current batch; -1 if `w` is NULL.
/// Ownership: nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_rows(w: *const QuiverWriter) -> i64 {
    if w.is_null() {
        null_arg("quiver_writer_rows", "w");
        return -1;
    }
    // SAFETY: non-NULL `w` is a live writer.
    unsafe { (*w).writer.rows() as i64 }
}

/// Writes the writer's counters into `*out`.
/// Ownership: `*out` is the caller's; nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_stats(w: *const QuiverWriter, out: *mut QuiverStats) -> c_int {
    const CALL: &str = "quiver_writer_stats";
    if w.is_null() {
        return null_arg(CALL, "w");
    }
    if out.is_null() {
        return null_arg(CALL, "out");
    }
    // SAFETY: non-NULL `w` is a live writer.
    let stats = unsafe { (*w).writer.stats() };
    write_stats(out, stats)
}

/// Exports the writer's schema into `*out`.
/// Ownership: on success the caller owns `*out` and must call `out->release`;
/// on failure `*out` is untouched.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_export_schema(w: *const QuiverWriter, out: *mut FFI_ArrowSchema) -> c_int {
    const CALL: &str = "quiver_writer_export_schema";
    if w.is_null() {
        return null_arg(CALL, "w");
    }
    if out.is_null() {
        return null_arg(CALL, "out");
    }
    // SAFETY: non-NULL `w` is a live writer.
    let schema = unsafe { (*w).writer.schema() };
    guard(CALL, || match export_schema(&schema, out, CALL) {
        Ok(()) => 0,
        Err(e) => fail(e),
    })
}

/// The committed rows as one struct array (a record batch); the writer
/// starts the next batch. EINVAL if a row is incomplete (nothing is lost:
/// finish it or abort it, then call again).
/// Ownership: on success the caller owns `*out` and must call `out->release`
/// (from any thread); its buffers stay valid until then, whatever the writer
/// does. On failure `*out` is untouched.
#[no_mangle]
pub unsafe extern "C" fn quiver_writer_finish(w: *mut QuiverWriter, out: *mut FFI_ArrowArray) -> c_int {
    const CALL: &str = "quiver_writer_finish";
    if out.is_null() {
        if w.is_null() {
            return null_arg(CALL, "w");
        }
        return with_writer(w, CALL, |_| Err(QuiverError::invalid(format!("{CALL}: out is NULL"))));
    }
    with_writer(w, CALL, |writer| {
        let batch = writer.finish().map_err(|e| e.context(CALL))?;
        let array = export_array(StructArray::from(batch).into());
        // SAFETY: `out` is non-NULL and valid for writes.
        unsafe { out.write(array) };
        Ok(())
    })
}

// ---- row path --------------------------------------------------------------

/// Appends a null to `node` (a null struct or fixed-size list gets null,
/// zeroed children). EINVAL for a non-nullable node.
/// Ownership: nothing changes hands (same for every append below).
#[no_mangle]
pub unsafe extern "C" fn quiver_append_null(w: *mut QuiverWriter, node: u32) -> c_int {
    with_fast(w, "quiver_append_null", |x| x.try_null(node as usize), |x| x.append_null(node as usize))
}

/// Appends a boolean.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_bool(w: *mut QuiverWriter, node: u32, v: bool) -> c_int {
    with_writer(w, "quiver_append_bool", |x| x.append_bool(node as usize, v))
}

/// Appends an int8.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_i8(w: *mut QuiverWriter, node: u32, v: i8) -> c_int {
    with_fast(w, "quiver_append_i8", |x| x.try_native(node as usize, Input::I8, v), |x| x.append_i8(node as usize, v))
}

/// Appends an int16.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_i16(w: *mut QuiverWriter, node: u32, v: i16) -> c_int {
    with_fast(
        w,
        "quiver_append_i16",
        |x| x.try_native(node as usize, Input::I16, v),
        |x| x.append_i16(node as usize, v),
    )
}

/// Appends an int32 (also date32, time32, interval year-month).
#[no_mangle]
pub unsafe extern "C" fn quiver_append_i32(w: *mut QuiverWriter, node: u32, v: i32) -> c_int {
    with_fast(
        w,
        "quiver_append_i32",
        |x| x.try_native(node as usize, Input::I32, v),
        |x| x.append_i32(node as usize, v),
    )
}

/// Appends an int64 (also date64, time64, timestamp, duration, and a
/// decimal's unscaled value).
#[no_mangle]
pub unsafe extern "C" fn quiver_append_i64(w: *mut QuiverWriter, node: u32, v: i64) -> c_int {
    with_fast(
        w,
        "quiver_append_i64",
        |x| x.try_native(node as usize, Input::I64, v),
        |x| x.append_i64(node as usize, v),
    )
}

/// Appends a uint8.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_u8(w: *mut QuiverWriter, node: u32, v: u8) -> c_int {
    with_fast(w, "quiver_append_u8", |x| x.try_native(node as usize, Input::U8, v), |x| x.append_u8(node as usize, v))
}

/// Appends a uint16 (also a float16's raw bits).
#[no_mangle]
pub unsafe extern "C" fn quiver_append_u16(w: *mut QuiverWriter, node: u32, v: u16) -> c_int {
    with_fast(
        w,
        "quiver_append_u16",
        |x| x.try_native(node as usize, Input::U16, v),
        |x| x.append_u16(node as usize, v),
    )
}

/// Appends a uint32.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_u32(w: *mut QuiverWriter, node: u32, v: u32) -> c_int {
    with_fast(
        w,
        "quiver_append_u32",
        |x| x.try_native(node as usize, Input::U32, v),
        |x| x.append_u32(node as usize, v),
    )
}

/// Appends a uint64.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_u64(w: *mut QuiverWriter, node: u32, v: u64) -> c_int {
    with_fast(
        w,
        "quiver_append_u64",
        |x| x.try_native(node as usize, Input::U64, v),
        |x| x.append_u64(node as usize, v),
    )
}

/// Appends a float32 (also into a float16 column, rounded to nearest).
#[no_mangle]
pub unsafe extern "C" fn quiver_append_f32(w: *mut QuiverWriter, node: u32, v: f32) -> c_int {
    with_fast(
        w,
        "quiver_append_f32",
        |x| x.try_native(node as usize, Input::F32, v),
        |x| x.append_f32(node as usize, v),
    )
}

/// Appends a float64.
#[no_mangle]
pub unsafe extern "C" fn quiver_append_f64(w: *mut QuiverWriter, node: u32, v: f64) -> c_int {
    with_fast(
        w,
        "quiver_append_f64",
        |x| x.try_native(node as usize, Input::F64, v),
        |x| x.append_f64(node as usize, v),
    )
}

/// Appends `len` bytes to a utf8, binary, large form, or fixed-size binary
/// (exactly its width) node, or the raw bytes of a day-time (8) or
/// month-day-nano (16) interval. EINVAL for invalid UTF-8 (when checked) or a
/// wrong width; EOVERFLOW when a 32-bit-offset column would pass 2^31-1 bytes.
/// Ownership: `data` is borrowed (copied); it may be NULL when `len` is 0.
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
    with_fast(w, CALL, fast, |x| {
        // SAFETY: `data` points to `len` readable bytes (or len is 0).
        let bytes = unsafe { borrowed_bytes(data, len, CALL)? };
        x.append_bytes(node as usize, bytes)
    })
}

/// Appends a decimal's unscaled value: `len` (1..=32) little-endian two's
/// complement bytes, sign-extended. ERANGE when over the precision.
/// Ownership: `le_bytes` is borrowed (copied).
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
    with_fast(w, CALL, fast, |x| {
        if le_bytes.is_null() {
            return Err(QuiverError::invalid(format!("{CALL}: le_bytes is NULL")));
        }
        // SAFETY: `le_bytes` points to `len` readable bytes.
        let bytes = unsafe { borrowed_bytes(le_bytes, len, CALL)? };
        x.append_decimal_bytes(node as usize, bytes)
    })
}

unsafe fn borrowed_bytes<'a>(data: *const u8, len: usize, call: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(QuiverError::invalid(format!("{call}: data is NULL with len {len}")));
    }
    if len > isize::MAX as usize {
        return Err(QuiverError::invalid(format!("{call}: len {len} is too large")));
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Starts one list, large list, fixed-size list, struct or map value of
/// `node`; its children are appended next, then `quiver_end(w, node)`.
/// Ownership: nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_begin(w: *mut QuiverWriter, node: u32) -> c_int {
    with_fast(w, "quiver_begin", |x| x.try_begin(node as usize), |x| x.begin(node as usize))
}

/// Ends the value begun on `node` (the innermost open node). EINVAL when a
/// struct child or fixed-size list value is missing; the value stays open.
/// Ownership: nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_end(w: *mut QuiverWriter, node: u32) -> c_int {
    with_fast(w, "quiver_end", |x| x.try_end(node as usize), |x| x.end(node as usize))
}

/// Commits the row: every top-level column must have one value. EINVAL
/// (naming the missing column) leaves the row open.
/// Ownership: nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_end_row(w: *mut QuiverWriter) -> c_int {
    with_fast(w, "quiver_end_row", |x| x.try_end_row(), |x| x.end_row())
}

/// Drops the uncommitted part of the row; committed rows stay intact.
/// Ownership: nothing changes hands.
#[no_mangle]
pub unsafe extern "C" fn quiver_abort_row(w: *mut QuiverWriter) -> c_int {
    with_writer(w, "quiver_abort_row", |x| x.abort_row())
}

// ---- column path -----------------------------------------------------------

/// Appends `length` rows to a whole top-level column of a fixed-width type
/// (native little-endian values, `length * width` bytes; boolean: an
/// LSB-first bitmap of `length` bits). `validity`: LSB-first bitmap, NULL =
/// all valid. Null slots get zero values whatever `values` holds there.
/// Rows are committed once every top-level column has the same length.
/// Ownership: `values` and `validity` are borrowed (copied).
#[no_mangle]
pub unsafe extern "C" fn quiver_write_column(
    w: *mut QuiverWriter,
    node: u32,
    values: *const c_void,
    validity: *const u8,
    length: i64,
) -> c_int {
    const CALL: &str = "quiver_write_column";
    with_writer(w, CALL, |x| {
        if length < 0 {
            return Err(QuiverError::invalid(format!("{CALL}: length is negative ({length})")));
        }
        let length = length as usize;
        let need = x.column_value_bytes(node as usize, length, CALL)?;
        // SAFETY: `values` points to the `need` bytes this column's type
        // takes for `length` rows; `validity` (if not NULL) to ceil(length/8).
        let values = unsafe { borrowed_bytes(values.cast(), need, CALL)? };
        let validity = if validity.is_null() {
            None
        } else {
            Some(unsafe { borrowed_bytes(validity, length.div_ceil(8), CALL)? })
        };
        x.write_column_bytes(node as usize, values, validity, length)
    })
}

/// Appends a whole top-level column copied from an Arrow array of the
/// node's type (any offset; nested types included). The array is fully
/// validated first; EINVAL for a malformed array or schema or a type
/// mismatch (nothing is written then).
/// Ownership: `array` and `schema` are borrowed: not moved, not released.
#[no_mangle]
pub unsafe extern "C" fn quiver_write_array(
    w: *mut QuiverWriter,
    node: u32,
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> c_int {
    const CALL: &str = "quiver_write_array";
    with_writer(w, CALL, |x| {
        if array.is_null() {
            return Err(QuiverError::invalid(format!("{CALL}: array is NULL")));
        }
        if schema.is_null() {
            return Err(QuiverError::invalid(format!("{CALL}: schema is NULL")));
        }
        // SAFETY: non-NULL pointers to the caller's structs, borrowed.
        let data = unsafe { import_borrowed(array, schema, CALL)? };
        x.write_array_data(node as usize, &data)
    })
}

/// Imports a caller's array without taking it: a bitwise copy whose release
/// does nothing, so the caller's struct and buffers stay the caller's.
unsafe fn import_borrowed(
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    call: &str,
) -> Result<arrow_data::ArrayData> {
    unsafe extern "C" fn keep(array: *mut FFI_ArrowArray) {
        // SAFETY: the copy made below; mark it released, free nothing.
        unsafe { (*array).set_release(None) };
    }
    // SAFETY: checked structure first; the copy is only read during this call.
    unsafe {
        crate::depth::check_ffi_schema(schema, call, 1)?;
        check_schema_struct(schema, call, "schema", 0)?;
        check_array_struct(array, schema, call, "array", 0)?;
        let field = Field::try_from(&*schema)
            .map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowSchema: {e}")))?;
        let mut copy = std::ptr::read(array);
        copy.set_release(Some(keep));
        let data = arrow_array::ffi::from_ffi_and_data_type(copy, field.data_type().clone())
            .map_err(|e| QuiverError::invalid(format!("{call}: malformed ArrowArray: {e}")))?;
        data.validate_full().map_err(|e| QuiverError::invalid(format!("{call}: invalid ArrowArray: {e}")))?;
        // Normalise offsets of nested arrays as arrow-rs arrays hold them.
        Ok(make_array(data).to_data())
    }
}

/// Checks the structure of a caller's `ArrowArray` against its schema before
/// arrow reads it: not released, buffer and child pointers present, child
/// counts matching the schema.
unsafe fn check_array_struct(
    array: *const FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    call: &str,
    path: &str,
    depth: usize,
) -> Result<()> {
    let bad = |what: String| QuiverError::invalid(format!("{call}: malformed ArrowArray at {path}: {what}"));
    // SAFETY: structure of both checked level by level.
    unsafe {
        let a = &*array;
        let s = &*schema;
        if a.is_released() {
            return Err(bad("it is released (release is NULL)".into()));
        }
        if a.len() > i64::MAX as usize / 2 {
            return Err(bad("length is negative".into()));
        }
        let schema_children = *(schema as *const i64).add(4);
        if a.num_children() as i64 != schema_children {
            return Err(bad(format!("n_children is {} but the schema has {schema_children}", a.num_children())));
        }
        let raw = array as *const i64;
        let n_buffers = *raw.add(3);
        let buffers = *(raw.add(5) as *const *const *const c_void);
        if n_buffers < 0 || n_buffers > 1 << 16 || (n_buffers > 0 && buffers.is_null()) {
            return Err(bad(format!("n_buffers is {n_buffers} and buffers is {buffers:?}")));
        }
        let children = *(raw.add(6) as *const *const *const FFI_ArrowArray);
        if a.num_children() > 0 && children.is_null() {
            return Err(bad("children is NULL".into()));
        }
        for i in 0..a.num_children() {
            let child = *children.add(i);
            if child.is_null() {
                return Err(bad(format!("children[{i}] is NULL")));
            }
            check_array_struct(child, s.child(i), call, &format!("{path}.children[{i}]"), depth + 1)?;
        }
        let dictionary = *(raw.add(7) as *const *const FFI_ArrowArray);
        match (s.dictionary(), dictionary.is_null()) {
            (Some(d), false) => check_array_struct(dictionary, d, call, &format!("{path}.dictionary"), depth + 1)?,
            (Some(_), true) => return Err(bad("the schema has a dictionary but the array has none".into())),
            _ => {}
        }
    }
    Ok(())
}
