//! The ECP/1.2 signing keys this node holds (`SPEC.md` §10.1.1): its own —
//! `[[key]]` of node.toml, and `--secret` under the id `default` — and its
//! peers' (`key_id` of a `[[peer]]` in peers.toml), gathered in a [`Keyring`].
//!
//! The HTTP layer verifies every signed request against the keyring's
//! current [`KeySet`]; the federator replaces the peers' part each time it
//! applies the peers file. A key set is an immutable snapshot behind an
//! `Arc`: a request keeps the set it started with, and a reload never waits
//! for requests in flight.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use ecp_protocol::signed_auth::{RequestVerifier, SigningKey, is_valid_key_id};
use serde::Deserialize;

use crate::config::ConfigError;

/// The id of the key made of the node's shared secret (`--secret`).
pub const DEFAULT_KEY_ID: &str = "default";

/// The rule key ids follow, for messages.
pub const KEY_ID_RULE: &str = "1 to 64 characters of A-Z a-z 0-9 . _ -";

/// Unix seconds now: the clock signatures are made and checked with.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// One `[[key]]` of node.toml, as written.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileKey {
    /// The key id requests name in `X-ECP-Key-Id`.
    pub id: String,
    /// The secret, as text; prefer `secret_env`.
    pub secret: Option<String>,
    /// Name of an environment variable holding the secret.
    pub secret_env: Option<String>,
}

impl fmt::Debug for FileKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret.
        f.debug_struct("FileKey")
            .field("id", &self.id)
            .field("secret_env", &self.secret_env)
            .finish_non_exhaustive()
    }
}

/// The `[[key]]` entries resolved: ids checked and unique, secrets read from
/// the environment where `secret_env` says so. The id `default` is reserved
/// for the shared secret (`--secret`).
pub fn resolve_file_keys(keys: &[FileKey]) -> Result<Vec<SigningKey>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { key: "key", message };
    let mut out: Vec<SigningKey> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        let which = format!("[[key]] #{} (id {:?})", i + 1, k.id);
        if !is_valid_key_id(&k.id) {
            return Err(invalid(format!("{which}: the id must be {KEY_ID_RULE}")));
        }
        if k.id == DEFAULT_KEY_ID {
            return Err(invalid(format!(
                "{which}: the id {DEFAULT_KEY_ID} is the node's shared secret (--secret or secret); \
                 give this key another id"
            )));
        }
        if out.iter().any(|o| o.id() == k.id) {
            return Err(invalid(format!("{which}: the id is used twice; give each [[key]] its own id")));
        }
        let secret = match (&k.secret, &k.secret_env) {
            (Some(_), Some(_)) => {
                return Err(invalid(format!("{which}: set either secret or secret_env, not both")));
            }
            (Some(s), None) => s.clone(),
            (None, Some(var)) => std::env::var(var).map_err(|_| {
                invalid(format!("{which}: environment variable {var} (secret_env) is not set"))
            })?,
            (None, None) => return Err(invalid(format!("{which}: give its secret or secret_env"))),
        };
        if secret.is_empty() {
            return Err(invalid(format!("{which}: the secret is empty; give a long random one")));
        }
        let key = SigningKey::new(k.id.clone(), secret.into_bytes())
            .map_err(|_| invalid(format!("{which}: the id must be {KEY_ID_RULE}")))?;
        out.push(key);
    }
    Ok(out)
}

/// The node's own keys: the shared secret as `default` (first: it is the
/// key the node signs with towards peers that have none of their own), then
/// the `[[key]]` entries in file order.
pub fn own_keys(secret: Option<&str>, keys: &[SigningKey]) -> Vec<SigningKey> {
    let default = secret
        .filter(|s| !s.is_empty())
        .map(|s| SigningKey::new(DEFAULT_KEY_ID, s.as_bytes()).expect("`default` is a valid key id"));
    default.into_iter().chain(keys.iter().cloned()).collect()
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
    fn the_shared_secret_is_the_default_key_and_comes_first() {
        let own = own_keys(Some("s3cret"), &[key("k1", "one")]);
        assert_eq!(own.iter().map(SigningKey::id).collect::<Vec<_>>(), ["default", "k1"]);
        assert_eq!(own[0], key("default", "s3cret"));
        assert_eq!(own_keys(Some(""), &[]), vec![]);
    }

    #[test]
    fn file_keys_are_checked_and_never_shown() {
        let k = |id: &str, secret: Option<&str>| FileKey {
            id: id.into(),
            secret: secret.map(str::to_owned),
            secret_env: None,
        };
        let ok = resolve_file_keys(&[k("k1", Some("a")), k("k2", Some("b"))]).unwrap();
        assert_eq!(ok, vec![key("k1", "a"), key("k2", "b")]);
        for (keys, expected) in [
            (vec![k("bad id", Some("a"))], "A-Z"),
            (vec![k("default", Some("a"))], "another id"),
            (vec![k("k1", Some("a")), k("k1", Some("b"))], "twice"),
            (vec![k("k1", None)], "secret_env"),
            (vec![k("k1", Some(""))], "empty"),
            (
                vec![FileKey {
                    id: "k1".into(),
                    secret: None,
                    secret_env: Some("ECP_TEST_SURELY_UNSET_KEY_VAR".into()),
                }],
                "is not set",
            ),
        ] {
            let err = resolve_file_keys(&keys).unwrap_err().to_string();
            assert!(err.contains(expected) && err.starts_with("key:"), "{err}");
        }
        let shown = format!("{:?}", k("k1", Some("hush-hush")));
        assert!(!shown.contains("hush-hush"), "{shown}");
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
