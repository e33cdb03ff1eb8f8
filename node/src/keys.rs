//! The ECP/1.2 keys in force while the node runs (`SPEC.md` §10.1.1): its
//! own, fixed at start (configured in [`crate::config`]), and its
//! peers' (`key_id` of a `[[peer]]` in peers.toml), gathered in a
//! [`Keyring`]; and the clock signatures are made and checked with.
//!
//! Beside the shared keys, the keyring knows the peers by what proves
//! them without a shared secret (`SPEC.md` §13.11): the key id of a peer's
//! node key (`key`), and the SHA-256 of its client certificate or of that
//! certificate's public key (`cert_fingerprint`, `cert_key_fingerprint`).
//! These are public: they identify, they do not close the node.
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
    /// Key id of a node key → the peer it proves.
    node_keys: HashMap<String, KeyOwner>,
    /// SHA-256 of a client certificate or of its public key → the peer.
    certs: HashMap<[u8; 32], KeyOwner>,
}

/// What proves each configured peer: replaced whole on every application
/// of the peers file.
#[derive(Debug, Default)]
pub struct PeerProofs {
    /// Its own ECP/1.2 key (`key_id`).
    pub shared: Vec<(SigningKey, KeyOwner)>,
    /// The key id of its node key (`key`).
    pub node_keys: Vec<(String, KeyOwner)>,
    /// SHA-256 fingerprints of its client certificate or of its public key.
    pub certs: Vec<([u8; 32], KeyOwner)>,
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

    /// The peer whose node key has the key id `key_id`.
    pub fn node_key_owner(&self, key_id: &str) -> Option<&KeyOwner> {
        self.node_keys.get(key_id)
    }

    /// The peer a client certificate proves: by the SHA-256 of the
    /// certificate, else of its public key.
    pub fn cert_owner(&self, cert: &crate::tls::ClientCert) -> Option<&KeyOwner> {
        self.certs.get(&cert.sha256).or_else(|| cert.key_sha256.and_then(|k| self.certs.get(&k)))
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
            node_keys: HashMap::new(),
            certs: HashMap::new(),
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

    /// Replaces the peers' keys and proofs. A peer key with the id of one
    /// of the node's own keys is left out (the node's key decides; a warning
    /// says so when the secrets differ), as is a second key with an id
    /// already taken.
    pub fn set_peer_keys(&self, peers: PeerProofs) {
        let mut keys = self.own.clone();
        let mut owners = HashMap::new();
        for (key, owner) in peers.shared {
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
        let set = Arc::new(KeySet {
            verifier: RequestVerifier::new(keys),
            owners,
            node_keys: peers.node_keys.into_iter().collect(),
            certs: peers.certs.into_iter().collect(),
        });
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
        ring.set_peer_keys(PeerProofs {
            shared: vec![
                (key("b-key", "bee"), owner("http://b")),
                (key("default", "other"), owner("http://c")),
                (key("b-key", "again"), owner("http://d")),
            ],
            ..PeerProofs::default()
        });
        let set = ring.current();
        assert_eq!(set.owner("b-key"), Some(&owner("http://b")));
        assert_eq!(set.owner("default"), None, "the node's own key stays the node's");
        assert_eq!(set.verifier().key("default"), Some(&key("default", "mesh")));
        assert_eq!(set.verifier().key("b-key"), Some(&key("b-key", "bee")));
        ring.set_peer_keys(PeerProofs::default());
        assert!(ring.current().verifier().key("b-key").is_none(), "a removed peer's key is gone");
        assert!(Keyring::new(Vec::new()).current().is_empty());
    }

    #[test]
    fn node_keys_and_certificates_prove_peers_without_closing_the_node() {
        let ring = Keyring::new(Vec::new());
        let owner = |url: &str| KeyOwner { url: url.into(), trust: 0.9 };
        ring.set_peer_keys(PeerProofs {
            node_keys: vec![("KEY-A".into(), owner("http://a"))],
            certs: vec![([1; 32], owner("http://b")), ([2; 32], owner("http://c"))],
            ..PeerProofs::default()
        });
        let set = ring.current();
        assert!(set.is_empty(), "public keys and fingerprints are no secret: the node stays open");
        assert_eq!(set.node_key_owner("KEY-A"), Some(&owner("http://a")));
        assert_eq!(set.node_key_owner("KEY-B"), None);
        let cert = |sha256, key_sha256| crate::tls::ClientCert { sha256, key_sha256 };
        assert_eq!(set.cert_owner(&cert([1; 32], Some([9; 32]))), Some(&owner("http://b")));
        assert_eq!(set.cert_owner(&cert([9; 32], Some([2; 32]))), Some(&owner("http://c")), "by its key");
        assert_eq!(set.cert_owner(&cert([9; 32], None)), None);
    }
}
