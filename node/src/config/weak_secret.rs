//! Which secrets are too weak to accept requests with: shorter than
//! [`MIN_SECRET_BYTES`], or one of the [`PLACEHOLDER_SECRETS`] the examples
//! ship (the one list of them; a test keeps it equal to what `deploy/` and
//! `peers.toml` hold). [`weak_secrets`] names each such secret of a node:
//! its shared secret, its `[[key]]`s and the `key_secret` of each
//! `[[peer]]` — the secrets a request to this node may be signed with.
//!
//! A `[[peer]]`'s `secret` and `pull`/`push --secret` are left alone: they
//! only sign what this node sends, and the peer that receives it is the one
//! that decides whether the secret is strong enough.
//!
//! What it does not do: decide what a weak secret means — the node refuses
//! to start beyond loopback and warns on loopback ([`crate::node`]).

use std::fmt;

use super::{Config, PeersConfig, Secret};

/// The fewest bytes a secret that accepts requests has: 32, what
/// `openssl rand -hex 32` makes 64 of.
pub const MIN_SECRET_BYTES: usize = 32;

/// The example secrets shipped in `deploy/` and `peers.toml`: anyone who
/// read them knows them.
pub const PLACEHOLDER_SECRETS: &[&str] = &[
    // deploy/.env.example, deploy/ecp-node.env.example
    "replace-me-with-a-long-random-secret",
    // deploy/k8s/secret.yaml
    "REPLACE-ME-with-openssl-rand-hex-32",
    // peers.toml (`secret`, `key_secret`)
    "change-me",
    "change-me-too",
];

/// How to make a secret that is not weak.
pub const MAKE_ONE: &str = "make one with `openssl rand -hex 32`";

/// Why a secret is weak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakness {
    /// Shorter than [`MIN_SECRET_BYTES`]; its length in bytes.
    Short(usize),
    /// One of [`PLACEHOLDER_SECRETS`].
    Placeholder,
}

impl fmt::Display for Weakness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Weakness::Short(n) => write!(f, "{n} bytes long, shorter than {MIN_SECRET_BYTES}"),
            Weakness::Placeholder => f.write_str("an example value shipped with ecp-node, known to anyone"),
        }
    }
}

/// Why `secret` is weak, if it is.
pub fn weakness(secret: &Secret) -> Option<Weakness> {
    let text = secret.expose();
    if PLACEHOLDER_SECRETS.contains(&text) {
        Some(Weakness::Placeholder)
    } else if text.len() < MIN_SECRET_BYTES {
        Some(Weakness::Short(text.len()))
    } else {
        None
    }
}

/// A weak secret of the node, named by where it is set (never shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakSecret {
    /// Where it is set: `the shared secret (--secret, ECP_SECRET, …)`,
    /// `[[key]] "id"`, `the key_secret of [[peer]] URL`.
    pub name: String,
    /// Why it is weak.
    pub weakness: Weakness,
}

impl fmt::Display for WeakSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is {}; {MAKE_ONE}", self.name, self.weakness)
    }
}

/// Every weak secret requests to the node of `config` may be signed with,
/// its peers' keys of `peers` included.
pub fn weak_secrets(config: &Config, peers: &PeersConfig) -> Vec<WeakSecret> {
    let shared = config.secret.iter().map(|s| {
        ("the shared secret (--secret, ECP_SECRET, secret_file or secret_env in node.toml)".to_owned(), s)
    });
    let shared = shared.filter_map(|(name, secret)| Some(WeakSecret { name, weakness: weakness(secret)? }));
    // The `[[key]]`s were told apart when resolved: a key never shows its secret again.
    shared.chain(config.weak_keys.iter().cloned()).chain(weak_peer_keys(peers)).collect()
}

/// The weak `key_secret`s of `peers` (checked again on every reload).
pub fn weak_peer_keys(peers: &PeersConfig) -> Vec<WeakSecret> {
    peers
        .peers
        .iter()
        .filter_map(|p| {
            Some(WeakSecret {
                name: format!("the key_secret of [[peer]] {} in the peers file", p.url),
                weakness: weakness(&p.key.as_ref()?.secret)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_of_32_bytes_is_strong_and_of_31_weak() {
        assert_eq!(weakness(&Secret::new("a".repeat(32))), None);
        assert_eq!(weakness(&Secret::new("a".repeat(31))), Some(Weakness::Short(31)));
        assert_eq!(weakness(&Secret::new("é".repeat(16))), None, "bytes are counted, not characters");
    }

    #[test]
    fn every_placeholder_is_weak_whatever_its_length() {
        for placeholder in PLACEHOLDER_SECRETS {
            assert_eq!(weakness(&Secret::new(*placeholder)), Some(Weakness::Placeholder), "{placeholder}");
        }
        assert!(PLACEHOLDER_SECRETS.iter().any(|p| p.len() >= MIN_SECRET_BYTES), "length alone would not do");
    }

    /// The values the example files give secrets, as `KEY=value`, `KEY: "value"`
    /// or `# key = "value"` lines.
    fn example_values(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|line| {
                let line = line.trim_start_matches(['#', ' ']);
                let (key, value) = line.split_once('=').or_else(|| line.split_once(':'))?;
                let key = key.trim().to_ascii_lowercase();
                let name = key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                let secret_key = name && key.ends_with("secret");
                let value = value.trim().trim_matches('"');
                let literal = !value.is_empty() && !value.contains(['$', ' ', '{', '`']);
                (secret_key && literal).then(|| value.to_owned())
            })
            .collect()
    }

    #[test]
    fn the_list_holds_every_example_secret_the_repository_ships() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let files =
            ["deploy/.env.example", "deploy/ecp-node.env.example", "deploy/k8s/secret.yaml", "peers.toml"];
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            found.extend(example_values(&text));
        }
        for value in &found {
            assert!(PLACEHOLDER_SECRETS.contains(&value.as_str()), "{value:?} is shipped but not listed");
        }
        for placeholder in PLACEHOLDER_SECRETS {
            assert!(
                found.iter().any(|v| v == placeholder),
                "{placeholder:?} is listed but no longer shipped"
            );
        }
    }

    #[test]
    fn the_message_names_the_secret_and_how_to_make_one_never_the_value() {
        let config = Config::for_tests(std::path::Path::new("/tmp/x"));
        let config = Config { secret: Some(Secret::new("change-me")), ..config };
        let weak = weak_secrets(&config, &PeersConfig::default());
        assert_eq!(weak.len(), 1);
        let said = weak[0].to_string();
        assert!(said.starts_with("the shared secret (--secret"), "{said}");
        assert!(said.contains("openssl rand -hex 32") && !said.contains("change-me"), "{said}");
        let strong = Config { secret: Some(Secret::new("x".repeat(32))), ..config };
        assert_eq!(weak_secrets(&strong, &PeersConfig::default()), vec![]);
    }
}
