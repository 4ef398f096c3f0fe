//! Setting up the row path's fast checks on a built node tree: each node's
//! `up` and position [`Rule`], the input its fast fixed-width append takes,
//! the decimal128 fast range, whether its nulls take the fast path, its
//! top-level key and whether its validity may be lazy.

use crate::layout::{decimal, Kind, Layout};

use super::{Input, Node, Rule, KEY_ANY, KEY_STRUCT, NO_OPEN};

/// Sets each node's `up`, `rule` and fast-path inputs (see `Node`).
pub(crate) fn prepare_fast_paths(nodes: &mut [Node], check_decimal_precision: bool) {
    for n in nodes.iter_mut() {
        if let Layout::Fixed { width: 16, decimal: Some(spec), .. } = &mut n.layout {
            if spec.precision <= 38 {
                n.fast = Some(Input::Decimal);
                (spec.lo, spec.hi) = decimal::fast_range(spec.precision, check_decimal_precision);
            }
        }
        if let Layout::Fixed { width, decimal: None, .. } = n.layout {
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
            if let Some(input) = native {
                n.fast = Some(input);
            }
        }
        n.null_fast = n.nullable
            && n.validity.is_some()
            && matches!(n.kind(), Kind::Fixed { .. } | Kind::Var { .. } | Kind::List { .. });
    }
    for i in 0..nodes.len() {
        let (up, rule) = match nodes[i].parent {
            None => (NO_OPEN, Rule::Top),
            Some(p) => (
                p,
                match nodes[p].kind() {
                    Kind::Struct => Rule::Struct,
                    Kind::List { .. } | Kind::ListView { .. } => Rule::Any,
                    Kind::FixedList { .. } => Rule::Fixed,
                    _ => Rule::Slow,
                },
            ),
        };
        nodes[i].up = up;
        nodes[i].rule = rule;
        nodes[i].top_key = match (rule, nodes[i].fast) {
            (Rule::Top, Some(input)) => input as u8 + 1,
            (Rule::Struct, Some(input)) => input as u8 + 1 + KEY_STRUCT,
            (Rule::Any, Some(input)) => input as u8 + 1 + KEY_ANY,
            _ => 0,
        };
        nodes[i].enc_key = encoded_key(nodes, i);
        nodes[i].lazy_ok = lazy_validity_ok(nodes, i);
        debug_assert!(!nodes[i].hidden || rule == Rule::Slow, "a hidden node is never written through the fast paths");
    }
}

/// Whether node `i` may keep its validity lazy (see `Node::valid_lazy`): a
/// public fixed-width, variable-width, list or struct node with a bitmap,
/// with no encoded node or hidden node above it (the interning of an
/// encoded subtree reads the validity bits of its nodes).
fn lazy_validity_ok(nodes: &[Node], i: usize) -> bool {
    let n = &nodes[i];
    if n.validity.is_none()
        || !matches!(n.kind(), Kind::Fixed { .. } | Kind::Var { .. } | Kind::List { .. } | Kind::Struct)
    {
        return false;
    }
    let mut at = Some(i);
    while let Some(a) = at {
        if nodes[a].hidden || matches!(nodes[a].kind(), Kind::Encoded { .. }) {
            return false;
        }
        at = nodes[a].parent;
    }
    true
}

/// `Node::enc_key` of node `i`: for a dictionary or run-end encoded node
/// of flat values, the input its value node takes as stored.
fn encoded_key(nodes: &[Node], i: usize) -> u8 {
    let n = &nodes[i];
    let (Some(v), false) = (n.value_node, n.hidden) else { return 0 };
    if !matches!(n.layout, Layout::Dictionary { .. } | Layout::RunEnd { .. }) {
        return 0;
    }
    let input = match nodes[v].layout {
        Layout::Var { .. } => Some(Input::Bytes),
        Layout::Fixed { decimal: None, .. } => nodes[v].fast,
        _ => None,
    };
    input.map_or(0, |i| i as u8 + 1)
}

pub(crate) fn native_width(input: Input) -> usize {
    match input {
        Input::I8 | Input::U8 => 1,
        Input::I16 | Input::U16 => 2,
        Input::I32 | Input::U32 | Input::F32 => 4,
        Input::I64 | Input::U64 | Input::F64 => 8,
        _ => 0,
    }
}
