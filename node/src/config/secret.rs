//! [`Secret`]: every shared secret and key secret the node is given — by a
//! flag, in `node.toml`, in `peers.toml` or through an environment variable
//! named by a `secret_env` key — from the moment it is parsed.
//!
//! It wraps the `secrecy` crate's `SecretString`: the text is zeroed when
//! dropped and no trait prints it. Its `Debug` and `Display` show `***`, so a
//! struct holding one can derive `Debug` and still never print it; the text
//! comes out only through [`Secret::expose`], where a signature is made or
//! checked.
//!
//! What it does not do: say whether an empty secret is allowed, or word the
//! error for a missing one — each file has its own rules and names its own
//! keys ([`super::resolve`], [`super::peers`], [`super::keys`]).

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use subtle::ConstantTimeEq;

/// A secret: shown as `***` in debug output and logs, compared in constant
/// time, zeroed when dropped.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(SecretString);

/// Why [`Secret::inline_or_env`] found no usable secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretSourceError {
    /// Both the secret and the variable naming it were given.
    #[error("set either the secret or its environment variable, not both")]
    Both,
    /// The secret was written, but empty.
    #[error("the secret is empty")]
    Empty,
    /// The named environment variable is not set (or not Unicode).
    #[error("environment variable {var} is not set")]
    EnvUnset {
        /// The variable's name.
        var: String,
    },
    /// The named environment variable is set, but empty.
    #[error("environment variable {var} is empty")]
    EnvEmpty {
        /// The variable's name.
        var: String,
    },
}

impl Secret {
    /// A secret from its text.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(SecretString::from(text.into()))
    }

    /// The secret's text, for signing and verifying.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// Whether `presented` (a bearer token, say) is this secret, compared in
    /// constant time.
    pub fn matches(&self, presented: &str) -> bool {
        self.expose().as_bytes().ct_eq(presented.as_bytes()).into()
    }

    /// Whether the secret is the empty string (which no file accepts as a
    /// secret, and `--secret ""` uses to mean "none").
    pub fn is_empty(&self) -> bool {
        self.expose().is_empty()
    }

    /// The secret held by the environment variable `var` (a `secret_env`
    /// key); `None` when it is not set or not Unicode. An empty value is
    /// returned as it is: whether that is allowed is the caller's rule.
    pub fn from_env(var: &str) -> Option<Secret> {
        std::env::var(var).ok().map(Secret::new)
    }

    /// The secret a file holds, without one trailing line break (`\n` or
    /// `\r\n`, which editors and `echo` add).
    pub fn from_file(path: &std::path::Path) -> std::io::Result<Secret> {
        let text = std::fs::read_to_string(path)?;
        let text = text.strip_suffix('\n').map_or(text.as_str(), |t| t.strip_suffix('\r').unwrap_or(t));
        Ok(Secret::new(text))
    }

    /// The secret of a `secret` / `secret_env` pair (or `key_secret` /
    /// `key_secret_env`): at most one of them, neither empty. `Ok(None)`
    /// when neither is given.
    pub fn inline_or_env(
        inline: Option<Secret>,
        env: Option<&str>,
    ) -> Result<Option<Secret>, SecretSourceError> {
        inline_or(inline, env, Secret::from_env)
    }
}

/// [`Secret::inline_or_env`] with the environment as a parameter: tests may
/// not set variables (that is `unsafe` since edition 2024).
fn inline_or(
    inline: Option<Secret>,
    env: Option<&str>,
    read_env: impl Fn(&str) -> Option<Secret>,
) -> Result<Option<Secret>, SecretSourceError> {
    match (inline, env) {
        (Some(_), Some(_)) => Err(SecretSourceError::Both),
        (Some(s), None) if s.is_empty() => Err(SecretSourceError::Empty),
        (Some(s), None) => Ok(Some(s)),
        (None, Some(var)) => match read_env(var) {
            None => Err(SecretSourceError::EnvUnset { var: var.to_owned() }),
            Some(s) if s.is_empty() => Err(SecretSourceError::EnvEmpty { var: var.to_owned() }),
            Some(s) => Ok(Some(s)),
        },
        (None, None) => Ok(None),
    }
}

impl From<&str> for Secret {
    fn from(text: &str) -> Secret {
        Secret::new(text)
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Secret {
        Secret::new(text)
    }
}

/// For clap: `--secret S` is a [`Secret`] from the moment it is parsed.
impl FromStr for Secret {
    type Err = Infallible;

    fn from_str(text: &str) -> Result<Secret, Infallible> {
        Ok(Secret::new(text))
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Secret) -> bool {
        // Equality of secrets is rarely asked, but never let it time the answer.
        self.matches(other.expose())
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Quoted like the string it stands for.
        fmt::Debug::fmt("***", f)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_print_the_secret() {
        let s = Secret::new("do-not-print-me");
        for shown in [
            format!("{s:?}"),
            format!("{s:#?}"),
            format!("{s}"),
            format!("{:?}", Some(&s)),
            format!("{:?}", vec![s.clone()]),
        ] {
            assert!(!shown.contains("do-not-print-me"), "{shown}");
            assert!(shown.contains("***"), "{shown}");
        }
        assert_eq!(format!("{s:?}"), "\"***\"");
        assert_eq!(s.to_string(), "***");
        assert_eq!(s.expose(), "do-not-print-me");
    }

    #[test]
    fn a_struct_deriving_debug_hides_its_secret() {
        #[derive(Debug, Deserialize)]
        struct Holder {
            secret: Option<Secret>,
        }
        let h: Holder = toml::from_str("secret = \"from-a-file\"\n").unwrap();
        assert_eq!(h.secret.as_ref().map(Secret::expose), Some("from-a-file"));
        let shown = format!("{h:?}");
        assert!(!shown.contains("from-a-file"), "{shown}");
        assert_eq!(shown, "Holder { secret: Some(\"***\") }");
    }

    #[test]
    fn equal_when_the_text_is() {
        assert_eq!(Secret::new("a"), Secret::from("a"));
        assert_ne!(Secret::new("a"), Secret::new("b"));
        assert_ne!(Secret::new("a"), Secret::new("ab"));
        assert!(Secret::new("token").matches("token"));
        assert!(!Secret::new("token").matches("token ") && !Secret::new("token").matches("tokeN"));
    }

    #[test]
    fn parsed_from_a_flag_as_it_is() {
        assert_eq!("s3cret".parse::<Secret>(), Ok(Secret::new("s3cret")));
        assert!("".parse::<Secret>().unwrap().is_empty());
    }

    #[test]
    fn from_env_reads_the_variable() {
        // Tests cannot set variables; PATH is set wherever tests run.
        let path = std::env::var("PATH").expect("PATH is set");
        assert_eq!(Secret::from_env("PATH"), Some(Secret::new(path)));
        assert_eq!(Secret::from_env("ECP_TEST_SURELY_UNSET_SECRET_VAR"), None);
    }

    #[test]
    fn inline_or_env_takes_one_non_empty_secret() {
        let env = |var: &str| match var {
            "SET" => Some(Secret::new("env-secret")),
            "EMPTY" => Some(Secret::new("")),
            _ => None,
        };
        let either = |inline: Option<&str>, var: Option<&str>| inline_or(inline.map(Secret::new), var, env);
        assert_eq!(either(None, None), Ok(None));
        assert_eq!(either(Some("inline"), None), Ok(Some(Secret::new("inline"))));
        assert_eq!(either(None, Some("SET")), Ok(Some(Secret::new("env-secret"))));
        assert_eq!(either(Some("inline"), Some("SET")), Err(SecretSourceError::Both));
        assert_eq!(either(Some(""), None), Err(SecretSourceError::Empty));
        assert_eq!(either(None, Some("UNSET")), Err(SecretSourceError::EnvUnset { var: "UNSET".into() }));
        assert_eq!(either(None, Some("EMPTY")), Err(SecretSourceError::EnvEmpty { var: "EMPTY".into() }));
        assert_eq!(
            either(None, Some("UNSET")).unwrap_err().to_string(),
            "environment variable UNSET is not set"
        );
        assert_eq!(
            Secret::inline_or_env(None, Some("ECP_TEST_SURELY_UNSET_SECRET_VAR")),
            Err(SecretSourceError::EnvUnset { var: "ECP_TEST_SURELY_UNSET_SECRET_VAR".into() }),
            "the real environment is read"
        );
    }
}
