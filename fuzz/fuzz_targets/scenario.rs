//! A conformance scenario file, read and replayed in-process (`toolnexus_fuzz::scenario`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolnexus_fuzz::scenario::replay(data));
