//! `ecp-node`: the ECP server people run beside their agents.
//!
//! # Layout
//!
//! - [`store`]: SQLite, the source of truth — skills, versions, quarantine,
//!   audit, sequence.
//! - [`projection`]: the skills folder agents read, written from the store.
#![deny(missing_docs)]

pub mod projection;
pub mod store;

/// The protocol version the node speaks.
pub const PROTOCOL_VERSION: &str = ecp_protocol::PROTOCOL_VERSION;
