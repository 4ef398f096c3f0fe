//! Sparse and dense union layouts: a type id per value and, dense only, the
//! offset of the value in its member's child.

use crate::buffer::Slot;

/// Appends one union value of member `type_id`: dense unions also record
/// `child_at`, the value's index in the member's child.
#[inline]
pub(crate) fn push(type_ids: &mut Slot, offsets: Option<&mut Slot>, type_id: i8, child_at: usize) {
    type_ids.buf.push(type_id);
    if let Some(offsets) = offsets {
        offsets.buf.push(child_at as i32);
    }
}

/// The member (child index) of `type_id` among the union's type ids.
pub(crate) fn member_of(ids: &[i8], type_id: i8) -> Option<usize> {
    ids.iter().position(|&t| t == type_id)
}
