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

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"shared-secret";

    #[test]
    fn sign_is_lowercase_hex_hmac_sha256() {
        // RFC 4231, test case 2.
        let tag = sign(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(tag, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert_eq!(sign_post(b"Jefe", b"what do ya want for nothing?"), tag);
        assert_eq!(sign_get(b"Jefe", "what do ya want for nothing?"), tag);
    }

    #[test]
    fn verify_accepts_the_signature_of_the_payload_only() {
        let good = sign(SECRET, b"body");
        assert_eq!(verify(SECRET, b"body", Some(&good)), Ok(()));
        assert_eq!(verify(SECRET, b"body", Some(&format!("  {}\t", good.to_uppercase()))), Ok(()));
        assert_eq!(verify(SECRET, b"other body", Some(&good)), Err(AuthError::SignatureMismatch));
        assert_eq!(verify(b"other secret", b"body", Some(&good)), Err(AuthError::SignatureMismatch));
        assert_eq!(verify(SECRET, b"body", None), Err(AuthError::MissingSignature));
        for malformed in
            ["", "zz", &good[..62], format!("{good}00").as_str(), format!("g{}", &good[1..]).as_str()]
        {
            assert_eq!(
                verify(SECRET, b"body", Some(malformed)),
                Err(AuthError::MalformedSignature),
                "{malformed:?}"
            );
        }
    }

    #[test]
    fn verify_post_covers_the_body() {
        let v = LegacyVerifier::new(SECRET);
        assert_eq!(v.verify_post(b"{}", Some(&sign_post(SECRET, b"{}"))), Ok(()));
        assert_eq!(v.verify_post(b"{ }", Some(&sign_post(SECRET, b"{}"))), Err(AuthError::SignatureMismatch));
        assert_eq!(v.verify_post(b"{}", None), Err(AuthError::MissingSignature));
    }

    #[test]
    fn verify_get_accepts_the_path_and_the_full_url_only_when_allowed() {
        let mut v = LegacyVerifier::new(SECRET);
        let path = "/ecp/skills";
        let host = Some("127.0.0.1:9102");
        assert_eq!(v.verify_get(path, host, Some(&sign_get(SECRET, path))), Ok(()));
        assert_eq!(v.verify_get(path, None, Some(&sign_get(SECRET, path))), Ok(()));
        for url in ["http://127.0.0.1:9102/ecp/skills", "https://127.0.0.1:9102/ecp/skills"] {
            let over_url = sign(SECRET, url.as_bytes());
            assert_eq!(v.verify_get(path, host, Some(&over_url)), Ok(()), "{url}");
            assert_eq!(
                v.verify_get(path, None, Some(&over_url)),
                Err(AuthError::SignatureMismatch),
                "no host, no URL to check: {url}"
            );
            assert_eq!(
                v.verify_get(path, Some("127.0.0.1:9999"), Some(&over_url)),
                Err(AuthError::SignatureMismatch),
                "another host: {url}"
            );
        }
        assert_eq!(
            v.verify_get("/ecp/manifest", host, Some(&sign_get(SECRET, path))),
            Err(AuthError::SignatureMismatch)
        );
        assert_eq!(v.verify_get(path, host, Some("not hex")), Err(AuthError::MalformedSignature));
        assert_eq!(v.verify_get(path, host, None), Err(AuthError::MissingSignature));

        v.accept_full_url = false;
        let over_url = sign(SECRET, b"http://127.0.0.1:9102/ecp/skills");
        assert_eq!(v.verify_get(path, host, Some(&over_url)), Err(AuthError::SignatureMismatch));
        assert_eq!(v.verify_get(path, host, Some(&sign_get(SECRET, path))), Ok(()));
    }

    #[test]
    fn debug_never_prints_the_secret() {
        let shown = format!("{:?}", LegacyVerifier::new("s3cr3t-value"));
        assert!(shown.contains("LegacyVerifier") && shown.contains("accept_full_url: true"), "{shown}");
        assert!(!shown.contains("s3cr3t") && !shown.contains("115, 51"), "{shown}");
    }
}
