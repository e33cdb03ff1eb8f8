//! `ecp-conformance`: a black-box ECP suite (issue 6 — not built yet).
//!
//! It will speak only HTTP to a target URL and deliberately does not depend
//! on `ecp-protocol`, so a bug shared by the node and the protocol crate
//! cannot pass unnoticed.

/// The suite's own version.
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");
