//! The row path's typed appends of numbers, booleans and decimals, each with
//! an inlined fast path for the common case and a full path that makes every
//! check and gives the message (byte strings and nulls: `row_bytes`).
//!
//! The fast path is taken by a public node at its expected position
//! (`at_slot`, the checks of `target`), of a kind written without
//! conversion. Anything else, errors included, goes through the full path
//! (`target`, then the writes below), which makes the same checks again and
//! gives the message.

use arrow_buffer::{i256, ArrowNativeType};

use crate::buffer::bits::set_valid;
use crate::error::{ErrorCode, QuiverError, Result};
use crate::layout::{decimal, Layout};
use crate::node::{Input, Kind, NO_OPEN};

use super::ArrowWriter;

/// The typed appends of Rust numbers: the fast path (`try_native`) when the
/// node takes the input natively at its position, else the full path with
/// the value's little-endian bytes.
macro_rules! native_appends {
    ($($(#[$doc:meta])* $name:ident($t:ty) => $input:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(&mut self, node: usize, v: $t) -> Result<()> {
            if self.try_native(node, Input::$input, v) {
                return Ok(());
            }
            self.append_native_slow(node, Input::$input, v)
        }
    )*};
}

impl ArrowWriter {
    native_appends! {
        append_i8(i8) => I8;
        append_i16(i16) => I16;
        append_i32(i32) => I32;
        append_i64(i64) => I64;
        append_u8(u8) => U8;
        append_u16(u16) => U16;
        append_u32(u32) => U32;
        append_u64(u64) => U64;
        append_f32(f32) => F32;
        append_f64(f64) => F64;
        /// A float16 value (also takes `append_f32`, rounded, and `append_u16`, raw bits).
        append_f16(half::f16) => U16;
    }

    pub fn append_bool(&mut self, node: usize, v: bool) -> Result<()> {
        self.append_le(node, Input::Bool, &[v as u8])
    }

    /// A decimal's unscaled value as little-endian two's complement bytes
    /// (1 to 32 bytes, sign-extended). Over the precision: `ERANGE`.
    #[inline(always)]
    pub fn append_decimal_bytes(&mut self, node: usize, le_bytes: &[u8]) -> Result<()> {
        if let Ok(b) = <[u8; 16]>::try_from(le_bytes) {
            return self.append_decimal(node, i128::from_le_bytes(b));
        }
        self.append_le(node, Input::Decimal, le_bytes)
    }

    /// A decimal's unscaled value. Over the precision: `ERANGE`.
    #[inline(always)]
    pub fn append_decimal(&mut self, node: usize, unscaled: i128) -> Result<()> {
        if self.try_decimal(node, unscaled) {
            return Ok(());
        }
        self.append_le(node, Input::Decimal, &unscaled.to_le_bytes())
    }

    /// A decimal256's unscaled value. Over the precision: `ERANGE`.
    pub fn append_decimal256(&mut self, node: usize, unscaled: i256) -> Result<()> {
        self.append_le(node, Input::Decimal, &unscaled.to_le_bytes())
    }

    /// The fast path of the typed appends: writes `v` and returns true when
    /// `node` takes `input` natively at its position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_native<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> bool {
        if self.top_fast(node, input) {
            self.push_native_top(node, v);
            return true;
        }
        if self.fast_node(node, input).is_none() {
            return false;
        }
        self.push_native(node, v);
        true
    }

    /// `try_native` for a top-level column, a struct field or a list item
    /// whose buffers have room for the value: what the C appends inline. It
    /// never grows a buffer (that is left to `try_native`), so it calls
    /// nothing and the C function needs almost no stack frame.
    #[inline(always)]
    pub(crate) fn try_native_in_place<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> bool {
        // Two copies of the write, each on its own straight path.
        if self.top_fast(node, input) {
            return self.push_in_place(node, v, true);
        }
        self.keyed_child_slot(node, input) && self.push_in_place(node, v, false)
    }

    /// The write of `try_native_in_place` (`top`: a top-level column).
    #[inline(always)]
    fn push_in_place<T: ArrowNativeType>(&mut self, node: usize, v: T, top: bool) -> bool {
        let n = &mut self.nodes[node];
        let eager = !n.valid_lazy;
        if eager && n.validity.as_ref().is_some_and(|valid| n.len >> 3 >= valid.buf.len()) {
            return false;
        }
        let Layout::Fixed { values, .. } = &mut n.layout else { return false };
        if values.buf.len() + std::mem::size_of::<T>() > values.buf.capacity() {
            return false;
        }
        values.buf.push(v);
        if eager {
            if let Some(valid) = &mut n.validity {
                set_valid(valid, n.len);
            }
        }
        n.len += 1;
        // A struct field or list item is never a top-level column.
        if top {
            self.row_written += 1;
        }
        true
    }

    /// The fast path of `append_decimal` (decimal128 within its precision).
    #[inline(always)]
    pub(crate) fn try_decimal(&mut self, node: usize, unscaled: i128) -> bool {
        let top = self.top_fast(node, Input::Decimal);
        let n = if top { self.nodes.get(node) } else { self.fast_node(node, Input::Decimal) };
        let Some(Layout::Fixed { decimal: Some(spec), .. }) = n.map(|n| &n.layout) else {
            return false;
        };
        if unscaled < spec.lo || unscaled > spec.hi {
            return false;
        }
        self.push_native(node, unscaled);
        true
    }

    /// `push_native` for a top-level column (checked by `top_fast`): the
    /// node's `up` is known, the row counter counts it.
    #[inline(always)]
    fn push_native_top<T: ArrowNativeType>(&mut self, node: usize, v: T) {
        let n = &mut self.nodes[node];
        debug_assert!(n.kind() == Kind::Fixed { width: std::mem::size_of::<T>() } && n.up == NO_OPEN);
        // Capacity for the batch's rows is reserved at its start; `push`
        // grows only past that.
        match &mut n.layout {
            Layout::Fixed { values, .. } => values.buf.push(v),
            _ => unreachable!("the fast path takes fixed-width nodes only"),
        }
        if !n.valid_lazy {
            if let Some(valid) = &mut n.validity {
                set_valid(valid, n.len);
            }
        }
        n.len += 1;
        self.row_written += 1;
    }

    /// Writes `v` as the next value of fixed-width `node` (checked by
    /// `top_fast` or `fast_node`).
    #[inline(always)]
    fn push_native<T: ArrowNativeType>(&mut self, node: usize, v: T) {
        let n = &mut self.nodes[node];
        debug_assert_eq!(n.kind(), Kind::Fixed { width: std::mem::size_of::<T>() });
        // Capacity for the batch's rows is reserved at its start (top-level
        // columns); `push` grows only past that.
        match &mut n.layout {
            Layout::Fixed { values, .. } => values.buf.push(v),
            _ => unreachable!("the fast path takes fixed-width nodes only"),
        }
        if !n.valid_lazy {
            if let Some(valid) = &mut n.validity {
                set_valid(valid, n.len);
            }
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
    }

    /// Appends one fixed-width value given as little-endian bytes of its input type.
    /// (First the direct entry of encoded nodes, whose registers the full
    /// path's do not burden.)
    #[inline(never)]
    pub(super) fn append_le(&mut self, node: usize, input: Input, bytes: &[u8]) -> Result<()> {
        if let Some(dst) = self.nodes.get(node).and_then(|n| n.value_node) {
            if self.try_encoded(node, dst, input, bytes) {
                return Ok(());
            }
        }
        self.append_le_full(node, input, bytes)
    }

    #[inline(never)]
    fn append_le_full(&mut self, node: usize, input: Input, bytes: &[u8]) -> Result<()> {
        self.target(node, input.name())?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        if !self.nodes[dst].accepts(input) {
            return Err(self.wrong_input(node, input));
        }
        self.check_value(input.name(), node, bytes.len(), false)?;
        if dst != node {
            // Flat values stored as given are looked up before being written.
            if input != Input::Decimal && self.fixed_as_is(dst, bytes.len()) {
                self.append_flat(node, dst, bytes, |w| w.write_le(dst, input, bytes))?;
            } else {
                self.append_encoded(node, |w| w.write_le(dst, input, bytes))?;
            }
        } else {
            self.write_le(dst, input, bytes)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Whether fixed-width node `dst` stores a value of `len` bytes as it is
    /// given (its own width, not a decimal: no conversion, no check).
    #[inline]
    pub(super) fn fixed_as_is(&self, dst: usize, len: usize) -> bool {
        matches!(self.nodes[dst].layout, Layout::Fixed { width, decimal: None, .. } if width == len)
    }

    /// Writes one typed value into the fixed-width, decimal or boolean node `dst`.
    #[inline]
    pub(super) fn write_le(&mut self, dst: usize, input: Input, bytes: &[u8]) -> Result<()> {
        let (width, decimal) = match self.nodes[dst].layout {
            Layout::Fixed { width, decimal, .. } => (width, decimal.is_some()),
            // Only Bool is not fixed among the typed inputs.
            _ => return self.push_bool(dst, bytes[0] != 0),
        };
        if width == bytes.len() && (!decimal || !self.options.check_decimal_precision) && input != Input::Decimal {
            self.push_fixed(dst, bytes);
            return Ok(());
        }
        if decimal {
            return self.push_decimal(dst, input, width, bytes);
        }
        self.append_converted(dst, input, width, bytes)
    }

    /// A decimal value from an `append_i64` value or 1 to 32 little-endian
    /// bytes: sign-extended, checked against the precision, cut to `width`.
    #[cold]
    fn push_decimal(&mut self, node: usize, input: Input, width: usize, bytes: &[u8]) -> Result<()> {
        let n = &self.nodes[node];
        let value = decimal_input(input, bytes).ok_or_else(|| {
            QuiverError::invalid(format!(
                "{}: {}: a decimal takes 1 to 32 little-endian bytes, got {}",
                input.name(),
                n.describe(node),
                bytes.len()
            ))
        })?;
        let precision = n.decimal_precision().expect("a decimal node");
        if self.options.check_decimal_precision && !decimal::fits(value, precision) {
            return Err(QuiverError::new(
                ErrorCode::OutOfRange,
                format!("{}: {}: value {value} does not fit precision {precision}", input.name(), n.describe(node)),
            ));
        }
        self.push_fixed(node, &value.to_le_bytes()[..width]);
        Ok(())
    }

    /// A value whose input is not the node's own width: a float16 from an
    /// f32, or the error.
    #[cold]
    fn append_converted(&mut self, node: usize, input: Input, width: usize, bytes: &[u8]) -> Result<()> {
        if input == Input::F32 && width == 2 {
            let v = f32::from_le_bytes(bytes.try_into().expect("f32 is 4 bytes"));
            self.push_fixed(node, &half::f16::from_f32(v).to_le_bytes());
            return Ok(());
        }
        if input == Input::Bytes {
            return Err(QuiverError::invalid(format!(
                "append_bytes: {}: takes exactly {width} bytes, got {}",
                self.nodes[node].describe(node),
                bytes.len()
            )));
        }
        Err(self.wrong_input(node, input))
    }

    #[inline]
    fn push_fixed(&mut self, node: usize, bytes: &[u8]) {
        let n = &mut self.nodes[node];
        match &mut n.layout {
            Layout::Fixed { values, .. } => values.buf.extend_from_slice(bytes),
            _ => unreachable!("push_fixed on a fixed-width node"),
        }
        if !n.valid_lazy {
            if let Some(v) = &mut n.validity {
                v.set_bit(n.len);
            }
        }
        n.len += 1;
    }

    fn push_bool(&mut self, node: usize, value: bool) -> Result<()> {
        let n = &mut self.nodes[node];
        let Layout::Bool { values } = &mut n.layout else { unreachable!("push_bool on a boolean node") };
        if value {
            values.set_bit(n.len);
        } else {
            values.ensure_bits(n.len + 1);
        }
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }
}

/// The unscaled value of a decimal append: an `append_i64` value, or 1 to 32
/// little-endian bytes.
fn decimal_input(input: Input, bytes: &[u8]) -> Option<i256> {
    if input == Input::I64 {
        return Some(i256::from_i128(i64::from_le_bytes(bytes.try_into().ok()?) as i128));
    }
    decimal::value_of(bytes)
}
