//! The physical layouts below the writer: one [`Layout`] per node, holding
//! the buffers and parameters of its kind (a nullable node's validity
//! bitmap stays on the node), and what each kind does to its own
//! buffers when a batch starts, is finished, is cut back or gets nulls.
//! Nothing here knows the node tree or the writer; one module per layout
//! holds its value-level writes (appends, the ends of nested values, the
//! column copies of fixed-width and boolean values) and checks.

use arrow_buffer::Buffer;

use crate::buffer::offsets::{last_offset, push_offset, read_int};
use crate::buffer::{Counters, Fill, Slot, Start};

mod avx512;
pub(crate) mod decimal;
pub(crate) mod encoded;
pub(crate) mod fixed;
pub(crate) mod list;
pub(crate) mod union;
pub(crate) mod var;
pub(crate) mod view;

pub(crate) use encoded::Encoding;

/// The shape of a node without its buffers, copied out of its [`Layout`]
/// (`Layout::kind`) to match on while the node tree is borrowed.
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
    /// encoded (`ree: true`: run ends of `index_width` bytes).
    Encoded {
        ree: bool,
        index_width: usize,
    },
    /// Sparse or dense union.
    Union {
        dense: bool,
    },
    /// Utf8View / BinaryView.
    View {
        utf8: bool,
    },
    /// ListView / LargeListView.
    ListView {
        large: bool,
    },
}

/// The buffers and parameters of one node, by kind. Offsets are 4 bytes
/// wide, or 8 when `large`.
// A plain tag byte, not a niche in some field: the hot paths match on it.
#[derive(Debug)]
#[repr(u8)]
pub(crate) enum Layout {
    Null,
    /// Boolean: a value bitmap.
    Bool {
        values: Slot,
    },
    /// Fixed-width values of `width` bytes (integers, floats, decimals,
    /// temporal types, intervals, fixed-size binary); `decimal`: the
    /// precision and fast range of a decimal32 / 64 / 128 / 256.
    Fixed {
        values: Slot,
        width: usize,
        decimal: Option<decimal::Spec>,
    },
    /// Utf8 / binary and their large forms: offsets into the value bytes.
    Var {
        offsets: Slot,
        data: Slot,
        large: bool,
        utf8: bool,
    },
    /// Utf8View / BinaryView: 16-byte views and the bytes of the long values.
    View {
        views: Slot,
        data: Slot,
        utf8: bool,
    },
    /// List / large list / map: offsets into one child.
    List {
        offsets: Slot,
        large: bool,
    },
    /// ListView / LargeListView: an offset and a size per value, into one
    /// child; `open_start` is the child's length when the open value began.
    ListView {
        offsets: Slot,
        sizes: Slot,
        large: bool,
        open_start: usize,
    },
    FixedList {
        size: usize,
    },
    Struct,
    /// Sparse or dense union: a type id per value and, dense only, an offset
    /// into the member's child. `ids` are the members' type ids, one per
    /// child; `open_lens` each child's length when the open value began.
    Union {
        type_ids: Slot,
        offsets: Option<Slot>,
        ids: Vec<i8>,
        open_lens: Vec<usize>,
    },
    /// Dictionary: a key of `width` bytes per value, into the hidden value
    /// node. `encoding` (here and in `RunEnd`) is `None` only while the
    /// writer has taken it out to work on the value subtree.
    Dictionary {
        keys: Slot,
        width: usize,
        encoding: Option<Box<Encoding>>,
    },
    /// Run-end encoded: a run end of `width` bytes per run (one per value of
    /// the hidden value node).
    RunEnd {
        run_ends: Slot,
        width: usize,
        encoding: Option<Box<Encoding>>,
    },
}

impl Layout {
    pub fn kind(&self) -> Kind {
        match *self {
            Layout::Null => Kind::Null,
            Layout::Bool { .. } => Kind::Bool,
            Layout::Fixed { width, .. } => Kind::Fixed { width },
            Layout::Var { large, utf8, .. } => Kind::Var { large, utf8 },
            Layout::View { utf8, .. } => Kind::View { utf8 },
            Layout::List { large, .. } => Kind::List { large },
            Layout::ListView { large, .. } => Kind::ListView { large },
            Layout::FixedList { size } => Kind::FixedList { size },
            Layout::Struct => Kind::Struct,
            Layout::Union { ref offsets, .. } => Kind::Union { dense: offsets.is_some() },
            Layout::Dictionary { width, .. } => Kind::Encoded { ree: false, index_width: width },
            Layout::RunEnd { width, .. } => Kind::Encoded { ree: true, index_width: width },
        }
    }

    /// Bytes per offset of a var-width, list or list-view layout (4 for others).
    pub fn offset_width(&self) -> usize {
        match self {
            Layout::Var { large: true, .. }
            | Layout::List { large: true, .. }
            | Layout::ListView { large: true, .. } => 8,
            _ => 4,
        }
    }

    /// Bytes one value reserves in these buffers when a top-level column
    /// starts a batch (a bit of a bitmap counted as a byte).
    pub fn reserved_value_bytes(&self) -> usize {
        match self {
            Layout::Null | Layout::Struct | Layout::FixedList { .. } | Layout::RunEnd { .. } => 0,
            Layout::Bool { .. } => 1,
            Layout::Fixed { width, .. } | Layout::Dictionary { width, .. } => *width,
            Layout::ListView { .. } => 2 * self.offset_width(),
            Layout::Union { offsets, .. } => 1 + 4 * usize::from(offsets.is_some()),
            Layout::View { .. } => 16,
            Layout::Var { .. } | Layout::List { .. } => self.offset_width(),
        }
    }

    /// The buffers of this layout (the node's validity aside).
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        let (a, b) = match self {
            Layout::Null | Layout::FixedList { .. } | Layout::Struct => (None, None),
            Layout::Bool { values } | Layout::Fixed { values, .. } => (Some(values), None),
            Layout::Var { offsets, data, .. } => (Some(offsets), Some(data)),
            Layout::View { views, data, .. } => (Some(views), Some(data)),
            Layout::List { offsets, .. } => (Some(offsets), None),
            Layout::ListView { offsets, sizes, .. } => (Some(offsets), Some(sizes)),
            Layout::Union { type_ids, offsets, .. } => (Some(type_ids), offsets.as_ref()),
            Layout::Dictionary { keys, .. } => (Some(keys), None),
            Layout::RunEnd { run_ends, .. } => (Some(run_ends), None),
        };
        a.into_iter().chain(b)
    }

    /// The buffers of this layout, mutably (see [`slots`](Self::slots)).
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        let (a, b) = match self {
            Layout::Null | Layout::FixedList { .. } | Layout::Struct => (None, None),
            Layout::Bool { values } | Layout::Fixed { values, .. } => (Some(values), None),
            Layout::Var { offsets, data, .. } => (Some(offsets), Some(data)),
            Layout::View { views, data, .. } => (Some(views), Some(data)),
            Layout::List { offsets, .. } => (Some(offsets), None),
            Layout::ListView { offsets, sizes, .. } => (Some(offsets), Some(sizes)),
            Layout::Union { type_ids, offsets, .. } => (Some(type_ids), offsets.as_mut()),
            Layout::Dictionary { keys, .. } => (Some(keys), None),
            Layout::RunEnd { run_ends, .. } => (Some(run_ends), None),
        };
        a.into_iter().chain(b)
    }

    /// Takes the buffers of a new batch (docs/design.md §2 rules 3, 5, 7):
    /// `rows` of capacity (a top-level node's row capacity, else 0).
    pub fn start(&mut self, rows: usize, how: Start, counters: &mut Counters) {
        let width = self.offset_width();
        match self {
            Layout::Null | Layout::FixedList { .. } | Layout::Struct => {}
            Layout::Bool { values } => values.start(rows.div_ceil(8), Fill::ZeroedBits, how, counters),
            Layout::Fixed { values, width, .. } => values.start(rows * *width, Fill::Push, how, counters),
            Layout::Var { offsets, data, .. } => {
                offsets.start((rows + 1) * width, Fill::ZeroedPush, how, counters);
                push_offset(offsets, width, 0);
                data.start(0, Fill::Push, how, counters);
            }
            Layout::View { views, data, .. } => {
                views.start(rows * 16, Fill::Push, how, counters);
                data.start(0, Fill::Push, how, counters);
            }
            Layout::List { offsets, .. } => {
                offsets.start((rows + 1) * width, Fill::ZeroedPush, how, counters);
                push_offset(offsets, width, 0);
            }
            // List-view offsets and sizes are offsets: zeroed.
            Layout::ListView { offsets, sizes, .. } => {
                offsets.start(rows * width, Fill::ZeroedPush, how, counters);
                sizes.start(rows * width, Fill::ZeroedPush, how, counters);
            }
            Layout::Union { type_ids, offsets, .. } => {
                type_ids.start(rows, Fill::Push, how, counters);
                if let Some(offsets) = offsets {
                    offsets.start(rows * 4, Fill::ZeroedPush, how, counters);
                }
            }
            Layout::Dictionary { keys, width, encoding } => {
                keys.start(rows * *width, Fill::Push, how, counters);
                encoding.iter_mut().for_each(|e| e.clear());
            }
            // Run ends are offsets: zeroed.
            Layout::RunEnd { run_ends, encoding, .. } => {
                run_ends.start(0, Fill::ZeroedPush, how, counters);
                encoding.iter_mut().for_each(|e| e.clear());
            }
        }
    }

    /// Freezes the buffers of a node of `len` values (`runs`: the value
    /// node's length, for run-end encoding) into the buffers of its array
    /// data, in order (docs/design.md §2 rule 1).
    pub fn finish(&mut self, len: usize, runs: usize, recycle: bool, retain: usize, c: &mut Counters) -> Vec<Buffer> {
        let w = self.offset_width();
        match self {
            Layout::Null | Layout::FixedList { .. } | Layout::Struct => Vec::new(),
            Layout::Bool { values } => vec![values.finish(len.div_ceil(8), recycle, retain, c)],
            Layout::Fixed { values, width, .. } => {
                vec![values.finish(len * *width, recycle, retain, c)]
            }
            Layout::Var { offsets, data, .. } => {
                let end = last_offset(offsets, w);
                vec![offsets.finish((len + 1) * w, recycle, retain, c), data.finish(end, recycle, retain, c)]
            }
            Layout::View { views, data, .. } => {
                let end = data.buf.len();
                vec![views.finish(len * 16, recycle, retain, c), data.finish(end, recycle, retain, c)]
            }
            Layout::List { offsets, .. } => vec![offsets.finish((len + 1) * w, recycle, retain, c)],
            Layout::ListView { offsets, sizes, .. } => {
                vec![offsets.finish(len * w, recycle, retain, c), sizes.finish(len * w, recycle, retain, c)]
            }
            Layout::Union { type_ids, offsets, .. } => {
                let mut out = vec![type_ids.finish(len, recycle, retain, c)];
                out.extend(offsets.as_mut().map(|o| o.finish(len * 4, recycle, retain, c)));
                out
            }
            Layout::Dictionary { keys, width, .. } => vec![keys.finish(len * *width, recycle, retain, c)],
            Layout::RunEnd { run_ends, width, .. } => vec![run_ends.finish(runs * *width, recycle, retain, c)],
        }
    }

    /// Cuts the buffers back to `len` values of the `old_len` written: they
    /// end where `len` values end, even when `len == old_len` (a refused copy
    /// may have written offsets or values past it). Run ends are repaired
    /// by the writer, which knows the value node.
    pub fn truncate(&mut self, old_len: usize, len: usize) {
        let w = self.offset_width();
        match self {
            Layout::Null | Layout::FixedList { .. } | Layout::Struct | Layout::RunEnd { .. } => {}
            Layout::Bool { values } => values.clear_bits(len, old_len),
            Layout::Fixed { values, width, .. } => values.buf.truncate(len * *width),
            Layout::Var { offsets, data, .. } => {
                offsets.buf.truncate((len + 1) * w);
                data.buf.truncate(last_offset(offsets, w));
            }
            Layout::List { offsets, .. } => offsets.buf.truncate((len + 1) * w),
            Layout::View { views, data, .. } => {
                views.buf.truncate(len * 16);
                data.buf.truncate(view::data_end(views, len));
            }
            Layout::ListView { offsets, sizes, .. } => {
                offsets.buf.truncate(len * w);
                sizes.buf.truncate(len * w);
            }
            Layout::Union { type_ids, offsets, .. } => {
                type_ids.buf.truncate(len);
                if let Some(offsets) = offsets {
                    offsets.buf.truncate(len * 4);
                }
            }
            Layout::Dictionary { keys, width, .. } => keys.buf.truncate(len * *width),
        }
    }

    /// Writes `count` zero values after the `len` there are, for nulls, in a
    /// leaf or list layout (docs/design.md §2 rule 6): zero bytes, clear
    /// bits, a repeated offset, an empty list view. False, having written
    /// nothing, for the layouts whose nulls reach other nodes (fixed-size
    /// lists, structs, unions, encoded).
    pub fn fill_null(&mut self, len: usize, count: usize) -> bool {
        let w = self.offset_width();
        match self {
            Layout::Null => {}
            Layout::Bool { values } => values.ensure_bits(len + count),
            Layout::Fixed { values, width, .. } => values.buf.extend_zeros(count * *width),
            Layout::Var { offsets, .. } | Layout::List { offsets, .. } => {
                let last = last_offset(offsets, w);
                for _ in 0..count {
                    push_offset(offsets, w, last);
                }
            }
            Layout::View { views, .. } => views.buf.extend_zeros(count * 16),
            Layout::ListView { offsets, sizes, .. } => {
                offsets.buf.extend_zeros(count * w);
                sizes.buf.extend_zeros(count * w);
            }
            Layout::FixedList { .. }
            | Layout::Struct
            | Layout::Union { .. }
            | Layout::Dictionary { .. }
            | Layout::RunEnd { .. } => return false,
        }
        true
    }

    /// Clears the value bits from `len` on (a boolean layout; rolling back a
    /// refused write whose bits may lie past the length).
    pub fn clear_value_bits_from(&mut self, len: usize) {
        if let Layout::Bool { values } = self {
            values.clear_bits_from(len);
        }
    }

    /// Where an encoded layout keeps its interning state.
    ///
    /// # Panics
    /// On a layout that is not encoded.
    pub fn encoding_slot(&mut self) -> &mut Option<Box<Encoding>> {
        match self {
            Layout::Dictionary { encoding, .. } | Layout::RunEnd { encoding, .. } => encoding,
            _ => panic!("not an encoded layout"),
        }
    }
}

/// Whether values of `layout` are flat (compared as their stored bytes).
#[inline(always)]
pub(crate) fn is_flat(layout: &Layout) -> bool {
    matches!(layout, Layout::Var { .. } | Layout::Fixed { .. })
}

/// Value `idx` of a flat value node (`validity`, `layout`) as its stored
/// bytes; `None` for a null.
#[inline(always)]
pub(crate) fn flat_value<'a>(validity: Option<&Slot>, layout: &'a Layout, idx: usize) -> Option<&'a [u8]> {
    if let Some(v) = validity {
        if !v.get_bit(idx) {
            return None;
        }
    }
    match layout {
        Layout::Var { offsets, data, large, .. } => {
            let o = offsets.buf.as_slice();
            let (s, e) = if *large {
                (read_int(o, 8, idx) as usize, read_int(o, 8, idx + 1) as usize)
            } else {
                let at = idx * 4;
                let s = u32::from_le_bytes(o[at..at + 4].try_into().expect("4 bytes"));
                let e = u32::from_le_bytes(o[at + 4..at + 8].try_into().expect("4 bytes"));
                (s as usize, e as usize)
            };
            Some(&data.buf.as_slice()[s..e])
        }
        Layout::Fixed { values, width, .. } => Some(&values.buf.as_slice()[idx * width..(idx + 1) * width]),
        _ => unreachable!("a flat layout"),
    }
}
