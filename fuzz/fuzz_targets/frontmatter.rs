//! Fuzz target `frontmatter`: raw bytes into [`ecp_fuzz::frontmatter`], which owns what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecp_fuzz::frontmatter(data));
