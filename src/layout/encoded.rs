//! Dictionary and run-end encoded layouts: the largest index a key or run-end
//! type holds.

use arrow_schema::DataType;

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
