//! The node's own ECP/1.2 signing keys as configured (`SPEC.md` §10.1.1):
//! the `[[key]]` entries of `node.toml`, checked, and the shared secret as
//! the key `default`; and the key id rules the peers file follows too.
//!
//! What it does not do: hold the keys in force while the node runs — that is
//! the [`Keyring`](crate::keys::Keyring).

use ecp_protocol::signed_auth::{SigningKey, is_valid_key_id};
use serde::Deserialize;

use super::{ConfigError, Secret, SecretSourceError, WeakSecret};

/// The id of the key made of the node's shared secret (`--secret`).
pub const DEFAULT_KEY_ID: &str = "default";

/// The rule key ids follow, for messages.
pub const KEY_ID_RULE: &str = "1 to 64 characters of A-Z a-z 0-9 . _ -";

/// One `[[key]]` of node.toml, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileKey {
    /// The key id requests name in `X-ECP-Key-Id`.
    pub id: String,
    /// The secret, as text; prefer `secret_env`.
    pub secret: Option<Secret>,
    /// Name of an environment variable holding the secret.
    pub secret_env: Option<String>,
}

/// The `[[key]]` entries resolved: ids checked and unique, secrets read from
/// the environment where `secret_env` says so. The id `default` is reserved
/// for the shared secret (`--secret`). Also those whose secret is weak
/// ([`super::weak_secret`]).
pub fn resolve_file_keys(keys: &[FileKey]) -> Result<(Vec<SigningKey>, Vec<WeakSecret>), ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { key: "key".into(), message };
    let mut out: Vec<SigningKey> = Vec::with_capacity(keys.len());
    let mut weak = Vec::new();
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
        let secret = match Secret::inline_or_env(k.secret.clone(), k.secret_env.as_deref()) {
            Ok(Some(secret)) => secret,
            Ok(None) => return Err(invalid(format!("{which}: give its secret or secret_env"))),
            Err(SecretSourceError::Both) => {
                return Err(invalid(format!("{which}: set either secret or secret_env, not both")));
            }
            Err(SecretSourceError::EnvUnset { var }) => {
                return Err(invalid(format!("{which}: environment variable {var} (secret_env) is not set")));
            }
            Err(SecretSourceError::Empty | SecretSourceError::EnvEmpty { .. }) => {
                return Err(invalid(format!("{which}: the secret is empty; give a long random one")));
            }
        };
        let key = SigningKey::new(k.id.clone(), secret.expose().as_bytes())
            .map_err(|_| invalid(format!("{which}: the id must be {KEY_ID_RULE}")))?;
        if let Some(weakness) = super::weak_secret::weakness(&secret) {
            weak.push(WeakSecret {
                name: format!("the secret of [[key]] {:?} in node.toml", k.id),
                weakness,
            });
        }
        out.push(key);
    }
    Ok((out, weak))
}

/// The node's own keys: the shared secret as `default` (first: it is the
/// key the node signs with towards peers that have none of their own), then
/// the `[[key]]` entries in file order.
pub fn own_keys(secret: Option<&Secret>, keys: &[SigningKey]) -> Vec<SigningKey> {
    let default = secret.filter(|s| !s.is_empty()).map(|s| {
        SigningKey::new(DEFAULT_KEY_ID, s.expose().as_bytes()).expect("`default` is a valid key id")
    });
    default.into_iter().chain(keys.iter().cloned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, secret: &str) -> SigningKey {
        SigningKey::new(id, secret.as_bytes()).unwrap()
    }

    #[test]
    fn the_shared_secret_is_the_default_key_and_comes_first() {
        let own = own_keys(Some(&Secret::new("s3cret")), &[key("k1", "one")]);
        assert_eq!(own.iter().map(SigningKey::id).collect::<Vec<_>>(), ["default", "k1"]);
        assert_eq!(own[0], key("default", "s3cret"));
        assert_eq!(own_keys(Some(&Secret::new("")), &[]), vec![]);
    }

    #[test]
    fn file_keys_are_checked_and_never_shown() {
        let k = |id: &str, secret: Option<&str>| FileKey {
            id: id.into(),
            secret: secret.map(Secret::new),
            secret_env: None,
        };
        let strong = "s".repeat(32);
        let (ok, weak) = resolve_file_keys(&[k("k1", Some("a")), k("k2", Some(&strong))]).unwrap();
        assert_eq!(ok, vec![key("k1", "a"), key("k2", &strong)]);
        assert_eq!(
            weak.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
            ["the secret of [[key]] \"k1\" in node.toml"]
        );
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
            (
                vec![FileKey {
                    id: "k1".into(),
                    secret: Some(Secret::new("a")),
                    secret_env: Some("ECP_TEST_SURELY_UNSET_KEY_VAR".into()),
                }],
                "not both",
            ),
        ] {
            let err = resolve_file_keys(&keys).unwrap_err().to_string();
            assert!(err.contains(expected) && err.starts_with("key:"), "{err}");
        }
        let shown = format!("{:?}", k("k1", Some("hush-hush")));
        assert!(!shown.contains("hush-hush"), "{shown}");
    }
}
