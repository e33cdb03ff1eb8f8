//! The ECP endpoints (`SPEC.md` › HTTP): `GET /ecp/manifest` (with an
//! ETag), `GET /ecp/skills` (with ETag, `If-None-Match` and `?since=N`) and
//! `POST /ecp/skills`. Each authenticates its request first
//! ([`super::auth`]); the answers to signed GETs, 200 and 304, are signed.

use std::collections::HashMap;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use ecp_protocol::wire::{AUTH_ECP_1_2, AUTH_X_ECP_HMAC};
use ecp_protocol::{KnowledgeUpdate, Manifest, Timestamp};

use super::auth::{Caller, authenticate, empty_digest, sign_answer};
use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;
use crate::store::{Sender, Served, now};

/// The authentication schemes the node accepts now, as a cache variant:
/// bit 0 ECP/1.2, bit 1 X-ECP-HMAC. An open node advertises none.
fn auth_variant(state: &AppState) -> u8 {
    if state.keyring.current().is_empty() {
        return 0;
    }
    let legacy = state.config.accept_legacy && state.verifier.is_some();
    1 | if legacy { 2 } else { 0 }
}

/// The manifest's `auth` for a variant of [`auth_variant`].
fn advertised(variant: u8) -> Vec<String> {
    [(1, AUTH_ECP_1_2), (2, AUTH_X_ECP_HMAC)]
        .into_iter()
        .filter(|(bit, _)| variant & bit != 0)
        .map(|(_, name)| name.to_owned())
        .collect()
}

/// The SHA-256 a signed answer with `body` covers; nothing for callers
/// whose answers are not signed. Made once per cached body, off the async
/// threads the first time (a full listing can be megabytes).
async fn digest_for(caller: &Caller, body: &Cached) -> Result<String, ApiError> {
    if !matches!(caller, Caller::Signed(_)) {
        return Ok(String::new());
    }
    // Small bodies (an incremental `?since=` answer, a manifest) are hashed
    // in place: a thread hop would cost more than the hash.
    if body.has_digest() || body.body.len() <= 64 * 1024 {
        return Ok(body.digest().to_owned());
    }
    let body = body.clone();
    Ok(tokio::task::spawn_blocking(move || body.digest().to_owned()).await?)
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
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = authenticate(&state, &method, &uri, &headers, b"")?;
    // Our addition: an ETag, so a peer's idle round costs a 304 instead of
    // the whole list of names. It changes with the sequence number alone
    // (SPEC.md §10.2.3): the advertised `auth`, which only a reload of the
    // peers file can change, is informational.
    let instance = state.library.store().instance_id().to_owned();
    let variant = auth_variant(&state);
    let etag_for = |seq: i64| format!("\"{instance}-{seq}-manifest\"");
    let seq = state.library.sequence();
    if matches_etag(&headers, &etag_for(seq)) {
        let mut response = not_modified(&etag_for(seq));
        sign_answer(&mut response, &caller, &method, &uri, empty_digest());
        return Ok(response);
    }
    let library = state.library.clone();
    let built = state
        .cache
        .manifest
        .get_or_build_variant(seq, variant, || async move {
            tokio::task::spawn_blocking(move || build_manifest(&library, variant)).await?
        })
        .await?;
    let tag = etag_for(built.seq);
    let digest = digest_for(&caller, &built).await?;
    let mut response = json_response(StatusCode::OK, built.body, Some(&tag));
    sign_answer(&mut response, &caller, &method, &uri, &digest);
    Ok(response)
}

fn build_manifest(library: &crate::library::Library, variant: u8) -> Result<Cached, ApiError> {
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
        auth: advertised(variant),
    };
    let body = serde_json::to_vec(&manifest).map_err(|e| ApiError::internal(&e))?;
    Ok(Cached::new(summary.sequence, body.into()).with_variant(variant))
}

/// `GET /ecp/skills[?since=N]`.
pub(super) async fn get_skills(
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let caller = authenticate(&state, &method, &uri, &headers, b"")?;
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
        let mut response = not_modified(&etag_for(seq));
        sign_answer(&mut response, &caller, &method, &uri, empty_digest());
        return Ok(response);
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
        let mut response = not_modified(&tag);
        sign_answer(&mut response, &caller, &method, &uri, empty_digest());
        return Ok(response);
    }
    let digest = digest_for(&caller, &listing).await?;
    let mut response = listing_response(&headers, listing, &tag).await;
    if response.status() == StatusCode::OK {
        // The digest covers the JSON before gzip (`SPEC.md` §10.1.6).
        sign_answer(&mut response, &caller, &method, &uri, &digest);
    }
    Ok(response)
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
    method: Method,
    uri: Uri,
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
    // The raw bytes, before any decoding (`SPEC.md` §6.3.4, §10.1.4.4).
    let caller = authenticate(&state, &method, &uri, &headers, &bytes)?;
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
    // A push signed with a configured peer's own key is that peer's, whatever
    // peerInstance claims (SPEC.md §10.1.7.1); otherwise a configured peer's
    // claimed instance gets its trust (§5.4.2), anyone else the default (§8.1.2).
    let reshare = state.federator.as_ref().map_or(state.config.reshare_external, |f| f.reshare_external());
    let trust = match (caller.peer(), &state.federator) {
        (Some(owner), _) => owner.trust,
        (None, Some(f)) => f.inbound_trust(peer).unwrap_or(state.config.default_trust),
        (None, None) => state.config.default_trust,
    };
    let sender = Sender { instance: peer.to_owned(), trust, reshare };
    let library = state.library.clone();
    let policy = state.config.policy.clone();
    let result = tokio::task::spawn_blocking(move || library.merge(update, &sender, &policy)).await??;
    let body = serde_json::to_vec(&result).map_err(|e| ApiError::internal(&e))?;
    Ok(json_response(StatusCode::OK, body.into(), None))
}
