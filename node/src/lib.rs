//! `ecp-node`: the ECP server people run beside their agents.
//!
//! # Layout
//!
//! - [`store`]: SQLite, the source of truth — skills, versions, quarantine,
//!   audit, sequence.
//! - [`projection`]: the skills folder agents read, written from the store.
//! - [`stamp`]: where a received skill came from, in its file's frontmatter.
//! - [`permissions`]: grants in received skills' frontmatter kept out of the agent's folder.
//! - [`library`]: store + projection; the one place through which skills change.
//! - [`agents`]: `[[agent]]` folders, each filled with received skills
//!   within its listing budget by a documented rule.
//! - [`lockfile`]: `ecp.lock` — the versions of the skills folder — and
//!   the folder's drift from what the node would write.
//! - [`intake`]: the node's merge step — the protocol's decisions plus the
//!   per-origin limits and quarantine approvals, applied in one store transaction.
//! - [`decision_log`]: one log line per packet accepted or refused — pushed,
//!   pulled or imported — in one format, floods summarised.
//! - [`import`]: the agent's SKILL.md files in the skills folders become local
//!   skills (at start and on change); deleted ones become tombstones.
//! - [`deletion_guard`]: a cleared folder cannot delete the mesh's skills —
//!   the folder marker `.ecp-folder`, bulk deletions held for the user (a
//!   peer's too, per sender: [`intake::settle`]).
//! - [`sharing`]: which local skills may leave the node — private skills,
//!   `.ecpignore`, listed mode, private folders, the secret scan; the one
//!   place that decides.
//! - [`config`]: everything the node is told, resolved once — defaults,
//!   `node.toml`, environment and flags; `peers.toml` (whom to federate with,
//!   how often, how much trust); the node's own keys and every secret.
//! - [`keys`]: the ECP/1.2 keys in force while the node runs — its own and
//!   its peers' — the node keys and certificates that prove peers, and the
//!   clock signatures use.
//! - [`federation`]: pulling from and pushing to peers, on a schedule and on
//!   change; the per-peer cursor lives in the store.
//! - [`reload`]: the peers file read again when it changes and on SIGHUP.
//! - [`discovery`]: finding peers without configuration (mDNS), TLS nodes
//!   with their certificate's fingerprint.
//! - [`http`]: the router — ECP endpoints, health endpoints, the local `/v1/` API,
//!   the status page at `/`; each group of routes behind the guard that authenticates it.
//! - [`health`]: liveness and readiness with their reasons (`/livez`, `/readyz`).
//! - [`node`]: a running server: bind, serve, graceful shutdown.
//! - [`hub`]: a running hub replica (`--store postgres://…`): the ECP
//!   endpoints from a database several replicas share.
//! - [`folder_lock`]: one server per skills folder — the lock `serve` holds on each.
//! - [`data_lock`]: one server per data folder — the lock it holds and
//!   `server.json`, where the CLI finds it.
//! - [`archive`]: offline archives — export, the checks before import, import as a peer update.
//! - [`api_token`]: the token that opens the local `/v1/` API.
//! - [`metrics`]: the Prometheus metrics (`GET /metrics`) and what feeds them.
//! - [`events`]: the live stream of committed audit entries (`GET /v1/events`).
//! - [`operator`]: what an operator does to skills and the quarantine — the
//!   CLI on the store and the `/v1/` write endpoints call the same functions.
//! - [`outcomes`]: how skills do — agents' reports, the score and the
//!   confidence that follows it, retirement of failing skills and restore.
//! - [`serving`]: the ECP serving path's one store interface — the node's
//!   own library, or a hub's PostgreSQL database ([`store::hub`]).
//! - [`serve`]: the accept loop — header timeout and size, graceful drain.
//! - [`connections`]: who may hold connections — a total cap, a share per
//!   address, fair eviction, refusals summarised in the log.
//! - [`versions`]: a skill's history, pins and rollback; what a pin keeps in the folder.
//! - [`mcp`]: the MCP server agents search, read and rate skills with —
//!   over stdio (`ecp-node mcp`) and at `/mcp`.
//! - [`proposals`]: an agent's edit of a received skill kept as a derived
//!   version and proposed to the skill's origin; review, relay, fork (#20).
//! - [`tls`]: certificates and keys; rustls for the server (and mTLS), its
//!   certificate reloaded as its files change, and for https peers.
//! - [`arenas`]: glibc's malloc arenas — two unless the environment says.
#![deny(missing_docs)]

/// The target of the debug events that time a pull's steps
/// (`RUST_LOG=warn,ecp_node::timeline=debug`): when each page is asked for,
/// arrives, is decoded, scanned, committed and written to the skills
/// folder (#18 item 1: the pull's critical path).
pub const TIMELINE: &str = "ecp_node::timeline";

pub mod agents;
pub mod api_token;
pub mod archive;
pub mod arenas;
pub mod config;
pub mod connections;
pub mod data_lock;
pub mod decision_log;
pub mod deletion_guard;
pub mod discovery;
pub mod events;
pub mod federation;
pub mod folder_lock;
pub mod health;
pub mod http;
pub mod hub;
pub mod import;
pub mod intake;
mod joined;
pub mod keys;
pub mod library;
pub mod lockfile;
pub mod mcp;
pub mod metrics;
pub mod node;
pub mod operator;
pub mod outcomes;
pub mod permissions;
pub mod projection;
pub mod proposals;
pub mod reload;
pub mod serve;
pub mod serving;
pub mod sharing;
pub mod stamp;
pub mod store;
pub mod tls;
pub mod versions;

/// The protocol version the node speaks.
pub const PROTOCOL_VERSION: &str = ecp_protocol::PROTOCOL_VERSION;

pub use node::Node;
