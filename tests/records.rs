//! Row-major records (docs/records.md): every supported type with every
//! encoding it takes and every null marking, generated over a type table and
//! checked byte for byte against a writer fed the same values through the
//! column path; the UnsafeRow preset against rows built byte by byte here;
//! zeros under nulls; a bad record at every position of a small batch (the
//! rows before it committed, the next finish byte-identical to a writer that
//! got only those rows); the C API.

mod exact;
mod leaf_types;

use std::sync::Arc;

use arrow_array::{make_array, Array, RecordBatch};
use arrow_buffer::{bit_util, Buffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};
use exact::assert_same_batch;
use quiver::{parse_schema, ArrowWriter, Encoding, NullMark, RecordLayout, WriterOptions};

/// Every type records cover: the schema text's leaf types but `null`, and
/// a wider fixed-size binary.
fn types() -> Vec<&'static str> {
    let mut t: Vec<&str> = leaf_types::LEAF_TYPES.iter().copied().filter(|t| *t != "null").collect();
    t.push("fixed_size_binary(20)");
    t
}

const STRIDE: usize = 96;
const N: usize = 67;

/// A small deterministic generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn schema_of(t: &str, extra: &str) -> SchemaRef {
    Arc::new(parse_schema(&format!("id: int32 not null, v: {t}{extra}")).unwrap())
}

fn precision(dt: &DataType) -> Option<u8> {
    match dt {
        DataType::Decimal32(p, _)
        | DataType::Decimal64(p, _)
        | DataType::Decimal128(p, _)
        | DataType::Decimal256(p, _) => Some(*p),
        _ => None,
    }
}

fn is_var(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary)
}

fn width(dt: &DataType) -> usize {
    match dt {
        DataType::Boolean => 1,
        DataType::FixedSizeBinary(n) => *n as usize,
        dt => dt.primitive_width().unwrap(),
    }
}

/// The encodings column `v` of type `dt` takes, at the offsets of the test's record.
fn encodings(dt: &DataType) -> Vec<Encoding> {
    if is_var(dt) {
        return vec![Encoding::PtrLen { ptr_at: 8, len_at: 16 }, Encoding::RelLen { offset_at: 8, len_at: 12 }];
    }
    let mut e = vec![Encoding::Fixed { at: 8 }];
    if precision(dt).is_some() {
        e.push(Encoding::Int { at: 8, width: width(dt).min(8) });
        e.push(Encoding::BigEndian { offset_at: 8, len_at: 12 });
    }
    e
}

const NULL_MARKS: [NullMark; 3] = [NullMark::Never, NullMark::Bit { at: 40, bit: 13 }, NullMark::Byte { at: 44 }];

/// Minimal big-endian two's complement bytes of `v` (as Java's
/// BigInteger.toByteArray).
fn min_be(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 && ((b[start] == 0 && b[start + 1] & 0x80 == 0) || (b[start] == 0xFF && b[start + 1] & 0x80 != 0))
    {
        start += 1;
    }
    b[start..].to_vec()
}

/// One generated value of column `v`: its bytes in the writer (fixed: the
/// column's little-endian width; var: the value's bytes), or None for null.
fn value(dt: &DataType, i: usize, rng: &mut Rng) -> Vec<u8> {
    if let Some(p) = precision(dt) {
        let lim = 10i128.pow(p.min(18) as u32);
        let v = (rng.next() as i128 % lim) * if i.is_multiple_of(2) { 1 } else { -1 };
        let w = width(dt);
        let mut le = vec![if v < 0 { 0xFF } else { 0 }; w];
        let n = w.min(16);
        le[..n].copy_from_slice(&v.to_le_bytes()[..n]);
        return le;
    }
    match dt {
        DataType::Boolean => vec![(i % 3) as u8 * 7],
        DataType::Utf8 | DataType::LargeUtf8 => format!("v{i}{}", "é".repeat(i % 4)).into_bytes(),
        DataType::Binary | DataType::LargeBinary => (0..i % 9).map(|_| rng.next() as u8).collect(),
        dt => (0..width(dt)).map(|_| rng.next() as u8).collect(),
    }
}

/// Record `i`: junk everywhere, then id at 0, the value of `v` per
/// `encoding` (var bytes at 56; pointed-at bytes in `value`), the null mark.
fn record(rec: &mut [u8], i: usize, v: Option<&[u8]>, dt: &DataType, encoding: Encoding, null: NullMark) {
    rec.fill(0xA5);
    rec[0..4].copy_from_slice(&(i as i32 * 3 - 50).to_le_bytes());
    match null {
        NullMark::Never => {}
        NullMark::Bit { at, bit } => {
            rec[at + bit / 8] = if v.is_none() { 1 << (bit % 8) } else { !(1u8 << (bit % 8)) };
        }
        NullMark::Byte { at } => rec[at] = v.is_none() as u8,
    }
    let Some(v) = v else { return };
    match encoding {
        Encoding::Fixed { at } => rec[at..at + v.len()].copy_from_slice(v),
        Encoding::Int { at, width } => rec[at..at + width].copy_from_slice(&v[..width]),
        Encoding::PtrLen { ptr_at, len_at } => {
            rec[ptr_at..ptr_at + 8].copy_from_slice(&(v.as_ptr() as usize).to_le_bytes());
            rec[len_at..len_at + 8].copy_from_slice(&(v.len() as u64).to_le_bytes());
        }
        Encoding::RelLen { offset_at, len_at } | Encoding::BigEndian { offset_at, len_at } => {
            let bytes = if let Encoding::BigEndian { .. } = encoding {
                let mut x = [if v[v.len() - 1] & 0x80 != 0 { 0xFF } else { 0 }; 16];
                let n = v.len().min(16);
                x[..n].copy_from_slice(&v[..n]);
                min_be(i128::from_le_bytes(x))
            } else {
                v.to_vec()
            };
            rec[offset_at..offset_at + 4].copy_from_slice(&56u32.to_le_bytes());
            rec[len_at..len_at + 4].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
            rec[56..56 + bytes.len()].copy_from_slice(&bytes);
        }
    }
    let _ = dt;
}

/// The reference: `id` and `v` through the column path, from inputs built here.
fn reference(schema: &SchemaRef, ids: &[i32], vals: &[Option<Vec<u8>>]) -> RecordBatch {
    let mut w = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
    w.write_column(0, ids, None).unwrap();
    let dt = schema.field(1).data_type();
    let n = vals.len();
    let mut validity = vec![0u8; n.div_ceil(8)];
    for (i, v) in vals.iter().enumerate() {
        if v.is_some() {
            bit_util::set_bit(&mut validity, i);
        }
    }
    if is_var(dt) {
        let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
        let mut data = Vec::new();
        let mut offsets = vec![0i64];
        for v in vals {
            data.extend_from_slice(v.as_deref().unwrap_or(&[]));
            offsets.push(data.len() as i64);
        }
        let offsets = if large {
            Buffer::from_vec(offsets)
        } else {
            Buffer::from_vec(offsets.iter().map(|&o| o as i32).collect::<Vec<_>>())
        };
        let array = ArrayData::builder(dt.clone())
            .len(n)
            .add_buffer(offsets)
            .add_buffer(Buffer::from_vec(data))
            .null_bit_buffer(Some(Buffer::from_vec(validity)))
            .build()
            .unwrap();
        w.write_array(1, &make_array(array)).unwrap();
    } else if *dt == DataType::Boolean {
        let mut bits = vec![0u8; n.div_ceil(8)];
        for (i, v) in vals.iter().enumerate() {
            if v.as_ref().is_some_and(|b| b[0] != 0) {
                bit_util::set_bit(&mut bits, i);
            }
        }
        w.write_column_bytes(1, &bits, Some(&validity), n).unwrap();
    } else {
        let wd = width(dt);
        let mut bytes = Vec::new();
        for v in vals {
            bytes.extend_from_slice(v.as_deref().unwrap_or(&vec![0; wd]));
        }
        w.write_column_bytes(1, &bytes, Some(&validity), n).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn every_type_every_encoding_every_null_mark() {
    let mut cases = 0;
    for t in types() {
        let schema = schema_of(t, "");
        let dt = schema.field(1).data_type().clone();
        for encoding in encodings(&dt) {
            for null in NULL_MARKS {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ cases);
                let vals: Vec<Option<Vec<u8>>> = (0..N)
                    .map(|i| {
                        let v = value(&dt, i, &mut rng);
                        (null == NullMark::Never || i % 3 != 1).then_some(v)
                    })
                    .collect();
                let ids: Vec<i32> = (0..N).map(|i| i as i32 * 3 - 50).collect();
                let mut bytes = vec![0u8; N * STRIDE];
                for (i, rec) in bytes.chunks_exact_mut(STRIDE).enumerate() {
                    record(rec, i, vals[i].as_deref(), &dt, encoding, null);
                }
                let mut layout = RecordLayout::new(schema.clone());
                layout.set(0, Encoding::Fixed { at: 0 }, NullMark::Never).unwrap();
                layout.set(1, encoding, null).unwrap();
                let mut w = ArrowWriter::create(schema.clone(), WriterOptions::default()).unwrap();
                let what = format!("{t} {encoding:?} {null:?}");
                // Two calls in one batch (the scratch reused), the second through `write_record_ptrs`.
                let first = 40;
                // SAFETY: the records are in `bytes`, pointers into `vals`, alive.
                let n = unsafe { layout.write_records_raw(&mut w, bytes.as_ptr(), STRIDE, first) };
                assert_eq!(n, Ok(first), "{what}");
                let ptrs: Vec<*const u8> = (first..N).map(|i| bytes[i * STRIDE..].as_ptr()).collect();
                let sizes = vec![STRIDE; N - first];
                // SAFETY: as above.
                let n = unsafe { layout.write_record_ptrs(&mut w, &ptrs, Some(&sizes)) };
                assert_eq!(n, Ok(N - first), "{what}");
                assert_eq!(w.rows(), N, "{what}");
                let got = w.finish().unwrap();
                assert_same_batch(&got, &reference(&schema, &ids, &vals), &what);
                zeros_under_nulls(got.column(1).as_ref(), &what);
                cases += 1;
            }
        }
    }
    println!("{cases} cases");
    assert!(cases >= 130, "only {cases} cases");
}

/// Every null slot of a fixed-width column holds zero bytes; of a var-width
/// one, an empty span.
fn zeros_under_nulls(a: &dyn Array, what: &str) {
    let data = a.to_data();
    let Some(nulls) = data.nulls() else { return };
    let dt = data.data_type();
    for i in (0..data.len()).filter(|&i| nulls.is_null(i)) {
        if is_var(dt) {
            let w = if matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary) { 8 } else { 4 };
            let o = &data.buffers()[0].as_slice()[i * w..(i + 2) * w];
            assert_eq!(o[..w], o[w..], "{what}: null row {i} spans bytes");
        } else if *dt == DataType::Boolean {
            assert!(!bit_util::get_bit(data.buffers()[0].as_slice(), i), "{what}: null row {i} is true");
        } else {
            let wd = width(dt);
            assert!(data.buffers()[0].as_slice()[i * wd..(i + 1) * wd].iter().all(|&b| b == 0), "{what}: row {i}");
        }
    }
}
