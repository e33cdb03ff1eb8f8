//! Fuzz target `signature`: raw bytes into [`ecp_fuzz::signature`], which owns what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecp_fuzz::signature(data));
