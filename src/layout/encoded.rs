//! Dictionary and run-end encoded layouts: the interning state of an encoded
//! node, its keys and run ends, and the largest index their types hold. The
//! values themselves live in a hidden value node, which the writer handles.

use std::collections::HashMap;

use arrow_schema::DataType;

use crate::buffer::Slot;

/// What an encoded node needs to find equal values.
#[derive(Debug, Default)]
pub(crate) struct Encoding {
    /// Dictionary: value key -> dictionary index.
    pub index: HashMap<Vec<u8>, usize>,
    /// Run-end encoded: the key of the last run's value.
    pub last: Option<Vec<u8>>,
    /// Lengths and null counts of the value subtree before the value being written.
    pub snapshot: Vec<(usize, usize)>,
    /// The value subtree (the value node and its descendants).
    pub subtree: Vec<usize>,
}

impl Encoding {
    /// Forgets the values of the last batch (a new batch starts).
    pub fn clear(&mut self) {
        self.index.clear();
        self.last = None;
    }
}

/// Appends a key or run end `value` of `width` bytes.
#[inline]
pub(crate) fn push_index(keys: &mut Slot, width: usize, value: usize) {
    keys.buf.extend_from_slice(&(value as u64).to_le_bytes()[..width]);
}

/// Sets the last run end (of `width` bytes) to `end`.
pub(crate) fn set_last_run_end(run_ends: &mut Slot, width: usize, end: usize) {
    let at = run_ends.buf.len() - width;
    run_ends.buf.as_slice_mut()[at..].copy_from_slice(&(end as u64).to_le_bytes()[..width]);
}

/// The largest dictionary index the key type of `dt` holds.
pub(crate) fn max_key(dt: &DataType) -> usize {
    match dt {
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => i8::MAX as usize,
            DataType::UInt8 => u8::MAX as usize,
            DataType::Int16 => i16::MAX as usize,
            DataType::UInt16 => u16::MAX as usize,
            DataType::Int32 => i32::MAX as usize,
            DataType::UInt32 => u32::MAX as usize,
            _ => i64::MAX as usize,
        },
        DataType::RunEndEncoded(run_ends, _) => match run_ends.data_type() {
            DataType::Int16 => i16::MAX as usize,
            DataType::Int32 => i32::MAX as usize,
            _ => i64::MAX as usize,
        },
        _ => usize::MAX,
    }
}
