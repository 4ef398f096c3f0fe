//! The direct gather of fixed-width and boolean columns: each column's
//! values are read from the records straight into the column's own value
//! buffer (`ArrowWriter::append_in_place`), zeros under nulls written in the
//! same pass, and the validity bits built 8 records at a time into a byte
//! from the null marks. For the native fixed widths the mark bytes of the
//! records are gathered first, once per byte a layout marks nulls in
//! (`gather_marks`); 8 records' validity byte is then a few word operations
//! on 8 mark bytes, 8 valid values are copied as they are, and each value of
//! a byte with nulls is ANDed with all ones or zero from its bit (no branch
//! per record, which would mispredict on random nulls; src/records/lanes.rs).
//! When every column is native fixed width, all of them are gathered
//! together, a tile of records at a time (`write_fixed_columns`).

use super::check::{decimal_value, var_bytes};
use super::lanes::{gather_marked, gather_marks, mark_bytes, marks_for, ByteSink};
use super::types::{Class, ColumnLayout, Encoding, NullMark};
use crate::error::Result;
use crate::writer::in_place::{BitsOut, ColumnRoom, ValuesOut, VarOut};
use crate::ArrowWriter;

/// Calls `put(i, record, valid)` for records `0..k` and writes their
/// validity bits (when `validity` is given) 8 records a byte. `null` is how the column
/// marks its nulls; `validity` is None for a column that is not nullable,
/// whose records were checked to hold no null.
///
/// # Safety
/// Every record holds the null mark's byte.
#[inline(always)]
unsafe fn for_each_record(
    k: usize,
    rec: impl Fn(usize) -> (*const u8, usize),
    null: NullMark,
    validity: Option<BitsOut<'_>>,
    mut put: impl FnMut(usize, (*const u8, usize), bool),
) {
    let Some(validity) = validity else {
        for i in 0..k {
            put(i, rec(i), true);
        }
        return;
    };
    let mut sink = ByteSink::new(validity);
    // The loop over the records, instantiated once per kind of mark.
    macro_rules! marked {
        ($is_null:expr) => {{
            let is_null = $is_null;
            let mut record = |i: usize| {
                let r = rec(i);
                let valid = !is_null(r.0);
                put(i, r, valid);
                valid as u8
            };
            // Whole bytes (8 records, unrolled), then the last part byte.
            for c in 0..k / 8 {
                let mut b = 0u8;
                for j in 0..8 {
                    b |= record(c * 8 + j) << j;
                }
                sink.put(c, b);
            }
            if k % 8 != 0 {
                let c = k / 8;
                let mut b = 0u8;
                for j in 0..k % 8 {
                    b |= record(c * 8 + j) << j;
                }
                sink.put(c, b);
            }
        }};
    }
    match null {
        NullMark::Never => {
            for i in 0..k {
                put(i, rec(i), true);
            }
            for c in 0..k.div_ceil(8) {
                let left = k - c * 8;
                sink.put(c, if left >= 8 { 0xFF } else { (1u8 << left) - 1 });
            }
        }
        NullMark::Bit { at, bit } => {
            let (at, shift) = (at + bit / 8, bit % 8);
            // SAFETY: the mark's byte is inside the record.
            marked!(|p: *const u8| unsafe { (*p.add(at) >> shift) & 1 == 1 })
        }
        // SAFETY: the mark's byte is inside the record.
        NullMark::Byte { at } => marked!(|p: *const u8| unsafe { *p.add(at) != 0 }),
    }
}

/// Gathers column `col` (fixed-width or boolean) of records `0..k`, all
/// checked good, into top-level column `node` of `w`.
///
/// # Safety
/// The records hold what the layout reads at fixed offsets (the size check
/// against `min_record_size`), and were checked good (`check`).
pub(super) unsafe fn write_fixed(
    w: &mut ArrowWriter,
    call: &str,
    node: usize,
    col: &ColumnLayout,
    rec: impl Fn(usize) -> (*const u8, usize),
    k: usize,
    marks: Option<&[u8]>,
) -> Result<()> {
    let (class, encoding, null) = (col.class, col.encoding, col.null);
    let fill = |values: ValuesOut<'_>, validity: Option<BitsOut<'_>>| {
        match (values, class, encoding) {
            // SAFETY: the value byte is inside the record, as are the marks.
            (ValuesOut::Bits(out), Class::Bool, Encoding::Fixed { at }) => unsafe {
                let mut sink = ByteSink::new(out);
                let mut b = 0u8;
                let put = |i: usize, (p, _): (*const u8, usize), valid: bool| {
                    b |= ((valid & (*p.add(at) != 0)) as u8) << (i % 8);
                    if i % 8 == 7 || i + 1 == k {
                        sink.put(i / 8, b);
                        b = 0;
                    }
                };
                for_each_record(k, rec, null, validity, put);
            },
            // SAFETY: the value is inside the record; `ptr` has room for
            // `k` values of `width` bytes, each written once.
            (ValuesOut::Fixed { ptr, width }, Class::Fixed { .. }, Encoding::Fixed { at }) => unsafe {
                match width {
                    1 | 2 | 4 | 8 | 16 => gather_marked(width, null, ptr, rec, at, k, marks, validity),
                    _ => {
                        let put = |i: usize, (p, _): (*const u8, usize), valid: bool| {
                            let dst = ptr.add(i * width);
                            if valid {
                                std::ptr::copy_nonoverlapping(p.add(at), dst, width);
                            } else {
                                std::ptr::write_bytes(dst, 0, width);
                            }
                        };
                        for_each_record(k, rec, null, validity, put)
                    }
                }
            },
            // Decimals from an integer or big-endian bytes. SAFETY: the
            // fields are inside the record, the value checked good; `ptr`
            // as above.
            (ValuesOut::Fixed { ptr, width }, Class::Fixed { .. }, encoding) => unsafe {
                let mut le = [0u8; 32];
                let put = |i: usize, (p, size): (*const u8, usize), valid: bool| {
                    let dst = ptr.add(i * width);
                    if valid && decimal_value(encoding, p, size, width, &mut le) {
                        std::ptr::copy_nonoverlapping(le.as_ptr(), dst, width);
                    } else {
                        std::ptr::write_bytes(dst, 0, width);
                    }
                };
                for_each_record(k, rec, null, validity, put);
            },
            _ => unreachable!("a boolean column takes Fixed; the writer's column is the layout's"),
        }
    };
    // SAFETY: `fill` writes all `k` values (each arm: every record).
    unsafe { w.append_in_place(node, call, k, fill) }
}

/// Gathers utf8/binary column `col` of records `0..k`, all checked good
/// (but for UTF-8), into top-level column `node` of `w`: one pass pushes
/// each value's bytes and end offset onto the column's own buffers; with
/// `utf8`, one UTF-8 check over the bytes pushed, with the test that no
/// value starts with a continuation byte (a character split across two
/// values): the values are each UTF-8 exactly when both hold. Only when
/// they do not is each value checked; `Ok(Some(i))`, the column as it was,
/// when record `i` is the first bad one.
///
/// # Safety
/// As [`write_fixed`]; pointer values point to their lengths of bytes.
pub(super) unsafe fn write_var(
    w: &mut ArrowWriter,
    call: &str,
    node: usize,
    col: &ColumnLayout,
    rec: impl Fn(usize) -> (*const u8, usize),
    k: usize,
    utf8: bool,
) -> Result<Option<usize>> {
    let (encoding, null) = (col.encoding, col.null);
    let data_bytes = if w.options().memory_limit == 0 {
        0
    } else {
        // SAFETY: as below.
        (0..k).map(|i| unsafe { var_bytes(encoding, rec(i).0, rec(i).1).len() }).sum()
    };
    let fill = |out: VarOut<'_>, validity: Option<BitsOut<'_>>| {
        let VarOut { offsets, data, large } = out;
        let (start, first) = (data.len(), offsets.len());
        let width = if large { 8 } else { 4 };
        offsets.reserve(k * width);
        let mut split = false;
        let put = |_: usize, (p, size): (*const u8, usize), valid: bool| {
            if valid {
                // SAFETY: checked good: inside the record, or the caller's
                // pointer and length.
                let v = unsafe { var_bytes(encoding, p, size) };
                split |= v.first().is_some_and(|&b| (b as i8) < -64);
                data.extend_from_slice(v);
            }
            if large {
                offsets.push(data.len() as i64);
            } else {
                offsets.push(data.len() as i32);
            }
        };
        // SAFETY: the null marks are inside the records.
        unsafe { for_each_record(k, rec, null, validity, put) };
        if !utf8 || (!split && std::str::from_utf8(&data[start..]).is_ok()) {
            return None;
        }
        let end = |i: usize| {
            let b = &offsets[first + i * width..first + (i + 1) * width];
            if large {
                i64::from_le_bytes(b.try_into().expect("8 bytes")) as usize
            } else {
                i32::from_le_bytes(b.try_into().expect("4 bytes")) as usize
            }
        };
        let mut from = start;
        for i in 0..k {
            let to = end(i);
            if std::str::from_utf8(&data[from..to]).is_err() {
                return Some(i);
            }
            from = to;
        }
        unreachable!("a value that is not UTF-8")
    };
    w.append_var_in_place(node, call, k, data_bytes, fill)
}

/// Whether `col` is a native fixed-width column the fused gather takes.
pub(super) fn fusable(col: &ColumnLayout) -> bool {
    matches!((col.class, col.encoding), (Class::Fixed { width: 1 | 2 | 4 | 8 | 16, .. }, Encoding::Fixed { .. }))
}

/// Records per tile of the fused gather: 512 records of up to a few
/// hundred bytes stay in the first-level cache while every column reads
/// them.
const TILE: usize = 512;

/// Gathers every column of records `0..k` (each described and `fusable`, all checked
/// good) into top-level columns `nodes` of `w` at once, a tile of records
/// at a time: the tile's null-mark bytes (one gather per byte a layout
/// marks nulls in, into `marks`), then each column's values and validity
/// from the tile. Each record is read from memory once instead of once per
/// column. `Ok(false)`, having changed nothing, when the writer leaves it
/// to the column-by-column gather (see `append_in_place_columns`).
///
/// # Safety
/// As [`write_fixed`], for every column.
pub(super) unsafe fn write_fixed_columns(
    w: &mut ArrowWriter,
    call: &str,
    nodes: &[usize],
    cols: &[Option<ColumnLayout>],
    rec: impl Fn(usize) -> (*const u8, usize) + Copy,
    k: usize,
    marks: &mut Vec<(usize, Vec<u8>)>,
) -> Result<bool> {
    // The mark bytes the columns read, each once.
    let used = mark_bytes(cols.iter().flatten().filter(|c| c.nullable), marks);
    let marks = &mut marks[..used];
    let fill = |rooms: &[ColumnRoom]| {
        let mut t0 = 0;
        while t0 < k {
            let len = (k - t0).min(TILE);
            // By value: the loops below keep the records' base in a
            // register (a reference to it might alias the stores).
            let tile = move |i: usize| rec(t0 + i);
            for (at, bytes) in marks.iter_mut() {
                // SAFETY: the good records hold the mark's byte.
                unsafe { gather_marks(tile, len, *at, bytes) };
            }
            for (col, room) in cols.iter().flatten().zip(rooms) {
                let Encoding::Fixed { at } = col.encoding else { unreachable!("fusable") };
                let m = if col.nullable { marks_for(marks, col.null).map(|m| &m[..len]) } else { None };
                // SAFETY: the room holds `k` values and the bits of `k`
                // rows from `room.at`; this tile writes values and bits
                // `t0 .. t0 + len` of them (`t0` a multiple of 8, so a byte
                // of bits is this tile's alone or shared by OR).
                unsafe {
                    let validity = room
                        .bits
                        .map(|(p, n)| BitsOut { bytes: std::slice::from_raw_parts_mut(p, n), at: room.at + t0 });
                    let dst = room.values.add(t0 * room.width);
                    gather_marked(room.width, col.null, dst, tile, at, len, m, validity);
                }
            }
            t0 += len;
        }
    };
    // SAFETY: `fill` writes every value of every column (each tile, each
    // column) and the bit of each valid one.
    unsafe { w.append_in_place_columns(nodes, call, k, fill) }
}
