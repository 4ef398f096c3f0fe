//! Views (utf8_view, binary_view): appending a value (inline up to 12 bytes,
//! else in the data buffer), reading a 16-byte view, and finding where the
//! data of the first views ends.

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
pub(crate) fn data_end(views: &Slot, len: usize) -> usize {
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

/// Why a view value was refused.
pub(crate) enum TooLong {
    /// The value itself is over 2^32-1 bytes.
    Value,
    /// The batch's view data would pass 2^32-1 bytes.
    Data,
}

/// Appends one view value: inline up to 12 bytes, else in `data`; refused,
/// having written nothing, when a 4-byte length or offset cannot hold it.
pub(crate) fn push(views: &mut Slot, data: &mut Slot, v: &[u8]) -> Result<(), TooLong> {
    let mut view = [0u8; 16];
    if v.len() > u32::MAX as usize {
        return Err(TooLong::Value);
    }
    view[..4].copy_from_slice(&(v.len() as u32).to_le_bytes());
    if v.len() <= 12 {
        view[4..4 + v.len()].copy_from_slice(v);
    } else {
        let at = data.buf.len();
        if at + v.len() > u32::MAX as usize {
            return Err(TooLong::Data);
        }
        view[4..8].copy_from_slice(&v[..4]);
        view[12..16].copy_from_slice(&(at as u32).to_le_bytes());
        data.buf.extend_from_slice(v);
    }
    views.buf.extend_from_slice(&view);
    Ok(())
}
