//! The node's own settings resolved into the values the rest of the node
//! trusts: [`Config::resolve`] takes each key's value from
//! [`super::sources`] (flag > environment > `node.toml` > default, the same
//! for every key), checks its range and combines the keys that go together
//! (the shared secret, the skills folders).
//!
//! What it does not do: read files other than `node.toml` and a secret file
//! (the TLS files are read when the node starts), or know which keys exist
//! (that is [`super::table`]).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ecp_protocol::StandardPolicy;
use ecp_protocol::signed_auth::{self, SigningKey};

use super::keys;
use super::sources::{FileFolder, Resolved, Source, Sources};
use super::{ConfigError, Secret};
use crate::connections::ConnectionLimits;
use crate::deletion_guard::Guard;
use crate::intake::{IntakeMode, Limits};
use crate::permissions::{MAX_PERMISSION_KEYS, PeerTrust, PermissionPolicy};
use crate::sharing::{Eligible, Folder, Mode, Settings};
use crate::store::{BlobLimits, KEPT_PER_SKILL, OriginLimits, QuarantineCaps, RetireRule};
use crate::tls::TlsFiles;

/// Largest allowed page budget: a page must stay far below what a puller
/// reads at most ([`crate::federation::client::MAX_ANSWER_BYTES`]).
const MAX_PAGE_BYTES: usize = 32 * 1024 * 1024;
/// Request-body bytes held at once by default: eight pushes of the largest
/// default size (or one of `max_body_bytes`, when that is larger).
const DEFAULT_BODY_BYTES_IN_FLIGHT: usize = 64 * 1024 * 1024;

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
    /// `store`: a hub's PostgreSQL database (a secret: its URL may hold a
    /// password); `None`: the node's own SQLite in the data folder.
    pub store: Option<Secret>,
    /// `trusted_proxy`: the balancers whose `X-Forwarded-For` names the
    /// client (review H3); empty: the header is never trusted.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// `hub_key_file`: the file holding a hub's node key (review H7), the
    /// same for every replica; `None`: the key kept in the hub's database.
    pub hub_key_file: Option<PathBuf>,
    /// Shared secret (X-ECP-HMAC, and the ECP/1.2 key `default`); `None`
    /// and no `keys` (nor peer keys) leave the node open.
    pub secret: Option<Secret>,
    /// The node's `[[key]]` signing keys, besides `default` (see [`Config::own_keys`]).
    pub keys: Vec<SigningKey>,
    /// Those of `keys` whose secret is weak ([`super::weak_secret`]): told
    /// apart while their text is at hand, since a key never shows it again.
    pub weak_keys: Vec<super::WeakSecret>,
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
    /// The blob store's quota per sender, cap and grace period.
    pub blobs: BlobLimits,
    /// When an import pass's deletions wait for the user.
    pub deletion_guard: Guard,
    /// Requests per client address.
    pub client_rate_limit: ClientRateLimit,
    /// Open connections, in all and per client address.
    pub connections: ConnectionLimits,
    /// When a failing skill is retired (`[outcomes]`, #19).
    pub outcomes: RetireRule,
    /// `[[agent]]`: the folders filled for each agent ([`crate::agents`]).
    pub agents: Vec<super::Agent>,
    /// New proposals one sender may make per rolling hour (`[proposals]
    /// per_hour`, #20; 0: no limit).
    pub proposals_per_hour: u64,
    /// How often undelivered proposals are sent again and answers asked for.
    pub proposals_poll_interval: std::time::Duration,
    /// TLS: the server's certificate and key (HTTPS when set), the CAs of
    /// required client certificates, the node's own client certificate.
    /// Checked for completeness here, read when the node starts.
    pub tls: TlsFiles,
}

impl Config {
    /// Resolves defaults, the file, the environment and the flags of `sources`.
    pub fn resolve(sources: &Sources) -> Result<Config, ConfigError> {
        Config::from_resolved(&Resolved::load(sources)?)
    }

    /// Checks and combines the values of `r`.
    pub fn from_resolved(r: &Resolved) -> Result<Config, ConfigError> {
        let listen = r.addr("listen").expect("listen has a default");
        let data_dir = r.path("data").expect("data has a default").to_path_buf();
        let sharing = sharing(r, &data_dir)?;
        let projected = sharing.folders.iter().find(|f| f.share).unwrap_or(&sharing.folders[0]);
        let skills_dir = projected.path.clone();
        let secret = shared_secret(r)?;
        let (keys, weak_keys) = keys::resolve_file_keys(&r.keys)?;
        let replay_cache_capacity = size(r, "replay_cache_capacity", 1)?;
        let mut policy = StandardPolicy::default();
        policy.structure.max_bytes = size(r, "limits.max_skill_bytes", 1)?;
        let guideline = ecp_protocol::merge::DESCRIPTION_GUIDELINE_CHARS as u64;
        policy.structure.max_description_bytes = size(r, "limits.max_description_bytes", guideline)?;
        policy.min_confidence = r.share("policy.min_confidence");
        policy.allow_origins = r.list("policy.allow_origins").map(<[String]>::to_vec);
        policy.deny_origins = r.list("policy.deny_origins").map(<[String]>::to_vec).unwrap_or_default();
        policy.require_origin_signature = r.bool("policy.require_origin_signature");
        let max_failure_rate = r.share("policy.max_reported_failure_rate");
        policy.evidence = (max_failure_rate < 1.0).then(|| ecp_protocol::outcomes::EvidenceRule {
            max_failure_rate,
            min_uses: r.count("policy.min_reported_uses") as f64,
        });
        let max_packets = size(r, "limits.max_packets", 1)?;
        policy.max_packets = max_packets;
        policy.bundle.max_files = size(r, "limits.bundle_max_files", 1)?;
        policy.bundle.max_file_bytes = at_least(r, "limits.bundle_max_file_bytes", 1)?;
        policy.bundle.max_bundle_bytes = at_least(r, "limits.bundle_max_bytes", 1)?;
        let blobs = BlobLimits {
            sender_bytes: r.count("limits.blob_quota_bytes"),
            total_bytes: r.count("limits.blob_store_bytes"),
            grace: r.duration("limits.blob_grace"),
        };
        let max_body_bytes = size(r, "limits.max_body_bytes", 1024)?;
        let body_bytes_in_flight = match r.count_opt("limits.body_bytes_in_flight") {
            Some(n) => {
                usize::try_from(n).map_err(|_| r.invalid("limits.body_bytes_in_flight", "is too large"))?
            }
            None => DEFAULT_BODY_BYTES_IN_FLIGHT.max(max_body_bytes),
        };
        if body_bytes_in_flight < max_body_bytes {
            return Err(r.invalid(
                "limits.body_bytes_in_flight",
                format!(
                    "must be at least max_body_bytes ({max_body_bytes}), or no push of the largest size could be read"
                ),
            ));
        }
        let page_bytes = size(r, "limits.page_bytes", 1)?;
        if page_bytes > MAX_PAGE_BYTES {
            return Err(r.invalid("limits.page_bytes", format!("must be from 1 to {MAX_PAGE_BYTES}")));
        }
        let origin_limits = OriginLimits {
            per_hour: r.count("limits.origin_limit_hour"),
            per_day: r.count("limits.origin_limit_day"),
        };
        let sender_limits = OriginLimits {
            per_hour: r.count("limits.sender_limit_hour"),
            per_day: r.count("limits.sender_limit_day"),
        };
        let quarantine = QuarantineCaps {
            entries: at_least(r, "limits.quarantine_entries", 1)?,
            bytes: at_least(r, "limits.quarantine_bytes", 1)?,
            body: r.count("limits.quarantine_body_bytes"),
        };
        let client_rate_limit = ClientRateLimit {
            per_minute: small(r, "limits.client_rate_limit")?,
            burst: small(r, "limits.client_burst")?,
            loopback: r.bool("limits.client_rate_limit_loopback"),
        };
        if client_rate_limit.per_minute > 0 && client_rate_limit.burst == 0 {
            return Err(r.invalid(
                "limits.client_burst",
                "must be at least 1 (turn the limit off with client_rate_limit = 0 instead)",
            ));
        }
        let connections = ConnectionLimits {
            total: size(r, "limits.max_connections", 1)?,
            per_address: size(r, "limits.max_connections_per_address", 1)?,
        };
        let permissions = PermissionPolicy {
            mode: choice(r, "policy.received_permissions")?,
            extra_keys: permission_keys(r)?,
            min_trust: r.share("policy.permissions_trust"),
            peers: Vec::new(),
        };
        let tls = TlsFiles {
            cert: r.path("tls.cert").map(Path::to_path_buf),
            key: r.path("tls.key").map(Path::to_path_buf),
            client_ca: r.path("tls.client_ca").map(Path::to_path_buf),
            client_cert: r.path("tls.client_cert").map(Path::to_path_buf),
            client_key: r.path("tls.client_key").map(Path::to_path_buf),
        };
        tls.check().map_err(|(key, message)| ConfigError::Invalid { key: key.to_owned(), message })?;
        let outcomes = retire_rule(r)?;
        Ok(Config {
            listen,
            health_listen: r.addr("server.health_listen"),
            data_dir,
            store: r.secret("store").cloned(),
            trusted_proxies: trusted_proxies(r)?,
            hub_key_file: r.path("hub_key_file").map(Path::to_path_buf),
            secret,
            keys,
            weak_keys,
            accept_legacy: r.bool("accept_legacy"),
            names: server_names(r)?,
            trust_loopback: r.bool("server.trust_loopback"),
            replay_cache_capacity,
            skills_dir,
            sharing,
            max_body_bytes,
            body_bytes_in_flight,
            max_packets,
            page_bytes,
            request_timeout: r.duration("limits.request_timeout"),
            header_read_timeout: r.duration("limits.header_read_timeout"),
            policy,
            default_trust: r.share("policy.default_trust"),
            reshare_external: r.bool("policy.reshare_external"),
            intake: choice(r, "policy.intake")?,
            permissions,
            accept_full_url_hmac: r.bool("policy.accept_full_url_hmac"),
            mdns: r.bool("mdns"),
            peers_file: r.path("peers").map(Path::to_path_buf),
            origin_limits,
            sender_limits,
            quarantine,
            history_depth: r.count("limits.history_depth"),
            blobs,
            deletion_guard: Guard {
                max: r.count("limits.max_bulk_delete"),
                fraction: r.share("limits.max_bulk_delete_fraction"),
            },
            client_rate_limit,
            connections,
            outcomes,
            agents: super::resolve_agents(&r.agents)?,
            proposals_per_hour: r.count("proposals.per_hour"),
            proposals_poll_interval: r.duration("proposals.poll_interval"),
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
            blobs: self.blobs,
        }
    }

    /// The node's own signing keys: the shared secret as `default` first,
    /// then the `[[key]]` entries (`SPEC.md` §10.1.1.3).
    pub fn own_keys(&self) -> Vec<SigningKey> {
        keys::own_keys(self.secret.as_ref(), &self.keys)
    }

    /// A configuration for tests: loopback port 0, everything under `dir`,
    /// no mDNS (test nodes must not find each other unless a test asks).
    /// The process's environment is not read: tests run the same anywhere.
    pub fn for_tests(dir: &Path) -> Config {
        let flags = super::Flags::default()
            .with("listen", "127.0.0.1:0")
            .with("data", dir.join("data").to_string_lossy())
            .with("skills-dir", dir.join("skills").to_string_lossy())
            .with("no-mdns", "true");
        Config::resolve(&Sources { flags, ..Sources::default() }).expect("the test configuration is valid")
    }
}

/// A count that must be at least `min`.
fn at_least(r: &Resolved, id: &str, min: u64) -> Result<u64, ConfigError> {
    let n = r.count(id);
    if n < min {
        return Err(r.invalid(id, format!("must be at least {min}")));
    }
    Ok(n)
}

/// A count of bytes or items held in memory: at least `min`, and a `usize`.
fn size(r: &Resolved, id: &str, min: u64) -> Result<usize, ConfigError> {
    usize::try_from(at_least(r, id, min)?).map_err(|_| r.invalid(id, "is too large for this machine"))
}

/// A count that fits 32 bits (rates).
fn small(r: &Resolved, id: &str) -> Result<u32, ConfigError> {
    u32::try_from(r.count(id)).map_err(|_| r.invalid(id, format!("must be at most {}", u32::MAX)))
}

/// A [`super::table::Kind::Choice`] key as the type it names.
fn choice<T: std::str::FromStr<Err = String>>(r: &Resolved, id: &str) -> Result<T, ConfigError> {
    r.text(id).expect("a choice has a default").parse().map_err(|message: String| r.invalid(id, message))
}

/// The skills folders and the sharing mode: `skills_dir` from a flag or the
/// environment replaces the file's `skills_dir` and `[[folder]]`, which
/// exclude each other.
fn sharing(r: &Resolved, data_dir: &Path) -> Result<Settings, ConfigError> {
    let dirs = r.setting("skills_dir");
    let given = r.paths("skills_dir").map(<[PathBuf]>::to_vec).unwrap_or_default();
    if dirs.source == Source::File && !r.folders.is_empty() {
        return Err(r.invalid(
            "skills_dir",
            "node.toml sets both skills_dir and [[folder]]; list every folder as [[folder]] instead",
        ));
    }
    // Given by a flag or the environment, they replace [[folder]]; in the
    // file, they cannot be there alongside it (checked above).
    let folders: Vec<Folder> = if !given.is_empty() {
        given.into_iter().map(|path| Folder { path, share: true }).collect()
    } else if !r.folders.is_empty() {
        r.folders
            .iter()
            .map(|f: &FileFolder| Folder { path: f.path.clone(), share: f.share.unwrap_or(true) })
            .collect()
    } else {
        vec![Folder { path: data_dir.join("skills"), share: true }]
    };
    for (i, folder) in folders.iter().enumerate() {
        if folders[..i].iter().any(|f| f.path == folder.path) {
            return Err(ConfigError::Invalid {
                key: "folder".into(),
                message: format!(
                    "the skills folder {} is named twice; name each folder once",
                    folder.path.display()
                ),
            });
        }
    }
    let mode: Mode = choice(r, "sharing.mode")?;
    let listed: BTreeSet<String> = r.list("sharing.skills").unwrap_or_default().iter().cloned().collect();
    for name in &listed {
        if let Err(e) = ecp_protocol::skill_doc::validate_name(name) {
            return Err(r.invalid("sharing.skills", format!("{name:?} is not a skill name: {e}")));
        }
    }
    let eligible = match r.text("sharing.eligible") {
        Some("proven") => Eligible::Proven {
            streak: at_least(r, "sharing.proven_streak", 1)?,
            confidence: r.share("sharing.proven_confidence"),
        },
        _ => Eligible::Always,
    };
    Ok(Settings { mode, listed, eligible, folders })
}

/// Checks `trusted_proxy`: IP addresses.
fn trusted_proxies(r: &Resolved) -> Result<Vec<std::net::IpAddr>, ConfigError> {
    let given = r.list("trusted_proxy").unwrap_or_default();
    let given = given.iter().map(|a| a.trim()).filter(|a| !a.is_empty());
    given
        .map(|a| {
            a.parse::<std::net::IpAddr>().map(|ip| ip.to_canonical()).map_err(|_| {
                r.invalid(
                    "trusted_proxy",
                    format!("{a:?} is not an IP address; give the balancer's address as it reaches the node, e.g. 10.0.0.5"),
                )
            })
        })
        .collect()
}

/// Checks `[server] names` (each a host, or `host:port`) and writes them
/// lower-cased, without blanks or repeats.
fn server_names(r: &Resolved) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for name in r.list("server.names").unwrap_or_default() {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        if !signed_auth::is_valid_authority(&name) && !signed_auth::is_valid_authority(&format!("{name}:1")) {
            return Err(r.invalid(
                "server.names",
                format!(
                    "{name:?} is not a host or host:port (a DNS name, an IPv4 address or a bracketed IPv6 address)"
                ),
            ));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The shared secret, from whichever of `secret`, `secret_file` and
/// `secret_env` binds most strongly (flag > environment > file; at the same
/// level in that order). A named file must be readable and a named variable
/// set even when another wins. Empty means none, wherever it comes from:
/// `--secret ""` turns a file's secret off, and unlike `secret_env` in the
/// other files, an empty variable is no error.
/// `[outcomes]`: the window holds at most the outcomes kept per skill, and
/// at least the uses the rate is taken over.
fn retire_rule(r: &Resolved) -> Result<RetireRule, ConfigError> {
    let window = r.count("outcomes.retire_window");
    let kept = KEPT_PER_SKILL as u64;
    if window == 0 || window > kept {
        return Err(r.invalid("outcomes.retire_window", format!("must be from 1 to {kept}")));
    }
    let min_uses = r.count("outcomes.retire_min_uses");
    if min_uses > window {
        return Err(r.invalid(
            "outcomes.retire_min_uses",
            format!("must be at most retire_window ({window}), or no skill could ever be retired; 0 turns retirement off"),
        ));
    }
    Ok(RetireRule { failure_rate: r.share("outcomes.retire_failure_rate"), min_uses, window })
}

fn shared_secret(r: &Resolved) -> Result<Option<Secret>, ConfigError> {
    let from_file = match r.path("secret_file") {
        Some(path) => Some(Secret::from_file(path).map_err(|e| {
            r.invalid("secret_file", format!("cannot read the secret from {}: {e}", path.display()))
        })?),
        None => None,
    };
    let from_env = match r.text("secret_env") {
        Some(var) => Some(
            Secret::from_env(var)
                .ok_or_else(|| r.invalid("secret_env", format!("environment variable {var} is not set")))?,
        ),
        None => None,
    };
    let candidates =
        [("secret", r.secret("secret").cloned()), ("secret_file", from_file), ("secret_env", from_env)];
    // The first of the strongest: max_by_key would keep the last of equals.
    let strongest =
        candidates.iter().filter(|(_, s)| s.is_some()).map(|(id, _)| r.setting(id).source.rank()).max();
    let chosen = candidates
        .into_iter()
        .find(|(id, s)| s.is_some() && Some(r.setting(id).source.rank()) == strongest)
        .and_then(|(_, s)| s);
    Ok(chosen.filter(|s| !s.is_empty()))
}

/// `[policy] permission_keys`, checked: each a frontmatter key (1–64
/// bytes of letters, digits, `-` and `_`), at most 64 of them.
fn permission_keys(r: &Resolved) -> Result<Vec<String>, ConfigError> {
    let keys = r.list("policy.permission_keys").unwrap_or_default().to_vec();
    let invalid = |message: String| r.invalid("policy.permission_keys", message);
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

#[cfg(test)]
mod tests;
