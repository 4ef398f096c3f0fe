//! The short text form of a schema (docs/schema-text.md), e.g.
//! `id: int64 not null, tags: list<utf8>, pt: struct<x: float64, y: float64>`.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit, UnionFields, UnionMode};

use crate::depth::{depth_error, MAX_DEPTH, MAX_FIELDS};
use crate::error::{ErrorCode, QuiverError, Result};

/// Parses the text form into a schema. Errors name the byte position and
/// what was expected there. Nesting deeper than [`MAX_DEPTH`] or more than
/// [`MAX_FIELDS`] fields are refused as the parser reaches them, before it
/// descends any further; so is a schema whose one row passes
/// [`MAX_ROW_BYTES`](crate::depth::MAX_ROW_BYTES), as the writer would.
pub fn parse_schema(text: &str) -> Result<Schema> {
    let mut p = Parser { text, pos: 0, path: Vec::new(), fields: 0 };
    let fields = p.fields(None)?;
    p.skip_ws();
    if p.pos < text.len() {
        return Err(p.error("',' or the end of the schema"));
    }
    if fields.is_empty() {
        return Err(p.error("a field (`name: type`)"));
    }
    let schema = Schema::new(fields);
    // The bounds the writer applies (within the nesting bound already).
    crate::depth::check_schema(&schema, "schema text")?;
    Ok(schema)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// Names of the fields being parsed, outermost first: its length is the
    /// depth of the innermost one.
    path: Vec<String>,
    /// Fields parsed so far (nested ones, map entries, dictionary values and
    /// run ends included).
    fields: usize,
}

impl<'a> Parser<'a> {
    /// Enters a field one level below the current one, or refuses it when
    /// that passes the nesting or field bound.
    fn enter(&mut self, name: &str) -> Result<()> {
        self.fields += 1;
        if self.fields > MAX_FIELDS {
            return Err(QuiverError::invalid(format!(
                "schema text: at position {}: more than {MAX_FIELDS} fields (nested fields included), over the bound \
                 of {MAX_FIELDS}",
                self.pos
            )));
        }
        if self.path.len() >= MAX_DEPTH {
            let mut path = self.path.clone();
            path.push(name.to_string());
            return Err(depth_error(&format!("schema text: at position {}", self.pos), MAX_DEPTH + 1, true, &path));
        }
        self.path.push(name.to_string());
        Ok(())
    }

    fn leave(&mut self) {
        self.path.pop();
    }

    fn error(&self, expected: &str) -> QuiverError {
        let rest: String = self.text[self.pos..].chars().take(20).collect();
        let found = if rest.is_empty() { "the end".to_string() } else { format!("'{rest}'") };
        QuiverError::invalid(format!("schema text: at position {}: expected {expected}, found {found}", self.pos))
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.text[self.pos..].chars().next() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("'{c}'")))
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && (bytes[self.pos].is_ascii_alphanumeric() || bytes[self.pos] == b'_') {
            self.pos += 1;
        }
        let text: &'a str = self.text;
        (self.pos > start).then(|| &text[start..self.pos])
    }

    fn name(&mut self) -> Result<String> {
        if self.peek() == Some('"') {
            return self.quoted();
        }
        match self.ident() {
            Some(name) if !name.starts_with(|c: char| c.is_ascii_digit()) => Ok(name.to_string()),
            _ => Err(self.error("a field name")),
        }
    }

    fn quoted(&mut self) -> Result<String> {
        let start = self.pos;
        self.expect('"')?;
        let mut out = String::new();
        let mut chars = self.text[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c => out.push(c),
            }
        }
        self.pos = start;
        Err(self.error("a closing '\"'"))
    }

    fn number(&mut self) -> Result<i64> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        if self.pos < bytes.len() && bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        self.text[start..self.pos].parse().map_err(|_| {
            self.pos = start;
            self.error("a number")
        })
    }

    /// `name: type [not null], ...` up to `close` (or the end); with
    /// `ids`, each name may carry a union type id (`name@3`), else members
    /// are numbered from 0.
    fn fields(&mut self, close: Option<char>) -> Result<Vec<Field>> {
        Ok(self.members(close, false)?.into_iter().map(|(_, f)| f).collect())
    }

    fn members(&mut self, close: Option<char>, ids: bool) -> Result<Vec<(Option<i64>, Field)>> {
        let mut fields = Vec::new();
        loop {
            if close.is_some() && self.peek() == close || close.is_none() && self.peek().is_none() {
                break;
            }
            let name = self.name()?;
            let id = if ids && self.eat('@') {
                let at = self.pos;
                let id = self.number()?;
                if !(0..=127).contains(&id) {
                    self.pos = at;
                    return Err(self.error("a union type id 0..=127"));
                }
                Some(id)
            } else {
                None
            };
            self.expect(':')?;
            fields.push((id, self.typed_field(name)?));
            if !self.eat(',') {
                break;
            }
        }
        Ok(fields)
    }

    /// `type [not null]` of a field named `name`, one level below the
    /// current one.
    fn typed_field(&mut self, name: String) -> Result<Field> {
        self.enter(&name)?;
        let data_type = self.data_type()?;
        let save = self.pos;
        let nullable = match self.ident() {
            Some("not") => {
                if self.ident() != Some("null") {
                    return Err(self.error("'null' after 'not'"));
                }
                false
            }
            _ => {
                self.pos = save;
                true
            }
        };
        self.leave();
        Ok(Field::new(name, data_type, nullable))
    }

    /// The child of a list, map or run-end encoded type: `[name:] type [not
    /// null]`, named `default` unless a name is given.
    fn element(&mut self, default: &str) -> Result<Field> {
        let save = self.pos;
        let named = match self.peek() {
            Some('"') => true,
            _ => self.ident().is_some() && self.peek() == Some(':'),
        };
        self.pos = save;
        let name = if named {
            let name = self.name()?;
            self.expect(':')?;
            name
        } else {
            default.to_string()
        };
        self.typed_field(name)
    }

    /// One of the words in `allowed`, as its data type.
    fn int_type(&mut self, allowed: &[&str], expected: &str) -> Result<DataType> {
        let at = self.pos;
        let word = self.ident();
        match word {
            Some(w) if allowed.contains(&w) => {
                self.pos = at;
                self.data_type()
            }
            _ => {
                self.pos = at;
                Err(self.error(expected))
            }
        }
    }

    fn unit(&mut self) -> Result<TimeUnit> {
        let save = self.pos;
        match self.ident() {
            Some("s") => Ok(TimeUnit::Second),
            Some("ms") => Ok(TimeUnit::Millisecond),
            Some("us") => Ok(TimeUnit::Microsecond),
            Some("ns") => Ok(TimeUnit::Nanosecond),
            _ => {
                self.pos = save;
                Err(self.error("a time unit (s, ms, us, ns)"))
            }
        }
    }

    fn precision_scale(&mut self, max: u8) -> Result<(u8, i8)> {
        self.expect('(')?;
        let at = self.pos;
        let p = self.number()?;
        self.expect(',')?;
        let s = self.number()?;
        self.expect(')')?;
        if p < 1 || p > max as i64 || s < -128 || s > p {
            self.pos = at;
            return Err(self.error(&format!("precision 1..={max} and scale up to the precision")));
        }
        Ok((p as u8, s as i8))
    }

    fn data_type(&mut self) -> Result<DataType> {
        let start = self.pos;
        let Some(word) = self.ident() else {
            return Err(self.error("a type"));
        };
        let dt = match word {
            "null" => DataType::Null,
            "bool" | "boolean" => DataType::Boolean,
            "int8" => DataType::Int8,
            "int16" => DataType::Int16,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "uint8" => DataType::UInt8,
            "uint16" => DataType::UInt16,
            "uint32" => DataType::UInt32,
            "uint64" => DataType::UInt64,
            "float16" => DataType::Float16,
            "float32" => DataType::Float32,
            "float64" => DataType::Float64,
            "utf8" | "string" => DataType::Utf8,
            "large_utf8" => DataType::LargeUtf8,
            "binary" => DataType::Binary,
            "large_binary" => DataType::LargeBinary,
            "utf8_view" | "string_view" => DataType::Utf8View,
            "binary_view" => DataType::BinaryView,
            "date32" => DataType::Date32,
            "date64" => DataType::Date64,
            "decimal32" => {
                let (p, s) = self.precision_scale(9)?;
                DataType::Decimal32(p, s)
            }
            "decimal64" => {
                let (p, s) = self.precision_scale(18)?;
                DataType::Decimal64(p, s)
            }
            "decimal128" => {
                let (p, s) = self.precision_scale(38)?;
                DataType::Decimal128(p, s)
            }
            "decimal256" => {
                let (p, s) = self.precision_scale(76)?;
                DataType::Decimal256(p, s)
            }
            "time32" | "time64" => {
                self.expect('(')?;
                let at = self.pos;
                let unit = self.unit()?;
                self.expect(')')?;
                match (word, unit) {
                    ("time32", TimeUnit::Second | TimeUnit::Millisecond) => DataType::Time32(unit),
                    ("time64", TimeUnit::Microsecond | TimeUnit::Nanosecond) => DataType::Time64(unit),
                    _ => {
                        self.pos = at;
                        return Err(self.error(if word == "time32" {
                            "s or ms for time32"
                        } else {
                            "us or ns for time64"
                        }));
                    }
                }
            }
            "timestamp" => {
                self.expect('(')?;
                let unit = self.unit()?;
                let tz = if self.eat(',') {
                    let tz = if self.peek() == Some('"') {
                        self.quoted()?
                    } else {
                        self.skip_ws();
                        let s = self.pos;
                        while self.pos < self.text.len() && !matches!(self.text.as_bytes()[self.pos], b')' | b' ') {
                            self.pos += 1;
                        }
                        self.text[s..self.pos].to_string()
                    };
                    if tz.is_empty() {
                        return Err(self.error("a time zone"));
                    }
                    Some(Arc::from(tz))
                } else {
                    None
                };
                self.expect(')')?;
                DataType::Timestamp(unit, tz)
            }
            "duration" => {
                self.expect('(')?;
                let unit = self.unit()?;
                self.expect(')')?;
                DataType::Duration(unit)
            }
            "interval" => {
                self.expect('(')?;
                let at = self.pos;
                let unit = match self.ident() {
                    Some("year_month") => IntervalUnit::YearMonth,
                    Some("day_time") => IntervalUnit::DayTime,
                    Some("month_day_nano") => IntervalUnit::MonthDayNano,
                    _ => {
                        self.pos = at;
                        return Err(self.error("year_month, day_time or month_day_nano"));
                    }
                };
                self.expect(')')?;
                DataType::Interval(unit)
            }
            "fixed_size_binary" => {
                self.expect('(')?;
                let at = self.pos;
                let n = self.number()?;
                if !(0..=i32::MAX as i64).contains(&n) {
                    self.pos = at;
                    return Err(self.error("a width >= 0"));
                }
                self.expect(')')?;
                DataType::FixedSizeBinary(n as i32)
            }
            "list" | "large_list" | "list_view" | "large_list_view" => {
                self.expect('<')?;
                let item = Arc::new(self.element("item")?);
                self.expect('>')?;
                match word {
                    "list" => DataType::List(item),
                    "large_list" => DataType::LargeList(item),
                    "list_view" => DataType::ListView(item),
                    _ => DataType::LargeListView(item),
                }
            }
            "fixed_size_list" => {
                self.expect('<')?;
                let item = Arc::new(self.element("item")?);
                self.expect(',')?;
                let at = self.pos;
                let n = self.number()?;
                if !(0..=i32::MAX as i64).contains(&n) {
                    self.pos = at;
                    return Err(self.error("a list size >= 0"));
                }
                self.expect('>')?;
                DataType::FixedSizeList(item, n as i32)
            }
            "struct" => {
                self.expect('<')?;
                let fields = self.fields(Some('>'))?;
                self.expect('>')?;
                DataType::Struct(Fields::from(fields))
            }
            "map" => {
                self.expect('<')?;
                self.enter("entries")?;
                let key = self.element("key")?.with_nullable(false);
                self.expect(',')?;
                let value = self.element("value")?;
                self.leave();
                let sorted = if self.eat(',') {
                    let at = self.pos;
                    if self.ident() != Some("sorted") {
                        self.pos = at;
                        return Err(self.error("'sorted'"));
                    }
                    true
                } else {
                    false
                };
                self.expect('>')?;
                let entries = Field::new("entries", DataType::Struct(Fields::from(vec![key, value])), false);
                DataType::Map(Arc::new(entries), sorted)
            }
            "dictionary" => {
                self.expect('<')?;
                let key = self.int_type(
                    &["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
                    "an integer key type (int8..int64, uint8..uint64)",
                )?;
                self.expect(',')?;
                self.enter("values")?;
                let value = self.data_type()?;
                self.leave();
                self.expect('>')?;
                DataType::Dictionary(Box::new(key), Box::new(value))
            }
            "run_end_encoded" => {
                self.expect('<')?;
                self.enter("run_ends")?;
                let run_ends = self.int_type(&["int16", "int32", "int64"], "a run-end type (int16, int32, int64)")?;
                self.leave();
                self.expect(',')?;
                let values = self.element("values")?;
                self.expect('>')?;
                DataType::RunEndEncoded(Arc::new(Field::new("run_ends", run_ends, false)), Arc::new(values))
            }
            "sparse_union" | "dense_union" => {
                self.expect('<')?;
                let at = self.pos;
                let members = self.members(Some('>'), true)?;
                self.expect('>')?;
                if members.is_empty() || members.len() > 128 {
                    self.pos = at;
                    return Err(self.error("1 to 128 union members"));
                }
                let mut seen = [false; 128];
                let mut ids = Vec::with_capacity(members.len());
                for (i, (id, _)) in members.iter().enumerate() {
                    let id = id.unwrap_or(i as i64) as usize;
                    if id > 127 || std::mem::replace(&mut seen[id], true) {
                        self.pos = at;
                        return Err(self.error(&format!("distinct union type ids (member {i} repeats or passes 127)")));
                    }
                    ids.push(id as i8);
                }
                let fields = UnionFields::try_new(ids, members.into_iter().map(|(_, f)| f))
                    .map_err(|e| QuiverError::invalid(format!("schema text: at position {at}: {e}")))?;
                let mode = if word == "dense_union" { UnionMode::Dense } else { UnionMode::Sparse };
                DataType::Union(fields, mode)
            }
            _ => {
                self.pos = start;
                return Err(self.error("a type name (see docs/schema-text.md)"));
            }
        };
        Ok(dt)
    }
}

/// The text form of `schema`, which [`parse_schema`] reads back as an equal
/// schema: `schema_to_text(&parse_schema(t)?)` parses to what `t` did.
/// Errors: `EINVAL` over the nesting bound ([`MAX_DEPTH`]) or the field
/// bound; `ENOSYS` for what the text form cannot spell (schema or field
/// metadata, ordered dictionaries, map entries not named `entries`/nullable,
/// a nullable map key, run ends not named `run_ends` or nullable, keys
/// or run ends of a type the writer refuses). The walk is recursive, after the iterative depth check.
pub fn schema_to_text(schema: &Schema) -> Result<String> {
    crate::depth::check_schema(schema, "schema_to_text")?;
    if !schema.metadata().is_empty() {
        return Err(unspellable("schema metadata"));
    }
    let mut out = String::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_name(&mut out, f.name());
        out.push_str(": ");
        push_field(&mut out, f)?;
    }
    Ok(out)
}

/// The text form of a data type alone (as a field of it would be spelled
/// after `name: `, without `not null`).
pub fn data_type_to_text(data_type: &DataType) -> Result<String> {
    crate::depth::check_data_type(data_type, "data_type_to_text")?;
    let mut out = String::new();
    push_type(&mut out, data_type)?;
    Ok(out)
}

fn unspellable(what: &str) -> QuiverError {
    QuiverError::new(ErrorCode::Unsupported, format!("schema_to_text: the text form cannot spell {what}"))
}

/// A name as the parser reads it: bare when it is an identifier, else quoted.
fn push_name(out: &mut String, name: &str) {
    let bare = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if bare {
        out.push_str(name);
    } else {
        push_quoted(out, name);
    }
}

fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// `type [not null]` of a field.
fn push_field(out: &mut String, f: &Field) -> Result<()> {
    if !f.metadata().is_empty() {
        return Err(unspellable(&format!("the metadata of field '{}'", f.name())));
    }
    if f.dict_is_ordered() == Some(true) {
        return Err(unspellable(&format!("the ordered dictionary of field '{}'", f.name())));
    }
    push_type(out, f.data_type())?;
    if !f.is_nullable() {
        out.push_str(" not null");
    }
    Ok(())
}

/// A list, map or run-end child: `[name: ]type [not null]`, the name left
/// out when it is the default one.
fn push_element(out: &mut String, f: &Field, default: &str) -> Result<()> {
    if f.name() != default {
        push_name(out, f.name());
        out.push_str(": ");
    }
    push_field(out, f)
}

fn unit_text(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

fn push_type(out: &mut String, dt: &DataType) -> Result<()> {
    use std::fmt::Write;
    let simple = match dt {
        DataType::Null => "null",
        DataType::Boolean => "bool",
        DataType::Int8 => "int8",
        DataType::Int16 => "int16",
        DataType::Int32 => "int32",
        DataType::Int64 => "int64",
        DataType::UInt8 => "uint8",
        DataType::UInt16 => "uint16",
        DataType::UInt32 => "uint32",
        DataType::UInt64 => "uint64",
        DataType::Float16 => "float16",
        DataType::Float32 => "float32",
        DataType::Float64 => "float64",
        DataType::Utf8 => "utf8",
        DataType::LargeUtf8 => "large_utf8",
        DataType::Binary => "binary",
        DataType::LargeBinary => "large_binary",
        DataType::Utf8View => "utf8_view",
        DataType::BinaryView => "binary_view",
        DataType::Date32 => "date32",
        DataType::Date64 => "date64",
        DataType::Interval(IntervalUnit::YearMonth) => "interval(year_month)",
        DataType::Interval(IntervalUnit::DayTime) => "interval(day_time)",
        DataType::Interval(IntervalUnit::MonthDayNano) => "interval(month_day_nano)",
        _ => "",
    };
    if !simple.is_empty() {
        out.push_str(simple);
        return Ok(());
    }
    match dt {
        DataType::Decimal32(p, s) => write!(out, "decimal32({p}, {s})").expect("to a String"),
        DataType::Decimal64(p, s) => write!(out, "decimal64({p}, {s})").expect("to a String"),
        DataType::Decimal128(p, s) => write!(out, "decimal128({p}, {s})").expect("to a String"),
        DataType::Decimal256(p, s) => write!(out, "decimal256({p}, {s})").expect("to a String"),
        DataType::Time32(u) => write!(out, "time32({})", unit_text(u)).expect("to a String"),
        DataType::Time64(u) => write!(out, "time64({})", unit_text(u)).expect("to a String"),
        DataType::Duration(u) => write!(out, "duration({})", unit_text(u)).expect("to a String"),
        DataType::Timestamp(u, tz) => {
            write!(out, "timestamp({}", unit_text(u)).expect("to a String");
            if let Some(tz) = tz {
                if tz.is_empty() {
                    return Err(unspellable("an empty time zone"));
                }
                out.push_str(", ");
                push_quoted(out, tz);
            }
            out.push(')');
        }
        DataType::FixedSizeBinary(n) => write!(out, "fixed_size_binary({n})").expect("to a String"),
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) => {
            out.push_str(match dt {
                DataType::List(_) => "list<",
                DataType::LargeList(_) => "large_list<",
                DataType::ListView(_) => "list_view<",
                _ => "large_list_view<",
            });
            push_element(out, f, "item")?;
            out.push('>');
        }
        DataType::FixedSizeList(f, n) => {
            out.push_str("fixed_size_list<");
            push_element(out, f, "item")?;
            write!(out, ", {n}>").expect("to a String");
        }
        DataType::Struct(fields) => {
            out.push_str("struct<");
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_name(out, f.name());
                out.push_str(": ");
                push_field(out, f)?;
            }
            out.push('>');
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(unspellable("map entries that are not a struct"));
            };
            if entries.name() != "entries" || entries.is_nullable() || !entries.metadata().is_empty() || kv.len() != 2 {
                return Err(unspellable("map entries not named 'entries', nullable, or not of two fields"));
            }
            if kv[0].is_nullable() {
                return Err(unspellable("a nullable map key"));
            }
            out.push_str("map<");
            push_element(out, &kv[0], "key")?;
            out.push_str(", ");
            push_element(out, &kv[1], "value")?;
            out.push_str(if *sorted { ", sorted>" } else { ">" });
        }
        DataType::Dictionary(key, value) => {
            if !key.is_integer() {
                return Err(unspellable(&format!("a dictionary with {key} keys")));
            }
            out.push_str("dictionary<");
            push_type(out, key)?;
            out.push_str(", ");
            push_type(out, value)?;
            out.push('>');
        }
        DataType::RunEndEncoded(run_ends, values) => {
            if run_ends.name() != "run_ends" || run_ends.is_nullable() || !run_ends.metadata().is_empty() {
                return Err(unspellable("run ends not named 'run_ends' or nullable"));
            }
            if !matches!(run_ends.data_type(), DataType::Int16 | DataType::Int32 | DataType::Int64) {
                return Err(unspellable(&format!("run ends of type {}", run_ends.data_type())));
            }
            out.push_str("run_end_encoded<");
            push_type(out, run_ends.data_type())?;
            out.push_str(", ");
            push_element(out, values, "values")?;
            out.push('>');
        }
        DataType::Union(fields, mode) => {
            out.push_str(if *mode == UnionMode::Dense { "dense_union<" } else { "sparse_union<" });
            for (i, (id, f)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_name(out, f.name());
                if id as usize != i {
                    write!(out, "@{id}").expect("to a String");
                }
                out.push_str(": ");
                push_field(out, f)?;
            }
            out.push('>');
        }
        other => return Err(unspellable(&format!("the type {other}"))),
    }
    Ok(())
}
