//! `GET /metrics`: the node's metrics in the Prometheus text format,
//! behind the `/v1/` guard (the API token, the node's credentials, or
//! trusted loopback), since they tell who the peers are and what arrives.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::state::AppState;
use crate::metrics::CONTENT_TYPE;

/// `GET /metrics`: the gauges read from the store and the nonce memory
/// now, then every series encoded.
pub(super) async fn get(State(state): State<AppState>) -> Result<Response, ApiError> {
    let replay_cache = state.nonces.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len();
    let library = state.library.clone();
    let text = tokio::task::spawn_blocking(move || {
        let metrics = library.metrics();
        metrics.set_replay_cache(replay_cache);
        metrics.refresh(&library)?;
        Ok::<_, crate::store::StoreError>(metrics.encode())
    })
    .await??;
    Ok(([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response())
}
