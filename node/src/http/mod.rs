//! The HTTP API: the ECP endpoints, `/healthz` and the local `/v1/` API.
//!
//! [`app`] builds the router, so tests can drive it without a socket.
//! Limits are layers, not handler code: a per-client request rate (outermost,
//! so an excess request costs nothing else), a request timeout, and a body
//! limit enforced while reading (`POST /ecp/skills` reads its body itself to
//! answer 413 in the ECP error shape). The per-origin limits on new skills
//! live in the merge ([`crate::store::origin_limits`]).

mod auth;
mod cache;
mod skills;
mod error;
mod v1;
pub mod rate_limit;
mod state;

use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use serde_json::json;

pub use error::ApiError;
pub use state::{AppState, Shared};

/// The node's router.
pub fn app(state: AppState) -> Router {
    let local = Router::new()
        .route("/v1/skills", get(v1::list_skills))
        .route("/v1/skills/{name}", get(v1::show_skill))
        .route("/v1/quarantine", get(v1::quarantine))
        .route("/v1/audit", get(v1::audit))
        .route("/v1/peers", get(v1::peers))
        .route("/v1/status", get(v1::status))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), v1::require_local_or_secret));
    let limiter = rate_limit::ClientLimiter::new(state.config.client_rate_limit);
    let router = Router::new()
        .route("/ecp/manifest", get(skills::get_manifest))
        .route("/ecp/skills", get(skills::get_skills).post(skills::post_skills))
        .route("/healthz", get(healthz))
        .merge(local)
        .fallback(unknown_path)
        .method_not_allowed_fallback(wrong_method)
        .layer(axum::middleware::from_fn_with_state(state.clone(), time_limit));
    // Added last, so it runs first.
    let router = match limiter {
        Some(limiter) => router.layer(axum::middleware::from_fn_with_state(limiter, rate_limit::limit)),
        None => router,
    };
    router.with_state(state)
}

/// Answers 408 in the ECP error shape when a request (body upload included)
/// takes longer than the configured limit. (A merge that already started
/// in the blocking pool still completes and commits as a whole.)
async fn time_limit(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let limit = state.config.request_timeout;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request took longer than {} s; send smaller updates or a faster upload",
                limit.as_secs()
            ),
        )
        .into_response(),
    }
}

async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    Json(json!({
        "status": "ok",
        "instance": state.library.store().instance_id(),
        "sequence": state.library.sequence(),
    }))
}

async fn unknown_path(uri: Uri) -> ApiError {
    ApiError::unknown_path(uri.path())
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    let path: String = uri.path().chars().take(100).collect();
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {path}; GET /ecp/manifest lists what this node serves"),
    )
}
