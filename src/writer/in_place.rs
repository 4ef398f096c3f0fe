//! The records path's in-place appends (src/records): the next values and
//! validity bits of a top-level fixed-width or boolean column written by
//! the caller straight into the column's own buffers, with the column path's
//! checks (position, memory limit) before and its commit rule after: the
//! rows count once every top-level column has them.

use crate::error::Result;
use crate::layout::Layout;

use super::ArrowWriter;

/// Bits `at..at + count` of a bitmap, all zero when handed out; bit `i` is
/// bit `i % 8` of byte `i / 8` (LSB first), and `bytes` reaches bit
/// `at + count - 1`.
pub(crate) struct BitsOut<'a> {
    pub bytes: &'a mut [u8],
    pub at: usize,
}

/// Where the values of an in-place append go.
pub(crate) enum ValuesOut<'a> {
    /// Room for `count` values of `width` bytes (not initialised): the
    /// caller writes every byte.
    Fixed { ptr: *mut u8, width: usize },
    /// A boolean column's value bits.
    Bits(BitsOut<'a>),
}

impl ArrowWriter {
    /// Appends `count` values to the top-level fixed-width or boolean column
    /// `node`: `fill` gets the room for the values and, for a nullable
    /// column, its validity bits (set a bit for each valid value), and
    /// writes them. The null count follows from the validity bits. Refused
    /// (nothing written) as `write_column_bytes` refuses: not a top-level
    /// fixed-width column, a node open, over the memory limit.
    ///
    /// # Safety
    /// `fill` writes every byte of a [`ValuesOut::Fixed`] room, and for a
    /// column that is not nullable (no validity given) only values that may
    /// be valid.
    pub(crate) unsafe fn append_in_place(
        &mut self,
        node: usize,
        call: &str,
        count: usize,
        fill: impl FnOnce(ValuesOut<'_>, Option<BitsOut<'_>>),
    ) -> Result<()> {
        self.column_target(node, call)?;
        let bytes = self.column_value_bytes(node, count, call)?;
        self.check_column(call, node, bytes, count)?;
        self.column_write(node, |w| {
            let n = &mut w.nodes[node];
            let at = n.len;
            let end = at + count;
            let validity = n.validity.as_mut().map(|v| {
                v.ensure_bits(end);
                BitsOut { bytes: v.buf.as_slice_mut(), at }
            });
            match &mut n.layout {
                Layout::Bool { values } => {
                    values.ensure_bits(end);
                    fill(ValuesOut::Bits(BitsOut { bytes: values.buf.as_slice_mut(), at }), validity);
                }
                Layout::Fixed { values, width, .. } => {
                    let start = at * *width;
                    debug_assert_eq!(values.buf.len(), start, "a fixed-width column's values end at its length");
                    values.buf.reserve(bytes);
                    // SAFETY: `bytes` are reserved past `start`, the end of
                    // the values.
                    let ptr = unsafe { values.buf.as_mut_ptr().add(start) };
                    fill(ValuesOut::Fixed { ptr, width: *width }, validity);
                    // SAFETY: `fill` wrote every byte (the contract).
                    unsafe { values.buf.set_len(start + bytes) };
                }
                _ => unreachable!("column_value_bytes takes fixed-width and boolean columns only"),
            }
            let nulls = w.nulls_in(node, at, end);
            let n = &mut w.nodes[node];
            n.null_count += nulls;
            n.len = end;
            Ok(())
        })
    }
}
