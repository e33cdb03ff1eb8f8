//! Versions over HTTP (#25, [`crate::versions`]): `GET
//! /ecp/skills/{name}?digest=HEX`, one exact version for a peer installing
//! from a lockfile (`SPEC.md` §5.7), and the local API's history, pin,
//! unpin, rollback and revoke (`/v1/skills/{name}/…`), which the CLI sends here
//! when a server runs on its data folder.

use std::collections::HashMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use ecp_protocol::KnowledgeUpdate;
use serde::Deserialize;
use serde_json::{Value, json};

use super::answer;
use super::error::ApiError;
use super::pieces::{Piece, Pieces};
use super::state::AppState;
use super::v1::skill_name;
use crate::library::Library;
use crate::store::Pick;
use crate::versions::{self, Done, VersionError};

impl From<VersionError> for ApiError {
    fn from(e: VersionError) -> Self {
        let (status, code) = match &e {
            VersionError::Store(_) => {
                let VersionError::Store(e) = e else { unreachable!("matched above") };
                return e.into();
            }
            VersionError::NoSuchSkill(_) => (StatusCode::NOT_FOUND, "no_such_skill"),
            VersionError::NoSuchVersion { .. } => (StatusCode::NOT_FOUND, "no_such_version"),
            VersionError::Tombstone { .. } => (StatusCode::CONFLICT, "tombstone"),
            VersionError::Local(_) => (StatusCode::CONFLICT, "local_skill"),
            VersionError::NothingEarlier(_) => (StatusCode::CONFLICT, "nothing_earlier"),
            VersionError::NotOrigin(_) => (StatusCode::CONFLICT, "not_origin"),
            VersionError::AlreadyRevoked { .. } => (StatusCode::CONFLICT, "already_revoked"),
            VersionError::BadReason(_) => (StatusCode::BAD_REQUEST, "invalid_reason"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

/// `GET /ecp/skills/{name}?digest=HEX`: a KnowledgeUpdate holding exactly
/// the version of `name` with that digest, or 404 when this node does not
/// serve it (§5.7).
pub(super) async fn get_exact(
    State(state): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let name = name.map(|Path(n)| n).map_err(|_| {
        ApiError::bad_request("invalid_path", "the skill name in the path is not valid UTF-8")
    })?;
    let Some(text) = query.get("digest") else {
        return Err(ApiError::bad_request(
            "digest_required",
            "add ?digest=HEX: the bundleDigest (its 64 hex digits) or integrityHash of the version wanted; \
             GET /ecp/skills lists the current versions",
        ));
    };
    let digest = match Pick::parse(text) {
        Ok(Pick::Digest(d)) => d,
        _ => {
            return Err(ApiError::bad_request(
                "invalid_query",
                "digest must be 64 lowercase hex digits (an integrityHash, or a bundleDigest with or without \
                 its sha256: prefix)",
            ));
        }
    };
    let serving = state.serving.clone();
    let lookup = name.clone();
    let found = tokio::task::spawn_blocking(move || serving.servable(&lookup, &digest)).await??;
    let Some(packet) = found else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_version",
            format!("this node serves no version of {name:?} with that digest"),
        ));
    };
    let update = KnowledgeUpdate {
        id: format!("{}-{}", state.serving.instance_id(), crate::store::digest_of(&packet)),
        peer_instance: state.serving.instance_id().to_owned(),
        generated_at: crate::store::now(),
        skills: vec![packet],
        sequence_num: state.serving.sequence().await?,
        ..KnowledgeUpdate::default()
    };
    let body = Bytes::from(serde_json::to_vec(&update).map_err(|e| ApiError::internal(&e))?);
    let body = Pieces::new(vec![Piece::Bytes(body)]);
    // The answer's digest for the guard that signs an answer to a signed GET.
    let digest = body.digest().map_err(|e| ApiError::internal(&e))?;
    Ok(answer::pieces(&body, &format!("\"{digest}\""), Some(digest)))
}

/// `GET /v1/skills/{name}/history`: every kept version, oldest first.
pub(super) async fn history(
    State(state): State<AppState>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let name = skill_name(name)?;
    let library = state.library.clone();
    let lookup = name.clone();
    let entries = tokio::task::spawn_blocking(move || versions::history(&library, &lookup)).await??;
    Ok(Json(json!({ "name": name, "versions": entries })))
}

/// The body of `POST /v1/skills/{name}/pin` and `…/rollback` (optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct To {
    /// A version number or digest; none: the default of the action.
    to: Option<String>,
}

/// The version `body` names, if any.
fn to(body: &Bytes) -> Result<Option<Pick>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let To { to } = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body must be {{\"to\": \"VERSION|DIGEST\"}}: {e}"))
    })?;
    to.map(|t| Pick::parse(&t).map_err(|why| ApiError::bad_request("invalid_version", why))).transpose()
}

/// `POST /v1/skills/{name}/pin` with an optional `{"to": "VERSION|DIGEST"}`.
pub(super) async fn pin(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    to_version(state, &headers, name, &body, versions::pin).await
}

/// `POST /v1/skills/{name}/unpin`.
pub(super) async fn unpin(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    super::v1::json_request(&headers)?;
    let name = skill_name(name)?;
    let library = state.library.clone();
    let done = tokio::task::spawn_blocking(move || versions::unpin(&library, &name)).await??;
    Ok(Json(json!(done)))
}

/// `POST /v1/skills/{name}/rollback` with an optional `{"to": "VERSION|DIGEST"}`.
pub(super) async fn rollback(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    to_version(state, &headers, name, &body, versions::rollback).await
}

/// Runs `action` (pin or rollback) on the skill the path names, to the
/// version `body` names if any.
async fn to_version(
    state: AppState,
    headers: &HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: &Bytes,
    action: fn(&Library, &str, Option<&Pick>) -> Result<Done, VersionError>,
) -> Result<Json<Value>, ApiError> {
    super::v1::json_request(headers)?;
    let (name, pick) = (skill_name(name)?, to(body)?);
    let library = state.library.clone();
    let done = tokio::task::spawn_blocking(move || action(&library, &name, pick.as_ref())).await??;
    Ok(Json(json!(done)))
}

/// The body of `POST /v1/skills/{name}/revoke`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RevokeBody {
    /// A version number or digest.
    version: String,
    /// Why (one line, at most 512 bytes).
    reason: String,
}

/// `POST /v1/skills/{name}/revoke` with `{"version": "VERSION|DIGEST", "reason": "…"}`:
/// this node's own skill only (`SPEC.md` §14).
pub(super) async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    super::v1::json_request(&headers)?;
    let name = skill_name(name)?;
    let RevokeBody { version, reason } = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(
            "invalid_json",
            format!("the body must be {{\"version\": \"VERSION|DIGEST\", \"reason\": \"TEXT\"}}: {e}"),
        )
    })?;
    let pick = Pick::parse(&version).map_err(|why| ApiError::bad_request("invalid_version", why))?;
    let library = state.library.clone();
    let done =
        tokio::task::spawn_blocking(move || versions::revoke(&library, &name, &pick, &reason)).await??;
    Ok(Json(json!(done)))
}
