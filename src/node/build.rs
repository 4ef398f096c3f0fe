//! Building the node tree of a schema: a [`Node`] and its [`Layout`] per
//! field, public nodes in pre-order, then the hidden value nodes of encoded
//! nodes.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, IntervalUnit, Schema};

use crate::buffer::Slot;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::layout::{decimal, Kind, Layout};

use super::{mask, Input, Node, Rule, NO_OPEN};

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
            let max = crate::layout::encoded::max_key(out[i].field.data_type());
            if let Some(encoding) = out[i].layout.encoding_slot() {
                encoding.subtree = subtree;
                encoding.max = max;
            }
        }
    }
    Ok(out)
}

/// `node` and all its descendants, breadth first (parents before children).
pub(crate) fn subtree_of(nodes: &[Node], node: usize) -> Vec<usize> {
    let mut out = Vec::new();
    subtree_into(nodes, node, &mut out);
    out
}

/// [`subtree_of`] into `out` (cleared first), reusing its capacity.
pub(crate) fn subtree_into(nodes: &[Node], node: usize, out: &mut Vec<usize>) {
    out.clear();
    out.push(node);
    let mut i = 0;
    while i < out.len() {
        out.extend(nodes[out[i]].children.iter().copied());
        i += 1;
    }
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
    let layout = match (kind, precision) {
        (Kind::Null, _) => Layout::Null,
        (Kind::Bool, _) => Layout::Bool { values: Slot::default() },
        (Kind::Fixed { width }, Some(precision)) => {
            let decimal = Some(decimal::Spec { precision, lo: 0, hi: 0 });
            Layout::Fixed { values: Slot::default(), width, decimal }
        }
        (Kind::Fixed { width }, None) => Layout::Fixed { values: Slot::default(), width, decimal: None },
        (Kind::Var { large, utf8 }, _) => Layout::Var { offsets: Slot::default(), data: Slot::default(), large, utf8 },
        (Kind::View { utf8 }, _) => Layout::View { views: Slot::default(), data: Slot::default(), utf8 },
        (Kind::List { large }, _) => Layout::List { offsets: Slot::default(), large },
        (Kind::ListView { large }, _) => {
            Layout::ListView { offsets: Slot::default(), sizes: Slot::default(), large, open_start: 0 }
        }
        (Kind::FixedList { size }, _) => Layout::FixedList { size },
        (Kind::Struct, _) => Layout::Struct,
        (Kind::Union { dense }, _) => Layout::Union {
            type_ids: Slot::default(),
            offsets: dense.then(Slot::default),
            ids: match dt {
                DataType::Union(fields, _) => fields.iter().map(|(id, _)| id).collect(),
                _ => Vec::new(),
            },
            open_lens: Vec::new(),
        },
        (Kind::Encoded { ree: false, index_width }, _) => {
            Layout::Dictionary { keys: Slot::default(), width: index_width, encoding: Some(Box::default()) }
        }
        (Kind::Encoded { ree: true, index_width }, _) => {
            Layout::RunEnd { run_ends: Slot::default(), width: index_width, encoding: Some(Box::default()) }
        }
    };
    nodes.push(Node {
        field: field.clone(),
        path: path.clone(),
        layout,
        accepts: mask(accepts),
        nullable: field.is_nullable(),
        parent,
        children: Vec::new(),
        len: 0,
        null_count: 0,
        committed_len: 0,
        up: NO_OPEN,
        rule: Rule::Top,
        fast: None,
        null_fast: false,
        top_key: 0,
        enc_key: 0,
        validity: (field.is_nullable()
            && !matches!(kind, Kind::Null | Kind::Union { .. } | Kind::Encoded { ree: true, .. }))
        .then(Slot::default),
        lazy_ok: false,
        valid_lazy: true,
        value_node: None,
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
