//! The node tree of a writer: one [`Node`] per field of the schema, nested
//! fields included, numbered in pre-order (docs/design.md §6, "Nodes"); the
//! inputs a node accepts; and the rules of the row path's fast position checks.
//! The tree is built by `build`, its fast paths set up by `fast`.

use arrow_schema::FieldRef;

use crate::buffer::{Counters, Slot};
pub(crate) use crate::layout::{Kind, Layout};

pub(crate) mod build;
pub(crate) mod fast;

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
    /// The buffers and parameters of the node's kind.
    pub layout: Layout,
    pub accepts: u16,
    pub nullable: bool,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Values written in the current batch (committed or not).
    pub len: usize,
    pub null_count: usize,
    /// `len` at the last committed row, kept only for the nodes whose
    /// committed length does not follow from their parent's (children of
    /// unions, list views and encoded nodes); see `ArrowWriter::commit`.
    pub committed_len: usize,
    /// The row path's fast checks (set by `fast::prepare_fast_paths`): the
    /// parent's node number, or [`NO_OPEN`] for a top-level column.
    pub up: usize,
    /// Which position check the fast path makes.
    pub rule: Rule,
    /// The input the fast fixed-width append takes (its native width being
    /// the node's), if any.
    pub fast: Option<Input>,
    /// A null is written by the fast path (nullable fixed-width, variable-width or list).
    pub null_fast: bool,
    /// The fast path's key: `Input as u8 + 1` when the node takes that input
    /// on the fast path, plus [`KEY_STRUCT`] for a struct field or
    /// [`KEY_ANY`] for a list item; 0 for any other node (a top-level
    /// column's key is the bare input). One compare answers "this input,
    /// this kind, this position rule".
    pub top_key: u8,
    /// The direct entry of an encoded node (`encoded_row`): `Input as u8 +
    /// 1` for the input its flat values are given as without conversion
    /// (`Bytes` for variable-width values, the native input of fixed-width
    /// ones); 0 for any other node.
    pub enc_key: u8,
    /// Validity bitmap (nullable nodes of the kinds that have one).
    pub validity: Option<Slot>,
    /// Whether the node's validity may be lazy within a batch (set by
    /// `fast::prepare_fast_paths`): a public fixed-width, variable-width,
    /// list or struct node with a bitmap, outside any encoded subtree (whose
    /// bits the interning reads).
    pub lazy_ok: bool,
    /// Value writes may leave the validity bitmap alone: the node has none,
    /// or no null has been written into it this batch (lazy validity). While
    /// lazy, every value `0..len` is valid and its bit is owed, not
    /// necessarily written, and the bitmap's buffer not yet taken (its
    /// `Slot::defer`); `materialize_validity` takes it and writes them, and every
    /// write of a null (and every read of the bits) comes after it. Bits
    /// past `len` are clear in either state.
    pub valid_lazy: bool,
    /// Hidden node holding the values of a dictionary / run-end encoded node.
    pub value_node: Option<usize>,
    /// Not a public node: the value node of an encoded node.
    pub hidden: bool,
}

/// Position rules of the fast paths (`Node::rule`), by the parent's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A top-level column: its length equals the committed rows.
    Top,
    /// A struct field: its length equals the struct's.
    Struct,
    /// An item of a list, large list, map or list view: always free.
    Any,
    /// An item of a fixed-size list: fewer than `size` values in the open entry.
    Fixed,
    /// A union member or the value node of an encoded node: the full check.
    Slow,
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
        match (names.is_empty(), self.kind()) {
            (true, Kind::Null) => "append_null only".into(),
            (true, _) => "begin/end (it is nested)".into(),
            _ => names.join(", "),
        }
    }

    /// Ends lazy validity (see `valid_lazy`): takes the bitmap's buffer
    /// (its start was put off while lazy) and sets the owed bits `0..len`.
    /// Called before a null is written into the node and before its bits
    /// are read; a no-op once done, and for a node without a bitmap.
    #[inline]
    pub fn materialize_validity(&mut self, counters: &mut Counters) {
        if self.valid_lazy {
            if let Some(v) = &mut self.validity {
                self.valid_lazy = false;
                v.start_deferred(counters);
                v.set_bits_range(0, self.len);
            }
        }
    }

    /// The shape of the node, copied out of its layout.
    #[inline(always)]
    pub fn kind(&self) -> Kind {
        self.layout.kind()
    }

    pub fn offset_width(&self) -> usize {
        self.layout.offset_width()
    }

    /// The decimal precision of a decimal node.
    pub fn decimal_precision(&self) -> Option<u8> {
        match &self.layout {
            Layout::Fixed { decimal: Some(spec), .. } => Some(spec.precision),
            _ => None,
        }
    }
}

/// Kinds that take `begin` / `end`.
pub(crate) fn is_container(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::List { .. } | Kind::FixedList { .. } | Kind::Struct | Kind::ListView { .. } | Kind::Union { .. }
    )
}

/// Added to a struct field's fast key (`Node::top_key`).
pub(crate) const KEY_STRUCT: u8 = 16;

/// Added to a list item's fast key (`Node::top_key`).
pub(crate) const KEY_ANY: u8 = 32;

/// `open_top` when no node is open; also the `up` of a top-level column.
pub(crate) const NO_OPEN: usize = usize::MAX;
