//! Fuzz target `bundle_listing`: raw bytes into [`ecp_fuzz::bundle_listing`], which owns what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecp_fuzz::bundle_listing(data));
