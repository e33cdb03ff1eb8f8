//! The error types of this crate.
//!
//! Only failures are errors. A refused packet is a normal outcome of a merge
//! and is data ([`crate::merge::Decision::Rejected`]), not an `Err`.

use thiserror::Error;

/// A message could not be decoded from JSON.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not valid JSON, not UTF-8, or a field has the wrong type.
    #[error(
        "{message} (line {line}, column {column}); send a JSON object with the ECP field names and types"
    )]
    InvalidJson {
        /// What serde_json reported, e.g. `invalid type: string "x", expected f64`.
        message: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
    },
    /// The bytes are not UTF-8 (anywhere: unknown fields included, which a
    /// JSON decoder skips without reading).
    #[error(
        "body is not valid UTF-8 at byte {offset} (line {line}, column {column}); send UTF-8 JSON (SPEC.md §2.1.1)"
    )]
    InvalidUtf8 {
        /// 0-based offset of the first byte that is not part of valid UTF-8.
        offset: usize,
        /// 1-based line of it.
        line: usize,
        /// 1-based column (in bytes) of it.
        column: usize,
    },
    /// The update carries more packets than the receiver takes at once; none
    /// was decoded.
    #[error("update carries {count} packets, over the limit of {max}; split it")]
    TooManyPackets {
        /// Packets in `skills`.
        count: usize,
        /// The receiver's limit.
        max: usize,
    },
    /// One packet of `skills` does not decode.
    #[error(
        "skills[{index}]: {message} (line {line}, column {column} of that packet); fix or drop that packet"
    )]
    InvalidPacket {
        /// Position of the packet in `skills`.
        index: usize,
        /// What serde_json reported.
        message: String,
        /// 1-based line inside the packet's JSON.
        line: usize,
        /// 1-based column inside the packet's JSON.
        column: usize,
    },
}

/// serde_json's message without the position it appends, and at most 200
/// characters: its messages quote the offending value, which may be huge.
fn message_of(e: &serde_json::Error) -> String {
    const MAX: usize = 200;
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(cut) => &full[..cut],
        None => &full,
    };
    let mut shown: String = message.chars().take(MAX).collect();
    if message.chars().nth(MAX).is_some() {
        shown.push('…');
    }
    shown
}

impl DecodeError {
    /// The error of packet `index`, decoded on its own.
    pub(crate) fn in_packet(index: usize, e: &serde_json::Error) -> Self {
        DecodeError::InvalidPacket { index, message: message_of(e), line: e.line(), column: e.column() }
    }
}

impl DecodeError {
    /// `bytes` are valid UTF-8 up to `offset`: where the first invalid byte stands.
    pub(crate) fn invalid_utf8(bytes: &[u8], offset: usize) -> Self {
        let before = &bytes[..offset];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let column = offset - memchr::memrchr(b'\n', before).map_or(0, |at| at + 1) + 1;
        DecodeError::InvalidUtf8 { offset, line, column }
    }
}

impl From<serde_json::Error> for DecodeError {
    fn from(e: serde_json::Error) -> Self {
        DecodeError::InvalidJson { message: message_of(&e), line: e.line(), column: e.column() }
    }
}

/// A text is not a time ECP can carry (`SPEC.md` §2.5).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TimeError {
    /// Not an RFC 3339 `date-time`.
    #[error("{0}")]
    Syntax(#[from] chrono::ParseError),
    /// A valid RFC 3339 text whose instant, in UTC, falls outside the years
    /// 0000 to 9999 (`0000-01-01T00:00:00+00:01`): it has no RFC 3339 form,
    /// so it could not be written back (Go's encoder refuses it as well).
    #[error("in UTC it falls in year {year}, outside 0000 to 9999, and has no RFC 3339 form")]
    YearOutOfRange {
        /// The year of the instant in UTC.
        year: i32,
    },
}

/// A packet's body does not match its claimed hash.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IntegrityError {
    /// `integrityHash` is not 64 lowercase hex characters.
    #[error("integrityHash {claimed:?} is not 64 lowercase hex characters (SHA-256 of skillBody)")]
    MalformedHash {
        /// The claimed value, cut to 80 characters.
        claimed: String,
    },
    /// SHA-256 of `skillBody` differs from `integrityHash`.
    #[error("integrityHash does not match the SHA-256 of skillBody (claimed {claimed}, computed {computed})")]
    BodyHashMismatch {
        /// The hash the packet claims.
        claimed: String,
        /// The hash of the body it carries.
        computed: String,
    },
}

/// A legacy `X-ECP-HMAC` header was missing or wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The request carries no `X-ECP-HMAC` header but the node has a secret.
    #[error("missing X-ECP-HMAC header: this node requires requests signed with its shared secret")]
    MissingSignature,
    /// The header is not 64 hex characters.
    #[error("X-ECP-HMAC is not 64 hex characters (hex HMAC-SHA256)")]
    MalformedSignature,
    /// The header is well formed but does not match.
    #[error(
        "X-ECP-HMAC does not match: sign the raw body (POST) or the URL path (GET) with the shared secret"
    )]
    SignatureMismatch,
}

/// A signed request or response of ECP/1.2 was refused (`SPEC.md` §10.1).
///
/// Messages name the header and the fix; they never echo a secret.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignedAuthError {
    /// One of the four headers is absent.
    #[error(
        "missing {0} header: sign requests with X-ECP-Key-Id, X-ECP-Timestamp, X-ECP-Nonce and X-ECP-Signature"
    )]
    Missing(&'static str),
    /// A header does not follow its rule.
    #[error("{header} is malformed: expected {rule}")]
    Malformed {
        /// The header.
        header: &'static str,
        /// Its rule.
        rule: &'static str,
    },
    /// A signed request names no authority: it was signed by a client that
    /// predates the binding of signatures to the node addressed.
    #[error(
        "missing X-ECP-Authority header: sign for the host:port you connect to (ECP/1.2 signatures are bound to \
         the node they are sent to, SPEC.md §10.1.3); a client that cannot must be upgraded"
    )]
    Unbound,
    /// A signed request was signed for a node other than this one.
    #[error(
        "the request was signed for {signed_for}, which is not this node: sign for the host:port you connect to \
         (an operator reaching this node under another name lists it in [server] names)"
    )]
    WrongAuthority {
        /// The authority the request was signed for (lower-cased).
        signed_for: String,
    },
    /// The key id names no key this side holds.
    #[error("unknown X-ECP-Key-Id: sign with a key this node is configured with")]
    UnknownKey,
    /// The timestamp is too far from the verifier's clock.
    #[error(
        "X-ECP-Timestamp is {skew_secs} s away from this node's clock (at most {max_secs} s allowed): sync the clock and sign again"
    )]
    ClockSkew {
        /// Signature time minus the verifier's time, seconds.
        skew_secs: i64,
        /// The window.
        max_secs: i64,
    },
    /// The signature does not match the canonical string.
    #[error(
        "X-ECP-Signature does not match: sign the authority, method, path and query, timestamp, nonce and the body's SHA-256 with the key named by X-ECP-Key-Id"
    )]
    SignatureMismatch,
    /// The nonce was already used within the window.
    #[error("X-ECP-Nonce was already used: draw a fresh random nonce for every request")]
    Replay,
    /// The verifier holds as many live nonces as it may.
    #[error("too many signed requests in the replay window; retry later")]
    ReplayCacheFull,
    /// A signed response does not echo the request's nonce.
    #[error("the response's X-ECP-Nonce is not the request's: the response answers another request")]
    NonceMismatch,
}

impl SignedAuthError {
    /// A stable machine-readable code for the error, e.g. for HTTP error bodies.
    pub fn code(&self) -> &'static str {
        match self {
            SignedAuthError::Missing(_) => "missing_signature",
            SignedAuthError::Malformed { .. } => "malformed_signature",
            SignedAuthError::Unbound => "unbound_signature",
            SignedAuthError::WrongAuthority { .. } => "wrong_authority",
            SignedAuthError::UnknownKey => "unknown_key",
            SignedAuthError::ClockSkew { .. } => "clock_skew",
            SignedAuthError::SignatureMismatch => "bad_signature",
            SignedAuthError::Replay => "replayed_nonce",
            SignedAuthError::ReplayCacheFull => "replay_cache_full",
            SignedAuthError::NonceMismatch => "nonce_mismatch",
        }
    }
}
