//! Variable-width layouts (utf8, binary and their large forms): one value's
//! bytes and offset, and UTF-8 checks.

use crate::buffer::offsets::push_offset;
use crate::buffer::Slot;

/// Appends the bytes `v` and their end offset; `Err(end)`, having written
/// nothing, when the end would pass what 4-byte offsets address (not `large`).
#[inline(always)]
pub(crate) fn push(offsets: &mut Slot, data: &mut Slot, large: bool, v: &[u8]) -> Result<(), usize> {
    let end = data.buf.len() + v.len();
    if !large && end > i32::MAX as usize {
        return Err(end);
    }
    data.buf.extend_from_slice(v);
    push_offset(offsets, if large { 8 } else { 4 }, end);
    Ok(())
}

/// Whether `v` is UTF-8: ASCII first (word at a time), the full check otherwise.
#[inline(always)]
pub(crate) fn valid_utf8(v: &[u8]) -> bool {
    v.is_ascii() || std::str::from_utf8(v).is_ok()
}
