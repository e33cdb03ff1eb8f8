//! The HTTP API: the ECP endpoints, the health endpoints (`/livez`,
//! `/readyz`, `/healthz`), the local `/v1/` API, `/metrics` and the status
//! page (`/`).
//!
//! [`app`] builds the router, so tests can drive it without a socket. The
//! routes come in two groups, each behind a guard that authenticates every
//! request before its handler runs (`guard`); a route added to a group is
//! guarded with no code of its own. Limits are layers, not handler code: a
//! per-client request rate (outermost, so an excess request costs nothing
//! else), a request timeout, and a body limit enforced while reading (the
//! ECP guard reads a push's body itself, to authenticate it and to answer
//! 413 in the ECP error shape) within a budget of body bytes shared by all
//! requests. The per-origin limits on new skills live in
//! the merge ([`crate::store::origin_limits`]).
//!
//! # Layout
//!
//! - `mod.rs`: the router — the two groups, the health endpoints, fallbacks,
//!   limits; [`health_app`], the health endpoints alone (`health_listen`);
//!   [`hub_app`], a hub replica's (the endpoints [`crate::serving`] serves,
//!   search among them),
//!   and [`follow_changes`], cached answers let go of on each change.
//! - `guard`: the guards of the ECP group and of the `/v1/` group, and
//!   what makes a request local.
//! - `body_budget`: the request-body bytes held at once, across requests.
//! - `auth`: who sent a request (ECP/1.2, `X-ECP-HMAC` or an open node),
//!   and the signature of the answer to a signed GET.
//! - `authority`: which `host:port` a signed request may be signed for.
//! - `manifest`: `GET /ecp/manifest`.
//! - `skills`: `GET /ecp/skills` and `POST /ecp/skills`.
//! - `versions`: `GET /ecp/skills/{name}?digest=HEX`, one exact version,
//!   and the local API's history, pin, unpin and rollback (#25).
//! - `proposals`: `POST /ecp/proposals`, `GET /ecp/proposals/{id}`, and the
//!   operator's `/v1/proposals` and `/v1/skills/{name}/fork` (#20).
//! - `blobs`: the blob endpoints of bundles — `GET` and `PUT /ecp/blobs/{sha256}`
//!   (the upload streamed, not read by the guard), `POST /ecp/blobs/missing`,
//!   and the operator's uploads under `/v1/blobs/`.
//! - `answer`: JSON answers with an ETag, 304, `If-None-Match`.
//! - `cache`: encoded answers cached by sequence number.
//! - `gzip`: a cached answer's gzip encoding, kept in chunks.
//! - `feed`: the packets every `GET /ecp/skills` answer is cut from, kept
//!   packed when there are many.
//! - `pieces`: an answer's body as pieces — cached buffers and runs of the
//!   feed unpacked as they are sent — with its digest and length.
//! - `v1`: the local API under `/v1/`: reads, and the operator's writes
//!   (skills, their sharing, the quarantine, the inbox, held deletions).
//! - `events`: `GET /v1/events`, the live event stream (server-sent events).
//! - `metrics`: `GET /metrics`, behind the `/v1/` guard.
//! - `/mcp`: the MCP server over streamable HTTP ([`crate::mcp`]), behind the `/v1/` guard.
//! - `observe`: the metrics layer — requests by route template and status,
//!   latency, body bytes; outermost.
//! - [`status_page`]: `GET /`, the operator's page in a browser, its login
//!   link and its buttons (behind a guard of its own).
//! - [`rate_limit`]: the per-client request rate.
//! - `error`: [`ApiError`], every error answer.
//! - `state`: [`AppState`], what every handler shares.

mod answer;
mod auth;
mod authority;
mod blobs;
pub mod body_budget;
mod cache;
mod caught;
mod error;
mod events;
mod feed;
mod guard;
mod gzip;
mod hub_blobs;
mod manifest;
mod metrics;
mod observe;
mod pieces;
mod proposals;
pub mod rate_limit;
mod skills;
mod state;
pub mod status_page;
#[cfg(test)]
mod tests;
mod v1;
mod versions;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::{any, get, post};
use serde_json::json;

pub use authority::LocalAddr;
pub use error::ApiError;
pub use state::{AppState, Shared};

/// The node's router.
pub fn app(state: AppState) -> Router {
    // #24 item 2: the MCP server over streamable HTTP, guarded as `/v1/` is.
    let mcp = crate::mcp::SkillServer::local(state.library.clone(), state.config.outcomes);
    router(state, ecp_routes(), Some(v1_routes().route_service("/mcp", crate::mcp::http_service(mcp))))
}

/// A hub replica's router (#18 item 5): the ECP endpoints a hub serves
/// (bundles' blobs included, from the hub's database), the health
/// endpoints, and behind the `/v1/` guard `GET /v1/search` (#24 item 1)
/// and the quarantine's review. The rest of the local `/v1/` API (answered
/// 404 `not_on_a_hub`) and the status page need a node's own folders: a
/// hub does not serve them.
pub fn hub_app(state: AppState) -> Router {
    let v1 = quarantine_routes(Router::new().route("/v1/search", get(v1::search)));
    router(state, blob_routes(serving_routes()), Some(v1))
}

/// `routes` with the quarantine's review, which a hub's replicas serve too
/// (on the quarantine they share).
fn quarantine_routes(routes: Router<AppState>) -> Router<AppState> {
    routes
        .route("/v1/quarantine", get(v1::quarantine))
        .route("/v1/quarantine/{id}", get(v1::quarantine_entry).delete(v1::drop_entry))
        .route("/v1/quarantine/{id}/approve", post(v1::approve))
        .route("/v1/quarantine/drop", post(v1::quarantine_drop_many))
}

/// Lets go of the answers cached for older sequence numbers as soon as the
/// store announces a change — on a hub, one that any replica committed
/// (`NOTIFY`) — instead of holding them until the next request.
pub fn follow_changes(state: AppState) -> tokio::task::JoinHandle<()> {
    let mut changes = state.serving.subscribe();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let seq = *changes.borrow_and_update();
            state.cache.feed.forget_older_than(seq);
            state.cache.skills.forget_older_than(seq);
            state.cache.manifest.forget_older_than(seq);
        }
    })
}

/// The ECP endpoints every store serves ([`crate::serving`]).
fn serving_routes() -> Router<AppState> {
    Router::new()
        .route("/ecp/manifest", get(manifest::get))
        .route("/ecp/skills", get(skills::get).post(skills::post))
        // #25: one exact version, by digest (SPEC §5.7).
        .route("/ecp/skills/{name}", get(versions::get_exact))
}

/// `routes` with the blob endpoints of bundles (SPEC §12.8, #26).
fn blob_routes(routes: Router<AppState>) -> Router<AppState> {
    routes
        .route("/ecp/blobs/missing", post(blobs::missing))
        .route("/ecp/blobs/{sha256}", get(blobs::get).put(blobs::put))
}

/// The ECP endpoints (`SPEC.md` › HTTP).
fn ecp_routes() -> Router<AppState> {
    blob_routes(serving_routes())
        // #20: proposals (SPEC §17).
        .route("/ecp/proposals", post(proposals::post))
        .route("/ecp/proposals/{id}", get(proposals::get))
}

/// The local API.
fn v1_routes() -> Router<AppState> {
    quarantine_routes(Router::new())
        .route("/v1/skills", get(v1::list_skills).post(v1::add_skill))
        .route("/v1/skills/{name}", get(v1::show_skill).delete(v1::remove_skill))
        // #26: a skill folder's files, uploaded before `POST /v1/skills` lists them.
        .route("/v1/blobs/missing", post(blobs::missing))
        .route("/v1/blobs/{sha256}", axum::routing::put(blobs::put_own))
        .route("/v1/skills/{name}/private", post(v1::make_private))
        .route("/v1/skills/{name}/share", post(v1::share))
        // #24 item 1: ranked full-text search.
        .route("/v1/search", get(v1::search))
        // #19: how a skill did, and a retired skill brought back.
        .route("/v1/skills/{name}/outcomes", post(v1::report_outcome))
        .route("/v1/skills/{name}/restore", post(v1::restore))
        // #25: versions.
        .route("/v1/skills/{name}/history", get(versions::history))
        .route("/v1/skills/{name}/pin", post(versions::pin))
        .route("/v1/skills/{name}/unpin", post(versions::unpin))
        .route("/v1/skills/{name}/rollback", post(versions::rollback))
        .route("/v1/skills/{name}/revoke", post(versions::revoke))
        .route("/v1/inbox", get(v1::inbox))
        .route("/v1/inbox/{id}", get(v1::inbox_entry))
        .route("/v1/inbox/{id}/accept", post(v1::inbox_accept))
        .route("/v1/inbox/{id}/reject", post(v1::inbox_reject))
        .route("/v1/deletions", get(v1::deletions))
        .route("/v1/deletions/{id}/accept", post(v1::deletion_accept))
        .route("/v1/deletions/{id}/reject", post(v1::deletion_reject))
        .route("/v1/audit", get(v1::audit))
        .route("/v1/origin-keys", get(v1::origin_keys))
        // #20: proposals, and a derived version published under a new name.
        .route("/v1/proposals", get(proposals::list))
        .route("/v1/proposals/{id}", get(proposals::show))
        .route("/v1/proposals/{id}/accept", post(proposals::accept))
        .route("/v1/proposals/{id}/reject", post(proposals::reject))
        .route("/v1/skills/{name}/fork", post(proposals::fork))
        .route("/v1/peers", get(v1::peers))
        .route("/v1/status", get(v1::status))
        // #16: the live event stream, and the metrics, guarded like the rest of /v1/.
        .route("/v1/events", get(events::get))
        .route("/metrics", get(metrics::get))
}

/// The router around the route groups `ecp` and `v1`, each put behind its
/// guard whole. Route layers, so that a method a path does not serve is
/// still a 405, not a refusal to authenticate.
fn router(state: AppState, ecp: Router<AppState>, v1: Option<Router<AppState>>) -> Router {
    let ecp = ecp.route_layer(from_fn_with_state(state.clone(), guard::ecp));
    let v1 = v1.map_or_else(Router::new, |v1| v1.route_layer(from_fn_with_state(state.clone(), guard::v1)));
    let limiter = rate_limit::ClientLimiter::new(state.config.client_rate_limit);
    let router = Router::new()
        .merge(ecp)
        .merge(health_routes())
        .merge(v1)
        .merge(match state.serving {
            crate::serving::Serving::Local(_) => status_page::routes(&state),
            crate::serving::Serving::Hub(_) => Router::new().route("/v1/{*rest}", any(not_on_a_hub)),
        })
        .fallback(unknown_path)
        .method_not_allowed_fallback(wrong_method)
        .layer(from_fn(caught::caught))
        .layer(from_fn_with_state(state.clone(), time_limit));
    // Added last, so it runs first.
    let router = match limiter {
        Some(limiter) => router.layer(from_fn_with_state(limiter, rate_limit::limit)),
        None => router,
    };
    // Outside even the rate limit, so that its refusals are counted too.
    let router = router.layer(from_fn_with_state(state.library.metrics().clone(), observe::observe));
    router.with_state(state)
}

/// Answers 408 in the ECP error shape when a request (body upload included)
/// takes longer than the configured limit — unless a push's handler has
/// started on its (whole, size-limited) update: its merge commits as a whole
/// in the blocking pool whatever happens to the request, so the answer
/// waits for it and says what it did (a 408 then would hide a change that
/// happened). A 408 says that nothing was merged.
async fn time_limit(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let limit = state.config.request_timeout;
    let merging = MergeStarted::default();
    request.extensions_mut().insert(merging.clone());
    let handler = next.run(request);
    tokio::pin!(handler);
    match tokio::time::timeout(limit, &mut handler).await {
        Ok(response) => response,
        Err(_) if merging.is_set() => {
            tracing::info!(
                limit_secs = limit.as_secs_f64(),
                "a merge outlasted the request time limit; answering its result"
            );
            handler.await
        }
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request took longer than {} s and nothing of it was merged; re-sending is safe (merges are \
                 idempotent): send smaller updates or a faster upload",
                limit.as_secs_f64()
            ),
        )
        .into_response(),
    }
}

/// Set by the push handler when it starts on an update (decode, checks,
/// merge): from then on the request time limit waits for its answer instead
/// of answering 408.
#[derive(Debug, Clone, Default)]
pub(crate) struct MergeStarted(Arc<AtomicBool>);

impl MergeStarted {
    /// Marks the merge as started.
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The health endpoints: open to every client, as probes are (they say
/// nothing a manifest does not).
fn health_routes() -> Router<AppState> {
    Router::new().route("/livez", get(livez)).route("/healthz", get(livez)).route("/readyz", get(readyz))
}

/// The health endpoints alone, for the plain-HTTP `health_listen` address
/// probes reach when the main listener requires client certificates.
pub fn health_app(state: AppState) -> Router {
    health_routes()
        .fallback(unknown_path)
        .method_not_allowed_fallback(wrong_method)
        .layer(from_fn(caught::caught))
        .layer(from_fn_with_state(state.clone(), time_limit))
        .with_state(state)
}

async fn livez(State(state): State<AppState>) -> impl IntoResponse {
    Json(json!({
        "status": "ok",
        "instance": state.serving.instance_id(),
        // The newest known without asking the store: liveness is not the database's.
        "sequence": *state.serving.subscribe().borrow(),
    }))
}

/// 200 with every check when ready, 503 with the failed checks' reasons when not.
async fn readyz(State(state): State<AppState>) -> Response {
    let checking = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || match &state.serving {
            crate::serving::Serving::Hub(hub) => crate::health::hub(hub),
            crate::serving::Serving::Local(library) => {
                crate::health::readiness(library, &state.config.data_dir, state.federator.as_ref())
            }
        })
    };
    let readiness = match checking.await {
        Ok(readiness) => readiness,
        Err(e) => return ApiError::internal(&e).into_response(),
    };
    let status = if readiness.ready() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(readiness)).into_response()
}

async fn unknown_path(uri: Uri) -> ApiError {
    ApiError::unknown_path(uri.path())
}

/// The `/v1/` paths a hub replica does not serve: all but search and the quarantine's review.
async fn not_on_a_hub(uri: Uri) -> ApiError {
    let path: String = uri.path().chars().take(100).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_on_a_hub",
        format!(
            "{path} is not on a hub: a hub replica serves the ECP endpoints, /livez, /readyz, GET /v1/search and \
             /v1/quarantine; the rest of /v1/ is a node's own API, on a node of its own"
        ),
    )
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    let path: String = uri.path().chars().take(100).collect();
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {path}; GET /ecp/manifest lists what this node serves"),
    )
}
