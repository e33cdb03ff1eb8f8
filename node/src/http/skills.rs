//! `GET /ecp/skills` (with ETag, `If-None-Match` and `?since=N`) and
//! `POST /ecp/skills` (`SPEC.md` › HTTP): the skills a node serves, and the
//! updates it is sent. Authentication, the size limit of a push and the
//! signature of the answer to a signed GET are the ECP guard's
//! ([`super::guard`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ecp_protocol::KnowledgeUpdate;

use super::answer::{self, matches_etag, not_modified};
use super::auth::Caller;
use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;
use crate::intake::{Sender, address_account, peer_account};
use crate::store::{Served, now};

/// `GET /ecp/skills[?since=N]`.
pub(super) async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let since = match query.get("since") {
        None => None,
        Some(text) => Some(text.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            ApiError::bad_request("invalid_query", "since must be a sequence number (an integer ≥ 0)")
        })?),
    };
    let instance = state.library.store().instance_id().to_owned();
    let etag_for = |seq: i64| match since {
        None => format!("\"{instance}-{seq}\""),
        Some(n) => format!("\"{instance}-{seq}-since-{n}\""),
    };
    // The answer depends only on the sequence number: a matching tag needs no database.
    let seq = state.library.sequence();
    if matches_etag(&headers, &etag_for(seq)) {
        return Ok(not_modified(&etag_for(seq)));
    }
    let uptime_hours = state.started.elapsed().as_secs_f64() / 3600.0;
    let build = |library: crate::library::Library, instance: String| async move {
        let served = tokio::task::spawn_blocking(move || library.store().served_packets(since)).await??;
        Ok::<_, ApiError>(Cached::new(
            served.seq,
            Bytes::from(encode_update(&instance, &served, uptime_hours)),
        ))
    };
    let listing = match since {
        // The full listing is cached per sequence number and built once per change.
        None => {
            let (library, instance) = (state.library.clone(), instance.clone());
            state.cache.skills.get_or_build(seq, || build(library, instance)).await?
        }
        Some(_) => build(state.library.clone(), instance.clone()).await?,
    };
    let tag = etag_for(listing.seq);
    if matches_etag(&headers, &tag) {
        return Ok(not_modified(&tag));
    }
    Ok(listing_response(&headers, listing, &tag).await)
}

/// A skills listing, gzipped when the client accepts it.
async fn listing_response(headers: &HeaderMap, listing: Cached, etag: &str) -> Response {
    let accepts_gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().split(';').next() == Some("gzip")));
    let vary = HeaderValue::from_static("accept-encoding");
    if !accepts_gzip {
        let mut response = answer::cached(listing.body.clone(), listing, etag);
        response.headers_mut().insert(header::VARY, vary);
        return response;
    }
    let entry = listing.clone();
    let gzipped = match tokio::task::spawn_blocking(move || listing.gzipped()).await {
        Ok(bytes) => bytes,
        Err(e) => return ApiError::internal(&e).into_response(),
    };
    // A signature covers the JSON before gzip (`SPEC.md` §10.1.6): the entry's.
    let mut response = answer::cached(gzipped, entry, etag);
    response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    response.headers_mut().insert(header::VARY, vary);
    response
}

/// Writes an `ECPKnowledgeUpdate` around packets that are already JSON
/// (stored as served), without decoding and re-encoding each of them.
fn encode_update(instance: &str, served: &Served, uptime_hours: f64) -> Vec<u8> {
    let count = served.packets.len();
    let avg = if count == 0 { 0.0 } else { served.confidence_sum / count as f64 };
    let capacity = served.packets.iter().map(|p| p.len() + 1).sum::<usize>() + 512;
    let mut out = Vec::with_capacity(capacity);
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(quoted(&format!("{instance}-{}", served.seq)).as_bytes());
    out.extend_from_slice(b",\"peerInstance\":");
    out.extend_from_slice(quoted(instance).as_bytes());
    out.extend_from_slice(format!(",\"generatedAt\":\"{}\",\"skills\":[", now()).as_bytes());
    for (i, packet) in served.packets.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(packet.as_bytes());
    }
    let stats = serde_json::json!({
        "totalSkills": count,
        "totalExtractions": 0,
        "avgConfidence": avg,
        "uptimeHours": uptime_hours,
        "topWorkflows": [],
    });
    out.extend_from_slice(format!("],\"stats\":{stats},\"sequenceNum\":{}}}", served.seq).as_bytes());
    out
}

/// `POST /ecp/skills`: merge an update; answer the truthful MergeResult.
pub(super) async fn post(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    client: Option<Extension<ConnectInfo<SocketAddr>>>,
    body: Body,
) -> Result<Response, ApiError> {
    // The guard read the body whole, under the size limit, to authenticate it.
    let bytes = axum::body::to_bytes(body, usize::MAX).await.map_err(|e| ApiError::internal(&e))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("empty_body", "request body is empty; send an ECPKnowledgeUpdate"));
    }
    let update = tokio::task::spawn_blocking(move || KnowledgeUpdate::from_json(&bytes)).await??;
    let max = state.config.max_packets;
    if update.skills.len() > max {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_packets",
            format!("update carries {} packets, over the limit of {max}; split it", update.skills.len()),
        ));
    }
    let peer = update.peer_instance.trim();
    if let Err(problem) = ecp_protocol::merge::check_instance_id(peer) {
        return Err(ApiError::bad_request(
            "invalid_peer_instance",
            format!("peerInstance {problem} (it must name the sending instance in 1–128 printable bytes)"),
        ));
    }
    // A push signed with a configured peer's own key is that peer's, whatever
    // peerInstance claims (SPEC.md §10.1.7.1); otherwise a configured peer's
    // claimed instance gets its trust (§5.4.2), anyone else the default (§8.1.2).
    let reshare = state.federator.as_ref().map_or(state.config.reshare_external, |f| f.reshare_external());
    let trust = match (caller.peer(), &state.federator) {
        (Some(owner), _) => owner.trust,
        (None, Some(f)) => f.inbound_trust(peer).unwrap_or(state.config.default_trust),
        (None, None) => state.config.default_trust,
    };
    // The per-sender limits count what the node verified: the peer whose
    // key signed the push, else the client's address — never peerInstance.
    let account = match (caller.peer(), client) {
        (Some(owner), _) => peer_account(&owner.url),
        (None, Some(Extension(ConnectInfo(addr)))) => address_account(addr.ip()),
        (None, None) => "addr:unknown".to_owned(),
    };
    let sender = Sender { instance: peer.to_owned(), account, trust, reshare };
    let library = state.library.clone();
    let policy = state.config.policy.clone();
    let result = tokio::task::spawn_blocking(move || library.merge(update, &sender, &policy)).await??;
    let body = serde_json::to_vec(&result).map_err(|e| ApiError::internal(&e))?;
    Ok(answer::json(StatusCode::OK, body.into(), None))
}
