//! The guards in front of the two authenticated route groups. [`super::app`]
//! puts every route of a group behind its guard, so no handler has
//! authentication code of its own and a new route cannot skip it.
//!
//! - [`ecp`], for the ECP endpoints: reads the body of a request that has
//!   one (a push) whole, under the size limit — 413 in the ECP error shape,
//!   refused on its declared length before a byte is read — then
//!   authenticates the request ([`authenticate`]) and hands the [`Caller`]
//!   to the handler as a request extension (`Extension<Arc<Caller>>`). The
//!   200 or 304 answer to a signed GET is signed on its way out.
//! - [`v1`], for the local `/v1/` API: loopback clients, others with the
//!   secret (`Authorization: Bearer <secret>`, compared in constant time) or
//!   with an ECP/1.2 signed GET under any key the node holds.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use super::answer::BodyDigest;
use super::auth::{Caller, authenticate, sign_answer};
use super::authority::LocalAddr;
use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;

/// Guards a request to an ECP endpoint.
pub(super) async fn ecp(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (mut parts, body) = request.into_parts();
    let local = parts.extensions.get::<LocalAddr>().copied();
    let (caller, body) = if parts.method == Method::GET || parts.method == Method::HEAD {
        (authenticate(&state, local, &parts.method, &parts.uri, &parts.headers, b"")?, body)
    } else {
        let bytes = read_body(&state, &parts.headers, body).await?;
        // The raw bytes, before any decoding (`SPEC.md` §6.3.4, §10.1.4.4).
        (authenticate(&state, local, &parts.method, &parts.uri, &parts.headers, &bytes)?, Body::from(bytes))
    };
    let caller = Arc::new(caller);
    parts.extensions.insert(caller.clone());
    let (method, uri) = (parts.method.clone(), parts.uri.clone());
    let response = next.run(Request::from_parts(parts, body)).await;
    sign(response, &caller, &method, &uri).await
}

/// The body of a request, whole, if it is within the configured limit.
async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let limit = state.config.max_body_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("request body is over the limit of {limit} bytes; send fewer packets per update"),
        )
    };
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|_| too_large())
}

/// Signs the answer to a signed GET when it is a 200 or a 304; errors go
/// unsigned. The digest of a 200 is its cache entry's when the handler
/// attached one ([`super::answer::cached`]), which a handler that encodes
/// its body must do; otherwise that of the body itself.
async fn sign(
    mut response: Response,
    caller: &Caller,
    method: &Method,
    uri: &Uri,
) -> Result<Response, ApiError> {
    let status = response.status();
    if !matches!(caller, Caller::Signed(_))
        || *method != Method::GET
        || !(status == StatusCode::OK || status == StatusCode::NOT_MODIFIED)
    {
        return Ok(response);
    }
    let digest = if status == StatusCode::NOT_MODIFIED {
        // Signed over no body, whatever the digest.
        String::new()
    } else if let Some(entry) = response.extensions_mut().remove::<Cached>() {
        digest_of(entry).await?
    } else if let Some(BodyDigest(digest)) = response.extensions_mut().remove::<BodyDigest>() {
        digest
    } else {
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.map_err(|e| ApiError::internal(&e))?;
        let digest = ecp_protocol::signed_auth::body_digest(&bytes);
        response = Response::from_parts(parts, Body::from(bytes));
        digest
    };
    sign_answer(&mut response, caller, method, uri, &digest);
    Ok(response)
}

/// The digest of a cache entry's body, made off the async threads the first
/// time when it is large (a full listing can be megabytes).
async fn digest_of(entry: Cached) -> Result<String, ApiError> {
    // Small bodies (an incremental `?since=` answer, a manifest) are hashed
    // in place: a thread hop would cost more than the hash.
    if entry.has_digest() || entry.body_len() <= 64 * 1024 {
        return Ok(entry.digest().to_owned());
    }
    Ok(tokio::task::spawn_blocking(move || entry.digest().to_owned()).await?)
}

/// Guards a request to the `/v1/` API: from loopback, with the secret, or
/// signed (ECP/1.2: the `/v1/` API has only GETs, so there is no body to cover).
pub(super) async fn v1(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if peer.ip().is_loopback() {
        return Ok(next.run(request).await);
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let signed = request.headers().contains_key(ecp_protocol::signed_auth::SIGNATURE_HEADER);
    if signed && request.method() == Method::GET {
        let local = request.extensions().get::<LocalAddr>().copied();
        return match authenticate(&state, local, request.method(), request.uri(), request.headers(), b"")? {
            Caller::Signed(_) => Ok(next.run(request).await),
            // An open node has nothing to verify with: the /v1 API stays local.
            _ => Err(local_only()),
        };
    }
    match (&state.config.secret, presented) {
        (Some(secret), Some(given)) if secret.matches(given) => Ok(next.run(request).await),
        _ => Err(local_only()),
    }
}

fn local_only() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "local_only",
        "the /v1 API answers loopback clients, or others that send Authorization: Bearer <secret> or sign \
         their requests (ECP/1.2)",
    )
}
