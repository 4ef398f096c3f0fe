//! Random sequences of C API calls checked against a model; the driver and
//! its input layout are in fuzz/driver/api_sequence.rs.
#![no_main]

#[path = "../driver/api_sequence.rs"]
mod api_sequence;
#[path = "../../tests/reliability/exported.rs"]
mod exported;

libfuzzer_sys::fuzz_target!(|data: &[u8]| api_sequence::run(data));
