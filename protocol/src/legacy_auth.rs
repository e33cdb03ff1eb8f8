//! Legacy authentication of ECP/1.1 (`ECP.md` › HTTP › Authentication).
//!
//! > header `X-ECP-HMAC` = lowercase hex HMAC-SHA256(secret, payload), where
//! > payload is the raw request body for POST and the URL path (e.g.
//! > `/ecp/skills`) for GET, compared in constant time.
//!
//! The reference *client* signs the full URL for GET
//! (`http://127.0.0.1:9102/ecp/skills`) while its own server verifies the
//! path, so it cannot pull from itself. A [`LegacyVerifier`] can accept both,
//! so Go nodes can pull from ours; our client signs the path, which Go
//! servers accept.
//!
//! This scheme is replayable (a GET signature is a constant token; a POST
//! signature is valid forever for its body). It exists for compatibility only.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::AuthError;

/// The header carrying the signature.
pub const HEADER: &str = "X-ECP-HMAC";

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &[u8], payload: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(payload);
    mac
}

/// Lowercase hex HMAC-SHA256 of `payload` under `secret`.
pub fn sign(secret: &[u8], payload: &[u8]) -> String {
    hex::encode(mac(secret, payload).finalize().into_bytes())
}

/// The header value for a POST: the HMAC of the raw body.
pub fn sign_post(secret: &[u8], body: &[u8]) -> String {
    sign(secret, body)
}

/// The header value for a GET: the HMAC of the URL path (no query, no host).
pub fn sign_get(secret: &[u8], path: &str) -> String {
    sign(secret, path.as_bytes())
}

/// Checks `header` against the HMAC of `payload`, in constant time.
pub fn verify(secret: &[u8], payload: &[u8], header: Option<&str>) -> Result<(), AuthError> {
    let tag = decode_header(header)?;
    mac(secret, payload).verify_slice(&tag).map_err(|_| AuthError::SignatureMismatch)
}

fn decode_header(header: Option<&str>) -> Result<[u8; 32], AuthError> {
    let header = header.ok_or(AuthError::MissingSignature)?.trim();
    let mut tag = [0u8; 32];
    hex::decode_to_slice(header, &mut tag).map_err(|_| AuthError::MalformedSignature)?;
    Ok(tag)
}

/// Verifies legacy signatures for one node's secret.
#[derive(Clone)]
pub struct LegacyVerifier {
    secret: Vec<u8>,
    /// Also accept GET signatures over the full URL, as the Go client sends them.
    pub accept_full_url: bool,
}

impl std::fmt::Debug for LegacyVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("LegacyVerifier")
            .field("accept_full_url", &self.accept_full_url)
            .finish_non_exhaustive()
    }
}

impl LegacyVerifier {
    /// A verifier for `secret` that accepts the full-URL variant for GET.
    pub fn new(secret: impl Into<Vec<u8>>) -> Self {
        LegacyVerifier { secret: secret.into(), accept_full_url: true }
    }

    /// Verifies a POST: the signature covers the raw body.
    pub fn verify_post(&self, body: &[u8], header: Option<&str>) -> Result<(), AuthError> {
        verify(&self.secret, body, header)
    }

    /// Verifies a GET of `path` on `host` (the request's `Host` header, if any).
    ///
    /// Accepts the HMAC of the path and, with `accept_full_url`, of
    /// `http://<host><path>` and `https://<host><path>`. Every candidate is
    /// compared in constant time; which one matched is not observable.
    pub fn verify_get(&self, path: &str, host: Option<&str>, header: Option<&str>) -> Result<(), AuthError> {
        let tag = decode_header(header)?;
        let mut ok = mac(&self.secret, path.as_bytes()).verify_slice(&tag).is_ok();
        if self.accept_full_url
            && let Some(host) = host
        {
            for scheme in ["http://", "https://"] {
                let url = format!("{scheme}{host}{path}");
                ok |= mac(&self.secret, url.as_bytes()).verify_slice(&tag).is_ok();
            }
        }
        if ok { Ok(()) } else { Err(AuthError::SignatureMismatch) }
    }
}
