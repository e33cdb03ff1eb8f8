//! `ecp-node`: the ECP server, store, federator and CLI (issue 3 — not built yet).
//!
//! This crate is the home of the node; today it only re-exports the protocol
//! version so the workspace layout is in place.

/// The protocol version the node speaks.
pub const PROTOCOL_VERSION: &str = ecp_protocol::PROTOCOL_VERSION;
