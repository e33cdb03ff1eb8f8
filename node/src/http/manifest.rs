//! `GET /ecp/manifest` (`SPEC.md` › HTTP): what this node holds, in names
//! and counts, with the authentication schemes it accepts — and, our
//! additions, an ETag and gzip for a client that accepts it. Authentication and the signature of the answer are
//! the ECP guard's ([`super::guard`]).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use ecp_protocol::wire::{AUTH_ECP_1_2, AUTH_X_ECP_HMAC};
use ecp_protocol::{Manifest, Timestamp};

use super::answer::{self, matches_etag, not_modified};
use super::cache::Cached;
use super::error::ApiError;
use super::state::AppState;
use crate::serving::Serving;
use crate::store::now;

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

/// `GET /ecp/manifest`.
pub(super) async fn get(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    // Our addition: an ETag, so a peer's idle round costs a 304 instead of
    // the whole list of names. It changes with the sequence number alone
    // (SPEC.md §10.2.3): the advertised `auth`, which only a reload of the
    // peers file can change, is informational.
    let instance = state.serving.instance_id().to_owned();
    let variant = auth_variant(&state);
    let etag_for = |seq: i64| format!("\"{instance}-{seq}-manifest\"");
    let seq = state.serving.sequence().await?;
    if matches_etag(&headers, &etag_for(seq)) {
        return Ok(not_modified(&etag_for(seq)));
    }
    let serving = state.serving.clone();
    let built = state
        .cache
        .manifest
        .get_or_build_variant(seq, variant, || async move {
            tokio::task::spawn_blocking(move || build(&serving, variant)).await?
        })
        .await?;
    let tag = etag_for(built.seq);
    // Gzipped for a client that accepts it: 2.8 MB of names at 100,000
    // skills are 0.27 MB (SPEC.md §10.3.8), for Go pullers too.
    Ok(answer::cached_gzip_if_accepted(&headers, built, &tag).await)
}

fn build(serving: &Serving, variant: u8) -> Result<Cached, ApiError> {
    let summary = serving.summary()?;
    // A hub's: its last change, the same on every replica (review H9).
    let generated_at = serving.stamp(&summary).map_or_else(now, |s| s.generated_at);
    let manifest = Manifest {
        instance: serving.instance_id().to_owned(),
        version: crate::PROTOCOL_VERSION.to_owned(),
        generated_at,
        sequence_num: summary.sequence,
        skill_count: summary.skill_names.len() as i64,
        skill_names: summary.skill_names,
        top_tags: summary.top_tags,
        last_update: summary.last_update.and_then(|t| Timestamp::parse(&t).ok()).unwrap_or_default(),
        auth: advertised(variant),
        // Bundles and the blob endpoints (SPEC §12.8.8); exact versions by
        // digest (§5.7); revocations (§14); proposals (§17) — per backend.
        profiles: serving.profiles(),
        // The key this node signs what it authors with (SPEC §13.6).
        public_key: serving.node_key().public_hex(),
        key_id: serving.node_key().key_id(),
    };
    let body = serde_json::to_vec(&manifest).map_err(|e| ApiError::internal(&e))?;
    Ok(Cached::new(summary.sequence, body.into()).with_variant(variant))
}
