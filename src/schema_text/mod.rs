//! The short text form of a schema (docs/schema-text.md), e.g.
//! `id: int64 not null, tags: list<utf8>, pt: struct<x: float64, y: float64>`.

//!
//! Three parts: `lex` (the parser's state, the nesting and field bounds as
//! it descends, and the tokens), `parse` (fields and types), `print` (the
//! text form of a schema, read back by the parser).

mod lex;
mod parse;
mod print;

use arrow_schema::Schema;

#[cfg(doc)]
use crate::depth::{MAX_DEPTH, MAX_FIELDS};
use crate::error::Result;
use lex::Parser;
pub use print::{data_type_to_text, schema_to_text};

/// Parses the text form into a schema. Errors name the byte position and
/// what was expected there. Nesting deeper than [`MAX_DEPTH`] or more than
/// [`MAX_FIELDS`] fields are refused as the parser reaches them, before it
/// descends any further; so is a schema whose one row passes
/// [`MAX_ROW_BYTES`](crate::depth::MAX_ROW_BYTES), as the writer would.
pub fn parse_schema(text: &str) -> Result<Schema> {
    let mut p = Parser::new(text);
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
