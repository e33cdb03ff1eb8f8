//! The proposal endpoints (#20, `SPEC.md` §17): `POST /ecp/proposals` and
//! `GET /ecp/proposals/{id}` behind the ECP guard (signed like a push);
//! the operator's `/v1/proposals` (list, show, accept, reject) and
//! `POST /v1/skills/{name}/fork`. The work is [`crate::proposals`]'s.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use ecp_protocol::proposal::{self, Proposal, ProposalError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::Caller;
use super::error::ApiError;
use super::state::AppState;
use super::v1::{json_request, optional_json, skill_name};
use crate::proposals::{self as ops, ProposalsError};

impl From<ProposalsError> for ApiError {
    fn from(e: ProposalsError) -> Self {
        let status = match &e {
            ProposalsError::NoSuchProposal(_) | ProposalsError::NoDerived(_) => StatusCode::NOT_FOUND,
            ProposalsError::NotIncoming(_)
            | ProposalsError::Decided { .. }
            | ProposalsError::NotOnRoute { .. } => StatusCode::CONFLICT,
            ProposalsError::Limited { .. } => {
                return ApiError::too_many_requests(e.code(), e.to_string(), 3600);
            }
            ProposalsError::Refused(ProposalError::Decode(_)) => StatusCode::BAD_REQUEST,
            ProposalsError::Refused(_) | ProposalsError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ProposalsError::BadName { .. } => StatusCode::BAD_REQUEST,
            ProposalsError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        match e {
            ProposalsError::Store(e) => e.into(),
            e => ApiError::new(status, e.code(), e.to_string()),
        }
    }
}

/// `POST /ecp/proposals`: 202 with the answer for a new proposal, 200 for
/// a copy of one held; 4xx naming the check it fails.
pub(super) async fn post(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    client: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "empty_body",
            "request body is empty; send a proposal (SPEC.md §17.2)",
        ));
    }
    let proposal: Proposal = proposal::decode(&body).map_err(ProposalsError::from)?;
    let sender =
        super::skills::sender(&state, &caller, client, &headers, proposal.peer_instance.trim()).await;
    let (policy, per_hour) = (state.config.policy.clone(), state.config.proposals_per_hour);
    let library = state.library.clone();
    let (answer, fresh) =
        tokio::task::spawn_blocking(move || ops::receive(&library, &proposal, &sender, &policy, per_hour))
            .await??;
    let status = if fresh { StatusCode::ACCEPTED } else { StatusCode::OK };
    Ok((status, Json(answer)).into_response())
}

/// `GET /ecp/proposals/{id}`: where a proposal stands.
pub(super) async fn get(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = proposal_id(id)?;
    let library = state.library.clone();
    let held = tokio::task::spawn_blocking(move || library.store().proposal(&id).map(|p| (id, p))).await??;
    match held {
        (_, Some(record)) => Ok(Json(json!(ops::answer(&record)))),
        (id, None) => Err(ProposalsError::NoSuchProposal(id).into()),
    }
}

fn proposal_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let id = id.map(|Path(id)| id).unwrap_or_default();
    if !proposal::is_proposal_id(&id) {
        return Err(ApiError::bad_request(
            "invalid_proposal_id",
            "a proposal id is 16 lowercase hex digits (SPEC.md §17.3)",
        ));
    }
    Ok(id)
}

/// `GET /v1/proposals`: every proposal, newest first.
pub(super) async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let proposals = tokio::task::spawn_blocking(move || ops::list(&library)).await??;
    Ok(Json(json!({ "proposals": proposals })))
}

/// `GET /v1/proposals/{id}`: one proposal with both texts.
pub(super) async fn show(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = proposal_id(id)?;
    let library = state.library.clone();
    let view = tokio::task::spawn_blocking(move || ops::show(&library, &id)).await??;
    Ok(Json(json!(view)))
}

/// The body of `POST /v1/proposals/{id}/accept|reject`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoteBody {
    #[serde(default)]
    note: String,
}

/// Longest note, in bytes.
const MAX_NOTE_BYTES: usize = 2_000;

fn note(body: &Bytes) -> Result<String, ApiError> {
    let NoteBody { note } = optional_json(body, r#"{"note": TEXT}"#)?;
    if note.len() > MAX_NOTE_BYTES {
        return Err(ApiError::bad_request(
            "note_too_long",
            format!("the note is over {MAX_NOTE_BYTES} bytes"),
        ));
    }
    Ok(note)
}

/// `POST /v1/proposals/{id}/accept` with an optional `{"note"}`.
pub(super) async fn accept(
    state: State<AppState>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    decide(state, headers, id, body, true).await
}

/// `POST /v1/proposals/{id}/reject` with an optional `{"note"}`.
pub(super) async fn reject(
    state: State<AppState>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    decide(state, headers, id, body, false).await
}

async fn decide(
    State(state): State<AppState>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    body: Bytes,
    accept: bool,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let (id, note) = (proposal_id(id)?, note(&body)?);
    let library = state.library.clone();
    let decided = tokio::task::spawn_blocking(move || {
        if accept { ops::accept(&library, &id, &note) } else { ops::reject(&library, &id, &note) }
    })
    .await??;
    Ok(Json(json!({ "proposal": decided })))
}

/// The body of `POST /v1/skills/{name}/fork`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ForkBody {
    new_name: String,
}

/// `POST /v1/skills/{name}/fork` with `{"newName"}`: `ecp-node skill fork`.
pub(super) async fn fork(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let ForkBody { new_name } = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body must be {{\"newName\": NAME}}: {e}"))
    })?;
    let library = state.library.clone();
    let packet = tokio::task::spawn_blocking(move || ops::fork(&library, &name, &new_name)).await??;
    Ok(Json(json!({ "name": packet.skill_name, "integrityHash": packet.integrity_hash })))
}
