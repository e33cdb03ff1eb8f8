//! Configuration: everything the node is told before it runs, read,
//! checked and resolved in one step per file, so the rest of the node only
//! sees values it can trust.
//!
//! - The node's own settings: defaults, an optional `node.toml`, environment
//!   variables and flags — one table of keys ([`KEYS`]) says which exist —
//!   resolved by [`Config::resolve`] (flag > environment > file > default,
//!   for every key alike).
//! - Whom it federates with: `peers.toml`, resolved by [`PeersConfig::load`]
//!   (again on every reload).
//!
//! Every error names the key (or flag) and, where it can, what to write
//! instead.
//!
//! What it does not do: run anything, hold state that changes while the node
//! runs (the keys in force are in [`crate::keys`], the peers' state in the
//! store), or watch files.
//!
//! # Layout
//!
//! - `mod.rs`: this overview, [`ConfigError`] and the re-exports; every item
//!   is used as `crate::config::Item`.
//! - `table`: [`KEYS`], the one table of the keys of `node.toml`: section,
//!   type, default, environment variable, flag, meaning; the README table.
//! - `sources`: flags, environment and `node.toml` → [`Resolved`], each
//!   key's typed value and its [`Source`].
//! - `resolve`: [`Resolved`] → [`Config`], ranges checked and keys combined.
//! - `peers`: `peers.toml` → [`PeersConfig`], with its own [`PeersError`]
//!   (file and line or key).
//!   `peers/edit.rs`: the text edits of `ecp-node peers add` and `peers rm`.
//! - `agents`: `[[agent]]`, the folders filled for each agent under a
//!   listing budget ([`crate::agents`]).
//! - `keys`: the node's `[[key]]` signing keys and the shared secret as the
//!   key `default`; key id rules.
//! - `secret`: [`Secret`], the one type every secret has from parsing on,
//!   which never prints itself; reading `secret_env` variables.
//! - `duration`: the one duration parser both files use.
//! - `unit`: the one check of values between 0 and 1 (trust, confidence).
//! - `weak_secret`: which secrets are too weak to accept requests with
//!   (under 32 bytes, or a placeholder the examples ship) and which of the
//!   node's are.

use std::path::PathBuf;

mod agents;
mod duration;
mod keys;
mod peers;
mod resolve;
mod secret;
mod sources;
mod table;
mod unit;
mod weak_secret;

pub use agents::{Agent, FileAgent, Select, resolve_agents, same_path, valid_agent_name};
pub use duration::{DurationError, parse as parse_duration};
pub use keys::{DEFAULT_KEY_ID, FileKey, KEY_ID_RULE, own_keys, resolve_file_keys};
pub use peers::{
    DEFAULT_CONFIGURED_TRUST, DEFAULT_DISCOVERY_TRUST, DEFAULT_INTERVAL, DEFAULT_TIMEOUT, DiscoverySettings,
    FederationSettings, KnownBy, PeerConfig, PeerKey, PeersConfig, PeersError, Schedule, add_peer,
    cron_expression, normalise_url, remove_peer,
};
pub use resolve::{ClientRateLimit, Config};
pub use secret::{Secret, SecretSourceError};
pub use sources::{Env, FileFolder, Flags, Resolved, Setting, Source, Sources, Value};
pub use table::{FILE_ONLY_ARRAYS, Flag, Form, KEYS, Key, Kind, Scope, markdown};
pub use unit::{NotAUnitValue, unit};
pub use weak_secret::{
    MAKE_ONE, MIN_SECRET_BYTES, PLACEHOLDER_SECRETS, WeakSecret, Weakness, weak_peer_keys, weak_secrets,
    weakness,
};

/// A configuration problem, named with the key or flag and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The config file is not valid TOML or has unknown keys.
    #[error("config file {path} is invalid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said.
        message: String,
    },
    /// A value is out of range.
    #[error("{key}: {message}")]
    Invalid {
        /// The key (`section.name`) or flag.
        key: String,
        /// What is wrong and what to do.
        message: String,
    },
}
