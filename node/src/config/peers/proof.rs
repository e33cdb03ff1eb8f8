//! What proves a peer to this node and this node to a peer, as a `[[peer]]` states it: its key or certificate fingerprints (each one peer's only), its shared secrets, and the TLS files read and checked. Errors name the field and say what to write.

use std::path::{Path, PathBuf};

use super::{FilePeer, KnownBy, PeerConfig, PeersError, Secret, SecretSourceError};
use crate::tls::{Identity, PeerTls, TlsError, TrustAnchors};

/// `key`, `cert_fingerprint` and `cert_key_fingerprint` of a `[[peer]]`,
/// checked, none of them another peer's; an error as the field and message.
pub(super) fn known_by(p: &FilePeer, earlier: &[PeerConfig]) -> Result<KnownBy, (&'static str, String)> {
    let key_id = match p.key.as_deref() {
        None => None,
        Some(text) => Some(
            ecp_protocol::identity::parse_key_id(text)
                .or_else(|| ecp_protocol::identity::key_id_of(&text.trim().to_ascii_lowercase()))
                .ok_or_else(|| {
                    ("key", format!(
                        "{:?} is neither a key id (like ABCDEF2-GHIJKL3-MNOPQR4-STUVWX5, shown by the peer's \
                         `ecp-node status` and its manifest's keyId) nor an Ed25519 public key (64 hex digits, its \
                         manifest's publicKey)",
                        text.chars().take(80).collect::<String>()
                    ))
                })?,
        ),
    };
    let known = KnownBy {
        key_id,
        cert: fingerprint("cert_fingerprint", p.cert_fingerprint.as_deref())?,
        cert_key: fingerprint("cert_key_fingerprint", p.cert_key_fingerprint.as_deref())?,
    };
    for (j, q) in earlier.iter().enumerate() {
        let taken = |field: &'static str| {
            (field, format!("is already peer[{j}]'s; a key or certificate proves one peer only"))
        };
        if known.key_id.is_some() && known.key_id == q.known_by.key_id {
            return Err(taken("key"));
        }
        if known.cert.is_some() && known.cert == q.known_by.cert {
            return Err(taken("cert_fingerprint"));
        }
        if known.cert_key.is_some() && known.cert_key == q.known_by.cert_key {
            return Err(taken("cert_key_fingerprint"));
        }
    }
    Ok(known)
}

/// A SHA-256 fingerprint as tools print it: 64 hex digits in either case,
/// colons between bytes allowed, an optional `sha256:` in front.
fn fingerprint(field: &'static str, text: Option<&str>) -> Result<Option<[u8; 32]>, (&'static str, String)> {
    let Some(text) = text else { return Ok(None) };
    let trimmed = text.trim();
    let bare =
        trimmed.get(..7).filter(|p| p.eq_ignore_ascii_case("sha256:")).map_or(trimmed, |_| &trimmed[7..]);
    let digits: String = bare.chars().filter(|c| *c != ':').collect();
    let mut out = [0u8; 32];
    match hex::decode_to_slice(&digits, &mut out) {
        Ok(()) => Ok(Some(out)),
        Err(_) => Err((
            field,
            format!(
                "{:?} is not a SHA-256 fingerprint: give 64 hex digits, colons allowed, as `openssl x509 -noout \
                 -fingerprint -sha256 -in cert.pem` prints them",
                text.chars().take(120).collect::<String>()
            ),
        )),
    }
}

/// The secret of a `[[peer]]`'s `field` / `{field}_env` pair (`secret`,
/// `key_secret`); an error as the field to name and the message, whose
/// `if_empty` says what to do about an empty `field`.
pub(super) fn peer_secret(
    field: &'static str,
    inline: Option<Secret>,
    env: Option<&str>,
    if_empty: &str,
) -> Result<Option<Secret>, (String, String)> {
    let env_field = format!("{field}_env");
    Secret::inline_or_env(inline, env).map_err(|e| match e {
        SecretSourceError::Both => (field.to_owned(), format!("set either {field} or {env_field}, not both")),
        SecretSourceError::Empty => (field.to_owned(), format!("is empty; {if_empty}")),
        SecretSourceError::EnvUnset { var } | SecretSourceError::EnvEmpty { var } => {
            (env_field, format!("environment variable {var} is not set (or empty)"))
        }
    })
}

/// The TLS setting of the `[[peer]]` at `url`, from its `ca`,
/// `client_cert` and `client_key`: the files read and checked. `key` names
/// a field of this peer in errors; relative paths are relative to the
/// folder of `file`.
pub(super) fn peer_tls(
    file: &str,
    url: &str,
    (ca, cert, cert_key): (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>),
    key: &dyn Fn(&str) -> String,
) -> Result<PeerTls, PeersError> {
    let invalid = |field: &str, message: String| PeersError::Invalid {
        file: file.to_owned(),
        key: key(field),
        message,
    };
    let unusable = |source: TlsError| PeersError::Tls { file: file.to_owned(), source };
    if !url.starts_with("https:") {
        return match [(&ca, "ca"), (&cert, "client_cert"), (&cert_key, "client_key")]
            .into_iter()
            .find(|(value, _)| value.is_some())
        {
            Some((_, field)) => Err(invalid(field, format!("applies to https peers only; the url is {url}"))),
            None => Ok(PeerTls::default()),
        };
    }
    let folder = Path::new(file).parent().unwrap_or(Path::new(""));
    let ca = match ca {
        Some(path) => Some(TrustAnchors::load(&key("ca"), &folder.join(path)).map_err(unusable)?),
        None => {
            // Read once per process, here (a blocking context) rather than
            // in the first round, on an async thread.
            crate::tls::system_roots();
            None
        }
    };
    let identity = match (cert, cert_key) {
        (Some(cert), Some(cert_key)) => Some(
            Identity::load(
                (&key("client_cert"), &folder.join(cert)),
                (&key("client_key"), &folder.join(cert_key)),
            )
            .map_err(unusable)?,
        ),
        (Some(_), None) => {
            return Err(invalid("client_key", "client_cert needs its key: set client_key too".into()));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "client_cert",
                "client_key needs its certificate: set client_cert too".into(),
            ));
        }
        (None, None) => None,
    };
    Ok(PeerTls { ca, identity, pin: None })
}
