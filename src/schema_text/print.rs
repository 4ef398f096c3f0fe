//! The text form of a schema, which the parser reads back as an equal schema.

use arrow_schema::{DataType, Field, IntervalUnit, Schema, TimeUnit, UnionMode};

use crate::error::{ErrorCode, QuiverError, Result};

/// The text form of `schema`, which [`parse_schema`](super::parse_schema) reads back as an equal
/// schema: `schema_to_text(&parse_schema(t)?)` parses to what `t` did.
/// Errors: `EINVAL` over the nesting bound ([`MAX_DEPTH`](crate::MAX_DEPTH)) or the field
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
