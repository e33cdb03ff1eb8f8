//! The ECP/1.1 endpoints (`SPEC.md` › HTTP): `GET /ecp/manifest` (with an
//! ETag), `GET /ecp/skills` (with ETag, `If-None-Match` and `?since=N`) and
//! `POST /ecp/skills`.

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use ecp_protocol::legacy_auth;
use ecp_protocol::{KnowledgeUpdate, Manifest, Timestamp};

use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;
use crate::store::{Sender, Served, now};

/// Checks X-ECP-HMAC on a GET when the node has a secret.
fn authorize_get(state: &AppState, uri: &Uri, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(verifier) = &state.verifier else { return Ok(()) };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let signature = headers.get(legacy_auth::HEADER).and_then(|h| h.to_str().ok());
    Ok(verifier.verify_get(uri.path(), host, signature)?)
}

fn json_response(status: StatusCode, body: Bytes, etag: Option<&str>) -> Response {
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(t).ok()) {
        h.insert(header::ETAG, tag);
    }
    response
}

fn not_modified(etag: &str) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    if let Ok(tag) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(header::ETAG, tag);
    }
    response
}

/// Whether `If-None-Match` names `etag` (or `*`).
fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    let Some(value) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else { return false };
    value.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == etag || t == "*")
}

/// `GET /ecp/manifest`.
pub(super) async fn get_manifest(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize_get(&state, &uri, &headers)?;
    // Our addition: an ETag, so a peer's idle round costs a 304 instead of
    // the whole list of names.
    let instance = state.library.store().instance_id().to_owned();
    let etag_for = |seq: i64| format!("\"{instance}-{seq}-manifest\"");
    let seq = state.library.sequence();
    if matches_etag(&headers, &etag_for(seq)) {
        return Ok(not_modified(&etag_for(seq)));
    }
    let library = state.library.clone();
    let built = state
        .cache
        .manifest
        .get_or_build(
            seq,
            || async move { tokio::task::spawn_blocking(move || build_manifest(&library)).await? },
        )
        .await?;
    let tag = etag_for(built.seq);
    Ok(json_response(StatusCode::OK, built.body, Some(&tag)))
}

fn build_manifest(library: &crate::library::Library) -> Result<Cached, ApiError> {
    let summary = library.store().summary()?;
    let manifest = Manifest {
        instance: library.store().instance_id().to_owned(),
        version: crate::PROTOCOL_VERSION.to_owned(),
        generated_at: now(),
        sequence_num: summary.sequence,
        skill_count: summary.skill_names.len() as i64,
        skill_names: summary.skill_names,
        top_tags: summary.top_tags,
        last_update: summary.last_update.and_then(|t| Timestamp::parse(&t).ok()).unwrap_or_default(),
    };
    let body = serde_json::to_vec(&manifest).map_err(|e| ApiError::internal(&e))?;
    Ok(Cached::new(summary.sequence, body.into()))
}

/// `GET /ecp/skills[?since=N]`.
pub(super) async fn get_skills(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    authorize_get(&state, &uri, &headers)?;
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
        let mut response = json_response(StatusCode::OK, listing.body, Some(etag));
        response.headers_mut().insert(header::VARY, vary);
        return response;
    }
    let gzipped = match tokio::task::spawn_blocking(move || listing.gzipped()).await {
        Ok(bytes) => bytes,
        Err(e) => return ApiError::internal(&e).into_response(),
    };
    let mut response = json_response(StatusCode::OK, gzipped, Some(etag));
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
pub(super) async fn post_skills(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let limit = state.config.max_body_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("request body is over the limit of {limit} bytes; send fewer packets per update"),
        )
    };
    // A declared length over the limit is refused before a byte of the body is read.
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| too_large())?;
    if let Some(verifier) = &state.verifier {
        let signature = headers.get(legacy_auth::HEADER).and_then(|h| h.to_str().ok());
        verifier.verify_post(&bytes, signature)?;
    }
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
    if peer.is_empty()
        || peer.len() > ecp_protocol::merge::MAX_INSTANCE_BYTES
        || peer.chars().any(char::is_control)
    {
        return Err(ApiError::bad_request(
            "invalid_peer_instance",
            "peerInstance must name the sending instance (1–128 printable bytes)",
        ));
    }
    // A configured peer's pushes get its configured trust; anyone else the default (SPEC.md §8.1.2).
    let (trust, reshare) = match &state.federator {
        Some(f) => (f.inbound_trust(peer).unwrap_or(state.config.default_trust), f.reshare_external()),
        None => (state.config.default_trust, state.config.reshare_external),
    };
    let sender = Sender { instance: peer.to_owned(), trust, reshare };
    let library = state.library.clone();
    let policy = state.config.policy.clone();
    let result = tokio::task::spawn_blocking(move || library.merge(update, &sender, &policy)).await??;
    let body = serde_json::to_vec(&result).map_err(|e| ApiError::internal(&e))?;
    Ok(json_response(StatusCode::OK, body.into(), None))
}
