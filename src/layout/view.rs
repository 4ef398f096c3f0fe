//! Views (utf8_view, binary_view): reading a 16-byte view and finding where
//! the data of the first views ends.

use crate::buffer::Slot;

/// The bytes of one 16-byte view; `buffers` are the array's data buffers.
pub(crate) fn view_value<'a>(view: &'a [u8], buffers: &[&'a [u8]]) -> &'a [u8] {
    let len = u32::from_le_bytes(view[..4].try_into().expect("4 bytes")) as usize;
    if len <= 12 {
        return &view[4..4 + len];
    }
    let buffer = u32::from_le_bytes(view[8..12].try_into().expect("4 bytes")) as usize;
    let offset = u32::from_le_bytes(view[12..16].try_into().expect("4 bytes")) as usize;
    &buffers[buffer][offset..offset + len]
}

/// Where the data of the first `len` views of `views` ends.
pub(crate) fn view_data_end(views: &Slot, len: usize) -> usize {
    let b = views.buf.as_slice();
    (0..len)
        .rev()
        .map(|i| &b[i * 16..i * 16 + 16])
        .find_map(|v| {
            let n = u32::from_le_bytes(v[..4].try_into().expect("4 bytes")) as usize;
            (n > 12).then(|| u32::from_le_bytes(v[12..16].try_into().expect("4 bytes")) as usize + n)
        })
        .unwrap_or(0)
}
