//! `quiver_append_slots` (one call for a row's fixed-width values, the JVM
//! binding's `Writer.appendRow`): every kind into its columns, nulls from the
//! mask, with and without `end_row`, byte-identical to the same values
//! appended one call each; a failing value leaves the row as the sequence of
//! per-value calls would (the values before it appended, the row open, the
//! per-value call's message), and the refused arguments.

mod exact;

use std::ffi::CStr;
use std::ptr::{null, null_mut};
use std::sync::Arc;

use arrow_array::{RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, SchemaRef};
use exact::assert_same_batch;
use quiver::ffi::writer::*;
use quiver::parse_schema;

const EINVAL: i32 = 22;

/// Every slot kind, with a column type it appends to natively and one it
/// converts into (date32 / timestamp / float16 take the same calls).
const SCHEMA: &str = "b: bool, i8: int8, i16: int16, i32: int32, i64: int64, u8: uint8, u16: uint16, \
                      u32: uint32, u64: uint64, f32: float32, f64: float64, d: date32, t: timestamp(us), h: float16";
const KINDS: [u8; 14] = [
    QUIVER_SLOT_BOOL,
    QUIVER_SLOT_I8,
    QUIVER_SLOT_I16,
    QUIVER_SLOT_I32,
    QUIVER_SLOT_I64,
    QUIVER_SLOT_U8,
    QUIVER_SLOT_U16,
    QUIVER_SLOT_U32,
    QUIVER_SLOT_U64,
    QUIVER_SLOT_F32,
    QUIVER_SLOT_F64,
    QUIVER_SLOT_I32,
    QUIVER_SLOT_I64,
    QUIVER_SLOT_F32,
];

struct W {
    w: *mut QuiverWriter,
    s: SchemaRef,
}

impl W {
    fn new(text: &str) -> W {
        let s: SchemaRef = Arc::new(parse_schema(text).unwrap());
        let ffi = FFI_ArrowSchema::try_from(s.as_ref()).unwrap();
        let mut w = null_mut();
        // SAFETY: valid pointers for the call.
        assert_eq!(unsafe { quiver_writer_new(&ffi, null(), &mut w) }, 0);
        W { w, s }
    }
    fn error(&self) -> String {
        // SAFETY: a live writer; its message (NULL: none) is a C string it owns.
        let e = unsafe { quiver_writer_last_error(self.w) };
        if e.is_null() {
            return String::new();
        }
        // SAFETY: as above, not NULL.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
    fn rows(&self) -> i64 {
        // SAFETY: a live writer.
        unsafe { quiver_writer_rows(self.w) }
    }
    fn finish(&self) -> RecordBatch {
        let mut out = FFI_ArrowArray::empty();
        // SAFETY: a live writer; `out` is ours.
        assert_eq!(unsafe { quiver_writer_finish(self.w, &mut out) }, 0);
        // SAFETY: exported with this schema's struct type.
        let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(out, DataType::Struct(self.s.fields().clone())) };
        RecordBatch::from(StructArray::from(data.unwrap()))
    }
    /// The per-value call of `kind` for `slot` on `node`.
    fn append(&self, node: u32, kind: u8, slot: u64) -> i32 {
        let w = self.w;
        // SAFETY: a live writer.
        unsafe {
            match kind {
                QUIVER_SLOT_BOOL => quiver_append_bool(w, node, slot as u8 != 0),
                QUIVER_SLOT_I8 => quiver_append_i8(w, node, slot as i8),
                QUIVER_SLOT_I16 => quiver_append_i16(w, node, slot as i16),
                QUIVER_SLOT_I32 => quiver_append_i32(w, node, slot as i32),
                QUIVER_SLOT_I64 => quiver_append_i64(w, node, slot as i64),
                QUIVER_SLOT_U8 => quiver_append_u8(w, node, slot as u8),
                QUIVER_SLOT_U16 => quiver_append_u16(w, node, slot as u16),
                QUIVER_SLOT_U32 => quiver_append_u32(w, node, slot as u32),
                QUIVER_SLOT_U64 => quiver_append_u64(w, node, slot),
                QUIVER_SLOT_F32 => quiver_append_f32(w, node, f32::from_bits(slot as u32)),
                QUIVER_SLOT_F64 => quiver_append_f64(w, node, f64::from_bits(slot)),
                _ => unreachable!(),
            }
        }
    }
}

impl Drop for W {
    fn drop(&mut self) {
        // SAFETY: the writer is ours.
        unsafe { quiver_writer_free(self.w) }
    }
}

/// Row `r`'s slots: values with junk in the high bytes the kind does not read.
fn slots(r: u64) -> [u64; 14] {
    let x = (r + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut s = [0u64; 14];
    for (k, v) in s.iter_mut().enumerate() {
        *v = x.rotate_left(k as u32 * 5) ^ (k as u64);
    }
    s[0] = r & 1; // bool: the low byte, 0 or 1 (any nonzero byte is true)
    s[9] = (s[9] & 0xFFFF_FFFF_0000_0000) | (r as f32 * 0.5).to_bits() as u64;
    s[10] = (r as f64 / 3.0).to_bits();
    s[13] = (s[13] & 0xFFFF_FFFF_0000_0000) | (r as f32 * 0.25).to_bits() as u64;
    s
}

fn nulls(r: u64) -> u64 {
    if r.is_multiple_of(3) {
        0
    } else {
        (r.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 20) & 0x3FFF
    }
}

/// Batch `b`'s nulls of row `r`: the mask of `nulls`, from row `from` on
/// (before it every value is valid, so a column's validity stays lazy up
/// to its first null), every column null in batch 3.
fn batch_nulls(b: u64, r: u64, from: u64) -> u64 {
    match b {
        3 => 0x3FFF,
        _ if r < from => 0,
        // the first nulls of a late start: every other column, node 3 among them
        _ if r == from && from > 0 => 0x2AAA,
        _ => nulls(r + b * 7),
    }
}

/// Over several batches (the buffers of the earlier ones reused, their
/// bitmaps grown past what the first batch reserved), with nulls from the
/// first row, from a later row or in every row.
#[test]
fn slots_match_the_per_value_appends_byte_for_byte() {
    let (a, b) = (W::new(SCHEMA), W::new(SCHEMA));
    for (batch, (rows, from)) in [(200u64, 0u64), (1000, 0), (1500, 700), (64, 0), (300, 299)].into_iter().enumerate() {
        let batch = batch as u64;
        for r in 0..rows {
            let (s, n) = (slots(r + batch * 1000), batch_nulls(batch, r, from));
            let rc = if r % 2 == 0 {
                // SAFETY: a live writer; 14 kinds and slots.
                unsafe { quiver_append_slots(a.w, 0, 14, KINDS.as_ptr(), s.as_ptr(), n, true) }
            } else {
                // in two calls, the second one committing; or without end_row, then quiver_end_row
                // SAFETY: as above.
                unsafe {
                    if r % 4 == 1 {
                        assert_eq!(quiver_append_slots(a.w, 0, 5, KINDS.as_ptr(), s.as_ptr(), n, false), 0);
                        quiver_append_slots(a.w, 5, 9, KINDS[5..].as_ptr(), s[5..].as_ptr(), n >> 5, true)
                    } else {
                        assert_eq!(quiver_append_slots(a.w, 0, 14, KINDS.as_ptr(), s.as_ptr(), n, false), 0);
                        quiver_end_row(a.w)
                    }
                }
            };
            assert_eq!(rc, 0, "batch {batch} row {r}: {}", a.error());
            for k in 0..14 {
                let rc = if n >> k & 1 != 0 {
                    // SAFETY: a live writer.
                    unsafe { quiver_append_null(b.w, k) }
                } else {
                    b.append(k, KINDS[k as usize], s[k as usize])
                };
                assert_eq!(rc, 0, "batch {batch} row {r} node {k}: {}", b.error());
            }
            // SAFETY: a live writer.
            assert_eq!(unsafe { quiver_end_row(b.w) }, 0);
        }
        let (x, y) = (a.finish(), b.finish());
        assert_eq!(x.num_rows() as u64, rows);
        let nulls3 = x.column(3).null_count() as u64;
        match batch {
            3 => assert_eq!(nulls3, rows),
            _ => assert!(nulls3 > 0 && nulls3 < rows, "batch {batch}: {nulls3} nulls"),
        }
        assert_same_batch(&x, &y, &format!("batch {batch}: quiver_append_slots against per-value appends"));
    }
}

#[test]
fn a_failing_value_leaves_the_row_as_the_per_value_calls_would() {
    // kind of node 2 wrong (an int64 into the int32 column): the first two values stay
    // appended, the row open; the message is the per-value call's.
    let s = "a: int32, b: int64, c: int32, d: float64";
    let (a, b) = (W::new(s), W::new(s));
    let kinds = [QUIVER_SLOT_I32, QUIVER_SLOT_I64, QUIVER_SLOT_I64, QUIVER_SLOT_F64];
    let vals = [7u64, 8, 9, 1.5f64.to_bits()];
    // SAFETY: live writers; 4 kinds and slots.
    unsafe {
        assert_eq!(quiver_append_slots(a.w, 0, 4, kinds.as_ptr(), vals.as_ptr(), 0, true), EINVAL);
        assert_eq!(quiver_append_i32(b.w, 0, 7), 0);
        assert_eq!(quiver_append_i64(b.w, 1, 8), 0);
        assert_eq!(quiver_append_i64(b.w, 2, 9), EINVAL);
    }
    let (ea, eb) = (a.error(), b.error());
    assert!(ea.starts_with("append_i64: node 2 "), "{ea}");
    assert_eq!(ea, eb);
    assert_eq!(a.rows(), 0);
    // the row is open with a and b: c and d complete it
    let rest = [QUIVER_SLOT_I32, QUIVER_SLOT_F64];
    // SAFETY: live writers.
    unsafe {
        assert_eq!(quiver_append_slots(a.w, 2, 2, rest.as_ptr(), vals[2..].as_ptr(), 0, true), 0, "{}", a.error());
        assert_eq!(quiver_append_i32(b.w, 2, 9), 0);
        assert_eq!(quiver_append_f64(b.w, 3, 1.5), 0);
        assert_eq!(quiver_end_row(b.w), 0);
    }
    // a null into a non-nullable column, then end_row of an incomplete row: refused as
    // quiver_append_null and quiver_end_row refuse them.
    let s2 = "a: int32 not null, b: int64";
    let c = W::new(s2);
    // SAFETY: a live writer.
    unsafe {
        assert_eq!(quiver_append_slots(c.w, 0, 2, kinds.as_ptr(), vals.as_ptr(), 1, true), EINVAL);
        assert!(c.error().contains("not nullable"), "{}", c.error());
        assert_eq!(quiver_append_slots(c.w, 0, 1, kinds.as_ptr(), vals.as_ptr(), 0, true), EINVAL);
        assert!(c.error().contains("no value for"), "{}", c.error());
        assert_eq!(c.rows(), 0);
        assert_eq!(
            quiver_append_slots(c.w, 1, 1, kinds[1..].as_ptr(), vals[1..].as_ptr(), 0, true),
            0,
            "{}",
            c.error()
        );
    }
    assert_eq!(c.rows(), 1);
    assert_same_batch(&a.finish(), &b.finish(), "after a failing quiver_append_slots");
}

#[test]
fn refused_arguments_change_nothing() {
    let w = W::new("a: int32, b: int64");
    let kinds = [QUIVER_SLOT_I32, 11];
    let vals = [1u64, 2];
    // SAFETY: a live writer; pointers valid for the counts given (or NULL).
    unsafe {
        assert_eq!(quiver_append_slots(w.w, 0, 65, kinds.as_ptr(), vals.as_ptr(), 0, true), EINVAL);
        assert!(w.error().contains("count 65 is over 64"), "{}", w.error());
        assert_eq!(quiver_append_slots(w.w, 0, 2, null(), vals.as_ptr(), 0, true), EINVAL);
        assert!(w.error().contains("kinds is NULL"), "{}", w.error());
        assert_eq!(quiver_append_slots(w.w, 0, 2, kinds.as_ptr(), null(), 0, true), EINVAL);
        assert!(w.error().contains("slots is NULL"), "{}", w.error());
        assert_eq!(quiver_append_slots(null_mut(), 0, 0, null(), null(), 0, false), EINVAL);
        // an unknown kind: the values before it appended, the row open
        assert_eq!(quiver_append_slots(w.w, 0, 2, kinds.as_ptr(), vals.as_ptr(), 0, true), EINVAL);
        assert!(w.error().contains("kinds[1] is 11"), "{}", w.error());
        assert_eq!(quiver_abort_row(w.w), 0);
        // count 0 with NULL arrays: nothing appended; with end_row, an empty row is incomplete
        assert_eq!(quiver_append_slots(w.w, 0, 0, null(), null(), 0, false), 0);
        assert_eq!(quiver_append_slots(w.w, 0, 0, null(), null(), 0, true), EINVAL);
        let good = [QUIVER_SLOT_I32, QUIVER_SLOT_I64];
        assert_eq!(quiver_append_slots(w.w, 0, 2, good.as_ptr(), vals.as_ptr(), 0, true), 0);
    }
    assert_eq!(w.rows(), 1);
    let b = w.finish();
    assert_eq!(b.num_rows(), 1);
}

/// Whole rows without nulls take a plan made once for their kinds (the
/// columns in order, each taking its kind natively). Rows on the plan,
/// rows it does not cover (nulls, a row begun by a per-value append, kinds
/// changed between rows, a kind a column does not take, a call for some of
/// the columns, a memory limit) and failures all leave both writers the
/// same as the per-value appends.
#[test]
fn whole_rows_on_a_plan_match_the_per_value_appends() {
    use QUIVER_SLOT_F32 as F32;
    use QUIVER_SLOT_F64 as F64;
    use QUIVER_SLOT_I16 as I16;
    use QUIVER_SLOT_I32 as I32;
    use QUIVER_SLOT_I64 as I64;
    use QUIVER_SLOT_I8 as I8;
    use QUIVER_SLOT_U16 as U16;
    use QUIVER_SLOT_U32 as U32;
    use QUIVER_SLOT_U64 as U64;
    use QUIVER_SLOT_U8 as U8;
    const S: &str = "i8: int8, i16: int16, i32: int32, i64: int64, u8: uint8, u16: uint16, u32: uint32, \
                     u64: uint64, f32: float32, f64: float64, n: int32 not null, d: date32";
    let native = [I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, I32, I32];
    // Column 2 (int32) given an int64, column 7 (uint64) a uint32, column 5 (uint16) a
    // float64: each refused, as its per-value append refuses it.
    let mut other = native;
    other[2] = I64;
    other[7] = U32;
    let mut wrong = native;
    wrong[5] = F64;
    let (a, b) = (W::new(S), W::new(S));
    for batch in 0..4u64 {
        if batch == 2 {
            // SAFETY: live writers.
            unsafe {
                assert_eq!(quiver_writer_set_memory_limit(a.w, 1 << 30), 0);
                assert_eq!(quiver_writer_set_memory_limit(b.w, 1 << 30), 0);
            }
        }
        if batch == 3 {
            // SAFETY: live writers.
            unsafe {
                assert_eq!(quiver_writer_set_memory_limit(a.w, 0), 0);
                assert_eq!(quiver_writer_set_memory_limit(b.w, 0), 0);
            }
        }
        let rows = [300u64, 2000, 100, 700][batch as usize];
        for r in 0..rows {
            let s = slots(r + batch * 5000);
            let case = (r + batch) % 8;
            let kinds = match case {
                3 => &other,
                4 => &wrong,
                _ => &native,
            };
            // Nulls on the nullable columns in case 2 only; now and then one
            // on `n` too, which refuses it.
            let n = match case {
                2 if r % 5 == 0 => (nulls(r) & 0x3FF) | 1 << 10,
                2 => nulls(r) & 0x3FF,
                _ => 0,
            };
            // SAFETY: a live writer; the kinds and slots of 12 values.
            let rc = unsafe {
                if case == 5 {
                    // A row begun by a per-value append, then the rest in one call.
                    assert_eq!(a.append(0, I8, s[0]), 0);
                    quiver_append_slots(a.w, 1, 11, kinds[1..].as_ptr(), s[1..].as_ptr(), 0, true)
                } else if case == 6 {
                    // Not every column: the last one per value.
                    assert_eq!(quiver_append_slots(a.w, 0, 11, kinds.as_ptr(), s.as_ptr(), 0, false), 0);
                    assert_eq!(a.append(11, I32, s[11]), 0);
                    quiver_end_row(a.w)
                } else {
                    if case == 7 {
                        // A row begun, then a whole row's values: column 0 refuses its second.
                        assert_eq!(a.append(0, I8, s[0]), 0);
                    }
                    quiver_append_slots(a.w, 0, 12, kinds.as_ptr(), s.as_ptr(), n, true)
                }
            };
            if case == 7 {
                assert_eq!(b.append(0, I8, s[0]), 0);
            }
            let mut expected = 0;
            for k in 0..12u32 {
                let rc = if n >> k & 1 != 0 {
                    // SAFETY: a live writer.
                    unsafe { quiver_append_null(b.w, k) }
                } else {
                    b.append(k, kinds[k as usize], s[k as usize])
                };
                if rc != 0 {
                    expected = rc;
                    break;
                }
            }
            if expected == 0 {
                // SAFETY: a live writer.
                expected = unsafe { quiver_end_row(b.w) };
            }
            assert_eq!(rc, expected, "batch {batch} row {r} case {case}: {} / {}", a.error(), b.error());
            assert_eq!(a.rows(), b.rows(), "batch {batch} row {r}");
            if rc != 0 {
                assert_eq!(a.error(), b.error());
                // SAFETY: live writers.
                unsafe {
                    assert_eq!(quiver_abort_row(a.w), 0);
                    assert_eq!(quiver_abort_row(b.w), 0);
                }
            }
        }
        let (x, y) = (a.finish(), b.finish());
        assert!(x.num_rows() as u64 > rows / 2, "batch {batch}: {} rows", x.num_rows());
        assert_same_batch(&x, &y, &format!("batch {batch}: whole rows on a plan against per-value appends"));
    }
}
