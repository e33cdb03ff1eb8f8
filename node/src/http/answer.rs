//! The shape of the ECP endpoints' successful answers: a JSON body with its
//! ETag, `304 Not Modified`, and the `If-None-Match` test that picks between
//! them. (Errors have their own shape, [`super::error`].)

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use sha2::{Digest, Sha256};

use super::cache::Cached;

/// A JSON answer, with `etag` when it has one.
pub(super) fn json(status: StatusCode, body: Bytes, etag: Option<&str>) -> Response {
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(t).ok()) {
        h.insert(header::ETAG, tag);
    }
    response
}

/// A 200 whose body (in `body`, perhaps encoded) is the cache entry `entry`:
/// the entry rides along so that the signature of the answer
/// ([`super::guard`]) uses its digest, made once per entry, not once per answer.
pub(super) fn cached(body: Body, entry: Cached, etag: &str) -> Response {
    let mut response = json(StatusCode::OK, Bytes::new(), Some(etag));
    *response.body_mut() = body;
    response.extensions_mut().insert(entry);
    response
}

/// A 200 whose body is `parts` in order, each sent as it is: the parts can
/// share a cached buffer (a run of the [`super::feed::Feed`]), which is
/// then never copied for the answer. With `digest`, the answer carries the
/// digest its signature covers ([`parts_digest`]).
pub(super) fn parts(parts: Vec<Bytes>, etag: &str, digest: Option<String>) -> Response {
    let mut response = json(StatusCode::OK, Bytes::new(), Some(etag));
    *response.body_mut() = parts_body(parts);
    if let Some(digest) = digest {
        response.extensions_mut().insert(BodyDigest(digest));
    }
    response
}

/// A body of `parts` sent in order, each as it is (so a buffer shared with
/// a cache is never copied), with their total as its Content-Length.
pub(super) fn parts_body(parts: Vec<Bytes>) -> Body {
    let remaining = parts.iter().map(|p| p.len() as u64).sum();
    Body::new(Parts { parts: parts.into(), remaining })
}

/// The lowercase hex SHA-256 of the concatenation of `parts`: what a
/// signature over a [`parts`] answer covers (`SPEC.md` §10.1.6).
pub(super) fn parts_digest(parts: &[Bytes]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part);
    }
    hex::encode(hash.finalize())
}

/// The digest of an answer's body, made by its handler, for the guard that
/// signs it.
#[derive(Debug, Clone)]
pub(super) struct BodyDigest(pub(super) String);

/// A body of buffers sent in order, of known length (so it has a
/// Content-Length).
struct Parts {
    parts: VecDeque<Bytes>,
    remaining: u64,
}

impl hyper::body::Body for Parts {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let next = this.parts.pop_front();
        if let Some(part) = &next {
            this.remaining -= part.len() as u64;
        }
        Poll::Ready(next.map(|part| Ok(Frame::data(part))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// `304 Not Modified` with the ETag that matched.
pub(super) fn not_modified(etag: &str) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    if let Ok(tag) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(header::ETAG, tag);
    }
    response
}

/// Whether `If-None-Match` names `etag` (or `*`).
pub(super) fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    let Some(value) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else { return false };
    value.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == etag || t == "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_parts_answer_is_its_parts_in_order_with_their_digest_and_length() {
        let pieces = vec![Bytes::from_static(b"{\"a\":"), Bytes::new(), Bytes::from_static(b"1}")];
        let digest = parts_digest(&pieces);
        assert_eq!(digest, ecp_protocol::signed_auth::body_digest(b"{\"a\":1}"));
        let response = parts(pieces, "\"t\"", Some(digest.clone()));
        assert_eq!(response.extensions().get::<BodyDigest>().map(|d| d.0.as_str()), Some(digest.as_str()));
        let body = response.into_body();
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), Some(7));
        assert_eq!(&axum::body::to_bytes(body, 100).await.unwrap()[..], b"{\"a\":1}");
    }
}
