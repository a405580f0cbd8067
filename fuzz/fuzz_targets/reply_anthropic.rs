//! An Anthropic `/messages` 2xx body through the loop's reply reader
//! (`toolnexus_fuzz::reply` lists what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolnexus_fuzz::reply::check(toolnexus::Style::Anthropic, data));
