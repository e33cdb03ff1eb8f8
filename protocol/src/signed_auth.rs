//! Signed requests and responses of ECP/1.2 (`SPEC.md` §10.1).
//!
//! A request carries five headers: `X-ECP-Authority` (the `host:port` the
//! client addressed), `X-ECP-Key-Id`, `X-ECP-Timestamp` (Unix seconds),
//! `X-ECP-Nonce` and `X-ECP-Signature`, the lowercase hex HMAC-SHA256,
//! under the named key's secret, of the canonical string
//!
//! ```text
//! ECP-1.2-REQUEST-FOR\n<authority>\n<key id>\n<METHOD>\n<path and query>\n<timestamp>\n<nonce>\n<hex SHA-256 of the body>
//! ```
//!
//! The authority binds the signature to the node it is meant for: a node
//! refuses a request signed for an authority it does not answer to, so a
//! request recorded on its way to one node cannot be relayed to another
//! node holding the same key (`SPEC.md` §10.1.3). Which authorities a node
//! answers to is the caller's to say ([`RequestVerifier::verify`]).
//!
//! A response to a signed GET carries the same four headers: the key the
//! request used, the response's own time, the request's nonce echoed, and
//! the signature of
//!
//! ```text
//! ECP-1.2-RESPONSE\n<key id>\n<status>\n<request METHOD>\n<request path and query>\n<timestamp>\n<request nonce>\n<hex SHA-256 of the body>
//! ```
//!
//! so a response can be neither forged nor replayed to another request.
//!
//! Unlike the legacy scheme ([`crate::legacy_auth`]) a signature is bound to
//! the node addressed, the method, the path and query, the body, a time and a nonce: a verifier
//! refuses a timestamp more than [`MAX_CLOCK_SKEW_SECS`] away from its clock
//! and remembers, in a bounded [`NonceCache`], every nonce it accepted until
//! its timestamp leaves that window, so nothing can be replayed.
//!
//! This module does no I/O and reads no clock: callers pass `now`.

use std::fmt;
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::error::SignedAuthError;

/// The header naming the authority (`host:port`) a request is signed for.
pub const AUTHORITY_HEADER: &str = "X-ECP-Authority";
/// The header naming the key a request is signed with.
pub const KEY_ID_HEADER: &str = "X-ECP-Key-Id";
/// The header carrying the signing time, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "X-ECP-Timestamp";
/// The header carrying the request's nonce (echoed in a signed response).
pub const NONCE_HEADER: &str = "X-ECP-Nonce";
/// The header carrying the hex HMAC-SHA256 of the canonical string.
pub const SIGNATURE_HEADER: &str = "X-ECP-Signature";

/// The largest accepted difference between a signature's time and the verifier's clock.
pub const MAX_CLOCK_SKEW_SECS: i64 = 300;
/// Nonces: 16 to 128 characters of `[A-Za-z0-9_-]` (hex or unpadded base64url).
pub const NONCE_LEN: std::ops::RangeInclusive<usize> = 16..=128;
/// Key ids: 1 to 64 characters of `[A-Za-z0-9._-]`.
pub const MAX_KEY_ID_LEN: usize = 64;
/// Authorities: 3 to 262 characters (a DNS name of up to 253, or an IP
/// literal, then `:` and the port).
pub const MAX_AUTHORITY_LEN: usize = 262;
/// Default capacity of a [`NonceCache`].
pub const DEFAULT_NONCE_CAPACITY: usize = 100_000;

/// Not `ECP-1.2-REQUEST`, the label of the unbound signatures of earlier
/// nodes: a signature of either kind can never pass for the other.
const REQUEST_PREFIX: &str = "ECP-1.2-REQUEST-FOR";
const RESPONSE_PREFIX: &str = "ECP-1.2-RESPONSE";

type HmacSha256 = Hmac<Sha256>;

/// A named shared secret. Its `Debug` never prints the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKey {
    id: String,
    secret: Vec<u8>,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey").field("id", &self.id).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A key named `id` (checked against the key id rule) with `secret`.
    pub fn new(id: impl Into<String>, secret: impl Into<Vec<u8>>) -> Result<Self, SignedAuthError> {
        let id = id.into();
        if !is_valid_key_id(&id) {
            return Err(SignedAuthError::Malformed {
                header: KEY_ID_HEADER,
                rule: "1 to 64 characters of A-Z a-z 0-9 . _ -",
            });
        }
        Ok(SigningKey { id, secret: secret.into() })
    }

    /// The key id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn mac(&self, canonical: &str) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = HmacSha256::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
        mac.update(canonical.as_bytes());
        mac
    }

    fn sign(&self, canonical: &str) -> String {
        hex::encode(self.mac(canonical).finalize().into_bytes())
    }

    /// Constant-time check of a MAC against `canonical`.
    fn check(&self, canonical: &str, tag: &[u8; 32]) -> Result<(), SignedAuthError> {
        self.mac(canonical).verify_slice(tag).map_err(|_| SignedAuthError::SignatureMismatch)
    }
}

/// Whether `id` follows the key id rule.
pub fn is_valid_key_id(id: &str) -> bool {
    (1..=MAX_KEY_ID_LEN).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether `authority` follows the authority rule: `host:port`, the host a
/// DNS name, an IPv4 literal or a bracketed IPv6 literal (lower case, as
/// [`authority`] writes it), the port 1 to 5 digits.
pub fn is_valid_authority(authority: &str) -> bool {
    let Some((host, port)) = authority.rsplit_once(':') else { return false };
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner.strip_suffix(']').is_some_and(|ip| {
            !ip.is_empty() && ip.bytes().all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.'))
        })
    } else {
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_'))
    };
    authority.len() <= MAX_AUTHORITY_LEN
        && host_ok
        && (1..=5).contains(&port.len())
        && port.bytes().all(|b| b.is_ascii_digit())
}

/// The authority a client signs for when it connects to `host` (as a URL
/// holds it: a bracketed IPv6 literal, a name in any case) on `port`:
/// lower-cased, the port always written.
pub fn authority(host: &str, port: u16) -> String {
    format!("{}:{port}", host.to_ascii_lowercase())
}

/// Whether `nonce` follows the nonce rule.
pub fn is_valid_nonce(nonce: &str) -> bool {
    NONCE_LEN.contains(&nonce.len())
        && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// Lowercase hex SHA-256 of `body` (of the empty string for no body).
pub fn body_digest(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

/// The canonical string a request signature covers.
pub fn canonical_request(
    authority: &str,
    key_id: &str,
    method: &str,
    path_and_query: &str,
    timestamp: i64,
    nonce: &str,
    body_digest_hex: &str,
) -> String {
    format!(
        "{REQUEST_PREFIX}\n{authority}\n{key_id}\n{}\n{path_and_query}\n{timestamp}\n{nonce}\n{body_digest_hex}",
        method.to_ascii_uppercase()
    )
}

/// The canonical string a response signature covers.
pub fn canonical_response(
    key_id: &str,
    exchange: &Exchange<'_>,
    timestamp: i64,
    body_digest_hex: &str,
) -> String {
    format!(
        "{RESPONSE_PREFIX}\n{key_id}\n{}\n{}\n{}\n{timestamp}\n{}\n{body_digest_hex}",
        exchange.status,
        exchange.request.method.to_ascii_uppercase(),
        exchange.request.path_and_query,
        exchange.request_nonce,
    )
}

/// The method and request target (path and query, exactly as sent) of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLine<'a> {
    /// `GET`, `POST`, … (compared upper-cased).
    pub method: &'a str,
    /// The origin-form request target, e.g. `/ecp/skills?since=5`.
    pub path_and_query: &'a str,
}

impl RequestLine<'_> {
    /// HTTP allows no line break in a method or request target; one here
    /// could move text between lines of the canonical string and keep the
    /// signature valid, so it is refused outright.
    fn check_line_breaks(&self) -> Result<(), SignedAuthError> {
        if self.method.contains(['\n', '\r']) || self.path_and_query.contains(['\n', '\r']) {
            return Err(SignedAuthError::SignatureMismatch);
        }
        Ok(())
    }
}

/// The headers of a signed request (five) or response (four: no authority).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHeaders {
    /// `X-ECP-Authority`, on requests only.
    pub authority: Option<String>,
    /// `X-ECP-Key-Id`.
    pub key_id: String,
    /// `X-ECP-Timestamp`.
    pub timestamp: i64,
    /// `X-ECP-Nonce`.
    pub nonce: String,
    /// `X-ECP-Signature`.
    pub signature: String,
}

impl SignatureHeaders {
    /// `(header name, value)` pairs, ready to be sent.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::with_capacity(5);
        if let Some(authority) = &self.authority {
            pairs.push((AUTHORITY_HEADER, authority.clone()));
        }
        pairs.extend([
            (KEY_ID_HEADER, self.key_id.clone()),
            (TIMESTAMP_HEADER, self.timestamp.to_string()),
            (NONCE_HEADER, self.nonce.clone()),
            (SIGNATURE_HEADER, self.signature.clone()),
        ]);
        pairs
    }
}

/// Signs a request to `request` with `body` at `timestamp` with `nonce`
/// (the caller draws a fresh random nonce for every request, see
/// [`NONCE_LEN`]), for the node at `authority`: the `host:port` of the URL
/// the client connects to, as [`authority`] writes it.
pub fn sign_request(
    key: &SigningKey,
    authority: &str,
    request: &RequestLine<'_>,
    body: &[u8],
    timestamp: i64,
    nonce: &str,
) -> SignatureHeaders {
    sign_request_digest(key, authority, request, &body_digest(body), timestamp, nonce)
}

/// [`sign_request`] for a body whose hex SHA-256 the caller already has: a
/// blob upload, whose digest is its name (`SPEC.md` §12.8.5), is signed
/// without reading the body twice.
pub fn sign_request_digest(
    key: &SigningKey,
    authority: &str,
    request: &RequestLine<'_>,
    body_digest_hex: &str,
    timestamp: i64,
    nonce: &str,
) -> SignatureHeaders {
    let canonical = canonical_request(
        authority,
        &key.id,
        request.method,
        request.path_and_query,
        timestamp,
        nonce,
        body_digest_hex,
    );
    SignatureHeaders {
        authority: Some(authority.to_owned()),
        key_id: key.id.clone(),
        timestamp,
        nonce: nonce.to_owned(),
        signature: key.sign(&canonical),
    }
}

/// Signs the response with `body` in `exchange`, at `timestamp`.
pub fn sign_response(
    key: &SigningKey,
    exchange: &Exchange<'_>,
    body: &[u8],
    timestamp: i64,
) -> SignatureHeaders {
    sign_response_digest(key, exchange, &body_digest(body), timestamp)
}

/// [`sign_response`] for a body whose hex SHA-256 the caller already has
/// (a server caching its encoded responses hashes each once).
pub fn sign_response_digest(
    key: &SigningKey,
    exchange: &Exchange<'_>,
    body_digest_hex: &str,
    timestamp: i64,
) -> SignatureHeaders {
    let canonical = canonical_response(&key.id, exchange, timestamp, body_digest_hex);
    SignatureHeaders {
        authority: None,
        key_id: key.id.clone(),
        timestamp,
        nonce: exchange.request_nonce.to_owned(),
        signature: key.sign(&canonical),
    }
}

/// The headers as received (each `None` when absent or not text).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresentedHeaders<'a> {
    /// `X-ECP-Authority` (requests only).
    pub authority: Option<&'a str>,
    /// `X-ECP-Key-Id`.
    pub key_id: Option<&'a str>,
    /// `X-ECP-Timestamp`.
    pub timestamp: Option<&'a str>,
    /// `X-ECP-Nonce`.
    pub nonce: Option<&'a str>,
    /// `X-ECP-Signature`.
    pub signature: Option<&'a str>,
}

impl<'a> PresentedHeaders<'a> {
    /// Reads the headers through `get` (a case-insensitive header lookup).
    pub fn read(get: impl Fn(&'static str) -> Option<&'a str>) -> Self {
        PresentedHeaders {
            authority: get(AUTHORITY_HEADER),
            key_id: get(KEY_ID_HEADER),
            timestamp: get(TIMESTAMP_HEADER),
            nonce: get(NONCE_HEADER),
            signature: get(SIGNATURE_HEADER),
        }
    }

    /// Whether any of the five headers is present: a request that carries
    /// none did not try ECP/1.2 (it may carry the legacy header instead).
    pub fn any(&self) -> bool {
        self.authority.is_some()
            || self.key_id.is_some()
            || self.timestamp.is_some()
            || self.nonce.is_some()
            || self.signature.is_some()
    }

    /// The headers checked for presence and form, signature excepted.
    fn parse(&self) -> Result<Parsed<'a>, SignedAuthError> {
        let key_id = self.key_id.ok_or(SignedAuthError::Missing(KEY_ID_HEADER))?.trim();
        let timestamp = self.timestamp.ok_or(SignedAuthError::Missing(TIMESTAMP_HEADER))?.trim();
        let nonce = self.nonce.ok_or(SignedAuthError::Missing(NONCE_HEADER))?.trim();
        let signature = self.signature.ok_or(SignedAuthError::Missing(SIGNATURE_HEADER))?.trim();
        if !is_valid_key_id(key_id) {
            return Err(SignedAuthError::Malformed {
                header: KEY_ID_HEADER,
                rule: "1 to 64 characters of A-Z a-z 0-9 . _ -",
            });
        }
        let timestamp = parse_timestamp(timestamp)?;
        if !is_valid_nonce(nonce) {
            return Err(SignedAuthError::Malformed {
                header: NONCE_HEADER,
                rule: "16 to 128 characters of A-Z a-z 0-9 _ -",
            });
        }
        let signature = decode_signature(signature)?;
        Ok(Parsed { key_id, timestamp, nonce, signature })
    }
}

struct Parsed<'a> {
    key_id: &'a str,
    timestamp: i64,
    nonce: &'a str,
    signature: [u8; 32],
}

/// `X-ECP-Authority` checked for presence and form, lower-cased (the
/// signature covers it as sent).
fn parse_authority(text: Option<&str>) -> Result<String, SignedAuthError> {
    let authority = text.ok_or(SignedAuthError::Unbound)?.trim().to_ascii_lowercase();
    if !is_valid_authority(&authority) {
        return Err(SignedAuthError::Malformed {
            header: AUTHORITY_HEADER,
            rule: "host:port, the port written, at most 262 characters",
        });
    }
    Ok(authority)
}

/// 64 hex characters (either case, as for the legacy header) → the MAC.
fn decode_signature(text: &str) -> Result<[u8; 32], SignedAuthError> {
    let mut tag = [0u8; 32];
    hex::decode_to_slice(text, &mut tag).map_err(|_| SignedAuthError::Malformed {
        header: SIGNATURE_HEADER,
        rule: "64 hex characters (HMAC-SHA256)",
    })?;
    Ok(tag)
}

/// Unix seconds: 1 to 12 ASCII digits (no sign, no fraction).
fn parse_timestamp(text: &str) -> Result<i64, SignedAuthError> {
    let malformed = || SignedAuthError::Malformed {
        header: TIMESTAMP_HEADER,
        rule: "Unix seconds: 1 to 12 decimal digits",
    };
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed());
    }
    text.parse().map_err(|_| malformed())
}

fn check_skew(timestamp: i64, now: i64, max_skew: i64) -> Result<(), SignedAuthError> {
    // The exact distance: a saturated difference would let a far-off time into a window of i64::MAX.
    if timestamp.abs_diff(now) > max_skew.unsigned_abs() {
        let skew_secs = timestamp.saturating_sub(now);
        return Err(SignedAuthError::ClockSkew { skew_secs, max_secs: max_skew.saturating_abs() });
    }
    Ok(())
}

/// A request whose signature checked out: which key signed it, and the nonce
/// to echo in a signed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedRequest<'k> {
    /// The key that signed the request.
    pub key: &'k SigningKey,
    /// The request's nonce.
    pub nonce: String,
    /// The request's timestamp.
    pub timestamp: i64,
}

/// Verifies signed requests against a set of keys (several at once, for
/// rotation and for peers with keys of their own).
#[derive(Debug, Clone)]
pub struct RequestVerifier {
    keys: Vec<SigningKey>,
    max_skew_secs: i64,
}

impl RequestVerifier {
    /// A verifier for `keys` with the default skew window.
    pub fn new(keys: Vec<SigningKey>) -> Self {
        RequestVerifier { keys, max_skew_secs: MAX_CLOCK_SKEW_SECS }
    }

    /// The same verifier with a different skew window (at most [`MAX_CLOCK_SKEW_SECS`] is advised).
    /// A negative `secs` means its magnitude; `i64::MIN`, which has none, means `i64::MAX`.
    pub fn with_max_skew(mut self, secs: i64) -> Self {
        // Not `abs`: `i64::MIN.abs()` panics in debug builds and stays negative in
        // release, where the nonce cache then forgot every nonce at once.
        self.max_skew_secs = secs.saturating_abs();
        self
    }

    /// The skew window, seconds.
    pub fn max_skew_secs(&self) -> i64 {
        self.max_skew_secs
    }

    /// The key named `id`, if this verifier holds it.
    pub fn key(&self, id: &str) -> Option<&SigningKey> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// Whether this verifier holds no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Verifies a request, in this order: the four headers of the
    /// signature present and well formed; the authority present
    /// ([`SignedAuthError::Unbound`] names an earlier client) and well
    /// formed; the authority one this node answers to (`answers_to`,
    /// given the authority lower-cased); the key known; the time within the
    /// window; the signature (in constant time); and last the nonce not seen
    /// before, which is then remembered. Only requests with a valid
    /// signature enter `nonces`, so a stranger cannot fill it.
    pub fn verify(
        &self,
        presented: &PresentedHeaders<'_>,
        request: &RequestLine<'_>,
        body: &[u8],
        now: i64,
        nonces: &Mutex<NonceCache>,
        answers_to: &dyn Fn(&str) -> bool,
    ) -> Result<VerifiedRequest<'_>, SignedAuthError> {
        self.verify_digest(presented, request, &body_digest(body), now, nonces, answers_to)
    }

    /// [`RequestVerifier::verify`] against the hex SHA-256 of a body not read yet:
    /// a blob upload is checked with the digest its path names, before its
    /// body is streamed (`SPEC.md` §12.8.5); the receiver then refuses a
    /// body whose digest differs.
    pub fn verify_digest(
        &self,
        presented: &PresentedHeaders<'_>,
        request: &RequestLine<'_>,
        body_digest_hex: &str,
        now: i64,
        nonces: &Mutex<NonceCache>,
        answers_to: &dyn Fn(&str) -> bool,
    ) -> Result<VerifiedRequest<'_>, SignedAuthError> {
        let parsed = presented.parse()?;
        let authority = parse_authority(presented.authority)?;
        if !answers_to(&authority) {
            return Err(SignedAuthError::WrongAuthority { signed_for: authority });
        }
        request.check_line_breaks()?;
        let key = self.key(parsed.key_id).ok_or(SignedAuthError::UnknownKey)?;
        check_skew(parsed.timestamp, now, self.max_skew_secs)?;
        let canonical = canonical_request(
            presented.authority.unwrap_or_default().trim(),
            &key.id,
            request.method,
            request.path_and_query,
            parsed.timestamp,
            parsed.nonce,
            body_digest_hex,
        );
        key.check(&canonical, &parsed.signature)?;
        // A poisoned lock only means another thread panicked mid-insert; the
        // cache is still a valid set of nonces.
        let mut nonces = nonces.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        nonces.admit(&key.id, parsed.nonce, parsed.timestamp, now, self.max_skew_secs)?;
        Ok(VerifiedRequest { key, nonce: parsed.nonce.to_owned(), timestamp: parsed.timestamp })
    }
}

/// What a response signature is bound to: the request it answers (as the
/// client sent it, with the nonce it drew) and the response's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange<'a> {
    /// The request's method and target.
    pub request: RequestLine<'a>,
    /// The request's nonce.
    pub request_nonce: &'a str,
    /// The response's HTTP status.
    pub status: u16,
}

/// Verifies the signature of a response to a request this client signed
/// with `key`: the key id must be `key`'s, the nonce the request's, the time
/// within `max_skew_secs` of `now`, and the signature must cover `body`.
pub fn verify_response(
    key: &SigningKey,
    presented: &PresentedHeaders<'_>,
    exchange: &Exchange<'_>,
    body: &[u8],
    now: i64,
    max_skew_secs: i64,
) -> Result<(), SignedAuthError> {
    verify_response_digest(key, presented, exchange, &body_digest(body), now, max_skew_secs)
}

/// [`verify_response`] for a body whose hex SHA-256 is `body_digest_hex`:
/// a body streamed to storage, hashed as it was written (a blob, whose
/// name is its digest, `SPEC.md` §12.8.2).
pub fn verify_response_digest(
    key: &SigningKey,
    presented: &PresentedHeaders<'_>,
    exchange: &Exchange<'_>,
    body_digest_hex: &str,
    now: i64,
    max_skew_secs: i64,
) -> Result<(), SignedAuthError> {
    let parsed = presented.parse()?;
    exchange.request.check_line_breaks()?;
    if parsed.key_id != key.id {
        return Err(SignedAuthError::UnknownKey);
    }
    if parsed.nonce != exchange.request_nonce {
        return Err(SignedAuthError::NonceMismatch);
    }
    check_skew(parsed.timestamp, now, max_skew_secs)?;
    let canonical = canonical_response(&key.id, exchange, parsed.timestamp, body_digest_hex);
    key.check(&canonical, &parsed.signature)
}

mod nonce_cache;

pub use nonce_cache::NonceCache;

#[cfg(test)]
mod tests;
