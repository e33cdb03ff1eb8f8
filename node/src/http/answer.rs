//! The shape of the ECP endpoints' successful answers: a JSON body with its
//! ETag (a cached one gzipped for a client that accepts it), `304 Not
//! Modified`, and the `If-None-Match` test that picks between them. (Errors have their own shape, [`super::error`].)

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::cache::Cached;
use super::error::ApiError;
use super::pieces::Pieces;

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

/// [`cached`], gzipped when the client accepts it (the full listing and the
/// manifest, whose gzip encodings each entry makes once), with `Vary`.
pub(super) async fn cached_gzip_if_accepted(headers: &HeaderMap, entry: Cached, etag: &str) -> Response {
    let accepts_gzip =
        headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()).is_some_and(accepts_gzip);
    let vary = HeaderValue::from_static("accept-encoding");
    if !accepts_gzip {
        let mut response = cached(entry.body(), entry, etag);
        response.headers_mut().insert(header::VARY, vary);
        return response;
    }
    let encoding = entry.clone();
    let gzipped = match tokio::task::spawn_blocking(move || encoding.gzipped()).await {
        Ok(Ok(pieces)) => pieces,
        Ok(Err(e)) => return ApiError::from(e).into_response(),
        Err(e) => return ApiError::internal(&crate::joined::described(&e)).into_response(),
    };
    // A signature covers the JSON before gzip (`SPEC.md` §10.1.6): the entry's.
    let mut response = cached(gzipped.body(), entry, etag);
    response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    response.headers_mut().insert(header::VARY, vary);
    response
}

/// Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3):
/// `gzip` named with a weight above zero, or else `*` so named; a weight of
/// zero (`gzip;q=0`) refuses it, and a named `gzip` outranks `*`.
fn accepts_gzip(value: &str) -> bool {
    let mut wildcard = None;
    for coding in value.split(',') {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let weight = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
            return weight > 0.0;
        }
        if name == "*" {
            wildcard = Some(weight > 0.0);
        }
    }
    wildcard.unwrap_or(false)
}

/// A 200 whose body is `pieces` ([`super::pieces`]: a buffer shared with a
/// cache is never copied, a packed run is unpacked as it is sent). With
/// `digest`, the answer carries the digest its signature covers.
pub(super) fn pieces(pieces: &Pieces, etag: &str, digest: Option<String>) -> Response {
    let mut response = json(StatusCode::OK, Bytes::new(), Some(etag));
    *response.body_mut() = pieces.body();
    if let Some(digest) = digest {
        response.extensions_mut().insert(BodyDigest(digest));
    }
    response
}

/// The digest of an answer's body, made by its handler, for the guard that
/// signs it.
#[derive(Debug, Clone)]
pub(super) struct BodyDigest(pub(super) String);

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
    use super::super::pieces::Piece;
    use super::*;

    #[test]
    fn gzip_is_accepted_by_name_or_wildcard_with_a_weight_above_zero() {
        for yes in
            ["gzip", "GZip", "br, gzip", "gzip;q=0.5", "gzip; q=0.001", "x-gzip", "*", "deflate, *;q=0.1"]
        {
            assert!(accepts_gzip(yes), "{yes}");
        }
        for no in [
            "",
            "identity",
            "br, deflate",
            "gzip;q=0",
            "gzip; q=0.0",
            "gzip;q=0.000",
            "*;q=0",
            "gzip;q=0, *",
            "gzipx",
        ] {
            assert!(!accepts_gzip(no), "{no}");
        }
    }

    #[tokio::test]
    async fn a_pieces_answer_is_its_pieces_in_order_with_their_digest_and_length() {
        let pieces = Pieces::new(
            [&b"{\"a\":"[..], b"", b"1}"].map(|p| Piece::Bytes(Bytes::copy_from_slice(p))).to_vec(),
        );
        let digest = pieces.digest().unwrap();
        assert_eq!(digest, ecp_protocol::signed_auth::body_digest(b"{\"a\":1}"));
        let response = super::pieces(&pieces, "\"t\"", Some(digest.clone()));
        assert_eq!(response.extensions().get::<BodyDigest>().map(|d| d.0.as_str()), Some(digest.as_str()));
        let body = response.into_body();
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), Some(7));
        assert_eq!(&axum::body::to_bytes(body, 100).await.unwrap()[..], b"{\"a\":1}");
    }
}
