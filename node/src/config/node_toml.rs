//! The node's own settings: defaults that run a working node, an optional
//! `node.toml`, environment variables and flags — resolved once, in
//! [`Config::resolve`], into the values the rest of the node trusts.
//!
//! Precedence: flag (or its environment variable) > `node.toml` > default.
//! (Clap reads the environment variables along with the flags; they arrive
//! here together as [`Overrides`].)

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ecp_protocol::StandardPolicy;
use ecp_protocol::signed_auth::{self, DEFAULT_NONCE_CAPACITY, SigningKey};
use serde::Deserialize;

use super::keys::{self, FileKey};
use super::{ConfigError, Secret, duration, unit};
use crate::connections::ConnectionLimits;
use crate::deletion_guard::{DEFAULT_MAX_BULK_DELETE, DEFAULT_MAX_BULK_DELETE_FRACTION, Guard};
use crate::intake::{DEFAULT_SENDER_PER_DAY, DEFAULT_SENDER_PER_HOUR, IntakeMode, Limits};
use crate::permissions::{
    DEFAULT_PERMISSIONS_TRUST, MAX_PERMISSION_KEYS, PeerTrust, PermissionPolicy, ReceivedPermissions,
};
use crate::sharing::{Folder, Mode, Settings};
use crate::store::{DEFAULT_HISTORY_DEPTH, OriginLimits, QuarantineCaps};
use crate::tls::TlsFiles;

/// Default listen address: loopback only, so a node started without
/// thinking about it is not reachable from the network.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7327";
/// Default data folder, relative to the working directory.
pub const DEFAULT_DATA: &str = "./ecp-data";
/// Default request body limit: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Default request-body bytes held at once across requests: eight pushes of
/// the largest default size.
pub const DEFAULT_BODY_BYTES_IN_FLIGHT: usize = 64 * 1024 * 1024;
/// Default byte budget of one page of `GET /ecp/skills?since=N&limit=M`.
pub const DEFAULT_PAGE_BYTES: usize = 8 * 1024 * 1024;
/// Largest allowed page budget: a page must stay far below what a puller
/// reads at most ([`crate::federation::client::MAX_ANSWER_BYTES`]).
pub const MAX_PAGE_BYTES: usize = 32 * 1024 * 1024;
/// Default time allowed for a whole request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time a client has to send a request's headers.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default requests per minute from one client address: ten a second, far
/// above a peer that pulls every second (two requests) and pushes on change.
pub const DEFAULT_CLIENT_RATE_LIMIT: u32 = 600;
/// Default burst of requests one client address may send at once.
pub const DEFAULT_CLIENT_BURST: u32 = 120;

/// `node.toml`: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Listen address, e.g. `"127.0.0.1:7327"`.
    pub listen: Option<String>,
    /// Data folder.
    pub data: Option<PathBuf>,
    /// Shared secret for X-ECP-HMAC; prefer `secret_file` or `secret_env`.
    pub secret: Option<Secret>,
    /// A file holding the shared secret (systemd credentials, a Kubernetes
    /// secret mounted as a file); one trailing line break is not part of it.
    pub secret_file: Option<PathBuf>,
    /// Name of an environment variable holding the secret.
    pub secret_env: Option<String>,
    /// Accept the legacy X-ECP-HMAC header (default true; `SPEC.md` §10.1.5.2).
    pub accept_legacy: Option<bool>,
    /// Most signed requests remembered at once against replay (default 100,000).
    pub replay_cache_capacity: Option<usize>,
    /// Skills folder (default `<data>/skills`); `[[folder]]` names several.
    pub skills_dir: Option<PathBuf>,
    /// `[[folder]]`: skills folders, each shared or not (instead of `skills_dir`).
    #[serde(default)]
    pub folder: Vec<FileFolder>,
    /// `[sharing]`: which local skills leave the node.
    #[serde(default)]
    pub sharing: FileSharing,
    /// `[[key]]`: the node's own ECP/1.2 signing keys (several at once for rotation).
    #[serde(default)]
    pub key: Vec<FileKey>,
    /// Limits.
    #[serde(default)]
    pub limits: FileLimits,
    /// Accept policy.
    #[serde(default)]
    pub policy: FilePolicy,
    /// `[tls]`: certificate files (`cert`, `key`, `client_ca`, `client_cert`, `client_key`).
    #[serde(default)]
    pub tls: TlsFiles,
    /// `[server]`: how clients reach the node.
    #[serde(default)]
    pub server: FileServer,
}

/// One `[[folder]]` of `node.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFolder {
    /// The skills folder.
    pub path: PathBuf,
    /// Whether its skills may be shared (default true).
    pub share: Option<bool>,
}

/// `[sharing]` of `node.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSharing {
    /// `"shared"` (default): every local skill not kept private; `"listed"`: only `skills`.
    pub mode: Option<String>,
    /// The skills shared in mode `"listed"`.
    pub skills: Option<Vec<String>>,
}

/// `[server]` of `node.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileServer {
    /// A second address serving only the health endpoints over plain HTTP.
    pub health_listen: Option<String>,
    /// Names (`host` or `host:port`) clients reach the node by, besides its
    /// address: signed requests may be signed for them (`SPEC.md` §10.1.3).
    pub names: Option<Vec<String>>,
    /// Let loopback clients use the `/v1/` API without the API token (the
    /// behaviour before the token; default false).
    pub trust_loopback: Option<bool>,
}

/// `[limits]` of `node.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimits {
    /// Largest request body, bytes (default 8 MiB).
    pub max_body_bytes: Option<usize>,
    /// Request-body bytes held at once across all requests (default 64 MiB;
    /// at least `max_body_bytes`).
    pub body_bytes_in_flight: Option<usize>,
    /// Most packets in one update (default 10,000).
    pub max_packets: Option<usize>,
    /// Most packet bytes in one page of a paged `GET /ecp/skills` (default 8 MiB).
    pub page_bytes: Option<usize>,
    /// Largest skill body, bytes (default 100 KiB).
    pub max_skill_bytes: Option<usize>,
    /// Time allowed for a whole request, e.g. `"30s"`.
    pub request_timeout: Option<String>,
    /// Time a client has to send a request's headers, e.g. `"10s"`.
    pub header_read_timeout: Option<String>,
    /// New skills per origin per rolling hour (default 1,000; 0: no limit).
    pub origin_limit_hour: Option<u64>,
    /// New skills per origin per rolling day (default 5,000; 0: no limit).
    pub origin_limit_day: Option<u64>,
    /// New skills per verified sender per rolling hour (default 2,000; 0: no limit).
    pub sender_limit_hour: Option<u64>,
    /// New skills per verified sender per rolling day (default 10,000; 0: no limit).
    pub sender_limit_day: Option<u64>,
    /// Most quarantine entries held at once (default 10,000).
    pub quarantine_entries: Option<u64>,
    /// Most bytes the quarantine holds at once (default 64 MiB).
    pub quarantine_bytes: Option<u64>,
    /// Largest refused packet kept whole (default 256 KiB); larger ones are
    /// kept as an excerpt with their size and SHA-256.
    pub quarantine_body_bytes: Option<u64>,
    /// Superseded versions kept per skill (default 10; 0: only the current one).
    pub history_depth: Option<u64>,
    /// Requests per minute from one client address (default 600; 0: no limit).
    pub client_rate_limit: Option<u32>,
    /// Requests one client address may send at once (default 120).
    pub client_burst: Option<u32>,
    /// Rate-limit loopback clients too (default false: they are trusted, as for `/v1/`).
    pub client_rate_limit_loopback: Option<bool>,
    /// Most connections open at once (default 1,024).
    pub max_connections: Option<usize>,
    /// Most connections one client address (IPv6: one /64) holds at once (default 64).
    pub max_connections_per_address: Option<usize>,
    /// Most skills one import pass tombstones without a hold (default 5).
    pub max_bulk_delete: Option<u64>,
    /// Largest share of the folder's skills one import pass tombstones
    /// without a hold (default 0.5).
    pub max_bulk_delete_fraction: Option<f64>,
}

/// `[policy]` of `node.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilePolicy {
    /// Refuse packets whose confidence as received is below this (default 0.6).
    pub min_confidence: Option<f64>,
    /// Trust in senders nobody configured (default 0.6).
    pub default_trust: Option<f64>,
    /// Only accept these origins (default: all).
    pub allow_origins: Option<Vec<String>>,
    /// Never accept these origins.
    pub deny_origins: Option<Vec<String>>,
    /// Re-serve received skills to other peers (default true).
    pub reshare_external: Option<bool>,
    /// Accept GET signatures over the full URL, as the Go client sends them (default true).
    pub accept_full_url_hmac: Option<bool>,
    /// `"auto"` (default): skills from peers reach the skills folder at once;
    /// `"review"`: they wait in the inbox until the user accepts them.
    pub intake: Option<IntakeMode>,
    /// What becomes of grants in received skills' frontmatter: `"strip"`
    /// (default), `"keep-from-trusted"` or `"refuse"`.
    pub received_permissions: Option<ReceivedPermissions>,
    /// Frontmatter keys treated as grants besides `allowed-tools` and `hooks`.
    pub permission_keys: Option<Vec<String>>,
    /// Trust an origin needs to keep its grants under `keep-from-trusted` (default 0.9).
    pub permissions_trust: Option<f64>,
}

/// What flags and environment variables said (all optional).
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--listen` / `ECP_LISTEN`.
    pub listen: Option<String>,
    /// `--health-listen` / `ECP_SERVER_HEALTH_LISTEN`.
    pub health_listen: Option<String>,
    /// `--data` / `ECP_DATA`.
    pub data: Option<PathBuf>,
    /// `--secret` / `ECP_SECRET`.
    pub secret: Option<Secret>,
    /// `--secret-file` / `ECP_SECRET_FILE`.
    pub secret_file: Option<PathBuf>,
    /// `--skills-dir` (repeatable) / `ECP_SKILLS_DIR`: shared skills folders,
    /// replacing `skills_dir` and `[[folder]]` of the file.
    pub skills_dirs: Vec<PathBuf>,
    /// `--sharing-mode` / `ECP_SHARING_MODE`.
    pub sharing_mode: Option<String>,
    /// `--max-body-bytes`.
    pub max_body_bytes: Option<usize>,
    /// `--max-packets`.
    pub max_packets: Option<usize>,
    /// `--body-bytes-in-flight` / `ECP_LIMITS_BODY_BYTES_IN_FLIGHT`.
    pub body_bytes_in_flight: Option<usize>,
    /// `--no-mdns` / `ECP_NO_MDNS` gives `Some(false)`.
    pub mdns: Option<bool>,
    /// `--peers` / `ECP_PEERS`.
    pub peers: Option<PathBuf>,
    /// `--origin-limit-hour` / `ECP_ORIGIN_LIMIT_HOUR`.
    pub origin_limit_hour: Option<u64>,
    /// `--origin-limit-day` / `ECP_ORIGIN_LIMIT_DAY`.
    pub origin_limit_day: Option<u64>,
    /// `--sender-limit-hour` / `ECP_SENDER_LIMIT_HOUR`.
    pub sender_limit_hour: Option<u64>,
    /// `--sender-limit-day` / `ECP_SENDER_LIMIT_DAY`.
    pub sender_limit_day: Option<u64>,
    /// `--quarantine-entries` / `ECP_QUARANTINE_ENTRIES`.
    pub quarantine_entries: Option<u64>,
    /// `--quarantine-bytes` / `ECP_QUARANTINE_BYTES`.
    pub quarantine_bytes: Option<u64>,
    /// `--quarantine-body-bytes` / `ECP_QUARANTINE_BODY_BYTES`.
    pub quarantine_body_bytes: Option<u64>,
    /// `--history-depth` / `ECP_HISTORY_DEPTH`.
    pub history_depth: Option<u64>,
    /// `--client-rate-limit` / `ECP_CLIENT_RATE_LIMIT`.
    pub client_rate_limit: Option<u32>,
    /// `--client-burst` / `ECP_CLIENT_BURST`.
    pub client_burst: Option<u32>,
    /// `--max-connections` / `ECP_MAX_CONNECTIONS`.
    pub max_connections: Option<usize>,
    /// `--max-connections-per-address` / `ECP_MAX_CONNECTIONS_PER_ADDRESS`.
    pub max_connections_per_address: Option<usize>,
    /// `--max-bulk-delete` / `ECP_LIMITS_MAX_BULK_DELETE`.
    pub max_bulk_delete: Option<u64>,
    /// `--max-bulk-delete-fraction` / `ECP_LIMITS_MAX_BULK_DELETE_FRACTION`.
    pub max_bulk_delete_fraction: Option<f64>,
    /// `--accept-legacy` / `ECP_ACCEPT_LEGACY`.
    pub accept_legacy: Option<bool>,
    /// `--name` (repeated) / `ECP_NAMES` (comma-separated).
    pub names: Option<Vec<String>>,
    /// `--trust-loopback` / `ECP_SERVER_TRUST_LOOPBACK`.
    pub trust_loopback: Option<bool>,
    /// `--intake` / `ECP_POLICY_INTAKE`.
    pub intake: Option<IntakeMode>,
    /// `--received-permissions` / `ECP_POLICY_RECEIVED_PERMISSIONS`.
    pub received_permissions: Option<ReceivedPermissions>,
    /// `--tls-cert`, `--tls-key`, `--client-ca`, `--tls-client-cert`,
    /// `--tls-client-key` (and their `ECP_*` variables).
    pub tls: TlsFiles,
}

/// The per-client request rate limit: a token bucket per client address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientRateLimit {
    /// Requests per minute, sustained; 0 turns the limit off.
    pub per_minute: u32,
    /// Requests at once after a quiet spell (the bucket's size), at least 1.
    pub burst: u32,
    /// Whether loopback clients are limited too (by default they are not:
    /// like the `/v1/` API, the node trusts its own machine).
    pub loopback: bool,
}

impl Default for ClientRateLimit {
    fn default() -> Self {
        ClientRateLimit {
            per_minute: DEFAULT_CLIENT_RATE_LIMIT,
            burst: DEFAULT_CLIENT_BURST,
            loopback: false,
        }
    }
}

/// The resolved configuration. Its `Debug` output hides the secret.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where to serve only `/livez`, `/readyz` and `/healthz`, over plain
    /// HTTP (probes under mTLS); `None`: nowhere else.
    pub health_listen: Option<SocketAddr>,
    /// Data folder.
    pub data_dir: PathBuf,
    /// Shared secret (X-ECP-HMAC, and the ECP/1.2 key `default`); `None`
    /// and no `keys` (nor peer keys) leave the node open.
    pub secret: Option<Secret>,
    /// The node's `[[key]]` signing keys, besides `default` (see [`Config::own_keys`]).
    pub keys: Vec<SigningKey>,
    /// Accept the legacy X-ECP-HMAC header (with the shared secret).
    pub accept_legacy: bool,
    /// The names clients reach the node by (lower-cased `host` or
    /// `host:port`; a host alone on any port), besides the address a
    /// connection arrives at: what a signed request may be signed for.
    /// Empty: the address alone (and `localhost` on loopback).
    pub names: Vec<String>,
    /// Loopback clients (that no proxy forwarded) may use the `/v1/` API
    /// without the API token.
    pub trust_loopback: bool,
    /// Most live nonces remembered against replay; when full, signed
    /// requests are answered 503 until some expire.
    pub replay_cache_capacity: usize,
    /// The skills folder the node projects into: the first shared folder
    /// of `sharing.folders` (the first folder when none is shared).
    pub skills_dir: PathBuf,
    /// Which local skills leave the node, and every skills folder.
    pub sharing: Settings,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Request-body bytes held at once across all requests; a push that
    /// finds no room within a moment is answered 503.
    pub body_bytes_in_flight: usize,
    /// Most packets in one update; more is refused whole with 413.
    pub max_packets: usize,
    /// Most packet bytes in one page of a paged `GET /ecp/skills` (one
    /// packet is served whatever its size).
    pub page_bytes: usize,
    /// Time allowed for a whole request.
    pub request_timeout: Duration,
    /// Time a client has to send a request's headers (slow-header defence).
    pub header_read_timeout: Duration,
    /// The accept policy for every merge.
    pub policy: StandardPolicy,
    /// Trust in senders nobody configured.
    pub default_trust: f64,
    /// Re-serve received skills.
    pub reshare_external: bool,
    /// Whether skills from peers reach the skills folder at once or after
    /// the user's review (`[policy] intake`).
    pub intake: IntakeMode,
    /// What becomes of grants in received skills' frontmatter (`[policy]
    /// received_permissions`, `permission_keys`, `permissions_trust`).
    pub permissions: PermissionPolicy,
    /// Accept the Go client's full-URL GET signatures.
    pub accept_full_url_hmac: bool,
    /// Advertise and browse `_ecp._tcp.local.` (default true; off in tests).
    pub mdns: bool,
    /// The peers file (`peers.toml`); `None`: no configured peers.
    pub peers_file: Option<PathBuf>,
    /// New skills per origin per hour and per day.
    pub origin_limits: OriginLimits,
    /// New skills per verified sender per hour and per day.
    pub sender_limits: OriginLimits,
    /// The quarantine's caps on entries and bytes.
    pub quarantine: QuarantineCaps,
    /// Superseded versions kept per skill.
    pub history_depth: u64,
    /// When an import pass's deletions wait for the user.
    pub deletion_guard: Guard,
    /// Requests per client address.
    pub client_rate_limit: ClientRateLimit,
    /// Open connections, in all and per client address.
    pub connections: ConnectionLimits,
    /// TLS: the server's certificate and key (HTTPS when set), the CAs of
    /// required client certificates, the node's own client certificate.
    /// Checked for completeness here, read when the node starts.
    pub tls: TlsFiles,
}

impl Config {
    /// Resolves defaults, the optional file and the overrides.
    pub fn resolve(file: Option<&Path>, over: Overrides) -> Result<Config, ConfigError> {
        let fc = match file {
            Some(path) => load(path)?,
            None => FileConfig::default(),
        };
        let listen_text = over.listen.or(fc.listen).unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let health_listen = match over.health_listen.or(fc.server.health_listen) {
            Some(text) => Some(text.parse().map_err(|_| ConfigError::Invalid {
                key: "health_listen",
                message: format!("{text:?} is not an address like 0.0.0.0:7328"),
            })?),
            None => None,
        };
        let listen = listen_text.parse().map_err(|_| ConfigError::Invalid {
            key: "listen",
            message: format!("{listen_text:?} is not an address like 127.0.0.1:7327"),
        })?;
        let data_dir = over.data.or(fc.data).unwrap_or_else(|| PathBuf::from(DEFAULT_DATA));
        let sharing =
            sharing(&data_dir, over.skills_dirs, over.sharing_mode, fc.skills_dir, fc.folder, fc.sharing)?;
        let projected = sharing.folders.iter().find(|f| f.share).unwrap_or(&sharing.folders[0]);
        let skills_dir = projected.path.clone();
        let secret = shared_secret(
            (over.secret, over.secret_file.as_deref()),
            (fc.secret, fc.secret_file.as_deref(), fc.secret_env.as_deref()),
        )?;
        let keys = keys::resolve_file_keys(&fc.key)?;
        let replay_cache_capacity = fc.replay_cache_capacity.unwrap_or(DEFAULT_NONCE_CAPACITY);
        if replay_cache_capacity == 0 {
            return Err(ConfigError::Invalid {
                key: "replay_cache_capacity",
                message: "must be at least 1".into(),
            });
        }
        let request_timeout = duration_or(
            "limits.request_timeout",
            fc.limits.request_timeout.as_deref(),
            DEFAULT_REQUEST_TIMEOUT,
        )?;
        let header_read_timeout = duration_or(
            "limits.header_read_timeout",
            fc.limits.header_read_timeout.as_deref(),
            DEFAULT_HEADER_READ_TIMEOUT,
        )?;
        let mut policy = StandardPolicy::default();
        if let Some(max) = fc.limits.max_skill_bytes {
            policy.structure.max_bytes = max;
        }
        if let Some(min) = fc.policy.min_confidence {
            policy.min_confidence = unit_at("policy.min_confidence", min)?;
        }
        policy.allow_origins = fc.policy.allow_origins;
        policy.deny_origins = fc.policy.deny_origins.unwrap_or_default();
        let max_packets = over.max_packets.or(fc.limits.max_packets).unwrap_or(policy.max_packets);
        if max_packets == 0 {
            return Err(ConfigError::Invalid { key: "max_packets", message: "must be at least 1".into() });
        }
        policy.max_packets = max_packets;
        let max_body_bytes =
            over.max_body_bytes.or(fc.limits.max_body_bytes).unwrap_or(DEFAULT_MAX_BODY_BYTES);
        if max_body_bytes < 1024 {
            return Err(ConfigError::Invalid {
                key: "max_body_bytes",
                message: "must be at least 1024".into(),
            });
        }
        let body_bytes_in_flight = over
            .body_bytes_in_flight
            .or(fc.limits.body_bytes_in_flight)
            .unwrap_or(DEFAULT_BODY_BYTES_IN_FLIGHT.max(max_body_bytes));
        if body_bytes_in_flight < max_body_bytes {
            return Err(ConfigError::Invalid {
                key: "body_bytes_in_flight",
                message: format!(
                    "must be at least max_body_bytes ({max_body_bytes}), or no push of the largest size could be read"
                ),
            });
        }
        let page_bytes = fc.limits.page_bytes.unwrap_or(DEFAULT_PAGE_BYTES);
        if !(1..=MAX_PAGE_BYTES).contains(&page_bytes) {
            return Err(ConfigError::Invalid {
                key: "page_bytes",
                message: format!("must be from 1 to {MAX_PAGE_BYTES}"),
            });
        }
        let defaults = OriginLimits::default();
        let origin_limits = OriginLimits {
            per_hour: over.origin_limit_hour.or(fc.limits.origin_limit_hour).unwrap_or(defaults.per_hour),
            per_day: over.origin_limit_day.or(fc.limits.origin_limit_day).unwrap_or(defaults.per_day),
        };
        let sender_limits = OriginLimits {
            per_hour: over
                .sender_limit_hour
                .or(fc.limits.sender_limit_hour)
                .unwrap_or(DEFAULT_SENDER_PER_HOUR),
            per_day: over.sender_limit_day.or(fc.limits.sender_limit_day).unwrap_or(DEFAULT_SENDER_PER_DAY),
        };
        let quarantine = QuarantineCaps {
            entries: over
                .quarantine_entries
                .or(fc.limits.quarantine_entries)
                .unwrap_or(QuarantineCaps::DEFAULT.entries),
            bytes: over
                .quarantine_bytes
                .or(fc.limits.quarantine_bytes)
                .unwrap_or(QuarantineCaps::DEFAULT.bytes),
            body: over
                .quarantine_body_bytes
                .or(fc.limits.quarantine_body_bytes)
                .unwrap_or(QuarantineCaps::DEFAULT.body),
        };
        for (key, value) in
            [("quarantine_entries", quarantine.entries), ("quarantine_bytes", quarantine.bytes)]
        {
            if value == 0 {
                return Err(ConfigError::Invalid { key, message: "must be at least 1".into() });
            }
        }
        let client_rate_limit = ClientRateLimit {
            per_minute: over
                .client_rate_limit
                .or(fc.limits.client_rate_limit)
                .unwrap_or(DEFAULT_CLIENT_RATE_LIMIT),
            burst: over.client_burst.or(fc.limits.client_burst).unwrap_or(DEFAULT_CLIENT_BURST),
            loopback: fc.limits.client_rate_limit_loopback.unwrap_or(false),
        };
        if client_rate_limit.per_minute > 0 && client_rate_limit.burst == 0 {
            return Err(ConfigError::Invalid {
                key: "client_burst",
                message: "must be at least 1 (turn the limit off with client_rate_limit = 0 instead)".into(),
            });
        }
        let defaults = ConnectionLimits::default();
        let connections = ConnectionLimits {
            total: over.max_connections.or(fc.limits.max_connections).unwrap_or(defaults.total),
            per_address: over
                .max_connections_per_address
                .or(fc.limits.max_connections_per_address)
                .unwrap_or(defaults.per_address),
        };
        for (key, value) in
            [("max_connections", connections.total), ("max_connections_per_address", connections.per_address)]
        {
            if value == 0 {
                return Err(ConfigError::Invalid { key, message: "must be at least 1".into() });
            }
        }
        let permissions = PermissionPolicy {
            mode: over.received_permissions.or(fc.policy.received_permissions).unwrap_or_default(),
            extra_keys: permission_keys(fc.policy.permission_keys.unwrap_or_default())?,
            min_trust: unit_at(
                "policy.permissions_trust",
                fc.policy.permissions_trust.unwrap_or(DEFAULT_PERMISSIONS_TRUST),
            )?,
            peers: Vec::new(),
        };
        let trust_loopback = over.trust_loopback.or(fc.server.trust_loopback).unwrap_or(false);
        let names = server_names(over.names.or(fc.server.names).unwrap_or_default())?;
        let tls = over.tls.or(fc.tls);
        tls.check().map_err(|(key, message)| ConfigError::Invalid { key, message })?;
        Ok(Config {
            listen,
            health_listen,
            data_dir,
            secret,
            keys,
            accept_legacy: over.accept_legacy.or(fc.accept_legacy).unwrap_or(true),
            names,
            trust_loopback,
            replay_cache_capacity,
            skills_dir,
            sharing,
            max_body_bytes,
            body_bytes_in_flight,
            max_packets,
            page_bytes,
            request_timeout,
            header_read_timeout,
            policy,
            default_trust: unit_at(
                "policy.default_trust",
                fc.policy.default_trust.unwrap_or(super::DEFAULT_DISCOVERY_TRUST),
            )?,
            reshare_external: fc.policy.reshare_external.unwrap_or(true),
            intake: over.intake.or(fc.policy.intake).unwrap_or_default(),
            permissions,
            accept_full_url_hmac: fc.policy.accept_full_url_hmac.unwrap_or(true),
            mdns: over.mdns.unwrap_or(true),
            peers_file: over.peers,
            origin_limits,
            sender_limits,
            quarantine,
            history_depth: over.history_depth.or(fc.limits.history_depth).unwrap_or(DEFAULT_HISTORY_DEPTH),
            deletion_guard: Guard {
                max: over.max_bulk_delete.or(fc.limits.max_bulk_delete).unwrap_or(DEFAULT_MAX_BULK_DELETE),
                fraction: unit_at(
                    "limits.max_bulk_delete_fraction",
                    over.max_bulk_delete_fraction
                        .or(fc.limits.max_bulk_delete_fraction)
                        .unwrap_or(DEFAULT_MAX_BULK_DELETE_FRACTION),
                )?,
            },
            client_rate_limit,
            connections,
            tls,
        })
    }

    /// The policy on received skills' grants, knowing the configured `peers`.
    pub fn permission_policy(&self, peers: &super::PeersConfig) -> PermissionPolicy {
        let peers = peers
            .peers
            .iter()
            .map(|p| PeerTrust { url: p.url.clone(), instance: p.instance.clone(), trust: p.trust })
            .collect();
        PermissionPolicy { peers, ..self.permissions.clone() }
    }

    /// The limits every merge applies.
    pub fn merge_limits(&self) -> Limits {
        Limits {
            origin: self.origin_limits,
            sender: self.sender_limits,
            quarantine: self.quarantine,
            history_depth: self.history_depth,
        }
    }

    /// The node's own signing keys: the shared secret as `default` first,
    /// then the `[[key]]` entries (`SPEC.md` §10.1.1.3).
    pub fn own_keys(&self) -> Vec<SigningKey> {
        keys::own_keys(self.secret.as_ref(), &self.keys)
    }

    /// A configuration for tests: loopback port 0, everything under `dir`,
    /// no mDNS (test nodes must not find each other unless a test asks).
    pub fn for_tests(dir: &Path) -> Config {
        let over = Overrides {
            listen: Some("127.0.0.1:0".into()),
            data: Some(dir.join("data")),
            skills_dirs: vec![dir.join("skills")],
            mdns: Some(false),
            ..Overrides::default()
        };
        Config::resolve(None, over).expect("the test configuration is valid")
    }
}

/// The skills folders and the sharing mode: `--skills-dir` (each shared)
/// replaces the file's `skills_dir` and `[[folder]]`, which exclude each other.
fn sharing(
    data_dir: &Path,
    flags: Vec<PathBuf>,
    mode_flag: Option<String>,
    skills_dir: Option<PathBuf>,
    folders: Vec<FileFolder>,
    file: FileSharing,
) -> Result<Settings, ConfigError> {
    if skills_dir.is_some() && !folders.is_empty() {
        return Err(ConfigError::Invalid {
            key: "folder",
            message: "node.toml sets both skills_dir and [[folder]]; list every folder as [[folder]] instead"
                .into(),
        });
    }
    let folders: Vec<Folder> = if !flags.is_empty() {
        flags.into_iter().map(|path| Folder { path, share: true }).collect()
    } else if !folders.is_empty() {
        folders.into_iter().map(|f| Folder { path: f.path, share: f.share.unwrap_or(true) }).collect()
    } else {
        vec![Folder { path: skills_dir.unwrap_or_else(|| data_dir.join("skills")), share: true }]
    };
    for (i, folder) in folders.iter().enumerate() {
        if folders[..i].iter().any(|f| f.path == folder.path) {
            return Err(ConfigError::Invalid {
                key: "folder",
                message: format!(
                    "the skills folder {} is named twice; name each folder once",
                    folder.path.display()
                ),
            });
        }
    }
    let mode = match mode_flag.or(file.mode) {
        Some(text) => {
            text.parse::<Mode>().map_err(|message| ConfigError::Invalid { key: "sharing.mode", message })?
        }
        None => Mode::Shared,
    };
    let listed: BTreeSet<String> = file.skills.unwrap_or_default().into_iter().collect();
    for name in &listed {
        if let Err(e) = ecp_protocol::skill_doc::validate_name(name) {
            return Err(ConfigError::Invalid {
                key: "sharing.skills",
                message: format!("{name:?} is not a skill name: {e}"),
            });
        }
    }
    Ok(Settings { mode, listed, folders })
}

/// Checks `[server] names` (each a host, or `host:port`) and writes them
/// lower-cased, without blanks or repeats.
fn server_names(names: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        if !signed_auth::is_valid_authority(&name) && !signed_auth::is_valid_authority(&format!("{name}:1")) {
            return Err(ConfigError::Invalid {
                key: "server.names",
                message: format!(
                    "{name:?} is not a host or host:port (a DNS name, an IPv4 address or a bracketed IPv6 address)"
                ),
            });
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The shared secret: `--secret`, else `--secret-file`, else `secret`, else
/// `secret_file`, else the variable named by `secret_env` (which must be set
/// even when not used; a named file must be readable even when not used).
/// Empty means none, wherever it comes from: `--secret ""` turns a file's
/// secret off, and unlike `secret_env` in the other files, an empty
/// variable is no error.
fn shared_secret(
    (flag, flag_file): (Option<Secret>, Option<&Path>),
    (secret, secret_file, secret_env): (Option<Secret>, Option<&Path>, Option<&str>),
) -> Result<Option<Secret>, ConfigError> {
    let read = |key: &'static str, path: Option<&Path>| match path {
        Some(path) => Secret::from_file(path).map(Some).map_err(|e| ConfigError::Invalid {
            key,
            message: format!("cannot read the secret from {}: {e}", path.display()),
        }),
        None => Ok(None),
    };
    let (flag_file, secret_file) = (read("secret_file", flag_file)?, read("secret_file", secret_file)?);
    let from_env = match secret_env {
        Some(var) => Some(Secret::from_env(var).ok_or_else(|| ConfigError::Invalid {
            key: "secret_env",
            message: format!("environment variable {var} is not set"),
        })?),
        None => None,
    };
    Ok(flag.or(flag_file).or(secret).or(secret_file).or(from_env).filter(|s| !s.is_empty()))
}

/// The duration at `key`, or `default` when the file leaves it out.
fn duration_or(key: &'static str, text: Option<&str>, default: Duration) -> Result<Duration, ConfigError> {
    text.map_or(Ok(default), |text| {
        duration::parse(text).map_err(|e| ConfigError::Invalid { key, message: e.to_string() })
    })
}

/// `value` if it is between 0 and 1; the error names `key`.
fn unit_at(key: &'static str, value: f64) -> Result<f64, ConfigError> {
    unit(value).map_err(|e| ConfigError::Invalid { key, message: e.to_string() })
}

fn load(path: &Path) -> Result<FileConfig, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
    toml::from_str(&text)
        .map_err(|e| ConfigError::Parse { path: path.into(), message: e.message().to_owned() })
}

#[cfg(test)]
mod tests;

/// `[policy] permission_keys`, checked: each a frontmatter key (1–64
/// bytes of letters, digits, `-` and `_`), at most 64 of them.
fn permission_keys(keys: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { key: "policy.permission_keys", message };
    if keys.len() > MAX_PERMISSION_KEYS {
        return Err(invalid(format!("lists {} keys; at most {MAX_PERMISSION_KEYS} are allowed", keys.len())));
    }
    for key in &keys {
        let ok = (1..=64).contains(&key.len())
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !ok {
            return Err(invalid(format!(
                "{key:?} is not a frontmatter key; use 1-64 letters, digits, '-' or '_'"
            )));
        }
    }
    Ok(keys)
}
