//! Permission-bearing frontmatter of received skills: keys that grant an
//! agent something or make it run something (`allowed-tools` pre-approves
//! tools, `hooks` runs shell commands on events, plus `[policy]
//! permission_keys`) never reach the agent's folder from a stranger.
//!
//! [`ReceivedPermissions`] (`[policy] received_permissions`) decides: `strip`
//! removes the keys from the projected file of every received skill;
//! `keep-from-trusted` keeps them when the skill's *origin* is a configured
//! peer trusted at or above `[policy] permissions_trust` (never the trust
//! of a peer that only relayed it); `refuse` quarantines such skills at
//! intake ([`RefuseGrants`], stage policy).
//!
//! Only the file is changed, as with the stamp ([`crate::stamp`]): the store
//! keeps the body and its integrityHash as received and serves them
//! unchanged. [`strip`] removes whole top-level entries and checks its work:
//! the result read as YAML is the original less those keys, with the same
//! name and description to the protocol. A layout it cannot edit that way
//! falls back to a frontmatter of `name` and `description` alone — a grant
//! never passes because the text was odd.

use std::str::FromStr;
use std::sync::Arc;

use ecp_protocol::{AcceptPolicy, MergeContext, PolicyRefusal, SkillPacket, skill_doc};
use serde::Deserialize;
use yaml_rust2::{Yaml, YamlLoader};

use crate::store::Store;

/// Keys always treated as grants: `allowed-tools` pre-approves the tools it
/// names (the agent runs them without asking); `hooks` runs shell commands
/// on the agent's events.
pub const BUILTIN_KEYS: [&str; 2] = ["allowed-tools", "hooks"];

/// Default of `[policy] permissions_trust`: the trust a configured peer
/// needs for its own skills to keep their grants under `keep-from-trusted`.
pub const DEFAULT_PERMISSIONS_TRUST: f64 = 0.9;

/// Most entries of `[policy] permission_keys`.
pub const MAX_PERMISSION_KEYS: usize = 64;

/// `[policy] received_permissions`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceivedPermissions {
    /// Removed from the file of every received skill.
    #[default]
    Strip,
    /// Kept when the skill's origin is trusted enough, removed otherwise.
    KeepFromTrusted,
    /// Skills carrying them are quarantined at intake.
    Refuse,
}

impl FromStr for ReceivedPermissions {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "strip" => Ok(ReceivedPermissions::Strip),
            "keep-from-trusted" => Ok(ReceivedPermissions::KeepFromTrusted),
            "refuse" => Ok(ReceivedPermissions::Refuse),
            other => Err(format!(
                "{other:?} is not a received_permissions mode; write \"strip\", \"keep-from-trusted\" or \"refuse\""
            )),
        }
    }
}

/// A configured peer, as far as the trust of origins goes.
#[derive(Debug, Clone)]
pub struct PeerTrust {
    /// Its URL (the store learns its instance id under it).
    pub url: String,
    /// The instance id configured for it, if any.
    pub instance: Option<String>,
    /// Its configured trust.
    pub trust: f64,
}

/// What the node does with permission-bearing keys of received skills.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    /// `[policy] received_permissions`.
    pub mode: ReceivedPermissions,
    /// `[policy] permission_keys`: keys treated as grants besides [`BUILTIN_KEYS`].
    pub extra_keys: Vec<String>,
    /// `[policy] permissions_trust`.
    pub min_trust: f64,
    /// The configured peers.
    pub peers: Vec<PeerTrust>,
}

impl Default for PermissionPolicy {
    fn default() -> Self {
        PermissionPolicy {
            mode: ReceivedPermissions::default(),
            extra_keys: Vec::new(),
            min_trust: DEFAULT_PERMISSIONS_TRUST,
            peers: Vec::new(),
        }
    }
}

/// One permission-bearing entry of a frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The key.
    pub key: String,
    /// Its value in one line: a list's items, a map's keys.
    pub value: String,
}

impl std::fmt::Display for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.value)
    }
}

impl PermissionPolicy {
    /// Every key treated as a grant.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        BUILTIN_KEYS.iter().copied().chain(self.extra_keys.iter().map(String::as_str))
    }

    /// The grants in `body`'s frontmatter, in the order written: the keys
    /// as YAML reads them (however written), else as lines start with them.
    pub fn grants(&self, body: &str) -> Vec<Grant> {
        let Some((lines, close)) = crate::stamp::frontmatter_lines(body) else { return Vec::new() };
        let keys: Vec<&str> = self.keys().collect();
        let frontmatter = lines[1..close].concat();
        if !may_name_a_key(&frontmatter, &keys) {
            return Vec::new();
        }
        let grant = |key: &str, value: String| Grant { key: key.to_owned(), value };
        match single(&frontmatter) {
            Some(Yaml::Hash(map)) => map
                .iter()
                .filter_map(|(k, v)| {
                    let key = k.as_str().filter(|k| keys.contains(k))?;
                    Some(grant(key, one_line(v)))
                })
                .collect(),
            _ => lines[1..close]
                .iter()
                .filter_map(|line| top_level_key(line, &keys))
                .map(|key| grant(key, String::new()))
                .collect(),
        }
    }

    /// Whether the grants of a skill from `origin` stay in its file: only
    /// under `keep-from-trusted`, from a configured peer with that instance
    /// id (configured, or learned from its manifest) trusted enough.
    pub fn keeps(&self, origin: &str, store: Option<&Store>) -> bool {
        if self.mode != ReceivedPermissions::KeepFromTrusted {
            return false;
        }
        let learned = store.and_then(|s| s.peer_states().ok()).unwrap_or_default();
        self.peers.iter().filter(|p| p.trust >= self.min_trust).any(|p| {
            p.instance.as_deref().map_or_else(
                || learned.iter().any(|s| s.url == p.url && s.instance == origin),
                |i| i == origin,
            )
        })
    }
}

/// The key of a top-level frontmatter line, when it is one of `keys`.
fn top_level_key<'a>(line: &str, keys: &[&'a str]) -> Option<&'a str> {
    keys.iter().copied().find(|k| {
        [*k, &format!("\"{k}\""), &format!("'{k}'")]
            .iter()
            .any(|written| line.strip_prefix(written).is_some_and(|r| r.starts_with(':')))
    })
}

fn one_line(value: &Yaml) -> String {
    match value {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Real(r) => r.clone(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Array(items) => items.iter().map(one_line).collect::<Vec<_>>().join(", "),
        Yaml::Hash(map) => map.keys().map(one_line).collect::<Vec<_>>().join(", "),
        _ => String::new(),
    }
}

/// Whether YAML `text` can hold one of `keys` as a key: it spells one of
/// them out, or it holds a backslash (a double-quoted key may write a
/// character as an escape, `"allowed\u002dtools"`). Every other way of
/// writing a key — quoted, explicit `? key`, an anchor's alias — keeps its
/// text, so without either the full YAML read (the cost of most of a
/// received skill's projection) can tell nothing more.
fn may_name_a_key(text: &str, keys: &[&str]) -> bool {
    text.contains('\\') || keys.iter().any(|k| text.contains(k))
}

/// The one YAML document of `text`.
fn single(text: &str) -> Option<Yaml> {
    let mut docs = YamlLoader::load_from_str(text).ok()?;
    (docs.len() == 1).then(|| docs.remove(0))
}

/// `body` without the top-level entries of `policy`'s keys in its
/// frontmatter (see the module doc); `body` itself when it holds none.
pub fn strip(policy: &PermissionPolicy, body: &str) -> String {
    let Some((lines, close)) = crate::stamp::frontmatter_lines(body) else { return body.to_owned() };
    if policy.grants(body).is_empty() {
        return body.to_owned();
    }
    let keys: Vec<&str> = policy.keys().collect();
    let keys = keys.as_slice();
    let mut kept: Vec<&str> = vec![lines[0]];
    let mut skipping = false;
    for line in &lines[1..close] {
        if top_level_key(line, keys).is_some() {
            skipping = true;
            continue;
        }
        // An entry's value continues on indented lines, a block list also on `-` lines.
        if skipping && (line.trim().is_empty() || line.starts_with([' ', '\t', '-'])) {
            continue;
        }
        skipping = false;
        kept.push(line);
    }
    kept.extend(&lines[close..]);
    let out = kept.concat();
    if checked(body, &out, &lines[1..close].concat(), keys) {
        out
    } else {
        minimal(body, &lines[close..].concat())
    }
}

/// Whether `out` is `body` less the entries of `keys`.
fn checked(body: &str, out: &str, original: &str, keys: &[&str]) -> bool {
    let (Ok(before), Ok(after)) = (skill_doc::parse(body), skill_doc::parse(out)) else { return false };
    let (Some(before), Some(after)) = (before.frontmatter, after.frontmatter) else { return false };
    if before.name != after.name || before.description != after.description {
        return false;
    }
    let Some((lines, close)) = crate::stamp::frontmatter_lines(out) else { return false };
    let (Some(Yaml::Hash(mut want)), Some(Yaml::Hash(got))) =
        (single(original), single(&lines[1..close].concat()))
    else {
        return false;
    };
    for k in keys {
        want.remove(&Yaml::String((*k).to_owned()));
    }
    want == got
}

/// A frontmatter of `name` and `description` alone, then `rest` (the closing
/// fence and the body).
fn minimal(body: &str, rest: &str) -> String {
    let doc = skill_doc::parse(body).ok().and_then(|d| d.frontmatter);
    let quoted = |s: &str| serde_json::to_string(s).expect("a string encodes as JSON");
    let mut out = String::from("---\n");
    if let Some(doc) = doc {
        for (key, value) in [("name", doc.name), ("description", doc.description)] {
            if let Some(value) = value {
                out.push_str(&format!("{key}: {}\n", quoted(&value)));
            }
        }
    }
    out.push_str(rest);
    out
}

/// The node's accept policy, refusing packets that carry grants when
/// `received_permissions` is `refuse`.
pub struct RefuseGrants<'a, P> {
    /// The node's policy.
    pub inner: &'a P,
    /// The grant keys.
    pub policy: Arc<PermissionPolicy>,
}

impl<P: AcceptPolicy> AcceptPolicy for RefuseGrants<'_, P> {
    fn accept(&self, packet: &SkillPacket, ctx: &MergeContext<'_>) -> Result<(), PolicyRefusal> {
        self.inner.accept(packet, ctx)?;
        if self.policy.mode != ReceivedPermissions::Refuse {
            return Ok(());
        }
        let grants = self.policy.grants(&packet.skill_body);
        if grants.is_empty() {
            return Ok(());
        }
        let named: Vec<String> = grants.iter().map(ToString::to_string).collect();
        Err(PolicyRefusal::Custom(format!(
            "frontmatter grants permissions ({}) and received_permissions is \"refuse\"; approve it from the \
             quarantine to install it with them removed",
            named.join("; ")
        )))
    }

    fn max_packets(&self) -> usize {
        self.inner.max_packets()
    }

    fn structure_limits(&self) -> skill_doc::StructureLimits {
        self.inner.structure_limits()
    }

    fn bundle_limits(&self) -> ecp_protocol::bundle::BundleLimits {
        self.inner.bundle_limits()
    }

    fn scan_threshold(&self) -> ecp_protocol::scan::Severity {
        self.inner.scan_threshold()
    }

    fn max_clock_skew_secs(&self) -> i64 {
        self.inner.max_clock_skew_secs()
    }

    fn require_origin_signature(&self) -> bool {
        self.inner.require_origin_signature()
    }

    fn evidence_rule(&self) -> Option<ecp_protocol::outcomes::EvidenceRule> {
        self.inner.evidence_rule()
    }
}

#[cfg(test)]
mod tests;
