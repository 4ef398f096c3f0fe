//! The parser's state and its tokens: whitespace, punctuation, names
//! (bare or quoted), numbers, and the nesting and field bounds checked as
//! it enters each field.

use crate::depth::{depth_error, MAX_DEPTH, MAX_FIELDS};
use crate::error::{QuiverError, Result};

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    /// Names of the fields being parsed, outermost first: its length is the
    /// depth of the innermost one.
    pub(super) path: Vec<String>,
    /// Fields parsed so far (nested ones, map entries, dictionary values and
    /// run ends included).
    pub(super) fields: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    pub(super) fn new(text: &'a str) -> Self {
        Parser { text, pos: 0, path: Vec::new(), fields: 0 }
    }

    /// Enters a field one level below the current one, or refuses it when
    /// that passes the nesting or field bound.
    pub(super) fn enter(&mut self, name: &str) -> Result<()> {
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

    pub(super) fn leave(&mut self) {
        self.path.pop();
    }

    pub(super) fn error(&self, expected: &str) -> QuiverError {
        let rest: String = self.text[self.pos..].chars().take(20).collect();
        let found = if rest.is_empty() { "the end".to_string() } else { format!("'{rest}'") };
        QuiverError::invalid(format!("schema text: at position {}: expected {expected}, found {found}", self.pos))
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(c) = self.text[self.pos..].chars().next() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    pub(super) fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.text[self.pos..].chars().next()
    }

    pub(super) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("'{c}'")))
        }
    }

    pub(super) fn ident(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && (bytes[self.pos].is_ascii_alphanumeric() || bytes[self.pos] == b'_') {
            self.pos += 1;
        }
        let text: &'a str = self.text;
        (self.pos > start).then(|| &text[start..self.pos])
    }

    pub(super) fn name(&mut self) -> Result<String> {
        if self.peek() == Some('"') {
            return self.quoted();
        }
        match self.ident() {
            Some(name) if !name.starts_with(|c: char| c.is_ascii_digit()) => Ok(name.to_string()),
            _ => Err(self.error("a field name")),
        }
    }

    pub(super) fn quoted(&mut self) -> Result<String> {
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

    pub(super) fn number(&mut self) -> Result<i64> {
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
}
