//! The schema text parser against the writer, for any bytes. Used by the
//! fuzz target `schema_text` and replayed by `tests/schema_text.rs` (the
//! seed corpus, fuzz/corpus/schema_text/seed-*, and every reduced crash,
//! fuzz/regressions/schema_text/).
//!
//! The input is the text itself. For every input:
//! - `quiver_schema_parse` (C, the bytes up to the first NUL) and, when the
//!   bytes are UTF-8, `parse_schema` (Rust) agree: both accept or both refuse
//!   with EINVAL and a message;
//! - a schema the parser accepts, the writer accepts: `ArrowWriter::create`
//!   and `quiver_writer_new` (on the parser's exported `ArrowSchema`) both
//!   succeed; the property of docs/schema-text.md, never accepted by one and
//!   refused by the other;
//! - that writer writes a row of nulls: `append_null` on every top-level
//!   column succeeds exactly when the column can be null (nullable or of
//!   type null, and a union's first member nullable), else EINVAL; then
//!   `end_row` (or `abort_row`) and `finish`, whose batch passes
//!   `validate_full` and has the rows written; through the C writer the same
//!   codes, and its batch is imported and validated;
//! - the schema prints back (`schema_to_text`) to a text that parses to the
//!   same schema.
//!
//! Any disagreement panics with the text.

use std::ffi::{c_int, CStr, CString};
use std::ptr::null_mut;
use std::sync::Arc;

use arrow_array::{Array, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema};

use quiver::ffi::options::{quiver_options_default, QuiverOptions};
use quiver::ffi::quiver_last_error;
use quiver::ffi::schema::quiver_schema_parse;
use quiver::ffi::writer::*;
use quiver::{parse_schema, schema_to_text, ArrowWriter, ErrorCode, WriterOptions};

const EINVAL: c_int = 22;

/// Options of every writer: the defaults (8192 rows per batch), so that what
/// a batch reserves up front for the widest rows the bounds allow
/// (`quiver::depth::MAX_ROW_BYTES`) is exercised too: a few rows, not 8192 of
/// them.
fn options() -> WriterOptions {
    WriterOptions::default()
}

fn c_options() -> QuiverOptions {
    let mut o = QuiverOptions { batch_rows: 0, recycle: false, retain: 0, validate_utf8: false };
    // SAFETY: a struct to fill.
    unsafe { quiver_options_default(&mut o) };
    o
}

fn last_error() -> String {
    let p = quiver_last_error();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library's thread-local message.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Whether a null of a top-level column of `field` must be taken.
fn takes_null(field: &Field) -> bool {
    match field.data_type() {
        DataType::Null => true,
        _ if !field.is_nullable() => false,
        DataType::Union(fields, _) => fields.iter().next().is_some_and(|(_, f)| f.is_nullable()),
        _ => true,
    }
}

/// The C parse of `bytes` (up to the first NUL): the schema on success.
fn c_parse(bytes: &[u8]) -> Result<FFI_ArrowSchema, String> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = CString::new(&bytes[..end]).expect("no NUL before end");
    let mut out = FFI_ArrowSchema::empty();
    // SAFETY: a NUL-terminated text, a struct to write.
    let rc = unsafe { quiver_schema_parse(text.as_ptr(), &mut out) };
    match rc {
        0 => Ok(out),
        EINVAL => {
            let msg = last_error();
            assert!(msg.starts_with("quiver_schema_parse: "), "{text:?}: message {msg:?}");
            Err(msg)
        }
        other => panic!("quiver_schema_parse of {text:?}: code {other} ({})", last_error()),
    }
}

pub fn run(data: &[u8]) {
    let c = c_parse(data);
    let nul = data.contains(&0);
    let Ok(text) = std::str::from_utf8(data) else {
        // Not UTF-8: the C parse refuses it unless a NUL cuts the bad bytes off.
        if !nul {
            assert!(c.is_err(), "quiver_schema_parse took bytes that are not UTF-8: {data:?}");
        }
        return;
    };
    let rust = parse_schema(text);
    if !nul {
        assert_eq!(
            rust.is_ok(),
            c.is_ok(),
            "Rust and C parsers disagree on {text:?}: {:?} / {:?}",
            rust,
            c.as_ref().err()
        );
    }
    let schema = match rust {
        Ok(s) => s,
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text:?}: {e}");
            assert!(e.message().starts_with("schema text: "), "{text:?}: {e}");
            assert!(e.message().len() < 400, "{text:?}: a {}-byte message", e.message().len());
            return;
        }
    };
    // The parser accepted it: the writer must.
    let mut w = ArrowWriter::create(Arc::new(schema.clone()), options())
        .unwrap_or_else(|e| panic!("the parser accepts {text:?}, ArrowWriter::create refuses it: {e}"));
    let takes: Vec<bool> = schema.fields().iter().map(|f| takes_null(f)).collect();
    for (i, take) in takes.iter().enumerate() {
        let node = top_node(&w, &schema, i);
        let name = schema.field(i).name();
        if schema.fields().iter().filter(|f| f.name() == name).count() == 1 {
            assert_eq!(w.column_node(name), Some(node), "{text:?}: column {i}'s node");
        }
        match w.append_null(node) {
            Ok(()) => assert!(take, "{text:?}: column {i} took a null it cannot hold"),
            Err(e) => {
                assert!(!take, "{text:?}: column {i} refused a null: {e}");
                assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text:?}: {e}");
            }
        }
    }
    let all = takes.iter().all(|t| *t);
    if all {
        w.end_row().unwrap_or_else(|e| panic!("{text:?}: end_row: {e}"));
    } else {
        w.abort_row().unwrap_or_else(|e| panic!("{text:?}: abort_row: {e}"));
    }
    let batch = w.finish().unwrap_or_else(|e| panic!("{text:?}: finish: {e}"));
    assert_eq!(batch.num_rows(), usize::from(all), "{text:?}");
    let data = StructArray::from(batch).to_data();
    data.validate_full().unwrap_or_else(|e| panic!("{text:?}: the batch is invalid: {e}"));

    // The C writer on the parser's exported schema.
    if let Ok(ffi) = &c {
        c_writer(text, ffi, &schema, &takes);
    }

    // Printed back, it parses to the same schema.
    let printed = schema_to_text(&schema).unwrap_or_else(|e| panic!("{text:?} parses but does not print: {e}"));
    let again = parse_schema(&printed).unwrap_or_else(|e| panic!("{text:?} prints as {printed:?}, refused: {e}"));
    assert_eq!(again, schema, "{text:?} prints as {printed:?}, which parses to another schema");
}

/// The node number of top-level column `i` (columns are numbered in
/// pre-order, so it is the count of public nodes before it).
fn top_node(w: &ArrowWriter, schema: &Schema, i: usize) -> usize {
    let mut node = 0;
    for f in &schema.fields()[..i] {
        node += public_nodes(f.data_type()) + 1;
    }
    assert!(node < w.node_count());
    node
}

/// Public nodes under a field of `dt` (a dictionary's or run-end type's
/// value node is hidden, its children are not; run ends have no node).
fn public_nodes(dt: &DataType) -> usize {
    let mut n: i64 = 0;
    let mut stack = vec![dt];
    while let Some(dt) = stack.pop() {
        let children: Vec<&DataType> = match dt {
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::FixedSizeList(f, _)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::Map(f, _) => vec![f.data_type()],
            DataType::Struct(fs) => fs.iter().map(|f| f.data_type()).collect(),
            DataType::Union(fs, _) => fs.iter().map(|(_, f)| f.data_type()).collect(),
            DataType::Dictionary(_, v) => {
                n -= 1;
                vec![v.as_ref()]
            }
            DataType::RunEndEncoded(_, v) => {
                n -= 1;
                vec![v.data_type()]
            }
            _ => vec![],
        };
        n += children.len() as i64;
        stack.extend(children);
    }
    n as usize
}

fn c_writer(text: &str, ffi: &FFI_ArrowSchema, schema: &Schema, takes: &[bool]) {
    let mut w = null_mut();
    // SAFETY: the parser's exported schema, borrowed.
    let o = c_options();
    // SAFETY: `ffi` is the parser's exported schema, `o` valid options; `w` is written on success.
    let rc = unsafe { quiver_writer_new(ffi, &o, &mut w) };
    assert_eq!(rc, 0, "the parser accepts {text:?}, quiver_writer_new refuses it: {}", last_error());
    // SAFETY: the writer just made, freed at the end.
    unsafe {
        let mut node = 0u32;
        for (i, f) in schema.fields().iter().enumerate() {
            let rc = quiver_append_null(w, node);
            assert_eq!(rc == 0, takes[i], "{text:?}: quiver_append_null on column {i}: {rc} {}", last_error());
            if rc != 0 {
                assert_eq!(rc, EINVAL, "{text:?}: {}", last_error());
            }
            node += public_nodes(f.data_type()) as u32 + 1;
        }
        let all = takes.iter().all(|t| *t);
        let rc = if all { quiver_end_row(w) } else { quiver_abort_row(w) };
        assert_eq!(rc, 0, "{text:?}: {}", last_error());
        let mut out = FFI_ArrowArray::empty();
        assert_eq!(quiver_writer_finish(w, &mut out), 0, "{text:?}: {}", last_error());
        let mut exported = FFI_ArrowSchema::empty();
        assert_eq!(quiver_writer_export_schema(w, &mut exported), 0, "{text:?}: {}", last_error());
        let data = arrow_array::ffi::from_ffi(out, &exported).unwrap_or_else(|e| panic!("{text:?}: import: {e}"));
        data.validate_full().unwrap_or_else(|e| panic!("{text:?}: the C batch is invalid: {e}"));
        assert_eq!(data.len(), usize::from(all), "{text:?}");
        quiver_writer_free(w);
    }
}
