//! The row path's typed appends: integers, floats, decimals, bytes and
//! nulls, each with an inlined fast path for the common case (a public node
//! at its expected position, of a kind written without conversion) and a
//! full path that makes every check and gives the message.

use arrow_buffer::{i256, ArrowNativeType};

use crate::buffer::bits::set_valid;
use crate::buffer::offsets::{last_offset, push_offset};
use crate::error::{overflow, ErrorCode, QuiverError, Result};
use crate::layout::decimal;
use crate::layout::fixed::push_zeros;
use crate::node::{Input, Kind, NO_OPEN};

use super::ArrowWriter;

impl ArrowWriter {
    /// Appends one fixed-width value given as little-endian bytes of its input type.
    #[inline(never)]
    pub(super) fn append_le(&mut self, node: usize, input: Input, bytes: &[u8]) -> Result<()> {
        self.target(node, input.name())?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        let n = &self.nodes[dst];
        if !n.accepts(input) {
            return Err(self.wrong_input(node, input));
        }
        if dst != node {
            self.append_encoded(node, |w| w.write_le(dst, input, bytes))?;
        } else {
            self.write_le(dst, input, bytes)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Writes one typed value into the fixed-width or boolean node `dst`.
    #[inline]
    pub(super) fn write_le(&mut self, dst: usize, input: Input, bytes: &[u8]) -> Result<()> {
        let n = &self.nodes[dst];
        let Kind::Fixed { width } = n.kind else {
            // Only Bool is not fixed among the typed inputs.
            return self.push_bool(dst, bytes[0] != 0);
        };
        if width == bytes.len()
            && (n.decimal_precision.is_none() || !self.options.check_decimal_precision)
            && input != Input::Decimal
        {
            self.push_fixed(dst, bytes);
            return Ok(());
        }
        self.append_converted(dst, input, width, bytes)
    }

    #[cold]
    pub(super) fn append_converted(&mut self, node: usize, input: Input, width: usize, bytes: &[u8]) -> Result<()> {
        let n = &self.nodes[node];
        if n.decimal_precision.is_some() && n.dec_bound != 0 && (input == Input::I64 || (1..=16).contains(&bytes.len()))
        {
            // Width <= 16: the value and its bound fit an i128.
            let value = if input == Input::I64 {
                i64::from_le_bytes(bytes.try_into().expect("i64 is 8 bytes")) as i128
            } else {
                let fill = if bytes[bytes.len() - 1] & 0x80 != 0 { 0xFF } else { 0 };
                let mut le = [fill; 16];
                le[..bytes.len()].copy_from_slice(bytes);
                i128::from_le_bytes(le)
            };
            if self.options.check_decimal_precision && (value >= n.dec_bound || value <= -n.dec_bound) {
                let precision = n.decimal_precision.expect("decimal node");
                return Err(QuiverError::new(
                    ErrorCode::OutOfRange,
                    format!("{}: {}: value {value} does not fit precision {precision}", input.name(), n.describe(node)),
                ));
            }
            let le = value.to_le_bytes();
            self.push_fixed(node, &le[..width]);
            return Ok(());
        }
        if n.decimal_precision.is_some() {
            let value = decimal_input(input, bytes).ok_or_else(|| {
                QuiverError::invalid(format!(
                    "{}: {}: a decimal takes 1 to 32 little-endian bytes, got {}",
                    input.name(),
                    n.describe(node),
                    bytes.len()
                ))
            })?;
            if self.options.check_decimal_precision {
                self.check_decimal(node, input.name(), value)?;
            }
            let le = value.to_le_bytes();
            self.push_fixed(node, &le[..width]);
            return Ok(());
        }
        if input == Input::F32 && width == 2 {
            let v = f32::from_le_bytes(bytes.try_into().expect("f32 is 4 bytes"));
            self.push_fixed(node, &half::f16::from_f32(v).to_le_bytes());
            return Ok(());
        }
        if input == Input::Bytes {
            return Err(QuiverError::invalid(format!(
                "append_bytes: {}: takes exactly {width} bytes, got {}",
                n.describe(node),
                bytes.len()
            )));
        }
        Err(self.wrong_input(node, input))
    }

    pub(super) fn check_decimal(&self, node: usize, call: &str, value: i256) -> Result<()> {
        let n = &self.nodes[node];
        let precision = n.decimal_precision.expect("decimal node");
        let limit = i256::from_i128(10).wrapping_pow(precision as u32);
        if value >= limit || value <= limit.wrapping_neg() {
            return Err(QuiverError::new(
                ErrorCode::OutOfRange,
                format!("{call}: {}: value {value} does not fit precision {precision}", n.describe(node)),
            ));
        }
        Ok(())
    }

    #[inline]
    pub(super) fn push_fixed(&mut self, node: usize, bytes: &[u8]) {
        let n = &mut self.nodes[node];
        n.values.as_mut().expect("fixed node has values").buf.extend_from_slice(bytes);
        if let Some(v) = &mut n.validity {
            v.set_bit(n.len);
        }
        n.len += 1;
    }

    pub(super) fn push_bool(&mut self, node: usize, value: bool) -> Result<()> {
        let n = &mut self.nodes[node];
        let values = n.values.as_mut().expect("bool node has values");
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

    /// The fast path of the typed appends: writes `v` and returns true when
    /// `node` takes `input` natively at its position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_native<T: ArrowNativeType>(&mut self, node: usize, input: Input, v: T) -> bool {
        if self.fast_node(node, input).is_none() {
            return false;
        }
        self.push_native(node, v);
        true
    }

    /// The fast path of `append_decimal` (decimal128 within its precision).
    #[inline(always)]
    pub(crate) fn try_decimal(&mut self, node: usize, unscaled: i128) -> bool {
        match self.fast_node(node, Input::Decimal) {
            Some(n) if n.dec_lo <= unscaled && unscaled <= n.dec_hi => {
                self.push_native(node, unscaled);
                true
            }
            _ => false,
        }
    }

    /// Writes `v` as the next value of fixed-width `node` (checked by `fast_node`).
    #[inline(always)]
    pub(super) fn push_native<T: ArrowNativeType>(&mut self, node: usize, v: T) {
        let n = &mut self.nodes[node];
        debug_assert_eq!(n.kind, Kind::Fixed { width: std::mem::size_of::<T>() });
        // Capacity for the batch's rows is reserved at its start (top-level
        // columns); `push` grows only past that.
        n.values.as_mut().expect("fixed node has values").buf.push(v);
        if let Some(valid) = &mut n.validity {
            set_valid(valid, n.len);
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
    }

    pub fn append_bool(&mut self, node: usize, v: bool) -> Result<()> {
        self.append_le(node, Input::Bool, &[v as u8])
    }

    #[inline(always)]
    pub fn append_i8(&mut self, node: usize, v: i8) -> Result<()> {
        if self.try_native(node, Input::I8, v) {
            return Ok(());
        }
        self.append_le(node, Input::I8, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_i16(&mut self, node: usize, v: i16) -> Result<()> {
        if self.try_native(node, Input::I16, v) {
            return Ok(());
        }
        self.append_le(node, Input::I16, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_i32(&mut self, node: usize, v: i32) -> Result<()> {
        if self.try_native(node, Input::I32, v) {
            return Ok(());
        }
        self.append_le(node, Input::I32, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_i64(&mut self, node: usize, v: i64) -> Result<()> {
        if self.try_native(node, Input::I64, v) {
            return Ok(());
        }
        self.append_le(node, Input::I64, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_u8(&mut self, node: usize, v: u8) -> Result<()> {
        if self.try_native(node, Input::U8, v) {
            return Ok(());
        }
        self.append_le(node, Input::U8, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_u16(&mut self, node: usize, v: u16) -> Result<()> {
        if self.try_native(node, Input::U16, v) {
            return Ok(());
        }
        self.append_le(node, Input::U16, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_u32(&mut self, node: usize, v: u32) -> Result<()> {
        if self.try_native(node, Input::U32, v) {
            return Ok(());
        }
        self.append_le(node, Input::U32, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_u64(&mut self, node: usize, v: u64) -> Result<()> {
        if self.try_native(node, Input::U64, v) {
            return Ok(());
        }
        self.append_le(node, Input::U64, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_f32(&mut self, node: usize, v: f32) -> Result<()> {
        if self.try_native(node, Input::F32, v) {
            return Ok(());
        }
        self.append_le(node, Input::F32, &v.to_le_bytes())
    }

    #[inline(always)]
    pub fn append_f64(&mut self, node: usize, v: f64) -> Result<()> {
        if self.try_native(node, Input::F64, v) {
            return Ok(());
        }
        self.append_le(node, Input::F64, &v.to_le_bytes())
    }

    /// A float16 value (also takes `append_f32`, rounded, and `append_u16`, raw bits).
    #[inline(always)]
    pub fn append_f16(&mut self, node: usize, v: half::f16) -> Result<()> {
        if self.try_native(node, Input::U16, v) {
            return Ok(());
        }
        self.append_le(node, Input::U16, &v.to_le_bytes())
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

    /// A string (a `&str` is UTF-8 already: not checked again).
    #[inline(always)]
    pub fn append_str(&mut self, node: usize, v: &str) -> Result<()> {
        if self.try_bytes(node, v.as_bytes(), true) {
            return Ok(());
        }
        self.append_bytes_full(node, v.as_bytes())
    }

    /// Bytes of a utf8, binary, their large forms, or fixed-size binary (exact
    /// width), or the raw little-endian bytes of a day-time / month-day-nano
    /// interval.
    #[inline(always)]
    pub fn append_bytes(&mut self, node: usize, v: &[u8]) -> Result<()> {
        if self.try_bytes(node, v, false) {
            return Ok(());
        }
        self.append_bytes_full(node, v)
    }

    /// The fast path of `append_bytes` (variable-width nodes; `is_utf8`: known
    /// valid): false, having written nothing, when it does not apply or the
    /// value is refused.
    #[inline(always)]
    pub(crate) fn try_bytes(&mut self, node: usize, v: &[u8], is_utf8: bool) -> bool {
        let Some(n) = self.nodes.get(node) else { return false };
        let Kind::Var { large, utf8 } = n.kind else { return false };
        if !self.at_slot(n) || (utf8 && !is_utf8 && self.options.validate_utf8 && !valid_utf8(v)) {
            return false;
        }
        let n = &mut self.nodes[node];
        let data = n.data.as_mut().expect("var node has data");
        let end = data.buf.len() + v.len();
        if !large && end > i32::MAX as usize {
            return false;
        }
        data.buf.extend_from_slice(v);
        push_offset(n.values.as_mut().expect("var node has offsets"), if large { 8 } else { 4 }, end);
        if let Some(valid) = &mut n.validity {
            set_valid(valid, n.len);
        }
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    #[inline(never)]
    pub(super) fn append_bytes_full(&mut self, node: usize, v: &[u8]) -> Result<()> {
        self.target(node, "append_bytes")?;
        let dst = self.nodes[node].value_node.unwrap_or(node);
        if !self.nodes[dst].accepts(Input::Bytes) {
            return Err(self.wrong_input(node, Input::Bytes));
        }
        if dst != node {
            self.append_encoded(node, |w| w.write_bytes(dst, v))?;
        } else {
            self.write_bytes(dst, v)?;
        }
        self.count_top(node);
        Ok(())
    }

    /// Writes one byte-string value into the variable-width, view or
    /// fixed-width node `dst`.
    pub(super) fn write_bytes(&mut self, dst: usize, v: &[u8]) -> Result<()> {
        let n = &self.nodes[dst];
        let (large, utf8) = match n.kind {
            Kind::Var { large, utf8 } => (large, utf8),
            Kind::View { utf8 } => (false, utf8),
            _ => return self.write_le(dst, Input::Bytes, v),
        };
        if utf8 && self.options.validate_utf8 {
            if let Err(e) = std::str::from_utf8(v) {
                return Err(QuiverError::invalid(format!(
                    "append_bytes: {}: invalid UTF-8 at byte {}",
                    n.describe(dst),
                    e.valid_up_to()
                )));
            }
        }
        if let Kind::View { .. } = n.kind {
            return self.push_view(dst, v);
        }
        let n = &mut self.nodes[dst];
        let data = n.data.as_mut().expect("var node has data");
        let end = data.buf.len() + v.len();
        if !large && end > i32::MAX as usize {
            let what = n.describe(dst);
            return Err(overflow("append_bytes", &what, end));
        }
        data.buf.extend_from_slice(v);
        let width = if large { 8 } else { 4 };
        push_offset(n.values.as_mut().expect("var node has offsets"), width, end);
        if let Some(valid) = &mut n.validity {
            valid.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// Appends one view value: inline up to 12 bytes, else in the data buffer.
    pub(crate) fn push_view(&mut self, node: usize, v: &[u8]) -> Result<()> {
        let n = &mut self.nodes[node];
        let mut view = [0u8; 16];
        if v.len() > u32::MAX as usize {
            return Err(overflow("append_bytes", &n.describe(node), v.len()));
        }
        view[..4].copy_from_slice(&(v.len() as u32).to_le_bytes());
        if v.len() <= 12 {
            view[4..4 + v.len()].copy_from_slice(v);
        } else {
            let data = n.data.as_mut().expect("view data");
            let at = data.buf.len();
            if at + v.len() > u32::MAX as usize {
                let what = n.describe(node);
                return Err(QuiverError::new(
                    ErrorCode::Overflow,
                    format!("append_bytes: {what}: the batch's view data would pass 2^32-1 bytes; finish this batch and write the value into the next"),
                ));
            }
            view[4..8].copy_from_slice(&v[..4]);
            view[12..16].copy_from_slice(&(at as u32).to_le_bytes());
            data.buf.extend_from_slice(v);
        }
        n.values.as_mut().expect("views").buf.extend_from_slice(&view);
        if let Some(valid) = &mut n.validity {
            valid.set_bit(n.len);
        }
        n.len += 1;
        Ok(())
    }

    /// A null. On a struct or fixed-size list its children get null, zeroed
    /// values. A non-nullable node refuses it (`EINVAL`).
    #[inline(always)]
    pub fn append_null(&mut self, node: usize) -> Result<()> {
        if self.try_null(node) {
            return Ok(());
        }
        self.append_null_full(node)
    }

    /// The fast path of `append_null`: nullable fixed-width, variable-width
    /// and list nodes at their position; else changes nothing.
    #[inline(always)]
    pub(crate) fn try_null(&mut self, node: usize) -> bool {
        match self.nodes.get(node) {
            Some(n) if n.null_fast && self.at_slot(n) => {}
            _ => return false,
        }
        let n = &mut self.nodes[node];
        let width = n.offset_width();
        let values = n.values.as_mut().expect("node has values or offsets");
        match n.kind {
            Kind::Fixed { width } => push_zeros(values, width),
            _ => push_offset(values, width, last_offset(values, width)),
        }
        // Bits past the length are clear: the null's bit is.
        n.validity.as_mut().expect("nullable node has validity").ensure_bits(n.len + 1);
        n.null_count += 1;
        n.len += 1;
        if n.up == NO_OPEN {
            self.row_written += 1;
        }
        true
    }

    #[inline(never)]
    pub(super) fn append_null_full(&mut self, node: usize) -> Result<()> {
        self.target(node, "append_null")?;
        let n = &self.nodes[node];
        if !n.nullable && n.kind != Kind::Null {
            return Err(QuiverError::invalid(format!("append_null: {} is not nullable", n.describe(node))));
        }
        if let (Kind::Union { .. }, Some(&first)) = (n.kind, n.children.first()) {
            // A null union value: a null of its first member.
            if !self.nodes[first].nullable {
                return Err(QuiverError::invalid(format!(
                    "append_null: {}: its first member {} is not nullable; append a null inside begin/end",
                    n.describe(node),
                    self.nodes[first].describe(first)
                )));
            }
        }
        self.fill_null(node, 1);
        self.count_top(node);
        Ok(())
    }
}

/// Whether `v` is UTF-8: ASCII first (word at a time), the full check otherwise.
#[inline(always)]
fn valid_utf8(v: &[u8]) -> bool {
    v.is_ascii() || std::str::from_utf8(v).is_ok()
}

/// The unscaled value of a decimal append: an `append_i64` value, or 1 to 32
/// little-endian bytes.
fn decimal_input(input: Input, bytes: &[u8]) -> Option<i256> {
    if input == Input::I64 {
        return Some(i256::from_i128(i64::from_le_bytes(bytes.try_into().ok()?) as i128));
    }
    decimal::value_of(bytes)
}
