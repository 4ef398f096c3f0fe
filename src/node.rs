//! The node tree of a writer: one [`Node`] per field of the schema, nested
//! fields included, numbered in pre-order (DESIGN.md, C-API.md "Nodes").

use arrow_schema::{DataType, FieldRef, IntervalUnit, Schema};

use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};

/// The physical shape of a node: which buffers it has and how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    /// Fixed-width values of `width` bytes (integers, floats, decimals,
    /// temporal types, intervals, fixed-size binary).
    Fixed { width: usize },
    /// Variable-width bytes with 4- or 8-byte offsets.
    Var { large: bool, utf8: bool },
    /// List / large list / map: offsets into one child.
    List { large: bool },
    FixedList { size: usize },
    Struct,
}

/// A typed value a row-path append can carry; a node accepts a set of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Input {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    Bytes,
    Decimal,
}

impl Input {
    pub fn name(self) -> &'static str {
        match self {
            Input::Bool => "append_bool",
            Input::I8 => "append_i8",
            Input::I16 => "append_i16",
            Input::I32 => "append_i32",
            Input::I64 => "append_i64",
            Input::U8 => "append_u8",
            Input::U16 => "append_u16",
            Input::U32 => "append_u32",
            Input::U64 => "append_u64",
            Input::F32 => "append_f32",
            Input::F64 => "append_f64",
            Input::Bytes => "append_bytes",
            Input::Decimal => "append_decimal",
        }
    }
    const ALL: [Input; 13] = [
        Input::Bool,
        Input::I8,
        Input::I16,
        Input::I32,
        Input::I64,
        Input::U8,
        Input::U16,
        Input::U32,
        Input::U64,
        Input::F32,
        Input::F64,
        Input::Bytes,
        Input::Decimal,
    ];
}

pub(crate) fn mask(inputs: &[Input]) -> u16 {
    inputs.iter().fold(0, |m, i| m | 1 << *i as u8)
}

#[derive(Debug)]
pub(crate) struct Node {
    pub field: FieldRef,
    /// Dotted path of the field, for messages (`pt.x`, `tags.item`).
    pub path: String,
    pub kind: Kind,
    pub accepts: u16,
    pub nullable: bool,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Decimal precision, checked by row-path appends.
    pub decimal_precision: Option<u8>,
    /// Values written in the current batch (committed or not).
    pub len: usize,
    pub null_count: usize,
    /// `len` and `null_count` at the last committed row.
    pub committed_len: usize,
    pub committed_nulls: usize,
    /// Validity bitmap (nullable nodes only).
    pub validity: Option<Slot>,
    /// Values (fixed), value bitmap (bool) or offsets (var, list, map).
    pub values: Option<Slot>,
    /// Bytes of variable-width values.
    pub data: Option<Slot>,
}

impl Node {
    pub fn describe(&self, node: usize) -> String {
        format!("node {node} '{}' ({})", self.path, self.field.data_type())
    }

    pub fn accepts(&self, input: Input) -> bool {
        self.accepts & (1 << input as u8) != 0
    }

    /// The appends this node takes, for error messages.
    pub fn accepted_names(&self) -> String {
        let names: Vec<&str> =
            Input::ALL.iter().filter(|i| self.accepts(**i)).map(|i| i.name()).collect();
        match (names.is_empty(), self.kind) {
            (true, Kind::Null) => "append_null only".into(),
            (true, _) => "begin/end (it is nested)".into(),
            _ => names.join(", "),
        }
    }

    pub fn offset_width(&self) -> usize {
        match self.kind {
            Kind::Var { large: true, .. } | Kind::List { large: true } => 8,
            _ => 4,
        }
    }
}

/// Builds the node tree of `schema`. An unsupported type is an `ENOSYS` error
/// naming the type and the field.
pub(crate) fn build_nodes(schema: &Schema) -> Result<Vec<Node>> {
    let mut nodes = Vec::new();
    for field in schema.fields() {
        add_node(&mut nodes, field, field.name().clone(), None)?;
    }
    Ok(nodes)
}

fn add_node(nodes: &mut Vec<Node>, field: &FieldRef, path: String, parent: Option<usize>) -> Result<usize> {
    use Input::*;
    let unsupported = |what: &str| {
        QuiverError::new(
            ErrorCode::Unsupported,
            format!("field '{path}': type {} is not supported{what}", field.data_type()),
        )
    };
    let dt = field.data_type();
    let (kind, accepts, precision): (Kind, &[Input], Option<u8>) = match dt {
        DataType::Null => (Kind::Null, &[], None),
        DataType::Boolean => (Kind::Bool, &[Bool], None),
        DataType::Int8 => (Kind::Fixed { width: 1 }, &[I8], None),
        DataType::Int16 => (Kind::Fixed { width: 2 }, &[I16], None),
        DataType::Int32 | DataType::Date32 | DataType::Time32(_) | DataType::Interval(IntervalUnit::YearMonth) => {
            (Kind::Fixed { width: 4 }, &[I32], None)
        }
        DataType::Int64 | DataType::Date64 | DataType::Time64(_) | DataType::Timestamp(..) | DataType::Duration(_) => {
            (Kind::Fixed { width: 8 }, &[I64], None)
        }
        DataType::UInt8 => (Kind::Fixed { width: 1 }, &[U8], None),
        DataType::UInt16 => (Kind::Fixed { width: 2 }, &[U16], None),
        DataType::UInt32 => (Kind::Fixed { width: 4 }, &[U32], None),
        DataType::UInt64 => (Kind::Fixed { width: 8 }, &[U64], None),
        DataType::Float16 => (Kind::Fixed { width: 2 }, &[F32, U16], None),
        DataType::Float32 => (Kind::Fixed { width: 4 }, &[F32], None),
        DataType::Float64 => (Kind::Fixed { width: 8 }, &[F64], None),
        DataType::Decimal32(p, _) => (Kind::Fixed { width: 4 }, &[Decimal, I64], Some(*p)),
        DataType::Decimal64(p, _) => (Kind::Fixed { width: 8 }, &[Decimal, I64], Some(*p)),
        DataType::Decimal128(p, _) => (Kind::Fixed { width: 16 }, &[Decimal, I64], Some(*p)),
        DataType::Decimal256(p, _) => (Kind::Fixed { width: 32 }, &[Decimal, I64], Some(*p)),
        DataType::Interval(IntervalUnit::DayTime) => (Kind::Fixed { width: 8 }, &[Bytes], None),
        DataType::Interval(IntervalUnit::MonthDayNano) => (Kind::Fixed { width: 16 }, &[Bytes], None),
        DataType::FixedSizeBinary(n) => {
            if *n < 0 {
                return Err(unsupported(" (negative width)"));
            }
            (Kind::Fixed { width: *n as usize }, &[Bytes], None)
        }
        DataType::Utf8 => (Kind::Var { large: false, utf8: true }, &[Bytes], None),
        DataType::LargeUtf8 => (Kind::Var { large: true, utf8: true }, &[Bytes], None),
        DataType::Binary => (Kind::Var { large: false, utf8: false }, &[Bytes], None),
        DataType::LargeBinary => (Kind::Var { large: true, utf8: false }, &[Bytes], None),
        DataType::List(_) | DataType::Map(..) => (Kind::List { large: false }, &[], None),
        DataType::LargeList(_) => (Kind::List { large: true }, &[], None),
        DataType::FixedSizeList(_, n) => {
            if *n < 0 {
                return Err(unsupported(" (negative size)"));
            }
            (Kind::FixedList { size: *n as usize }, &[], None)
        }
        DataType::Struct(_) => (Kind::Struct, &[], None),
        _ => return Err(unsupported(" by the writer yet")),
    };
    let index = nodes.len();
    nodes.push(Node {
        field: field.clone(),
        path: path.clone(),
        kind,
        accepts: mask(accepts),
        nullable: field.is_nullable(),
        parent,
        children: Vec::new(),
        decimal_precision: precision,
        len: 0,
        null_count: 0,
        committed_len: 0,
        committed_nulls: 0,
        validity: (field.is_nullable() && kind != Kind::Null).then(Slot::default),
        values: (!matches!(kind, Kind::Null | Kind::Struct | Kind::FixedList { .. })).then(Slot::default),
        data: matches!(kind, Kind::Var { .. }).then(Slot::default),
    });
    let child_fields: Vec<FieldRef> = match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![f.clone()]
        }
        DataType::Struct(fields) => fields.iter().cloned().collect(),
        _ => Vec::new(),
    };
    if let DataType::Map(entries, _) = dt {
        match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {}
            other => {
                return Err(QuiverError::invalid(format!(
                    "field '{path}': map entries must be a struct of key and value, found {other}"
                )))
            }
        }
    }
    for child in &child_fields {
        let child_index = add_node(nodes, child, format!("{path}.{}", child.name()), Some(index))?;
        nodes[index].children.push(child_index);
    }
    Ok(index)
}
