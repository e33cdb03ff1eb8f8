//! The ECP/1.2 keys in force while the node runs (`SPEC.md` §10.1.1): its
//! own, fixed at start (configured in [`crate::config`]), and its
//! peers' (`key_id` of a `[[peer]]` in peers.toml), gathered in a
//! [`Keyring`]; and the clock signatures are made and checked with.
//!
//! The HTTP layer verifies every signed request against the keyring's
//! current [`KeySet`]; the federator replaces the peers' part each time it
//! applies the peers file. A key set is an immutable snapshot behind an
//! `Arc`: a request keeps the set it started with, and a reload never waits
//! for requests in flight.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use ecp_protocol::signed_auth::{RequestVerifier, SigningKey};

/// Unix seconds now: the clock signatures are made and checked with.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The configured peer a key belongs to: a request signed with it is that
/// peer's (`SPEC.md` §10.1.7).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyOwner {
    /// The peer's base URL.
    pub url: String,
    /// The trust configured for it.
    pub trust: f64,
}

/// The keys in force at one moment: what requests are verified with.
#[derive(Debug)]
pub struct KeySet {
    verifier: RequestVerifier,
    owners: HashMap<String, KeyOwner>,
}

impl KeySet {
    /// The verifier over every key of the set.
    pub fn verifier(&self) -> &RequestVerifier {
        &self.verifier
    }

    /// The peer whose key `key_id` is; `None` for the node's own keys.
    pub fn owner(&self, key_id: &str) -> Option<&KeyOwner> {
        self.owners.get(key_id)
    }

    /// Whether the node holds no key at all: then it is open (`SPEC.md` §10.1.5.1).
    pub fn is_empty(&self) -> bool {
        self.verifier.is_empty()
    }
}

/// The node's own keys, fixed at start, and its peers' keys, replaced on
/// every application of the peers file.
#[derive(Debug)]
pub struct Keyring {
    own: Vec<SigningKey>,
    current: RwLock<Arc<KeySet>>,
}

impl Keyring {
    /// A keyring with the node's own keys and no peer keys yet.
    pub fn new(own: Vec<SigningKey>) -> Keyring {
        let current = RwLock::new(Arc::new(KeySet {
            verifier: RequestVerifier::new(own.clone()),
            owners: HashMap::new(),
        }));
        Keyring { own, current }
    }

    /// The node's own keys (`default` first when there is a shared secret).
    pub fn own(&self) -> &[SigningKey] {
        &self.own
    }

    /// The key the node signs with towards peers that have no key of their
    /// own: the shared secret (`default`), else the first `[[key]]`.
    pub fn default_key(&self) -> Option<&SigningKey> {
        self.own.first()
    }

    /// The keys in force now.
    pub fn current(&self) -> Arc<KeySet> {
        Arc::clone(&self.current.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Replaces the peers' keys. A peer key with the id of one of the node's
    /// own keys is left out (the node's key decides; a warning says so when
    /// the secrets differ), as is a second key with an id already taken.
    pub fn set_peer_keys(&self, peers: Vec<(SigningKey, KeyOwner)>) {
        let mut keys = self.own.clone();
        let mut owners = HashMap::new();
        for (key, owner) in peers {
            if let Some(taken) = keys.iter().find(|k| k.id() == key.id()) {
                if *taken != key {
                    tracing::warn!(peer = %owner.url, key_id = key.id(),
                        "the peer's key_id is already the id of another key; its key is not used to verify \
                         requests: give it an id of its own in both nodes' files");
                }
                continue;
            }
            owners.insert(key.id().to_owned(), owner);
            keys.push(key);
        }
        let set = Arc::new(KeySet { verifier: RequestVerifier::new(keys), owners });
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = set;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, secret: &str) -> SigningKey {
        SigningKey::new(id, secret.as_bytes()).unwrap()
    }

    #[test]
    fn peer_keys_follow_the_peers_and_never_shadow_the_nodes_own() {
        let ring = Keyring::new(vec![key("default", "mesh")]);
        assert!(!ring.current().is_empty());
        let owner = |url: &str| KeyOwner { url: url.into(), trust: 1.0 };
        ring.set_peer_keys(vec![
            (key("b-key", "bee"), owner("http://b")),
            (key("default", "other"), owner("http://c")),
            (key("b-key", "again"), owner("http://d")),
        ]);
        let set = ring.current();
        assert_eq!(set.owner("b-key"), Some(&owner("http://b")));
        assert_eq!(set.owner("default"), None, "the node's own key stays the node's");
        assert_eq!(set.verifier().key("default"), Some(&key("default", "mesh")));
        assert_eq!(set.verifier().key("b-key"), Some(&key("b-key", "bee")));
        ring.set_peer_keys(Vec::new());
        assert!(ring.current().verifier().key("b-key").is_none(), "a removed peer's key is gone");
        assert!(Keyring::new(Vec::new()).current().is_empty());
    }
}
