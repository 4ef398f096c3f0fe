//! The node tree of a writer: one [`Node`] per field of the schema, nested
//! fields included, numbered in pre-order (docs/design.md §6, "Nodes").

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, IntervalUnit, Schema};

use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};

/// The physical shape of a node: which buffers it has and how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    /// Fixed-width values of `width` bytes (integers, floats, decimals,
    /// temporal types, intervals, fixed-size binary).
    Fixed {
        width: usize,
    },
    /// Variable-width bytes with 4- or 8-byte offsets.
    Var {
        large: bool,
        utf8: bool,
    },
    /// List / large list / map: offsets into one child.
    List {
        large: bool,
    },
    FixedList {
        size: usize,
    },
    Struct,
    /// Dictionary (`ree: false`: keys of `index_width` bytes) or run-end
    /// encoded (`ree: true`: run ends of `index_width` bytes). The logical
    /// values are written into a hidden value node (`Node::value_node`).
    Encoded {
        ree: bool,
        index_width: usize,
    },
    /// Sparse or dense union: type ids, offsets when dense, one child per member.
    Union {
        dense: bool,
    },
    /// Utf8View / BinaryView: 16-byte views and one data buffer.
    View {
        utf8: bool,
    },
    /// ListView / LargeListView: offsets and sizes into one child.
    ListView {
        large: bool,
    },
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
    /// `len` at the last committed row, kept only for the nodes whose
    /// committed length does not follow from their parent's (children of
    /// unions, list views and encoded nodes); see `ArrowWriter::commit`.
    pub committed_len: usize,
    /// The row path's fast checks (set by `ArrowWriter::create`): the parent's
    /// node number, or `usize::MAX` for a top-level column.
    pub up: usize,
    /// Which position check the fast path makes (`writer::RULE_*`).
    pub rule: u8,
    /// The input the fast fixed-width append takes (`Input as u8`, its native
    /// width being the node's), or `u8::MAX` for none.
    pub fast: u8,
    /// A null is written by the fast path (nullable fixed-width, variable-width or list).
    pub null_fast: bool,
    /// Decimal of width <= 16: the unscaled values allowed are `-bound < v < bound`
    /// (10^precision); 0 for other nodes.
    pub dec_bound: i128,
    /// Fast decimal128 append: the unscaled values it takes, `dec_lo..=dec_hi`
    /// (the precision's range, or all of i128 when the check is off).
    pub dec_lo: i128,
    pub dec_hi: i128,
    /// Validity bitmap (nullable nodes only).
    pub validity: Option<Slot>,
    /// Values (fixed), value bitmap (bool) or offsets (var, list, map).
    pub values: Option<Slot>,
    /// Bytes of variable-width values and views, dense union offsets, list-view sizes.
    pub data: Option<Slot>,
    /// Hidden node holding the values of a dictionary / run-end encoded node.
    pub value_node: Option<usize>,
    /// Interning state of a dictionary / run-end encoded node.
    pub encoding: Option<Box<Encoding>>,
    /// Union type ids, one per child.
    pub type_ids: Vec<i8>,
    /// Child length when the open list view value began; for a union, the
    /// sum of its children's lengths.
    pub open_start: usize,
    /// Union: each child's length when the open value began.
    pub open_lens: Vec<usize>,
    /// Not a public node: the value node of an encoded node.
    pub hidden: bool,
}

/// What an encoded node needs to find equal values.
#[derive(Debug, Default)]
pub(crate) struct Encoding {
    /// Dictionary: value key -> dictionary index.
    pub index: std::collections::HashMap<Vec<u8>, usize>,
    /// Run-end encoded: the key of the last run's value.
    pub last: Option<Vec<u8>>,
    /// Lengths and null counts of the value subtree before the value being written.
    pub snapshot: Vec<(usize, usize)>,
    /// The value subtree (the value node and its descendants).
    pub subtree: Vec<usize>,
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
        let names: Vec<&str> = Input::ALL.iter().filter(|i| self.accepts(**i)).map(|i| i.name()).collect();
        match (names.is_empty(), self.kind) {
            (true, Kind::Null) => "append_null only".into(),
            (true, _) => "begin/end (it is nested)".into(),
            _ => names.join(", "),
        }
    }

    pub fn offset_width(&self) -> usize {
        match self.kind {
            Kind::Var { large: true, .. } | Kind::List { large: true } | Kind::ListView { large: true } => 8,
            _ => 4,
        }
    }
}

/// Builds the node tree of `schema`: public nodes in pre-order, then the
/// hidden value nodes of encoded nodes. An unsupported type is an `ENOSYS`
/// error naming the type and the field.
pub(crate) fn build_nodes(schema: &Schema) -> Result<Vec<Node>> {
    let mut nodes = Vec::new();
    for field in schema.fields() {
        add_node(&mut nodes, field, field.name().clone(), None)?;
    }
    // Move hidden nodes after the public ones, keeping both orders.
    let order: Vec<usize> =
        (0..nodes.len()).filter(|&i| !nodes[i].hidden).chain((0..nodes.len()).filter(|&i| nodes[i].hidden)).collect();
    let mut new_index = vec![0; nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for &old in &order {
        let mut n = slots[old].take().expect("each node once");
        n.parent = n.parent.map(|p| new_index[p]);
        n.children.iter_mut().for_each(|c| *c = new_index[*c]);
        n.value_node = n.value_node.map(|v| new_index[v]);
        out.push(n);
    }
    for i in 0..out.len() {
        if out[i].value_node.is_some() {
            let subtree = subtree_of(&out, out[i].value_node.expect("checked"));
            out[i].encoding.as_mut().expect("encoded nodes have an encoding").subtree = subtree;
        }
    }
    Ok(out)
}

/// `node` and all its descendants, depth first.
pub(crate) fn subtree_of(nodes: &[Node], node: usize) -> Vec<usize> {
    let mut out = vec![node];
    let mut i = 0;
    while i < out.len() {
        out.extend(nodes[out[i]].children.iter().copied());
        i += 1;
    }
    out
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
        DataType::Utf8View => (Kind::View { utf8: true }, &[Bytes], None),
        DataType::BinaryView => (Kind::View { utf8: false }, &[Bytes], None),
        DataType::ListView(_) => (Kind::ListView { large: false }, &[], None),
        DataType::LargeListView(_) => (Kind::ListView { large: true }, &[], None),
        DataType::Union(fields, mode) => {
            if fields.is_empty() {
                return Err(unsupported(" (a union needs at least one member)"));
            }
            (Kind::Union { dense: *mode == arrow_schema::UnionMode::Dense }, &[], None)
        }
        DataType::Dictionary(key, _) => {
            let width = match key.as_ref() {
                DataType::Int8 | DataType::UInt8 => 1,
                DataType::Int16 | DataType::UInt16 => 2,
                DataType::Int32 | DataType::UInt32 => 4,
                DataType::Int64 | DataType::UInt64 => 8,
                _ => return Err(unsupported(" (dictionary keys must be integers)")),
            };
            (Kind::Encoded { ree: false, index_width: width }, &[], None)
        }
        DataType::RunEndEncoded(run_ends, _) => {
            let width = match run_ends.data_type() {
                DataType::Int16 => 2,
                DataType::Int32 => 4,
                DataType::Int64 => 8,
                _ => return Err(unsupported(" (run ends must be int16, int32 or int64)")),
            };
            (Kind::Encoded { ree: true, index_width: width }, &[], None)
        }
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
        up: usize::MAX,
        rule: 0,
        fast: u8::MAX,
        null_fast: false,
        dec_bound: 0,
        dec_lo: 0,
        dec_hi: 0,
        validity: (field.is_nullable()
            && !matches!(kind, Kind::Null | Kind::Union { .. } | Kind::Encoded { ree: true, .. }))
        .then(Slot::default),
        values: (!matches!(kind, Kind::Null | Kind::Struct | Kind::FixedList { .. })).then(Slot::default),
        data: matches!(
            kind,
            Kind::Var { .. } | Kind::View { .. } | Kind::ListView { .. } | Kind::Union { dense: true }
        )
        .then(Slot::default),
        value_node: None,
        encoding: matches!(kind, Kind::Encoded { .. }).then(Box::default),
        type_ids: match dt {
            DataType::Union(fields, _) => fields.iter().map(|(id, _)| id).collect(),
            _ => Vec::new(),
        },
        open_start: 0,
        open_lens: Vec::new(),
        hidden: false,
    });
    let value_type = match dt {
        DataType::Dictionary(_, value) => Some(Field::new("values", value.as_ref().clone(), true)),
        DataType::RunEndEncoded(_, values) => Some(values.as_ref().clone()),
        _ => None,
    };
    if let Some(value_field) = value_type {
        // The value node takes the appends; its children are public nodes
        // under the encoded node, its own number is hidden.
        let v = add_node(nodes, &Arc::new(value_field), path.clone(), Some(index))?;
        nodes[v].hidden = true;
        nodes[index].accepts = nodes[v].accepts;
        nodes[index].decimal_precision = nodes[v].decimal_precision;
        nodes[index].value_node = Some(v);
        nodes[index].children.push(v);
        return Ok(index);
    }
    let child_fields: Vec<FieldRef> = match dt {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => vec![f.clone()],
        DataType::Struct(fields) => fields.iter().cloned().collect(),
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| f.clone()).collect(),
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

/// Position rules of the fast paths (`Node::rule`), by the parent's kind.
/// A top-level column: its length equals the committed rows.
pub(crate) const RULE_TOP: u8 = 0;

/// A struct field: its length equals the struct's.
pub(crate) const RULE_STRUCT: u8 = 1;

/// An item of a list, large list, map or list view: always free.
pub(crate) const RULE_ANY: u8 = 2;

/// An item of a fixed-size list: fewer than `size` values in the open entry.
pub(crate) const RULE_FIXED: u8 = 3;

/// A union member: the full check.
pub(crate) const RULE_SLOW: u8 = 4;

/// Sets each node's `up`, `rule` and fast-path inputs (see `Node`).
pub(crate) fn prepare_fast_paths(nodes: &mut [Node], check_decimal_precision: bool) {
    for n in nodes.iter_mut() {
        if let (Kind::Fixed { width }, Some(p)) = (n.kind, n.decimal_precision) {
            if width <= 16 && p <= 38 {
                n.dec_bound = 10i128.pow(p as u32);
                if width == 16 {
                    n.fast = Input::Decimal as u8;
                    (n.dec_lo, n.dec_hi) = if check_decimal_precision {
                        (1 - n.dec_bound, n.dec_bound - 1)
                    } else {
                        (i128::MIN, i128::MAX)
                    };
                }
            }
        }
        if let Kind::Fixed { width } = n.kind {
            // The input whose native width is the node's, if it takes one
            // (float16 takes f32 too, converted: not on the fast path).
            let native = [
                Input::I8,
                Input::U8,
                Input::I16,
                Input::U16,
                Input::I32,
                Input::U32,
                Input::F32,
                Input::I64,
                Input::U64,
                Input::F64,
            ]
            .into_iter()
            .find(|&i| n.accepts(i) && native_width(i) == width);
            if let (Some(input), None) = (native, n.decimal_precision) {
                n.fast = input as u8;
            }
        }
        n.null_fast = n.nullable
            && n.validity.is_some()
            && matches!(n.kind, Kind::Fixed { .. } | Kind::Var { .. } | Kind::List { .. });
    }
    for i in 0..nodes.len() {
        let (up, rule) = match nodes[i].parent {
            None => (NO_OPEN, RULE_TOP),
            Some(p) => (
                p,
                match nodes[p].kind {
                    Kind::Struct => RULE_STRUCT,
                    Kind::List { .. } | Kind::ListView { .. } => RULE_ANY,
                    Kind::FixedList { .. } => RULE_FIXED,
                    _ => RULE_SLOW,
                },
            ),
        };
        nodes[i].up = up;
        nodes[i].rule = rule;
        debug_assert!(!nodes[i].hidden || rule == RULE_SLOW, "a hidden node is never written through the fast paths");
    }
}

fn native_width(input: Input) -> usize {
    match input {
        Input::I8 | Input::U8 => 1,
        Input::I16 | Input::U16 => 2,
        Input::I32 | Input::U32 | Input::F32 => 4,
        Input::I64 | Input::U64 | Input::F64 => 8,
        _ => 0,
    }
}

/// Kinds that take `begin` / `end`.
pub(crate) fn is_container(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::List { .. } | Kind::FixedList { .. } | Kind::Struct | Kind::ListView { .. } | Kind::Union { .. }
    )
}

/// `open_top` when no node is open; also the `up` of a top-level column.
pub(crate) const NO_OPEN: usize = usize::MAX;
