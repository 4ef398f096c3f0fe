//! List, large list and map layouts (offsets into one child) and list views
//! (an offset and a size per value): the offsets that end one value.

use crate::buffer::offsets::push_offset;
use crate::buffer::Slot;

/// Ends a list value at child length `child_len`; `Err(child_len)`, having
/// written nothing, when 4-byte offsets cannot address it.
#[inline(always)]
pub(crate) fn end(offsets: &mut Slot, large: bool, child_len: usize) -> Result<(), usize> {
    if !large && child_len > i32::MAX as usize {
        return Err(child_len);
    }
    push_offset(offsets, if large { 8 } else { 4 }, child_len);
    Ok(())
}

/// Ends a list-view value of `size` child values from `start`; `Err(end)`,
/// having written nothing, when 4-byte offsets cannot address its end.
pub(crate) fn end_view(
    offsets: &mut Slot,
    sizes: &mut Slot,
    large: bool,
    start: usize,
    size: usize,
) -> Result<(), usize> {
    if !large && start + size > i32::MAX as usize {
        return Err(start + size);
    }
    let width = if large { 8 } else { 4 };
    push_offset(offsets, width, start);
    push_offset(sizes, width, size);
    Ok(())
}
