//! Fuzz target `update_merge`: raw bytes into [`ecp_fuzz::update_merge`], which owns what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(init: ecp_fuzz::warm_up(), |data: &[u8]| ecp_fuzz::update_merge(data));
