//! Fuzz target `scanner`: raw bytes into [`ecp_fuzz::scanner`], which owns what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(init: ecp_fuzz::warm_up(), |data: &[u8]| ecp_fuzz::scanner(data));
