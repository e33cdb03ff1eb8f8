//! The local API under `/v1/`: what an operator or an agent on this machine
//! reads — skills, one skill with its versions, the quarantine, the audit
//! log, peers, status. Reachable from loopback, or from elsewhere with the secret
//! (`Authorization: Bearer <secret>`, compared in constant time) or with an
//! ECP/1.2 signed request under any key the node holds.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use super::auth::{Caller, authenticate};
use super::error::ApiError;
use super::state::AppState;

/// Lets a request through from loopback, with the secret, or signed
/// (ECP/1.2: the `/v1/` API has only GETs, so there is no body to cover).
pub(super) async fn require_local_or_secret(
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
        return match authenticate(&state, request.method(), request.uri(), request.headers(), b"")? {
            Caller::Signed(_) => Ok(next.run(request).await),
            // An open node has nothing to verify with: the /v1 API stays local.
            _ => Err(local_only()),
        };
    }
    match (&state.config.secret, presented) {
        (Some(secret), Some(given)) if bool::from(secret.as_bytes().ct_eq(given.as_bytes())) => {
            Ok(next.run(request).await)
        }
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

/// `GET /v1/skills`.
pub(super) async fn list_skills(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let skills = tokio::task::spawn_blocking(move || library.store().list_skills()).await??;
    Ok(Json(json!({ "skills": skills })))
}

/// `GET /v1/skills/{name}`.
pub(super) async fn show_skill(
    State(state): State<AppState>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(name) = name.map_err(|_| {
        ApiError::bad_request("invalid_path", "the skill name in the path is not valid UTF-8")
    })?;
    let library = state.library.clone();
    let lookup = name.clone();
    let found = tokio::task::spawn_blocking(move || library.store().skill(&lookup)).await??;
    let (record, packet, versions) = found.ok_or(crate::store::StoreError::NoSuchSkill(name))?;
    Ok(Json(json!({ "skill": record, "packet": packet, "versions": versions })))
}

/// `GET /v1/quarantine`.
pub(super) async fn quarantine(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let entries = tokio::task::spawn_blocking(move || library.store().quarantine()).await??;
    Ok(Json(json!({ "quarantine": entries })))
}

#[derive(Deserialize)]
pub(super) struct AuditQuery {
    limit: Option<usize>,
}

/// `GET /v1/audit[?limit=N]` (newest first, default 100, at most 10,000).
pub(super) async fn audit(
    State(state): State<AppState>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query.map_err(|_| {
        ApiError::bad_request("invalid_query", "limit must be a whole number from 0 to 10000")
    })?;
    let limit = query.limit.unwrap_or(100).min(10_000);
    let library = state.library.clone();
    let entries = tokio::task::spawn_blocking(move || library.store().audit(limit)).await??;
    Ok(Json(json!({ "audit": entries })))
}

/// `GET /v1/peers`: every peer's federation state — configured, discovered
/// or named on the command line — as `ecp-node peers --json` prints it.
pub(super) async fn peers(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let views = match &state.federator {
        Some(federator) => federator.views().await.map_err(|e| ApiError::internal(&e))?,
        None => {
            let library = state.library.clone();
            let states = tokio::task::spawn_blocking(move || library.store().peer_states()).await??;
            crate::federation::peer_views(states, &[])
        }
    };
    Ok(Json(json!({ "peers": views })))
}

/// `GET /v1/status`.
pub(super) async fn status(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let mut status = tokio::task::spawn_blocking(move || library.status()).await??;
    status.insert("authRequired".into(), json!(!state.keyring.current().is_empty()));
    status.insert("acceptLegacy".into(), json!(state.config.accept_legacy && state.verifier.is_some()));
    status.insert("uptimeSeconds".into(), json!(state.started.elapsed().as_secs()));
    Ok(Json(Value::Object(status)))
}
