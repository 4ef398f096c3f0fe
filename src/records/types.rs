//! The parts of a record layout: how a column's null is marked, how its
//! value is encoded, how the writer stores it, and the error of a batched
//! call.

use std::fmt;

use arrow_schema::{DataType, Schema};

use crate::error::QuiverError;

/// How the null of a column is marked in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullMark {
    /// The column is never null in a record.
    Never,
    /// Bit `bit` of a bitmap that starts at byte `at` of the record (bit `i`
    /// is bit `i % 8` of byte `at + i / 8`, least significant first; a set
    /// bit means null). Spark's null bitset words are this bitmap.
    Bit { at: usize, bit: usize },
    /// A flag byte at byte `at`: nonzero means null.
    Byte { at: usize },
}

/// Where and how a column's value is encoded in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The column's native little-endian value at byte `at`, as wide as the
    /// column's values (boolean: one byte, nonzero = true; fixed_size_binary:
    /// its bytes inline; decimals: their little-endian two's complement).
    Fixed { at: usize },
    /// Decimal columns: a little-endian signed integer of `width` bytes (1,
    /// 2, 4, 8 or 16, at most the column's width) at byte `at`, the unscaled
    /// value, sign-extended to the column's width.
    Int { at: usize, width: usize },
    /// utf8/binary (and large) columns: a `*const u8` at byte `ptr_at` and a
    /// 64-bit length (u64, or an i64 that is not negative) at byte `len_at`.
    PtrLen { ptr_at: usize, len_at: usize },
    /// utf8/binary (and large) columns: a u32 offset from the start of the
    /// record at byte `offset_at` and a u32 length at byte `len_at`; the
    /// bytes must lie inside the record when its size is known.
    RelLen { offset_at: usize, len_at: usize },
    /// Decimal columns: big-endian two's-complement bytes (at most the
    /// column's width) found as in [`Encoding::RelLen`].
    BigEndian { offset_at: usize, len_at: usize },
}

/// How a column's values are stored in the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Bool,
    /// Fixed-width values of `width` bytes; `precision` for decimals.
    Fixed {
        width: usize,
        precision: Option<u8>,
    },
    Var {
        large: bool,
        utf8: bool,
    },
}

impl Class {
    pub(crate) fn of(data_type: &DataType) -> Option<Class> {
        Some(match data_type {
            DataType::Boolean => Class::Bool,
            DataType::Utf8 => Class::Var { large: false, utf8: true },
            DataType::LargeUtf8 => Class::Var { large: true, utf8: true },
            DataType::Binary => Class::Var { large: false, utf8: false },
            DataType::LargeBinary => Class::Var { large: true, utf8: false },
            DataType::FixedSizeBinary(n) if *n > 0 => Class::Fixed { width: *n as usize, precision: None },
            DataType::Decimal32(p, _) => Class::Fixed { width: 4, precision: Some(*p) },
            DataType::Decimal64(p, _) => Class::Fixed { width: 8, precision: Some(*p) },
            DataType::Decimal128(p, _) => Class::Fixed { width: 16, precision: Some(*p) },
            DataType::Decimal256(p, _) => Class::Fixed { width: 32, precision: Some(*p) },
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Date32
            | DataType::Date64
            | DataType::Time32(_)
            | DataType::Time64(_)
            | DataType::Timestamp(..)
            | DataType::Duration(_)
            | DataType::Interval(_) => {
                Class::Fixed { width: data_type.primitive_width().expect("a primitive type"), precision: None }
            }
            _ => return None,
        })
    }
}

/// One column of a layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnLayout {
    pub(crate) class: Class,
    pub(crate) nullable: bool,
    pub(crate) encoding: Encoding,
    pub(crate) null: NullMark,
}

/// The failure of a batched record call: the error, and the number of
/// records (the first ones of the batch) written and committed before it.
/// The bad record and those after it changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsError {
    /// Records committed by the call before the failure.
    pub written: usize,
    /// What went wrong.
    pub error: QuiverError,
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} records written)", self.error, self.written)
    }
}

impl std::error::Error for RecordsError {}

impl From<RecordsError> for QuiverError {
    fn from(e: RecordsError) -> Self {
        e.error
    }
}

impl ColumnLayout {
    /// One past the last byte of the record this column reads at a fixed offset.
    pub(crate) fn end(&self) -> usize {
        let value = match (self.encoding, self.class) {
            (Encoding::Fixed { at }, Class::Bool) => at + 1,
            (Encoding::Fixed { at }, Class::Fixed { width, .. }) => at + width,
            (Encoding::Fixed { at }, Class::Var { .. }) => at,
            (Encoding::Int { at, width }, _) => at + width,
            (Encoding::PtrLen { ptr_at, len_at }, _) => (ptr_at + 8).max(len_at + 8),
            (Encoding::RelLen { offset_at, len_at } | Encoding::BigEndian { offset_at, len_at }, _) => {
                (offset_at + 4).max(len_at + 4)
            }
        };
        let null = match self.null {
            NullMark::Never => 0,
            NullMark::Bit { at, bit } => at + bit / 8 + 1,
            NullMark::Byte { at } => at + 1,
        };
        value.max(null)
    }
}

/// Schema check: the writer's top-level columns are the layout's.
pub(crate) fn fits(layout: &Schema, writer: &Schema) -> bool {
    layout.fields().len() == writer.fields().len()
        && layout
            .fields()
            .iter()
            .zip(writer.fields())
            .all(|(a, b)| a.data_type() == b.data_type() && a.is_nullable() == b.is_nullable())
}
