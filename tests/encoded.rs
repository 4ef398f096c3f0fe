//! Dictionary and run-end encoded columns, every key (run-end) width and the
//! value types the writer looks up by their bytes (utf8, binary and their
//! large forms, fixed-width types, fixed-size binary) and some it does not
//! (decimal, boolean, a list): the row path holds the rows' values (against
//! the plain type's row path), and the row path and the column path give the
//! same bytes for the same logical values, whatever the input's own
//! encoding; the bytes do not depend on what memory held before (0xA5-filled
//! or zeroed new memory) or on reuse; a refused value changes nothing; a
//! full key or run-end type is `EOVERFLOW` with the batch so far kept.

mod all_types;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use all_types::validate;
use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, Int16Array, Int32Array, Int64Array, RecordBatch, UInt32Array};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use quiver::{ArrowWriter, ErrorCode, WriterOptions};

static POISON: AtomicBool = AtomicBool::new(false);

struct FillingAllocator;

// SAFETY: every method forwards to the system allocator and only writes inside the block it returns.
unsafe impl GlobalAlloc for FillingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded to the system allocator with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let byte = if POISON.load(Ordering::Relaxed) { 0xA5 } else { 0 };
            // SAFETY: `p` is a new block of `layout.size()` bytes.
            unsafe { std::ptr::write_bytes(p, byte, layout.size()) };
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` and `layout` come from this allocator, which is the system one.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in dealloc.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() && new_size > layout.size() {
            let byte = if POISON.load(Ordering::Relaxed) { 0xA5 } else { 0 };
            // SAFETY: `q` is a block of `new_size` bytes; the bytes past the old size are new.
            unsafe { std::ptr::write_bytes(q.add(layout.size()), byte, new_size - layout.size()) };
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: FillingAllocator = FillingAllocator;

/// Every byte of a batch's arrays, buffer by buffer (whole buffers: the
/// writer sizes each to what it holds), with their types, lengths and
/// offsets, dictionary values and run-end children included.
fn batch_bytes(batch: &RecordBatch) -> Vec<u8> {
    fn walk(d: &ArrayData, out: &mut Vec<u8>) {
        out.extend(
            format!("{:?} len {} offset {} nulls {}|", d.data_type(), d.len(), d.offset(), d.null_count()).bytes(),
        );
        if let Some(n) = d.nulls() {
            out.extend(format!("validity at {}:", n.offset()).bytes());
            out.extend_from_slice(n.buffer().as_slice());
        }
        for b in d.buffers() {
            out.extend(format!("|buffer {}:", b.len()).bytes());
            out.extend_from_slice(b.as_slice());
        }
        for c in d.child_data() {
            out.push(b'[');
            walk(c, out);
            out.push(b']');
        }
    }
    let mut out = Vec::new();
    for c in batch.columns() {
        walk(&c.to_data(), &mut out);
    }
    out
}

const KEYS: [&str; 8] = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"];
const RUN_ENDS: [&str; 3] = ["int16", "int32", "int64"];
/// Value types: the flat ones first, then some the general mechanism handles.
const VALUES: [&str; 17] = [
    "utf8",
    "large_utf8",
    "binary",
    "large_binary",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "fixed_size_binary(3)",
    "decimal128(10, 2)",
    "list<int32>",
];
/// Distinct values a case uses (within every key type's range).
const DISTINCT: u64 = 40;

/// Appends value number `k` of type `value` to encoded column 0 of `w`.
fn append(w: &mut ArrowWriter, value: &str, k: u64) -> quiver::Result<()> {
    match value {
        "utf8" | "large_utf8" => w.append_str(0, &format!("value {k}")),
        "binary" | "large_binary" => w.append_bytes(0, &[k as u8, 0xFF, (k * 7) as u8][..(k % 3 + 1) as usize]),
        "int8" => w.append_i8(0, k as i8 - 20),
        "int16" => w.append_i16(0, k as i16 * 300),
        "int32" => w.append_i32(0, k as i32 * -70_000),
        "int64" => w.append_i64(0, k as i64 * 1_000_000_007),
        "uint8" => w.append_u8(0, k as u8 * 3),
        "uint16" => w.append_u16(0, k as u16 * 999),
        "uint32" => w.append_u32(0, k as u32 * 100_000),
        "uint64" => w.append_u64(0, k * 0x1_0000_0001),
        "float32" => w.append_f32(0, k as f32 * 0.25),
        "float64" => w.append_f64(0, k as f64 * -1.5),
        "fixed_size_binary(3)" => w.append_bytes(0, &[k as u8, 1, (k >> 1) as u8]),
        "decimal128(10, 2)" => w.append_decimal(0, k as i128 * 12_345),
        "list<int32>" => {
            let item = w.node("c.item").expect("the list's item");
            w.begin(0)?;
            for j in 0..k % 3 {
                w.append_i32(item, (k * 10 + j) as i32)?;
            }
            w.end(0)
        }
        other => panic!("no appends for {other}"),
    }
}

/// Row `i`'s value number (None: null): random picks for a dictionary, runs
/// of 1 to 4 for run-end encoding, every 7th row null with `nulls`.
fn rows(seed: u64, n: usize, runs: bool, nulls: bool) -> Vec<Option<u64>> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let v = if nulls && next() % 7 == 0 { None } else { Some(next() % DISTINCT) };
        let len = if runs { 1 + next() % 4 } else { 1 };
        for _ in 0..len.min((n - out.len()) as u64) {
            out.push(v);
        }
    }
    out
}

fn writer(schema: &str, options: WriterOptions) -> ArrowWriter {
    ArrowWriter::from_text(&format!("c: {schema}"), options).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// The row path: one row per value.
fn write_rows(w: &mut ArrowWriter, value: &str, rows: &[Option<u64>]) {
    for r in rows {
        match r {
            Some(k) => append(w, value, *k).unwrap_or_else(|e| panic!("{value} {k}: {e}")),
            None => w.append_null(0).unwrap(),
        }
        w.end_row().unwrap();
    }
}

fn row_batch(schema: &str, value: &str, rows: &[Option<u64>]) -> RecordBatch {
    let mut w = writer(schema, WriterOptions::default());
    write_rows(&mut w, value, rows);
    w.finish().unwrap()
}

/// The same logical values as `a` (a dictionary array) with another
/// encoding: the dictionary reversed, with a duplicate of its first value
/// appended (used by every other row that holds that value), and a key that
/// is not 0 under each null.
fn reencode_dictionary(a: &ArrayRef) -> ArrayRef {
    let d = a.as_any_dictionary();
    let n = d.values().len();
    let mut perm: Vec<u32> = (0..n as u32).rev().collect();
    if n > 0 {
        perm.push(0);
    }
    let values = arrow::compute::take(d.values().as_ref(), &UInt32Array::from(perm), None).unwrap();
    let keys = d.normalized_keys();
    let mut seen_first = 0;
    let new_keys: Vec<u64> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            if a.is_null(i) {
                return (n as u64).saturating_sub(1);
            }
            if k == 0 {
                seen_first += 1;
                if seen_first % 2 == 0 {
                    return n as u64;
                }
            }
            (n - 1 - k) as u64
        })
        .collect();
    let DataType::Dictionary(key_type, _) = a.data_type() else { unreachable!() };
    let width = key_type.primitive_width().unwrap();
    let bytes: Vec<u8> = new_keys.iter().flat_map(|k| k.to_le_bytes()[..width].to_vec()).collect();
    let data = ArrayData::builder(a.data_type().clone())
        .len(a.len())
        .add_buffer(Buffer::from_vec(bytes))
        .nulls(a.logical_nulls())
        .add_child_data(values.to_data())
        .build()
        .unwrap();
    make_array(data)
}

/// The same logical values as run-end array `a` with every run of two or
/// more rows split in two (equal consecutive runs, which the writer merges).
fn split_runs(a: &ArrayRef) -> ArrayRef {
    let data = a.to_data();
    let (ends_data, values) = (&data.child_data()[0], make_array(data.child_data()[1].clone()));
    let ends: Vec<i64> = match ends_data.data_type() {
        DataType::Int16 => make_array(ends_data.clone())
            .as_primitive::<arrow_array::types::Int16Type>()
            .values()
            .iter()
            .map(|&e| e as i64)
            .collect(),
        DataType::Int32 => make_array(ends_data.clone())
            .as_primitive::<arrow_array::types::Int32Type>()
            .values()
            .iter()
            .map(|&e| e as i64)
            .collect(),
        _ => make_array(ends_data.clone()).as_primitive::<arrow_array::types::Int64Type>().values().to_vec(),
    };
    let (mut new_ends, mut take) = (Vec::new(), Vec::new());
    let mut start = 0;
    for (r, &e) in ends.iter().enumerate() {
        if e - start >= 2 {
            new_ends.push(start + 1);
            take.push(r as u32);
        }
        new_ends.push(e);
        take.push(r as u32);
        start = e;
    }
    let values = arrow::compute::take(values.as_ref(), &UInt32Array::from(take), None).unwrap();
    let ends: ArrayRef = match ends_data.data_type() {
        DataType::Int16 => Arc::new(Int16Array::from_iter_values(new_ends.iter().map(|&e| e as i16))),
        DataType::Int32 => Arc::new(Int32Array::from_iter_values(new_ends.iter().map(|&e| e as i32))),
        _ => Arc::new(Int64Array::from(new_ends)),
    };
    let data = ArrayData::builder(a.data_type().clone())
        .len(a.len())
        .add_child_data(ends.to_data())
        .add_child_data(values.to_data())
        .build()
        .unwrap();
    make_array(data)
}

/// Every (schema, value type) case: each key type with each value type,
/// each run-end type with each value type.
fn cases() -> Vec<(String, &'static str, bool)> {
    let mut out = Vec::new();
    for k in KEYS {
        for v in VALUES {
            out.push((format!("dictionary<{k}, {v}>"), v, false));
        }
    }
    for r in RUN_ENDS {
        for v in VALUES {
            out.push((format!("run_end_encoded<{r}, {v}>"), v, true));
        }
    }
    out
}

#[test]
fn row_and_column_paths_give_the_same_bytes() {
    for (schema, value, ree) in cases() {
        for nulls in [false, true] {
            let rows = rows(3, 500, ree, nulls);
            let batch = row_batch(&schema, value, &rows);
            validate(&batch);
            assert_eq!(batch.num_rows(), rows.len());
            let col = batch.column(0);
            // Logical values: null where the row is null (a null key, or a null run value).
            for (i, r) in rows.iter().enumerate() {
                let null = if ree { col.logical_nulls().is_some_and(|n| n.is_null(i)) } else { col.is_null(i) };
                assert_eq!(null, r.is_none(), "{schema}: row {i} null");
            }
            let inputs: Vec<(&str, ArrayRef)> = vec![
                ("the row path's own array", col.clone()),
                ("another encoding", if ree { split_runs(col) } else { reencode_dictionary(col) }),
            ];
            for (what, input) in inputs {
                let mut w = writer(&schema, WriterOptions::default());
                w.write_array(0, input.as_ref()).unwrap_or_else(|e| panic!("{schema}, {what}: {e}"));
                let copied = w.finish().unwrap();
                validate(&copied);
                assert!(
                    batch_bytes(&copied) == batch_bytes(&batch),
                    "{schema}, nulls {nulls}: write_array of {what} differs from the row path"
                );
                // Half the rows by each path, in one batch.
                let half = rows.len() / 2;
                let mut w = writer(&schema, WriterOptions::default());
                write_rows(&mut w, value, &rows[..half]);
                w.write_array(0, input.slice(half, rows.len() - half).as_ref()).unwrap();
                let mixed = w.finish().unwrap();
                validate(&mixed);
                assert!(
                    batch_bytes(&mixed) == batch_bytes(&batch),
                    "{schema}, nulls {nulls}: rows then write_array of {what} differ from the row path"
                );
            }
        }
    }
}

/// Encoded column `col` as its values array and, for each row, the
/// physical row of that array it stands for (a dictionary's key, a run's
/// index), or None for a null key.
fn physical_rows(col: &ArrayRef) -> (ArrayRef, Vec<Option<usize>>) {
    use arrow_array::types::{Int16Type, Int32Type, Int64Type};
    match col.data_type() {
        DataType::Dictionary(..) => {
            let d = col.as_any_dictionary();
            let keys = d.normalized_keys();
            (d.values().clone(), (0..col.len()).map(|i| d.keys().is_valid(i).then_some(keys[i])).collect())
        }
        DataType::RunEndEncoded(r, _) => {
            macro_rules! runs {
                ($t:ty) => {{
                    let a = col.as_run::<$t>();
                    (a.values().clone(), (0..col.len()).map(|i| Some(a.get_physical_index(i))).collect())
                }};
            }
            match r.data_type() {
                DataType::Int16 => runs!(Int16Type),
                DataType::Int32 => runs!(Int32Type),
                _ => runs!(Int64Type),
            }
        }
        other => panic!("not an encoded type: {other}"),
    }
}

/// The row path's encoded columns hold the rows' values: each row's key or
/// run names a value equal to the row's value written through the plain
/// type's row path (null where the row is null), for every key and
/// run-end type, every value type, runs of 1 to 4 rows and of up to 60
/// (past the first buffers' room), with and without nulls; no dictionary
/// value is there twice, and no two neighbouring runs hold the same valid
/// value.
#[test]
fn the_encoded_row_path_holds_the_rows_values() {
    for (schema, value, ree) in cases() {
        for nulls in [false, true] {
            for (n, long) in [(500, false), (3000, true)] {
                let mut rows = rows(n as u64, n, ree, nulls);
                if long {
                    // Longer runs: each row of `rows` repeated 1 to 15 times.
                    rows = rows
                        .iter()
                        .enumerate()
                        .flat_map(|(i, &r)| std::iter::repeat_n(r, 1 + i % 15))
                        .take(n)
                        .collect();
                }
                let case = format!("{schema}, nulls {nulls}, {n} rows");
                let batch = row_batch(&schema, value, &rows);
                validate(&batch);
                let plain = row_batch(value, value, &rows);
                let (col, want) = (batch.column(0), plain.column(0));
                let (values, physical) = physical_rows(col);
                for (i, r) in rows.iter().enumerate() {
                    let got = physical[i].filter(|&p| values.is_valid(p));
                    assert_eq!(got.is_none(), r.is_none(), "{case}: row {i} null");
                    if let Some(p) = got {
                        assert_eq!(values.slice(p, 1).to_data(), want.slice(i, 1).to_data(), "{case}: row {i}");
                    }
                }
                if !ree {
                    let entries: Vec<ArrayData> = (0..values.len()).map(|p| values.slice(p, 1).to_data()).collect();
                    for p in 0..entries.len() {
                        assert!(!entries[..p].contains(&entries[p]), "{case}: dictionary entry {p} is there twice");
                    }
                } else {
                    for p in 1..values.len() {
                        if values.is_valid(p) && values.is_valid(p - 1) {
                            let (a, b) = (values.slice(p - 1, 1).to_data(), values.slice(p, 1).to_data());
                            assert_ne!(a, b, "{case}: runs {} and {p} hold one value", p - 1);
                        }
                    }
                }
            }
        }
    }
}

/// Several batches of different rows through one writer, both paths, each
/// equal to a fresh writer's; returns every batch's bytes.
fn reuse_scenario(recycle: bool) -> Vec<Vec<u8>> {
    let options = WriterOptions { recycle, ..WriterOptions::default() };
    let mut out = Vec::new();
    for (schema, value, ree) in cases() {
        let mut rows_w = writer(&schema, options.clone());
        let mut cols_w = writer(&schema, options.clone());
        for seed in [1u64, 2, 3] {
            let rows = rows(seed, 100 + 150 * seed as usize, ree, seed != 2);
            let fresh = row_batch(&schema, value, &rows);
            write_rows(&mut rows_w, value, &rows);
            let reused = rows_w.finish().unwrap();
            assert!(batch_bytes(&reused) == batch_bytes(&fresh), "{schema} seed {seed}: reused row-path writer");
            cols_w.write_array(0, fresh.column(0).as_ref()).unwrap();
            let copied = cols_w.finish().unwrap();
            assert!(batch_bytes(&copied) == batch_bytes(&fresh), "{schema} seed {seed}: reused column-path writer");
            out.push(batch_bytes(&fresh));
            out.push(batch_bytes(&reused));
            out.push(batch_bytes(&copied));
        }
    }
    out
}

#[test]
fn bytes_depend_on_the_values_only() {
    POISON.store(false, Ordering::SeqCst);
    let zeroed = reuse_scenario(true);
    let zeroed_off = reuse_scenario(false);
    POISON.store(true, Ordering::SeqCst);
    let probe: Vec<u8> = Vec::with_capacity(64);
    // SAFETY: reading the capacity of a fresh allocation as bytes; u8 has no invalid values.
    let fresh = unsafe { std::slice::from_raw_parts(probe.as_ptr(), 64) };
    assert!(fresh.iter().all(|&b| b == 0xA5), "the allocator does not poison");
    drop(probe);
    let poisoned = reuse_scenario(true);
    let poisoned_off = reuse_scenario(false);
    POISON.store(false, Ordering::SeqCst);
    assert_eq!(zeroed.len(), poisoned.len());
    for (i, (((a, b), c), d)) in zeroed.iter().zip(&zeroed_off).zip(&poisoned).zip(&poisoned_off).enumerate() {
        assert!(a == c, "batch {i}: bytes differ between zeroed and 0xA5-filled memory");
        assert!(a == b && c == d, "batch {i}: bytes differ between recycling on and off");
    }
}

#[test]
fn a_memory_limit_takes_the_full_path_with_the_same_bytes() {
    for (schema, value, ree) in cases() {
        let rows = rows(5, 300, ree, true);
        let fast = row_batch(&schema, value, &rows);
        let mut w = writer(&schema, WriterOptions { memory_limit: 1 << 30, ..WriterOptions::default() });
        write_rows(&mut w, value, &rows);
        let limited = w.finish().unwrap();
        assert!(batch_bytes(&limited) == batch_bytes(&fast), "{schema}: under a memory limit");
    }
}

/// The batch of `rows` written with `refused` tried before each row `at`
/// (each attempt refused and then `abort_row` or nothing), against the batch
/// of `rows` alone.
fn assert_refusal_changes_nothing(
    schema: &str,
    value: &str,
    rows: &[Option<u64>],
    refused: impl Fn(&mut ArrowWriter) -> quiver::Result<()>,
    code: ErrorCode,
) {
    let clean = row_batch(schema, value, rows);
    let mut w = writer(schema, WriterOptions::default());
    for (i, r) in rows.iter().enumerate() {
        if i % 5 == 0 {
            let e = refused(&mut w).expect_err("refused");
            assert_eq!(e.code(), code, "{schema}: {e}");
        }
        match r {
            Some(k) => append(&mut w, value, *k).unwrap(),
            None => w.append_null(0).unwrap(),
        }
        w.end_row().unwrap();
    }
    let got = w.finish().unwrap();
    validate(&got);
    assert!(batch_bytes(&got) == batch_bytes(&clean), "{schema}: a refused value changed the batch");
}

#[test]
fn a_refused_value_changes_nothing() {
    for prefix in ["dictionary<int32, ", "run_end_encoded<int32, "] {
        let ree = prefix.starts_with("run");
        let rows = rows(9, 200, ree, true);
        // Invalid UTF-8 (new to the dictionary, unequal to the last run).
        let schema = format!("{prefix}utf8>");
        assert_refusal_changes_nothing(
            &schema,
            "utf8",
            &rows,
            |w| w.append_bytes(0, &[0xC3, 0x28]),
            ErrorCode::InvalidArgument,
        );
        // A fixed-size binary of the wrong width; an input the value type does not take.
        let schema = format!("{prefix}fixed_size_binary(3)>");
        assert_refusal_changes_nothing(
            &schema,
            "fixed_size_binary(3)",
            &rows,
            |w| w.append_bytes(0, b"ab"),
            ErrorCode::InvalidArgument,
        );
        let schema = format!("{prefix}int16>");
        assert_refusal_changes_nothing(&schema, "int16", &rows, |w| w.append_f64(0, 1.0), ErrorCode::InvalidArgument);
        // A decimal over its precision.
        let schema = format!("{prefix}decimal128(10, 2)>");
        assert_refusal_changes_nothing(
            &schema,
            "decimal128(10, 2)",
            &rows,
            |w| w.append_decimal(0, 10i128.pow(12)),
            ErrorCode::OutOfRange,
        );
    }
}

#[test]
fn an_aborted_row_takes_its_new_values_back() {
    for (schema, value, ree) in cases() {
        let rows = rows(11, 200, ree, false);
        let clean = row_batch(&schema, value, &rows);
        let mut w =
            ArrowWriter::from_text(&format!("c: {schema}, d: int32 not null"), WriterOptions::default()).unwrap();
        let mut wc = writer(&schema, WriterOptions::default());
        let d = w.column_node("d").unwrap();
        for (i, r) in rows.iter().enumerate() {
            let k = r.unwrap();
            if i % 3 == 0 {
                // A value not seen yet (or one that ends the run), then the row dropped.
                append(&mut w, value, (k + 17) % DISTINCT).unwrap();
                w.abort_row().unwrap();
            }
            append(&mut w, value, k).unwrap();
            w.append_i32(d, i as i32).unwrap();
            w.end_row().unwrap();
            append(&mut wc, value, k).unwrap();
            wc.end_row().unwrap();
        }
        let got = w.finish().unwrap();
        validate(&got);
        let want = wc.finish().unwrap();
        let got_c = RecordBatch::try_new(want.schema(), vec![got.column(0).clone()]).unwrap();
        assert!(batch_bytes(&got_c) == batch_bytes(&want), "{schema}: abort_row left a value behind");
        assert!(batch_bytes(&want) == batch_bytes(&clean));
    }
}

#[test]
fn a_full_key_type_is_eoverflow_and_keeps_the_batch() {
    for (key, max) in [("int8", 127u64), ("uint8", 255), ("int16", 32_767)] {
        for value in ["utf8", "int64", "list<int32>", "decimal128(10, 2)"] {
            if value == "list<int32>" && max > 255 {
                continue;
            }
            let schema = format!("dictionary<{key}, {value}>");
            let mut w = writer(&schema, WriterOptions::default());
            // A value for each key, then every one of them again: all fit.
            let distinct = max + 1;
            let write = |w: &mut ArrowWriter, k: u64| -> quiver::Result<()> {
                match value {
                    "utf8" => w.append_str(0, &format!("v{k}")),
                    "int64" => w.append_i64(0, k as i64),
                    "decimal128(10, 2)" => w.append_decimal(0, k as i128),
                    _ => {
                        let item = w.node("c.item").unwrap();
                        w.begin(0)?;
                        w.append_i32(item, k as i32)?;
                        w.end(0)
                    }
                }
            };
            for k in (0..distinct).chain(0..distinct) {
                write(&mut w, k).unwrap();
                w.end_row().unwrap();
            }
            let e = write(&mut w, distinct).expect_err("the key type is full");
            assert_eq!(e.code(), ErrorCode::Overflow, "{schema}: {e}");
            w.abort_row().unwrap();
            // Known values still go in; the batch so far is kept.
            write(&mut w, 5).unwrap();
            w.end_row().unwrap();
            let batch = w.finish().unwrap();
            validate(&batch);
            assert_eq!(batch.num_rows(), 2 * distinct as usize + 1, "{schema}");
            assert_eq!(batch.column(0).as_any_dictionary().values().len(), distinct as usize, "{schema}");
            // The next batch starts an empty dictionary.
            write(&mut w, distinct).unwrap();
            w.end_row().unwrap();
            assert_eq!(w.finish().unwrap().column(0).as_any_dictionary().values().len(), 1);
        }
    }
}

#[test]
fn a_full_run_end_type_is_eoverflow_and_keeps_the_batch() {
    for value in ["int32", "utf8"] {
        let schema = format!("run_end_encoded<int16, {value}>");
        let mut w = writer(&schema, WriterOptions::default());
        for i in 0..i16::MAX as u64 {
            append(&mut w, value, i % 2).unwrap();
            w.end_row().unwrap();
        }
        // Even a value equal to the last run's: the run end would pass i16::MAX.
        for k in [0, 1] {
            let e = append(&mut w, value, k).expect_err("the run-end type is full");
            assert_eq!(e.code(), ErrorCode::Overflow, "{schema}: {e}");
        }
        let batch = w.finish().unwrap();
        validate(&batch);
        assert_eq!(batch.num_rows(), i16::MAX as usize);
    }
}

#[test]
fn a_column_copy_past_the_key_type_is_refused_whole() {
    let values: Vec<String> = (0..200).map(|k| format!("w{k}")).collect();
    let input: ArrayRef = Arc::new(arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::new(
        arrow_array::Int8Array::from_iter_values((0..127).map(|k| k as i8)),
        Arc::new(arrow_array::StringArray::from_iter_values(values.iter().take(127))),
    ));
    let more: ArrayRef = Arc::new(arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::new(
        arrow_array::Int8Array::from_iter_values((0..5).map(|k| k as i8)),
        Arc::new(arrow_array::StringArray::from_iter_values(values.iter().skip(127).take(5))),
    ));
    let mut w = writer("dictionary<int8, utf8>", WriterOptions::default());
    w.write_array(0, input.as_ref()).unwrap();
    w.write_array(0, input.as_ref()).unwrap();
    let e = w.write_array(0, more.as_ref()).expect_err("128 and more values do not fit int8 keys");
    assert_eq!(e.code(), ErrorCode::Overflow, "{e}");
    let batch = w.finish().unwrap();
    validate(&batch);
    let mut clean = writer("dictionary<int8, utf8>", WriterOptions::default());
    clean.write_array(0, input.as_ref()).unwrap();
    clean.write_array(0, input.as_ref()).unwrap();
    assert!(batch_bytes(&batch) == batch_bytes(&clean.finish().unwrap()), "the refused copy changed the batch");
    // A key out of the input dictionary's range is refused too, changing nothing.
    let data = ArrayData::builder(input.data_type().clone())
        .len(2)
        .add_buffer(Buffer::from_vec(vec![1i8, 100]))
        .add_child_data(input.to_data().child_data()[0].slice(0, 3));
    // SAFETY: the array is only given to write_array, which checks its keys
    // (the key out of range is the point of the test).
    let bad = make_array(unsafe { data.build_unchecked() });
    let mut w = writer("dictionary<int8, utf8>", WriterOptions::default());
    w.write_array(0, input.as_ref()).unwrap();
    let e = w.write_array(0, bad.as_ref()).expect_err("a key out of range");
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    let mut clean = writer("dictionary<int8, utf8>", WriterOptions::default());
    clean.write_array(0, input.as_ref()).unwrap();
    assert!(batch_bytes(&w.finish().unwrap()) == batch_bytes(&clean.finish().unwrap()));
}

#[test]
fn nulls_under_a_dictionary_have_key_zero() {
    for key in KEYS {
        let schema = format!("dictionary<{key}, utf8>");
        let rows = rows(13, 300, false, true);
        let batch = row_batch(&schema, "utf8", &rows);
        let input = reencode_dictionary(batch.column(0));
        let mut w = writer(&schema, WriterOptions::default());
        w.write_array(0, input.as_ref()).unwrap();
        for b in [batch, w.finish().unwrap()] {
            let data = b.column(0).to_data();
            let width = data.buffers()[0].len() / b.num_rows();
            let keys = data.buffers()[0].as_slice();
            let nulls = NullBuffer::new(data.nulls().unwrap().inner().clone());
            for i in 0..b.num_rows() {
                if nulls.is_null(i) {
                    assert!(keys[i * width..(i + 1) * width].iter().all(|&x| x == 0), "{schema}: row {i}");
                }
            }
        }
    }
}

#[test]
fn a_column_copy_past_the_run_end_type_is_refused_whole() {
    let runs = |value: i32| -> ArrayRef {
        let ends: ArrayRef = Arc::new(Int16Array::from(vec![20_000i16]));
        let values: ArrayRef = Arc::new(Int32Array::from(vec![value]));
        let dt = DataType::RunEndEncoded(
            Arc::new(arrow_schema::Field::new("run_ends", DataType::Int16, false)),
            Arc::new(arrow_schema::Field::new("values", DataType::Int32, true)),
        );
        make_array(
            ArrayData::builder(dt)
                .len(20_000)
                .add_child_data(ends.to_data())
                .add_child_data(values.to_data())
                .build()
                .unwrap(),
        )
    };
    for second in [7, 8] {
        // Equal to the last run (which would grow past i16::MAX) or a new run.
        let mut w = writer("run_end_encoded<int16, int32>", WriterOptions::default());
        w.write_array(0, runs(7).as_ref()).unwrap();
        let e = w.write_array(0, runs(second).as_ref()).expect_err("40000 rows do not fit int16 run ends");
        assert_eq!(e.code(), ErrorCode::Overflow, "{e}");
        let batch = w.finish().unwrap();
        validate(&batch);
        assert_eq!(batch.num_rows(), 20_000);
    }
}

/// Rows a key-copy case takes its slices from: every size in `SIZES` at
/// every offset in `OFFSETS`.
const SIZES: [usize; 8] = [1, 7, 63, 64, 65, 128, 200, 1000];
const OFFSETS: [usize; 4] = [0, 3, 64, 69];

/// Dictionary array `a` with its keys replaced by `keys` (as unsigned
/// words, cut to the key width: a negative key is its two's complement) and
/// its validity by `nulls`, the dictionary values kept.
fn with_keys(a: &ArrayRef, keys: &[u64], nulls: Option<NullBuffer>) -> ArrayRef {
    let DataType::Dictionary(key_type, _) = a.data_type() else { unreachable!() };
    let width = key_type.primitive_width().unwrap();
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()[..width].to_vec()).collect();
    let data = ArrayData::builder(a.data_type().clone())
        .len(keys.len())
        .add_buffer(Buffer::from_vec(bytes))
        .nulls(nulls)
        .add_child_data(a.to_data().child_data()[0].clone());
    // SAFETY: the array only goes to write_array, which checks every valid
    // key against the dictionary (keys out of range are what some cases
    // are about).
    make_array(unsafe { data.build_unchecked() })
}

/// The logical values of dictionary array `a` (unsliced) with the
/// dictionary reordered: values `0..keep` where they are, the rest
/// reversed, and a copy of value 0 appended that no key uses. When `a`'s
/// dictionary is in the order of first use, the keys stay copied as they are
/// up to value `keep`, then no longer.
fn permute_dictionary(a: &ArrayRef, keep: usize) -> ArrayRef {
    let d = a.as_any_dictionary();
    let n = d.values().len();
    let keep = keep.min(n);
    let mut order: Vec<u32> = (0..keep as u32).chain((keep as u32..n as u32).rev()).collect();
    let mut place = vec![0u64; n];
    for (at, &old) in order.iter().enumerate() {
        place[old as usize] = at as u64;
    }
    if n > 0 {
        order.push(0);
    }
    let values = arrow::compute::take(d.values().as_ref(), &UInt32Array::from(order), None).unwrap();
    let keys: Vec<u64> = d
        .normalized_keys()
        .iter()
        .enumerate()
        .map(|(i, &k)| if a.is_null(i) { (i % 3) as u64 } else { place[k] })
        .collect();
    let DataType::Dictionary(key_type, _) = a.data_type() else { unreachable!() };
    let width = key_type.primitive_width().unwrap();
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()[..width].to_vec()).collect();
    let data = ArrayData::builder(a.data_type().clone())
        .len(a.len())
        .add_buffer(Buffer::from_vec(bytes))
        .nulls(a.logical_nulls())
        .add_child_data(values.to_data())
        .build()
        .unwrap();
    make_array(data)
}

/// The column copy of a dictionary takes keys in blocks of 64 (copied as
/// they are while the input dictionary is in the order of first use, through
/// a table otherwise, one by one after a new value): for every key width and
/// value type, with and without nulls, at every size around the block
/// length, at offsets inside and past a block, in one call or two, with the
/// dictionary in first-use order, reordered after some values, reversed
/// with a duplicate, it gives the row path's bytes.
#[test]
fn the_key_copy_matches_the_rows_at_every_size_offset_and_order() {
    let longest = SIZES.iter().max().unwrap() + OFFSETS.iter().max().unwrap();
    for key in KEYS {
        for value in VALUES {
            let schema = format!("dictionary<{key}, {value}>");
            for nulls in [false, true] {
                let all = rows(17, longest, false, nulls);
                let full = row_batch(&schema, value, &all).column(0).clone();
                let distinct = full.as_any_dictionary().values().len();
                let inputs: Vec<(&str, ArrayRef)> = vec![
                    ("the row path's own array", full.clone()),
                    ("reversed with a duplicate", reencode_dictionary(&full)),
                    ("reordered after half the values", permute_dictionary(&full, distinct / 2)),
                    ("with an unused value", permute_dictionary(&full, distinct)),
                ];
                for n in SIZES {
                    for off in OFFSETS {
                        let expected = batch_bytes(&row_batch(&schema, value, &all[off..off + n]));
                        for (what, input) in &inputs {
                            let case = format!("{schema}, nulls {nulls}, {n} rows at {off}, {what}");
                            assert_copies_give(&schema, &input.slice(off, n), &[n / 3], &expected, &case);
                        }
                    }
                }
            }
        }
    }
}

/// `part` through `write_array` of a writer of `schema` gives `expected`
/// (the rows' bytes) in one call, validated, and in two calls cut at each
/// of `cuts`; `case` names the case in a failure.
fn assert_copies_give(schema: &str, part: &ArrayRef, cuts: &[usize], expected: &[u8], case: &str) {
    let mut w = writer(schema, WriterOptions::default());
    w.write_array(0, part.as_ref()).unwrap_or_else(|e| panic!("{case}: {e}"));
    let one = w.finish().unwrap();
    validate(&one);
    assert!(batch_bytes(&one) == expected, "{case}: write_array differs from the rows");
    let n = part.len();
    for &cut in cuts {
        let mut w = writer(schema, WriterOptions::default());
        w.write_array(0, part.slice(0, cut).as_ref()).unwrap();
        w.write_array(0, part.slice(cut, n - cut).as_ref()).unwrap();
        assert!(batch_bytes(&w.finish().unwrap()) == expected, "{case}, cut at {cut}: two write_array calls differ");
    }
}

/// A valid row whose key is past the dictionary (just past it, the largest
/// key of the type, a negative one) is refused with InvalidArgument,
/// wherever it sits in a block of 64 and whichever way the keys are being
/// copied, and the batch is as it was before the call; the same key under
/// a null is taken, as key 0.
#[test]
fn a_bad_key_anywhere_is_refused_whole() {
    const ROWS: usize = 200;
    for key in KEYS {
        let schema = format!("dictionary<{key}, utf8>");
        let width = match key {
            "int8" | "uint8" => 1,
            "int16" | "uint16" => 2,
            "int32" | "uint32" => 4,
            _ => 8,
        };
        let top_bit = 1u64 << (8 * width - 1);
        for nulls in [false, true] {
            let all = rows(29, ROWS + 10, false, nulls);
            let (prefix, body) = all.split_at(10);
            let full = row_batch(&schema, "utf8", body).column(0).clone();
            let distinct = full.as_any_dictionary().values().len() as u64;
            let clean = {
                let mut w = writer(&schema, WriterOptions::default());
                write_rows(&mut w, "utf8", prefix);
                batch_bytes(&w.finish().unwrap())
            };
            for (order, input) in [("first-use order", full.clone()), ("reversed", reencode_dictionary(&full))] {
                let keys: Vec<u64> = input.as_any_dictionary().normalized_keys().iter().map(|&k| k as u64).collect();
                let valid = input.logical_nulls();
                for at in [0, 1, 62, 63, 64, 65, 127, 128, 150, ROWS - 1] {
                    for bad in [distinct + 1, top_bit - 1, top_bit, u64::MAX] {
                        let mut bad_keys = keys.clone();
                        bad_keys[at] = bad;
                        // The bad key on a valid row.
                        let mut v: Vec<bool> =
                            (0..ROWS).map(|i| valid.as_ref().is_none_or(|n| n.is_valid(i))).collect();
                        v[at] = true;
                        let input_bad = with_keys(&input, &bad_keys, Some(NullBuffer::from(v.clone())));
                        let mut w = writer(&schema, WriterOptions::default());
                        write_rows(&mut w, "utf8", prefix);
                        let e = w.write_array(0, input_bad.as_ref()).expect_err("a key past the dictionary");
                        assert_eq!(
                            e.code(),
                            ErrorCode::InvalidArgument,
                            "{schema}, {order}, key {bad:#x} at {at}: {e}"
                        );
                        let got = w.finish().unwrap();
                        validate(&got);
                        assert!(
                            batch_bytes(&got) == clean,
                            "{schema}, {order}, key {bad:#x} at {at}: the refused call changed the batch"
                        );
                        // The same key under a null: taken, as a null with key 0.
                        v[at] = false;
                        let mut expected_rows = all.clone();
                        expected_rows[10 + at] = None;
                        let under_null = with_keys(&input, &bad_keys, Some(NullBuffer::from(v)));
                        let mut w = writer(&schema, WriterOptions::default());
                        write_rows(&mut w, "utf8", prefix);
                        w.write_array(0, under_null.as_ref()).unwrap_or_else(|e| panic!("{schema}, {order}: {e}"));
                        let got = w.finish().unwrap();
                        validate(&got);
                        let mut want = writer(&schema, WriterOptions::default());
                        write_rows(&mut want, "utf8", &expected_rows);
                        assert!(
                            batch_bytes(&got) == batch_bytes(&want.finish().unwrap()),
                            "{schema}, {order}, key {bad:#x} under a null at {at}"
                        );
                    }
                }
            }
        }
    }
}

/// The run-end copy (whole runs of a fixed-width value in one copy, the
/// others run by run) gives the rows' bytes at every size and offset, for
/// every run-end type and value type, with and without nulls, from the row
/// path's own array and from one with equal neighbouring runs (which the
/// writer merges), in one call or two (the second's first run then may
/// continue the first's last).
#[test]
fn the_run_copy_matches_the_rows_at_every_size_and_offset() {
    let longest = SIZES.iter().max().unwrap() + OFFSETS.iter().max().unwrap();
    for run_end in RUN_ENDS {
        for value in VALUES {
            let schema = format!("run_end_encoded<{run_end}, {value}>");
            for nulls in [false, true] {
                let all = rows(23, longest, true, nulls);
                let full = row_batch(&schema, value, &all).column(0).clone();
                let inputs = [("the row path's own array", full.clone()), ("with split runs", split_runs(&full))];
                for n in SIZES {
                    for off in OFFSETS {
                        let expected = batch_bytes(&row_batch(&schema, value, &all[off..off + n]));
                        for (what, input) in &inputs {
                            let case = format!("{schema}, nulls {nulls}, {n} rows at {off}, {what}");
                            let cuts = [n / 3, (n / 2 + 1).min(n)];
                            assert_copies_give(&schema, &input.slice(off, n), &cuts, &expected, &case);
                        }
                    }
                }
            }
        }
    }
}

/// A run-end input (built without arrow's checks) whose run end at any
/// position equals or falls below the one before it is refused with
/// InvalidArgument, for every run-end type and for values copied in bulk
/// (int64) or run by run (utf8), and the batch is as it was before the call.
#[test]
fn run_ends_that_do_not_increase_are_refused_whole() {
    const RUNS: usize = 600;
    for run_end in RUN_ENDS {
        for value in ["int64", "utf8"] {
            let schema = format!("run_end_encoded<{run_end}, {value}>");
            let prefix = rows(31, 10, true, false);
            let clean = batch_bytes(&row_batch(&schema, value, &prefix));
            // Runs of 2 rows, each value differing from the one before it.
            let body: Vec<Option<u64>> = (0..RUNS as u64).flat_map(|r| [Some(r % DISTINCT); 2]).collect();
            let good = row_batch(&schema, value, &body).column(0).to_data();
            assert_eq!(good.child_data()[0].len(), RUNS, "{schema}: one run per two rows");
            for at in [1, 2, 63, 64, 255, 256, 257, 300, 511, 512, RUNS - 1] {
                for drop in [0, 1] {
                    let ends: Vec<i64> =
                        (0..RUNS as i64).map(|r| if r == at as i64 { 2 * r - drop } else { 2 * r + 2 }).collect();
                    let ends: ArrayRef = match run_end {
                        "int16" => Arc::new(Int16Array::from_iter_values(ends.iter().map(|&e| e as i16))),
                        "int32" => Arc::new(Int32Array::from_iter_values(ends.iter().map(|&e| e as i32))),
                        _ => Arc::new(Int64Array::from(ends)),
                    };
                    // SAFETY: the array is malformed on purpose (run ends that
                    // do not increase); every buffer is as long as its length.
                    let bad = make_array(unsafe {
                        good.clone()
                            .into_builder()
                            .child_data(vec![ends.to_data(), good.child_data()[1].clone()])
                            .build_unchecked()
                    });
                    let mut w = writer(&schema, WriterOptions::default());
                    write_rows(&mut w, value, &prefix);
                    let e = w.write_array(0, bad.as_ref()).expect_err("run ends that do not increase");
                    assert_eq!(
                        e.code(),
                        ErrorCode::InvalidArgument,
                        "{schema}, run {at} ends {drop} before its start: {e}"
                    );
                    let got = w.finish().unwrap();
                    validate(&got);
                    assert!(batch_bytes(&got) == clean, "{schema}, run {at}: the refused call changed the batch");
                }
            }
        }
    }
}
