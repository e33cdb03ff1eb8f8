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

impl From<serde_json::Error> for DecodeError {
    fn from(e: serde_json::Error) -> Self {
        DecodeError::InvalidJson { message: message_of(&e), line: e.line(), column: e.column() }
    }
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
