//! Batched records (docs/records.md): the UnsafeRow preset against rows
//! built byte by byte; a bad record at every position of a small batch, of
//! every kind, through Rust and the C API (the rows before it committed, the
//! next finish byte-identical to a writer that got only those rows); a row
//! open through the row path; layouts refused.

mod exact;

use std::ffi::CStr;
use std::ptr::null_mut;
use std::sync::Arc;

use arrow_array::{RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, SchemaRef};
use exact::assert_same_batch;
use quiver::ffi::records::*;
use quiver::ffi::writer::*;
use quiver::{parse_schema, ArrowWriter, Encoding, ErrorCode, NullMark, RecordLayout, WriterOptions};

fn schema(text: &str) -> SchemaRef {
    Arc::new(parse_schema(text).unwrap())
}

fn writer(s: &SchemaRef) -> ArrowWriter {
    ArrowWriter::create(s.clone(), WriterOptions::default()).unwrap()
}

// ---- UnsafeRow -------------------------------------------------------------------

#[derive(Clone, Debug)]
enum V {
    Null,
    B(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    S(String),
    Bin(Vec<u8>),
    /// Unscaled; big: stored as bytes (precision > 18).
    Dec(i128, bool),
}

/// Minimal big-endian two's complement (Java's BigInteger.toByteArray).
fn min_be(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut s = 0;
    while s < 15 && ((b[s] == 0 && b[s + 1] & 0x80 == 0) || (b[s] == 0xFF && b[s + 1] & 0x80 != 0)) {
        s += 1;
    }
    b[s..].to_vec()
}

/// An UnsafeRow as Spark lays it out: null bitset words, 8-byte slots, the
/// variable-length region (each value padded to 8 bytes). Slots of nulls
/// and the unused high bytes of narrow values hold junk here.
fn unsafe_row(vals: &[V]) -> Vec<u8> {
    let n = vals.len();
    let bitset = n.div_ceil(64) * 8;
    let mut row = vec![0u8; bitset + 8 * n];
    for (i, v) in vals.iter().enumerate() {
        let slot = bitset + 8 * i;
        row[slot..slot + 8].fill(0xEE);
        let var = |row: &mut Vec<u8>, bytes: &[u8]| {
            let off = row.len() as u64;
            row.extend_from_slice(bytes);
            row.resize(row.len().next_multiple_of(8), 0);
            row[slot..slot + 8].copy_from_slice(&((off << 32) | bytes.len() as u64).to_le_bytes());
        };
        match v {
            V::Null => row[i / 8] |= 1 << (i % 8),
            V::B(b) => row[slot] = *b as u8,
            V::I8(x) => row[slot] = *x as u8,
            V::I16(x) => row[slot..slot + 2].copy_from_slice(&x.to_le_bytes()),
            V::I32(x) => row[slot..slot + 4].copy_from_slice(&x.to_le_bytes()),
            V::I64(x) => row[slot..slot + 8].copy_from_slice(&x.to_le_bytes()),
            V::F32(x) => row[slot..slot + 4].copy_from_slice(&x.to_le_bytes()),
            V::F64(x) => row[slot..slot + 8].copy_from_slice(&x.to_le_bytes()),
            V::S(s) => var(&mut row, s.as_bytes()),
            V::Bin(b) => var(&mut row, b),
            V::Dec(x, false) => row[slot..slot + 8].copy_from_slice(&(*x as i64).to_le_bytes()),
            V::Dec(x, true) => var(&mut row, &min_be(*x)),
        }
    }
    row
}

/// The same values through the row path.
fn append_row(w: &mut ArrowWriter, vals: &[V]) {
    for (c, v) in vals.iter().enumerate() {
        match v {
            V::Null => w.append_null(c),
            V::B(b) => w.append_bool(c, *b),
            V::I8(x) => w.append_i8(c, *x),
            V::I16(x) => w.append_i16(c, *x),
            V::I32(x) => w.append_i32(c, *x),
            V::I64(x) => w.append_i64(c, *x),
            V::F32(x) => w.append_f32(c, *x),
            V::F64(x) => w.append_f64(c, *x),
            V::S(s) => w.append_str(c, s),
            V::Bin(b) => w.append_bytes(c, b),
            V::Dec(x, _) => w.append_decimal(c, *x),
        }
        .unwrap();
    }
    w.end_row().unwrap();
}

const SPARK: &str = "b: bool, i8: int8, i16: int16, i32: int32, i64: int64, f32: float32, f64: float64, \
    d: date32, ts: timestamp(us), s: utf8, bin: binary, d10: decimal128(10, 2), d30: decimal128(30, 5)";

fn spark_row(i: usize) -> Vec<V> {
    let k = i as i64;
    let vals = vec![
        V::B(i.is_multiple_of(2)),
        V::I8(-(i as i8)),
        V::I16(300 - k as i16 * 7),
        V::I32(-70_000 + k as i32 * 1001),
        V::I64(k * -1_234_567_890_123),
        V::F32(k as f32 * 0.5),
        V::F64(-(k as f64) / 3.0),
        V::I32(18_000 + k as i32),
        V::I64(1_700_000_000_000_000 + k),
        V::S("é".repeat(i % 5) + &format!("row {i}")),
        V::Bin((0..i % 11).map(|j| (j * 37 + i) as u8).collect()),
        V::Dec((k as i128 - 20) * 123_456_789, false),
        V::Dec((k as i128 - 25) * 12_345_678_901_234_567_890_123, true),
    ];
    vals.into_iter().enumerate().map(|(c, v)| if (i + c).is_multiple_of(5) { V::Null } else { v }).collect()
}

#[test]
fn unsafe_row_preset_matches_rows_built_byte_by_byte() {
    let s = schema(SPARK);
    let rows: Vec<Vec<V>> = (0..50).map(spark_row).collect();
    let bytes: Vec<Vec<u8>> = rows.iter().map(|r| unsafe_row(r)).collect();
    let mut layout = RecordLayout::unsafe_row(s.clone()).unwrap();
    assert_eq!(layout.min_record_size(), 8 + 8 * 13);
    let mut got = writer(&s);
    let slices: Vec<&[u8]> = bytes[..30].iter().map(|b| &b[..]).collect();
    assert_eq!(layout.write_rows(&mut got, &slices), Ok(30));
    let ptrs: Vec<*const u8> = bytes[30..].iter().map(|b| b.as_ptr()).collect();
    let sizes: Vec<usize> = bytes[30..].iter().map(|b| b.len()).collect();
    // SAFETY: each pointer is a live row of its size.
    assert_eq!(unsafe { layout.write_record_ptrs(&mut got, &ptrs, Some(&sizes)) }, Ok(20));
    let mut want = writer(&s);
    rows.iter().for_each(|r| append_row(&mut want, r));
    assert_same_batch(&got.finish().unwrap(), &want.finish().unwrap(), "UnsafeRow");
}

#[test]
fn unsafe_row_with_more_than_64_fields() {
    let text: Vec<String> = (0..70).map(|c| format!("c{c}: int64")).collect();
    let s = schema(&text.join(", "));
    let rows: Vec<Vec<V>> = (0..9)
        .map(|i| (0..70).map(|c| if (i * 7 + c) % 9 == 0 { V::Null } else { V::I64((i * 100 + c) as i64) }).collect())
        .collect();
    let mut layout = RecordLayout::unsafe_row(s.clone()).unwrap();
    assert_eq!(layout.min_record_size(), 16 + 8 * 70);
    let bytes: Vec<u8> = rows.iter().flat_map(|r| unsafe_row(r)).collect();
    let mut got = writer(&s);
    assert_eq!(layout.write_records(&mut got, &bytes, 16 + 8 * 70), Ok(9));
    let mut want = writer(&s);
    rows.iter().for_each(|r| append_row(&mut want, r));
    assert_same_batch(&got.finish().unwrap(), &want.finish().unwrap(), "70 fields");
}

// ---- a bad record at every position ----------------------------------------------

const BAD_SCHEMA: &str = "a: int32, s: utf8, d: decimal128(5, 0), n: int64 not null";
const STRIDE: usize = 64;

/// a@0 (null byte 4), n@8 (null byte 6, not nullable), s offset@16 len@20
/// (null bit 0 of byte 5), d@24 (null bit 1 of byte 5); s bytes from 40.
fn bad_layout(s: &SchemaRef) -> RecordLayout {
    let mut l = RecordLayout::new(s.clone());
    l.set(0, Encoding::Fixed { at: 0 }, NullMark::Byte { at: 4 }).unwrap();
    l.set(1, Encoding::RelLen { offset_at: 16, len_at: 20 }, NullMark::Bit { at: 5, bit: 0 }).unwrap();
    l.set(2, Encoding::Fixed { at: 24 }, NullMark::Bit { at: 5, bit: 1 }).unwrap();
    l.set(3, Encoding::Fixed { at: 8 }, NullMark::Byte { at: 6 }).unwrap();
    l
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bad {
    Utf8,
    Precision,
    NullInNotNull,
    PastRecord,
}

const BADS: [Bad; 4] = [Bad::Utf8, Bad::Precision, Bad::NullInNotNull, Bad::PastRecord];

/// Good record `i` (some nulls), or made bad.
fn bad_record(i: usize, bad: Option<Bad>) -> [u8; STRIDE] {
    let mut r = [0x5Au8; STRIDE];
    r[0..4].copy_from_slice(&(i as i32 * 11).to_le_bytes());
    r[4] = (i % 4 == 3) as u8;
    r[5] = if i % 3 == 2 { 1 } else { 0 } | if i % 5 == 4 { 2 } else { 0 };
    r[6] = 0;
    r[8..16].copy_from_slice(&(i as i64 - 7).to_le_bytes());
    let text = format!("s{i}é");
    r[16..20].copy_from_slice(&40u32.to_le_bytes());
    r[20..24].copy_from_slice(&(text.len() as u32).to_le_bytes());
    r[40..40 + text.len()].copy_from_slice(text.as_bytes());
    r[24..40].copy_from_slice(&(i as i128 * 999 - 5000).to_le_bytes());
    match bad {
        None => {}
        Some(Bad::Utf8) => {
            r[5] = 0;
            r[41] = 0xFF;
        }
        Some(Bad::Precision) => {
            r[5] = 0;
            r[24..40].copy_from_slice(&(-100_000i128).to_le_bytes());
        }
        Some(Bad::NullInNotNull) => r[6] = 1,
        Some(Bad::PastRecord) => {
            r[5] = 0;
            r[20..24].copy_from_slice(&25u32.to_le_bytes());
        }
    }
    r
}

fn records(range: std::ops::Range<usize>, bad_at: Option<(usize, Bad)>) -> Vec<u8> {
    range.flat_map(|i| bad_record(i, bad_at.filter(|b| b.0 == i).map(|b| b.1))).collect()
}

fn code_of(bad: Bad) -> ErrorCode {
    if bad == Bad::Precision {
        ErrorCode::OutOfRange
    } else {
        ErrorCode::InvalidArgument
    }
}

#[test]
fn bad_record_at_every_position() {
    let s = schema(BAD_SCHEMA);
    let mut cases = 0;
    for bad in BADS {
        for p in 0..6 {
            let what = format!("{bad:?} at {p}");
            let mut layout = bad_layout(&s);
            let mut got = writer(&s);
            assert_eq!(layout.write_records(&mut got, &records(0..3, None), STRIDE), Ok(3));
            let e = layout.write_records(&mut got, &records(3..9, Some((3 + p, bad))), STRIDE).unwrap_err();
            assert_eq!((e.written, e.error.code()), (p, code_of(bad)), "{what}: {e}");
            assert!(e.error.message().contains(&format!("record {p}")), "{what}: {e}");
            assert_eq!(got.rows(), 3 + p, "{what}");
            assert_eq!(layout.write_records(&mut got, &records(20..22, None), STRIDE), Ok(2));
            // The reference: only the good rows.
            let mut want = writer(&s);
            let mut wl = bad_layout(&s);
            let mut good = records(0..3 + p, None);
            good.extend(records(20..22, None));
            assert_eq!(wl.write_records(&mut want, &good, STRIDE), Ok(5 + p));
            assert_same_batch(&got.finish().unwrap(), &want.finish().unwrap(), &what);
            // The next batch too (recycled buffers).
            assert_eq!(layout.write_records(&mut got, &records(30..34, None), STRIDE), Ok(4));
            assert_eq!(wl.write_records(&mut want, &records(30..34, None), STRIDE), Ok(4));
            assert_same_batch(&got.finish().unwrap(), &want.finish().unwrap(), &format!("{what}, next batch"));
            cases += 1;
        }
    }
    assert_eq!(cases, 24);
}

#[test]
fn the_first_bad_record_counts_whatever_its_column() {
    let s = schema(BAD_SCHEMA);
    let mut layout = bad_layout(&s);
    let mut w = writer(&s);
    // Record 4 bad in d (column 2), record 2 bad in n (column 3): 2 written.
    let mut bytes = records(0..6, Some((4, Bad::Precision)));
    bytes[2 * STRIDE..3 * STRIDE].copy_from_slice(&bad_record(2, Some(Bad::NullInNotNull)));
    let e = layout.write_records(&mut w, &bytes, STRIDE).unwrap_err();
    assert_eq!((e.written, e.error.code()), (2, ErrorCode::InvalidArgument), "{e}");
    assert_eq!(w.rows(), 2);
}

#[test]
fn a_row_open_through_the_row_path_is_refused() {
    let s = schema(BAD_SCHEMA);
    let mut layout = bad_layout(&s);
    let mut w = writer(&s);
    w.append_i32(0, 1).unwrap();
    let e = layout.write_records(&mut w, &records(0..2, None), STRIDE).unwrap_err();
    assert_eq!((e.written, e.error.code()), (0, ErrorCode::InvalidArgument), "{e}");
    w.abort_row().unwrap();
    assert_eq!(layout.write_records(&mut w, &records(0..2, None), STRIDE), Ok(2));
    assert_eq!(w.finish().unwrap().num_rows(), 2);
}

#[test]
fn layouts_refused() {
    let s = schema("a: int32, s: utf8, l: list<int32>");
    let mut l = RecordLayout::new(s.clone());
    let code = |r: quiver::Result<()>| r.unwrap_err().code();
    assert_eq!(code(l.set(3, Encoding::Fixed { at: 0 }, NullMark::Never)), ErrorCode::InvalidArgument);
    assert_eq!(code(l.set(0, Encoding::PtrLen { ptr_at: 0, len_at: 8 }, NullMark::Never)), ErrorCode::InvalidArgument);
    assert_eq!(code(l.set(1, Encoding::Fixed { at: 0 }, NullMark::Never)), ErrorCode::InvalidArgument);
    assert_eq!(code(l.set(0, Encoding::Int { at: 0, width: 4 }, NullMark::Never)), ErrorCode::InvalidArgument);
    assert_eq!(code(l.set(2, Encoding::Fixed { at: 0 }, NullMark::Never)), ErrorCode::Unsupported);
    assert_eq!(RecordLayout::unsafe_row(s.clone()).unwrap_err().code(), ErrorCode::Unsupported);
    // Not every column described; a layout for another schema; pointers in the safe call.
    let s2 = schema("a: int32, s: utf8");
    let mut l2 = RecordLayout::new(s2.clone());
    l2.set(0, Encoding::Fixed { at: 0 }, NullMark::Never).unwrap();
    let mut w = writer(&s2);
    assert_eq!(l2.write_records(&mut w, &[0; 32], 16).unwrap_err().written, 0);
    l2.set(1, Encoding::PtrLen { ptr_at: 0, len_at: 8 }, NullMark::Never).unwrap();
    let e = l2.write_records(&mut w, &[0; 32], 16).unwrap_err();
    assert!(e.error.message().contains("pointers"), "{e}");
    let mut other = writer(&schema("a: int64, s: utf8"));
    // SAFETY: 32 zero bytes: NULL pointers of length 0.
    let e = unsafe { l2.write_records_raw(&mut other, [0u8; 32].as_ptr(), 16, 2) }.unwrap_err();
    assert!(e.error.message().contains("another schema"), "{e}");
    // SAFETY: as above.
    assert_eq!(unsafe { l2.write_records_raw(&mut w, [0u8; 32].as_ptr(), 16, 2) }, Ok(2));
    assert_eq!(w.finish().unwrap().num_rows(), 2);
}

// ---- the C API --------------------------------------------------------------------

struct C {
    w: *mut QuiverWriter,
    l: *mut QuiverLayout,
}

impl Drop for C {
    fn drop(&mut self) {
        // SAFETY: made by the calls below, freed once.
        unsafe {
            quiver_layout_free(self.l);
            quiver_writer_free(self.w);
        }
    }
}

impl C {
    fn new(s: &SchemaRef, unsafe_row: bool) -> C {
        let ffi = FFI_ArrowSchema::try_from(s.as_ref()).unwrap();
        let (mut w, mut l) = (null_mut(), null_mut());
        // SAFETY: valid pointers for the calls.
        unsafe {
            assert_eq!(quiver_writer_new(&ffi, std::ptr::null(), &mut w), 0);
            let rc = if unsafe_row { quiver_layout_unsafe_row(w, &mut l) } else { quiver_layout_new(w, &mut l) };
            assert_eq!(rc, 0);
        }
        C { w, l }
    }
    fn error(&self) -> String {
        // SAFETY: a live writer; its message is a C string it owns.
        unsafe { CStr::from_ptr(quiver_writer_last_error(self.w)) }.to_string_lossy().into_owned()
    }
    fn finish(&self, s: &SchemaRef) -> RecordBatch {
        let mut out = FFI_ArrowArray::empty();
        // SAFETY: a live writer; `out` is ours.
        assert_eq!(unsafe { quiver_writer_finish(self.w, &mut out) }, 0);
        // SAFETY: exported with this schema's struct type.
        let data = unsafe { arrow_array::ffi::from_ffi_and_data_type(out, DataType::Struct(s.fields().clone())) };
        RecordBatch::from(StructArray::from(data.unwrap()))
    }
}

#[test]
fn c_api_bad_record_at_every_position() {
    let s = schema(BAD_SCHEMA);
    for bad in BADS {
        for p in 0..6 {
            let c = C::new(&s, false);
            // SAFETY: a live layout.
            unsafe {
                assert_eq!(quiver_layout_set(c.l, 0, QUIVER_RECORD_FIXED, 0, 0, QUIVER_NULL_BYTE, 4, 0), 0);
                assert_eq!(quiver_layout_set(c.l, 1, QUIVER_RECORD_REL_LEN, 16, 20, QUIVER_NULL_BIT, 5, 0), 0);
                assert_eq!(quiver_layout_set(c.l, 2, QUIVER_RECORD_FIXED, 24, 0, QUIVER_NULL_BIT, 5, 1), 0);
                assert_eq!(quiver_layout_set(c.l, 3, QUIVER_RECORD_FIXED, 8, 0, QUIVER_NULL_BYTE, 6, 0), 0);
                assert_eq!(quiver_layout_set(c.l, 4, QUIVER_RECORD_FIXED, 8, 0, QUIVER_NULL_NEVER, 0, 0), libc::EINVAL);
                assert_eq!(quiver_layout_set(c.l, 0, 99, 8, 0, QUIVER_NULL_NEVER, 0, 0), libc::EINVAL);
            }
            let bytes = records(0..6, Some((p, bad)));
            let mut written = -1i64;
            // SAFETY: 6 records of STRIDE bytes.
            let rc = unsafe { quiver_write_records(c.w, c.l, bytes.as_ptr().cast(), STRIDE as i64, 6, &mut written) };
            let want = if bad == Bad::Precision { libc::ERANGE } else { libc::EINVAL };
            assert_eq!((rc, written), (want, p as i64), "{bad:?} at {p}: {}", c.error());
            assert!(c.error().starts_with("quiver_write_records: record "), "{}", c.error());
            // The good records again, by pointer.
            let ptrs: Vec<*const u8> = (0..p).map(|i| bytes[i * STRIDE..].as_ptr()).collect();
            let sizes = vec![STRIDE as i64; p];
            // SAFETY: p live records.
            let rc =
                unsafe { quiver_write_record_ptrs(c.w, c.l, ptrs.as_ptr(), sizes.as_ptr(), p as i64, &mut written) };
            assert_eq!((rc, written), (0, p as i64));
            let mut r = writer(&s);
            let mut rl = bad_layout(&s);
            let mut good = records(0..p, None);
            good.extend(records(0..p, None));
            assert_eq!(rl.write_records(&mut r, &good, STRIDE), Ok(2 * p));
            assert_same_batch(&c.finish(&s), &r.finish().unwrap(), &format!("C {bad:?} at {p}"));
        }
    }
}

#[test]
fn c_api_unsafe_rows_and_refusals() {
    let s = schema(SPARK);
    let c = C::new(&s, true);
    let rows: Vec<Vec<V>> = (0..20).map(spark_row).collect();
    let bytes: Vec<Vec<u8>> = rows.iter().map(|r| unsafe_row(r)).collect();
    let ptrs: Vec<*const u8> = bytes.iter().map(|b| b.as_ptr()).collect();
    let mut sizes: Vec<i64> = bytes.iter().map(|b| b.len() as i64).collect();
    let mut written = -1;
    // A row cut short (its string past its end) at 7: 7 written.
    sizes[7] = 8 + 8 * 13;
    // SAFETY: live rows of (at least) their sizes.
    let rc = unsafe { quiver_write_record_ptrs(c.w, c.l, ptrs.as_ptr(), sizes.as_ptr(), 20, &mut written) };
    assert_eq!((rc, written), (libc::EINVAL, 7), "{}", c.error());
    sizes[7] = bytes[7].len() as i64;
    // SAFETY: as above.
    let rc = unsafe { quiver_write_record_ptrs(c.w, c.l, ptrs[7..].as_ptr(), sizes[7..].as_ptr(), 13, &mut written) };
    assert_eq!((rc, written), (0, 13), "{}", c.error());
    let mut want = writer(&s);
    rows.iter().for_each(|r| append_row(&mut want, r));
    assert_same_batch(&c.finish(&s), &want.finish().unwrap(), "C UnsafeRow");
    // Refused as a whole: NULL layout, negative n, a stride under the record size, a row open.
    // SAFETY: live objects; NULL where the call refuses it.
    unsafe {
        assert_eq!(quiver_write_records(c.w, null_mut(), ptrs[0].cast(), 200, 1, &mut written), libc::EINVAL);
        assert_eq!(written, 0);
        assert_eq!(quiver_write_records(c.w, c.l, ptrs[0].cast(), 200, -1, &mut written), libc::EINVAL);
        assert_eq!(quiver_write_records(c.w, c.l, ptrs[0].cast(), 8, 1, &mut written), libc::EINVAL);
        assert_eq!(quiver_append_bool(c.w, 0, true), 0);
        assert_eq!(quiver_write_record_ptrs(c.w, c.l, ptrs.as_ptr(), std::ptr::null(), 1, &mut written), libc::EINVAL);
        assert!(c.error().contains("half written"), "{}", c.error());
        assert_eq!(quiver_abort_row(c.w), 0);
        assert_eq!(quiver_write_record_ptrs(c.w, c.l, ptrs.as_ptr(), std::ptr::null(), 1, null_mut()), 0);
        assert_eq!(quiver_writer_rows(c.w), 1);
        let mut l = null_mut();
        assert_eq!(quiver_layout_new(std::ptr::null(), &mut l), libc::EINVAL);
        quiver_layout_free(null_mut());
    }
}
