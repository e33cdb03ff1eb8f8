//! Node-key request signatures (`SPEC.md` §13.11, profile ecp-1.3): a
//! request signed with the sender's Ed25519 node key ([`NodeKey`]), which
//! proves *which node* sent it. A receiver that knows the key as a
//! configured peer's gives the request that peer's trust, whatever
//! `peerInstance` claims; one that does not learns nothing from it.
//!
//! One header, [`HEADER`], carries five `name=value` parameters separated
//! by `;`:
//!
//! ```text
//! X-ECP-Node-Signature: key=<64 hex>;authority=<host:port>;ts=<unix seconds>;nonce=<nonce>;sig=<128 hex>
//! ```
//!
//! `sig` is the Ed25519 signature of
//!
//! ```text
//! ECP-1.3-NODE-REQUEST-FOR\n<authority>\n<key id>\n<METHOD>\n<path and query>\n<timestamp>\n<nonce>\n<hex SHA-256 of the body>
//! ```
//!
//! the canonical request of ECP/1.2 (§10.1.3) under another first line and
//! the key id of `key` (§13.2) in place of a shared key's id, so a
//! signature of one scheme never verifies as the other. Everything else is
//! as in ECP/1.2: bound to the node addressed, a time window, a nonce
//! remembered in the same [`NonceCache`] (under `node:<key id>`, which no
//! ECP/1.2 key id can be). Nodes that do not know the header ignore it (Go
//! nodes, earlier nodes of ours), so a node may send it to every peer.
//!
//! No I/O and no clock here: callers pass `now`.

use std::sync::Mutex;

use ed25519_dalek::{Signature, VerifyingKey};

use crate::SignedAuthError;
use crate::identity::{NodeKey, decode_hex, key_id};
use crate::signed_auth::{MAX_CLOCK_SKEW_SECS, NonceCache, RequestLine, is_valid_authority, is_valid_nonce};

/// The header of a node-key signature.
pub const HEADER: &str = "X-ECP-Node-Signature";
/// The first line of the canonical request.
const PREFIX: &str = "ECP-1.3-NODE-REQUEST-FOR";
/// Longest header value read: five parameters at their longest, with room.
pub const MAX_HEADER_LEN: usize = 1024;
/// The form of the header, as errors state it.
const FORM: &str = "key=<64 lowercase hex>;authority=<host:port>;ts=<Unix seconds>;nonce=<16-128 of A-Z a-z 0-9 _ ->;sig=<128 lowercase hex>";

/// Why a node-key signature was refused. Messages name the header and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeAuthError {
    /// The header does not have its form.
    #[error("X-ECP-Node-Signature is malformed: {problem}; expected {FORM}")]
    Malformed {
        /// What is wrong.
        problem: String,
    },
    /// Signed for another node.
    #[error(
        "X-ECP-Node-Signature was signed for {signed_for}, which is not this node: sign for the host:port you \
         connect to"
    )]
    WrongAuthority {
        /// The authority signed for (lower-cased).
        signed_for: String,
    },
    /// The time is outside the window.
    #[error(
        "X-ECP-Node-Signature's ts is {skew_secs} s away from this node's clock (at most {max_secs} s allowed): \
         sync the clock and sign again"
    )]
    ClockSkew {
        /// Signature time minus the verifier's time.
        skew_secs: i64,
        /// The window.
        max_secs: i64,
    },
    /// The signature does not verify.
    #[error(
        "X-ECP-Node-Signature does not verify: sign the authority, key id, method, path and query, ts, nonce \
         and the body's SHA-256 with the node key named by key"
    )]
    Mismatch,
    /// The nonce was used before within the window.
    #[error("X-ECP-Node-Signature's nonce was already used: draw a fresh random nonce for every request")]
    Replay,
    /// The nonce memory is full.
    #[error("too many signed requests in the replay window; retry later")]
    ReplayCacheFull,
}

impl NodeAuthError {
    /// A stable machine-readable code, for HTTP error bodies.
    pub fn code(&self) -> &'static str {
        match self {
            NodeAuthError::Malformed { .. } => "malformed_node_signature",
            NodeAuthError::WrongAuthority { .. } => "wrong_authority",
            NodeAuthError::ClockSkew { .. } => "clock_skew",
            NodeAuthError::Mismatch => "bad_node_signature",
            NodeAuthError::Replay => "replayed_nonce",
            NodeAuthError::ReplayCacheFull => "replay_cache_full",
        }
    }
}

/// A node-key signature that verified: the key that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedNode {
    /// The signer's key id (§13.2).
    pub key_id: String,
    /// Its public key, 64 lowercase hex digits.
    pub public_key: String,
}

/// The canonical string a node-key signature covers.
pub fn canonical_request(
    authority: &str,
    key_id: &str,
    request: &RequestLine<'_>,
    timestamp: i64,
    nonce: &str,
    body_digest_hex: &str,
) -> String {
    format!(
        "{PREFIX}\n{authority}\n{key_id}\n{}\n{}\n{timestamp}\n{nonce}\n{body_digest_hex}",
        request.method.to_ascii_uppercase(),
        request.path_and_query,
    )
}

/// The value of [`HEADER`] for a request `request` with a body whose hex
/// SHA-256 is `body_digest_hex`, sent to `authority` (as
/// [`crate::signed_auth::authority`] writes it) at `now` with a fresh
/// random `nonce`.
pub fn sign_request(
    key: &NodeKey,
    authority: &str,
    request: &RequestLine<'_>,
    body_digest_hex: &str,
    now: i64,
    nonce: &str,
) -> String {
    let canonical = canonical_request(authority, &key.key_id(), request, now, nonce, body_digest_hex);
    let sig = key.sign_bytes(canonical.as_bytes());
    format!("key={};authority={authority};ts={now};nonce={nonce};sig={}", key.public_hex(), hex::encode(sig))
}

/// The header's parameters, checked for form.
struct Parsed<'a> {
    key: [u8; 32],
    authority: &'a str,
    timestamp: i64,
    nonce: &'a str,
    sig: [u8; 64],
}

fn malformed(problem: impl Into<String>) -> NodeAuthError {
    NodeAuthError::Malformed { problem: problem.into() }
}

fn parse(value: &str) -> Result<Parsed<'_>, NodeAuthError> {
    if value.len() > MAX_HEADER_LEN {
        return Err(malformed(format!("longer than {MAX_HEADER_LEN} bytes")));
    }
    let mut fields: [Option<&str>; 5] = [None; 5];
    const NAMES: [&str; 5] = ["key", "authority", "ts", "nonce", "sig"];
    for part in value.split(';') {
        let (name, text) =
            part.trim().split_once('=').ok_or_else(|| malformed(format!("{part:?} is not name=value")))?;
        let slot = NAMES.iter().position(|n| *n == name).ok_or_else(|| {
            malformed(format!("unknown parameter {:?}", name.chars().take(32).collect::<String>()))
        })?;
        if fields[slot].replace(text).is_some() {
            return Err(malformed(format!("{name} is given twice")));
        }
    }
    let get = |i: usize| fields[i].ok_or_else(|| malformed(format!("{} is missing", NAMES[i])));
    let key = decode_hex::<32>(get(0)?).ok_or_else(|| malformed("key is not 64 lowercase hex digits"))?;
    let authority = get(1)?;
    if !is_valid_authority(authority) {
        return Err(malformed("authority is not a lower-case host:port"));
    }
    let ts = get(2)?;
    if ts.is_empty() || ts.len() > 12 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed("ts is not Unix seconds (1 to 12 digits)"));
    }
    let timestamp = ts.parse().map_err(|_| malformed("ts is not Unix seconds (1 to 12 digits)"))?;
    let nonce = get(3)?;
    if !is_valid_nonce(nonce) {
        return Err(malformed("nonce is not 16 to 128 of A-Z a-z 0-9 _ -"));
    }
    let sig = decode_hex::<64>(get(4)?).ok_or_else(|| malformed("sig is not 128 lowercase hex digits"))?;
    Ok(Parsed { key, authority, timestamp, nonce, sig })
}

/// The key id of the key a header says signed, when the header has its
/// form: a receiver that knows no peer by that key need not verify it.
pub fn signer(value: &str) -> Result<String, NodeAuthError> {
    parse(value.trim()).map(|parsed| key_id(&parsed.key))
}

/// Verifies a node-key signature, in this order: the header's form; the
/// authority one this node answers to (`answers_to`, given it lower-cased);
/// the time within [`MAX_CLOCK_SKEW_SECS`] of `now`; the signature
/// (strict Ed25519: no small-order keys, no malleable signatures); and last
/// the nonce, remembered in `nonces` — so only valid signatures use memory.
pub fn verify(
    value: &str,
    request: &RequestLine<'_>,
    body_digest_hex: &str,
    now: i64,
    nonces: &Mutex<NonceCache>,
    answers_to: &dyn Fn(&str) -> bool,
) -> Result<VerifiedNode, NodeAuthError> {
    let parsed = parse(value.trim())?;
    if !answers_to(parsed.authority) {
        return Err(NodeAuthError::WrongAuthority { signed_for: parsed.authority.to_owned() });
    }
    if parsed.timestamp.abs_diff(now) > MAX_CLOCK_SKEW_SECS.unsigned_abs() {
        return Err(NodeAuthError::ClockSkew {
            skew_secs: parsed.timestamp.saturating_sub(now),
            max_secs: MAX_CLOCK_SKEW_SECS,
        });
    }
    if request.method.contains(['\n', '\r']) || request.path_and_query.contains(['\n', '\r']) {
        return Err(NodeAuthError::Mismatch);
    }
    let verifying =
        VerifyingKey::from_bytes(&parsed.key).map_err(|_| malformed("key is not an Ed25519 public key"))?;
    let id = key_id(&parsed.key);
    let canonical =
        canonical_request(parsed.authority, &id, request, parsed.timestamp, parsed.nonce, body_digest_hex);
    verifying
        .verify_strict(canonical.as_bytes(), &Signature::from_bytes(&parsed.sig))
        .map_err(|_| NodeAuthError::Mismatch)?;
    let mut nonces = nonces.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    nonces.admit(&format!("node:{id}"), parsed.nonce, parsed.timestamp, now, MAX_CLOCK_SKEW_SECS).map_err(
        |e| match e {
            SignedAuthError::ReplayCacheFull => NodeAuthError::ReplayCacheFull,
            _ => NodeAuthError::Replay,
        },
    )?;
    Ok(VerifiedNode { key_id: id, public_key: hex::encode(parsed.key) })
}

#[cfg(test)]
mod tests;
