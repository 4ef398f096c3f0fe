//! Bad input and misuse, through the C API (called from Rust) and the Rust
//! API. Every case checks the returned code, that the message names the call
//! and the node or problem, that every committed row is still intact (finish
//! and compare values), and that the writer is still usable afterwards.
//!
//! `doc_table_matches` checks that docs/bad-input.md lists exactly these
//! cases (run with QUIVER_BLESS=1 to rewrite the table).

#[path = "reliability/exported.rs"]
mod exported;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatchReader, StringArray, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema};

use exported::{borrow_import, render_exported};
use quiver::ffi::abi::ArrowSchema;
use quiver::ffi::options::{quiver_options_default, QuiverOptions, QuiverStats};
use quiver::ffi::quiver_last_error;
use quiver::ffi::schema::quiver_schema_parse;
use quiver::ffi::stream::quiver_stream_new;
use quiver::ffi::writer::*;
use quiver::{
    live_arrays_of_this_thread, parse_schema, ArrowWriter, ErrorCode, QuiverError, Step, WriterOptions, WriterStream,
    MAX_DEPTH,
};

const EINVAL: i64 = libc::EINVAL as i64;
const ENOSYS: i64 = libc::ENOSYS as i64;
const ERANGE: i64 = libc::ERANGE as i64;
const EIO: i64 = libc::EIO as i64;
const EOVERFLOW: i64 = libc::EOVERFLOW as i64;
const ENOMEM: i64 = libc::ENOMEM as i64;
const ENOTRECOVERABLE: i64 = libc::ENOTRECOVERABLE as i64;

// ---- the schema every writer case uses ---------------------------------------

/// Nodes: id 0, name 1, tags 2, tags.item 3, pt 4, pt.x 5, pt.y 6, fb 7, d 8,
/// fl 9, fl.item 10, m 11, m.entries 12, m.key 13, m.value 14, flag 15.
const KITCHEN: &str = "id: int64 not null, name: utf8, tags: list<utf8>, pt: struct<x: float64, y: int8 not null>, \
     fb: fixed_size_binary(4), d: decimal128(5, 2), fl: fixed_size_list<int16, 2>, m: map<utf8, int64>, flag: bool";

fn kitchen_schema() -> Schema {
    parse_schema(KITCHEN).unwrap()
}

fn struct_type(schema: &Schema) -> DataType {
    DataType::Struct(schema.fields().clone())
}

fn q(s: &str) -> String {
    format!("{s:?}")
}

/// What row `i` of the kitchen schema must read back as (see `c_row`).
fn expected_row(i: i64) -> Vec<String> {
    let name = if i % 3 == 2 { "null".into() } else { q(&format!("name{i}")) };
    let tags = if i % 4 == 3 {
        "null".into()
    } else {
        let items: Vec<String> = (0..i % 3).map(|j| q(&format!("t{i}.{j}"))).collect();
        format!("[{}]", items.join(", "))
    };
    let pt = if i % 5 == 4 { "null".into() } else { format!("{{{:?}, {}}}", i as f64 * 0.5, i as i8) };
    let fb: String = (0..4).map(|k| format!("{:02x}", (i as u8).wrapping_add(k))).collect();
    let d = if i % 6 == 5 { "null".into() } else { (i as i128 * 7 - 3).to_string() };
    let fl = format!("[{}, {}]", i as i16, -(i as i16));
    let entries: Vec<String> =
        (0..(i % 2) + 1).map(|j| format!("{{{}, {}}}", q(&format!("k{j}")), i * 100 + j)).collect();
    let m = format!("[{}]", entries.join(", "));
    vec![(i * 10).to_string(), name, tags, pt, fb, d, fl, m, (i % 2 == 0).to_string()]
}

fn expected_rows(r: std::ops::Range<i64>) -> Vec<Vec<String>> {
    r.map(expected_row).collect()
}

// ---- C API helpers -------------------------------------------------------------

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: quiver returns NUL-terminated strings valid until the next call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn werr(w: *mut QuiverWriter) -> String {
    // SAFETY: w is NULL or a live writer.
    cstr(unsafe { quiver_writer_last_error(w) })
}

fn terr() -> String {
    cstr(quiver_last_error())
}

#[track_caller]
fn ok(rc: c_int, w: *mut QuiverWriter) {
    assert_eq!(rc, 0, "call failed: {}", werr(w));
}

struct W(*mut QuiverWriter);

impl Drop for W {
    fn drop(&mut self) {
        // SAFETY: made by quiver_writer_new, freed once.
        unsafe { quiver_writer_free(self.0) }
    }
}

fn c_writer(text: &str, opts: Option<QuiverOptions>) -> W {
    let s = FFI_ArrowSchema::try_from(&parse_schema(text).unwrap()).unwrap();
    let mut w = null_mut();
    let o = opts.as_ref().map_or(null(), |o| o as *const QuiverOptions);
    // SAFETY: valid schema, options and out pointer.
    let rc = unsafe { quiver_writer_new(&s, o, &mut w) };
    assert_eq!(rc, 0, "quiver_writer_new: {}", terr());
    W(w)
}

fn options(batch_rows: i64) -> QuiverOptions {
    let mut o = std::mem::MaybeUninit::<QuiverOptions>::uninit();
    // SAFETY: quiver_options_default writes every field.
    unsafe {
        quiver_options_default(o.as_mut_ptr());
        let mut o = o.assume_init();
        o.batch_rows = batch_rows;
        o
    }
}

unsafe fn bytes(w: *mut QuiverWriter, node: u32, b: &[u8]) -> c_int {
    // SAFETY: `w` is a live writer; `b` a live slice.
    unsafe { quiver_append_bytes(w, node, b.as_ptr(), b.len()) }
}

unsafe fn dec(w: *mut QuiverWriter, node: u32, v: i128) -> c_int {
    let le = v.to_le_bytes();
    // SAFETY: `w` is a live writer; `le` a live array.
    unsafe { quiver_append_decimal(w, node, le.as_ptr(), le.len()) }
}

/// Writes the columns of row `i` from `from` on (node numbers of top-level
/// columns in order), without `end_row`.
unsafe fn c_columns(w: *mut QuiverWriter, i: i64, skip_last: bool) {
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe {
        ok(quiver_append_i64(w, 0, i * 10), w);
        if i % 3 == 2 {
            ok(quiver_append_null(w, 1), w)
        } else {
            ok(bytes(w, 1, format!("name{i}").as_bytes()), w)
        }
        if i % 4 == 3 {
            ok(quiver_append_null(w, 2), w)
        } else {
            ok(quiver_begin(w, 2), w);
            for j in 0..i % 3 {
                ok(bytes(w, 3, format!("t{i}.{j}").as_bytes()), w);
            }
            ok(quiver_end(w, 2), w);
        }
        if i % 5 == 4 {
            ok(quiver_append_null(w, 4), w)
        } else {
            ok(quiver_begin(w, 4), w);
            ok(quiver_append_f64(w, 5, i as f64 * 0.5), w);
            ok(quiver_append_i8(w, 6, i as i8), w);
            ok(quiver_end(w, 4), w);
        }
        let fb: Vec<u8> = (0..4).map(|k| (i as u8).wrapping_add(k)).collect();
        ok(bytes(w, 7, &fb), w);
        if i % 6 == 5 {
            ok(quiver_append_null(w, 8), w)
        } else {
            ok(dec(w, 8, i as i128 * 7 - 3), w)
        }
        ok(quiver_begin(w, 9), w);
        ok(quiver_append_i16(w, 10, i as i16), w);
        ok(quiver_append_i16(w, 10, -(i as i16)), w);
        ok(quiver_end(w, 9), w);
        ok(quiver_begin(w, 11), w);
        for j in 0..(i % 2) + 1 {
            ok(quiver_begin(w, 12), w);
            ok(bytes(w, 13, format!("k{j}").as_bytes()), w);
            ok(quiver_append_i64(w, 14, i * 100 + j), w);
            ok(quiver_end(w, 12), w);
        }
        ok(quiver_end(w, 11), w);
        if !skip_last {
            ok(quiver_append_bool(w, 15, i % 2 == 0), w);
        }
    }
}

/// Writes and commits row `i` of the kitchen schema.
unsafe fn c_row(w: *mut QuiverWriter, i: i64) {
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe {
        c_columns(w, i, false);
        ok(quiver_end_row(w), w);
    }
}

/// Finishes a batch and checks it holds exactly rows `rows` (values compared
/// through an independent renderer, and validate_full).
unsafe fn c_finish_check(w: *mut QuiverWriter, rows: std::ops::Range<i64>) {
    let mut out = FFI_ArrowArray::empty();
    // SAFETY: `w` is a live writer; `out` a struct of ours.
    unsafe { ok(quiver_writer_finish(w, &mut out), w) };
    assert_eq!(render_exported(&out, &struct_type(&kitchen_schema())), expected_rows(rows));
}

// ---- the table of C API cases ----------------------------------------------------

/// One bad input: `run` gets a writer holding two committed rows (0 and 1),
/// makes the bad call (after any valid set-up) and returns the call's result
/// and its message. The harness then checks code and message, rolls back the
/// open row, writes row 2, and checks the batch holds rows 0, 1, 2 intact.
struct Case {
    class: &'static str,
    call: &'static str,
    code: i64,
    /// Parts the message must contain (besides the call's name).
    excerpt: &'static [&'static str],
    run: fn(*mut QuiverWriter) -> (i64, String),
}

fn t(rc: c_int) -> (i64, String) {
    (rc as i64, terr())
}

fn wr(w: *mut QuiverWriter, rc: c_int) -> (i64, String) {
    let m = werr(w);
    // Every failing writer call also sets the thread's last error, the same text.
    assert_eq!(m, terr(), "writer and thread messages differ");
    (rc as i64, m)
}

fn kitchen_ffi() -> FFI_ArrowSchema {
    FFI_ArrowSchema::try_from(&kitchen_schema()).unwrap()
}

unsafe extern "C" fn raw_release(s: *mut ArrowSchema) {
    // SAFETY: our own struct; nothing is owned (the test leaks its parts).
    (*s).release = None;
}

fn leak_str(s: &str) -> *const c_char {
    CString::new(s).unwrap().into_raw()
}

/// `format` with `children` (leaked: the cases are short-lived tests).
fn raw_schema(format: Option<&str>, n_children: i64, children: Option<Vec<*mut ArrowSchema>>) -> *mut ArrowSchema {
    let children = children.map_or(null_mut(), |c| Box::leak(c.into_boxed_slice()).as_mut_ptr());
    Box::into_raw(Box::new(ArrowSchema {
        format: format.map_or(null(), leak_str),
        name: leak_str("c"),
        metadata: null(),
        flags: 2,
        n_children,
        children,
        dictionary: null_mut(),
        release: Some(raw_release),
        private_data: null_mut(),
    }))
}

fn new_from_raw(s: *mut ArrowSchema) -> (i64, String) {
    let mut out = null_mut();
    // SAFETY: a (malformed) schema struct that is readable as far as its
    // pointers go; quiver must not follow what it has not checked.
    let rc = unsafe { quiver_writer_new(s as *const FFI_ArrowSchema, null(), &mut out) };
    if !out.is_null() {
        // SAFETY: made by quiver_writer_new.
        unsafe { quiver_writer_free(out) };
        return (rc as i64, format!("(a writer was made, rc {rc})"));
    }
    t(rc)
}

fn parse(text: &[u8]) -> (i64, String) {
    let c = CString::new(text).unwrap();
    let mut out = FFI_ArrowSchema::empty();
    // SAFETY: NUL-terminated text, out valid.
    t(unsafe { quiver_schema_parse(c.as_ptr(), &mut out) })
}

unsafe extern "C" fn fill_nothing(_: *mut c_void, _: *mut QuiverWriter, _: i64) -> c_int {
    0
}

fn cases() -> Vec<Case> {
    // SAFETY: (all closures) the pointers passed are valid or deliberately NULL.
    unsafe {
        vec![
            // -- NULL for every pointer argument ------------------------------------
            Case {
                class: "NULL schema",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["schema is NULL"],
                run: |_| {
                    let mut o = null_mut();
                    t(quiver_writer_new(null(), null(), &mut o))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |_| {
                    let s = kitchen_ffi();
                    t(quiver_writer_new(&s, null(), null_mut()))
                },
            },
            Case {
                class: "NULL text",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["text is NULL"],
                run: |_| {
                    let mut o = FFI_ArrowSchema::empty();
                    t(quiver_schema_parse(null(), &mut o))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |_| t(quiver_schema_parse(c"a: int32".as_ptr(), null_mut())),
            },
            Case {
                class: "NULL schema",
                call: "quiver_stream_new",
                code: EINVAL,
                excerpt: &["schema is NULL"],
                run: |_| {
                    let mut o = FFI_ArrowArrayStream::empty();
                    t(quiver_stream_new(null(), null(), Some(fill_nothing), null_mut(), None, &mut o))
                },
            },
            Case {
                class: "NULL fill",
                call: "quiver_stream_new",
                code: EINVAL,
                excerpt: &["fill is NULL"],
                run: |_| {
                    let s = kitchen_ffi();
                    let mut o = FFI_ArrowArrayStream::empty();
                    t(quiver_stream_new(&s, null(), None, null_mut(), None, &mut o))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_stream_new",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |_| {
                    let s = kitchen_ffi();
                    t(quiver_stream_new(&s, null(), Some(fill_nothing), null_mut(), None, null_mut()))
                },
            },
            Case {
                class: "NULL w (returns -1)",
                call: "quiver_writer_rows",
                code: -1,
                excerpt: &["w is NULL"],
                run: |_| (quiver_writer_rows(null()), terr()),
            },
            Case {
                class: "NULL w (returns NULL)",
                call: "quiver_writer_last_error",
                code: 0,
                excerpt: &[],
                run: |_| {
                    assert!(quiver_writer_last_error(null()).is_null());
                    (0, String::new())
                },
            },
            Case {
                class: "NULL w (no-op)",
                call: "quiver_writer_free",
                code: 0,
                excerpt: &[],
                run: |_| {
                    quiver_writer_free(null_mut());
                    (0, String::new())
                },
            },
            Case {
                class: "NULL opts (no-op)",
                call: "quiver_options_default",
                code: 0,
                excerpt: &[],
                run: |_| {
                    quiver_options_default(null_mut());
                    (0, String::new())
                },
            },
            Case {
                class: "NULL w",
                call: "quiver_writer_set_error",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_writer_set_error(null_mut(), c"x".as_ptr())),
            },
            Case {
                class: "NULL message",
                call: "quiver_writer_set_error",
                code: EINVAL,
                excerpt: &["message is NULL"],
                run: |w| t(quiver_writer_set_error(w, null())),
            },
            Case {
                class: "NULL w",
                call: "quiver_writer_stats",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| {
                    let mut s = QuiverStats::default();
                    t(quiver_writer_stats(null(), &mut s))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_writer_stats",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |w| t(quiver_writer_stats(w, null_mut())),
            },
            Case {
                class: "NULL w",
                call: "quiver_writer_export_schema",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| {
                    let mut s = FFI_ArrowSchema::empty();
                    t(quiver_writer_export_schema(null(), &mut s))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_writer_export_schema",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |w| t(quiver_writer_export_schema(w, null_mut())),
            },
            Case {
                class: "NULL w",
                call: "quiver_writer_finish",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| {
                    let mut a = FFI_ArrowArray::empty();
                    t(quiver_writer_finish(null_mut(), &mut a))
                },
            },
            Case {
                class: "NULL out",
                call: "quiver_writer_finish",
                code: EINVAL,
                excerpt: &["out is NULL"],
                run: |w| wr(w, quiver_writer_finish(w, null_mut())),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_null",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_null(null_mut(), 0)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_bool",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_bool(null_mut(), 15, true)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_i8",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_i8(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_i16",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_i16(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_i32",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_i32(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_i64",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_i64(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_u8",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_u8(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_u16",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_u16(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_u32",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_u32(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_u64",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_u64(null_mut(), 0, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_f32",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_f32(null_mut(), 0, 1.0)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_f64",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_append_f64(null_mut(), 0, 1.0)),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(bytes(null_mut(), 1, b"x")),
            },
            Case {
                class: "NULL w",
                call: "quiver_append_decimal",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(dec(null_mut(), 8, 1)),
            },
            Case {
                class: "NULL w",
                call: "quiver_begin",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_begin(null_mut(), 2)),
            },
            Case {
                class: "NULL w",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_end(null_mut(), 2)),
            },
            Case {
                class: "NULL w",
                call: "quiver_end_row",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_end_row(null_mut())),
            },
            Case {
                class: "NULL w",
                call: "quiver_abort_row",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| t(quiver_abort_row(null_mut())),
            },
            Case {
                class: "NULL w",
                call: "quiver_write_column",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| {
                    let v = [1i64];
                    t(quiver_write_column(null_mut(), 0, v.as_ptr().cast(), null(), 1))
                },
            },
            Case {
                class: "NULL w",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["w is NULL"],
                run: |_| {
                    let (a, s) = ffi_of(&(Arc::new(Int64Array::from(vec![1])) as ArrayRef));
                    t(quiver_write_array(null_mut(), 0, &a, &s))
                },
            },
            Case {
                class: "NULL data with len > 0",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["data is NULL with len 3"],
                run: |w| wr(w, quiver_append_bytes(w, 1, null(), 3)),
            },
            Case {
                class: "NULL le_bytes",
                call: "quiver_append_decimal",
                code: EINVAL,
                excerpt: &["le_bytes is NULL"],
                run: |w| wr(w, quiver_append_decimal(w, 8, null(), 16)),
            },
            Case {
                class: "NULL values with length > 0",
                call: "quiver_write_column",
                code: EINVAL,
                excerpt: &["data is NULL"],
                run: |w| wr(w, quiver_write_column(w, 0, null(), null(), 2)),
            },
            Case {
                class: "NULL array",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["array is NULL"],
                run: |w| {
                    let (_, s) = ffi_of(&(Arc::new(Int64Array::from(vec![1])) as ArrayRef));
                    wr(w, quiver_write_array(w, 0, null(), &s))
                },
            },
            Case {
                class: "NULL schema",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["schema is NULL"],
                run: |w| {
                    let (a, _) = ffi_of(&(Arc::new(Int64Array::from(vec![1])) as ArrayRef));
                    wr(w, quiver_write_array(w, 0, &a, null()))
                },
            },
            // -- nodes and positions ---------------------------------------------------
            Case {
                class: "unknown node",
                call: "quiver_append_i64",
                code: EINVAL,
                excerpt: &["unknown node 99", "16 nodes"],
                run: |w| wr(w, quiver_append_i64(w, 99, 1)),
            },
            Case {
                class: "unknown node",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["unknown node 16"],
                run: |w| wr(w, quiver_end(w, 16)),
            },
            Case {
                class: "append of the wrong type",
                call: "quiver_append_i32",
                code: EINVAL,
                excerpt: &["node 0 'id'", "wrong type", "append_i64"],
                run: |w| wr(w, quiver_append_i32(w, 0, 1)),
            },
            Case {
                class: "append of the wrong type (bytes to a number)",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 8 'd'", "wrong type"],
                run: |w| wr(w, bytes(w, 8, b"12")),
            },
            Case {
                class: "plain append to a nested node",
                call: "quiver_append_i64",
                code: EINVAL,
                excerpt: &["node 11 'm'", "begin/end"],
                run: |w| wr(w, quiver_append_i64(w, 11, 1)),
            },
            Case {
                class: "append to a struct child without begin",
                call: "quiver_append_f64",
                code: EINVAL,
                excerpt: &["node 5 'pt.x'", "node 4 'pt'", "not open"],
                run: |w| wr(w, quiver_append_f64(w, 5, 1.0)),
            },
            Case {
                class: "append to a list child without begin",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 3 'tags.item'", "node 2 'tags'", "not open"],
                run: |w| wr(w, bytes(w, 3, b"x")),
            },
            Case {
                class: "append to a child of another open node",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 3 'tags.item'", "innermost open node is node 4"],
                run: |w| {
                    ok(quiver_begin(w, 4), w);
                    wr(w, bytes(w, 3, b"x"))
                },
            },
            Case {
                class: "top-level append while a nested value is open",
                call: "quiver_append_i64",
                code: EINVAL,
                excerpt: &["node 0 'id'", "node 2 'tags'", "still open"],
                run: |w| {
                    ok(quiver_begin(w, 2), w);
                    wr(w, quiver_append_i64(w, 0, 1))
                },
            },
            Case {
                class: "second value for a column in one row",
                call: "quiver_append_i64",
                code: EINVAL,
                excerpt: &["node 0 'id'", "already has a value in row 2"],
                run: |w| {
                    ok(quiver_append_i64(w, 0, 1), w);
                    wr(w, quiver_append_i64(w, 0, 2))
                },
            },
            Case {
                class: "second value for a struct child",
                call: "quiver_append_f64",
                code: EINVAL,
                excerpt: &["node 5 'pt.x'", "already has a value", "node 4 'pt'"],
                run: |w| {
                    ok(quiver_begin(w, 4), w);
                    ok(quiver_append_f64(w, 5, 1.0), w);
                    wr(w, quiver_append_f64(w, 5, 2.0))
                },
            },
            Case {
                class: "too many fixed-size list values",
                call: "quiver_append_i16",
                code: EINVAL,
                excerpt: &["node 10 'fl.item'", "already has its 2 values"],
                run: |w| {
                    ok(quiver_begin(w, 9), w);
                    ok(quiver_append_i16(w, 10, 1), w);
                    ok(quiver_append_i16(w, 10, 2), w);
                    wr(w, quiver_append_i16(w, 10, 3))
                },
            },
            Case {
                class: "null into a non-nullable column",
                call: "quiver_append_null",
                code: EINVAL,
                excerpt: &["node 0 'id'", "not nullable"],
                run: |w| wr(w, quiver_append_null(w, 0)),
            },
            Case {
                class: "null into a non-nullable struct child",
                call: "quiver_append_null",
                code: EINVAL,
                excerpt: &["node 6 'pt.y'", "not nullable"],
                run: |w| {
                    ok(quiver_begin(w, 4), w);
                    wr(w, quiver_append_null(w, 6))
                },
            },
            Case {
                class: "null map key",
                call: "quiver_append_null",
                code: EINVAL,
                excerpt: &["node 13 'm.entries.key'", "not nullable"],
                run: |w| {
                    ok(quiver_begin(w, 11), w);
                    ok(quiver_begin(w, 12), w);
                    wr(w, quiver_append_null(w, 13))
                },
            },
            Case {
                class: "begin on a non-nested node",
                call: "quiver_begin",
                code: EINVAL,
                excerpt: &["node 0 'id'", "is not a list, struct"],
                run: |w| wr(w, quiver_begin(w, 0)),
            },
            Case {
                class: "end without begin",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["node 2 'tags'", "was not begun"],
                run: |w| wr(w, quiver_end(w, 2)),
            },
            Case {
                class: "end of a node that is not the innermost open one",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["node 11 'm'", "not the innermost open node", "node 12"],
                run: |w| {
                    ok(quiver_begin(w, 11), w);
                    ok(quiver_begin(w, 12), w);
                    wr(w, quiver_end(w, 11))
                },
            },
            Case {
                class: "end of a struct with a missing child",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["struct node 4 'pt'", "no value for child node 6 'pt.y'"],
                run: |w| {
                    ok(quiver_begin(w, 4), w);
                    ok(quiver_append_f64(w, 5, 1.0), w);
                    wr(w, quiver_end(w, 4))
                },
            },
            Case {
                class: "end of a fixed-size list with too few values",
                call: "quiver_end",
                code: EINVAL,
                excerpt: &["fixed-size list node 9 'fl'", "needs 2 values, got 1"],
                run: |w| {
                    ok(quiver_begin(w, 9), w);
                    ok(quiver_append_i16(w, 10, 1), w);
                    wr(w, quiver_end(w, 9))
                },
            },
            Case {
                class: "end_row with a missing column",
                call: "quiver_end_row",
                code: EINVAL,
                excerpt: &["row 2", "no value for node 15 'flag'"],
                run: |w| {
                    c_columns(w, 2, true);
                    wr(w, quiver_end_row(w))
                },
            },
            Case {
                class: "end_row with an open nested value",
                call: "quiver_end_row",
                code: EINVAL,
                excerpt: &["node 2 'tags'", "still open"],
                run: |w| {
                    ok(quiver_begin(w, 2), w);
                    wr(w, quiver_end_row(w))
                },
            },
            Case {
                class: "finish with an incomplete row",
                call: "quiver_writer_finish",
                code: EINVAL,
                excerpt: &["row 2 is incomplete", "node 0 'id'"],
                run: |w| {
                    ok(quiver_append_i64(w, 0, 5), w);
                    let mut a = FFI_ArrowArray::empty();
                    let r = wr(w, quiver_writer_finish(w, &mut a));
                    assert!(a.is_released());
                    r
                },
            },
            Case {
                class: "finish with an open nested value",
                call: "quiver_writer_finish",
                code: EINVAL,
                excerpt: &["incomplete", "node 4 'pt'", "still open"],
                run: |w| {
                    ok(quiver_begin(w, 4), w);
                    let mut a = FFI_ArrowArray::empty();
                    wr(w, quiver_writer_finish(w, &mut a))
                },
            },
            // -- values ------------------------------------------------------------------
            Case {
                class: "invalid UTF-8",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 1 'name'", "invalid UTF-8 at byte 2"],
                run: |w| wr(w, bytes(w, 1, b"ab\xff\xfe")),
            },
            Case {
                class: "invalid UTF-8 in a list item",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 3 'tags.item'", "invalid UTF-8 at byte 0"],
                run: |w| {
                    ok(quiver_begin(w, 2), w);
                    wr(w, bytes(w, 3, b"\xc3"))
                },
            },
            Case {
                class: "fixed-size binary of the wrong length",
                call: "quiver_append_bytes",
                code: EINVAL,
                excerpt: &["node 7 'fb'", "exactly 4 bytes, got 3"],
                run: |w| wr(w, bytes(w, 7, b"abc")),
            },
            Case {
                class: "decimal over its precision",
                call: "quiver_append_decimal",
                code: ERANGE,
                excerpt: &["node 8 'd'", "100000", "precision 5"],
                run: |w| wr(w, dec(w, 8, 100_000)),
            },
            Case {
                class: "negative decimal over its precision",
                call: "quiver_append_decimal",
                code: ERANGE,
                excerpt: &["node 8 'd'", "-100000", "precision 5"],
                run: |w| wr(w, dec(w, 8, -100_000)),
            },
            Case {
                class: "decimal over its precision (unscaled i64)",
                call: "quiver_append_i64",
                code: ERANGE,
                excerpt: &["node 8 'd'", "precision 5"],
                run: |w| wr(w, quiver_append_i64(w, 8, 123_456)),
            },
            Case {
                class: "decimal of more than 32 bytes",
                call: "quiver_append_decimal",
                code: EINVAL,
                excerpt: &["node 8 'd'", "1 to 32", "got 33"],
                run: |w| {
                    let b = [0u8; 33];
                    wr(w, quiver_append_decimal(w, 8, b.as_ptr(), 33))
                },
            },
            Case {
                class: "decimal of zero bytes",
                call: "quiver_append_decimal",
                code: EINVAL,
                excerpt: &["node 8 'd'", "got 0"],
                run: |w| {
                    let b = [0u8; 1];
                    wr(w, quiver_append_decimal(w, 8, b.as_ptr(), 0))
                },
            },
            // -- schemas -------------------------------------------------------------------
            Case {
                class: "malformed ArrowSchema: bad format string",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["malformed ArrowSchema", "zz"],
                run: |_| new_from_raw(raw_schema(Some("+s"), 1, Some(vec![raw_schema(Some("zz"), 0, None)]))),
            },
            Case {
                class: "malformed ArrowSchema: NULL format",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["schema.children[0]", "format is NULL"],
                run: |_| new_from_raw(raw_schema(Some("+s"), 1, Some(vec![raw_schema(None, 0, None)]))),
            },
            Case {
                class: "malformed ArrowSchema: n_children > 0, children NULL",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["n_children is 2 but children is NULL"],
                run: |_| new_from_raw(raw_schema(Some("+s"), 2, None)),
            },
            Case {
                class: "malformed ArrowSchema: a NULL child",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["children[1] is NULL"],
                run: |_| {
                    new_from_raw(raw_schema(Some("+s"), 2, Some(vec![raw_schema(Some("i"), 0, None), null_mut()])))
                },
            },
            Case {
                class: "malformed ArrowSchema: negative n_children",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["n_children is -1"],
                run: |_| new_from_raw(raw_schema(Some("+s"), -1, None)),
            },
            Case {
                class: "malformed ArrowSchema: released",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["released"],
                run: |_| {
                    let s = raw_schema(Some("+s"), 0, None);
                    (*s).release = None;
                    new_from_raw(s)
                },
            },
            Case {
                class: "malformed ArrowSchema: a released child",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["schema.children[0]", "released"],
                run: |_| {
                    let c = raw_schema(Some("i"), 0, None);
                    (*c).release = None;
                    new_from_raw(raw_schema(Some("+s"), 1, Some(vec![c])))
                },
            },
            Case {
                class: "unsupported type (run-end encoded, int8 run ends)",
                call: "quiver_writer_new",
                code: ENOSYS,
                excerpt: &["field 'c'", "not supported"],
                run: |_| {
                    new_from_raw(raw_schema(
                        Some("+s"),
                        1,
                        Some(vec![raw_schema(
                            Some("+r"),
                            2,
                            Some(vec![raw_schema(Some("c"), 0, None), raw_schema(Some("i"), 0, None)]),
                        )]),
                    ))
                },
            },
            Case {
                class: "bad option: batch_rows 0",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["batch_rows must be between 1 and 2147483647, got 0"],
                run: |_| {
                    let s = kitchen_ffi();
                    let o = options(0);
                    let mut out = null_mut();
                    t(quiver_writer_new(&s, &o, &mut out))
                },
            },
            Case {
                class: "bad option: batch_rows 2^31",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["batch_rows must be between 1 and 2147483647, got 2147483648"],
                run: |_| {
                    let s = kitchen_ffi();
                    let o = options(1 << 31);
                    let mut out = null_mut();
                    t(quiver_writer_new(&s, &o, &mut out))
                },
            },
            Case {
                class: "malformed ArrowSchema: a list without its child",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["schema.children[0]", "format \"+l\" takes 1 children"],
                run: |_| new_from_raw(raw_schema(Some("+s"), 1, Some(vec![raw_schema(Some("+l"), 0, None)]))),
            },
            Case {
                class: "malformed ArrowSchema: an int32 with a child",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["schema.children[0]", "format \"i\" takes 0 children"],
                run: |_| {
                    new_from_raw(raw_schema(
                        Some("+s"),
                        1,
                        Some(vec![raw_schema(Some("i"), 1, Some(vec![raw_schema(Some("i"), 0, None)]))]),
                    ))
                },
            },
            Case {
                class: "bad option: retain -1",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["retain must be >= 0, got -1"],
                run: |_| {
                    let s = kitchen_ffi();
                    let mut o = options(8);
                    o.retain = -1;
                    let mut out = null_mut();
                    t(quiver_writer_new(&s, &o, &mut out))
                },
            },
            Case {
                class: "schema text: unknown type",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["at position 16", "expected a type name", "ut8"],
                run: |_| parse(b"id: int64, name: ut8"),
            },
            Case {
                class: "schema text: missing '>'",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["at position 15", "'>'", "the end"],
                run: |_| parse(b"tags: list<utf8"),
            },
            Case {
                class: "schema text: missing ':'",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["at position 3", "':'"],
                run: |_| parse(b"id int64"),
            },
            Case {
                class: "schema text: two commas",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["at position 10", "a field name"],
                run: |_| parse(b"id: int64,, b: int8"),
            },
            Case {
                class: "schema text: empty",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["at position 2", "a field"],
                run: |_| parse(b"  "),
            },
            Case {
                class: "schema text: bad decimal precision",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["precision 1..=38"],
                run: |_| parse(b"d: decimal128(40, 2)"),
            },
            Case {
                class: "schema text: not UTF-8",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["not UTF-8"],
                run: |_| parse(b"a\xff: int8"),
            },
            // -- column path -----------------------------------------------------------------
            Case {
                class: "write_array of a mismatched type",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["node 0 'id' (Int64)", "array of type Int32"],
                run: |w| {
                    let (a, s) = ffi_of(&(Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef));
                    wr(w, quiver_write_array(w, 0, &a, &s))
                },
            },
            Case {
                class: "write_array of a released array",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["malformed ArrowArray", "released"],
                run: |w| {
                    let (_, s) = ffi_of(&(Arc::new(Int64Array::from(vec![1])) as ArrayRef));
                    let a = FFI_ArrowArray::empty();
                    wr(w, quiver_write_array(w, 0, &a, &s))
                },
            },
            Case {
                class: "write_array: array and schema child counts differ",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["malformed ArrowArray", "n_children is 2 but the schema has 1"],
                run: |w| write_array_child_mismatch(w),
            },
            Case {
                class: "write_array to a nested child node",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["node 3 'tags.item'", "not a top-level column"],
                run: |w| {
                    let (a, s) = ffi_of(&(Arc::new(StringArray::from(vec!["x"])) as ArrayRef));
                    wr(w, quiver_write_array(w, 3, &a, &s))
                },
            },
            Case {
                class: "write_array while a nested value is open",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["node 2 'tags'", "is open"],
                run: |w| {
                    ok(quiver_begin(w, 2), w);
                    let (a, s) = ffi_of(&(Arc::new(Int64Array::from(vec![1])) as ArrayRef));
                    wr(w, quiver_write_array(w, 0, &a, &s))
                },
            },
            // -- the memory limit (the case lifts it again, so the writer goes on) --
            Case {
                class: "a value past the memory limit (mid-row)",
                call: "quiver_append_bytes",
                code: ENOMEM,
                excerpt: &["memory limit of 4096 bytes", "this call needs"],
                run: |w| {
                    ok(quiver_writer_set_memory_limit(w, 4096), w);
                    ok(quiver_append_i64(w, 0, 20), w);
                    let r = wr(w, bytes(w, 1, &vec![b'x'; 1 << 20]));
                    ok(quiver_writer_set_memory_limit(w, 0), w);
                    r
                },
            },
            Case {
                class: "a column past the memory limit",
                call: "quiver_write_column",
                code: ENOMEM,
                excerpt: &["memory limit of 4096 bytes", "this call needs"],
                run: |w| {
                    ok(quiver_writer_set_memory_limit(w, 4096), w);
                    let v = vec![0i64; 1 << 16];
                    let r = wr(w, quiver_write_column(w, 0, v.as_ptr().cast(), null(), 1 << 16));
                    ok(quiver_writer_set_memory_limit(w, 0), w);
                    r
                },
            },
            Case {
                class: "a negative memory limit",
                call: "quiver_writer_set_memory_limit",
                code: EINVAL,
                excerpt: &["bytes must be >= 0, got -1"],
                run: |w| wr(w, quiver_writer_set_memory_limit(w, -1)),
            },
            Case {
                class: "write_column on a variable-width column",
                call: "quiver_write_column",
                code: EINVAL,
                excerpt: &["node 1 'name'", "not a fixed-width column"],
                run: |w| {
                    let v = [0u8; 8];
                    wr(w, quiver_write_column(w, 1, v.as_ptr().cast(), null(), 1))
                },
            },
            Case {
                class: "write_column with a negative length",
                call: "quiver_write_column",
                code: EINVAL,
                excerpt: &["length is negative (-1)"],
                run: |w| {
                    let v = [0i64; 1];
                    wr(w, quiver_write_column(w, 0, v.as_ptr().cast(), null(), -1))
                },
            },
            Case {
                class: "write_column with nulls into a non-nullable column",
                call: "quiver_write_column",
                code: EINVAL,
                excerpt: &["node 0 'id'", "not nullable", "1 nulls"],
                run: |w| {
                    let v = [1i64, 2];
                    let valid = [0b01u8];
                    wr(w, quiver_write_column(w, 0, v.as_ptr().cast(), valid.as_ptr(), 2))
                },
            },
            Case {
                class: "schema text nested over the bound (65 lists)",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["nested at least 65 levels deep", "over the bound of 64", "field 'x.item.item.item.…'"],
                run: |_| parse(deep_text(MAX_DEPTH).as_bytes()),
            },
            Case {
                class: "schema text nested a million lists deep",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["nested at least 65 levels deep", "over the bound of 64"],
                run: |_| parse(deep_text(1_000_000).as_bytes()),
            },
            Case {
                class: "schema text: a column over the fixed-width bytes bound of a row",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["up to 'x'", "2147483648 bytes", "over the bound of 16777216"],
                run: |_| parse(b"x: fixed_size_binary(2147483647)"),
            },
            Case {
                class: "schema text: columns within the bound each, over it together",
                call: "quiver_schema_parse",
                code: EINVAL,
                excerpt: &["a row takes 16777217 bytes", "up to 'b'", "over the bound of 16777216"],
                run: |_| parse(b"a: fixed_size_binary(8388608), b: fixed_size_binary(8388608)"),
            },
            Case {
                class: "ArrowSchema nested over the bound (65 lists)",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["nested 65 levels deep", "over the bound of 64", "field 'c.c.c.c.…'"],
                run: |_| new_from_raw(deep_raw(MAX_DEPTH)),
            },
            Case {
                class: "ArrowSchema nested a million lists deep",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["nested 1000000 levels deep", "over the bound of 64"],
                run: |_| new_from_raw(deep_raw(999_999)),
            },
            Case {
                class: "ArrowSchema whose child is itself",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["nested at least", "over the bound of 64"],
                run: |_| {
                    let list = raw_schema(Some("+l"), 1, Some(vec![null_mut()]));
                    *(*list).children = list;
                    new_from_raw(raw_schema(Some("+s"), 1, Some(vec![list])))
                },
            },
            Case {
                class: "ArrowSchema of more fields than the bound (shared children)",
                call: "quiver_writer_new",
                code: EINVAL,
                excerpt: &["more than 1048576 fields"],
                run: |_| {
                    let mut s = raw_schema(Some("i"), 0, None);
                    for _ in 0..30 {
                        s = raw_schema(Some("+s"), 2, Some(vec![s, s]));
                    }
                    new_from_raw(raw_schema(Some("+s"), 1, Some(vec![s])))
                },
            },
            Case {
                class: "ArrowSchema nested over the bound",
                call: "quiver_stream_new",
                code: EINVAL,
                excerpt: &["nested 65 levels deep", "over the bound of 64"],
                run: |_| {
                    let s = deep_raw(MAX_DEPTH) as *const FFI_ArrowSchema;
                    let mut o = FFI_ArrowArrayStream::empty();
                    t(quiver_stream_new(s, null(), Some(fill_nothing), null_mut(), None, &mut o))
                },
            },
            Case {
                class: "array schema nested over the bound",
                call: "quiver_write_array",
                code: EINVAL,
                excerpt: &["nested 65 levels deep", "over the bound of 64", "field 'array.c.c.c.…'"],
                run: |w| {
                    // The column's schema, 65 levels deep; the array is not read.
                    let column = *(*deep_raw(MAX_DEPTH)).children;
                    let a = FFI_ArrowArray::empty();
                    wr(w, quiver_write_array(w, 1, &a, column as *const FFI_ArrowSchema))
                },
            },
        ]
    }
}

/// `x: ` and `list<` `depth` times around `int32`: the item at depth + 1.
fn deep_text(depth: usize) -> String {
    format!("x: {}int32{}", "list<".repeat(depth), ">".repeat(depth))
}

/// A struct of one column `c`: `depth` lists around an int32 (leaked).
fn deep_raw(depth: usize) -> *mut ArrowSchema {
    let mut s = raw_schema(Some("i"), 0, None);
    for _ in 0..depth {
        s = raw_schema(Some("+l"), 1, Some(vec![s]));
    }
    raw_schema(Some("+s"), 1, Some(vec![s]))
}

fn ffi_of(a: &ArrayRef) -> (FFI_ArrowArray, FFI_ArrowSchema) {
    arrow_array::ffi::to_ffi(&a.to_data()).unwrap()
}

/// A struct array with 2 children under a struct schema with 1.
fn write_array_child_mismatch(w: *mut QuiverWriter) -> (i64, String) {
    let two = StructArray::from(vec![
        (
            Arc::new(Field::new("x", DataType::Float64, true)),
            Arc::new(arrow_array::Float64Array::from(vec![1.0])) as ArrayRef,
        ),
        (Arc::new(Field::new("y", DataType::Int8, false)), Arc::new(arrow_array::Int8Array::from(vec![1])) as ArrayRef),
    ]);
    let one = StructArray::from(vec![(
        Arc::new(Field::new("x", DataType::Float64, true)),
        Arc::new(arrow_array::Float64Array::from(vec![1.0])) as ArrayRef,
    )]);
    let (a, _) = ffi_of(&(Arc::new(two) as ArrayRef));
    let (_, s) = ffi_of(&(Arc::new(one) as ArrayRef));
    // SAFETY: valid structs, deliberately mismatched.
    wr(w, unsafe { quiver_write_array(w, 4, &a, &s) })
}

fn check_message(class: &str, call: &str, msg: &str, excerpt: &[&str]) {
    if excerpt.is_empty() {
        return;
    }
    let short = call.trim_start_matches("quiver_");
    assert!(msg.contains(short), "{class}: message {msg:?} does not name the call {short}");
    for part in excerpt {
        assert!(msg.contains(part), "{class} ({call}): message {msg:?} lacks {part:?}");
    }
}

#[test]
fn c_api_bad_input_table() {
    let cases = cases();
    let classes: std::collections::BTreeSet<&str> =
        cases.iter().filter(|c| !c.class.starts_with("NULL")).map(|c| c.class).collect();
    assert!(classes.len() >= 25, "{} non-NULL classes", classes.len());
    let mut failures = Vec::new();
    for c in &cases {
        if let Err(e) = std::panic::catch_unwind(|| run_c_case(c)) {
            let m = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            failures.push(format!("{} ({}): {}", c.class, c.call, m.unwrap_or_default()));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    assert_eq!(live_arrays_of_this_thread(), 0);
}

fn run_c_case(c: &Case) {
    {
        let w = c_writer(KITCHEN, None);
        // SAFETY: a live writer for the whole case.
        unsafe {
            c_row(w.0, 0);
            c_row(w.0, 1);
            let (rc, msg) = (c.run)(w.0);
            assert_eq!(rc, c.code, "{} ({}): got {rc}, message {msg:?}", c.class, c.call);
            check_message(c.class, c.call, &msg, c.excerpt);
            // Nothing committed changed; the writer goes on.
            assert_eq!(quiver_writer_rows(w.0), 2, "{}: committed rows", c.class);
            ok(quiver_abort_row(w.0), w.0);
            c_row(w.0, 2);
            c_finish_check(w.0, 0..3);
            c_row(w.0, 3);
            c_finish_check(w.0, 3..4);
        }
    }
}

#[test]
fn opts_null_means_defaults_and_reference_rows_match_arrow_builders() {
    let w = c_writer(KITCHEN, None);
    // SAFETY: live writer.
    unsafe {
        for i in 0..12 {
            c_row(w.0, i);
        }
        let mut out = FFI_ArrowArray::empty();
        ok(quiver_writer_finish(w.0, &mut out), w.0);
        // The renderer read against a batch made by arrow's own builders, so
        // `expected_row` is anchored outside quiver for a few columns.
        let data = borrow_import(&out, &struct_type(&kitchen_schema()));
        let s = StructArray::from(data);
        let ids = Int64Array::from((0..12).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(s.column(0).to_data(), ids.to_data());
        let names = StringArray::from((0..12).map(|i| (i % 3 != 2).then(|| format!("name{i}"))).collect::<Vec<_>>());
        assert_eq!(s.column(1).to_data(), names.to_data());
        assert_eq!(exported::rows_of(&s), expected_rows(0..12));
    }
}

// ---- library bugs this table found (fixed; kept as regression tests) ------------------

/// A failed column write must leave nothing behind. (Found by this table: the
/// rejected values of an ERANGE from `quiver_write_column` on a decimal
/// column stayed in the column's buffer; now the precision is checked before
/// anything is written.)
#[test]
fn write_column_decimal_over_precision_changes_nothing() {
    let w = c_writer(KITCHEN, None);
    // SAFETY: live writer, valid buffers.
    unsafe {
        c_row(w.0, 0);
        c_row(w.0, 1);
        let v: [i128; 2] = [1, 1_000_000];
        let rc = quiver_write_column(w.0, 8, v.as_ptr().cast(), null(), 2);
        assert_eq!(rc as i64, ERANGE, "{}", werr(w.0));
        assert!(werr(w.0).contains("precision 5"));
        ok(quiver_abort_row(w.0), w.0);
        c_row(w.0, 2);
        c_finish_check(w.0, 0..3);
    }
}

/// Same for a nullable column through the Rust API: the rejected validity
/// bits and null count stay behind too.
#[test]
fn rust_write_column_decimal_over_precision_changes_nothing() {
    let mut w = ArrowWriter::from_text("d: decimal128(5, 2)", WriterOptions::default()).unwrap();
    w.write_column::<i128>(0, &[5, 6], None).unwrap();
    let e = w.write_column::<i128>(0, &[7, 1_000_000, 0], Some(&[0b011])).unwrap_err();
    assert_eq!(e.code(), ErrorCode::OutOfRange);
    w.append_decimal(0, 9).unwrap();
    w.end_row().unwrap();
    let b = w.finish().unwrap();
    b.column(0).to_data().validate_full().unwrap();
    assert_eq!(exported::column_cells(b.column(0).as_ref()), vec!["5", "6", "9"]);
}

/// `length * width` must not overflow: 2^61 rows of int64 is 2^64 bytes,
/// which wrapped to 0, and the call succeeded with 2^61 rows committed over
/// an empty buffer. Now EINVAL.
#[test]
fn write_column_length_overflow_is_refused() {
    let w = c_writer("a: int64 not null", None);
    let v = [0i64; 1];
    // SAFETY: live writer; the length is the bad input.
    let rc = unsafe { quiver_write_column(w.0, 0, v.as_ptr().cast(), null(), 1 << 61) };
    // SAFETY: live writer.
    let rows = unsafe { quiver_writer_rows(w.0) };
    assert_eq!(rc as i64, EINVAL, "accepted: {rows} rows now committed over an empty values buffer");
    assert!(werr(w.0).contains("do not fit in memory"), "{}", werr(w.0));
    assert_eq!(rows, 0);
}

/// A list schema (`+l`) without its child: arrow's import asserts on the
/// missing child; the caller got ENOTRECOVERABLE for what is a malformed
/// schema. Now EINVAL, with the child count named.
#[test]
fn list_schema_without_child_is_einval() {
    let (rc, msg) = new_from_raw(raw_schema(Some("+s"), 1, Some(vec![raw_schema(Some("+l"), 0, None)])));
    assert_eq!(rc, EINVAL, "{msg}");
    assert!(msg.contains("malformed ArrowSchema") && msg.contains("takes 1 children"), "{msg}");
}

/// batch_rows was accepted up to i64::MAX, and the first write then computed
/// the row capacity in bytes with a wrapping multiplication and panicked:
/// the writer was poisoned by a bad option. Now EINVAL from
/// quiver_writer_new, naming the limit.
#[test]
fn huge_batch_rows_is_refused_up_front() {
    let s = FFI_ArrowSchema::try_from(&parse_schema("a: int64 not null").unwrap()).unwrap();
    let o = options(i64::MAX);
    let mut w = null_mut();
    // SAFETY: valid pointers.
    let rc = unsafe { quiver_writer_new(&s, &o, &mut w) };
    assert_eq!(rc as i64, EINVAL);
    assert!(w.is_null());
    let msg = cstr(quiver_last_error());
    assert!(msg.contains("batch_rows") && msg.contains("2147483647"), "{msg}");
    // The largest batch_rows taken reserves a bounded capacity up front.
    let o = options(quiver::MAX_BATCH_ROWS as i64);
    let w = c_writer("a: int64 not null", Some(o));
    // SAFETY: live writer.
    unsafe {
        ok(quiver_append_i64(w.0, 0, 1), w.0);
        ok(quiver_end_row(w.0), w.0);
        let mut st = QuiverStats::default();
        ok(quiver_writer_stats(w.0, &mut st), w.0);
        assert!(st.bytes_allocated < 64 << 20, "{} bytes reserved", st.bytes_allocated);
    }
}

// ---- calls after a caught panic ----------------------------------------------------

/// A panic inside a call (injected: the one this table found, see
/// `huge_batch_rows_is_refused_up_front`, is fixed): after it, every call on
/// the writer returns ENOTRECOVERABLE with a message saying so, and free
/// still works.
#[test]
fn calls_after_a_caught_panic_are_enotrecoverable() {
    let w = c_writer("a: int64 not null, s: utf8", None);
    // SAFETY: live writer.
    unsafe {
        quiver::ffi::writer::inject_panic_for_tests(w.0);
        let rc = quiver_append_i64(w.0, 0, 1);
        assert_eq!(rc as i64, ENOTRECOVERABLE);
        let m = werr(w.0);
        assert!(m.contains("append_i64") && m.contains("panic caught") && m.contains("poisoned"), "{m}");
        type Call<'a> = (&'static str, Box<dyn Fn() -> c_int + 'a>);
        let after: Vec<Call> = vec![
            ("quiver_append_i64", Box::new(|| quiver_append_i64(w.0, 0, 1))),
            ("quiver_append_bytes", Box::new(|| bytes(w.0, 1, b"x"))),
            ("quiver_append_null", Box::new(|| quiver_append_null(w.0, 1))),
            ("quiver_begin", Box::new(|| quiver_begin(w.0, 0))),
            ("quiver_end", Box::new(|| quiver_end(w.0, 0))),
            ("quiver_end_row", Box::new(|| quiver_end_row(w.0))),
            ("quiver_abort_row", Box::new(|| quiver_abort_row(w.0))),
            ("quiver_write_column", Box::new(|| quiver_write_column(w.0, 0, [1i64].as_ptr().cast(), null(), 1))),
            ("quiver_writer_finish", Box::new(|| quiver_writer_finish(w.0, &mut FFI_ArrowArray::empty()))),
        ];
        for (call, f) in after {
            let rc = f();
            assert_eq!(rc as i64, ENOTRECOVERABLE, "{call}");
            let m = werr(w.0);
            assert!(m.contains(call.trim_start_matches("quiver_")) && m.contains("poisoned"), "{call}: {m}");
        }
        assert_eq!(quiver_writer_rows(w.0), 0);
        let mut st = QuiverStats::default();
        ok(quiver_writer_stats(w.0, &mut st), w.0);
    }
    assert_eq!(live_arrays_of_this_thread(), 0);
}

// ---- finish with no rows --------------------------------------------------------------

#[test]
fn finish_with_no_rows_is_a_valid_empty_batch() {
    let w = c_writer(KITCHEN, None);
    let dt = struct_type(&kitchen_schema());
    // SAFETY: live writer.
    unsafe {
        for round in 0..3 {
            let mut out = FFI_ArrowArray::empty();
            ok(quiver_writer_finish(w.0, &mut out), w.0);
            assert_eq!(out.len(), 0);
            assert_eq!(out.num_children(), 9);
            assert!(render_exported(&out, &dt).is_empty());
            c_row(w.0, round);
            c_finish_check(w.0, round..round + 1);
        }
        let mut st = QuiverStats::default();
        ok(quiver_writer_stats(w.0, &mut st), w.0);
        assert_eq!(st.batches, 6);
    }
}

// ---- streams ----------------------------------------------------------------------------

const STREAM_SCHEMA: &str = "id: int64 not null, s: utf8";

fn stream_row(k: i64) -> Vec<String> {
    vec![k.to_string(), q(&format!("r{k}"))]
}

unsafe fn stream_append(w: *mut QuiverWriter, k: i64) -> c_int {
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe {
        let rc = quiver_append_i64(w, 0, k);
        if rc != 0 {
            return rc;
        }
        let rc = bytes(w, 1, format!("r{k}").as_bytes());
        if rc != 0 {
            return rc;
        }
        quiver_end_row(w)
    }
}

/// What a C fill does in each call, by call number.
#[derive(Clone, Copy, PartialEq, Debug)]
enum FillMode {
    /// 3 rows per call, then (call 2) fail with a message.
    FailWithMessage,
    /// 3 rows, then fail without setting a message.
    FailSilently,
    /// Writes max_rows + 1 rows.
    TooMany,
    /// Writes 2 rows, leaves a third incomplete and returns 0.
    Incomplete,
    /// Leaves a row incomplete (no row committed) and returns 0.
    HalfRowOnly,
    /// The first append panics inside the library (injected).
    LibraryPanic,
    /// Sets a 64-byte memory limit; the first row does not fit: returns ENOMEM.
    NoRoomForARow,
}

struct FillCtx {
    mode: FillMode,
    calls: i64,
    next: i64,
    released: *mut bool,
}

unsafe extern "C" fn fill(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int {
    // SAFETY: the FillCtx given to quiver_stream_new.
    let c = unsafe { &mut *(ctx as *mut FillCtx) };
    c.calls += 1;
    // SAFETY: `w` is the stream's live writer, handed to this fill.
    unsafe {
        match c.mode {
            FillMode::FailWithMessage | FillMode::FailSilently if c.calls == 2 => {
                if c.mode == FillMode::FailWithMessage {
                    quiver_writer_set_error(w, c"disk gone at row 3".as_ptr());
                }
                -1
            }
            FillMode::TooMany => {
                for _ in 0..=max_rows {
                    let rc = stream_append(w, c.next);
                    assert_eq!(rc, 0);
                    c.next += 1;
                }
                0
            }
            FillMode::Incomplete => {
                for _ in 0..2 {
                    assert_eq!(stream_append(w, c.next), 0);
                    c.next += 1;
                }
                quiver_append_i64(w, 0, 1);
                0
            }
            FillMode::HalfRowOnly => {
                quiver_append_i64(w, 0, 1);
                0
            }
            FillMode::NoRoomForARow => {
                quiver_writer_set_memory_limit(w, 64);
                let rc = quiver_append_i64(w, 0, 1);
                if rc != 0 {
                    return rc;
                }
                bytes(w, 1, &[b'x'; 100])
            }
            FillMode::LibraryPanic => {
                quiver::ffi::writer::inject_panic_for_tests(w);
                quiver_append_i64(w, 0, 1)
            }
            _ => {
                for _ in 0..3.min(max_rows) {
                    assert_eq!(stream_append(w, c.next), 0);
                    c.next += 1;
                }
                0
            }
        }
    }
}

unsafe extern "C" fn release_fill_ctx(ctx: *mut c_void) {
    // SAFETY: the boxed FillCtx given to quiver_stream_new, released once.
    let c = unsafe { Box::from_raw(ctx as *mut FillCtx) };
    // SAFETY: `released` points to the test's flag, which outlives the stream.
    unsafe { *c.released = true };
}

fn c_stream(mode: FillMode, batch_rows: i64, released: &mut bool) -> FFI_ArrowArrayStream {
    let s = FFI_ArrowSchema::try_from(&parse_schema(STREAM_SCHEMA).unwrap()).unwrap();
    let o = options(batch_rows);
    let ctx = Box::into_raw(Box::new(FillCtx { mode, calls: 0, next: 0, released }));
    let mut out = FFI_ArrowArrayStream::empty();
    // SAFETY: valid pointers; the stream owns ctx on success.
    let rc = unsafe { quiver_stream_new(&s, &o, Some(fill), ctx.cast(), Some(release_fill_ctx), &mut out) };
    assert_eq!(rc, 0, "{}", terr());
    out
}

fn next(s: &mut FFI_ArrowArrayStream) -> (i64, FFI_ArrowArray, String) {
    let mut a = FFI_ArrowArray::empty();
    // SAFETY: a live stream from quiver.
    let rc = unsafe { (s.get_next().unwrap())(s, &mut a) };
    // SAFETY: a live stream from quiver; a non-NULL message is a NUL-terminated string.
    let m = cstr(unsafe { (s.get_last_error().unwrap())(s) });
    (rc as i64, a, if rc == 0 { String::new() } else { m })
}

fn stream_type() -> DataType {
    struct_type(&parse_schema(STREAM_SCHEMA).unwrap())
}

/// Rows in the table that the stream tests check (class, call, code, excerpt).
const STREAM_CASES: &[(&str, &str, i64, &[&str])] = &[
    ("fill callback fails (message set)", "get_next", EIO, &["fill callback returned -1", "disk gone at row 3"]),
    ("fill callback fails (no message)", "get_next", EIO, &["fill callback returned -1", "(no message set)"]),
    ("fill writes more than max_rows", "get_next", EINVAL, &["fill wrote 5 rows, more than max_rows 4"]),
    ("fill returns 0 with an incomplete row", "get_next", EINVAL, &["after fill", "incomplete"]),
    ("fill returns 0 with only a half row", "get_next", EINVAL, &["after fill", "row 0 is incomplete"]),
    ("fill triggers a panic inside the library", "get_next", ENOTRECOVERABLE, &["fill", "append_i64", "panic caught"]),
    ("Rust fill closure panics", "get_next", ENOTRECOVERABLE, &["fill panicked", "boom"]),
    ("Rust fill closure returns an error", "get_next", EIO, &["fill failed", "bad row 7"]),
    (
        "fill returns ENOMEM with no row committed",
        "get_next",
        ENOMEM,
        &["fill callback returned ENOMEM", "memory limit of 64 bytes"],
    ),
    (
        "Rust fill closure gets ENOMEM with no row committed",
        "get_next",
        ENOMEM,
        &["fill failed", "memory limit of 64 bytes"],
    ),
    ("get_next with out NULL", "get_next", EINVAL, &["get_next: out is NULL"]),
    ("get_schema with out NULL", "get_schema", EINVAL, &["get_schema: out is NULL"]),
    ("utf8 offsets past 2^31-1 in a fill", "quiver_append_bytes", EOVERFLOW, &["append_bytes", "node 1 's'", "2^31-1"]),
];

fn stream_case(class: &str) -> (i64, &'static [&'static str]) {
    let c = STREAM_CASES.iter().find(|c| c.0 == class).unwrap_or_else(|| panic!("no stream case {class}"));
    (c.2, c.3)
}

#[track_caller]
fn check_stream_error(class: &str, rc: i64, msg: &str) {
    let (code, excerpt) = stream_case(class);
    assert_eq!(rc, code, "{class}: {msg}");
    for part in excerpt {
        assert!(msg.contains(part), "{class}: message {msg:?} lacks {part:?}");
    }
}

#[test]
fn fill_failure_is_eio_with_message_and_sticky() {
    for (mode, class) in [
        (FillMode::FailWithMessage, "fill callback fails (message set)"),
        (FillMode::FailSilently, "fill callback fails (no message)"),
    ] {
        let mut released = false;
        let mut s = c_stream(mode, 16, &mut released);
        let (rc, first, _) = next(&mut s);
        assert_eq!(rc, 0);
        let (rc, a, msg) = next(&mut s);
        check_stream_error(class, rc, &msg);
        assert!(a.is_released());
        // Sticky: the same code and message again, and the fill is not called again.
        for _ in 0..2 {
            let (rc2, _, msg2) = next(&mut s);
            assert_eq!((rc2, msg2.as_str()), (rc, msg.as_str()));
        }
        drop(s);
        assert!(released, "release_ctx ran with the stream's release");
        // The batch from before the failure is intact after the stream is gone.
        assert_eq!(render_exported(&first, &stream_type()), (0..3).map(stream_row).collect::<Vec<_>>());
    }
    assert_eq!(live_arrays_of_this_thread(), 0);
}

#[test]
fn fill_writing_too_much_or_an_incomplete_row_fails_the_stream() {
    for (mode, class) in [
        (FillMode::TooMany, "fill writes more than max_rows"),
        (FillMode::Incomplete, "fill returns 0 with an incomplete row"),
    ] {
        let mut released = false;
        let mut s = c_stream(mode, 4, &mut released);
        let (rc, a, msg) = next(&mut s);
        check_stream_error(class, rc, &msg);
        assert!(a.is_released());
        let (rc2, _, msg2) = next(&mut s);
        assert_eq!((rc2, msg2), (rc, msg), "sticky");
        drop(s);
        assert!(released);
    }
}

/// A fill that commits no row but leaves a half row fails the stream with
/// EINVAL, as a half row after committed rows does: ending the stream
/// instead would drop the value silently (docs/ffi.md).
#[test]
fn fill_with_only_a_half_row_fails_the_stream() {
    let class = "fill returns 0 with only a half row";
    let mut released = false;
    let mut s = c_stream(FillMode::HalfRowOnly, 4, &mut released);
    let (rc, a, msg) = next(&mut s);
    check_stream_error(class, rc, &msg);
    assert!(a.is_released());
    let (rc2, _, msg2) = next(&mut s);
    assert_eq!((rc2, msg2), (rc, msg), "sticky");
    drop(s);
    assert!(released);
    // The Rust stream: a closure that ends with only a half row, likewise.
    let w = rust_writer(STREAM_SCHEMA, 4);
    let mut st = WriterStream::new(w, |w: &mut ArrowWriter, _| {
        w.append_i64(0, 1)?;
        Ok(Step::End)
    });
    let e = st.next().unwrap().unwrap_err().to_string();
    assert!(e.contains("after fill") && e.contains("row 0 is incomplete"), "{e}");
    assert!(st.next().unwrap().is_err(), "sticky");
}

#[test]
fn fill_that_panics_inside_the_library_poisons_the_stream() {
    let class = "fill triggers a panic inside the library";
    let mut released = false;
    let mut s = c_stream(FillMode::LibraryPanic, 4, &mut released);
    let (rc, a, msg) = next(&mut s);
    check_stream_error(class, rc, &msg);
    assert!(a.is_released());
    let (rc2, _, msg2) = next(&mut s);
    assert_eq!((rc2, msg2), (rc, msg), "sticky");
    drop(s);
    assert!(released);
}

#[test]
fn stream_out_null_is_einval() {
    let mut released = false;
    let mut s = c_stream(FillMode::FailSilently, 4, &mut released);
    // SAFETY: a live stream; out deliberately NULL.
    unsafe {
        let rc = (s.get_next().unwrap())(&mut s, null_mut()) as i64;
        check_stream_error("get_next with out NULL", rc, &cstr((s.get_last_error().unwrap())(&mut s)));
        let rc = (s.get_schema().unwrap())(&mut s, null_mut()) as i64;
        check_stream_error("get_schema with out NULL", rc, &cstr((s.get_last_error().unwrap())(&mut s)));
    }
    // The stream still works after both.
    let (rc, a, _) = next(&mut s);
    assert_eq!(rc, 0);
    assert_eq!(render_exported(&a, &stream_type()), (0..3).map(stream_row).collect::<Vec<_>>());
}

fn rust_writer(text: &str, batch_rows: usize) -> ArrowWriter {
    ArrowWriter::from_text(text, WriterOptions { batch_rows, ..WriterOptions::default() }).unwrap()
}

#[test]
fn fill_getting_enomem_with_no_row_committed_fails_the_stream() {
    let mut released = false;
    let mut s = c_stream(FillMode::NoRoomForARow, 16, &mut released);
    let (rc, a, msg) = next(&mut s);
    check_stream_error("fill returns ENOMEM with no row committed", rc, &msg);
    assert!(a.is_released());
    drop(s);
    assert!(released);
    let mut stream = WriterStream::new(rust_writer(STREAM_SCHEMA, 8), |w: &mut ArrowWriter, _max| {
        w.set_memory_limit(64);
        w.append_i64(0, 1)?;
        w.append_str(1, &"x".repeat(100))?;
        w.end_row()?;
        Ok(Step::End)
    });
    let e = quiver::BatchSource::next_batch(&mut stream).unwrap().unwrap_err();
    check_stream_error("Rust fill closure gets ENOMEM with no row committed", e.errno() as i64, e.message());
}

#[test]
fn rust_fill_closure_that_panics_or_fails() {
    for class in ["Rust fill closure panics", "Rust fill closure returns an error"] {
        let panics = class.contains("panics");
        let mut call = 0;
        let stream = WriterStream::new(rust_writer(STREAM_SCHEMA, 8), move |w: &mut ArrowWriter, _max| {
            call += 1;
            if call == 2 {
                w.append_i64(0, 7)?; // a half row: must not leak into anything
                if panics {
                    panic!("boom");
                }
                return Err(QuiverError::new(ErrorCode::InvalidArgument, "bad row 7"));
            }
            for k in 0..3 {
                w.append_i64(0, k)?;
                w.append_str(1, &format!("r{k}"))?;
                w.end_row()?;
            }
            Ok(Step::Batch)
        });
        let mut s = stream.into_ffi();
        let (rc, first, _) = next(&mut s);
        assert_eq!(rc, 0);
        let (rc, a, msg) = next(&mut s);
        check_stream_error(class, rc, &msg);
        assert!(a.is_released());
        let (rc2, _, msg2) = next(&mut s);
        assert_eq!((rc2, msg2), (rc, msg), "sticky");
        drop(s);
        assert_eq!(render_exported(&first, &stream_type()), (0..3).map(stream_row).collect::<Vec<_>>());
    }
    // The same through the RecordBatchReader: an error, then the same error.
    let mut reader =
        WriterStream::new(rust_writer(STREAM_SCHEMA, 8), |_: &mut ArrowWriter, _| -> quiver::Result<Step> {
            panic!("boom")
        });
    let e1 = reader.next().unwrap().unwrap_err().to_string();
    let e2 = reader.next().unwrap().unwrap_err().to_string();
    assert!(e1.contains("fill panicked: boom"), "{e1}");
    assert_eq!(e1, e2);
    assert_eq!(reader.schema().fields().len(), 2);
    assert_eq!(live_arrays_of_this_thread(), 0);
}

#[test]
fn stream_end_is_a_released_array_again_and_again() {
    let stream = WriterStream::new(rust_writer(STREAM_SCHEMA, 8), |_: &mut ArrowWriter, _| Ok(Step::End));
    let mut s = stream.into_ffi();
    for _ in 0..3 {
        let (rc, a, _) = next(&mut s);
        assert_eq!(rc, 0);
        assert!(a.is_released());
    }
}

// ---- EOVERFLOW: a utf8 column past 2^31-1 bytes, run once with big appends ----------------

const BIG: usize = 256 << 20;
const BIG_ROWS: i64 = 10;

struct BigCtx {
    value: Vec<u8>,
    next: i64,
    overflows: Vec<(i64, String, i64)>,
}

fn big_prefix(k: i64) -> [u8; 8] {
    let mut p = *b"row-0000";
    p[4..].copy_from_slice(format!("{k:04}").as_bytes());
    p
}

unsafe extern "C" fn big_fill(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int {
    // SAFETY: the BigCtx given to quiver_stream_new, alive while the stream is.
    let c = unsafe { &mut *(ctx as *mut BigCtx) };
    let mut written = 0;
    // SAFETY: `w` is the stream's live writer, handed to this fill.
    unsafe {
        while written < max_rows && c.next < BIG_ROWS {
            assert_eq!(quiver_append_i64(w, 0, c.next), 0);
            c.value[..8].copy_from_slice(&big_prefix(c.next));
            let rc = bytes(w, 1, &c.value);
            if rc as i64 == EOVERFLOW {
                // The batch so far stays; this row goes into the next batch.
                c.overflows.push((rc as i64, werr(w), quiver_writer_rows(w)));
                assert_eq!(quiver_abort_row(w), 0);
                assert!(written > 0, "a single value overflowed an empty batch");
                return 0;
            }
            assert_eq!(rc, 0, "{}", werr(w));
            assert_eq!(quiver_end_row(w), 0);
            written += 1;
            c.next += 1;
        }
    }
    0
}

fn check_big_batch(a: &FFI_ArrowArray, rows: std::ops::Range<i64>) {
    let data = borrow_import(a, &stream_type());
    data.validate_full().unwrap();
    let s = StructArray::from(data);
    assert_eq!(s.len() as i64, rows.end - rows.start);
    let ids: Vec<i64> = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec();
    assert_eq!(ids, rows.clone().collect::<Vec<_>>());
    let strs = s.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    for (j, k) in rows.enumerate() {
        let v = strs.value(j).as_bytes();
        assert_eq!(v.len(), BIG);
        assert_eq!(&v[..8], &big_prefix(k));
        assert!(v[8..].iter().all(|&b| b == b'x'), "row {k} bytes changed");
    }
}

#[test]
fn utf8_offsets_past_2_31_end_the_batch_early_and_go_on() {
    let s = FFI_ArrowSchema::try_from(&parse_schema(STREAM_SCHEMA).unwrap()).unwrap();
    let o = options(16);
    let mut ctx = BigCtx { value: vec![b'x'; BIG], next: 0, overflows: Vec::new() };
    let mut st = FFI_ArrowArrayStream::empty();
    // SAFETY: ctx outlives the stream (released at the end of this test), no release_ctx.
    let rc = unsafe { quiver_stream_new(&s, &o, Some(big_fill), (&mut ctx as *mut BigCtx).cast(), None, &mut st) };
    assert_eq!(rc, 0);
    // 7 values of 256 MiB are 1,879,048,192 bytes; the 8th would end at 2^31.
    let (rc, b1, _) = next(&mut st);
    assert_eq!(rc, 0);
    let (rc, b2, _) = next(&mut st);
    assert_eq!(rc, 0);
    let (rc, end, _) = next(&mut st);
    assert_eq!(rc, 0);
    assert!(end.is_released(), "stream ends after all rows");
    drop(st);
    assert_eq!(ctx.overflows.len(), 1);
    let (code, msg, rows) = ctx.overflows[0].clone();
    check_stream_error("utf8 offsets past 2^31-1 in a fill", code, &msg);
    assert!(msg.contains("2147483648"), "{msg}");
    assert_eq!(rows, 7, "committed rows at the failing append");
    check_big_batch(&b1, 0..7);
    check_big_batch(&b2, 7..BIG_ROWS);
    drop((b1, b2));
    assert_eq!(live_arrays_of_this_thread(), 0);
}

// ---- the same classes through the Rust API ----------------------------------------------

struct RustCase {
    class: &'static str,
    call: &'static str,
    code: ErrorCode,
    excerpt: &'static [&'static str],
    run: fn(&mut ArrowWriter) -> quiver::Result<()>,
}

fn rust_row(w: &mut ArrowWriter, i: i64) {
    (|| -> quiver::Result<()> {
        w.append_i64(0, i * 10)?;
        if i % 3 == 2 {
            w.append_null(1)?
        } else {
            w.append_str(1, &format!("name{i}"))?
        }
        if i % 4 == 3 {
            w.append_null(2)?
        } else {
            w.begin(2)?;
            for j in 0..i % 3 {
                w.append_str(3, &format!("t{i}.{j}"))?;
            }
            w.end(2)?;
        }
        if i % 5 == 4 {
            w.append_null(4)?
        } else {
            w.begin(4)?;
            w.append_f64(5, i as f64 * 0.5)?;
            w.append_i8(6, i as i8)?;
            w.end(4)?;
        }
        let fb: Vec<u8> = (0..4).map(|k| (i as u8).wrapping_add(k)).collect();
        w.append_bytes(7, &fb)?;
        if i % 6 == 5 {
            w.append_null(8)?
        } else {
            w.append_decimal(8, i as i128 * 7 - 3)?
        }
        w.begin(9)?;
        w.append_i16(10, i as i16)?;
        w.append_i16(10, -(i as i16))?;
        w.end(9)?;
        w.begin(11)?;
        for j in 0..(i % 2) + 1 {
            w.begin(12)?;
            w.append_str(13, &format!("k{j}"))?;
            w.append_i64(14, i * 100 + j)?;
            w.end(12)?;
        }
        w.end(11)?;
        w.append_bool(15, i % 2 == 0)?;
        w.end_row()
    })()
    .unwrap()
}

fn rust_cases() -> Vec<RustCase> {
    vec![
        RustCase {
            class: "a value past the memory limit (mid-row)",
            call: "append_str",
            code: ErrorCode::OutOfMemory,
            excerpt: &["memory limit of 4096 bytes", "this call needs"],
            run: |w| {
                w.set_memory_limit(4096);
                w.append_i64(0, 20)?;
                let r = w.append_str(1, &"x".repeat(1 << 20));
                w.set_memory_limit(0);
                r
            },
        },
        RustCase {
            class: "an array past the memory limit",
            call: "write_array",
            code: ErrorCode::OutOfMemory,
            excerpt: &["memory limit of 4096 bytes", "this call needs"],
            run: |w| {
                w.set_memory_limit(4096);
                let r = w
                    .write_array(1, &arrow_array::StringArray::from_iter_values((0..1 << 14).map(|i| format!("v{i}"))));
                w.set_memory_limit(0);
                r
            },
        },
        RustCase {
            class: "unknown node",
            call: "append_i64",
            code: ErrorCode::InvalidArgument,
            excerpt: &["unknown node 40"],
            run: |w| w.append_i64(40, 1),
        },
        RustCase {
            class: "append of the wrong type",
            call: "append_f32",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 5 'pt.x'", "wrong type"],
            run: |w| {
                w.begin(4)?;
                w.append_f32(5, 1.0)
            },
        },
        RustCase {
            class: "append to a struct child without begin",
            call: "append_i8",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 6 'pt.y'", "not open"],
            run: |w| w.append_i8(6, 1),
        },
        RustCase {
            class: "append to a list child without begin",
            call: "append_str",
            code: ErrorCode::InvalidArgument,
            excerpt: &["append_bytes", "node 3 'tags.item'", "not open"],
            run: |w| w.append_str(3, "x"),
        },
        RustCase {
            class: "end without begin",
            call: "end",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 4 'pt'", "was not begun"],
            run: |w| w.end(4),
        },
        RustCase {
            class: "end_row with a missing column",
            call: "end_row",
            code: ErrorCode::InvalidArgument,
            excerpt: &["row 2", "no value for node 0 'id'"],
            run: |w| w.end_row(),
        },
        RustCase {
            class: "invalid UTF-8",
            call: "append_bytes",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 1 'name'", "invalid UTF-8 at byte 0"],
            run: |w| w.append_bytes(1, &[0x80]),
        },
        RustCase {
            class: "fixed-size binary of the wrong length",
            call: "append_bytes",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 7 'fb'", "exactly 4 bytes, got 5"],
            run: |w| w.append_bytes(7, b"abcde"),
        },
        RustCase {
            class: "decimal over its precision",
            call: "append_decimal",
            code: ErrorCode::OutOfRange,
            excerpt: &["node 8 'd'", "precision 5"],
            run: |w| w.append_decimal(8, 99_999_999),
        },
        RustCase {
            class: "write_array of a mismatched type",
            call: "write_array",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 1 'name' (Utf8)", "Int64"],
            run: |w| w.write_array(1, &Int64Array::from(vec![1])),
        },
        RustCase {
            class: "write_column of the wrong width",
            call: "write_column",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 0 'id'", "8-byte values", "4-byte"],
            run: |w| w.write_column::<i32>(0, &[1, 2], None),
        },
        RustCase {
            class: "write_column with too little validity",
            call: "write_column",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 15 'flag'", "validity"],
            run: |w| w.write_column_bytes(15, &[0xff, 0xff], Some(&[0xff]), 16),
        },
        RustCase {
            class: "finish with an incomplete row",
            call: "finish",
            code: ErrorCode::InvalidArgument,
            excerpt: &["row 2 is incomplete"],
            run: |w| {
                w.append_bool(15, true)?;
                w.finish().map(|_| ())
            },
        },
        RustCase {
            class: "null into a non-nullable column",
            call: "append_null",
            code: ErrorCode::InvalidArgument,
            excerpt: &["node 0 'id'", "not nullable"],
            run: |w| w.append_null(0),
        },
        RustCase {
            class: "schema nested over the bound (65 lists)",
            call: "create",
            code: ErrorCode::InvalidArgument,
            excerpt: &["nested 65 levels deep", "over the bound of 64", "field 'x.item.item.item.…'"],
            run: |_| {
                let mut dt = DataType::Int32;
                for _ in 0..MAX_DEPTH {
                    dt = DataType::List(Arc::new(Field::new("item", dt, true)));
                }
                ArrowWriter::create(Arc::new(Schema::new(vec![Field::new("x", dt, true)])), WriterOptions::default())
                    .map(|_| ())
            },
        },
        RustCase {
            class: "write_array of an array nested over the bound",
            call: "write_array",
            code: ErrorCode::InvalidArgument,
            excerpt: &["nested 65 levels deep", "over the bound of 64", "field 'array.item.item.item.…'"],
            run: |w| {
                let mut dt = DataType::Int32;
                for _ in 0..MAX_DEPTH {
                    dt = DataType::List(Arc::new(Field::new("item", dt, true)));
                }
                w.write_array(2, &arrow_array::new_null_array(&dt, 1))
            },
        },
    ]
}

#[test]
fn rust_api_bad_input_table() {
    let dt = struct_type(&kitchen_schema());
    for c in rust_cases() {
        let mut w = ArrowWriter::create(Arc::new(kitchen_schema()), WriterOptions::default()).unwrap();
        rust_row(&mut w, 0);
        rust_row(&mut w, 1);
        let e = (c.run)(&mut w).expect_err(c.class);
        assert_eq!(e.code(), c.code, "{}: {e}", c.class);
        assert_eq!(e.errno() as i64, c.code.errno() as i64);
        let short = c.call.trim_end_matches("_str");
        check_message(c.class, short, e.message(), c.excerpt);
        assert_eq!(w.rows(), 2, "{}", c.class);
        w.abort_row().unwrap();
        rust_row(&mut w, 2);
        let b = StructArray::from(w.finish().unwrap());
        b.to_data().validate_full().unwrap();
        assert_eq!(exported::rows_of(&b), expected_rows(0..3), "{}", c.class);
        let _ = &dt;
    }
    // Rust-only misuse: an empty schema text, and a writer with no rows.
    let e = parse_schema("").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("position 0"), "{}", e.message());
    let mut w = ArrowWriter::create(Arc::new(kitchen_schema()), WriterOptions::default()).unwrap();
    let b = w.finish().unwrap();
    assert_eq!(b.num_rows(), 0);
    StructArray::from(b).to_data().validate_full().unwrap();
}

// ---- docs/bad-input.md must list exactly these cases --------------------------------------

fn code_name(code: i64) -> String {
    match code {
        EINVAL => "EINVAL".into(),
        ENOSYS => "ENOSYS".into(),
        ERANGE => "ERANGE".into(),
        EIO => "EIO".into(),
        EOVERFLOW => "EOVERFLOW".into(),
        ENOMEM => "ENOMEM".into(),
        ENOTRECOVERABLE => "ENOTRECOVERABLE".into(),
        0 => "0 (no-op)".into(),
        other => format!("returns {other}"),
    }
}

fn rust_code_name(code: ErrorCode) -> String {
    code_name(code.errno() as i64)
}

fn table() -> String {
    let mut out = String::new();
    out.push_str("| # | class | call | code | message contains |\n| --- | --- | --- | --- | --- |\n");
    let mut n = 0;
    let mut row = |class: &str, call: &str, code: String, excerpt: &[&str]| {
        n += 1;
        let ex = if excerpt.is_empty() {
            "—".to_string()
        } else {
            excerpt.iter().map(|e| format!("`{}`", e.replace('|', "\\|"))).collect::<Vec<_>>().join(", ")
        };
        out.push_str(&format!("| {n} | {class} | `{call}` | {code} | {ex} |\n"));
    };
    for c in cases() {
        row(c.class, c.call, code_name(c.code), c.excerpt);
    }
    for (class, call, code, excerpt) in STREAM_CASES {
        row(class, call, code_name(*code), excerpt);
    }
    for c in rust_cases() {
        row(&format!("{} (Rust API)", c.class), &format!("ArrowWriter::{}", c.call), rust_code_name(c.code), c.excerpt);
    }
    out
}

#[test]
fn doc_table_matches() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/bad-input.md");
    let (begin, end) = ("<!-- table:begin -->\n", "<!-- table:end -->");
    let doc = std::fs::read_to_string(path).unwrap_or_default();
    let want = table();
    let current = doc.find(begin).and_then(|b| doc[b..].find(end).map(|e| &doc[b + begin.len()..b + e]));
    if current != Some(want.as_str()) {
        if std::env::var_os("QUIVER_BLESS").is_some() {
            let b = doc.find(begin).expect("docs/bad-input.md has the table markers");
            let e = b + doc[b..].find(end).unwrap();
            let new = format!("{}{begin}{want}{}", &doc[..b], &doc[e..]);
            std::fs::write(path, new).unwrap();
        } else {
            panic!("docs/bad-input.md table is stale: run QUIVER_BLESS=1 cargo test --release --test bad_input doc_table_matches");
        }
    }
}
