//! [`Holdings`]: the versions each peer is known to hold because it pushed
//! them to this node itself — a push it proved was its own (its key, node
//! key or client certificate) or, from a peer known by no proof, one
//! claiming its instance (the claim that gives the push its trust). A push
//! leaves such a version out (`SPEC.md` §10.2.11): the peer would merge it as
//! unchanged, after paying for the request, its checks and an audit line. In
//! a mesh, where a new skill reaches a node from several neighbours at
//! about the same time, that is most of the copies a node would otherwise
//! send back.
//!
//! Only memory, and only a shortcut: bounded, forgotten at restart and when
//! full. Whatever it forgets is pushed as before and merged as unchanged.

use std::collections::HashMap;
use std::sync::Mutex;

use ecp_protocol::SkillPacket;

/// Most versions remembered for all peers together (about 200 bytes each).
/// When a new one would go past it, everything is forgotten: the memory only
/// needs to hold what crossed the last few pushes.
pub const MAX_REMEMBERED: usize = 16_384;

/// A version as a push compares it: the same content, in the same state,
/// at a confidence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Version<'a> {
    /// `skillName`.
    pub(crate) name: &'a str,
    /// `integrityHash`.
    pub(crate) hash: &'a str,
    /// `bundleDigest` (empty for a plain skill).
    pub(crate) bundle: &'a str,
    /// A tombstone.
    pub(crate) deprecated: bool,
    /// The confidence it is held or sent at.
    pub(crate) confidence: f64,
}

impl<'a> Version<'a> {
    /// The version a packet carries.
    pub(crate) fn of(packet: &'a SkillPacket) -> Version<'a> {
        Version {
            name: &packet.skill_name,
            hash: &packet.integrity_hash,
            bundle: &packet.bundle_digest,
            deprecated: packet.deprecated,
            confidence: packet.confidence,
        }
    }
}

/// What a peer sent of one name.
#[derive(Debug)]
struct Held {
    hash: String,
    bundle: String,
    deprecated: bool,
    confidence: f64,
}

/// The versions peers (by URL) are known to hold. Shared by a node's
/// contexts; cheap to lock (never held across an await).
#[derive(Debug, Default)]
pub struct Holdings {
    peers: Mutex<Remembered>,
}

#[derive(Debug, Default)]
struct Remembered {
    by_peer: HashMap<String, HashMap<String, Held>>,
    count: usize,
}

impl Holdings {
    /// Remembers that the peer at `url` holds each of `versions` (it sent them).
    pub(crate) fn sent_by<'a>(&self, url: &str, versions: impl IntoIterator<Item = Version<'a>>) {
        let mut remembered = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        for v in versions {
            if remembered.count >= MAX_REMEMBERED {
                *remembered = Remembered::default();
            }
            let held = Held {
                hash: v.hash.to_owned(),
                bundle: v.bundle.to_owned(),
                deprecated: v.deprecated,
                confidence: v.confidence,
            };
            let Remembered { by_peer, count } = &mut *remembered;
            if by_peer.entry(url.to_owned()).or_default().insert(v.name.to_owned(), held).is_none() {
                *count += 1;
            }
        }
    }

    /// Whether the peer at `url` is known to hold `version` — the same
    /// content in the same state, at a confidence at least as high (a copy
    /// from us could not raise it, `SPEC.md` §7.9.2.4).
    pub(crate) fn holds(&self, url: &str, version: &Version<'_>) -> bool {
        let remembered = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        remembered.by_peer.get(url).and_then(|names| names.get(version.name)).is_some_and(|held| {
            held.hash == version.hash
                && held.bundle == version.bundle
                && held.deprecated == version.deprecated
                && held.confidence >= version.confidence
        })
    }

    /// How many versions are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version<'a>(name: &'a str, hash: &'a str, confidence: f64) -> Version<'a> {
        Version { name, hash, bundle: "", deprecated: false, confidence }
    }

    #[test]
    fn a_sent_version_is_held_at_its_confidence_and_below() {
        let holdings = Holdings::default();
        holdings.sent_by("http://p", [version("a", "h1", 0.8)]);
        assert!(holdings.holds("http://p", &version("a", "h1", 0.8)));
        assert!(holdings.holds("http://p", &version("a", "h1", 0.5)));
        assert!(!holdings.holds("http://p", &version("a", "h1", 0.9)), "ours could raise it");
        assert!(!holdings.holds("http://p", &version("a", "h2", 0.8)), "another version");
        assert!(!holdings.holds("http://q", &version("a", "h1", 0.8)), "another peer");
        let tombstone = Version { deprecated: true, ..version("a", "h1", 0.8) };
        assert!(!holdings.holds("http://p", &tombstone), "another state");
        let bundle = Version { bundle: "d", ..version("a", "h1", 0.8) };
        assert!(!holdings.holds("http://p", &bundle), "another bundle");
    }

    #[test]
    fn a_newer_version_sent_replaces_the_one_remembered() {
        let holdings = Holdings::default();
        holdings.sent_by("http://p", [version("a", "h1", 1.0)]);
        holdings.sent_by("http://p", [version("a", "h2", 1.0)]);
        assert!(!holdings.holds("http://p", &version("a", "h1", 1.0)));
        assert!(holdings.holds("http://p", &version("a", "h2", 1.0)));
        assert_eq!(holdings.len(), 1);
    }

    #[test]
    fn the_memory_is_bounded_and_forgets_everything_past_its_limit() {
        let holdings = Holdings::default();
        let names: Vec<String> = (0..=MAX_REMEMBERED).map(|i| format!("s{i}")).collect();
        holdings.sent_by("http://p", names[..MAX_REMEMBERED].iter().map(|n| version(n, "h", 1.0)));
        assert_eq!(holdings.len(), MAX_REMEMBERED, "at the limit everything is kept");
        assert!(holdings.holds("http://p", &version("s0", "h", 1.0)));
        holdings.sent_by("http://p", [version(&names[MAX_REMEMBERED], "h", 1.0)]);
        assert_eq!(holdings.len(), 1, "one past it starts over");
        assert!(!holdings.holds("http://p", &version("s0", "h", 1.0)));
        assert!(holdings.holds("http://p", &version(&names[MAX_REMEMBERED], "h", 1.0)));
    }
}
