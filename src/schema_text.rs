//! The short text form of a schema (docs/schema-text.md), e.g.
//! `id: int64 not null, tags: list<utf8>, pt: struct<x: float64, y: float64>`.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit};

use crate::error::{QuiverError, Result};

/// Parses the text form into a schema. Errors name the byte position and
/// what was expected there.
pub fn parse_schema(text: &str) -> Result<Schema> {
    let mut p = Parser { text, pos: 0 };
    let fields = p.fields(None)?;
    p.skip_ws();
    if p.pos < text.len() {
        return Err(p.error("',' or the end of the schema"));
    }
    if fields.is_empty() {
        return Err(p.error("a field (`name: type`)"));
    }
    Ok(Schema::new(fields))
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
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

    /// `name: type [not null], ...` up to `close` (or the end).
    fn fields(&mut self, close: Option<char>) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        loop {
            if close.is_some() && self.peek() == close || close.is_none() && self.peek().is_none() {
                break;
            }
            let name = self.name()?;
            self.expect(':')?;
            fields.push(self.typed_field(name)?);
            if !self.eat(',') {
                break;
            }
        }
        Ok(fields)
    }

    fn typed_field(&mut self, name: String) -> Result<Field> {
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
        Ok(Field::new(name, data_type, nullable))
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
            "list" | "large_list" => {
                self.expect('<')?;
                let item = Arc::new(self.typed_field("item".into())?);
                self.expect('>')?;
                if word == "list" {
                    DataType::List(item)
                } else {
                    DataType::LargeList(item)
                }
            }
            "fixed_size_list" => {
                self.expect('<')?;
                let item = Arc::new(self.typed_field("item".into())?);
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
                let key = self.typed_field("key".into())?;
                let key = key.with_nullable(false);
                self.expect(',')?;
                let value = self.typed_field("value".into())?;
                self.expect('>')?;
                let entries = Field::new("entries", DataType::Struct(Fields::from(vec![key, value])), false);
                DataType::Map(Arc::new(entries), false)
            }
            _ => {
                self.pos = start;
                return Err(self.error("a type name (see docs/schema-text.md)"));
            }
        };
        Ok(dt)
    }
}
