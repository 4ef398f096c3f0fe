//! Fields and types of the schema text (the grammar of docs/schema-text.md).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit, UnionFields, UnionMode};

use super::lex::Parser;
use crate::error::{QuiverError, Result};

impl Parser<'_> {
    /// `name: type [not null], ...` up to `close` (or the end); with
    /// `ids`, each name may carry a union type id (`name@3`), else members
    /// are numbered from 0.
    pub(super) fn fields(&mut self, close: Option<char>) -> Result<Vec<Field>> {
        Ok(self.members(close, false)?.into_iter().map(|(_, f)| f).collect())
    }

    pub(super) fn members(&mut self, close: Option<char>, ids: bool) -> Result<Vec<(Option<i64>, Field)>> {
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
    pub(super) fn typed_field(&mut self, name: String) -> Result<Field> {
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
    pub(super) fn element(&mut self, default: &str) -> Result<Field> {
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
    pub(super) fn int_type(&mut self, allowed: &[&str], expected: &str) -> Result<DataType> {
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

    pub(super) fn unit(&mut self) -> Result<TimeUnit> {
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

    pub(super) fn precision_scale(&mut self, max: u8) -> Result<(u8, i8)> {
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

    pub(super) fn data_type(&mut self) -> Result<DataType> {
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
