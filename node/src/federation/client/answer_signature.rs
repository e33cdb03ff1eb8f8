//! An answer's signature (`SPEC.md` §10.1.6.1): its four headers kept before
//! the body is read, then checked against the request it answers.

use ecp_protocol::signed_auth::{self, Exchange, MAX_CLOCK_SKEW_SECS, PresentedHeaders, RequestLine};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::{ClientError, SignedGet};
use crate::keys::unix_now;

/// The four signature headers of an answer, kept before its body is read.
pub(super) fn signature_headers(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [
        signed_auth::KEY_ID_HEADER,
        signed_auth::TIMESTAMP_HEADER,
        signed_auth::NONCE_HEADER,
        signed_auth::SIGNATURE_HEADER,
    ] {
        if let Some(value) = headers.get(name) {
            kept.insert(name, value.clone());
        }
    }
    kept
}

/// Checks that an answer with `status`, `headers` and (decoded) `body` is
/// signed for the request `signed` (`SPEC.md` §10.1.6.1).
pub(super) fn verify_answer(
    signed: &SignedGet,
    status: StatusCode,
    headers: &HeaderMap,
    body_digest: &str,
) -> Result<(), ClientError> {
    let presented = PresentedHeaders::read(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let exchange = Exchange {
        request: RequestLine { method: "GET", path_and_query: &signed.target },
        request_nonce: &signed.nonce,
        status: status.as_u16(),
    };
    signed_auth::verify_response_digest(
        &signed.key,
        &presented,
        &exchange,
        body_digest,
        unix_now(),
        MAX_CLOCK_SKEW_SECS,
    )
    .map_err(ClientError::AnswerNotVerified)
}
