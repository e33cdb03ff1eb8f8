//! `peers.toml`: whom this node federates with, and how often.
//!
//! The example file at the top of the repository documents every key. Parsed
//! here with serde (unknown keys refused), then resolved in one step into
//! [`PeersConfig`]: defaults filled in, durations and cron expressions
//! checked, URLs normalised, secrets and keys read from the environment,
//! certificate files (`ca`, `client_cert`, `client_key`) read and checked.
//! Every error names the key (`peer[1].trust`) or the line it comes from.
//!
//! What it does not do: run anything ([`crate::federation`] does), or watch
//! the file (the node reloads it on SIGHUP and when it changes).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ecp_protocol::signed_auth::{SigningKey, is_valid_key_id};
use serde::Deserialize;

use super::keys::{DEFAULT_KEY_ID, KEY_ID_RULE};
use super::{Secret, SecretSourceError, duration, unit};
use crate::tls::{PeerTls, TlsError};

/// Interval of a peer without its own `interval` or `cron`, when
/// `[federation]` sets neither.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// Time allowed for one request to a peer (connect, send, read the answer).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Trust in a configured peer that sets no `trust`.
pub const DEFAULT_CONFIGURED_TRUST: f64 = 0.9;
/// Trust in a discovered peer (and, as in `SPEC.md` §8.1.2, in anyone
/// nobody configured).
pub const DEFAULT_DISCOVERY_TRUST: f64 = 0.6;

/// A problem with the peers file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PeersError {
    /// The file could not be read.
    #[error("cannot read peers file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Not TOML, an unknown key, or a value of the wrong type.
    #[error("peers file {file}, line {line}: {message}")]
    Parse {
        /// The file (as given).
        file: String,
        /// 1-based line of the problem.
        line: usize,
        /// What the parser said, with the offending line quoted.
        message: String,
    },
    /// A value is out of range or inconsistent.
    #[error("peers file {file}: {key}: {message}")]
    Invalid {
        /// The file (as given).
        file: String,
        /// The key, e.g. `peer[1].trust`.
        key: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A certificate or key file of a `[[peer]]` is missing or unusable.
    #[error("peers file {file}: {source}")]
    Tls {
        /// The file (as given).
        file: String,
        /// What is wrong with the certificate file; it names the key.
        source: TlsError,
    },
}

/// A peer's own ECP/1.2 key (`key_id` with `key_secret` or `key_secret_env`):
/// both nodes configure it for each other, requests between them are signed
/// with it, and a request signed with it is that peer's (`SPEC.md` §10.1.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerKey {
    /// The key id (`X-ECP-Key-Id`).
    pub id: String,
    /// The secret.
    pub secret: Secret,
}

impl PeerKey {
    /// The key, for signing and verifying.
    pub fn signing_key(&self) -> SigningKey {
        SigningKey::new(self.id.clone(), self.secret.expose().as_bytes())
            .expect("key ids are checked when the peers file is read")
    }
}

/// How a configured peer proves who it is when it connects to this node,
/// beside or instead of a shared key (`SPEC.md` §13.11): a request signed
/// with its node key, or a client certificate (mTLS). A push so proven gets
/// its `trust`; a push that merely claims its instance does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBy {
    /// The key id of its node key (`key`: a key id or the public key).
    pub key_id: Option<String>,
    /// SHA-256 of its client certificate, DER (`cert_fingerprint`).
    pub cert: Option<[u8; 32]>,
    /// SHA-256 of its client certificate's public key, DER
    /// SubjectPublicKeyInfo (`cert_key_fingerprint`): stays across renewals
    /// with the same key.
    pub cert_key: Option<[u8; 32]>,
}

impl KnownBy {
    /// Whether the peer can prove itself at all.
    pub fn any(&self) -> bool {
        self.key_id.is_some() || self.cert.is_some() || self.cert_key.is_some()
    }
}

/// When a peer is contacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// Every so often (the first round right away).
    Every(Duration),
    /// At the times of a cron expression with a seconds field
    /// (`"0 */5 * * * *"`; a five-field expression gets second 0 prepended).
    Cron(String),
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Every(d) => write!(f, "every {}", humantime::format_duration(*d)),
            Schedule::Cron(expr) => write!(f, "cron {expr:?}"),
        }
    }
}

/// The resolved `peers.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct PeersConfig {
    /// `[federation]`.
    pub federation: FederationSettings,
    /// `[discovery]`.
    pub discovery: DiscoverySettings,
    /// `[[peer]]`, in file order; URLs are unique.
    pub peers: Vec<PeerConfig>,
    /// `[origin_keys]`: origins pinned to a key id (`SPEC.md` §13.6),
    /// instance → key id in its written form, by instance.
    pub origin_keys: Vec<(String, String)>,
}

impl Default for PeersConfig {
    fn default() -> Self {
        PeersConfig {
            federation: FederationSettings {
                schedule: Schedule::Every(DEFAULT_INTERVAL),
                timeout: DEFAULT_TIMEOUT,
                reshare_external: None,
            },
            discovery: DiscoverySettings { enabled: true, trust: DEFAULT_DISCOVERY_TRUST },
            peers: Vec::new(),
            origin_keys: Vec::new(),
        }
    }
}

/// `[federation]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct FederationSettings {
    /// Default schedule of every peer.
    pub schedule: Schedule,
    /// Time allowed for one request to a peer.
    pub timeout: Duration,
    /// Re-serve received skills; `None` leaves the node's own setting
    /// (`[policy] reshare_external` of node.toml, default true).
    pub reshare_external: Option<bool>,
}

/// `[discovery]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverySettings {
    /// Whether discovered nodes become (temporary) peers.
    pub enabled: bool,
    /// Trust in a discovered peer.
    pub trust: f64,
}

/// One `[[peer]]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerConfig {
    /// Base URL, normalised: no trailing slash, no query.
    pub url: String,
    /// Its shared secret (from `secret` or `secret_env`): X-ECP-HMAC
    /// towards a legacy peer, and the ECP/1.2 key `default` otherwise.
    pub secret: Option<Secret>,
    /// Its own ECP/1.2 key, when configured.
    pub key: Option<PeerKey>,
    /// A peer that speaks only ECP/1.1 (Go): also send X-ECP-HMAC, and take
    /// its answers unsigned.
    pub legacy: bool,
    /// Trust in what comes from it, 0–1.
    pub trust: f64,
    /// Pull from it on its schedule.
    pub pull: bool,
    /// Push local changes to it as they happen.
    pub push: bool,
    /// Its own schedule; `None` uses `[federation]`'s.
    pub schedule: Option<Schedule>,
    /// The instance id it must have; `None` learns it from its manifest.
    pub instance: Option<String>,
    /// Its node key and client certificate, by which its pushes prove it.
    pub known_by: KnownBy,
    /// For an `https` URL: the CA to trust instead of the system's roots
    /// (`ca`), the certificate to present instead of the node's own
    /// (`client_cert`, `client_key`). Read when the file is loaded.
    pub tls: PeerTls,
}

// ---- the file as written ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    federation: FileFederation,
    #[serde(default)]
    discovery: FileDiscovery,
    #[serde(default)]
    peer: Vec<FilePeer>,
    #[serde(default)]
    origin_keys: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFederation {
    interval: Option<String>,
    cron: Option<String>,
    timeout: Option<String>,
    reshare_external: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDiscovery {
    enabled: Option<bool>,
    trust: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePeer {
    url: String,
    secret: Option<Secret>,
    secret_env: Option<String>,
    key_id: Option<String>,
    key_secret: Option<Secret>,
    key_secret_env: Option<String>,
    legacy: Option<bool>,
    trust: Option<f64>,
    pull: Option<bool>,
    push: Option<bool>,
    interval: Option<String>,
    cron: Option<String>,
    instance: Option<String>,
    key: Option<String>,
    cert_fingerprint: Option<String>,
    cert_key_fingerprint: Option<String>,
    ca: Option<PathBuf>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
}

impl PeersConfig {
    /// Reads and resolves a peers file.
    pub fn load(path: &Path) -> Result<PeersConfig, PeersError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| PeersError::Read { path: path.into(), source })?;
        PeersConfig::parse(&text, &path.display().to_string())
    }

    /// Resolves the text of a peers file; `file` names it in errors, and
    /// relative certificate paths are relative to its folder.
    pub fn parse(text: &str, file: &str) -> Result<PeersConfig, PeersError> {
        let raw: File = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start).min(text.len());
            let line = text[..at].matches('\n').count() + 1;
            let quoted = text.lines().nth(line - 1).map(str::trim).unwrap_or_default();
            let message = if quoted == "[peer]" {
                "[peer] makes one table, but peers are a list: write [[peer]] (two brackets) above each peer's keys"
                    .to_owned()
            } else {
                e.message().trim().to_owned()
            };
            let message = if quoted.is_empty() { message } else { format!("`{quoted}`: {message}") };
            PeersError::Parse { file: file.to_owned(), line, message }
        })?;
        let invalid =
            |key: String, message: String| PeersError::Invalid { file: file.to_owned(), key, message };

        let default_schedule = schedule(
            ("federation.interval", raw.federation.interval.as_deref()),
            ("federation.cron", raw.federation.cron.as_deref()),
        )
        .map_err(|(k, m)| invalid(k, m))?
        .unwrap_or(Schedule::Every(DEFAULT_INTERVAL));
        let timeout = match raw.federation.timeout.as_deref() {
            None => DEFAULT_TIMEOUT,
            Some(text) => {
                duration::parse(text).map_err(|e| invalid("federation.timeout".into(), e.to_string()))?
            }
        };
        let discovery = DiscoverySettings {
            enabled: raw.discovery.enabled.unwrap_or(true),
            trust: unit(raw.discovery.trust.unwrap_or(DEFAULT_DISCOVERY_TRUST))
                .map_err(|e| invalid("discovery.trust".into(), e.to_string()))?,
        };

        let mut peers: Vec<PeerConfig> = Vec::with_capacity(raw.peer.len());
        for (i, p) in raw.peer.into_iter().enumerate() {
            let peer = resolve_peer(file, i, p, &peers)?;
            peers.push(peer);
        }
        Ok(PeersConfig {
            federation: FederationSettings {
                schedule: default_schedule,
                timeout,
                reshare_external: raw.federation.reshare_external,
            },
            discovery,
            peers,
            origin_keys: pinned_keys(raw.origin_keys).map_err(|(k, m)| invalid(k, m))?,
        })
    }

    /// The schedule `peer` runs on.
    pub fn schedule_of(&self, peer: &PeerConfig) -> Schedule {
        peer.schedule.clone().unwrap_or_else(|| self.federation.schedule.clone())
    }
}

/// The `[[peer]]` at index `i`, resolved; `earlier` are the ones before it,
/// whose URLs and key ids it must not repeat.
fn resolve_peer(file: &str, i: usize, p: FilePeer, earlier: &[PeerConfig]) -> Result<PeerConfig, PeersError> {
    let key = |field: &str| format!("peer[{i}].{field}");
    let invalid = |field: &str, message: String| PeersError::Invalid {
        file: file.to_owned(),
        key: key(field),
        message,
    };
    let url = normalise_url(&p.url).map_err(|m| invalid("url", m))?;
    if earlier.iter().any(|q| q.url == url) {
        return Err(invalid("url", format!("{url} is listed twice; keep one [[peer]] per URL")));
    }
    let known_by = known_by(&p, earlier).map_err(|(field, m)| invalid(field, m))?;
    let secret =
        peer_secret("secret", p.secret, p.secret_env.as_deref(), "remove it or give the shared secret")
            .map_err(|(field, m)| invalid(&field, m))?;
    let peer_key = match p.key_id {
        None if p.key_secret.is_none() && p.key_secret_env.is_none() => None,
        None => {
            return Err(invalid("key_id", "is missing: a key_secret needs the key_id it goes with".into()));
        }
        Some(id) if !is_valid_key_id(&id) => {
            return Err(invalid("key_id", format!("{id:?} is not {KEY_ID_RULE}")));
        }
        Some(id) if id == DEFAULT_KEY_ID => {
            return Err(invalid(
                "key_id",
                format!(
                    "{DEFAULT_KEY_ID} is the id of a node's shared secret: give the peer's shared \
                     secret in secret, or choose another key id"
                ),
            ));
        }
        Some(id) => {
            match peer_secret(
                "key_secret",
                p.key_secret,
                p.key_secret_env.as_deref(),
                "give the key's secret",
            )
            .map_err(|(field, m)| invalid(&field, m))?
            {
                Some(secret) => Some(PeerKey { id, secret }),
                None => {
                    return Err(invalid(
                        "key_secret",
                        "is missing: give key_secret or key_secret_env".into(),
                    ));
                }
            }
        }
    };
    if let Some(k) = &peer_key
        && let Some(j) = earlier.iter().position(|q| q.key.as_ref().is_some_and(|o| o.id == k.id))
    {
        return Err(invalid(
            "key_id",
            format!("{:?} is already the key of peer[{j}]; each peer needs a key of its own", k.id),
        ));
    }
    let trust =
        unit(p.trust.unwrap_or(DEFAULT_CONFIGURED_TRUST)).map_err(|e| invalid("trust", e.to_string()))?;
    let schedule = schedule((&key("interval"), p.interval.as_deref()), (&key("cron"), p.cron.as_deref()))
        .map_err(|(k, message)| PeersError::Invalid { file: file.to_owned(), key: k, message })?;
    let instance = match p.instance {
        Some(id) if id.trim().is_empty() || id.len() > 128 || id.chars().any(char::is_control) => {
            return Err(invalid("instance", "must be an instance id (1–128 printable bytes)".into()));
        }
        other => other,
    };
    let tls = peer_tls(file, &url, (p.ca, p.client_cert, p.client_key), &key)?;
    Ok(PeerConfig {
        url,
        secret,
        key: peer_key,
        legacy: p.legacy.unwrap_or(false),
        trust,
        pull: p.pull.unwrap_or(true),
        push: p.push.unwrap_or(false),
        schedule,
        instance,
        known_by,
        tls,
    })
}

/// A base URL as peers are keyed: `http` or `https`, a host, no user
/// information, query or fragment, no trailing slash.
pub fn normalise_url(text: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(text.trim())
        .map_err(|e| format!("{text:?} is not a URL ({e}); write e.g. \"http://192.0.2.7:7327\""))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{text:?}: the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{text:?} names no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text:?} carries credentials; put the secret in secret or secret_env"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{text:?}: give the node's base URL, without a query or fragment"));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// `interval` or `cron` (at most one of them).
fn schedule(
    interval: (&str, Option<&str>),
    cron: (&str, Option<&str>),
) -> Result<Option<Schedule>, (String, String)> {
    match (interval.1, cron.1) {
        (Some(_), Some(_)) => {
            Err((cron.0.to_owned(), format!("set either {} or {}, not both", interval.0, cron.0)))
        }
        (Some(text), None) => duration::parse(text)
            .map(|d| Some(Schedule::Every(d)))
            .map_err(|e| (interval.0.to_owned(), e.to_string())),
        (None, Some(expr)) => {
            cron_expression(expr).map(|e| Some(Schedule::Cron(e))).map_err(|m| (cron.0.to_owned(), m))
        }
        (None, None) => Ok(None),
    }
}

/// Checks a cron expression; a classic five-field one gets second 0 prepended.
pub fn cron_expression(text: &str) -> Result<String, String> {
    let fields = text.split_whitespace().count();
    let expr = match fields {
        5 => format!("0 {}", text.trim()),
        6 | 7 => text.split_whitespace().collect::<Vec<_>>().join(" "),
        _ => {
            return Err(format!(
                "{text:?} is not a cron expression: write \"sec min hour day month weekday\", e.g. \"0 */5 * * * *\""
            ));
        }
    };
    tokio_cron_scheduler::Job::new_async(expr.as_str(), |_, _| Box::pin(async {}))
        .map(|_| expr.clone())
        .map_err(|e| format!("{text:?} is not a valid cron expression ({e:?})"))
}

mod edit;
mod proof;

pub use edit::{add_peer, remove_peer};
use proof::{known_by, peer_secret, peer_tls};

/// `[origin_keys]`, checked: each instance a valid id, each key a key id
/// (case and dashes forgiven, its check characters right).
fn pinned_keys(
    raw: std::collections::BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, (String, String)> {
    raw.into_iter()
        .map(|(instance, key)| {
            let at = format!("origin_keys.{instance}");
            ecp_protocol::merge::check_instance_id(&instance).map_err(|m| (at.clone(), format!("instance {m}")))?;
            let key_id = ecp_protocol::identity::parse_key_id(&key).ok_or_else(|| {
                (at, format!("{key:?} is not a key id (like ABCDEF2-GHIJKL3-MNOPQR4-STUVWX5, shown by `ecp-node status` or the origin's manifest)"))
            })?;
            Ok((instance, key_id))
        })
        .collect()
}

#[cfg(test)]
mod tests;
