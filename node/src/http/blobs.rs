//! The blob endpoints of bundles (`SPEC.md` §12.8): `GET /ecp/blobs/{sha256}`,
//! `POST /ecp/blobs/missing` and `PUT /ecp/blobs/{sha256}`; and their
//! `/v1/` twins `POST /v1/blobs/missing` and `PUT /v1/blobs/{sha256}`, by
//! which the operator's CLI uploads a skill folder's files before
//! `POST /v1/skills` lists them (the same handlers behind the `/v1/` guard;
//! the node's own uploads count against no sender's quota). On a hub
//! replica the `/ecp/blobs/` endpoints serve the hub's database
//! ([`crate::store::hub`]; a download streamed by `hub_blobs`).
//!
//! Authentication and the rate limit are the ECP group's, as for every ECP
//! endpoint. A `PUT` is the one request whose body the guard does not read:
//! it is authenticated against the digest its path names, and its handler
//! streams the body to a temporary file, bounded by the per-file limit of
//! bundles (not the request body limit), hashed as it arrives, kept only
//! when its SHA-256 is the path's and it fits the sender's quota.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ecp_protocol::bundle::{BlobQueryError, is_sha256_hex};
use ecp_protocol::wire::{BlobQuery, MissingBlobs};
use hyper::body::Body as _;

use super::answer::{self, BodyDigest};
use super::auth::Caller;
use super::error::ApiError;
use super::state::AppState;
use crate::intake::{address_account, peer_account};
use crate::serving::Serving;
use crate::store::{BlobRefused, StoreError, WriteError};

/// The digest a blob path names, checked (`SPEC.md` §12.8.1).
pub(super) fn checked_digest(sha256: &str) -> Result<&str, ApiError> {
    if is_sha256_hex(sha256) {
        return Ok(sha256);
    }
    let shown: String = sha256.chars().take(80).flat_map(char::escape_default).collect();
    Err(ApiError::bad_request(
        "invalid_digest",
        format!("{shown:?} is not a blob name: a blob is named by its SHA-256, 64 lowercase hex characters"),
    ))
}

/// The digest a `PUT /ecp/blobs/{sha256}` names, read from the request
/// path before the router has parsed it (the guard authenticates with it).
pub(super) fn put_digest(path: &str) -> Result<&str, ApiError> {
    checked_digest(path.strip_prefix("/ecp/blobs/").unwrap_or(path))
}

fn not_found(sha256: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "blob_not_found",
        format!("no skill this node serves lists the blob {sha256}; pull the skill's packet first"),
    )
}

/// `GET /ecp/blobs/{sha256}`: a blob some served skill lists.
pub(super) async fn get(
    State(state): State<AppState>,
    Path(sha256): Path<String>,
) -> Result<Response, ApiError> {
    let sha256 = checked_digest(&sha256)?.to_owned();
    if let Serving::Hub(hub) = &state.serving {
        let served = super::hub_blobs::get(hub.clone(), sha256.clone()).await?;
        return served.ok_or_else(|| not_found(&sha256));
    }
    let library = state.library.clone();
    let digest = sha256.clone();
    let found = tokio::task::spawn_blocking(move || -> Result<Option<Vec<u8>>, StoreError> {
        let store = library.store();
        if !store.serves_blob(&digest)? {
            return Ok(None);
        }
        match store.blob_files().read(&digest) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    });
    let Some(bytes) = found.await?? else { return Err(not_found(&sha256)) };
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"))],
        Body::from(bytes),
    )
        .into_response();
    // The blob's SHA-256 is its name: the signature of the answer covers it.
    response.extensions_mut().insert(BodyDigest(sha256));
    Ok(response)
}

/// `POST /ecp/blobs/missing`: which of the digests asked about this node
/// does not hold, in the order asked, each once. Changes nothing.
pub(super) async fn missing(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let query: BlobQuery = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(
            "invalid_json",
            format!("body is not a blob query {{\"blobs\": [<sha256>, …]}}: {e}"),
        )
    })?;
    query.validate().map_err(|e| match e {
        BlobQueryError::TooMany { .. } => ApiError::bad_request("too_many_blobs", e.to_string()),
        other => ApiError::bad_request("invalid_digest", other.to_string()),
    })?;
    let (library, serving) = (state.library.clone(), state.serving.clone());
    let missing = tokio::task::spawn_blocking(move || -> Result<MissingBlobs, StoreError> {
        let missing = match &serving {
            Serving::Hub(hub) => hub.missing_blobs(&query.blobs)?,
            Serving::Local(_) => library.store().missing_blobs(&query.blobs)?,
        };
        Ok(MissingBlobs { missing: missing.into_iter().map(str::to_owned).collect() })
    })
    .await??;
    let body = serde_json::to_vec(&missing).map_err(|e| ApiError::internal(&e))?;
    Ok(answer::json(StatusCode::OK, body.into(), None))
}

fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "blob_too_large",
        format!("the blob is over the limit of {limit} bytes per file of a bundle; nothing was kept"),
    )
}

fn refused(e: StoreError) -> ApiError {
    match e {
        StoreError::BlobRefused(refused @ (BlobRefused::Quota { .. } | BlobRefused::Full { .. })) => {
            ApiError::new(StatusCode::INSUFFICIENT_STORAGE, "blob_quota_exceeded", refused.to_string())
        }
        other => other.into(),
    }
}

fn write_failed(e: WriteError) -> ApiError {
    match e {
        WriteError::TooLarge { limit } => too_large(limit),
        e @ WriteError::DigestMismatch { .. } => ApiError::bad_request(
            "digest_mismatch",
            format!("{e}; nothing was kept: send the blob's exact bytes"),
        ),
        WriteError::Io(e) => ApiError::internal(&e),
    }
}

/// `PUT /ecp/blobs/{sha256}`: stores a blob ahead of the packet that lists
/// it — 201 when new, 200 when already held.
pub(super) async fn put(
    State(state): State<AppState>,
    Path(sha256): Path<String>,
    Extension(caller): Extension<Arc<Caller>>,
    client: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // Counted against who the node verified sent it, as the per-sender limits are.
    let sender = match (caller.peer(), client) {
        (Some(owner), _) => peer_account(&owner.url),
        (None, Some(Extension(ConnectInfo(addr)))) => address_account(addr.ip()),
        (None, None) => "addr:unknown".to_owned(),
    };
    upload(state, &sha256, sender, &headers, body).await
}

/// `PUT /v1/blobs/{sha256}`: the operator's upload of a file of a skill
/// folder before `POST /v1/skills` lists it (`ecp-node skill add FOLDER`
/// with a server running). The node's own: no sender quota, only the cap
/// on all blobs; otherwise as `PUT /ecp/blobs/{sha256}`.
pub(super) async fn put_own(
    State(state): State<AppState>,
    Path(sha256): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    upload(state, &sha256, String::new(), &headers, body).await
}

/// Streams an upload named `sha256` from `sender` (an account of
/// [`crate::intake`], `""` for this node's own) to the blob store.
async fn upload(
    state: AppState,
    sha256: &str,
    sender: String,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let sha256 = checked_digest(sha256)?.to_owned();
    let limit = state.config.policy.bundle.max_file_bytes;
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    if declared.is_some_and(|n: u64| n > limit) {
        return Err(too_large(limit));
    }
    let blob_limits = state.library.limits().blobs;
    let (store, serving) = (state.library.clone(), state.serving.clone());
    let (digest, who) = (sha256.clone(), sender.clone());
    let held = tokio::task::spawn_blocking(move || -> Result<bool, StoreError> {
        if let Serving::Hub(hub) = &serving {
            // The hub's quota, cap and totals are its database's.
            if hub.holds_blob(&digest)? {
                return Ok(true);
            }
            hub.blob_room(&who, declared.unwrap_or(0))?;
            return Ok(false);
        }
        if store.store().holds_blob(&digest)? {
            return Ok(true);
        }
        store.store().blob_room(&who, declared.unwrap_or(0), &blob_limits)?;
        Ok(false)
    })
    .await?
    .map_err(refused)?;
    if held {
        return Ok(stored(StatusCode::OK, &sha256));
    }
    // On a hub too: the replica's own folder holds the upload while it
    // arrives, until it is checked and copied into the hub's database.
    let mut writer = state.library.store().blob_files().writer(limit).map_err(|e| ApiError::internal(&e))?;
    let mut body = body;
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            ApiError::bad_request(
                "body_interrupted",
                format!("the upload ended early ({e}); nothing was kept"),
            )
        })?;
        if let Some(chunk) = frame.data_ref() {
            writer.write(chunk).map_err(write_failed)?;
        }
    }
    let (library, serving) = (state.library.clone(), state.serving.clone());
    let digest = sha256.clone();
    let new = tokio::task::spawn_blocking(move || -> Result<bool, ApiError> {
        let blob = writer.finish(&digest).map_err(write_failed)?;
        if let Serving::Hub(hub) = &serving {
            let bytes = std::io::BufReader::new(blob.reopen().map_err(|e| ApiError::internal(&e))?);
            return hub.put_blob(&digest, blob.size(), &sender, bytes).map_err(refused);
        }
        library.store().put_blob(blob, &sender, &blob_limits).map_err(refused)
    })
    .await??;
    if new {
        retry_pending(&state, &sha256).await;
    }
    Ok(stored(if new { StatusCode::CREATED } else { StatusCode::OK }, &sha256))
}

/// Installs the bundles pending on the blob just stored whose files are
/// now all held (`SPEC.md` §12.9.2), before the upload is answered; a
/// failure is logged, not answered: the blob is stored, and the sender's
/// next push merges them.
async fn retry_pending(state: &AppState, sha256: &str) {
    let (library, policy, digest) = (state.library.clone(), state.config.policy.clone(), sha256.to_owned());
    let (trust, reshare) = (state.config.default_trust, state.config.reshare_external);
    let serving = state.serving.clone();
    let retried = tokio::task::spawn_blocking(move || match &serving {
        // A hub keeps each pending bundle's sender with it (`hub_pending`).
        Serving::Hub(hub) => hub.retry_pending(&digest, &policy).map(|n| usize::try_from(n).unwrap_or(0)),
        Serving::Local(_) => library.retry_pending_bundles(&digest, &policy, trust, reshare),
    })
    .await;
    match retried {
        Ok(Ok(0)) => {}
        Ok(Ok(installed)) => tracing::info!(installed, blob = %sha256, "pending bundles installed"),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, blob = %sha256, "cannot merge the bundles pending on a blob")
        }
        Err(e) => tracing::error!(error = %e, "the retry of pending bundles panicked"),
    }
}

fn stored(status: StatusCode, sha256: &str) -> Response {
    let body = serde_json::json!({ "sha256": sha256, "stored": status == StatusCode::CREATED });
    answer::json(status, body.to_string().into(), None)
}
