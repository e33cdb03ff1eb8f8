//! The local API under `/v1/`: what an operator or an agent on this machine
//! reads — skills, one skill with its versions, the quarantine, the audit
//! log, peers, status — and the sharing of a local skill (`POST
//! /v1/skills/{name}/private|share`, as `ecp-node skill private|share`). Who may read it (loopback, the secret, a signed GET)
//! is the `/v1/` guard's ([`super::guard`]).

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::state::AppState;
use crate::sharing::Decision;

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
    let name = skill_name(name)?;
    let library = state.library.clone();
    let lookup = name.clone();
    let found = tokio::task::spawn_blocking(move || library.store().skill(&lookup)).await??;
    let (record, packet, versions) = found.ok_or(crate::store::StoreError::NoSuchSkill(name))?;
    Ok(Json(json!({ "skill": record, "packet": packet, "versions": versions })))
}

/// The body of `POST /v1/skills/{name}/share` (optional: `{}` by default).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ShareBody {
    /// Share the current content whatever the secret scan finds.
    #[serde(default)]
    allow_secrets: bool,
}

/// `POST /v1/skills/{name}/private`: `ecp-node skill private NAME`.
pub(super) async fn make_private(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let library = state.library.clone();
    let lookup = name.clone();
    let decision = tokio::task::spawn_blocking(move || library.make_private(&lookup)).await??;
    decided(&state, name, decision).await
}

/// `POST /v1/skills/{name}/share` with `{"allowSecrets": bool}`: `ecp-node
/// skill share NAME [--allow-secrets]`. 200 either way: `shared` says
/// whether it now leaves the node, `private` what else keeps it home.
pub(super) async fn share(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let body: ShareBody = if body.iter().all(u8::is_ascii_whitespace) {
        ShareBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::bad_request(
                "invalid_json",
                format!("the body must be {{\"allowSecrets\": true|false}}: {e}"),
            )
        })?
    };
    let library = state.library.clone();
    let lookup = name.clone();
    let decision = tokio::task::spawn_blocking(move || library.share(&lookup, body.allow_secrets)).await??;
    decided(&state, name, decision).await
}

/// A write must say `Content-Type: application/json`: a web page the user
/// visits cannot send that to a loopback address without the browser
/// asking first (CORS), and the node never says yes — so a page cannot
/// share the user's private skills behind their back.
fn json_request(headers: &HeaderMap) -> Result<(), ApiError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if json {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "json_required",
        "send the request with Content-Type: application/json (the body may be empty)",
    ))
}

fn skill_name(name: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(name) = name.map_err(|_| {
        ApiError::bad_request("invalid_path", "the skill name in the path is not valid UTF-8")
    })?;
    Ok(name)
}

/// The answer to a sharing change: the skill as now stored, and the decision.
async fn decided(state: &AppState, name: String, decision: Decision) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let lookup = name.clone();
    let found = tokio::task::spawn_blocking(move || library.store().skill(&lookup)).await??;
    let (record, _, _) = found.ok_or(crate::store::StoreError::NoSuchSkill(name))?;
    Ok(Json(json!({
        "skill": record,
        "shared": decision.private.is_none(),
        "private": decision.private,
        "secrets": decision.secrets,
    })))
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
