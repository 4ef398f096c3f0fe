//! A refused call changes nothing, proven over a generated matrix:
//!
//! - every type of docs/schema-text.md (and the arrow-only view types) as the
//!   leaf,
//! - at depth 0, 1 and 2: inside struct, list, large_list, fixed_size_list,
//!   map, sparse and dense unions, list views and large list views, and as
//!   the values of dictionary and run-end encoded columns,
//! - every way a call can be refused (`Refusal`),
//! - on every path (`Path`): the row path mid-row and right after `begin`,
//!   `write_column`, `write_array` with whole and sliced (offset) inputs, and
//!   the C API (row path, `quiver_write_column`, `quiver_write_array`),
//! - followed by rows written through the column path or the row path.
//!
//! Each case runs a subject writer that gets the refused call and a
//! reference writer that does not, with the same good calls otherwise. The
//! refused call must return its errno and leave the committed rows as they
//! were; the next batch of both must be byte-identical (`exact_bytes`: every
//! buffer over its logical extent, lengths, null counts, children), and so
//! must the batch after it (recycled buffers); the counters of both agree.
//! A refusal that does not apply to a type or path is not generated
//! (`applies`); the test prints how many cases ran.

mod exact;
#[path = "reliability/exported.rs"]
mod exported;
mod leaf_types;

use std::collections::BTreeMap;
use std::ffi::{c_int, CStr};
use std::ptr::{null, null_mut};
use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type};
use arrow_array::{
    make_array, Array, ArrayRef, BinaryViewArray, DictionaryArray, FixedSizeListArray, Int16Array, Int32Array,
    Int64Array, LargeListArray, LargeListViewArray, ListArray, ListViewArray, MapArray, NullArray, RecordBatch,
    RunArray, StructArray, UnionArray,
};
use arrow_buffer::{i256, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, UnionFields, UnionMode};
use exact::exact_bytes;
use quiver::ffi::abi::ArrowArray;
use quiver::ffi::options::{quiver_options_default, QuiverOptions, QuiverStats};
use quiver::ffi::writer::*;
use quiver::{parse_schema, ArrowWriter, WriterOptions};

const EINVAL: i32 = libc::EINVAL;
const ERANGE: i32 = libc::ERANGE;
const EOVERFLOW: i32 = libc::EOVERFLOW;

// ---- the matrix ----------------------------------------------------------------

/// Every leaf type: the text form's, then the arrow-only view types.
fn leaves() -> Vec<DataType> {
    let mut out: Vec<DataType> = leaf_types::LEAF_TYPES
        .iter()
        .map(|t| parse_schema(&format!("v: {t}")).unwrap().field(0).data_type().clone())
        .collect();
    out.push(DataType::Utf8View);
    out.push(DataType::BinaryView);
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wrap {
    Struct,
    List,
    LargeList,
    FixedList,
    Map,
    SparseUnion,
    DenseUnion,
    ListView,
    LargeListView,
    Dict,
    Ree,
}

const WRAPS: [Wrap; 11] = [
    Wrap::Struct,
    Wrap::List,
    Wrap::LargeList,
    Wrap::FixedList,
    Wrap::Map,
    Wrap::SparseUnion,
    Wrap::DenseUnion,
    Wrap::ListView,
    Wrap::LargeListView,
    Wrap::Dict,
    Wrap::Ree,
];

impl Wrap {
    fn encoded(self) -> bool {
        matches!(self, Wrap::Dict | Wrap::Ree)
    }
    /// The type wrapping a value field `inner`.
    fn wrap(self, inner: Field) -> DataType {
        let item = |f: Field, name: &str| Arc::new(f.with_name(name));
        match self {
            Wrap::Struct => {
                DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int32, true), inner.with_name("v")]))
            }
            Wrap::List => DataType::List(item(inner, "item")),
            Wrap::LargeList => DataType::LargeList(item(inner, "item")),
            Wrap::FixedList => DataType::FixedSizeList(item(inner, "item"), 2),
            Wrap::Map => DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", DataType::Utf8, false),
                        inner.with_name("value"),
                    ])),
                    false,
                )),
                false,
            ),
            Wrap::SparseUnion | Wrap::DenseUnion => DataType::Union(
                UnionFields::try_new(vec![0, 1], vec![inner.with_name("a"), Field::new("b", DataType::Int32, true)])
                    .unwrap(),
                if self == Wrap::SparseUnion { UnionMode::Sparse } else { UnionMode::Dense },
            ),
            Wrap::ListView => DataType::ListView(item(inner, "item")),
            Wrap::LargeListView => DataType::LargeListView(item(inner, "item")),
            Wrap::Dict => DataType::Dictionary(Box::new(DataType::Int16), Box::new(inner.data_type().clone())),
            Wrap::Ree => DataType::RunEndEncoded(
                Arc::new(Field::new("run_ends", DataType::Int32, false)),
                Arc::new(inner.with_name("values")),
            ),
        }
    }
}

/// A column type: `wraps` (outermost first) around `leaf`.
#[derive(Debug, Clone)]
struct Shape {
    leaf: DataType,
    /// The leaf field is `not null` (only for the null-into-not-null refusal).
    leaf_not_null: bool,
    wraps: Vec<Wrap>,
}

impl Shape {
    fn data_type(&self) -> DataType {
        let mut f = Field::new("v", self.leaf.clone(), !self.leaf_not_null);
        for w in self.wraps.iter().rev() {
            f = Field::new("v", w.wrap(f), true);
        }
        f.data_type().clone()
    }
    fn with_leaf(&self, leaf: DataType) -> Shape {
        Shape { leaf, ..self.clone() }
    }
    /// The node the leaf's appends go to, and the node whose `begin` opens
    /// the leaf's parent (None when no container holds the leaf), with the
    /// column `x` at node 1.
    fn leaf_nodes(&self) -> (usize, Option<usize>) {
        let mut id = 1;
        let mut begin = None;
        for w in &self.wraps {
            if !w.encoded() {
                // A map's values are opened by `begin` on its entries.
                begin = Some(if *w == Wrap::Map { id + 1 } else { id });
            }
            id += match w {
                Wrap::Struct => 2,
                Wrap::Map => 3,
                Wrap::Dict | Wrap::Ree => 0,
                _ => 1,
            };
        }
        (id, begin)
    }
    fn name(&self) -> String {
        let mut s = format!("{}{}", self.leaf, if self.leaf_not_null { " not null" } else { "" });
        for w in self.wraps.iter().rev() {
            s = format!("{w:?}<{s}>");
        }
        s
    }
}

/// Every way a call can be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Refusal {
    /// A decimal over its precision (ERANGE).
    DecimalOverPrecision,
    /// A utf8/binary value that would take the 32-bit offsets past 2^31-1 (EOVERFLOW).
    OffsetsPast32Bits,
    /// Invalid UTF-8 for a utf8 node (EINVAL).
    InvalidUtf8,
    /// A row-path append the node does not take (EINVAL).
    WrongInputKind,
    /// An array whose type is not the column's (EINVAL).
    WrongArrayType,
    /// Fewer values or validity bytes than the length says; a child shorter than its parent (EINVAL).
    WrongLength,
    /// An `ArrowArray` whose n_children is not its schema's (EINVAL).
    BadChildCount,
    /// A NULL where a pointer is needed, through the C API (EINVAL).
    NullPointer,
    /// A null for a `not null` field (EINVAL).
    NullIntoNotNull,
    /// The row is half written: `end_row` (EINVAL).
    HalfRowEndRow,
    /// The row is half written: `finish` (EINVAL).
    HalfRowFinish,
    /// A node is open: `write_column` on another column (EINVAL).
    HalfRowColumnWrite,
}

const REFUSALS: [Refusal; 12] = [
    Refusal::DecimalOverPrecision,
    Refusal::OffsetsPast32Bits,
    Refusal::InvalidUtf8,
    Refusal::WrongInputKind,
    Refusal::WrongArrayType,
    Refusal::WrongLength,
    Refusal::BadChildCount,
    Refusal::NullPointer,
    Refusal::NullIntoNotNull,
    Refusal::HalfRowEndRow,
    Refusal::HalfRowFinish,
    Refusal::HalfRowColumnWrite,
];

/// Where the refused call is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Path {
    /// Row path, in a row whose other values are partly written.
    RowMidRow,
    /// Row path, right after `begin` of the leaf's parent.
    RowAfterBegin,
    /// `write_column` (fixed-width top-level columns).
    WriteColumn,
    /// `write_array` of a whole array.
    WriteArray,
    /// `write_array` of a slice (offset 1) of a longer array.
    WriteArraySliced,
    /// The C API's row path (mid-row).
    CRow,
    /// `quiver_write_column`.
    CWriteColumn,
    /// `quiver_write_array`, with a sliced (offset) input.
    CWriteArray,
}

const PATHS: [Path; 8] = [
    Path::RowMidRow,
    Path::RowAfterBegin,
    Path::WriteColumn,
    Path::WriteArray,
    Path::WriteArraySliced,
    Path::CRow,
    Path::CWriteColumn,
    Path::CWriteArray,
];

/// How the rows after the refused call are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Next {
    Columns,
    Rows,
}

fn is_decimal(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..)
    )
}
fn is_var32(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::Binary)
}
fn is_utf8(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}
/// Leaves that take `append_bytes`.
fn takes_bytes(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::Utf8View
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
            | DataType::Interval(arrow_schema::IntervalUnit::DayTime)
            | DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano)
    )
}
/// Leaves `write_column` takes.
fn fixed_width(dt: &DataType) -> bool {
    dt.primitive_width().is_some() || matches!(dt, DataType::Boolean | DataType::FixedSizeBinary(_))
}

/// Whether `refusal` on `path` exists for `shape` (with its leaf nullable;
/// `NullIntoNotNull` makes it `not null`). Cases for which this is false are
/// not generated.
fn applies(shape: &Shape, refusal: Refusal, path: Path) -> bool {
    use Path::*;
    use Refusal::*;
    let leaf = &shape.leaf;
    let depth = shape.wraps.len();
    let (_, begin) = shape.leaf_nodes();
    if path == RowAfterBegin && begin.is_none() {
        return false;
    }
    let row = matches!(path, RowMidRow | RowAfterBegin);
    match refusal {
        DecimalOverPrecision => {
            is_decimal(leaf)
                && (row
                    || matches!(path, WriteArray | WriteArraySliced | CWriteArray)
                    || (path == WriteColumn && depth == 0))
        }
        OffsetsPast32Bits => is_var32(leaf) && (row || matches!(path, WriteArray | WriteArraySliced)),
        InvalidUtf8 => is_utf8(leaf) && (row || matches!(path, CRow | CWriteArray)),
        WrongInputKind => row || path == CRow,
        WrongArrayType => matches!(path, WriteArray | WriteArraySliced | CWriteArray),
        WrongLength => (path == WriteColumn && depth == 0 && fixed_width(leaf)) || (path == CWriteArray && depth > 0),
        BadChildCount => path == CWriteArray,
        NullPointer => match path {
            CWriteArray => true,
            CRow => takes_bytes(leaf) || is_decimal(leaf),
            CWriteColumn => depth == 0 && fixed_width(leaf),
            _ => false,
        },
        NullIntoNotNull => {
            // The leaf's own field must be able to say `not null`: not the
            // values of an encoded column, not the null type.
            *leaf != DataType::Null
                && !shape.wraps.last().is_some_and(|w| w.encoded())
                && (row
                    || (matches!(path, WriteArray | WriteArraySliced) && depth == 0)
                    || (path == WriteColumn && depth == 0 && fixed_width(leaf)))
        }
        HalfRowEndRow | HalfRowFinish => row,
        HalfRowColumnWrite => path == RowAfterBegin,
    }
}

// ---- generated arrays ------------------------------------------------------------

/// What the last leaf value of a generated array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Good,
    /// Over the decimal's precision.
    OverPrecision,
    /// A value of 2^31-1 bytes (every other value empty): past 32-bit offsets
    /// once the column holds anything.
    Huge,
    /// Invalid UTF-8.
    BadUtf8,
}

/// 2^31 zero bytes, mapped but never written: address space, not memory.
fn huge() -> &'static [u8] {
    static HUGE: OnceLock<usize> = OnceLock::new();
    let len = 1usize << 31;
    let addr = *HUGE.get_or_init(|| {
        // SAFETY: an anonymous private mapping, never unmapped.
        let p = unsafe {
            libc::mmap(
                null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED, "mmap of 2 GiB of address space");
        p as usize
    });
    // SAFETY: the mapping above, readable, lives for the process.
    unsafe { std::slice::from_raw_parts(addr as *const u8, len) }
}

fn huge_buffer(len: usize) -> Buffer {
    let bytes = &huge()[..len];
    // SAFETY: the mapping lives for the process; the owner keeps nothing.
    unsafe {
        Buffer::from_custom_allocation(std::ptr::NonNull::new(bytes.as_ptr() as *mut u8).unwrap(), len, Arc::new(()))
    }
}

/// Whether element `i` of `n` is null in a generated array (never the last).
fn null_at(i: usize, n: usize, salt: usize) -> bool {
    i + 1 < n && (i * 5 + salt) % 4 == 1
}

fn nulls(n: usize, salt: usize, nullable: bool) -> Option<NullBuffer> {
    nullable.then(|| NullBuffer::from((0..n).map(|i| !null_at(i, n, salt)).collect::<Vec<bool>>()))
}

/// `n` values of `dt` (`nullable`: with nulls, never the last one), seeded by `seed`; the
/// last one per `last`. Every container's last element is valid and holds
/// the last element of its child, so `last` reaches the leaf's last value.
fn gen(dt: &DataType, nullable: bool, n: usize, seed: usize, last: Last) -> ArrayRef {
    assert!(n > 0);
    let salt = seed % 7;
    let field_of = |f: &FieldRef| (f.data_type().clone(), f.is_nullable());
    match dt {
        DataType::Struct(fields) => {
            let children: Vec<ArrayRef> = fields
                .iter()
                .enumerate()
                .map(|(k, f)| {
                    let (t, nl) = field_of(f);
                    gen(&t, nl, n, seed + k + 1, if k + 1 == fields.len() { last } else { Last::Good })
                })
                .collect();
            Arc::new(StructArray::new(fields.clone(), children, nulls(n, salt, nullable)))
        }
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::Map(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            // Row i holds i % 3 values (a null row spans one when i % 2 == 1), the last row 2.
            let valid = nulls(n, salt, nullable);
            let sizes: Vec<usize> = (0..n)
                .map(|i| {
                    if i + 1 == n {
                        2
                    } else if valid.as_ref().is_some_and(|v| v.is_null(i)) {
                        i % 2
                    } else {
                        (i + seed) % 3
                    }
                })
                .collect();
            let total: usize = sizes.iter().sum();
            let (t, nl) = field_of(f);
            let child = gen(&t, nl, total, seed + 1, last);
            let offsets: Vec<usize> = std::iter::once(0)
                .chain(sizes.iter().scan(0, |a, s| {
                    *a += s;
                    Some(*a)
                }))
                .collect();
            match dt {
                DataType::List(_) => Arc::new(ListArray::new(
                    f.clone(),
                    OffsetBuffer::new(offsets.iter().map(|&o| o as i32).collect::<Vec<_>>().into()),
                    child,
                    valid,
                )),
                DataType::LargeList(_) => Arc::new(LargeListArray::new(
                    f.clone(),
                    OffsetBuffer::new(offsets.iter().map(|&o| o as i64).collect::<Vec<_>>().into()),
                    child,
                    valid,
                )),
                DataType::Map(_, sorted) => Arc::new(MapArray::new(
                    f.clone(),
                    OffsetBuffer::new(offsets.iter().map(|&o| o as i32).collect::<Vec<_>>().into()),
                    child.as_struct().clone(),
                    valid,
                    *sorted,
                )),
                DataType::ListView(_) => Arc::new(ListViewArray::new(
                    f.clone(),
                    ScalarBuffer::from(offsets[..n].iter().map(|&o| o as i32).collect::<Vec<_>>()),
                    ScalarBuffer::from(sizes.iter().map(|&s| s as i32).collect::<Vec<_>>()),
                    child,
                    valid,
                )),
                _ => Arc::new(LargeListViewArray::new(
                    f.clone(),
                    ScalarBuffer::from(offsets[..n].iter().map(|&o| o as i64).collect::<Vec<_>>()),
                    ScalarBuffer::from(sizes.iter().map(|&s| s as i64).collect::<Vec<_>>()),
                    child,
                    valid,
                )),
            }
        }
        DataType::FixedSizeList(f, size) => {
            let (t, nl) = field_of(f);
            let child = gen(&t, nl, n * *size as usize, seed + 1, last);
            Arc::new(FixedSizeListArray::new(f.clone(), *size, child, nulls(n, salt, nullable)))
        }
        DataType::Union(fields, mode) => {
            // Row i selects member b when i % 3 == 1, else a; the last row a.
            let ids: Vec<i8> = (0..n).map(|i| if i + 1 < n && (i + seed) % 3 == 1 { 1 } else { 0 }).collect();
            let fs: Vec<FieldRef> = fields.iter().map(|(_, f)| f.clone()).collect();
            let (ta, na) = field_of(&fs[0]);
            match mode {
                UnionMode::Sparse => {
                    let a = gen(&ta, na, n, seed + 1, last);
                    let b = gen(&DataType::Int32, true, n, seed + 2, Last::Good);
                    Arc::new(UnionArray::try_new(fields.clone(), ids.into(), None, vec![a, b]).unwrap())
                }
                UnionMode::Dense => {
                    let mut counts = [0i32; 2];
                    let offsets: Vec<i32> = ids
                        .iter()
                        .map(|&t| {
                            counts[t as usize] += 1;
                            counts[t as usize] - 1
                        })
                        .collect();
                    let a = gen(&ta, na, counts[0] as usize, seed + 1, last);
                    let b = gen(&DataType::Int32, true, (counts[1] as usize).max(1), seed + 2, Last::Good);
                    Arc::new(UnionArray::try_new(fields.clone(), ids.into(), Some(offsets.into()), vec![a, b]).unwrap())
                }
            }
        }
        DataType::Dictionary(_, value) => {
            let m = n.min(3);
            let values = gen(value, true, m, seed + 1, last);
            let keys: Vec<Option<i16>> = (0..n)
                .map(|i| {
                    if i + 1 == n {
                        Some(m as i16 - 1)
                    } else if nullable && null_at(i, n, salt) {
                        None
                    } else {
                        // The last value only in the last row.
                        Some(((i + seed) % (m - 1).max(1)) as i16)
                    }
                })
                .collect();
            Arc::new(DictionaryArray::<Int16Type>::try_new(Int16Array::from(keys), values).unwrap())
        }
        DataType::RunEndEncoded(_, values_field) => {
            // Runs of 2 (or 1), then the last row alone.
            let mut ends: Vec<i32> = (1..n).step_by(2).map(|e| (e + 1).min(n - 1) as i32).collect();
            ends.push(n as i32);
            let runs = ends.len();
            let (t, nl) = field_of(values_field);
            let values = gen(&t, nl, runs, seed + 1, last);
            Arc::new(RunArray::<Int32Type>::try_new(&Int32Array::from(ends), &values).unwrap())
        }
        leaf => gen_leaf(leaf, nullable, n, seed, last),
    }
}

fn gen_leaf(dt: &DataType, nullable: bool, n: usize, seed: usize, last: Last) -> ArrayRef {
    let salt = seed % 7;
    let valid = nulls(n, salt, nullable);
    let byte = |i: usize, k: usize| ((i * 31 + k * 7 + seed * 13) % 251) as u8;
    let data = match dt {
        DataType::Null => return Arc::new(NullArray::new(n)),
        DataType::Boolean => {
            let bits: Vec<bool> = (0..n).map(|i| byte(i, 0) % 2 == 0).collect();
            return Arc::new(arrow_array::BooleanArray::new(bits.into(), valid));
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
            let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
            let mut values: Vec<Vec<u8>> = (0..n).map(|i| format!("v{}é{}", i, byte(i, 1)).into_bytes()).collect();
            if !is_utf8(dt) {
                values.iter_mut().enumerate().for_each(|(i, v)| v.push(byte(i, 2)));
            }
            let mut data_buf: Buffer;
            let mut offsets = vec![0usize];
            match last {
                Last::Huge => {
                    // Every value empty but the last, of 2^31-1 bytes.
                    offsets.extend(std::iter::repeat_n(0, n - 1));
                    offsets.push(i32::MAX as usize);
                    data_buf = huge_buffer(i32::MAX as usize);
                }
                _ => {
                    if last == Last::BadUtf8 {
                        values[n - 1] = b"ok\xff\xfe".to_vec();
                    }
                    let mut bytes = Vec::new();
                    for v in &values {
                        bytes.extend_from_slice(v);
                        offsets.push(bytes.len());
                    }
                    data_buf = Buffer::from_vec(bytes);
                }
            }
            let offsets = if large {
                Buffer::from_vec(offsets.iter().map(|&o| o as i64).collect::<Vec<_>>())
            } else {
                Buffer::from_vec(offsets.iter().map(|&o| o as i32).collect::<Vec<_>>())
            };
            let b = ArrayData::builder(dt.clone())
                .len(n)
                .add_buffer(offsets)
                .add_buffer(std::mem::replace(&mut data_buf, Buffer::from_vec(Vec::<u8>::new())))
                .nulls(valid);
            // SAFETY: offsets are monotonic within the data; the data is UTF-8
            // for utf8 types except where `last` asks for invalid UTF-8 (only
            // handed to the C API, which validates it) or is 2^31-1 zero bytes.
            return make_array(unsafe { b.build_unchecked() });
        }
        DataType::Utf8View | DataType::BinaryView => {
            let mut values: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        format!("s{i}").into_bytes()
                    } else {
                        format!("a longer view value {i}").into_bytes()
                    }
                })
                .collect();
            if last == Last::BadUtf8 {
                values[n - 1] = b"a long invalid \xff\xfe value".to_vec();
            }
            let opt: Vec<Option<&[u8]>> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (!valid.as_ref().is_some_and(|m| m.is_null(i))).then_some(&v[..]))
                .collect();
            let bin = BinaryViewArray::from(opt);
            if *dt == DataType::BinaryView {
                return Arc::new(bin);
            }
            // SAFETY: UTF-8 except where `last` asks for invalid UTF-8 (C API only).
            return Arc::new(unsafe { bin.to_string_view_unchecked() });
        }
        dt => {
            let width = dt.primitive_width().unwrap_or_else(|| match dt {
                DataType::FixedSizeBinary(w) => *w as usize,
                _ => panic!("no generator for {dt}"),
            });
            let mut bytes: Vec<u8> = (0..n * width).map(|j| byte(j / width, j % width)).collect();
            if is_decimal(dt) {
                // Small in-range values; the last over the precision if asked.
                let p = match dt {
                    DataType::Decimal32(p, _)
                    | DataType::Decimal64(p, _)
                    | DataType::Decimal128(p, _)
                    | DataType::Decimal256(p, _) => *p,
                    _ => unreachable!(),
                };
                for i in 0..n {
                    let v = if i + 1 == n && last == Last::OverPrecision {
                        i256::from_i128(10).wrapping_pow(p as u32)
                    } else {
                        i256::from_i128(((i * 37 + seed) % 1000) as i128 - 500)
                    };
                    bytes[i * width..(i + 1) * width].copy_from_slice(&v.to_le_bytes()[..width]);
                }
            }
            let b = ArrayData::builder(dt.clone()).len(n).add_buffer(Buffer::from_vec(bytes)).nulls(valid);
            b.build().unwrap()
        }
    };
    make_array(data)
}

// ---- the row path, through the Rust or the C API -----------------------------------------

type R = Result<(), (i32, String)>;

/// A refused call to make, and the errno it must return.
type Call<S> = (Box<dyn FnOnce(&mut S) -> R>, i32);

/// The call a hook makes.
type HookCall<'a, S> = Option<Box<dyn FnOnce(&mut S) + 'a>>;

/// The row-path calls, on an `ArrowWriter` or a C `QuiverWriter`.
trait Sink {
    fn null(&mut self, node: usize) -> R;
    fn bool(&mut self, node: usize, v: bool) -> R;
    /// A fixed-width value given as its bytes and type.
    fn fixed(&mut self, node: usize, dt: &DataType, b: &[u8]) -> R;
    fn bytes(&mut self, node: usize, v: &[u8]) -> R;
    fn decimal(&mut self, node: usize, le: &[u8]) -> R;
    fn begin(&mut self, node: usize) -> R;
    fn end(&mut self, node: usize) -> R;
    fn end_row(&mut self) -> R;
}

fn rust(r: quiver::Result<()>) -> R {
    r.map_err(|e| (e.errno(), e.message().to_string()))
}

impl Sink for ArrowWriter {
    fn null(&mut self, node: usize) -> R {
        rust(self.append_null(node))
    }
    fn bool(&mut self, node: usize, v: bool) -> R {
        rust(self.append_bool(node, v))
    }
    fn fixed(&mut self, node: usize, dt: &DataType, b: &[u8]) -> R {
        use DataType::*;
        rust(match dt {
            Int8 => self.append_i8(node, b[0] as i8),
            UInt8 => self.append_u8(node, b[0]),
            Int16 => self.append_i16(node, i16::from_le_bytes(b.try_into().unwrap())),
            UInt16 => self.append_u16(node, u16::from_le_bytes(b.try_into().unwrap())),
            Float16 => self.append_f16(node, half::f16::from_le_bytes(b.try_into().unwrap())),
            Int32 | Date32 | Time32(_) | Interval(arrow_schema::IntervalUnit::YearMonth) => {
                self.append_i32(node, i32::from_le_bytes(b.try_into().unwrap()))
            }
            UInt32 => self.append_u32(node, u32::from_le_bytes(b.try_into().unwrap())),
            Float32 => self.append_f32(node, f32::from_le_bytes(b.try_into().unwrap())),
            Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) => {
                self.append_i64(node, i64::from_le_bytes(b.try_into().unwrap()))
            }
            UInt64 => self.append_u64(node, u64::from_le_bytes(b.try_into().unwrap())),
            Float64 => self.append_f64(node, f64::from_le_bytes(b.try_into().unwrap())),
            dt if is_decimal(dt) => self.append_decimal_bytes(node, b),
            _ => self.append_bytes(node, b),
        })
    }
    fn bytes(&mut self, node: usize, v: &[u8]) -> R {
        rust(self.append_bytes(node, v))
    }
    fn decimal(&mut self, node: usize, le: &[u8]) -> R {
        rust(self.append_decimal_bytes(node, le))
    }
    fn begin(&mut self, node: usize) -> R {
        rust(ArrowWriter::begin(self, node))
    }
    fn end(&mut self, node: usize) -> R {
        rust(ArrowWriter::end(self, node))
    }
    fn end_row(&mut self) -> R {
        rust(ArrowWriter::end_row(self))
    }
}

/// A writer made by `quiver_writer_new`, freed on drop.
struct CWriter(*mut QuiverWriter);

impl Drop for CWriter {
    fn drop(&mut self) {
        // SAFETY: made by quiver_writer_new, freed once.
        unsafe { quiver_writer_free(self.0) }
    }
}

impl CWriter {
    fn new(schema: &Schema, validate_utf8: bool) -> CWriter {
        let ffi = FFI_ArrowSchema::try_from(schema).unwrap();
        let mut opts = QuiverOptions { batch_rows: 0, recycle: false, retain: 0, validate_utf8: true };
        let mut w = null_mut();
        // SAFETY: valid pointers for the calls.
        unsafe {
            quiver_options_default(&mut opts);
            opts.validate_utf8 = validate_utf8;
            assert_eq!(quiver_writer_new(&ffi, &opts, &mut w), 0);
        }
        CWriter(w)
    }
    fn check(&self, rc: c_int) -> R {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: a live writer; its last error is a C string it owns.
        let msg = unsafe { CStr::from_ptr(quiver_writer_last_error(self.0)) }.to_string_lossy().into_owned();
        Err((rc, msg))
    }
    fn write_array(&self, node: usize, array: &dyn Array) -> R {
        let (a, s) = arrow_array::ffi::to_ffi(&array.to_data()).unwrap();
        // SAFETY: live structs, borrowed by the call.
        self.check(unsafe { quiver_write_array(self.0, node as u32, &a, &s) })
    }
    fn finish(&self, schema: &Schema) -> Result<RecordBatch, (i32, String)> {
        let mut out = FFI_ArrowArray::empty();
        // SAFETY: a live writer; `out` is ours.
        self.check(unsafe { quiver_writer_finish(self.0, &mut out) })?;
        // SAFETY: quiver exported `out` with this schema's struct type.
        let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(out, DataType::Struct(schema.fields().clone())) }
            .unwrap();
        Ok(RecordBatch::from(StructArray::from(data)))
    }
    fn stats(&self) -> QuiverStats {
        let mut s =
            QuiverStats { batches: 0, buffers_reused: 0, buffers_allocated: 0, bytes_allocated: 0, bytes_retained: 0 };
        // SAFETY: a live writer and a valid out pointer.
        assert_eq!(unsafe { quiver_writer_stats(self.0, &mut s) }, 0);
        s
    }
    fn rows(&self) -> i64 {
        // SAFETY: a live writer.
        unsafe { quiver_writer_rows(self.0) }
    }
}

impl Sink for CWriter {
    fn null(&mut self, node: usize) -> R {
        // SAFETY: `self.0` is a live writer (CWriter owns it).
        self.check(unsafe { quiver_append_null(self.0, node as u32) })
    }
    fn bool(&mut self, node: usize, v: bool) -> R {
        // SAFETY: as above.
        self.check(unsafe { quiver_append_bool(self.0, node as u32, v) })
    }
    fn fixed(&mut self, node: usize, dt: &DataType, b: &[u8]) -> R {
        use DataType::*;
        let n = node as u32;
        let w = self.0;
        // SAFETY: a live writer; `b` is borrowed by the calls.
        let rc = unsafe {
            match dt {
                Int8 => quiver_append_i8(w, n, b[0] as i8),
                UInt8 => quiver_append_u8(w, n, b[0]),
                Int16 => quiver_append_i16(w, n, i16::from_le_bytes(b.try_into().unwrap())),
                UInt16 | Float16 => quiver_append_u16(w, n, u16::from_le_bytes(b.try_into().unwrap())),
                Int32 | Date32 | Time32(_) | Interval(arrow_schema::IntervalUnit::YearMonth) => {
                    quiver_append_i32(w, n, i32::from_le_bytes(b.try_into().unwrap()))
                }
                UInt32 => quiver_append_u32(w, n, u32::from_le_bytes(b.try_into().unwrap())),
                Float32 => quiver_append_f32(w, n, f32::from_le_bytes(b.try_into().unwrap())),
                Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) => {
                    quiver_append_i64(w, n, i64::from_le_bytes(b.try_into().unwrap()))
                }
                UInt64 => quiver_append_u64(w, n, u64::from_le_bytes(b.try_into().unwrap())),
                Float64 => quiver_append_f64(w, n, f64::from_le_bytes(b.try_into().unwrap())),
                dt if is_decimal(dt) => quiver_append_decimal(w, n, b.as_ptr(), b.len()),
                _ => quiver_append_bytes(w, n, b.as_ptr(), b.len()),
            }
        };
        self.check(rc)
    }
    fn bytes(&mut self, node: usize, v: &[u8]) -> R {
        // SAFETY: as above; `v` is a live slice.
        self.check(unsafe { quiver_append_bytes(self.0, node as u32, v.as_ptr(), v.len()) })
    }
    fn decimal(&mut self, node: usize, le: &[u8]) -> R {
        // SAFETY: as above; `le` is a live slice.
        self.check(unsafe { quiver_append_decimal(self.0, node as u32, le.as_ptr(), le.len()) })
    }
    fn begin(&mut self, node: usize) -> R {
        // SAFETY: `self.0` is a live writer (CWriter owns it).
        self.check(unsafe { quiver_begin(self.0, node as u32) })
    }
    fn end(&mut self, node: usize) -> R {
        // SAFETY: as above.
        self.check(unsafe { quiver_end(self.0, node as u32) })
    }
    fn end_row(&mut self) -> R {
        // SAFETY: as above.
        self.check(unsafe { quiver_end_row(self.0) })
    }
}

/// Public nodes of a value of type `dt` (an encoded column's value node is hidden).
fn node_count(dt: &DataType) -> usize {
    match dt {
        DataType::Struct(fs) => 1 + fs.iter().map(|f| node_count(f.data_type())).sum::<usize>(),
        DataType::Union(fs, _) => 1 + fs.iter().map(|(_, f)| node_count(f.data_type())).sum::<usize>(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => 1 + node_count(f.data_type()),
        DataType::Dictionary(_, v) => node_count(v),
        DataType::RunEndEncoded(_, v) => node_count(v.data_type()),
        _ => 1,
    }
}

/// When, in the row path, the refused call is made: before the first append
/// to `leaf`, or right after `begin(node)`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    BeforeLeaf(usize),
    AfterBegin(usize),
}

struct Hook<'a, S> {
    at: At,
    call: HookCall<'a, S>,
}

impl<S> Hook<'_, S> {
    fn none() -> Self {
        Hook { at: At::BeforeLeaf(usize::MAX), call: None }
    }
    fn fire(&mut self, s: &mut S, at: At) {
        if self.at == at {
            if let Some(call) = self.call.take() {
                call(s);
            }
        }
    }
}

/// Writes element `i` of `arr` (of type `dt`) into `node` through the row path.
fn write_value<S: Sink>(s: &mut S, node: usize, arr: &dyn Array, i: usize, hook: &mut Hook<'_, S>) -> R {
    let dt = arr.data_type().clone();
    let leaf = |s: &mut S, hook: &mut Hook<'_, S>| {
        hook.fire(s, At::BeforeLeaf(node));
    };
    match &dt {
        DataType::Dictionary(..) => {
            let d = arr.as_any_dictionary();
            if d.is_null(i) {
                leaf(s, hook);
                return s.null(node);
            }
            let key = d.normalized_keys()[i];
            return write_value(s, node, d.values().as_ref(), key, hook);
        }
        DataType::RunEndEncoded(..) => {
            let r = arr.as_any().downcast_ref::<RunArray<Int32Type>>().unwrap();
            let phys = r.get_physical_index(i);
            return write_value(s, node, r.values().as_ref(), phys, hook);
        }
        DataType::Union(..) => {
            let u = arr.as_any().downcast_ref::<UnionArray>().unwrap();
            let t = u.type_id(i);
            let member = 1 + if t == 0 { 0 } else { node_count(u.child(0).data_type()) };
            s.begin(node)?;
            hook.fire(s, At::AfterBegin(node));
            write_value(s, node + member, u.child(t).as_ref(), u.value_offset(i), hook)?;
            return s.end(node);
        }
        _ => {}
    }
    if arr.is_null(i) {
        if !matches!(
            dt,
            DataType::Struct(_)
                | DataType::List(_)
                | DataType::LargeList(_)
                | DataType::FixedSizeList(..)
                | DataType::Map(..)
                | DataType::ListView(_)
                | DataType::LargeListView(_)
        ) {
            leaf(s, hook);
        }
        return s.null(node);
    }
    let items = |s: &mut S, hook: &mut Hook<'_, S>, values: ArrayRef| -> R {
        s.begin(node)?;
        hook.fire(s, At::AfterBegin(node));
        for k in 0..values.len() {
            write_value(s, node + 1, values.as_ref(), k, hook)?;
        }
        s.end(node)
    };
    match &dt {
        DataType::Struct(_) => {
            let st = arr.as_struct();
            s.begin(node)?;
            hook.fire(s, At::AfterBegin(node));
            let mut c = node + 1;
            for col in st.columns() {
                write_value(s, c, col.as_ref(), i, hook)?;
                c += node_count(col.data_type());
            }
            s.end(node)
        }
        DataType::List(_) => items(s, hook, arr.as_list::<i32>().value(i)),
        DataType::LargeList(_) => items(s, hook, arr.as_list::<i64>().value(i)),
        DataType::Map(..) => items(s, hook, Arc::new(arr.as_map().value(i))),
        DataType::FixedSizeList(..) => items(s, hook, arr.as_fixed_size_list().value(i)),
        DataType::ListView(_) => items(s, hook, arr.as_list_view::<i32>().value(i)),
        DataType::LargeListView(_) => items(s, hook, arr.as_list_view::<i64>().value(i)),
        _ => {
            leaf(s, hook);
            write_leaf(s, node, arr, i)
        }
    }
}

fn write_leaf<S: Sink>(s: &mut S, node: usize, arr: &dyn Array, i: usize) -> R {
    let data = arr.to_data();
    let dt = data.data_type();
    match dt {
        DataType::Null => s.null(node),
        DataType::Boolean => s.bool(node, arr.as_boolean().value(i)),
        DataType::Utf8 | DataType::Binary => {
            let o = data.buffer::<i32>(0);
            let j = data.offset() + i;
            s.bytes(node, &data.buffers()[1].as_slice()[o[j] as usize..o[j + 1] as usize])
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            let o = data.buffer::<i64>(0);
            let j = data.offset() + i;
            s.bytes(node, &data.buffers()[1].as_slice()[o[j] as usize..o[j + 1] as usize])
        }
        DataType::Utf8View => s.bytes(node, arr.as_string_view().value(i).as_bytes()),
        DataType::BinaryView => s.bytes(node, arr.as_binary_view().value(i)),
        dt => {
            let width = dt.primitive_width().unwrap_or_else(|| match dt {
                DataType::FixedSizeBinary(w) => *w as usize,
                _ => panic!("no row-path writer for {dt}"),
            });
            let j = data.offset() + i;
            s.fixed(node, dt, &data.buffers()[0].as_slice()[j * width..(j + 1) * width])
        }
    }
}

/// Writes rows `rows` of column `x` (with `k` = the row number + base) through the row path.
fn write_rows<S: Sink>(s: &mut S, x: &dyn Array, base: i64, hook: &mut Hook<'_, S>, target: Option<usize>) -> R {
    for i in 0..x.len() {
        let mut none = Hook::none();
        let h = if Some(i) == target { &mut *hook } else { &mut none };
        s.fixed(0, &DataType::Int64, &(base + i as i64).to_le_bytes())?;
        write_value(s, 1, x, i, h)?;
        s.end_row()?;
    }
    Ok(())
}

// ---- one case ------------------------------------------------------------------------------

/// The arrays of one shape: the good chunks before and after the refused call.
struct Data {
    schema: Schema,
    /// Rows before the refused call (committed), and after it.
    first: ArrayRef,
    second: ArrayRef,
}

const FIRST: usize = 4;
const SECOND: usize = 3;

fn schema_of(dt: DataType, not_null_leaf_column: bool) -> Schema {
    Schema::new(vec![Field::new("k", DataType::Int64, false), Field::new("x", dt, !not_null_leaf_column)])
}

fn data_of(shape: &Shape) -> Data {
    let dt = shape.data_type();
    let column_not_null = shape.leaf_not_null && shape.wraps.is_empty();
    Data {
        schema: schema_of(dt.clone(), column_not_null),
        first: gen(&dt, !column_not_null, FIRST, 1, Last::Good),
        second: gen(&dt, !column_not_null, SECOND, 2, Last::Good),
    }
}

fn keys(base: i64, n: usize) -> Int64Array {
    Int64Array::from((0..n as i64).map(|i| base + i).collect::<Vec<_>>())
}

/// The refused input of a column-path case: an array whose last leaf value is `last`.
fn bad_array(shape: &Shape, last: Last, sliced: bool) -> ArrayRef {
    let dt = shape.data_type();
    let n = 3;
    if sliced {
        gen(&dt, true, n + 1, 7, last).slice(1, n)
    } else {
        gen(&dt, true, n, 7, last)
    }
}

/// The refused row-path call of `refusal` at the leaf node.
fn row_refusal<S: Sink + 'static>(shape: &Shape, refusal: Refusal, leaf: usize) -> Call<S> {
    let dt = shape.leaf.clone();
    match refusal {
        Refusal::DecimalOverPrecision => {
            let p = match dt {
                DataType::Decimal32(p, _)
                | DataType::Decimal64(p, _)
                | DataType::Decimal128(p, _)
                | DataType::Decimal256(p, _) => p,
                _ => unreachable!(),
            };
            let v = i256::from_i128(10).wrapping_pow(p as u32).to_le_bytes();
            let width = dt.primitive_width().unwrap();
            (Box::new(move |s| s.decimal(leaf, &v[..width.max(16)])), ERANGE)
        }
        Refusal::OffsetsPast32Bits => (Box::new(move |s| s.bytes(leaf, &huge()[..1 << 31])), EOVERFLOW),
        Refusal::InvalidUtf8 => (Box::new(move |s| s.bytes(leaf, b"ok\xff")), EINVAL),
        Refusal::WrongInputKind => {
            if takes_bytes(&dt) {
                (Box::new(move |s| s.bool(leaf, true)), EINVAL)
            } else {
                (Box::new(move |s| s.bytes(leaf, b"\x01\x02\x03")), EINVAL)
            }
        }
        Refusal::NullIntoNotNull => (Box::new(move |s| s.null(leaf)), EINVAL),
        Refusal::HalfRowEndRow => (Box::new(|s| s.end_row()), EINVAL),
        Refusal::HalfRowFinish | Refusal::HalfRowColumnWrite => {
            unreachable!("made by the caller, which has the writer's own API")
        }
        Refusal::NullPointer => unreachable!("made by the C cases"),
        _ => unreachable!("{refusal:?} is not a row-path refusal"),
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    by_refusal: BTreeMap<Refusal, usize>,
    by_path: BTreeMap<Path, usize>,
    by_depth: [usize; 3],
}

fn compare(got: &RecordBatch, want: &RecordBatch, what: &dyn Fn() -> String) {
    if exact_bytes(got) != exact_bytes(want) {
        exact::assert_same_batch(got, want, &what());
    }
}

/// Runs one case on the Rust API; panics on any difference.
fn run_rust(shape: &Shape, data: &Data, refusal: Refusal, path: Path, next: Next) {
    let what = || format!("{} / {refusal:?} / {path:?} / then {next:?}", shape.name());
    let schema = Arc::new(data.schema.clone());
    let options = WriterOptions { validate_utf8: refusal != Refusal::OffsetsPast32Bits, ..WriterOptions::default() };
    let mut subject = ArrowWriter::create(schema.clone(), options.clone()).unwrap();
    let mut reference = ArrowWriter::create(schema.clone(), options).unwrap();
    let (leaf, begin) = shape.leaf_nodes();
    let row = matches!(path, Path::RowMidRow | Path::RowAfterBegin);
    // The first chunk: through the row path when the refused call is made in
    // its last row, else through the column path.
    let expected_rc;
    let mut outcome: Option<R> = None;
    if row {
        let at = if path == Path::RowMidRow { At::BeforeLeaf(leaf) } else { At::AfterBegin(begin.unwrap()) };
        let cell = std::cell::RefCell::new(&mut outcome);
        let (call, rc): Call<ArrowWriter> = match refusal {
            Refusal::HalfRowFinish => (Box::new(|w: &mut ArrowWriter| rust(w.finish().map(|_| ()))), EINVAL),
            Refusal::HalfRowColumnWrite => {
                (Box::new(|w: &mut ArrowWriter| rust(w.write_column(0, &[7i64], None))), EINVAL)
            }
            _ => row_refusal::<ArrowWriter>(shape, refusal, leaf),
        };
        expected_rc = rc;
        let mut hook: Hook<'_, ArrowWriter> = Hook {
            at,
            call: Some(Box::new(|w: &mut ArrowWriter| {
                let rows = w.rows();
                let r = call(w);
                assert_eq!(w.rows(), rows, "{}: the refused call changed the committed rows", what());
                **cell.borrow_mut() = Some(r);
            })),
        };
        write_rows(&mut subject, data.first.as_ref(), 0, &mut hook, Some(FIRST - 1))
            .unwrap_or_else(|e| panic!("{}: {e:?}", what()));
        drop(hook);
        write_rows(&mut reference, data.first.as_ref(), 0, &mut Hook::none(), None).unwrap();
    } else {
        for w in [&mut subject, &mut reference] {
            w.write_array(0, &keys(0, FIRST)).unwrap();
            w.write_array(1, data.first.as_ref()).unwrap();
        }
        let rows = subject.rows();
        let r = match (refusal, path) {
            (Refusal::DecimalOverPrecision, Path::WriteColumn) => {
                let bad = bad_array(shape, Last::OverPrecision, false);
                let d = bad.to_data();
                expected_rc = ERANGE;
                rust(subject.write_column_bytes(1, d.buffers()[0].as_slice(), None, d.len()))
            }
            (Refusal::WrongLength, Path::WriteColumn) => {
                // Values one short: 9 rows of the column's width (a 1-byte bitmap for boolean).
                let width = match shape.leaf {
                    DataType::FixedSizeBinary(w) => w as usize,
                    DataType::Boolean => 0,
                    ref dt => dt.primitive_width().unwrap(),
                };
                expected_rc = EINVAL;
                let values = vec![0u8; if width == 0 { 1 } else { 8 * width }];
                let r1 = rust(subject.write_column_bytes(1, &values, None, 9));
                assert_eq!(r1.as_ref().map_err(|e| e.0).err(), Some(EINVAL), "{}: short values", what());
                // Validity one byte short.
                let values = vec![0u8; 9 * 32];
                assert_eq!(subject.rows(), rows);
                rust(subject.write_column_bytes(1, &values, Some(&[0xFF]), 9))
            }
            (Refusal::NullIntoNotNull, Path::WriteColumn) => {
                let good = bad_array(shape, Last::Good, false).to_data();
                expected_rc = EINVAL;
                rust(subject.write_column_bytes(1, good.buffers()[0].as_slice(), Some(&[0b101]), good.len()))
            }
            (Refusal::DecimalOverPrecision, _) => {
                expected_rc = ERANGE;
                rust(
                    subject
                        .write_array(1, bad_array(shape, Last::OverPrecision, path == Path::WriteArraySliced).as_ref()),
                )
            }
            (Refusal::OffsetsPast32Bits, _) => {
                expected_rc = EOVERFLOW;
                rust(subject.write_array(1, bad_array(shape, Last::Huge, path == Path::WriteArraySliced).as_ref()))
            }
            (Refusal::WrongArrayType, _) => {
                expected_rc = EINVAL;
                let other = if shape.leaf == DataType::Int8 { DataType::Int16 } else { DataType::Int8 };
                rust(subject.write_array(
                    1,
                    bad_array(&shape.with_leaf(other), Last::Good, path == Path::WriteArraySliced).as_ref(),
                ))
            }
            (Refusal::NullIntoNotNull, _) => {
                // A nullable array with nulls, of the column's type.
                expected_rc = EINVAL;
                let nullable = Shape { leaf_not_null: false, ..shape.clone() };
                rust(subject.write_array(1, bad_array(&nullable, Last::Good, path == Path::WriteArraySliced).as_ref()))
            }
            _ => unreachable!("{refusal:?} on {path:?}"),
        };
        assert_eq!(subject.rows(), rows, "{}: the refused call changed the committed rows", what());
        outcome = Some(r);
    }
    match outcome {
        Some(Err((rc, msg))) => {
            assert_eq!(rc, expected_rc, "{}: refused with {rc} ({msg})", what());
            names_the_input_row(refusal, path, &msg, &what);
        }
        Some(Ok(())) => panic!("{}: the call was not refused", what()),
        None => panic!("{}: the refused call was never made (no such position)", what()),
    }
    // The rows after it, then the next batch.
    let second = |w: &mut ArrowWriter| match next {
        Next::Columns => {
            w.write_array(0, &keys(FIRST as i64, SECOND)).unwrap();
            w.write_array(1, data.second.as_ref()).unwrap();
        }
        Next::Rows => write_rows(w, data.second.as_ref(), FIRST as i64, &mut Hook::none(), None).unwrap(),
    };
    second(&mut subject);
    second(&mut reference);
    let (got, want) = (subject.finish().unwrap(), reference.finish().unwrap());
    compare(&got, &want, &what);
    drop((got, want));
    second(&mut subject);
    second(&mut reference);
    compare(&subject.finish().unwrap(), &reference.finish().unwrap(), &|| format!("{}: the batch after", what()));
    let (s, r) = (subject.stats(), reference.stats());
    assert!(s.bytes_retained <= s.bytes_allocated && r.bytes_retained <= r.bytes_allocated, "{}: {s:?} {r:?}", what());
    assert_eq!(
        (s.batches, s.buffers_allocated, s.buffers_reused),
        (r.batches, r.buffers_allocated, r.buffers_reused),
        "{}",
        what()
    );
}

/// A decimal refused by the column path names the input row that holds it:
/// the refused inputs hold it in their last row (row 2 of 3).
fn names_the_input_row(refusal: Refusal, path: Path, msg: &str, what: &dyn Fn() -> String) {
    if refusal == Refusal::DecimalOverPrecision && !matches!(path, Path::RowMidRow | Path::RowAfterBegin) {
        assert!(
            msg.contains("row 2 does not fit precision") || msg.ends_with("in input row 2"),
            "{}: the message does not name input row 2: {msg}",
            what()
        );
    }
}

/// Finds the array of the FFI tree that holds the leaf (following the
/// wrappers), as raw pointers into `root`.
fn leaf_array(root: *mut ArrowArray, wraps: &[Wrap]) -> *mut ArrowArray {
    let mut a = root;
    for w in wraps {
        // SAFETY: the tree of a live exported array.
        unsafe {
            a = match w {
                Wrap::Struct => *(*a).children.add(1),
                Wrap::Map => *(**(*a).children).children.add(1),
                Wrap::Dict => (*a).dictionary,
                Wrap::Ree => *(*a).children.add(1),
                _ => *(*a).children,
            };
        }
    }
    a
}

/// Runs one case on the C API; panics on any difference.
fn run_c(shape: &Shape, data: &Data, refusal: Refusal, path: Path, next: Next) {
    let what = || format!("{} / {refusal:?} / {path:?} (C) / then {next:?}", shape.name());
    let schema = &data.schema;
    let mut subject = CWriter::new(schema, true);
    let mut reference = CWriter::new(schema, true);
    let (leaf, _) = shape.leaf_nodes();
    let expected_rc;
    let outcome: R;
    if path == Path::CRow {
        let (call, rc): Call<CWriter> = match refusal {
            Refusal::NullPointer if is_decimal(&shape.leaf) => (
                Box::new(move |w: &mut CWriter| {
                    // SAFETY: `w.0` is a live writer; the NULL pointer is the bad input.
                    w.check(unsafe { quiver_append_decimal(w.0, leaf as u32, null(), 16) })
                }),
                EINVAL,
            ),
            Refusal::NullPointer => (
                // SAFETY: `w.0` is a live writer; the NULL pointer is the bad input.
                Box::new(move |w: &mut CWriter| w.check(unsafe { quiver_append_bytes(w.0, leaf as u32, null(), 3) })),
                EINVAL,
            ),
            _ => row_refusal::<CWriter>(shape, refusal, leaf),
        };
        expected_rc = rc;
        let cell = std::cell::RefCell::new(None);
        let mut hook: Hook<'_, CWriter> = Hook {
            at: At::BeforeLeaf(leaf),
            call: Some(Box::new(|w: &mut CWriter| {
                let rows = w.rows();
                let r = call(w);
                assert_eq!(w.rows(), rows, "{}: the refused call changed the committed rows", what());
                *cell.borrow_mut() = Some(r);
            })),
        };
        write_rows(&mut subject, data.first.as_ref(), 0, &mut hook, Some(FIRST - 1))
            .unwrap_or_else(|e| panic!("{}: {e:?}", what()));
        drop(hook);
        write_rows(&mut reference, data.first.as_ref(), 0, &mut Hook::none(), None).unwrap();
        outcome = cell.into_inner().unwrap_or_else(|| panic!("{}: the refused call was never made", what()));
    } else {
        for w in [&subject, &reference] {
            w.write_array(0, &keys(0, FIRST)).unwrap();
            w.write_array(1, data.first.as_ref()).unwrap();
        }
        let rows = subject.rows();
        outcome = if path == Path::CWriteColumn {
            expected_rc = EINVAL;
            // SAFETY: a live writer; the NULL values pointer is the bad input.
            subject.check(unsafe { quiver_write_column(subject.0, 1, null(), null(), 3) })
        } else {
            let last = match refusal {
                Refusal::DecimalOverPrecision => Last::OverPrecision,
                Refusal::InvalidUtf8 => Last::BadUtf8,
                _ => Last::Good,
            };
            let input_shape = if refusal == Refusal::WrongArrayType {
                shape.with_leaf(if shape.leaf == DataType::Int8 { DataType::Int16 } else { DataType::Int8 })
            } else {
                shape.clone()
            };
            let bad = bad_array(&input_shape, last, true);
            let (mut a, s) = arrow_array::ffi::to_ffi(&bad.to_data()).unwrap();
            let root = ArrowArray::from_ffi_mut(&mut a);
            expected_rc = if refusal == Refusal::DecimalOverPrecision { ERANGE } else { EINVAL };
            let call = |a: *const FFI_ArrowArray, s: *const FFI_ArrowSchema| {
                // SAFETY: a live writer; `a` and `s` are the case's (possibly malformed) structs, which stay alive for the call.
                subject.check(unsafe { quiver_write_array(subject.0, 1, a, s) })
            };
            // SAFETY: each change below is undone before `a` is released.
            unsafe {
                match refusal {
                    Refusal::BadChildCount => {
                        (*root).n_children += 1;
                        let r1 = call(root as *const FFI_ArrowArray, &s);
                        (*root).n_children -= 1;
                        assert_eq!(
                            r1.as_ref().map_err(|e| e.0).err(),
                            Some(EINVAL),
                            "{}: n_children + 1: {r1:?}",
                            what()
                        );
                        if (*root).n_children > 0 {
                            (*root).n_children -= 1;
                            let r = call(root as *const FFI_ArrowArray, &s);
                            (*root).n_children += 1;
                            r
                        } else {
                            r1
                        }
                    }
                    Refusal::WrongLength => {
                        // The first child (or the dictionary) one shorter than its parent needs.
                        let child = if (*root).n_children > 0 { *(*root).children } else { (*root).dictionary };
                        (*child).length -= 1;
                        let r = call(root as *const FFI_ArrowArray, &s);
                        (*child).length += 1;
                        r
                    }
                    Refusal::NullPointer => {
                        let r1 = call(null(), &s);
                        assert_eq!(r1.as_ref().map_err(|e| e.0).err(), Some(EINVAL), "{}: NULL array: {r1:?}", what());
                        let r2 = call(root as *const FFI_ArrowArray, null());
                        assert_eq!(r2.as_ref().map_err(|e| e.0).err(), Some(EINVAL), "{}: NULL schema: {r2:?}", what());
                        if (*root).n_children > 0 {
                            let c = *(*root).children;
                            *(*root).children = null_mut();
                            let r3 = call(root as *const FFI_ArrowArray, &s);
                            *(*root).children = c;
                            assert_eq!(
                                r3.as_ref().map_err(|e| e.0).err(),
                                Some(EINVAL),
                                "{}: NULL child: {r3:?}",
                                what()
                            );
                        }
                        // The leaf's value buffer NULL (if it has one).
                        let l = leaf_array(root, &shape.wraps);
                        let k = match shape.leaf {
                            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => 2,
                            _ => 1,
                        };
                        if shape.leaf != DataType::Null {
                            let b = *(*l).buffers.add(k);
                            *(*l).buffers.add(k) = null();
                            let r4 = call(root as *const FFI_ArrowArray, &s);
                            *(*l).buffers.add(k) = b;
                            assert_eq!(
                                r4.as_ref().map_err(|e| e.0).err(),
                                Some(EINVAL),
                                "{}: NULL buffer: {r4:?}",
                                what()
                            );
                        }
                        let bufs = (*root).buffers;
                        if (*root).n_buffers > 0 {
                            (*root).buffers = null_mut();
                            let r5 = call(root as *const FFI_ArrowArray, &s);
                            (*root).buffers = bufs;
                            r5
                        } else {
                            r1
                        }
                    }
                    _ => call(root as *const FFI_ArrowArray, &s),
                }
            }
        };
        assert_eq!(subject.rows(), rows, "{}: the refused call changed the committed rows", what());
    }
    match outcome {
        Err((rc, msg)) => {
            assert_eq!(rc, expected_rc, "{}: refused with {rc} ({msg})", what());
            names_the_input_row(refusal, path, &msg, &what);
        }
        Ok(()) => panic!("{}: the call was not refused", what()),
    }
    let second = |w: &mut CWriter| match next {
        Next::Columns => {
            w.write_array(0, &keys(FIRST as i64, SECOND)).unwrap();
            w.write_array(1, data.second.as_ref()).unwrap();
        }
        Next::Rows => write_rows(w, data.second.as_ref(), FIRST as i64, &mut Hook::none(), None).unwrap(),
    };
    second(&mut subject);
    second(&mut reference);
    let (got, want) = (subject.finish(schema).unwrap(), reference.finish(schema).unwrap());
    compare(&got, &want, &what);
    drop((got, want));
    second(&mut subject);
    second(&mut reference);
    compare(&subject.finish(schema).unwrap(), &reference.finish(schema).unwrap(), &|| {
        format!("{}: the batch after", what())
    });
    let (s, r) = (subject.stats(), reference.stats());
    assert!(s.bytes_retained <= s.bytes_allocated && r.bytes_retained <= r.bytes_allocated, "{}: {s:?} {r:?}", what());
    assert_eq!(
        (s.batches, s.buffers_allocated, s.buffers_reused),
        (r.batches, r.buffers_allocated, r.buffers_reused),
        "{}",
        what()
    );
}

/// Every shape: each leaf at depth 0, 1 and 2 (an encoded column's values
/// are not themselves encoded: arrow has no such type).
fn shapes() -> Vec<Shape> {
    let mut out = Vec::new();
    for leaf in leaves() {
        out.push(Shape { leaf: leaf.clone(), leaf_not_null: false, wraps: vec![] });
        for a in WRAPS {
            out.push(Shape { leaf: leaf.clone(), leaf_not_null: false, wraps: vec![a] });
            for b in WRAPS {
                if a.encoded() && b.encoded() {
                    continue;
                }
                out.push(Shape { leaf: leaf.clone(), leaf_not_null: false, wraps: vec![a, b] });
            }
        }
    }
    out
}

#[test]
fn a_refused_call_changes_nothing_over_every_type_nesting_refusal_and_path() {
    let filter = std::env::var("QUIVER_ATOMICITY_FILTER").ok();
    let mut tally = Tally::default();
    for shape in shapes() {
        let mut data_cache: BTreeMap<bool, Data> = BTreeMap::new();
        for refusal in REFUSALS {
            for path in PATHS {
                if !applies(&shape, refusal, path) {
                    continue;
                }
                let shape = Shape { leaf_not_null: refusal == Refusal::NullIntoNotNull, ..shape.clone() };
                if filter
                    .as_ref()
                    .is_some_and(|f| !format!("{} {refusal:?} {path:?}", shape.name()).contains(f.as_str()))
                {
                    continue;
                }
                let data = data_cache.entry(shape.leaf_not_null).or_insert_with(|| data_of(&shape));
                for next in [Next::Columns, Next::Rows] {
                    if matches!(path, Path::CRow | Path::CWriteColumn | Path::CWriteArray) {
                        run_c(&shape, data, refusal, path, next);
                    } else {
                        run_rust(&shape, data, refusal, path, next);
                    }
                    tally.cases += 1;
                    *tally.by_refusal.entry(refusal).or_default() += 1;
                    *tally.by_path.entry(path).or_default() += 1;
                    tally.by_depth[shape.wraps.len()] += 1;
                }
            }
        }
    }
    println!("atomicity: {} cases ran (leaf types x depth x refusal x path x next writes)", tally.cases);
    println!("  by depth: {:?}", tally.by_depth);
    println!("  by refusal: {:?}", tally.by_refusal);
    println!("  by path: {:?}", tally.by_path);
    if filter.is_none() {
        // Every refusal and every path took part, at every depth.
        assert_eq!(tally.by_refusal.len(), REFUSALS.len(), "{:?}", tally.by_refusal);
        assert_eq!(tally.by_path.len(), PATHS.len(), "{:?}", tally.by_path);
        assert!(tally.by_depth.iter().all(|&d| d > 0));
    }
}
