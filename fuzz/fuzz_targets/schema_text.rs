//! The schema text parser against the writer, for any bytes; the driver and
//! the properties it asserts are in fuzz/driver/schema_text.rs.
#![no_main]

#[path = "../driver/schema_text.rs"]
mod schema_text;

libfuzzer_sys::fuzz_target!(|data: &[u8]| schema_text::run(data));
