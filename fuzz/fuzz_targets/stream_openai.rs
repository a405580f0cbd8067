//! An OpenAI event stream through a streamed call's reader, split where the first byte says
//! (`toolnexus_fuzz::stream` lists what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolnexus_fuzz::stream::check(toolnexus::Style::OpenAi, data));
