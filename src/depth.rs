//! The one nesting bound of quiver, and the checks that enforce it before
//! anything recursive sees a caller's structure (docs/reliability.md,
//! "Recursion and the nesting bound").
//!
//! Depth counts fields: a top-level column is at depth 1, the item of a list
//! column at 2, and so on; a dictionary's value type and each child of a
//! run-end encoded type are one level below it, a map's entries one level
//! and its key and value two. A C `ArrowSchema` counts the same way: the
//! struct whose children are the columns is depth 0, each child and
//! dictionary struct one more than its parent.
//!
//! Every walk here is iterative, so a structure of any depth (a million
//! levels, or a C schema whose children point back at their parent) is
//! measured and refused without using more stack than a flat one.

use std::ffi::CStr;

use arrow_schema::{DataType, Schema};

use crate::error::{QuiverError, Result};
use crate::ffi::abi::ArrowSchema;

/// The deepest nesting a writer, the schema text parser and the column path
/// take: a field at depth `MAX_DEPTH` is accepted, one at `MAX_DEPTH + 1`
/// is `EINVAL`.
pub const MAX_DEPTH: usize = 64;

/// The most fields (nested ones and dictionary values included) a schema
/// may have, the same for the text, an arrow `Schema` and a C
/// `ArrowSchema`. It also ends the walk of a C schema whose child pointers
/// form a cycle.
pub const MAX_FIELDS: usize = 1 << 20;

/// The most bytes of fixed-width data one row may take: the widths of every
/// field, each multiplied by the sizes of the fixed-size lists above it,
/// summed over struct, union and run-end children and over all the columns,
/// plus one bit for every value at every level (its validity, or its place
/// in a length), rounded up to a byte. A row of nulls takes them all (zeros
/// under every null), so a schema over it could make one row allocate
/// terabytes, or count more values than a length holds; the text, an arrow
/// `Schema` and (once imported) a C `ArrowSchema` are refused instead.
/// `x: fixed_size_binary(16777215)` is at the bound. What a batch reserves
/// up front is bounded separately (a few rows of such a schema, not
/// `batch_rows` of them).
pub const MAX_ROW_BYTES: u64 = 1 << 24;

/// Names shown in a refusal: the first levels of the path, not all of them.
const PATH_LEVELS: usize = 4;
/// Bytes shown of each name in a refusal, at most: whole characters only, so
/// a name of 4-byte characters shows 6 of them, and a refusal stays short
/// whatever the names.
const NAME_BYTES: usize = 24;

/// The start of `name` shown in a refusal: the longest prefix of whole
/// characters within [`NAME_BYTES`].
fn shown_name(name: &str) -> String {
    let mut end = name.len().min(NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// Keeps the path to the node being visited (names of its ancestors and its
/// own, at most `PATH_LEVELS` of them kept) and records the first node over
/// the bound and the deepest depth seen.
struct Walk {
    /// First `PATH_LEVELS` names of the path to the current node.
    path: Vec<String>,
    /// Path of the first node found over the bound.
    over: Option<Vec<String>>,
    deepest: usize,
    fields: usize,
}

impl Walk {
    fn new() -> Self {
        Walk { path: Vec::new(), over: None, deepest: 0, fields: 0 }
    }

    /// Counts `n` more fields found (pushed on the walk's stack, so that
    /// the stack too stays within the bound). Returns false when that passes
    /// the field bound and the walk must stop.
    fn found(&mut self, n: usize) -> bool {
        self.fields = self.fields.saturating_add(n);
        self.fields <= MAX_FIELDS
    }

    /// Visits a node at `depth` named `name` (depth >= 1).
    fn visit(&mut self, name: &str, depth: usize) {
        if depth <= PATH_LEVELS {
            self.path.truncate(depth - 1);
            self.path.push(shown_name(name));
        }
        self.deepest = self.deepest.max(depth);
        if depth > MAX_DEPTH && self.over.is_none() {
            self.over = Some(self.path.clone());
        }
    }

    /// The result of the walk; `complete` is false when it stopped at the
    /// field bound.
    fn finish(self, call: &str, complete: bool) -> Result<()> {
        if let Some(path) = self.over {
            return Err(depth_error(call, self.deepest, !complete, &path));
        }
        if !complete {
            return Err(QuiverError::invalid(format!(
                "{call}: more than {MAX_FIELDS} fields (nested fields included), over the bound of {MAX_FIELDS}"
            )));
        }
        Ok(())
    }
}

/// The refusal of a structure nested deeper than [`MAX_DEPTH`]: the depth
/// (`at least` it when the walk stopped early), the bound and the first
/// levels of the path.
pub(crate) fn depth_error(call: &str, depth: usize, at_least: bool, path: &[String]) -> QuiverError {
    let shown = path.iter().take(PATH_LEVELS).map(|s| shown_name(s)).collect::<Vec<_>>().join(".");
    let more = if depth > path.len().min(PATH_LEVELS) { ".…" } else { "" };
    let at_least = if at_least { "at least " } else { "" };
    QuiverError::invalid(format!(
        "{call}: nested {at_least}{depth} levels deep, over the bound of {MAX_DEPTH}: field '{shown}{more}'"
    ))
}

/// The nested fields of a data type, one level below it, with their names;
/// a dictionary's value type is named `values`.
fn children_of(dt: &DataType) -> Vec<(&str, &DataType)> {
    match dt {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => vec![(f.name().as_str(), f.data_type())],
        DataType::Struct(fields) => fields.iter().map(|f| (f.name().as_str(), f.data_type())).collect(),
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| (f.name().as_str(), f.data_type())).collect(),
        DataType::Dictionary(_, value) => vec![("values", value.as_ref())],
        DataType::RunEndEncoded(run_ends, values) => {
            vec![(run_ends.name().as_str(), run_ends.data_type()), (values.name().as_str(), values.data_type())]
        }
        _ => Vec::new(),
    }
}

/// Bytes one value of `dt` itself takes in its own buffers, its children
/// not included (validity bits not counted).
fn own_bytes(dt: &DataType) -> u64 {
    match dt {
        DataType::Null | DataType::Struct(_) | DataType::FixedSizeList(..) | DataType::RunEndEncoded(..) => 0,
        DataType::Boolean => 1,
        DataType::FixedSizeBinary(n) => (*n).max(0) as u64,
        DataType::Utf8View | DataType::BinaryView | DataType::ListView(_) | DataType::LargeListView(_) => 16,
        DataType::Union(_, mode) => 1 + 4 * u64::from(*mode == arrow_schema::UnionMode::Dense),
        DataType::Dictionary(key, _) => key.primitive_width().unwrap_or(8) as u64,
        other => other.primitive_width().unwrap_or(8) as u64,
    }
}

/// Walks `roots` (name and type of fields at depth 1) iteratively.
fn walk_types<'a>(roots: impl DoubleEndedIterator<Item = (&'a str, &'a DataType)>, call: &str) -> Result<()> {
    let mut walk = Walk::new();
    // (name, type, depth, fixed-size list sizes above it multiplied, top-level column)
    let mut stack: Vec<(&str, &DataType, usize, u64, usize)> =
        roots.enumerate().map(|(i, (n, t))| (n, t, 1, 1, i)).collect::<Vec<_>>().into_iter().rev().collect();
    if !walk.found(stack.len()) {
        return walk.finish(call, false);
    }
    // Per column: bytes of fixed-width data, and values at every level (bits).
    let mut value_bytes: Vec<u64> = vec![0; stack.len()];
    let mut value_bits: Vec<u64> = vec![0; stack.len()];
    let names: Vec<&str> = stack.iter().rev().map(|e| e.0).collect();
    while let Some((name, dt, depth, mult, column)) = stack.pop() {
        walk.visit(name, depth);
        value_bytes[column] = value_bytes[column].saturating_add(mult.saturating_mul(own_bytes(dt)));
        value_bits[column] = value_bits[column].saturating_add(mult);
        let children = children_of(dt);
        if !walk.found(children.len()) {
            return walk.finish(call, false);
        }
        let mult = match dt {
            DataType::FixedSizeList(_, n) => mult.saturating_mul((*n).max(0) as u64),
            _ => mult,
        };
        stack.extend(children.into_iter().rev().map(|(n, t)| (n, t, depth + 1, mult, column)));
    }
    walk.finish(call, true)?;
    // The running sum over the columns; the first column where it passes the
    // bound is named.
    let (mut bytes, mut bits) = (0u64, 0u64);
    for i in 0..value_bytes.len() {
        bytes = bytes.saturating_add(value_bytes[i]);
        bits = bits.saturating_add(value_bits[i]);
        let row_bytes = bytes.saturating_add(bits.div_ceil(8));
        if row_bytes > MAX_ROW_BYTES {
            return Err(QuiverError::invalid(format!(
                "{call}: a row takes {} bytes of fixed-width data (widths times fixed-size list sizes and a bit per \
                 value, summed over the columns up to '{}'), over the bound of {MAX_ROW_BYTES}",
                if row_bytes == u64::MAX { "2^64 or more".to_string() } else { row_bytes.to_string() },
                shown_name(names[i]),
            )));
        }
    }
    Ok(())
}

/// Checks every column of `schema` against [`MAX_DEPTH`] and the whole
/// schema against [`MAX_FIELDS`], without recursion. `call` starts the
/// message (`create: nested 65 levels deep, ...`).
pub fn check_schema(schema: &Schema, call: &str) -> Result<()> {
    walk_types(schema.fields().iter().map(|f| (f.name().as_str(), f.data_type())), call)
}

/// Checks the type of an array handed to the column path: the array is a
/// column (depth 1, named `array` in the message), its children below it.
pub fn check_data_type(data_type: &DataType, call: &str) -> Result<()> {
    // A type without children is one field at depth 1: only its own width
    // and its one bit can pass a bound, so the walk (which allocates) is
    // left to the types that nest and to the refusal's message.
    if children_of(data_type).is_empty() && own_bytes(data_type).saturating_add(1) <= MAX_ROW_BYTES {
        return Ok(());
    }
    walk_types(std::iter::once(("array", data_type)), call)
}

/// Checks a caller's C `ArrowSchema` against [`MAX_DEPTH`] and
/// [`MAX_FIELDS`] before anything recursive (quiver's structure check,
/// arrow's import) reads it. `schema` is at `root_depth`: 0 for the struct
/// whose children are the columns (`quiver_writer_new`, `quiver_stream_new`),
/// 1 for a column's array (`quiver_write_array`, named `array` in the
/// message whatever its name).
///
/// The walk only follows pointers the structure check would follow too: it
/// does not descend into a released struct (`release` NULL), a NULL
/// `children` array or child, or an `n_children` outside 0..=2^20; those are
/// left to the structure check, which names them.
///
/// # Safety
/// `schema` is NULL or points to a readable `ArrowSchema` whose non-NULL
/// `children` (with `n_children` in range) and `dictionary` pointers, of
/// every struct not released, point to readable structs, recursively.
pub unsafe fn check_ffi_schema(
    schema: *const arrow_schema::ffi::FFI_ArrowSchema,
    call: &str,
    root_depth: usize,
) -> Result<()> {
    let mut walk = Walk::new();
    walk.found(usize::from(root_depth > 0));
    let mut stack: Vec<(*const ArrowSchema, usize)> = vec![(ArrowSchema::from_ffi(schema), root_depth)];
    while let Some((s, depth)) = stack.pop() {
        if s.is_null() {
            continue;
        }
        // SAFETY: per the contract, `s` is readable (the root, or a child or
        // dictionary pointer of a struct checked below).
        let raw = unsafe { &*s };
        if depth > 0 {
            let name = if depth == root_depth {
                // The array handed to the column path, as in check_data_type.
                "array".to_string()
            } else if raw.name.is_null() {
                String::new()
            } else {
                // SAFETY: a non-NULL name is a NUL-terminated string.
                unsafe { CStr::from_ptr(raw.name) }.to_string_lossy().into_owned()
            };
            walk.visit(&name, depth);
        }
        if raw.release.is_none() {
            continue;
        }
        let n_children = if raw.n_children > 0 && raw.n_children <= 1 << 20 && !raw.children.is_null() {
            raw.n_children as usize
        } else {
            0
        };
        if !walk.found(n_children + usize::from(!raw.dictionary.is_null())) {
            return walk.finish(call, false);
        }
        if !raw.dictionary.is_null() {
            stack.push((raw.dictionary.cast_const(), depth + 1));
        }
        if n_children > 0 {
            for i in (0..n_children).rev() {
                // SAFETY: `children` holds `n_children` pointers.
                stack.push((unsafe { *raw.children.add(i) }.cast_const(), depth + 1));
            }
        }
    }
    walk.finish(call, true)
}
