//! The schema text form (docs/schema-text.md): generated schemas of every
//! type the writer takes round-trip through the text (`schema_to_text`, then
//! `parse_schema` gives the same `Schema`) and through the C form
//! (`quiver_schema_parse`'s `ArrowSchema`, imported by arrow, is the same
//! schema again); and the seed corpus of the `schema_text` fuzz target
//! (fuzz/corpus/schema_text/seed-*) and its reduced crashes
//! (fuzz/regressions/schema_text/) replay through the target's driver.

#[path = "../fuzz/driver/schema_text.rs"]
mod schema_text;

use std::collections::BTreeSet;
use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit, UnionFields, UnionMode};

use quiver::ffi::schema::quiver_schema_parse;
use quiver::{parse_schema, schema_to_text, ArrowWriter, WriterOptions};

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const UNITS: [TimeUnit; 4] = [TimeUnit::Second, TimeUnit::Millisecond, TimeUnit::Microsecond, TimeUnit::Nanosecond];

/// Names: identifiers, and names only the quoted form spells.
fn name(r: &mut Rng) -> String {
    match r.below(6) {
        0 => String::new(),
        1 => format!("has space {}", r.below(10)),
        2 => "quote\"and\\slash".into(),
        3 => format!("_x{}", r.below(100)),
        4 => "9starts_with_digit".into(),
        _ => format!("c{}", r.below(1000)),
    }
}

fn leaf(r: &mut Rng) -> DataType {
    match r.below(30) {
        0 => DataType::Null,
        1 => DataType::Boolean,
        2 => DataType::Int8,
        3 => DataType::Int16,
        4 => DataType::Int32,
        5 => DataType::Int64,
        6 => DataType::UInt8,
        7 => DataType::UInt16,
        8 => DataType::UInt32,
        9 => DataType::UInt64,
        10 => DataType::Float16,
        11 => DataType::Float32,
        12 => DataType::Float64,
        13 => DataType::Utf8,
        14 => DataType::LargeUtf8,
        15 => DataType::Binary,
        16 => DataType::LargeBinary,
        17 => DataType::Utf8View,
        18 => DataType::BinaryView,
        19 => DataType::Date32,
        20 => DataType::Date64,
        21 => DataType::Time32(*r.pick(&UNITS[..2])),
        22 => DataType::Time64(*r.pick(&UNITS[2..])),
        23 => {
            let tz = match r.below(3) {
                0 => None,
                1 => Some(Arc::from("UTC")),
                _ => Some(Arc::from("+05:30")),
            };
            DataType::Timestamp(*r.pick(&UNITS), tz)
        }
        24 => DataType::Duration(*r.pick(&UNITS)),
        25 => {
            DataType::Interval(*r.pick(&[IntervalUnit::YearMonth, IntervalUnit::DayTime, IntervalUnit::MonthDayNano]))
        }
        26 => DataType::FixedSizeBinary(r.below(40) as i32),
        _ => {
            let (max, kind) = *r.pick(&[(9u8, 32), (18, 64), (38, 128), (76, 256)]);
            let p = 1 + r.below(max as u64) as u8;
            let s = r.below(p as u64 + 5) as i8 - 4;
            match kind {
                32 => DataType::Decimal32(p, s),
                64 => DataType::Decimal64(p, s),
                128 => DataType::Decimal128(p, s),
                _ => DataType::Decimal256(p, s),
            }
        }
    }
}

fn field(r: &mut Rng, name: String, depth: u32) -> Field {
    Field::new(name, data_type(r, depth), r.below(3) != 0)
}

/// A field with a generated name.
fn named(r: &mut Rng, depth: u32) -> Field {
    let n = name(r);
    field(r, n, depth)
}

/// A child of a list or run-end type: the default name or another.
fn element(r: &mut Rng, default: &str, depth: u32) -> Field {
    let n = if r.below(3) == 0 { name(r) } else { default.to_string() };
    field(r, n, depth)
}

const INTS: [DataType; 8] = [
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
];

fn data_type(r: &mut Rng, depth: u32) -> DataType {
    if depth == 0 || r.below(3) == 0 {
        return leaf(r);
    }
    let d = depth - 1;
    match r.below(13) {
        0 => DataType::List(Arc::new(element(r, "item", d))),
        1 => DataType::LargeList(Arc::new(element(r, "item", d))),
        2 => DataType::ListView(Arc::new(element(r, "item", d))),
        3 => DataType::LargeListView(Arc::new(element(r, "item", d))),
        4 => DataType::FixedSizeList(Arc::new(element(r, "item", d)), r.below(4) as i32),
        5 => {
            let n = r.below(4);
            DataType::Struct(Fields::from((0..n).map(|_| named(r, d)).collect::<Vec<_>>()))
        }
        6 => {
            let key = element(r, "key", d).with_nullable(false);
            let value = element(r, "value", d);
            let entries = Field::new("entries", DataType::Struct(Fields::from(vec![key, value])), false);
            DataType::Map(Arc::new(entries), r.below(2) == 0)
        }
        7 | 8 => {
            let n = 1 + r.below(4) as usize;
            let mut ids: Vec<i8> = (0..n as i8).collect();
            if r.below(2) == 0 {
                // Distinct ids out of order and with gaps.
                let mut all: Vec<i8> = (0..=127).collect();
                for i in 0..n {
                    let j = i + r.below((128 - i) as u64) as usize;
                    all.swap(i, j);
                }
                ids = all[..n].to_vec();
            }
            let fields: Vec<Field> = (0..n).map(|_| named(r, d)).collect();
            let mode = if r.below(2) == 0 { UnionMode::Sparse } else { UnionMode::Dense };
            DataType::Union(UnionFields::try_new(ids, fields).unwrap(), mode)
        }
        9 | 10 => DataType::Dictionary(Box::new(r.pick(&INTS).clone()), Box::new(data_type(r, d))),
        _ => {
            let ends = r.pick(&[DataType::Int16, DataType::Int32, DataType::Int64]).clone();
            DataType::RunEndEncoded(Arc::new(Field::new("run_ends", ends, false)), Arc::new(element(r, "values", d)))
        }
    }
}

fn schema(r: &mut Rng) -> Schema {
    let n = 1 + r.below(4);
    Schema::new((0..n).map(|_| named(r, 4)).collect::<Vec<_>>())
}

/// The variant names of every type in `dt`, for the coverage check.
fn variants(dt: &DataType, out: &mut BTreeSet<String>) {
    let v = format!("{dt:?}");
    out.insert(v.split(['(', ' ']).next().unwrap().to_string());
    match dt {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => variants(f.data_type(), out),
        DataType::Struct(fs) => fs.iter().for_each(|f| variants(f.data_type(), out)),
        DataType::Union(fs, mode) => {
            out.insert(format!("{mode:?}Union"));
            fs.iter().for_each(|(_, f)| variants(f.data_type(), out))
        }
        DataType::Dictionary(_, v) => variants(v, out),
        DataType::RunEndEncoded(_, v) => variants(v.data_type(), out),
        _ => {}
    }
}

#[test]
fn generated_schemas_of_every_type_round_trip_through_the_text_and_the_c_form() {
    let mut r = Rng(0x5eed);
    let mut seen = BTreeSet::new();
    for i in 0..3000 {
        let s = schema(&mut r);
        s.fields().iter().for_each(|f| variants(f.data_type(), &mut seen));
        let text = schema_to_text(&s).unwrap_or_else(|e| panic!("schema {i} {s:?}: {e}"));
        let back = parse_schema(&text).unwrap_or_else(|e| panic!("schema {i}: {text:?}: {e}"));
        assert_eq!(back, s, "schema {i}: {text:?}");
        assert_eq!(schema_to_text(&back).unwrap(), text, "schema {i}: printing is not stable");
        // The writer takes every generated schema.
        ArrowWriter::create(Arc::new(s.clone()), WriterOptions::default())
            .unwrap_or_else(|e| panic!("schema {i}: {text:?}: the writer refuses it: {e}"));
        // The C form: quiver_schema_parse's ArrowSchema, imported by arrow.
        let c = CString::new(text.clone()).unwrap();
        let mut out = FFI_ArrowSchema::empty();
        // SAFETY: a NUL-terminated text and a struct to write.
        assert_eq!(unsafe { quiver_schema_parse(c.as_ptr(), &mut out) }, 0, "schema {i}: {text:?}");
        let imported = Schema::try_from(&out).unwrap_or_else(|e| panic!("schema {i}: {text:?}: import: {e}"));
        assert_eq!(imported, s, "schema {i}: {text:?} through the C form");
    }
    // Every type and constructor the writer takes was generated.
    let want = [
        "Null",
        "Boolean",
        "Int8",
        "Int16",
        "Int32",
        "Int64",
        "UInt8",
        "UInt16",
        "UInt32",
        "UInt64",
        "Float16",
        "Float32",
        "Float64",
        "Utf8",
        "LargeUtf8",
        "Binary",
        "LargeBinary",
        "Utf8View",
        "BinaryView",
        "Date32",
        "Date64",
        "Time32",
        "Time64",
        "Timestamp",
        "Duration",
        "Interval",
        "FixedSizeBinary",
        "Decimal32",
        "Decimal64",
        "Decimal128",
        "Decimal256",
        "List",
        "LargeList",
        "ListView",
        "LargeListView",
        "FixedSizeList",
        "Struct",
        "Map",
        "SparseUnion",
        "DenseUnion",
        "Dictionary",
        "RunEndEncoded",
    ];
    let missing: Vec<&str> = want.iter().copied().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

#[test]
fn the_text_spells_each_new_type_as_documented() {
    // The spellings of docs/schema-text.md, parsed to the types they name.
    let cases: Vec<(&str, DataType)> = vec![
        ("utf8_view", DataType::Utf8View),
        ("binary_view", DataType::BinaryView),
        ("dictionary<int32, utf8>", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))),
        (
            "run_end_encoded<int16, utf8>",
            DataType::RunEndEncoded(
                Arc::new(Field::new("run_ends", DataType::Int16, false)),
                Arc::new(Field::new("values", DataType::Utf8, true)),
            ),
        ),
        ("list_view<int8>", DataType::ListView(Arc::new(Field::new("item", DataType::Int8, true)))),
        (
            "large_list_view<element: int8 not null>",
            DataType::LargeListView(Arc::new(Field::new("element", DataType::Int8, false))),
        ),
        (
            "sparse_union<a: int32, b: utf8>",
            DataType::Union(
                UnionFields::try_new(
                    vec![0, 1],
                    vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true)],
                )
                .unwrap(),
                UnionMode::Sparse,
            ),
        ),
        (
            "dense_union<a@5: int32, b@2: utf8 not null>",
            DataType::Union(
                UnionFields::try_new(
                    vec![5, 2],
                    vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, false)],
                )
                .unwrap(),
                UnionMode::Dense,
            ),
        ),
    ];
    for (text, dt) in cases {
        let s = parse_schema(&format!("x: {text}")).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(s.field(0).data_type(), &dt, "{text}");
        assert_eq!(quiver::schema_text::data_type_to_text(&dt).unwrap(), text, "printed");
    }
    // Refused: keys and run ends the writer does not take, ids repeated or
    // out of range, an empty union.
    for bad in [
        "x: dictionary<utf8, utf8>",
        "x: dictionary<float32, utf8>",
        "x: run_end_encoded<uint32, utf8>",
        "x: sparse_union<a@1: int8, b: int8>",
        "x: dense_union<a@128: int8>",
        "x: sparse_union<>",
        "x: map<utf8, int8, unsorted>",
    ] {
        let e = parse_schema(bad).unwrap_err();
        assert!(e.message().starts_with("schema text: at position"), "{bad}: {e}");
    }
}

/// The files of `dir` whose names start with `prefix` (none if `dir` is missing).
fn inputs(dir: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else { return vec![] };
    let mut files: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn fuzz_seed_corpus_and_regressions_replay() {
    let corpus = inputs("fuzz/corpus/schema_text", "seed-");
    assert!(corpus.len() >= 60, "the seed corpus has {} files", corpus.len());
    let (mut accepted, mut refused) = (0, 0);
    for (name, data) in &corpus {
        let result = std::panic::catch_unwind(|| schema_text::run(data));
        assert!(result.is_ok(), "seed {name} ({} bytes) fails the driver's checks", data.len());
        match std::str::from_utf8(data).ok().map(parse_schema) {
            Some(Ok(_)) => accepted += 1,
            _ => refused += 1,
        }
    }
    // Both sides of the property are among the seeds.
    assert!(accepted >= 40 && refused >= 10, "{accepted} seeds accepted, {refused} refused");
    for (name, data) in &inputs("fuzz/regressions/schema_text", "") {
        let result = std::panic::catch_unwind(|| schema_text::run(data));
        assert!(result.is_ok(), "regression {name} ({} bytes) fails the driver's checks", data.len());
    }
}
