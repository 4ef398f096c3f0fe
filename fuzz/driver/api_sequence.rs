//! Random sequences of C API calls on a small fixed set of schemas, checked
//! against a model of what each finished batch must contain. Used by the
//! fuzz target `api_sequence` and replayed by `tests/fuzz_replay.rs` (the
//! seed corpus and every reduced crash), so the including crate must also
//! declare `mod exported` (tests/reliability/exported.rs).
//!
//! Input layout (every read past the end gives 0):
//!   byte 0   schema (`% 3`): 0 flat, 1 nested, 2 the other widths
//!   byte 1   options: batch_rows = 1 + (b % 8), retain = (b >> 3) % 4,
//!            recycle unless bit 7
//!   then operations, one byte each (`% OPS`), followed by their arguments
//!   (see `run`).
//!
//! Long batches and column writes (ROWS, and WRITE_COLUMN / WRITE_ARRAY with
//! bit 7 of their length byte) take their data from a seeded generator, so a
//! short input can cross the 8- and 64-row boundaries of validity bitmaps and
//! bulk copies.
//!
//! The model says whether each call must succeed and, if not, which errno it
//! returns; a failed call must change nothing. After every operation the
//! writer's committed row count must be the model's. Every finished batch,
//! and every held batch or moved-out child, is compared with the model (and
//! passes validate_full) when made, when re-checked and before its release;
//! at the end everything is released and no exported array is live.
//!
//! `WRITE_ARRAY_BAD` hands `quiver_write_array` a column with one value
//! broken at any level of its nesting (invalid UTF-8, a null where the field
//! cannot be null, a decimal over its precision): the call either takes the
//! column (the broken value was out of reach: outside the slice, under a
//! null) or is refused with EINVAL / ERANGE; either way the next batch must
//! be the model's, value by value, so a refusal that left a parent's
//! validity, null count or offsets behind is found.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void, CStr};
use std::ptr::null_mut;
use std::sync::OnceLock;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::make_array;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use quiver::ffi::options::{quiver_options_default, QuiverOptions};
use quiver::ffi::quiver_live_arrays;
use quiver::ffi::stream::quiver_stream_new;
use quiver::ffi::writer::*;

use crate::exported;

/// Number of operation kinds; an operation byte is taken modulo this.
pub const OPS: u8 = 19;

/// Operation codes (the byte after the previous operation's arguments).
pub mod op {
    pub const APPEND_NULL: u8 = 0; // node
    pub const APPEND: u8 = 1; // node, input, value(i64), bytes; 2 is the same
    pub const BEGIN: u8 = 3; // node
    pub const END: u8 = 4; // pick: pick % 4 == 0 -> node (pick / 4), else the innermost open node
    pub const END_ROW: u8 = 5;
    pub const ABORT_ROW: u8 = 6;
    pub const ROW: u8 = 7; // a whole valid row from the bytes that follow (only when nothing is pending)
    pub const FINISH: u8 = 8;
    pub const RELEASE: u8 = 9; // which held item
    pub const MOVE_CHILD: u8 = 10; // which held item, column
    pub const RECHECK: u8 = 11; // which held item
    pub const PULL: u8 = 12; // first pull: 8 plan bytes, 32 seed bytes
                             // node, length (bit 7: 6 + low bits, values from a seed), flags, validity (or its seed), values (or their seed)
    pub const WRITE_COLUMN: u8 = 13;
    // rows (bit 7: 5 + low bits, then a seed for them), offset, length, column, node, row bytes
    pub const WRITE_ARRAY: u8 = 14;
    pub const DROP_STREAM: u8 = 15;
    pub const NEW_WRITER: u8 = 16;
    pub const ROWS: u8 = 17; // count (1 + b % 64), seed: that many valid rows (only when nothing is pending)
                             // as WRITE_ARRAY, then after the node byte: what to break (kind, which
                             // field, position: 3 bytes), then the row bytes
    pub const WRITE_ARRAY_BAD: u8 = 18;
}

pub const EINVAL: c_int = 22;
pub const ERANGE: c_int = 34;
pub const EIO: c_int = 5;
pub const ENOTRECOVERABLE: c_int = 131;

// ---- schemas and their model ----------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum K {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    Bool,
    Utf8,
    Bin,
    Dec(u32),
    Fsb(usize),
    List,
    Map,
    Struct,
    Fsl(usize),
}

impl K {
    /// Bytes per value in the column path (`quiver_write_column`); None for
    /// boolean (a bitmap) and the variable-width and nested kinds.
    fn width(self) -> Option<usize> {
        match self {
            K::I8 | K::U8 => Some(1),
            K::I16 | K::U16 => Some(2),
            K::I32 | K::U32 | K::F32 => Some(4),
            K::I64 | K::U64 | K::F64 => Some(8),
            K::Dec(_) => Some(16),
            K::Fsb(n) => Some(n),
            _ => None,
        }
    }

    fn nested(self) -> bool {
        matches!(self, K::List | K::Map | K::Struct | K::Fsl(_))
    }
}

struct N {
    kind: K,
    nullable: bool,
    parent: Option<usize>,
    children: Vec<usize>,
}

pub struct Schema {
    nodes: Vec<N>,
    top: Vec<usize>,
}

pub const SCHEMAS: [&str; 3] = [
    "a: int32, b: utf8 not null, c: bool, d: decimal128(4, 1), e: fixed_size_binary(2), f: float64, g: uint8 not null",
    "id: int64 not null, l: list<int16>, s: struct<x: utf8, y: int8 not null, d: decimal128(5, 0)>, f: fixed_size_list<uint8, 2>, m: map<utf8, int32>, ll: list<list<int8 not null>>",
    "h: float32, i: uint16 not null, i2: uint16, j: uint32, k: uint64 not null, bin: binary, lu: large_utf8, big: decimal128(20, 0) not null, t: bool not null, ls: large_list<utf8>",
];

/// The node tree, written out by hand from the texts above (pre-order);
/// `check_nodes` compares it with the parsed schema.
fn schema(i: usize) -> Schema {
    let n = |kind, nullable, parent: Option<usize>| N { kind, nullable, parent, children: vec![] };
    let mut nodes = match i {
        0 => vec![
            n(K::I32, true, None),
            n(K::Utf8, false, None),
            n(K::Bool, true, None),
            n(K::Dec(4), true, None),
            n(K::Fsb(2), true, None),
            n(K::F64, true, None),
            n(K::U8, false, None),
        ],
        1 => vec![
            n(K::I64, false, None),       // 0 id
            n(K::List, true, None),       // 1 l
            n(K::I16, true, Some(1)),     // 2 l.item
            n(K::Struct, true, None),     // 3 s
            n(K::Utf8, true, Some(3)),    // 4 s.x
            n(K::I8, false, Some(3)),     // 5 s.y
            n(K::Dec(5), true, Some(3)),  // 6 s.d
            n(K::Fsl(2), true, None),     // 7 f
            n(K::U8, true, Some(7)),      // 8 f.item
            n(K::Map, true, None),        // 9 m
            n(K::Struct, false, Some(9)), // 10 m.entries
            n(K::Utf8, false, Some(10)),  // 11 m.key
            n(K::I32, true, Some(10)),    // 12 m.value
            n(K::List, true, None),       // 13 ll
            n(K::List, true, Some(13)),   // 14 ll.item
            n(K::I8, false, Some(14)),    // 15 ll.item.item
        ],
        _ => vec![
            n(K::F32, true, None),      // 0 h
            n(K::U16, false, None),     // 1 i
            n(K::U16, true, None),      // 2 i2
            n(K::U32, true, None),      // 3 j
            n(K::U64, false, None),     // 4 k
            n(K::Bin, true, None),      // 5 bin
            n(K::Utf8, true, None),     // 6 lu (large_utf8)
            n(K::Dec(20), false, None), // 7 big
            n(K::Bool, false, None),    // 8 t
            n(K::List, true, None),     // 9 ls (large_list)
            n(K::Utf8, true, Some(9)),  // 10 ls.item
        ],
    };
    for c in 0..nodes.len() {
        if let Some(p) = nodes[c].parent {
            nodes[p].children.push(c);
        }
    }
    let top = (0..nodes.len()).filter(|&c| nodes[c].parent.is_none()).collect();
    Schema { nodes, top }
}

/// Pre-order (nullable, child count) of the fields of a parsed schema.
fn flatten(f: &Field, out: &mut Vec<(bool, usize)>) {
    let children: Vec<&Field> = match f.data_type() {
        DataType::List(c) | DataType::LargeList(c) | DataType::FixedSizeList(c, _) | DataType::Map(c, _) => {
            vec![c.as_ref()]
        }
        DataType::Struct(fs) => fs.iter().map(|c| c.as_ref()).collect(),
        _ => vec![],
    };
    out.push((f.is_nullable(), children.len()));
    for c in children {
        flatten(c, out);
    }
}

/// The hand-written trees must match what the library parses.
fn check_nodes(i: usize, parsed: &ArrowSchema) {
    static CHECKED: [OnceLock<()>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CHECKED[i].get_or_init(|| {
        let s = schema(i);
        let mut flat = vec![];
        for f in parsed.fields() {
            flatten(f, &mut flat);
        }
        let mine: Vec<(bool, usize)> = s.nodes.iter().map(|n| (n.nullable, n.children.len())).collect();
        assert_eq!(mine, flat, "schema {i}: model nodes differ from the parsed schema");
    });
}

/// A schema of `SCHEMAS` as the library parses it, and its C export.
struct Parsed {
    fields: arrow_schema::Fields,
    st: DataType,
    c_schema: &'static FFI_ArrowSchema,
}

/// The schema `i`, parsed (and checked against its node tree) once per
/// thread: every input used to parse and export it again, work the schema
/// text target fuzzes on its own.
fn parsed(i: usize) -> Parsed {
    thread_local! {
        static CACHE: [std::cell::OnceCell<(ArrowSchema, &'static FFI_ArrowSchema)>; 3] = const {
            [std::cell::OnceCell::new(), std::cell::OnceCell::new(), std::cell::OnceCell::new()]
        };
    }
    CACHE.with(|c| {
        let (parsed, c_schema) = c[i].get_or_init(|| {
            let parsed = quiver::parse_schema(SCHEMAS[i]).unwrap();
            check_nodes(i, &parsed);
            // Leaked on purpose: one per schema and thread, used by every input after.
            let c_schema: &'static FFI_ArrowSchema = Box::leak(Box::new(FFI_ArrowSchema::try_from(&parsed).unwrap()));
            (parsed, c_schema)
        });
        let fields = parsed.fields().clone();
        Parsed { st: DataType::Struct(fields.clone()), fields, c_schema }
    })
}

/// A value as the model holds it.
#[derive(Clone, Debug)]
enum V {
    Null,
    Int(i128),
    F(f64),
    F32(f32),
    Bool(bool),
    Str(String),
    Bin(Vec<u8>),
    List(Vec<V>),
    Struct(Vec<V>),
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The same text as exported::cell renders.
fn render(v: &V) -> String {
    match v {
        V::Null => "null".into(),
        V::Int(i) => i.to_string(),
        V::F(f) => format!("{f:?}"),
        V::F32(f) => format!("{f:?}"),
        V::Bool(b) => b.to_string(),
        V::Str(s) => format!("{s:?}"),
        V::Bin(b) => hex(b),
        V::List(items) => format!("[{}]", items.iter().map(render).collect::<Vec<_>>().join(", ")),
        V::Struct(fields) => format!("{{{}}}", fields.iter().map(render).collect::<Vec<_>>().join(", ")),
    }
}

/// One little-endian value of a fixed-width kind, rendered.
fn render_le(k: K, b: &[u8]) -> String {
    match k {
        K::I8 => (b[0] as i8).to_string(),
        K::U8 => b[0].to_string(),
        K::I16 => i16::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::U16 => u16::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::I32 => i32::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::U32 => u32::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::I64 => i64::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::U64 => u64::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::F32 => format!("{:?}", f32::from_le_bytes(b.try_into().unwrap())),
        K::F64 => format!("{:?}", f64::from_le_bytes(b.try_into().unwrap())),
        K::Dec(_) => i128::from_le_bytes(b.try_into().unwrap()).to_string(),
        K::Fsb(_) => hex(b),
        _ => unreachable!("not fixed-width"),
    }
}

struct Frame {
    node: usize,
    items: Vec<V>,
    fields: Vec<Option<V>>,
}

/// The model of one writer: committed rows of the current batch, the values
/// each top-level column holds past them (one from the row path, any number
/// from the column path), and the open nested values.
struct Model {
    s: Schema,
    rows: Vec<Vec<String>>,
    pending: Vec<Vec<String>>,
    open: Vec<Frame>,
}

impl Model {
    fn new(s: Schema) -> Self {
        let pending = vec![vec![]; s.top.len()];
        Model { s, rows: vec![], pending, open: vec![] }
    }

    fn is_top(&self, node: usize) -> bool {
        self.s.nodes.get(node).is_some_and(|n| n.parent.is_none())
    }

    /// Whether `node` may take its next value now (row path).
    fn slot_free(&self, node: usize) -> bool {
        let Some(n) = self.s.nodes.get(node) else { return false };
        match n.parent {
            None => self.open.is_empty() && self.pending[self.top_index(node)].is_empty(),
            Some(p) => match self.open.last() {
                Some(f) if f.node == p => match self.s.nodes[p].kind {
                    K::Struct => f.fields[self.child_index(p, node)].is_none(),
                    K::Fsl(size) => f.items.len() < size,
                    _ => true,
                },
                _ => false,
            },
        }
    }

    fn top_index(&self, node: usize) -> usize {
        self.s.top.iter().position(|&t| t == node).unwrap()
    }

    fn child_index(&self, p: usize, c: usize) -> usize {
        self.s.nodes[p].children.iter().position(|&x| x == c).unwrap()
    }

    /// Puts a value into `node`'s slot (checked free before).
    fn place(&mut self, node: usize, v: V) {
        match self.s.nodes[node].parent {
            None => {
                let i = self.top_index(node);
                self.pending[i].push(render(&v));
            }
            Some(p) => {
                let ci = self.child_index(p, node);
                let f = self.open.last_mut().unwrap();
                match self.s.nodes[p].kind {
                    K::Struct => f.fields[ci] = Some(v),
                    _ => f.items.push(v),
                }
            }
        }
    }

    fn row_complete(&self) -> bool {
        self.open.is_empty() && self.pending.iter().all(|p| p.len() == 1)
    }

    fn row_empty(&self) -> bool {
        self.open.is_empty() && self.pending.iter().all(Vec::is_empty)
    }

    /// Commits the pending values once every top-level column has the same
    /// number of them (end_row, or a column write that evens them up).
    fn commit_even(&mut self) {
        let len = self.pending[0].len();
        if len == 0 || self.pending.iter().any(|p| p.len() != len) {
            return;
        }
        for r in 0..len {
            let row = self.pending.iter().map(|p| p[r].clone()).collect();
            self.rows.push(row);
        }
        self.abort();
    }

    fn abort(&mut self) {
        self.pending.iter_mut().for_each(Vec::clear);
        self.open.clear();
    }
}

// ---- input --------------------------------------------------------------------------

pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn i64(&mut self) -> i64 {
        // Small values mostly, sometimes large ones.
        let b = self.u8();
        match b >> 6 {
            0 => (b & 0x3f) as i64 - 16,
            1 => (self.u8() as i64) * 1000 - 128_000,
            _ => i64::from_le_bytes([b, self.u8(), self.u8(), self.u8(), self.u8(), self.u8(), self.u8(), self.u8()]),
        }
    }
    fn bytes(&mut self) -> Vec<u8> {
        let len = (self.u8() % 6) as usize;
        let utf8 = !self.u8().is_multiple_of(4);
        (0..len).map(|_| if utf8 { b'a' + self.u8() % 26 } else { self.u8() }).collect()
    }
}

/// `n` pseudo-random bytes from `seed` (splitmix64): the data of long
/// column writes and batches, which would take too many input bytes.
fn prng_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}

// ---- C API calls ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum In {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    Bool,
    Bytes,
    Decimal,
}

const INPUTS: [In; 13] = [
    In::I8,
    In::I16,
    In::I32,
    In::I64,
    In::U8,
    In::U16,
    In::U32,
    In::U64,
    In::F32,
    In::F64,
    In::Bool,
    In::Bytes,
    In::Decimal,
];

fn accepts(k: K, i: In) -> bool {
    matches!(
        (k, i),
        (K::I8, In::I8)
            | (K::I16, In::I16)
            | (K::I32, In::I32)
            | (K::I64, In::I64)
            | (K::U8, In::U8)
            | (K::U16, In::U16)
            | (K::U32, In::U32)
            | (K::U64, In::U64)
            | (K::F32, In::F32)
            | (K::F64, In::F64)
            | (K::Bool, In::Bool)
            | (K::Utf8, In::Bytes)
            | (K::Bin, In::Bytes)
            | (K::Fsb(_), In::Bytes)
            | (K::Dec(_), In::Decimal)
            | (K::Dec(_), In::I64)
    )
}

/// A decimal append's argument: the value and its little-endian bytes.
struct DecArg {
    value: i128,
    le: Vec<u8>,
}

fn significant_bytes(v: i128) -> usize {
    (1..=16)
        .find(|&n| {
            let shift = 128 - 8 * n as u32;
            n == 16 || (v << shift) >> shift == v
        })
        .unwrap()
}

/// `x`, sometimes scaled past 64 bits, as 1..=32 sign-extended bytes, or
/// (sel % 8 == 0 / 1) as 0 or 33 bytes, which no decimal takes.
fn dec_arg(x: i64, sel: u8) -> DecArg {
    let value = if sel & 0x10 != 0 { x as i128 * 1_000_000 } else { x as i128 };
    let ext = if value < 0 { 0xff } else { 0 };
    let mut le: Vec<u8> = value.to_le_bytes().to_vec();
    le.resize(33, ext);
    let len = match sel % 8 {
        0 => 0,
        1 => 33,
        _ => {
            let min = significant_bytes(value);
            min + (sel as usize >> 5) * (32 - min) / 7
        }
    };
    le.truncate(len);
    DecArg { value, le }
}

/// Calls the append for input `i` with `x` (an integer), `b` (bytes) or `d`
/// (a decimal); returns the code and the model's value if it were accepted.
unsafe fn append(w: *mut QuiverWriter, node: u32, i: In, x: i64, b: &[u8], d: &DecArg) -> (c_int, V) {
    // SAFETY: `w` is a live writer and `b`, `d` are live slices, per this function's contract.
    unsafe {
        match i {
            In::I8 => (quiver_append_i8(w, node, x as i8), V::Int(x as i8 as i128)),
            In::I16 => (quiver_append_i16(w, node, x as i16), V::Int(x as i16 as i128)),
            In::I32 => (quiver_append_i32(w, node, x as i32), V::Int(x as i32 as i128)),
            In::I64 => (quiver_append_i64(w, node, x), V::Int(x as i128)),
            In::U8 => (quiver_append_u8(w, node, x as u8), V::Int(x as u8 as i128)),
            In::U16 => (quiver_append_u16(w, node, x as u16), V::Int(x as u16 as i128)),
            In::U32 => (quiver_append_u32(w, node, x as u32), V::Int(x as u32 as i128)),
            In::U64 => (quiver_append_u64(w, node, x as u64), V::Int(x as u64 as i128)),
            In::F32 => (quiver_append_f32(w, node, x as f32 / 8.0), V::F32(x as f32 / 8.0)),
            In::F64 => (quiver_append_f64(w, node, x as f64 / 4.0), V::F(x as f64 / 4.0)),
            In::Bool => (quiver_append_bool(w, node, x & 1 == 1), V::Bool(x & 1 == 1)),
            In::Bytes => (quiver_append_bytes(w, node, b.as_ptr(), b.len()), V::Bin(b.to_vec())),
            In::Decimal => (quiver_append_decimal(w, node, d.le.as_ptr(), d.le.len()), V::Int(d.value)),
        }
    }
}

/// The model's verdict on an append of input `i` to `node`: Ok(value) if it
/// must succeed (the value as the batch must show it), Err(errno) if not.
fn verdict(m: &Model, node: usize, i: In, x: i64, b: &[u8], d: &DecArg, v: V) -> Result<V, c_int> {
    if !m.slot_free(node) {
        return Err(EINVAL);
    }
    let k = m.s.nodes[node].kind;
    if !accepts(k, i) {
        return Err(EINVAL);
    }
    match k {
        K::Utf8 => std::str::from_utf8(b).map(|s| V::Str(s.to_string())).map_err(|_| EINVAL),
        K::Fsb(n) if b.len() == n => Ok(v),
        K::Fsb(_) => Err(EINVAL),
        K::Dec(p) => {
            let value = if i == In::I64 {
                x as i128
            } else if d.le.is_empty() || d.le.len() > 32 {
                return Err(EINVAL);
            } else {
                d.value
            };
            if value.unsigned_abs() >= 10u128.pow(p) {
                Err(ERANGE)
            } else {
                Ok(V::Int(value))
            }
        }
        _ => Ok(v),
    }
}

/// Asserts a call's result: `want` Ok means success, Err(code) that exact
/// code (with a message). `detail` names the call in a failure.
fn check_rc(w: *mut QuiverWriter, rc: c_int, want: Result<(), c_int>, name: &'static str, detail: impl Fn() -> String) {
    assert_ne!(rc, ENOTRECOVERABLE, "{}: the library panicked: {}", detail(), last(w));
    match want {
        Ok(()) => assert_eq!(rc, 0, "{}: must succeed: {}", detail(), last(w)),
        Err(code) => {
            assert_eq!(rc, code, "{}: must fail with {code}, got {rc}: {}", detail(), last(w));
            assert!(!last(w).is_empty(), "{}: failed without a message", detail());
        }
    }
    note(name, code_name(rc));
}

fn code_name(rc: c_int) -> &'static str {
    match rc {
        0 => "ok",
        EINVAL => "EINVAL",
        ERANGE => "ERANGE",
        EIO => "EIO",
        _ => "other",
    }
}

thread_local! {
    static EVENTS: std::cell::RefCell<BTreeMap<(&'static str, &'static str), u64>> = const { std::cell::RefCell::new(BTreeMap::new()) };
}

static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Counts one event (an operation and what came of it) when counting is on.
fn note(op: &'static str, outcome: &'static str) {
    if COUNTING.load(std::sync::atomic::Ordering::Relaxed) {
        EVENTS.with(|e| *e.borrow_mut().entry((op, outcome)).or_default() += 1);
    }
}

/// Turns event counting on (off while fuzzing) and returns the events
/// counted on this thread so far: (operation, outcome) -> count. The replay
/// test checks that the seeds reach them all.
#[allow(dead_code)] // used by the replay test only
pub fn take_events() -> BTreeMap<(&'static str, &'static str), u64> {
    COUNTING.store(true, std::sync::atomic::Ordering::Relaxed);
    EVENTS.with(|e| std::mem::take(&mut *e.borrow_mut()))
}

/// Writes one valid value of `node` (recursively) and returns it.
unsafe fn gen_value(w: *mut QuiverWriter, s: &Schema, node: usize, inp: &mut Input) -> V {
    let n = &s.nodes[node];
    let node32 = node as u32;
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe {
        let ok = |rc: c_int, what: &str| assert_eq!(rc, 0, "gen {what} into node {node}: {}", last(w));
        if n.nullable && inp.u8().is_multiple_of(4) {
            ok(quiver_append_null(w, node32), "null");
            return V::Null;
        }
        let x = inp.i64();
        match n.kind {
            K::I8 => {
                ok(quiver_append_i8(w, node32, x as i8), "i8");
                V::Int(x as i8 as i128)
            }
            K::I16 => {
                ok(quiver_append_i16(w, node32, x as i16), "i16");
                V::Int(x as i16 as i128)
            }
            K::I32 => {
                ok(quiver_append_i32(w, node32, x as i32), "i32");
                V::Int(x as i32 as i128)
            }
            K::I64 => {
                ok(quiver_append_i64(w, node32, x), "i64");
                V::Int(x as i128)
            }
            K::U8 => {
                ok(quiver_append_u8(w, node32, x as u8), "u8");
                V::Int(x as u8 as i128)
            }
            K::U16 => {
                ok(quiver_append_u16(w, node32, x as u16), "u16");
                V::Int(x as u16 as i128)
            }
            K::U32 => {
                ok(quiver_append_u32(w, node32, x as u32), "u32");
                V::Int(x as u32 as i128)
            }
            K::U64 => {
                ok(quiver_append_u64(w, node32, x as u64), "u64");
                V::Int(x as u64 as i128)
            }
            K::F32 => {
                ok(quiver_append_f32(w, node32, x as f32), "f32");
                V::F32(x as f32)
            }
            K::F64 => {
                ok(quiver_append_f64(w, node32, x as f64), "f64");
                V::F(x as f64)
            }
            K::Bool => {
                ok(quiver_append_bool(w, node32, x & 1 == 0), "bool");
                V::Bool(x & 1 == 0)
            }
            K::Utf8 => {
                let t: String = (0..(x.unsigned_abs() % 5)).map(|j| (b'a' + j as u8) as char).collect();
                ok(quiver_append_bytes(w, node32, t.as_ptr(), t.len()), "utf8");
                V::Str(t)
            }
            K::Bin => {
                let b: Vec<u8> = (0..(x.unsigned_abs() % 5)).map(|j| (x as u8) ^ (0x81 + j as u8)).collect();
                ok(quiver_append_bytes(w, node32, b.as_ptr(), b.len()), "binary");
                V::Bin(b)
            }
            K::Fsb(len) => {
                let b: Vec<u8> = (0..len).map(|j| (x as u8).wrapping_add(j as u8)).collect();
                ok(quiver_append_bytes(w, node32, b.as_ptr(), len), "fixed_size_binary");
                V::Bin(b)
            }
            K::Dec(p) => {
                let d = (x as i128) % 10i128.pow(p);
                if x & 1 == 0 {
                    ok(quiver_append_i64(w, node32, d as i64), "decimal as i64");
                } else {
                    ok(quiver_append_decimal(w, node32, d.to_le_bytes().as_ptr(), 16), "decimal");
                }
                V::Int(d)
            }
            K::List | K::Map | K::Fsl(_) => {
                ok(quiver_begin(w, node32), "begin");
                let count = match n.kind {
                    K::Fsl(size) => size,
                    _ => (inp.u8() % 4) as usize,
                };
                let items = (0..count).map(|_| gen_value(w, s, n.children[0], inp)).collect();
                ok(quiver_end(w, node32), "end");
                V::List(items)
            }
            K::Struct => {
                ok(quiver_begin(w, node32), "begin");
                let fields = n.children.iter().map(|&c| gen_value(w, s, c, inp)).collect();
                ok(quiver_end(w, node32), "end");
                V::Struct(fields)
            }
        }
    }
}

/// Writes and commits a whole valid row; returns its cells.
unsafe fn gen_row(w: *mut QuiverWriter, s: &Schema, inp: &mut Input) -> Vec<String> {
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe { gen_row_values(w, s, inp) }.iter().map(render).collect()
}

/// As `gen_row`, but returns the values unrendered (a caller that uses one
/// column renders only that one).
unsafe fn gen_row_values(w: *mut QuiverWriter, s: &Schema, inp: &mut Input) -> Vec<V> {
    // SAFETY: `w` is a live writer, per this function's contract.
    unsafe {
        let values = s.top.iter().map(|&t| gen_value(w, s, t, inp)).collect();
        assert_eq!(quiver_end_row(w), 0, "gen end_row: {}", last(w));
        values
    }
}

fn last(w: *mut QuiverWriter) -> String {
    // SAFETY: w is live.
    let p = unsafe { quiver_writer_last_error(w) };
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: a non-NULL message from quiver is a NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn new_writer(c_schema: &FFI_ArrowSchema, opts: &QuiverOptions) -> *mut QuiverWriter {
    let mut w = null_mut();
    // SAFETY: a valid schema and options; `w` is written on success.
    assert_eq!(unsafe { quiver_writer_new(c_schema, opts, &mut w) }, 0);
    w
}

// ---- broken columns --------------------------------------------------------------------

/// One value to break in a column handed to `quiver_write_array`.
#[derive(Debug)]
struct Breakage {
    /// `% 3`: 0 a byte of a utf8 value made 0xFF, 1 a value of a field that
    /// cannot be null made null, 2 a decimal set to 10^precision.
    kind: u8,
    /// Which field of that kind, in pre-order (the column itself first).
    pick: u8,
    /// The byte (kind 0) or the value (kinds 1 and 2) to break, modulo how
    /// many there are.
    pos: usize,
}

impl Breakage {
    /// `column` with the value broken, or None when it has no field of the
    /// kind (or nothing in it to break).
    fn apply(&self, column: &arrow_data::ArrayData, field: &Field) -> Option<arrow_data::ArrayData> {
        let kind = self.kind % 3;
        let mut found = Vec::new();
        candidates(column, field, kind, &mut Vec::new(), &mut found);
        if found.is_empty() {
            return None;
        }
        let path = &found[self.pick as usize % found.len()];
        Some(rebuild(column, path, &|d| break_value(d, kind, self.pos)))
    }
}

/// The paths (child indexes) of the fields of `d` that a breakage of `kind` can hit.
fn candidates(d: &arrow_data::ArrayData, f: &Field, kind: u8, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    let hit = match kind {
        0 => matches!(d.data_type(), DataType::Utf8 | DataType::LargeUtf8) && !d.buffers()[1].is_empty(),
        1 => !f.is_nullable() && !d.is_empty(),
        _ => matches!(d.data_type(), DataType::Decimal128(..)) && !d.is_empty(),
    };
    if hit {
        out.push(path.clone());
    }
    let child_fields: Vec<&Field> = match d.data_type() {
        DataType::Struct(fs) => fs.iter().map(|f| f.as_ref()).collect(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![f.as_ref()]
        }
        _ => Vec::new(),
    };
    for (i, (c, cf)) in d.child_data().iter().zip(child_fields).enumerate() {
        path.push(i);
        candidates(c, cf, kind, path, out);
        path.pop();
    }
}

/// `d` with the field at `path` replaced by `f` of it; built without
/// validation, since the point is data quiver must refuse.
fn rebuild(
    d: &arrow_data::ArrayData,
    path: &[usize],
    f: &dyn Fn(&arrow_data::ArrayData) -> arrow_data::ArrayData,
) -> arrow_data::ArrayData {
    let Some((&i, rest)) = path.split_first() else { return f(d) };
    let mut children = d.child_data().to_vec();
    children[i] = rebuild(&children[i], rest, f);
    // SAFETY: the same data with one child replaced by one of its own type and length.
    unsafe { d.clone().into_builder().child_data(children).build_unchecked() }
}

fn break_value(d: &arrow_data::ArrayData, kind: u8, pos: usize) -> arrow_data::ArrayData {
    use arrow_buffer::Buffer;
    let b = d.clone().into_builder();
    let built = match kind {
        0 => {
            let mut values = d.buffers()[1].as_slice().to_vec();
            let at = pos % values.len();
            values[at] = 0xFF;
            b.buffers(vec![d.buffers()[0].clone(), Buffer::from_vec(values)])
        }
        1 => {
            let bits = d.offset() + d.len();
            let mut valid = vec![0xFFu8; bits.div_ceil(8)];
            if let Some(nulls) = d.nulls() {
                for i in 0..d.len() {
                    if nulls.is_null(i) {
                        valid[(d.offset() + i) / 8] &= !(1 << ((d.offset() + i) % 8));
                    }
                }
            }
            let at = d.offset() + pos % d.len();
            valid[at / 8] &= !(1 << (at % 8));
            b.null_bit_buffer(Some(Buffer::from_vec(valid)))
        }
        _ => {
            let DataType::Decimal128(precision, _) = d.data_type() else { unreachable!("a decimal128 field") };
            let mut values = d.buffers()[0].as_slice().to_vec();
            let at = (d.offset() + pos % d.len()) * 16;
            let big = 10i128.pow(u32::from(*precision)) * if pos & 1 == 0 { 1 } else { -1 };
            values[at..at + 16].copy_from_slice(&big.to_le_bytes());
            b.buffers(vec![Buffer::from_vec(values)])
        }
    };
    // SAFETY: buffers of the same sizes as the valid ones they replace; only
    // their values break the type's rules, which quiver must check.
    unsafe { built.build_unchecked() }
}

// ---- held batches ----------------------------------------------------------------------

enum Held {
    Batch { a: FFI_ArrowArray, rows: Vec<Vec<String>>, moved: Vec<bool> },
    Child { a: FFI_ArrowArray, col: usize, cells: Vec<String> },
}

fn verify(h: &mut Held, st: &DataType) {
    let DataType::Struct(fields) = st else { unreachable!() };
    match h {
        Held::Batch { a, rows, moved } => {
            if moved.iter().all(|m| !m) {
                assert_eq!(&exported::render_exported(a, st), rows, "batch changed");
            } else {
                assert_eq!(a.len(), rows.len());
                for (c, f) in fields.iter().enumerate() {
                    if !moved[c] {
                        let d = exported::borrow_child(a, c, f.data_type());
                        d.validate_full().unwrap();
                        let want: Vec<String> = rows.iter().map(|r| r[c].clone()).collect();
                        assert_eq!(exported::column_cells(make_array(d).as_ref()), want, "column {c} changed");
                    }
                }
            }
        }
        Held::Child { a, col, cells } => {
            let d = exported::borrow_import(a, fields[*col].data_type());
            d.validate_full().unwrap();
            assert_eq!(&exported::column_cells(make_array(d).as_ref()), cells, "moved child changed");
        }
    }
}

// ---- the stream --------------------------------------------------------------------------

/// What one fill call did.
#[derive(Clone, Debug)]
enum Outcome {
    /// Wrote these rows (none: the stream ends).
    Rows(Vec<Vec<String>>),
    /// Returned non-zero, with this message set (or none).
    Fail(Option<&'static str>),
    /// Wrote max_rows + 1 rows.
    TooMany,
    /// Wrote some rows (none or one), then left a row half written
    /// (EINVAL, even after no row).
    Partial,
}

struct FillCtx {
    schema: usize,
    /// One byte per call (see `fill`); past the end: 0 rows.
    plan: Vec<u8>,
    seed: Vec<u8>,
    outcomes: Vec<Outcome>,
}

const FILL_MESSAGE: &str = "planned fill failure";

unsafe extern "C" fn fill(ctx: *mut c_void, w: *mut QuiverWriter, max_rows: i64) -> c_int {
    // SAFETY: the FillCtx given to quiver_stream_new; alive while the stream is.
    let c = unsafe { &mut *(ctx as *mut FillCtx) };
    let call = c.outcomes.len();
    let p = c.plan.get(call).copied().unwrap_or(0);
    let s = schema(c.schema);
    let seed = c.seed.clone();
    let mut inp = Input { data: &seed, pos: call };
    let max = max_rows as usize;
    let (outcome, rc) = match p % 8 {
        5 => {
            // SAFETY: `w` is the stream's live writer, handed to this fill.
            (0..=max).for_each(|_| drop(unsafe { gen_row(w, &s, &mut inp) }));
            (Outcome::TooMany, 0)
        }
        6 => {
            let done = (p as usize >> 3) % 2;
            // SAFETY: as above.
            (0..done).for_each(|_| drop(unsafe { gen_row(w, &s, &mut inp) }));
            // SAFETY: as above.
            unsafe { gen_value(w, &s, s.top[0], &mut inp) };
            (Outcome::Partial, 0)
        }
        7 => {
            let message = (p & 0x08 != 0).then_some(FILL_MESSAGE);
            if let Some(m) = message {
                let text = std::ffi::CString::new(m).unwrap();
                // SAFETY: `w` is live; `text` is NUL-terminated.
                assert_eq!(unsafe { quiver_writer_set_error(w, text.as_ptr()) }, 0);
            }
            (Outcome::Fail(message), -1 - (p as c_int >> 4))
        }
        n => {
            // SAFETY: as above.
            let rows = (0..(n as usize).min(max)).map(|_| unsafe { gen_row(w, &s, &mut inp) }).collect();
            (Outcome::Rows(rows), 0)
        }
    };
    c.outcomes.push(outcome);
    rc
}

/// Fields drop in order: the stream (which calls no fill then) before its context.
struct Stream {
    s: FFI_ArrowArrayStream,
    ctx: Box<FillCtx>,
    /// Ended (a released array came back).
    ended: bool,
    /// The sticky error code.
    failed: Option<c_int>,
}

fn stream_error(s: &mut FFI_ArrowArrayStream) -> String {
    // SAFETY: a live stream made by quiver.
    let p = unsafe { (s.get_last_error().unwrap())(s) };
    assert!(!p.is_null(), "a failed get_next has a message");
    // SAFETY: checked non-NULL above: a NUL-terminated string owned by the stream.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

// ---- the run ----------------------------------------------------------------------------

/// Runs one input. Panics on any disagreement with the model.
pub fn run(data: &[u8]) {
    let mut inp = Input { data, pos: 0 };
    let which = (inp.u8() % 3) as usize;
    let mut m = Model::new(schema(which));
    let Parsed { fields, st, c_schema } = parsed(which);
    let mut opts = std::mem::MaybeUninit::<QuiverOptions>::uninit();
    // SAFETY: quiver_options_default writes the whole struct before it is read.
    let mut opts = unsafe {
        quiver_options_default(opts.as_mut_ptr());
        opts.assume_init()
    };
    let knobs = inp.u8();
    opts.batch_rows = 1 + (knobs % 8) as i64;
    opts.retain = ((knobs >> 3) % 4) as i32;
    opts.recycle = knobs & 0x80 == 0;
    let mut w = new_writer(c_schema, &opts);
    // The source of quiver_write_array's arrays: a second writer.
    let mut src_w: *mut QuiverWriter = null_mut();
    let mut held: Vec<Held> = Vec::new();
    let mut stream: Option<Stream> = None;
    let count = m.s.nodes.len();

    while !inp.done() {
        let code = inp.u8() % OPS;
        // SAFETY: every pointer used below is a live writer or stream of this run, or a struct it exported.
        unsafe {
            match code {
                op::APPEND_NULL => {
                    let node = (inp.u8() as usize) % (count + 1);
                    let rc = quiver_append_null(w, node as u32);
                    let ok = m.slot_free(node) && m.s.nodes[node].nullable;
                    check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, "append_null", || {
                        format!("append_null({node})")
                    });
                    if ok {
                        m.place(node, V::Null);
                    }
                }
                op::APPEND | 2 => {
                    let node = (inp.u8() as usize) % (count + 1);
                    let i = INPUTS[(inp.u8() as usize) % INPUTS.len()];
                    let x = inp.i64();
                    let b = inp.bytes();
                    let d = dec_arg(x, inp.u8());
                    let (rc, v) = append(w, node as u32, i, x, &b, &d);
                    let want = verdict(&m, node, i, x, &b, &d, v);
                    check_rc(w, rc, want.as_ref().map(|_| ()).map_err(|&e| e), "append", || {
                        format!("append {i:?} to {node}")
                    });
                    if let Ok(v) = want {
                        m.place(node, v);
                    }
                }
                op::BEGIN => {
                    let node = (inp.u8() as usize) % (count + 1);
                    let rc = quiver_begin(w, node as u32);
                    let ok = node < count && m.s.nodes[node].kind.nested() && m.slot_free(node);
                    check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, "begin", || format!("begin({node})"));
                    if ok {
                        let nf = m.s.nodes[node].children.len();
                        m.open.push(Frame { node, items: vec![], fields: vec![None; nf] });
                    }
                }
                op::END => {
                    let pick = inp.u8();
                    let node = match (pick % 4, m.open.last()) {
                        (0, _) | (_, None) => (pick as usize / 4) % (count + 1),
                        (_, Some(f)) => f.node,
                    };
                    let rc = quiver_end(w, node as u32);
                    let ok = match m.open.last() {
                        Some(f) if f.node == node => match m.s.nodes[node].kind {
                            K::Struct => f.fields.iter().all(Option::is_some),
                            K::Fsl(size) => f.items.len() == size,
                            _ => true,
                        },
                        _ => false,
                    };
                    check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, "end", || format!("end({node})"));
                    if ok {
                        let f = m.open.pop().unwrap();
                        let v = match m.s.nodes[node].kind {
                            K::Struct => V::Struct(f.fields.into_iter().map(Option::unwrap).collect()),
                            _ => V::List(f.items),
                        };
                        m.place(node, v);
                    }
                }
                op::END_ROW => {
                    let rc = quiver_end_row(w);
                    let ok = m.row_complete();
                    check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, "end_row", || "end_row".into());
                    if ok {
                        m.commit_even();
                    }
                }
                op::ABORT_ROW => {
                    check_rc(w, quiver_abort_row(w), Ok(()), "abort_row", || "abort_row".into());
                    m.abort();
                }
                op::ROW => {
                    if m.row_empty() {
                        let cells = gen_row(w, &m.s, &mut inp);
                        m.rows.push(cells);
                        note("row", "ok");
                    }
                }
                op::FINISH => {
                    let mut a = FFI_ArrowArray::empty();
                    let rc = quiver_writer_finish(w, &mut a);
                    let ok = m.row_empty();
                    check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, "finish", || "finish".into());
                    if ok {
                        let rows = std::mem::take(&mut m.rows);
                        let mut h = Held::Batch { a, rows, moved: vec![false; m.s.top.len()] };
                        verify(&mut h, &st);
                        held.push(h);
                    } else {
                        assert!(a.is_released(), "a failed finish leaves out untouched");
                    }
                }
                op::RELEASE => {
                    if !held.is_empty() {
                        let k = inp.u8() as usize % held.len();
                        let mut h = held.swap_remove(k);
                        verify(&mut h, &st);
                        drop(h);
                        note("release", "ok");
                    }
                }
                op::MOVE_CHILD => {
                    if !held.is_empty() {
                        let k = inp.u8() as usize % held.len();
                        let col = inp.u8() as usize % m.s.top.len();
                        let mut child = None;
                        if let Held::Batch { a, rows, moved } = &mut held[k] {
                            if !moved[col] {
                                moved[col] = true;
                                let cells = rows.iter().map(|r| r[col].clone()).collect();
                                child = Some(Held::Child { a: exported::take_child(a, col), col, cells });
                                note("move_child", "ok");
                            }
                        }
                        held.extend(child);
                    }
                }
                op::RECHECK => {
                    if !held.is_empty() {
                        let k = inp.u8() as usize % held.len();
                        verify(&mut held[k], &st);
                        note("recheck", "ok");
                    }
                }
                op::PULL => {
                    if stream.is_none() {
                        let plan: Vec<u8> = (0..8).map(|_| inp.u8()).collect();
                        let seed: Vec<u8> = (0..32).map(|_| inp.u8()).collect();
                        let mut ctx = Box::new(FillCtx { schema: which, plan, seed, outcomes: vec![] });
                        let mut s = FFI_ArrowArrayStream::empty();
                        let ctx_ptr: *mut FillCtx = &mut *ctx;
                        assert_eq!(quiver_stream_new(c_schema, &opts, Some(fill), ctx_ptr.cast(), None, &mut s), 0);
                        // Its schema is the writer's.
                        let mut out = FFI_ArrowSchema::empty();
                        assert_eq!((s.get_schema().unwrap())(&mut s, &mut out), 0);
                        assert_eq!(ArrowSchema::try_from(&out).unwrap().fields(), &fields, "stream schema");
                        stream = Some(Stream { s, ctx, ended: false, failed: None });
                    }
                    let st_ = stream.as_mut().unwrap();
                    let mut a = FFI_ArrowArray::empty();
                    let calls_before = st_.ctx.outcomes.len();
                    let rc = (st_.s.get_next().unwrap())(&mut st_.s, &mut a);
                    let calls = st_.ctx.outcomes.len();
                    assert_ne!(rc, ENOTRECOVERABLE, "get_next panicked: {}", stream_error(&mut st_.s));
                    if let Some(code) = st_.failed {
                        assert_eq!(rc, code, "sticky stream error");
                        assert_eq!(calls, calls_before, "no fill after an error");
                        assert!(a.is_released());
                        note("pull", "sticky error");
                    } else if st_.ended {
                        assert_eq!(rc, 0, "a pull after the end: {}", stream_error(&mut st_.s));
                        assert!(a.is_released(), "a pull after the end gives the end again");
                        assert_eq!(calls, calls_before, "no fill after the end");
                        note("pull", "after the end");
                    } else {
                        assert_eq!(calls, calls_before + 1, "one fill per get_next");
                        let want = match st_.ctx.outcomes[calls - 1].clone() {
                            Outcome::Rows(rows) if rows.is_empty() => Ok(None),
                            Outcome::Rows(rows) => Ok(Some(rows)),
                            // A half row fails the stream, also when it is all the fill wrote.
                            Outcome::Partial | Outcome::TooMany => Err((EINVAL, None)),
                            Outcome::Fail(msg) => Err((EIO, Some(msg.unwrap_or("(no message set)")))),
                        };
                        match want {
                            Ok(None) => {
                                assert_eq!(rc, 0, "end of stream: {}", stream_error(&mut st_.s));
                                assert!(a.is_released(), "end of stream is a released array");
                                st_.ended = true;
                                note("pull", "end");
                            }
                            Ok(Some(rows)) => {
                                assert_eq!(rc, 0, "get_next: {}", stream_error(&mut st_.s));
                                assert!(!a.is_released());
                                let mut h = Held::Batch { a, rows, moved: vec![false; m.s.top.len()] };
                                verify(&mut h, &st);
                                held.push(h);
                                note("pull", "batch");
                            }
                            Err((code, msg)) => {
                                assert_eq!(rc, code, "get_next must fail: {}", stream_error(&mut st_.s));
                                assert!(a.is_released());
                                let text = stream_error(&mut st_.s);
                                if let Some(msg) = msg {
                                    assert!(text.contains(msg), "stream error {text:?} lacks {msg:?}");
                                }
                                st_.failed = Some(rc);
                                note("pull", code_name(rc));
                            }
                        }
                    }
                }
                op::WRITE_COLUMN => {
                    let node = (inp.u8() as usize) % (count + 1);
                    let lb = inp.u8();
                    let len = if lb & 0x80 != 0 { (lb & 0x7f) as usize + 6 } else { (lb % 6) as usize };
                    let long = len > 5;
                    let flags = inp.u8();
                    // Validity: flags bit 0 gives one; bits 3-4: as given, all valid, all null, sparse.
                    let vbytes = len.div_ceil(8).max(1);
                    let mut validity = if len <= 8 { vec![inp.u8()] } else { prng_bytes(inp.u8() as u64, vbytes) };
                    match (flags >> 3) & 3 {
                        1 => validity.fill(0xff),
                        2 => validity.fill(0),
                        3 => {
                            let other = prng_bytes(!(validity[0] as u64), vbytes);
                            validity.iter_mut().zip(other).for_each(|(v, o)| *v &= o);
                        }
                        _ => {}
                    }
                    let valid = |r: usize| flags & 1 == 0 || (validity[r / 8] >> (r % 8)) & 1 == 1;
                    let kind = m.s.nodes.get(node).map(|n| n.kind);
                    // Values: raw bytes, or decimals from i64s (flags bit 2: scaled past
                    // the precision); from a seed for long columns.
                    let seeded = if long { prng_bytes(inp.u8() as u64 | 0x100, len * 16) } else { vec![] };
                    let mut rnd = Input { data: &seeded, pos: 0 };
                    let values: Vec<u8> = match kind {
                        Some(K::Dec(p)) => (0..len)
                            .flat_map(|_| {
                                let x = if long {
                                    let raw = i64::from_le_bytes(std::array::from_fn(|_| rnd.u8())) as i128;
                                    if flags & 4 != 0 {
                                        raw
                                    } else {
                                        raw % 10i128.pow(p.min(18))
                                    }
                                } else {
                                    inp.i64() as i128
                                };
                                (if flags & 4 != 0 { x * 1_000_000 } else { x }).to_le_bytes()
                            })
                            .collect(),
                        Some(K::Bool) if long => seeded[..len.div_ceil(8)].to_vec(),
                        Some(K::Bool) => vec![inp.u8()],
                        Some(k) if long => seeded[..len * k.width().unwrap_or(0)].to_vec(),
                        Some(k) => (0..len * k.width().unwrap_or(0)).map(|_| inp.u8()).collect(),
                        None => vec![],
                    };
                    let values_ptr =
                        if len == 0 && flags & 2 != 0 { std::ptr::null() } else { values.as_ptr().cast::<c_void>() };
                    let validity_ptr = if flags & 1 != 0 { validity.as_ptr() } else { std::ptr::null() };
                    let rc = quiver_write_column(w, node as u32, values_ptr, validity_ptr, len as i64);
                    let fixed = matches!(kind, Some(k) if k.width().is_some() || k == K::Bool);
                    let want = if !(fixed && m.is_top(node) && m.open.is_empty()) {
                        Err(EINVAL)
                    } else if let Some(K::Dec(p)) = kind {
                        let over = (0..len).any(|r| {
                            valid(r)
                                && i128::from_le_bytes(values[r * 16..r * 16 + 16].try_into().unwrap()).unsigned_abs()
                                    >= 10u128.pow(p)
                        });
                        if over {
                            Err(ERANGE)
                        } else {
                            Ok(())
                        }
                    } else {
                        Ok(())
                    };
                    let want = want.and_then(|()| {
                        if m.s.nodes[node].nullable || (0..len).all(valid) {
                            Ok(())
                        } else {
                            Err(EINVAL)
                        }
                    });
                    check_rc(w, rc, want, "write_column", || format!("write_column({node}, {len} rows)"));
                    if want.is_ok() {
                        let k = kind.unwrap();
                        let i = m.top_index(node);
                        for r in 0..len {
                            let cell = if !valid(r) {
                                "null".to_string()
                            } else if k == K::Bool {
                                ((values[r / 8] >> (r % 8)) & 1 == 1).to_string()
                            } else {
                                let wd = k.width().unwrap();
                                render_le(k, &values[r * wd..(r + 1) * wd])
                            };
                            m.pending[i].push(cell);
                        }
                        m.commit_even();
                    }
                }
                op::WRITE_ARRAY | op::WRITE_ARRAY_BAD => {
                    // A batch from the second writer, one of its columns sliced
                    // (and, for WRITE_ARRAY_BAD, one value in it broken).
                    let nb = inp.u8();
                    let (n_rows, seeded) = if nb & 0x80 != 0 {
                        let n = (nb & 0x7f) as usize + 5;
                        (n, Some(prng_bytes(inp.u8() as u64 | 0x200, n * 48)))
                    } else {
                        ((nb % 5) as usize, None)
                    };
                    let off = (inp.u8() as usize) % (n_rows + 1);
                    let len = (inp.u8() as usize) % (n_rows - off + 1);
                    let col = (inp.u8() as usize) % m.s.top.len();
                    let node = match inp.u8() {
                        b if b % 2 == 0 => m.s.top[col],
                        b => (b as usize / 2) % (count + 1),
                    };
                    let breakage = (code == op::WRITE_ARRAY_BAD).then(|| Breakage {
                        kind: inp.u8(),
                        pick: inp.u8(),
                        pos: inp.u8() as usize | (inp.u8() as usize) << 8,
                    });
                    if src_w.is_null() {
                        src_w = new_writer(c_schema, &opts);
                    }
                    let src_rows: Vec<Vec<V>> = match &seeded {
                        Some(data) => {
                            let mut rnd = Input { data, pos: 0 };
                            (0..n_rows).map(|_| gen_row_values(src_w, &m.s, &mut rnd)).collect()
                        }
                        None => (0..n_rows).map(|_| gen_row_values(src_w, &m.s, &mut inp)).collect(),
                    };
                    let mut batch = FFI_ArrowArray::empty();
                    assert_eq!(quiver_writer_finish(src_w, &mut batch), 0, "{}", last(src_w));
                    let data = arrow_array::ffi::from_ffi_and_data_type(batch, st.clone()).unwrap();
                    let mut column = data.child_data()[col].slice(off, len);
                    let broken = breakage.as_ref().and_then(|b| b.apply(&column, &fields[col]));
                    if let Some(b) = broken {
                        column = b;
                    }
                    let col_type = column.data_type().clone();
                    let (c_array, c_col_schema) = arrow_array::ffi::to_ffi(&column).unwrap();
                    drop(column);
                    drop(data);
                    let rc = quiver_write_array(w, node as u32, &c_array, &c_col_schema);
                    assert!(!c_array.is_released(), "write_array borrows the array");
                    drop((c_array, c_col_schema));
                    let cells: Vec<String> = src_rows[off..off + len].iter().map(|r| render(&r[col])).collect();
                    let ok = m.is_top(node)
                        && m.open.is_empty()
                        && fields[m.top_index(node)].data_type().equals_datatype(&col_type)
                        && (m.s.nodes[node].nullable || !cells.iter().any(|c| c == "null"));
                    let detail = || format!("write_array({node}, column {col} [{off}..+{len}], broken {breakage:?})");
                    let ok = if ok && breakage.is_some() && rc != 0 {
                        // A broken value in reach: refused, with a message.
                        assert!(rc == EINVAL || rc == ERANGE, "{}: got {rc}: {}", detail(), last(w));
                        assert!(!last(w).is_empty(), "{}: failed without a message", detail());
                        note("write_array_bad", code_name(rc));
                        false
                    } else {
                        let name = if breakage.is_some() { "write_array_bad" } else { "write_array" };
                        check_rc(w, rc, if ok { Ok(()) } else { Err(EINVAL) }, name, detail);
                        ok
                    };
                    if ok {
                        let i = m.top_index(node);
                        m.pending[i].extend(cells);
                        m.commit_even();
                    }
                }
                op::ROWS => {
                    let k = 1 + (inp.u8() % 64) as usize;
                    let data = prng_bytes(inp.u8() as u64 | 0x300, k * 48);
                    if m.row_empty() {
                        let mut rnd = Input { data: &data, pos: 0 };
                        for _ in 0..k {
                            let cells = gen_row(w, &m.s, &mut rnd);
                            m.rows.push(cells);
                        }
                        note("rows", "ok");
                    }
                }
                op::DROP_STREAM => {
                    if stream.take().is_some() {
                        note("drop_stream", "ok");
                    }
                }
                op::NEW_WRITER => {
                    // Free the writer (its batches stay held), start a new one.
                    quiver_writer_free(w);
                    w = new_writer(c_schema, &opts);
                    m = Model::new(schema(which));
                    note("new_writer", "ok");
                }
                _ => unreachable!("op codes are taken modulo OPS"),
            }
            assert_eq!(quiver_writer_rows(w), m.rows.len() as i64, "committed rows after op {code}");
        }
    }

    // Free the writers and release the stream first, then release what is held.
    // SAFETY: each writer and stream is live and freed or released once here.
    unsafe {
        quiver_writer_free(w);
        quiver_writer_free(src_w);
    }
    drop(stream);
    for mut h in held.into_iter().rev() {
        verify(&mut h, &st);
    }
    assert_eq!(quiver_live_arrays(), 0, "every exported array released");
}
