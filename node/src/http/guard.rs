//! The guards in front of the two authenticated route groups. [`super::app`]
//! puts every route of a group behind its guard, so no handler has
//! authentication code of its own and a new route cannot skip it.
//!
//! - [`ecp`], for the ECP endpoints: reads the body of a request that has
//!   one (a push) whole, under the size limit — 413 in the ECP error shape,
//!   refused on its declared length before a byte is read — and within the
//!   node's budget of body bytes in flight (`body_budget`), then
//!   authenticates the request ([`authenticate`]) and hands the [`Caller`]
//!   to the handler as a request extension (`Extension<Arc<Caller>>`); on a
//!   hub, a signed request's nonce is admitted in the database too, so a
//!   request replayed to another replica is refused. The
//!   200 or 304 answer to a signed GET is signed on its way out.
//! - [`v1`], for the local `/v1/` API: clients with the API token or the
//!   secret (`Authorization: Bearer`, compared in constant time), with an
//!   ECP/1.2 signed GET under any key the node holds, or, under
//!   `trust_loopback`, from this machine ([`is_local`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use super::answer::BodyDigest;
use super::auth::{Caller, Content, authenticate, authenticate_content, sign_answer};
use super::authority;
use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;
use crate::store::hub::Admission;

/// Guards a request to an ECP endpoint.
pub(super) async fn ecp(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (mut parts, body) = request.into_parts();
    let conn = &parts.extensions;
    let mut reservation = None;
    let (caller, body) = if parts.method == Method::GET || parts.method == Method::HEAD {
        (authenticate(&state, conn, &parts.method, &parts.uri, &parts.headers, b"")?, body)
    } else if parts.method == Method::PUT {
        // A blob upload (`SPEC.md` §12.8.4–5), the one PUT: streamed by its
        // handler under the per-file limit, not read here; authenticated
        // with the digest its path names before a byte of it is read.
        let digest = super::blobs::put_digest(parts.uri.path())?;
        let content = Content::Digest(digest);
        (authenticate_content(&state, conn, &parts.method, &parts.uri, &parts.headers, content)?, body)
    } else {
        let declared = declared_length(&parts.headers);
        if declared.is_some_and(|n| n > state.config.max_body_bytes as u64) {
            return Err(too_large(state.config.max_body_bytes));
        }
        // Held until the answer is made: decoding and merging use the body.
        let client = parts.extensions.get::<ConnectInfo<SocketAddr>>().map_or(UNKNOWN_CLIENT, |c| c.0.ip());
        let bytes_wanted = declared.map_or(state.config.max_body_bytes, |n| n as usize);
        reservation = Some(state.body_budget.reserve(client, bytes_wanted).await?);
        let bytes = read_body(&state, body).await?;
        // The raw bytes, before any decoding (`SPEC.md` §6.3.4, §10.1.4.4).
        (authenticate(&state, conn, &parts.method, &parts.uri, &parts.headers, &bytes)?, Body::from(bytes))
    };
    if let Caller::Signed(signed) = &caller {
        let cap = state.config.replay_cache_capacity;
        match state.serving.admit_nonce(signed.key_id(), signed.nonce(), cap).await? {
            Admission::Admitted => {}
            // Admitted by this replica's cache, but another replica of the hub took it first.
            Admission::Replayed => return Err(ecp_protocol::SignedAuthError::Replay.into()),
            // The hub holds as many of this key's nonces as one key may.
            Admission::Full => return Err(ecp_protocol::SignedAuthError::ReplayCacheFull.into()),
        }
    }
    let caller = Arc::new(caller);
    parts.extensions.insert(caller.clone());
    let (method, uri) = (parts.method.clone(), parts.uri.clone());
    let response = next.run(Request::from_parts(parts, body)).await;
    drop(reservation);
    sign(response, &caller, &method, &uri).await
}

/// The address a request is accounted under when the router runs without a
/// socket (tests): one shared client.
const UNKNOWN_CLIENT: IpAddr = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("request body is over the limit of {limit} bytes; send fewer packets per update"),
    )
}

/// The body of a `/v1/` write, whole, if it is within the configured limit:
/// refused on its declared length before a byte is read.
pub(super) async fn read_local_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    if declared_length(headers).is_some_and(|n| n > state.config.max_body_bytes as u64) {
        return Err(too_large(state.config.max_body_bytes));
    }
    read_body(state, body).await
}

/// The body of a request, whole, if it is within the configured limit
/// (its declared length was checked before the reservation).
async fn read_body(state: &AppState, body: Body) -> Result<Bytes, ApiError> {
    let limit = state.config.max_body_bytes;
    axum::body::to_bytes(body, limit).await.map_err(|_| too_large(limit))
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
        return Ok(entry.digest()?.to_owned());
    }
    Ok(tokio::task::spawn_blocking(move || entry.digest().map(str::to_owned)).await??)
}

/// Guards a request to the `/v1/` API. This one function decides who may
/// use it (the status page's login cookie is kept out of `/v1/` on
/// purpose): a client presenting the API token or the shared secret as
/// `Authorization: Bearer`, compared in constant time; a signed GET
/// (ECP/1.2: the GETs have no body to cover); or, with `trust_loopback`, a
/// [local](is_local) client whose `Host` names this node.
pub(super) async fn v1(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    // A page under another name (DNS rebinding) reaches us from this
    // machine too: only a request naming this node counts as local.
    if state.config.trust_loopback
        && is_local(peer, request.headers())
        && authority::own_host(&state.config.names, state.config.listen, &request).is_some()
    {
        return Ok(next.run(request).await);
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let signed = request.headers().contains_key(ecp_protocol::signed_auth::SIGNATURE_HEADER);
    if signed && request.method() == Method::GET {
        let conn = request.extensions();
        return match authenticate(&state, conn, request.method(), request.uri(), request.headers(), b"")? {
            Caller::Signed(_) => Ok(next.run(request).await),
            // An open node has nothing to verify with.
            _ => Err(token_required()),
        };
    }
    let Some(given) = presented else { return Err(token_required()) };
    // Both compared, whatever the first says: the time taken does not tell
    // which of the two a guess came close to.
    let token = state.api_token.as_ref().is_some_and(|t| t.matches(given));
    let secret = state.config.secret.as_ref().is_some_and(|s| s.matches(given));
    if token | secret {
        return Ok(next.run(request).await);
    }
    Err(token_required())
}

/// Whether a request comes from this machine: a loopback address, and no
/// `Forwarded` or `X-Forwarded-For` header — a proxy on this host makes
/// every client look local, and says so only in those headers. The `/v1/`
/// guard (under `trust_loopback`) asks this, and the loopback exemption
/// from the rate limit asks [`is_forwarded`].
pub(super) fn is_local(peer: SocketAddr, headers: &HeaderMap) -> bool {
    peer.ip().to_canonical().is_loopback() && !is_forwarded(headers)
}

/// The client a request is counted against: the address it came from,
/// or, when that is one of the `trusted` balancers (`trusted_proxy`), the
/// nearest address `X-Forwarded-For` names that is not one of them — the
/// header is never believed from anyone else, who could name any address.
pub(super) fn client_address(trusted: &[IpAddr], peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    let peer = peer.to_canonical();
    if !trusted.contains(&peer) {
        return peer;
    }
    let forwarded = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let named: Vec<IpAddr> = forwarded
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .map(|a| a.parse::<IpAddr>().or_else(|_| a.parse::<SocketAddr>().map(|s| s.ip())))
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    // Each balancer appends the address it was reached from: the last one
    // not a balancer of ours is the client (an entry that is not an address
    // makes the header worthless: the balancer's own address counts).
    named.iter().rev().map(|ip| ip.to_canonical()).find(|ip| !trusted.contains(ip)).unwrap_or(peer)
}

/// Whether a proxy says it relays the request for someone else.
pub(super) fn is_forwarded(headers: &HeaderMap) -> bool {
    headers.contains_key(header::FORWARDED) || headers.contains_key("x-forwarded-for")
}

fn token_required() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "api_token_required",
        format!(
            "the /v1 API needs Authorization: Bearer <token>, the token being the contents of the file {} in \
             the node's data folder (readable by the user who runs the node; the ecp-node CLI reads it), or the \
             shared secret, or an ECP/1.2 signed GET",
            crate::api_token::TOKEN_FILE
        ),
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
}
