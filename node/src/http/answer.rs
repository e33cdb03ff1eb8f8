//! The shape of the ECP endpoints' successful answers: a JSON body with its
//! ETag, `304 Not Modified`, and the `If-None-Match` test that picks between
//! them. (Errors have their own shape, [`super::error`].)

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

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
pub(super) fn cached(body: Bytes, entry: Cached, etag: &str) -> Response {
    let mut response = json(StatusCode::OK, body, Some(etag));
    response.extensions_mut().insert(entry);
    response
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
