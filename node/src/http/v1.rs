//! The local API under `/v1/`: what an operator or an agent on this machine
//! reads — skills, one skill with its versions, ranked search, the quarantine, the inbox,
//! the audit log, peers, status — and the operator's writes, which the CLI
//! sends here when a server runs on its data folder: add (a skill folder's
//! files uploaded first, by [`super::blobs`]) and remove a skill, make a local skill private or share it, approve and drop
//! quarantine entries, accept or reject inbox entries and held deletions ([`crate::operator`]
//! and the library, which the CLI calls directly otherwise), report how a
//! skill did and restore a retired one ([`crate::outcomes`]). Who may use it
//! (the API token, the secret, a signed GET) is the `/v1/` guard's
//! ([`super::guard`]).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use ecp_protocol::bundle::{FileMode, SKILL_MD};
use ecp_protocol::wire::BundleFile;

use crate::import::Companion;
use crate::store::search::QueryError;
use crate::store::{StoreError, Verdict};

use super::error::ApiError;
use super::state::AppState;
use crate::operator::{self, AddError};
use crate::outcomes::{self, OutcomeError};
use crate::sharing::Decision;

/// `GET /v1/skills`: every skill, the folders' report, and the pins (#25).
pub(super) async fn list_skills(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let (skills, folders, pins) = tokio::task::spawn_blocking(move || {
        let store = library.store();
        Ok::<_, StoreError>((store.list_skills()?, crate::import::FolderReport::of(&library)?, store.pins()?))
    })
    .await??;
    let mut answer = folders.into_json();
    answer.insert("skills".into(), json!(skills));
    // #25: the version each pinned skill's file shows; a newer `version` is available.
    answer.insert("pins".into(), json!(pins));
    Ok(Json(Value::Object(answer)))
}

/// `GET /v1/skills/{name}`: the record, packet, versions, grants removed,
/// and `mesh`, how the skill fares across the mesh ([`crate::store::Mesh`]).
pub(super) async fn show_skill(
    State(state): State<AppState>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let name = skill_name(name)?;
    let library = state.library.clone();
    let lookup = name.clone();
    let found = tokio::task::spawn_blocking(move || {
        let Some((record, packet, versions)) = library.store().skill(&lookup)? else {
            return Ok(None);
        };
        let removed = library.removed_grants(&packet, record.skill_kind());
        let mesh = library.store().mesh(&lookup)?;
        Ok::<_, crate::store::StoreError>(Some((record, packet, versions, removed, mesh)))
    })
    .await??;
    let (record, packet, versions, removed, mesh) =
        found.ok_or(crate::store::StoreError::NoSuchSkill(name))?;
    Ok(Json(json!({
        "skill": record, "packet": packet, "versions": versions, "removedPermissions": removed, "mesh": mesh
    })))
}

/// The body of `POST /v1/skills`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddSkill {
    /// The SKILL.md text.
    text: String,
    /// The folder it came from (`<folder>/SKILL.md`): its name must match.
    folder: Option<String>,
    /// The folder's other files, as a bundle lists them (`SPEC.md` §12.2),
    /// each uploaded first with `PUT /v1/blobs/{sha256}`; none for a plain skill.
    #[serde(default)]
    files: Vec<BundleFile>,
}

/// `POST /v1/skills` with `{"text": "<SKILL.md>", "folder": "<name>"?,
/// "files": [{"path", "size", "mode", "sha256"}]?}`: adds a local skill —
/// with `files`, the bundle of its folder, whose every file must have been
/// uploaded (`POST /v1/blobs/missing`, `PUT /v1/blobs/{sha256}`) —
/// answering [`operator::Added`], or 422 `skill_refused` saying why not, or
/// 409 `blob_missing` naming a listed file the node does not hold.
pub(super) async fn add_skill(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let (parts, body) = request.into_parts();
    let bytes = super::guard::read_local_body(&state, &parts.headers, body).await?;
    let AddSkill { text, folder, files } = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request(
            "invalid_json",
            format!(
                "the body must be {{\"text\": \"<SKILL.md text>\", \"folder\": \"<name>\", \"files\": \
                 [{{\"path\", \"size\", \"mode\", \"sha256\"}}]}}: {e}"
            ),
        )
    })?;
    let added = tokio::task::spawn_blocking(move || {
        let companions = uploaded_files(&state, &files)?;
        operator::add_skill(&state.library, &state.config, &text, folder.as_deref(), &companions).map_err(
            |e| match e {
                AddError::Refused(why) => {
                    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "skill_refused", why)
                }
                AddError::Store(e) => e.into(),
            },
        )
    })
    .await??;
    Ok(Json(json!(added)))
}

/// The files `listed` besides `SKILL.md`, read from the blobs uploaded for
/// them; blocking. The listing only names them: the node makes the
/// bundle's listing again from the bytes, so a wrong size or mode cannot
/// get in.
fn uploaded_files(state: &AppState, listed: &[BundleFile]) -> Result<Vec<Companion>, ApiError> {
    let limits = state.library.bundle_limits();
    if listed.len() > limits.max_files {
        let (count, limit) = (listed.len(), limits.max_files);
        let e = ecp_protocol::bundle::BundleError::TooManyFiles { count, limit };
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "skill_refused", e.to_string()));
    }
    let mut companions = Vec::with_capacity(listed.len());
    for file in listed.iter().filter(|f| f.path != SKILL_MD) {
        let sha256 = super::blobs::checked_digest(&file.sha256)?;
        let bytes = match state.library.store().blob_files().read(sha256) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let path: String = file.path.chars().take(200).flat_map(char::escape_default).collect();
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "blob_missing",
                    format!(
                        "the file \"{path}\" (sha256 {sha256}) was not uploaded; PUT /v1/blobs/{sha256} its bytes \
                         first (POST /v1/blobs/missing says which the node lacks)"
                    ),
                ));
            }
            Err(e) => return Err(ApiError::internal(&e)),
        };
        let executable = file.mode == FileMode::Executable.as_str();
        companions.push(Companion { path: file.path.clone(), bytes, executable });
    }
    Ok(companions)
}

/// `DELETE /v1/skills/{name}`: the skill becomes a tombstone ([`operator::Removed`]).
pub(super) async fn remove_skill(
    State(state): State<AppState>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let name = skill_name(name)?;
    let removed =
        tokio::task::spawn_blocking(move || operator::remove_skill(&state.library, &name)).await??;
    Ok(Json(json!(removed)))
}

/// `POST /v1/quarantine/{id}/approve` with an optional `{"force": bool}`
/// ([`operator::Approved`]): 409 `needs_force` for an entry the scan
/// flagged, unless forced.
pub(super) async fn approve(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let ApproveBody { force } = optional_json(&body, r#"{"force": true|false}"#)?;
    // Through `Serving`: a hub replica reviews the hub's quarantine.
    let approved =
        tokio::task::spawn_blocking(move || state.serving.approve(&state.config, id, force)).await??;
    Ok(Json(json!(approved)))
}

/// `DELETE /v1/quarantine/{id}` ([`operator::Dropped`]).
pub(super) async fn drop_entry(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let dropped = tokio::task::spawn_blocking(move || state.serving.drop_quarantined(id)).await??;
    Ok(Json(json!(dropped)))
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
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let body: ShareBody = optional_json(&body, r#"{"allowSecrets": true|false}"#)?;
    let library = state.library.clone();
    let lookup = name.clone();
    let decision = tokio::task::spawn_blocking(move || library.share(&lookup, body.allow_secrets)).await??;
    decided(&state, name, decision).await
}

/// A write must say `Content-Type: application/json`: a web page the user
/// visits cannot send that to a loopback address without the browser
/// asking first (CORS), and the node never says yes — so a page cannot
/// share the user's private skills behind their back.
pub(super) fn json_request(headers: &HeaderMap) -> Result<(), ApiError> {
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

/// The skill name of a `{name}` path, or 400 `invalid_path`.
pub(super) fn skill_name(name: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
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
    let serving = state.serving.clone();
    let entries = tokio::task::spawn_blocking(move || serving.quarantine()).await??;
    Ok(Json(json!({ "quarantine": entries })))
}

#[derive(Deserialize)]
pub(super) struct SearchQuery {
    q: Option<String>,
    limit: Option<String>,
    tags: Option<String>,
}

/// `GET /v1/search?q=QUERY[&limit=N][&tags=A,B]`: ranked full-text search
/// over the skills shown here ([`crate::store::search`]), best first, only
/// those carrying every tag given; 400 `empty_query`, `invalid_query`,
/// `invalid_limit` or `invalid_tags` naming what to fix.
pub(super) async fn search(
    State(state): State<AppState>,
    query: Result<Query<SearchQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(SearchQuery { q, limit, tags }) = query.map_err(|_| {
        ApiError::bad_request(
            "invalid_query",
            "the query string must be q=WORDS with an optional &limit=N and &tags=A,B",
        )
    })?;
    // Through `Serving`: a hub replica searches the hub's database.
    let serving = state.serving.clone();
    let answer = tokio::task::spawn_blocking(move || {
        serving.search_text(q.as_deref().unwrap_or(""), limit.as_deref(), tags.as_deref())
    })
    .await??;
    let answer = answer.map_err(|e| {
        let code = match e {
            QueryError::Empty => "empty_query",
            QueryError::Limit(_) => "invalid_limit",
            QueryError::TooManyTags { .. } | QueryError::Tag(_) => "invalid_tags",
            _ => "invalid_query",
        };
        ApiError::bad_request(code, e.to_string())
    })?;
    Ok(Json(json!(answer)))
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

/// `GET /v1/origin-keys`: this node's own key, and every origin it knows
/// a key of, with how (`pinned`, `manifest`, `first-use`; `SPEC.md` §13.6).
pub(super) async fn origin_keys(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let (own, known) = tokio::task::spawn_blocking(move || {
        let key = library.store().node_key();
        let own = json!({ "instance": library.store().instance_id(), "keyId": key.key_id(), "publicKey": key.public_hex() });
        library.store().origin_keys().map(|known| (own, known))
    })
    .await??;
    Ok(Json(json!({ "node": own, "originKeys": known })))
}

/// `GET /v1/peers`: every peer's federation state — configured, discovered
/// or named on the command line — as `ecp-node peers --json` prints it.
pub(super) async fn peers(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({ "peers": peer_views(&state).await? })))
}

/// Every peer's federation state (`/v1/peers`, the status page).
pub(super) async fn peer_views(state: &AppState) -> Result<Vec<crate::federation::PeerView>, ApiError> {
    Ok(match &state.federator {
        Some(federator) => federator.views().await.map_err(|e| ApiError::internal(&e))?,
        None => {
            let library = state.library.clone();
            let states = tokio::task::spawn_blocking(move || library.store().peer_states()).await??;
            crate::federation::peer_views(states, &[])
        }
    })
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

/// An entry id from the path; a clear 400 when it is not a whole number.
fn entry_id(id: Result<Path<i64>, PathRejection>) -> Result<i64, ApiError> {
    id.map(|Path(id)| id)
        .map_err(|_| ApiError::bad_request("invalid_path", "the entry id in the path must be a whole number"))
}

/// A JSON body of `T`; an empty body is `T::default()`. A clear 400 names
/// what is wrong with anything else.
pub(super) fn optional_json<T: DeserializeOwned + Default>(
    body: &Bytes,
    expected: &str,
) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("the body must be {expected}: {e}")))
}

/// `GET /v1/inbox`: the skills waiting for review.
pub(super) async fn inbox(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let entries = tokio::task::spawn_blocking(move || library.store().inbox()).await??;
    Ok(Json(json!({ "inbox": entries })))
}

/// `GET /v1/inbox/{id}`: one waiting entry and the packet it holds.
pub(super) async fn inbox_entry(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let library = state.library.clone();
    let (entry, packet) = tokio::task::spawn_blocking(move || {
        let entry = library.store().inbox_entry(id)?;
        let packet = library.store().skill(&entry.skill_name)?.map(|(_, packet, _)| packet);
        Ok::<_, StoreError>((entry, packet))
    })
    .await??;
    let packet = packet.ok_or(StoreError::NoSuchInboxEntry(id))?;
    Ok(Json(json!({ "entry": entry, "packet": packet })))
}

/// `POST /v1/inbox/{id}/accept`.
pub(super) async fn inbox_accept(
    state: State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    inbox_decide(state, id, Verdict::Accepted).await
}

/// `POST /v1/inbox/{id}/reject`.
pub(super) async fn inbox_reject(
    state: State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    inbox_decide(state, id, Verdict::Rejected).await
}

async fn inbox_decide(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
    verdict: Verdict,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let library = state.library.clone();
    let entry = tokio::task::spawn_blocking(move || library.inbox_decide(id, verdict)).await??;
    Ok(Json(json!({ "entry": entry, "verdict": verdict })))
}

/// `GET /v1/deletions`: the deletions held for the user.
pub(super) async fn deletions(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let library = state.library.clone();
    let held = tokio::task::spawn_blocking(move || library.store().held_deletions()).await??;
    Ok(Json(json!({ "deletions": held })))
}

/// `POST /v1/deletions/{id}/accept`: the held tombstones go out (or, for
/// a peer's, are merged as they came).
pub(super) async fn deletion_accept(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let (library, policy) = (state.library.clone(), state.config.policy.clone());
    let released = tokio::task::spawn_blocking(move || library.accept_deletion(id, &policy)).await??;
    Ok(Json(json!({ "deletion": released.deletion, "tombstoned": released.done })))
}

/// `POST /v1/deletions/{id}/reject`: the skills stay; the skills folder's
/// files are written back, a peer's withdrawals dropped.
pub(super) async fn deletion_reject(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let library = state.library.clone();
    let released = tokio::task::spawn_blocking(move || library.reject_deletion(id)).await??;
    Ok(Json(json!({ "deletion": released.deletion, "restored": released.done })))
}

/// `GET /v1/quarantine/{id}`: one held entry and its packet as received
/// (`null` when only an excerpt was kept).
pub(super) async fn quarantine_entry(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = entry_id(id)?;
    let serving = state.serving.clone();
    let (entry, packet) = tokio::task::spawn_blocking(move || serving.quarantined(id)).await??;
    Ok(Json(json!({ "entry": entry, "packet": packet })))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApproveBody {
    #[serde(default)]
    force: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct DropBody {
    #[serde(default)]
    all: bool,
    older_than: Option<String>,
}

/// `POST /v1/quarantine/drop` with `{"all": true}` or `{"olderThan": "7d"}`.
pub(super) async fn quarantine_drop_many(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let expected = r#"{"all": true} or {"olderThan": "7d"}"#;
    let DropBody { all, older_than } = optional_json(&body, expected)?;
    let age = match (all, older_than) {
        (true, None) => None,
        (false, Some(text)) => Some(
            crate::config::parse_duration(&text)
                .map_err(|e| ApiError::bad_request("invalid_duration", format!("olderThan: {e}")))?,
        ),
        _ => {
            return Err(ApiError::bad_request(
                "invalid_json",
                format!("the body must be exactly one of {expected}"),
            ));
        }
    };
    let dropped = tokio::task::spawn_blocking(move || state.serving.drop_many(age)).await??;
    Ok(Json(json!({ "dropped": dropped })))
}

/// `POST /v1/skills/{name}/outcomes` with `{"outcome": "success"|"failure",
/// "note"?, "at"?, "id"?}`: counts one use of the skill ([`outcomes::Reported`]);
/// 400 naming a bad field, 404 for a skill not held, 429 past
/// [`outcomes::PER_MINUTE`] reports of the skill in a minute.
pub(super) async fn report_outcome(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let body: outcomes::ReportBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("the body must be {}: {e}", outcomes::BODY_SHAPE))
    })?;
    let (library, rule) = (state.library.clone(), state.config.outcomes);
    let reported = tokio::task::spawn_blocking(move || outcomes::report(&library, rule, &name, body))
        .await?
        .map_err(|e| match e {
            OutcomeError::Invalid { code, message } => ApiError::bad_request(code, message),
            OutcomeError::TooMany { .. } => {
                ApiError::too_many_requests("too_many_outcomes", e.to_string(), 60)
            }
            OutcomeError::Store(e) => e.into(),
        })?;
    Ok(Json(json!(reported)))
}

/// `POST /v1/skills/{name}/restore`: brings a retired skill back ([`outcomes::Restored`]).
pub(super) async fn restore(
    State(state): State<AppState>,
    headers: HeaderMap,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    json_request(&headers)?;
    let name = skill_name(name)?;
    let (library, reshare) = (state.library.clone(), state.config.reshare_external);
    let restored = tokio::task::spawn_blocking(move || outcomes::restore(&library, reshare, &name)).await??;
    Ok(Json(json!(restored)))
}
