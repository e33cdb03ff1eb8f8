//! `ecp-node`: the ECP server people run beside their agents.
//!
//! # Layout
//!
//! - [`store`]: SQLite, the source of truth — skills, versions, quarantine,
//!   audit, sequence.
//! - [`projection`]: the skills folder agents read, written from the store.
//! - [`library`]: store + projection; the one place through which skills change.
//! - [`import`]: the agent's SKILL.md files in the skills folder become local
//!   skills (at start and on change); deleted ones become tombstones.
//! - [`config`]: defaults, `node.toml`, environment and flags, resolved once.
//! - [`peers`]: `peers.toml` — whom to federate with, how often, how much trust.
//! - [`keys`]: the ECP/1.2 signing keys the node holds — its own and its peers'.
//! - [`federation`]: pulling from and pushing to peers, on a schedule and on
//!   change; the per-peer cursor lives in the store.
//! - [`discovery`]: finding peers without configuration (mDNS).
//! - [`http`]: the router — ECP endpoints, `/healthz`, the local `/v1/` API;
//!   each group of routes behind the guard that authenticates it.
//! - [`node`]: a running server: bind, serve, graceful shutdown.
//! - [`serve`]: the accept loop — header timeout, connection cap, graceful drain.
//! - [`tls`]: certificates and keys; rustls for the server (and mTLS) and for https peers.
#![deny(missing_docs)]

pub mod config;
pub mod discovery;
pub mod federation;
pub mod http;
pub mod import;
pub mod keys;
pub mod library;
pub mod node;
pub mod peers;
pub mod projection;
pub mod serve;
pub mod store;
pub mod tls;

/// The protocol version the node speaks.
pub const PROTOCOL_VERSION: &str = ecp_protocol::PROTOCOL_VERSION;

pub use node::Node;
