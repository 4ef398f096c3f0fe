//! The nesting bound at every entry (docs/reliability.md, "Recursion and the
//! nesting bound"): the schema text (Rust and C), `ArrowWriter::create`, the
//! C schema import of `quiver_writer_new` and `quiver_stream_new`, and the
//! arrays `write_array` takes (Rust and C). For every nesting constructor,
//! schemas are generated with their deepest field at the bound (accepted,
//! and a nested row written down to the leaf, finished, exported over the C
//! Data Interface, validated and released, all on a small thread stack), at
//! the bound + 1 and at 1,000,000 levels (refused with EINVAL and a short
//! message naming the depth, the bound and the first levels of the path, the
//! process alive).
//!
//! Structures a million levels deep are leaked, not dropped: arrow's own
//! `Drop` of such a `DataType` or array recurses once per level.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{make_array, new_null_array, Array, ArrayRef, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Fields, Schema, UnionFields, UnionMode};

mod leaf_types;

use quiver::ffi::abi::ArrowSchema;
use quiver::ffi::quiver_last_error;
use quiver::ffi::schema::quiver_schema_parse;
use quiver::ffi::stream::quiver_stream_new;
use quiver::ffi::writer::*;
use quiver::{parse_schema, ArrowWriter, ErrorCode, WriterOptions, MAX_DEPTH, MAX_FIELDS};

const EINVAL: c_int = 22;
const MILLION: usize = 1_000_000;

/// The stack every bound-depth cycle runs on: a quarter of a JVM thread's
/// default 1 MiB (docs/reliability.md gives the measured need).
const SMALL_STACK: usize = 256 << 10;

/// A nesting constructor: how one level (or two) wraps the type below it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ctor {
    List,
    LargeList,
    FixedSizeList,
    Struct,
    /// `map<int32, T>`: the entries struct and the value, two levels.
    Map,
    SparseUnion,
    DenseUnion,
    ListView,
    LargeListView,
    /// `dictionary<int32, list<T>>`: the dictionary's values (a list) and
    /// its item, two levels.
    Dictionary,
    /// `run_end_encoded<int32, list<T>>`: the values (a list) and its item.
    RunEndEncoded,
}

const CTORS: [Ctor; 11] = [
    Ctor::List,
    Ctor::LargeList,
    Ctor::FixedSizeList,
    Ctor::Struct,
    Ctor::Map,
    Ctor::SparseUnion,
    Ctor::DenseUnion,
    Ctor::ListView,
    Ctor::LargeListView,
    Ctor::Dictionary,
    Ctor::RunEndEncoded,
];

impl Ctor {
    fn levels(self) -> usize {
        match self {
            Ctor::Map | Ctor::Dictionary | Ctor::RunEndEncoded => 2,
            _ => 1,
        }
    }
}

/// The wraps, outermost first, that put the deepest field of a column at
/// `depth` (the column is depth 1): `ctor` as often as it fits, a list for
/// an odd level left by a two-level constructor.
fn plan(ctor: Ctor, depth: usize) -> Vec<Ctor> {
    let mut out = Vec::new();
    let mut level = 1;
    while level < depth {
        let c = if level + ctor.levels() <= depth { ctor } else { Ctor::List };
        level += c.levels();
        out.push(c);
    }
    out
}

fn item(dt: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", dt, true))
}

/// One level of `ctor` around `inner` (moved in, never cloned deeply).
fn wrap(ctor: Ctor, inner: DataType) -> DataType {
    match ctor {
        Ctor::List => DataType::List(item(inner)),
        Ctor::LargeList => DataType::LargeList(item(inner)),
        Ctor::FixedSizeList => DataType::FixedSizeList(item(inner), 1),
        Ctor::Struct => DataType::Struct(Fields::from(vec![Field::new("a", inner, true)])),
        Ctor::Map => {
            let kv = Fields::from(vec![Field::new("key", DataType::Int32, false), Field::new("value", inner, true)]);
            DataType::Map(Arc::new(Field::new("entries", DataType::Struct(kv), false)), false)
        }
        Ctor::SparseUnion | Ctor::DenseUnion => DataType::Union(
            UnionFields::try_new(vec![0], vec![Field::new("a", inner, true)]).unwrap(),
            if ctor == Ctor::DenseUnion { UnionMode::Dense } else { UnionMode::Sparse },
        ),
        Ctor::ListView => DataType::ListView(item(inner)),
        Ctor::LargeListView => DataType::LargeListView(item(inner)),
        Ctor::Dictionary => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::List(item(inner)))),
        Ctor::RunEndEncoded => DataType::RunEndEncoded(
            Arc::new(Field::new("run_ends", DataType::Int32, false)),
            Arc::new(Field::new("values", DataType::List(item(inner)), true)),
        ),
    }
}

/// The type of a column whose deepest field (an int32) is at `depth`.
fn deep_type(ctor: Ctor, depth: usize) -> DataType {
    plan(ctor, depth).into_iter().rev().fold(DataType::Int32, |inner, c| wrap(c, inner))
}

fn deep_schema(ctor: Ctor, depth: usize) -> Schema {
    Schema::new(vec![Field::new("x", deep_type(ctor, depth), true)])
}

/// The same column in the text form: `x: ` and the wraps around `int32`.
fn deep_text(ctor: Ctor, depth: usize) -> String {
    let wraps = plan(ctor, depth);
    let mut open = String::from("x: ");
    let mut close = Vec::new();
    for c in &wraps {
        let (o, cl) = match c {
            Ctor::List => ("list<", ">"),
            Ctor::LargeList => ("large_list<", ">"),
            Ctor::FixedSizeList => ("fixed_size_list<", ", 1>"),
            Ctor::Struct => ("struct<a: ", ">"),
            Ctor::Map => ("map<int32, ", ">"),
            Ctor::SparseUnion => ("sparse_union<a: ", ">"),
            Ctor::DenseUnion => ("dense_union<a: ", ">"),
            Ctor::ListView => ("list_view<", ">"),
            Ctor::LargeListView => ("large_list_view<", ">"),
            Ctor::Dictionary => ("dictionary<int32, list<", ">>"),
            Ctor::RunEndEncoded => ("run_end_encoded<int32, list<", ">>"),
        };
        open.push_str(o);
        close.push(cl);
    }
    close.reverse();
    open + "int32" + &close.concat()
}

/// Runs `f` on a thread with `stack` bytes of stack and returns its result;
/// a stack overflow there would kill the whole test process.
fn on_stack<T: Send + 'static>(stack: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(stack).spawn(f).unwrap().join().unwrap()
}

/// The refusal every entry gives: EINVAL, the depth (or at least it), the
/// bound, the first levels of the path (`x` and the next names), not all.
fn check_refusal(what: &str, msg: &str, depth_words: &str, first: &str) {
    assert!(msg.contains(depth_words), "{what}: {msg:?} lacks {depth_words:?}");
    assert!(msg.contains(&format!("over the bound of {MAX_DEPTH}")), "{what}: {msg:?}");
    assert!(msg.contains(&format!("field '{first}")), "{what}: {msg:?} lacks the path start {first:?}");
    assert!(msg.contains(".…'"), "{what}: {msg:?}: the path is not cut short");
    assert!(msg.len() < 300, "{what}: a {}-byte message: {msg:?}", msg.len());
}

/// How a refusal states the depth of a `ctor` column `depth` deep: exactly,
/// or "at least" a depth over the bound when the column has more fields than
/// the field bound (maps and run-end encoded columns a million deep), where
/// the walk stops.
fn depth_words(ctor: Ctor, depth: usize) -> String {
    let fields: usize = 1 + plan(ctor, depth)
        .iter()
        .map(|c| match c {
            Ctor::Map | Ctor::RunEndEncoded => 3,
            Ctor::Dictionary => 2,
            _ => 1,
        })
        .sum::<usize>();
    if fields <= MAX_FIELDS {
        format!("nested {depth} levels deep")
    } else {
        "nested at least ".to_string()
    }
}

// ---- the row written at the bound ----------------------------------------------------

/// Writes one row whose value reaches the leaf (an int32 at the bound) and
/// returns how many levels it opened; the column path follows `plan`.
fn write_deep_row(w: &mut ArrowWriter, ctor: Ctor, depth: usize) {
    let node = |w: &ArrowWriter, path: &str| w.node(path).unwrap_or_else(|| panic!("no node {path}"));
    let mut path = String::from("x");
    let mut ends = Vec::new();
    for c in plan(ctor, depth) {
        let n = node(w, &path);
        w.begin(n).unwrap();
        ends.push(n);
        match c {
            Ctor::Struct | Ctor::SparseUnion | Ctor::DenseUnion => path.push_str(".a"),
            Ctor::Map => {
                path.push_str(".entries");
                let e = node(w, &path);
                w.begin(e).unwrap();
                ends.push(e);
                w.append_i32(node(w, &format!("{path}.key")), 1).unwrap();
                path.push_str(".value");
            }
            _ => path.push_str(".item"),
        }
    }
    w.append_i32(node(w, &path), 7).unwrap();
    for n in ends.into_iter().rev() {
        w.end(n).unwrap();
    }
    w.end_row().unwrap();
}

/// The cycle at the bound: a writer, a deep row and a null row, finish,
/// validation, export over the C Data Interface, import, release.
fn bound_cycle(mut w: ArrowWriter, ctor: Ctor, depth: usize) {
    write_deep_row(&mut w, ctor, depth);
    w.append_null(0).unwrap();
    w.end_row().unwrap();
    let batch = StructArray::from(w.finish().unwrap());
    assert_eq!(batch.len(), 2);
    batch.to_data().validate_full().unwrap();
    let exported = quiver::export_array(batch.to_data());
    let schema = FFI_ArrowSchema::try_from(batch.data_type()).unwrap();
    // SAFETY: an array and schema just exported, moved into the import.
    let back = unsafe { arrow_array::ffi::from_ffi(exported, &schema) }.unwrap();
    back.validate_full().unwrap();
    assert_eq!(make_array(back).len(), 2);
}

// ---- the schema text ---------------------------------------------------------------

#[test]
fn schema_text_at_the_bound_over_it_and_a_million_deep() {
    for ctor in CTORS {
        let text = deep_text(ctor, MAX_DEPTH);
        let (parsed, cycle) = on_stack(SMALL_STACK, move || {
            let parsed = parse_schema(&text).map(|s| s == deep_schema(ctor, MAX_DEPTH));
            let w = ArrowWriter::from_text(&text, WriterOptions::default()).unwrap();
            bound_cycle(w, ctor, MAX_DEPTH);
            (parsed, true)
        });
        assert!(parsed.unwrap(), "{ctor:?}: the text at the bound parses to the generated schema");
        assert!(cycle);

        for depth in [MAX_DEPTH + 1, MILLION] {
            let text = deep_text(ctor, depth);
            let e = on_stack(SMALL_STACK, move || parse_schema(&text).unwrap_err());
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            let what = format!("parse_schema {ctor:?} at {depth}");
            check_refusal(&what, e.message(), &format!("nested at least {} levels deep", MAX_DEPTH + 1), "x.");
            assert!(e.message().starts_with("schema text: at position "), "{what}: {}", e.message());
            let text = deep_text(ctor, depth);
            let e = on_stack(SMALL_STACK, move || {
                ArrowWriter::from_text(&text, WriterOptions::default()).map(|_| ()).unwrap_err()
            });
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "from_text {ctor:?} at {depth}");

            // The C entry.
            let text = CString::new(deep_text(ctor, depth)).unwrap();
            let (rc, msg, untouched) = on_stack(SMALL_STACK, move || {
                let mut out = FFI_ArrowSchema::empty();
                // SAFETY: a NUL-terminated text and a struct to write.
                let rc = unsafe { quiver_schema_parse(text.as_ptr(), &mut out) };
                (rc, last_error(), schema_released(&out))
            });
            assert_eq!(rc, EINVAL, "quiver_schema_parse {ctor:?} at {depth}: {msg}");
            assert!(untouched, "quiver_schema_parse wrote *out on failure");
            check_refusal(&format!("quiver_schema_parse {ctor:?} at {depth}"), &msg, "at least 65 levels", "x.");
            assert!(msg.starts_with("quiver_schema_parse: schema text: at position"), "{msg}");
        }
    }
}

#[test]
fn schema_text_field_bound() {
    // More fields than the bound, flat: refused as the parser reaches it.
    let mut text = String::with_capacity(12 * MAX_FIELDS);
    for i in 0..=MAX_FIELDS {
        text.push_str(&format!("c{i}: null, "));
    }
    text.push_str("last: null");
    let e = parse_schema(&text).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains(&format!("more than {MAX_FIELDS} fields")), "{}", e.message());
    // At the bound: accepted by the parser and by the writer.
    let text: String = (0..MAX_FIELDS).map(|i| format!("c{i}: null")).collect::<Vec<_>>().join(",");
    let schema = parse_schema(&text).unwrap();
    assert_eq!(schema.fields().len(), MAX_FIELDS);
    quiver::depth::check_schema(&schema, "create").unwrap();
}

// ---- ArrowWriter::create and the Rust write_array ----------------------------------------

#[test]
fn rust_create_at_the_bound_over_it_and_a_million_deep() {
    for ctor in CTORS {
        on_stack(SMALL_STACK, move || {
            let w = ArrowWriter::create(Arc::new(deep_schema(ctor, MAX_DEPTH)), WriterOptions::default()).unwrap();
            bound_cycle(w, ctor, MAX_DEPTH);
        });
        for depth in [MAX_DEPTH + 1, MILLION] {
            let schema = Arc::new(deep_schema(ctor, depth));
            let keep = schema.clone();
            let e = on_stack(SMALL_STACK, move || ArrowWriter::create(schema, WriterOptions::default()).unwrap_err());
            std::mem::forget(keep);
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            let what = format!("create {ctor:?} at {depth}");
            check_refusal(&what, e.message(), &depth_words(ctor, depth), "x.");
            assert!(e.message().starts_with("create: "), "{what}: {}", e.message());
        }
    }
}

/// An array whose type is a million levels deep and whose data is never
/// read: `write_array` must refuse it from its type, before `to_data`
/// (which recurses) or anything else looks at it.
#[derive(Debug)]
struct TypeOnly(DataType);

// SAFETY: the array claims no data: length 0, no buffers, no nulls; the
// methods that would have to produce data panic, and the test checks they
// are not reached.
unsafe impl Array for TypeOnly {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_data(&self) -> ArrayData {
        panic!("write_array read the data of an array over the bound")
    }
    fn into_data(self) -> ArrayData {
        panic!("write_array read the data of an array over the bound")
    }
    fn data_type(&self) -> &DataType {
        &self.0
    }
    fn slice(&self, _: usize, _: usize) -> ArrayRef {
        panic!("write_array sliced an array over the bound")
    }
    fn len(&self) -> usize {
        0
    }
    fn is_empty(&self) -> bool {
        true
    }
    fn offset(&self) -> usize {
        0
    }
    fn nulls(&self) -> Option<&arrow_buffer::NullBuffer> {
        None
    }
    fn get_buffer_memory_size(&self) -> usize {
        0
    }
    fn get_array_memory_size(&self) -> usize {
        0
    }
}

#[test]
fn rust_write_array_at_the_bound_over_it_and_a_million_deep() {
    for ctor in CTORS {
        on_stack(SMALL_STACK, move || {
            let dt = deep_type(ctor, MAX_DEPTH);
            let schema = Schema::new(vec![Field::new("x", dt.clone(), true)]);
            let mut w = ArrowWriter::create(Arc::new(schema), WriterOptions::default()).unwrap();
            // At the bound: a null array of the column's type is taken.
            w.write_array(0, &new_null_array(&dt, 3)).unwrap();
            assert_eq!(w.rows(), 3);
            // Over it: refused for its depth (before the type comparison).
            let over = new_null_array(&deep_type(ctor, MAX_DEPTH + 1), 3);
            let e = w.write_array(0, &over).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            check_refusal(&format!("write_array {ctor:?}"), e.message(), "nested 65 levels deep", "array.");
            assert_eq!(w.rows(), 3, "a refused write_array changed the rows");
            let batch = StructArray::from(w.finish().unwrap());
            batch.to_data().validate_full().unwrap();
            assert_eq!(batch.len(), 3);
        });
        let deep = TypeOnly(deep_type(ctor, MILLION));
        let (e, deep) = on_stack(SMALL_STACK, move || {
            let mut w = ArrowWriter::from_text("x: int32", WriterOptions::default()).unwrap();
            (w.write_array(0, &deep).unwrap_err(), deep)
        });
        std::mem::forget(deep);
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        check_refusal(
            &format!("write_array {ctor:?} at a million"),
            e.message(),
            &depth_words(ctor, MILLION),
            "array.",
        );
    }
}

// ---- the C API: schemas built by hand, a million deep, cycles, fan-out ----------------

fn last_error() -> String {
    let p = quiver_last_error();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library's thread-local message, valid until the next call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

unsafe extern "C" fn raw_release(s: *mut ArrowSchema) {
    // SAFETY: one of our structs; the test owns (leaks) everything it points to.
    unsafe { (*s).release = None };
}

fn cstr(s: &str) -> *const c_char {
    CString::new(s).unwrap().into_raw()
}

fn raw(format: &str, name: &str, nullable: bool, children: Vec<*mut ArrowSchema>) -> *mut ArrowSchema {
    let n = children.len() as i64;
    let children = if children.is_empty() { null_mut() } else { Box::leak(children.into_boxed_slice()).as_mut_ptr() };
    Box::into_raw(Box::new(ArrowSchema {
        format: cstr(format),
        name: cstr(name),
        metadata: null(),
        flags: if nullable { 2 } else { 0 },
        n_children: n,
        children,
        dictionary: null_mut(),
        release: Some(raw_release),
        private_data: null_mut(),
    }))
}

/// One level of `ctor` around `inner`, as C structs.
fn raw_wrap(ctor: Ctor, inner: *mut ArrowSchema) -> *mut ArrowSchema {
    let rename = |s: *mut ArrowSchema, name: &str| {
        // SAFETY: our own struct.
        unsafe { (*s).name = cstr(name) };
        s
    };
    match ctor {
        Ctor::List => raw("+l", "x", true, vec![rename(inner, "item")]),
        Ctor::LargeList => raw("+L", "x", true, vec![rename(inner, "item")]),
        Ctor::FixedSizeList => raw("+w:1", "x", true, vec![rename(inner, "item")]),
        Ctor::Struct => raw("+s", "x", true, vec![rename(inner, "a")]),
        Ctor::Map => {
            let entries = raw("+s", "entries", false, vec![raw("i", "key", false, vec![]), rename(inner, "value")]);
            raw("+m", "x", true, vec![entries])
        }
        Ctor::SparseUnion => raw("+us:0", "x", true, vec![rename(inner, "a")]),
        Ctor::DenseUnion => raw("+ud:0", "x", true, vec![rename(inner, "a")]),
        Ctor::ListView => raw("+vl", "x", true, vec![rename(inner, "item")]),
        Ctor::LargeListView => raw("+vL", "x", true, vec![rename(inner, "item")]),
        Ctor::Dictionary => {
            let d = raw("i", "x", true, vec![]);
            // SAFETY: our own struct.
            unsafe { (*d).dictionary = raw("+l", "values", true, vec![rename(inner, "item")]) };
            d
        }
        Ctor::RunEndEncoded => raw(
            "+r",
            "x",
            true,
            vec![raw("i", "run_ends", false, vec![]), raw("+l", "values", true, vec![rename(inner, "item")])],
        ),
    }
}

/// A column of `ctor` `depth` deep under the struct of columns, as C structs.
fn raw_column(ctor: Ctor, depth: usize) -> *mut ArrowSchema {
    plan(ctor, depth).into_iter().rev().fold(raw("i", "x", true, vec![]), |inner, c| raw_wrap(c, inner))
}

fn raw_schema(ctor: Ctor, depth: usize) -> *mut ArrowSchema {
    raw("+s", "", false, vec![raw_column(ctor, depth)])
}

/// Whether the `release` of a schema struct is NULL (its field is private).
fn schema_released(s: &FFI_ArrowSchema) -> bool {
    // SAFETY: FFI_ArrowSchema has the C layout ArrowSchema mirrors.
    unsafe { (*(s as *const FFI_ArrowSchema as *const ArrowSchema)).release.is_none() }
}

/// Whether the `release` of a stream struct is NULL.
fn stream_released(s: &FFI_ArrowArrayStream) -> bool {
    s.release().is_none()
}

unsafe extern "C" fn fill_nothing(_: *mut c_void, _: *mut QuiverWriter, _: i64) -> c_int {
    0
}

unsafe extern "C" fn release_ctx(ctx: *mut c_void) {
    // SAFETY: ctx is the test's flag.
    unsafe { *(ctx as *mut bool) = true };
}

/// `quiver_writer_new` and `quiver_stream_new` on `schema`: both codes and
/// messages, with `*out` untouched and the context not released on failure.
fn c_new(schema: *const FFI_ArrowSchema) -> [(c_int, String); 2] {
    let mut w = null_mut();
    // SAFETY: a readable schema; `w` to write.
    let rc = unsafe { quiver_writer_new(schema, null(), &mut w) };
    let writer = (rc, last_error());
    if rc == 0 {
        // SAFETY: the writer just made.
        unsafe { quiver_writer_free(w) };
    } else {
        assert!(w.is_null(), "quiver_writer_new wrote *out on failure");
    }
    let mut released = false;
    let mut out = FFI_ArrowArrayStream::empty();
    // SAFETY: as above; the flag outlives the stream.
    let rc = unsafe {
        quiver_stream_new(
            schema,
            null(),
            Some(fill_nothing),
            (&mut released as *mut bool).cast(),
            Some(release_ctx),
            &mut out,
        )
    };
    let stream = (rc, last_error());
    if rc == 0 {
        drop(out);
        assert!(released, "the stream did not release its context");
    } else {
        assert!(stream_released(&out), "quiver_stream_new wrote *out on failure");
        assert!(!released, "quiver_stream_new released the caller's context on failure");
    }
    [writer, stream]
}

#[test]
fn c_writer_new_and_stream_new_at_the_bound_over_it_and_a_million_deep() {
    for ctor in CTORS {
        // At the bound: arrow's own export of the schema, then a real cycle
        // through the C writer.
        let r = on_stack(SMALL_STACK, move || {
            let ffi = FFI_ArrowSchema::try_from(&deep_schema(ctor, MAX_DEPTH)).unwrap();
            let r = c_new(&ffi);
            // And the hand-built structs at the bound pass the depth walk.
            // SAFETY: our own readable structs.
            let raw_ok = unsafe { quiver::depth::check_ffi_schema(raw_schema(ctor, MAX_DEPTH).cast(), "t", 0) };
            (r, raw_ok.is_ok())
        });
        for (call, (rc, msg)) in ["quiver_writer_new", "quiver_stream_new"].iter().zip(&r.0) {
            assert_eq!(*rc, 0, "{call} {ctor:?} at the bound: {msg}");
        }
        assert!(r.1, "{ctor:?}: the hand-built schema at the bound is refused");

        for depth in [MAX_DEPTH + 1, MILLION] {
            // Over the bound, both arrow's export (at bound + 1) and the
            // hand-built structs (at both depths).
            let mut schemas: Vec<usize> = vec![raw_schema(ctor, depth) as usize];
            if depth == MAX_DEPTH + 1 {
                let ffi = FFI_ArrowSchema::try_from(&deep_schema(ctor, depth)).unwrap();
                schemas.push(Box::into_raw(Box::new(ffi)) as usize);
            }
            for s in schemas {
                let r = on_stack(SMALL_STACK, move || c_new(s as *const FFI_ArrowSchema));
                for (call, (rc, msg)) in ["quiver_writer_new", "quiver_stream_new"].iter().zip(&r) {
                    let what = format!("{call} {ctor:?} at {depth}");
                    assert_eq!(*rc, EINVAL, "{what}: {msg}");
                    assert!(msg.starts_with(&format!("{call}: {}", depth_words(ctor, depth))), "{what}: {msg}");
                    check_refusal(&what, msg, &depth_words(ctor, depth), "x.");
                }
            }
        }
    }
    assert_eq!(quiver::live_arrays_of_this_thread(), 0);
}

#[test]
fn c_write_array_at_the_bound_over_it_and_a_million_deep() {
    for ctor in CTORS {
        let (ok_rc, over, deep) = on_stack(SMALL_STACK, move || {
            let dt = deep_type(ctor, MAX_DEPTH);
            let schema = FFI_ArrowSchema::try_from(&Schema::new(vec![Field::new("x", dt.clone(), true)])).unwrap();
            let mut w = null_mut();
            // SAFETY: a valid schema; the writer is freed below.
            assert_eq!(unsafe { quiver_writer_new(&schema, null(), &mut w) }, 0, "{}", last_error());
            let write = |array: &FFI_ArrowArray, schema: *const FFI_ArrowSchema| {
                // SAFETY: borrowed structs, readable.
                let rc = unsafe { quiver_write_array(w, 0, array, schema) };
                (rc, last_error())
            };
            let at = new_null_array(&dt, 2).to_data();
            let (a, s) = (FFI_ArrowArray::new(&at), FFI_ArrowSchema::try_from(at.data_type()).unwrap());
            let ok_rc = write(&a, &s);
            let over_data = new_null_array(&deep_type(ctor, MAX_DEPTH + 1), 2).to_data();
            let (a, s) = (FFI_ArrowArray::new(&over_data), FFI_ArrowSchema::try_from(over_data.data_type()).unwrap());
            let over = write(&a, &s);
            // A million levels: hand-built schema structs; the array is never read.
            let column = raw_column(ctor, MILLION);
            let deep = write(&FFI_ArrowArray::empty(), column.cast());
            // SAFETY: the writer made above.
            unsafe {
                assert_eq!(quiver_writer_rows(w), 2);
                let mut out = FFI_ArrowArray::empty();
                assert_eq!(quiver_writer_finish(w, &mut out), 0, "{}", last_error());
                let batch = arrow_array::ffi::from_ffi(out, &schema).unwrap();
                batch.validate_full().unwrap();
                assert_eq!(batch.len(), 2);
                quiver_writer_free(w);
            }
            (ok_rc, over, deep)
        });
        assert_eq!(ok_rc.0, 0, "quiver_write_array {ctor:?} at the bound: {}", ok_rc.1);
        assert_eq!(over.0, EINVAL, "{ctor:?}: {}", over.1);
        check_refusal(&format!("quiver_write_array {ctor:?} at 65"), &over.1, "nested 65 levels deep", "array.");
        assert!(over.1.starts_with("quiver_write_array: "), "{}", over.1);
        assert_eq!(deep.0, EINVAL, "{ctor:?}: {}", deep.1);
        check_refusal(&format!("quiver_write_array {ctor:?} at 1e6"), &deep.1, &depth_words(ctor, MILLION), "array.");
    }
    assert_eq!(quiver::live_arrays_of_this_thread(), 0);
}

#[test]
fn c_schema_cycles_and_fan_out_are_refused() {
    // A list whose child is the list itself, and a struct whose second child
    // points back at the struct of columns.
    let list = raw("+l", "x", true, vec![null_mut()]);
    // SAFETY: our own struct with one child slot.
    unsafe { *(*list).children = list };
    let root = raw("+s", "", false, vec![list]);
    let [(rc, msg), _] = c_new(root.cast());
    assert_eq!(rc, EINVAL, "{msg}");
    assert!(msg.contains("nested at least"), "{msg}");
    check_refusal("a self-referencing list", &msg, "levels deep", "x.x.x.x");
    let root = raw("+s", "", false, vec![raw("i", "a", true, vec![]), null_mut()]);
    // SAFETY: as above.
    unsafe {
        let s = raw("+s", "s", true, vec![root]);
        *(*root).children.add(1) = s;
    }
    let [(rc, msg), (rc2, _)] = c_new(root.cast());
    assert_eq!((rc, rc2), (EINVAL, EINVAL), "{msg}");
    assert!(msg.contains("nested at least"), "{msg}");

    // Fan-out: 30 levels of structs whose two children are the same struct:
    // 2^31 fields as a tree, far over the field bound, within the depth bound.
    let mut s = raw("i", "leaf", true, vec![]);
    for _ in 0..30 {
        s = raw("+s", "s", true, vec![s, s]);
    }
    let root = raw("+s", "", false, vec![s]) as usize;
    let [(rc, msg), _] = on_stack(SMALL_STACK, move || c_new(root as *const FFI_ArrowSchema));
    assert_eq!(rc, EINVAL, "{msg}");
    assert!(msg.contains(&format!("more than {MAX_FIELDS} fields")), "{msg}");
    assert!(msg.len() < 200, "{msg}");
    // The same through an arrow Schema sharing its fields.
    let mut dt = DataType::Int32;
    for _ in 0..30 {
        let f = Arc::new(Field::new("s", dt, true));
        dt = DataType::Struct(Fields::from(vec![f.clone(), f]));
    }
    let e = ArrowWriter::create(Arc::new(Schema::new(vec![Field::new("x", dt, true)])), WriterOptions::default())
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains(&format!("more than {MAX_FIELDS} fields")), "{}", e.message());
}

// ---- The fixed-width bytes of one row, and what a batch reserves --------------------------

#[test]
fn row_bytes_bound_and_the_reservation_of_wide_rows() {
    let bound = quiver::depth::MAX_ROW_BYTES as usize;
    // Two columns: bytes and a bit of validity each, exactly the bound, accepted.
    let at = format!("a: fixed_size_binary({}), b: fixed_size_binary({})", bound / 2, bound / 2 - 1);
    let schema = parse_schema(&at).unwrap();
    // With the default 8192 rows per batch, a batch must not reserve 8192 rows
    // of 16 MiB (128 GiB) up front: it reserves a few and grows with the rows.
    let mut w = ArrowWriter::from_text(&at, WriterOptions::default()).unwrap();
    for _ in 0..3 {
        w.append_null(0).unwrap();
        w.append_null(1).unwrap();
        w.end_row().unwrap();
    }
    let batch = w.finish().unwrap();
    assert_eq!(batch.num_rows(), 3);
    StructArray::from(batch).to_data().validate_full().unwrap();
    let allocated = w.stats().bytes_allocated;
    assert!(allocated < 256 << 20, "3 rows of 16 MiB took {allocated} bytes of capacity");
    // One byte more over the two columns: refused by the parser and by create.
    let over = format!("a: fixed_size_binary({}), b: fixed_size_binary({})", bound / 2, bound / 2);
    for e in [
        parse_schema(&over).unwrap_err(),
        ArrowWriter::create(
            Arc::new(Schema::new(vec![
                Field::new("a", DataType::FixedSizeBinary((bound / 2) as i32), true),
                Field::new("b", DataType::FixedSizeBinary((bound / 2) as i32), true),
            ])),
            WriterOptions::default(),
        )
        .err()
        .unwrap(),
    ] {
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let m = e.message();
        assert!(m.contains(&format!("a row takes {} bytes", bound + 1)) && m.contains("up to 'b'"), "{m}");
    }
    // Values at every level count a bit each: fixed-size lists of zero-width
    // values past the bound are refused too (a row of them would count more
    // values than memory or a length holds).
    let nest = (0..40).fold("null".to_string(), |t, _| format!("fixed_size_list<{t}, 3>"));
    let e = parse_schema(&format!("x: {nest}")).unwrap_err();
    assert!(e.message().contains("2^64 or more") || e.message().contains("over the bound"), "{}", e.message());
    let c_schema = FFI_ArrowSchema::try_from(schema).unwrap();
    let mut w: *mut QuiverWriter = null_mut();
    // SAFETY: a valid schema and out pointer; the writer is freed below.
    unsafe {
        assert_eq!(quiver_writer_new(&c_schema, null(), &mut w), 0, "{}", last_error());
        quiver_writer_free(w);
    }
}

// ---- A refusal's length, whatever the names ------------------------------------------------

/// A name of `chars` characters, each `width` bytes in UTF-8.
fn wide_name(width: usize, chars: usize) -> String {
    let c = ['x', 'é', '€', '😀'][width - 1];
    std::iter::repeat_n(c, chars).collect()
}

/// The start of `name` a refusal shows: the longest prefix of whole
/// characters within 24 bytes.
fn shown_start(name: &str) -> &str {
    let mut end = name.len().min(24);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// Every level named `name`, the deepest field `MAX_DEPTH + 1` down: the
/// depth refusal of the text (Rust and C), `ArrowWriter::create` and the C
/// schema import stays under 300 bytes for names of 1- to 4-byte
/// characters and of any length, and shows each of the first levels' names
/// cut at a character boundary within 24 bytes.
#[test]
fn depth_refusal_stays_short_for_names_of_any_width_and_length() {
    for width in 1..=4 {
        for chars in [1, 5, 6, 7, 23, 24, 25, 100, 1000] {
            let name = wide_name(width, chars);
            let quoted = format!("\"{name}\"");
            let mut text = String::new();
            for _ in 0..MAX_DEPTH {
                text.push_str(&format!("{quoted}: struct<"));
            }
            text.push_str(&format!("{quoted}: int32"));
            text.push_str(&">".repeat(MAX_DEPTH));
            let mut dt = DataType::Int32;
            for _ in 0..MAX_DEPTH {
                dt = DataType::Struct(Fields::from(vec![Field::new(name.clone(), dt, true)]));
            }
            let schema = Schema::new(vec![Field::new(name.clone(), dt, true)]);
            let first = format!("field '{}.{}.", shown_start(&name), shown_start(&name));
            let what = format!("{chars} characters of {width} bytes");

            let e = parse_schema(&text).unwrap_err();
            let mut messages = vec![("parse_schema", e.message().to_string())];
            let c_text = CString::new(text.clone()).unwrap();
            let mut out = FFI_ArrowSchema::empty();
            // SAFETY: a NUL-terminated text and a struct to write.
            let rc = unsafe { quiver_schema_parse(c_text.as_ptr(), &mut out) };
            assert_eq!(rc, EINVAL, "{what}");
            messages.push(("quiver_schema_parse", last_error()));
            let e = ArrowWriter::create(Arc::new(schema.clone()), WriterOptions::default()).unwrap_err();
            messages.push(("create", e.message().to_string()));
            let ffi = FFI_ArrowSchema::try_from(&schema).unwrap();
            for (rc, msg) in c_new(&ffi) {
                assert_eq!(rc, EINVAL, "{what}: {msg}");
                messages.push(("quiver_writer_new / quiver_stream_new", msg));
            }
            for (entry, msg) in messages {
                assert!(msg.contains(&format!("over the bound of {MAX_DEPTH}")), "{entry}, {what}: {msg:?}");
                assert!(msg.contains(&first), "{entry}, {what}: {msg:?} lacks {first:?}");
                assert!(msg.len() < 300, "{entry}, {what}: a {}-byte message: {msg:?}", msg.len());
            }
        }
    }
}

/// The row-bytes refusal names the column it passes the bound at, cut the
/// same way, for names of 1- to 4-byte characters.
#[test]
fn row_bytes_refusal_stays_short_for_names_of_any_width_and_length() {
    for width in 1..=4 {
        for chars in [1, 6, 7, 24, 25, 1000] {
            let name = wide_name(width, chars);
            let text = format!("a: fixed_size_binary(16777215), \"{name}\": int64");
            let e = parse_schema(&text).unwrap_err();
            let msg = e.message();
            assert!(msg.contains(&format!("up to '{}'", shown_start(&name))), "{msg:?}");
            assert!(msg.len() < 300, "a {}-byte message: {msg:?}", msg.len());
        }
    }
}

/// `check_data_type` (the column path's check, which skips the walk for a
/// type without children) answers as the walk over a one-column schema
/// does, message included, for every leaf type and fixed-size binary widths
/// up to and past the row bound, and for a nested type of each.
#[test]
fn flat_type_check_answers_as_the_walk() {
    let mut types: Vec<DataType> = leaf_types::LEAF_TYPES
        .iter()
        .map(|t| parse_schema(&format!("array: {t}")).unwrap().field(0).data_type().clone())
        .collect();
    let bound = quiver::depth::MAX_ROW_BYTES as i32;
    for width in [0, 1, bound - 2, bound - 1, bound, bound + 1, i32::MAX] {
        types.push(DataType::FixedSizeBinary(width));
    }
    let nested: Vec<DataType> = types.iter().map(|t| DataType::List(item(t.clone()))).collect();
    types.extend(nested);
    let mut refused = 0;
    for dt in types {
        let schema = Schema::new(vec![Field::new("array", dt.clone(), true)]);
        let walk = quiver::depth::check_schema(&schema, "write_array").map_err(|e| e.message().to_string());
        let check = quiver::depth::check_data_type(&dt, "write_array").map_err(|e| e.message().to_string());
        assert_eq!(check, walk, "{dt}");
        refused += usize::from(check.is_err());
    }
    // Flat: fixed_size_binary(bound) and wider (its bit makes a byte more).
    // In a list, the list's 4-byte offset and second bit too: from bound - 2.
    assert_eq!(refused, 3 + 5);
}
