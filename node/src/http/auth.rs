//! Who sent a request: the one authentication step of the ECP endpoints (and
//! of the `/v1/` API for clients off this machine), and the signature of the
//! answers to signed GETs (`SPEC.md` §10.1, §6). The guards of the route
//! groups ([`super::guard`]) call both; handlers call neither.
//!
//! 0. First, what proves a configured peer without a shared secret
//!    (`SPEC.md` §13.11): a node-key signature (`X-ECP-Node-Signature`)
//!    by the node key of a configured peer, verified (a malformed header,
//!    or a bad signature by a known key, is refused whatever else the
//!    request carries), and the client certificate of an mTLS connection.
//!    A key or certificate of a configured peer makes the request that
//!    peer's; an unknown one proves nothing (and is not verified); two
//!    proofs naming different peers are refused (`identity_conflict`).
//! 1. A node that holds no key — no `--secret`, no `[[key]]`, no peer key —
//!    is open: nothing is checked ([`Caller::Open`], or [`Caller::Proven`]).
//! 2. A request carrying any of the five ECP/1.2 headers is judged by them
//!    alone (§10.1.4.3): signed for an authority this node answers to
//!    ([`super::authority`]), verified over the request target exactly as
//!    it arrived and the raw body, against the node's keys and its peers'
//!    (the keyring's current set), the nonce remembered against replay.
//!    A peer proven in step 0 must be the key's peer, if the key is a peer's.
//! 3. Otherwise a peer proven in step 0 ([`Caller::Proven`]): its node key
//!    or certificate stands in for a shared secret.
//! 4. Otherwise `X-ECP-HMAC`, where the node accepts it (`accept_legacy`,
//!    and a shared secret to check it with): refused with 403 as §6.3
//!    says, as Go clients expect.
//! 5. Otherwise 401: the legacy header is refused (`legacy_auth_refused`),
//!    or nothing was signed (`missing_signature`).
//!
//! Failures of step 2 are 401 with the code of §10.1.4, or 503
//! `replay_cache_full` with `Retry-After` when the nonce memory is full.

use std::sync::LazyLock;

use axum::http::{Extensions, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use ecp_protocol::node_auth::{self, NodeAuthError};
use ecp_protocol::signed_auth::{self, Exchange, PresentedHeaders, RequestLine, SigningKey};
use ecp_protocol::{SignedAuthError, legacy_auth};

use super::authority::{self, LocalAddr};
use super::error::ApiError;
use super::state::AppState;
use crate::keys::{KeyOwner, KeySet, unix_now};
use crate::tls::ClientCert;

/// The five ECP/1.2 headers of a request.
const SIGNED_HEADERS: [&str; 5] = [
    signed_auth::AUTHORITY_HEADER,
    signed_auth::KEY_ID_HEADER,
    signed_auth::TIMESTAMP_HEADER,
    signed_auth::NONCE_HEADER,
    signed_auth::SIGNATURE_HEADER,
];

/// How long a client told "too many signed requests" should wait: nonces
/// leave the memory continuously as their timestamps age past the window.
const REPLAY_CACHE_RETRY_AFTER_SECS: u64 = 30;

/// The digest a signed 304 covers: that of no body.
static EMPTY_DIGEST: LazyLock<String> = LazyLock::new(|| signed_auth::body_digest(b""));

/// The authenticated sender of a request.
#[derive(Debug)]
pub(super) enum Caller {
    /// The node holds no key: nothing was checked.
    Open,
    /// `X-ECP-HMAC` matched the shared secret.
    Legacy,
    /// An ECP/1.2 signature checked out.
    Signed(Signed),
    /// No ECP/1.2 signature, but a configured peer's node key or client
    /// certificate proved the sender.
    Proven(KeyOwner),
}

/// A request whose ECP/1.2 signature checked out.
#[derive(Debug)]
pub(super) struct Signed {
    /// The key it was signed with: its answer is signed with it too.
    key: SigningKey,
    /// Its nonce, echoed in the answer.
    nonce: String,
    /// The configured peer the key belongs to, if it is a peer's key.
    owner: Option<KeyOwner>,
}

impl Signed {
    /// The id of the key the request was signed with.
    pub(super) fn key_id(&self) -> &str {
        self.key.id()
    }

    /// The request's nonce.
    pub(super) fn nonce(&self) -> &str {
        &self.nonce
    }
}

impl Caller {
    /// The configured peer that provably sent the request (signed with its
    /// own key, `SPEC.md` §10.1.7.1).
    pub(super) fn peer(&self) -> Option<&KeyOwner> {
        match self {
            Caller::Signed(signed) => signed.owner.as_ref(),
            Caller::Proven(owner) => Some(owner),
            _ => None,
        }
    }
}

/// The request target as it arrived on the request line: what a signature covers.
pub(super) fn target(uri: &Uri) -> &str {
    uri.path_and_query().map_or_else(|| uri.path(), |pq| pq.as_str())
}

/// Authenticates a request of `method` to `uri` with `headers` and the raw
/// `body` (empty for a GET), whose connection put `conn` on it (the
/// [`LocalAddr`] it arrived at, the client's [`ClientCert`]), before
/// anything else is done with it.
pub(super) fn authenticate(
    state: &AppState,
    conn: &Extensions,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Caller, ApiError> {
    authenticate_content(state, conn, method, uri, headers, Content::Bytes(body))
}

/// What a request's authentication covers of its body.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content<'a> {
    /// The raw body, read whole.
    Bytes(&'a [u8]),
    /// The hex SHA-256 of a body not read yet: a blob upload's, which its
    /// path names (`SPEC.md` §12.8.5). `X-ECP-HMAC` signs its path, as for
    /// a GET: the path's digest binds the content.
    Digest(&'a str),
}

/// [`authenticate`] for a body given as [`Content`].
pub(super) fn authenticate_content(
    state: &AppState,
    conn: &Extensions,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    content: Content<'_>,
) -> Result<Caller, ApiError> {
    let keys = state.keyring.current();
    let local = conn.get::<LocalAddr>().map_or(state.config.listen, |LocalAddr(addr)| *addr);
    let answers_to = |authority: &str| authority::answers_to(&state.config.names, local, authority);
    let line = RequestLine { method: method.as_str(), path_and_query: target(uri) };
    let proven = prove(state, &keys, conn.get::<ClientCert>(), headers, &line, content, &answers_to)?;
    if keys.is_empty() {
        return Ok(proven.map_or(Caller::Open, Caller::Proven));
    }
    if SIGNED_HEADERS.iter().any(|name| headers.contains_key(*name)) {
        let presented = presented(headers)?;
        let verifier = keys.verifier();
        let verified = match content {
            Content::Bytes(body) => {
                verifier.verify(&presented, &line, body, unix_now(), &state.nonces, &answers_to)
            }
            Content::Digest(digest) => {
                verifier.verify_digest(&presented, &line, digest, unix_now(), &state.nonces, &answers_to)
            }
        }?;
        let owner = one_peer(keys.owner(verified.key.id()).cloned(), proven)?;
        return Ok(Caller::Signed(Signed { key: verified.key.clone(), nonce: verified.nonce, owner }));
    }
    if let Some(owner) = proven {
        return Ok(Caller::Proven(owner));
    }
    let legacy = headers.get(legacy_auth::HEADER);
    match &state.verifier {
        Some(verifier) if state.config.accept_legacy => {
            let Some(value) = legacy else {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "missing_signature",
                    "missing signature: sign requests with X-ECP-Key-Id, X-ECP-Timestamp, X-ECP-Nonce and \
                     X-ECP-Signature (ECP/1.2), or with X-ECP-HMAC made with the shared secret",
                ));
            };
            let signature = value.to_str().ok();
            if let (Content::Bytes(body), true) = (content, *method == Method::POST) {
                verifier.verify_post(body, signature)?;
            } else {
                let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
                verifier.verify_get(uri.path(), host, signature)?;
            }
            Ok(Caller::Legacy)
        }
        secret => {
            if legacy.is_some() {
                let why = if secret.is_some() {
                    "X-ECP-HMAC is refused here: this node accepts only ECP/1.2 signatures (accept_legacy is false)"
                } else {
                    "X-ECP-HMAC cannot be checked here: this node has ECP/1.2 keys but no shared secret"
                };
                return Err(unauthorized(
                    "legacy_auth_refused",
                    format!(
                        "{why}; sign with X-ECP-Key-Id, X-ECP-Timestamp, X-ECP-Nonce and X-ECP-Signature"
                    ),
                ));
            }
            Err(SignedAuthError::Missing(signed_auth::KEY_ID_HEADER).into())
        }
    }
}

/// The configured peer that the client certificate `cert` and the node-key
/// signature of `headers`, if any, prove (`SPEC.md` §13.11). A malformed
/// node-key signature, or a bad one by a peer's key, is refused.
fn prove(
    state: &AppState,
    keys: &KeySet,
    cert: Option<&ClientCert>,
    headers: &HeaderMap,
    line: &RequestLine<'_>,
    content: Content<'_>,
    answers_to: &dyn Fn(&str) -> bool,
) -> Result<Option<KeyOwner>, ApiError> {
    let by_cert = cert.and_then(|c| keys.cert_owner(c)).cloned();
    let Some(value) = headers.get(node_auth::HEADER) else { return Ok(by_cert) };
    let value = value
        .to_str()
        .map_err(|_| NodeAuthError::Malformed { problem: "the header is not visible ASCII text".into() })?;
    let digest = match content {
        Content::Bytes(body) => signed_auth::body_digest(body),
        Content::Digest(digest) => digest.to_owned(),
    };
    // A key no peer is known by proves nothing: not verified, no nonce kept.
    let Some(owner) = keys.node_key_owner(&node_auth::signer(value)?) else { return Ok(by_cert) };
    node_auth::verify(value, line, &digest, unix_now(), &state.nonces, answers_to)?;
    one_peer(Some(owner.clone()), by_cert)
}

/// The one peer two proofs name; two different peers are refused.
fn one_peer(a: Option<KeyOwner>, b: Option<KeyOwner>) -> Result<Option<KeyOwner>, ApiError> {
    match (a, b) {
        (Some(a), Some(b)) if a.url != b.url => Err(unauthorized(
            "identity_conflict",
            format!(
                "the request proves two different peers ({} and {}): send each peer's requests with its own \
                 key, certificate and node key",
                a.url, b.url
            ),
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// The four headers as received. One that is present but not visible ASCII
/// is malformed (rather than missing, which would mislead).
fn presented(headers: &HeaderMap) -> Result<PresentedHeaders<'_>, ApiError> {
    for name in SIGNED_HEADERS {
        if let Some(value) = headers.get(name)
            && value.to_str().is_err()
        {
            return Err(SignedAuthError::Malformed { header: name, rule: "visible ASCII text" }.into());
        }
    }
    Ok(PresentedHeaders::read(|name| headers.get(name).and_then(|v| v.to_str().ok())))
}

/// Signs the answer to a signed GET (`SPEC.md` §10.1.6): with the request's
/// key, the answer's own time, the request's nonce, and `body_digest`, the
/// SHA-256 of the body before any Content-Encoding. A 304 is signed over
/// no body, whatever `body_digest` says. Other callers' answers, and
/// answers to other methods, are left as they are.
pub(super) fn sign_answer(
    response: &mut Response,
    caller: &Caller,
    method: &Method,
    uri: &Uri,
    body_digest: &str,
) {
    let Caller::Signed(signed) = caller else { return };
    if *method != Method::GET {
        return;
    }
    let status = response.status();
    let digest = if status == StatusCode::NOT_MODIFIED { EMPTY_DIGEST.as_str() } else { body_digest };
    let exchange = Exchange {
        request: RequestLine { method: method.as_str(), path_and_query: target(uri) },
        request_nonce: &signed.nonce,
        status: status.as_u16(),
    };
    let headers = signed_auth::sign_response_digest(&signed.key, &exchange, digest, unix_now());
    let out = response.headers_mut();
    for (name, value) in headers.pairs() {
        // Key ids, nonces, digits and hex: always valid header values.
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value))
        {
            out.insert(name, value);
        }
    }
}

/// 401 with a challenge naming the scheme to use.
fn unauthorized(code: &'static str, message: String) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
        .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("ECP-1.2"))
}

impl From<NodeAuthError> for ApiError {
    fn from(e: NodeAuthError) -> Self {
        match e {
            NodeAuthError::ReplayCacheFull => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.code(), e.to_string())
                    .with_retry_after(REPLAY_CACHE_RETRY_AFTER_SECS)
            }
            other => unauthorized(other.code(), other.to_string()),
        }
    }
}

impl From<SignedAuthError> for ApiError {
    fn from(e: SignedAuthError) -> Self {
        match e {
            SignedAuthError::ReplayCacheFull => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.code(), e.to_string())
                    .with_retry_after(REPLAY_CACHE_RETRY_AFTER_SECS)
            }
            other => unauthorized(other.code(), other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
