//! The status page: `GET /` serves one server-rendered HTML document —
//! the node, its peers with their health and last error, recent decisions,
//! the quarantine and the inbox with their findings and buttons, the
//! proposals (#20) with their state and note, held
//! deletions, and the skills with origin, confidence and provenance. No
//! script and no external asset: the page works with scripting off and
//! fetches nothing. `GET /login?ticket=…` turns the one-time link
//! `ecp-node ui` prints into a session cookie; the buttons post to thin
//! form endpoints under `/ui/`.
//!
//! Who may see it is [`access`]'s: the page holds what `/v1/` holds, so it
//! opens to the same credentials (or a session cookie), and a client
//! without them gets the same 401 and nothing else.
//!
//! # Layout
//!
//! - `mod.rs`: the routes, the page and the login handler, the page's
//!   security headers.
//! - [`access`]: login tickets, the session cookie, the CSRF token, the
//!   page's guard (own `Host`, same-origin POSTs).
//! - `snapshot`: what the page shows, read in one go, each list bounded.
//! - `render`: the HTML (maud; everything escaped).
//! - [`actions`]: approve / drop / accept / reject, over the `/v1/` handlers.

pub mod access;
pub mod actions;
mod render;
mod snapshot;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

pub use access::{Access, login_link};

use super::authority::LocalAddr;
use super::error::ApiError;
use super::state::AppState;

/// The page, its form endpoints (both behind [`access::guard`]) and the
/// login link's endpoint (open: the ticket is the credential).
pub(super) fn routes(state: &AppState) -> Router<AppState> {
    let guarded = Router::new()
        .route("/", get(show))
        .route("/ui/quarantine/{id}/approve", post(actions::approve))
        .route("/ui/quarantine/{id}/drop", post(actions::drop_entry))
        .route("/ui/inbox/{id}/accept", post(actions::accept))
        .route("/ui/inbox/{id}/reject", post(actions::reject))
        .route_layer(DefaultBodyLimit::max(actions::FORM_BYTES))
        .route_layer(from_fn_with_state(state.clone(), access::guard));
    guarded.route("/login", get(log_in))
}

/// `GET /`.
async fn show(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let local = request.extensions().get::<LocalAddr>().map_or(state.config.listen, |LocalAddr(a)| *a);
    let snapshot = snapshot::read(&state, local).await?;
    let markup = render::page(&snapshot, state.status_page.csrf());
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"))],
        markup.into_string(),
    )
        .into_response();
    page_headers(response.headers_mut());
    Ok(response)
}

#[derive(Deserialize)]
struct LoginQuery {
    ticket: String,
}

/// `GET /login?ticket=…`: a valid ticket sets the session cookie and sends
/// the browser to the page (303), whose URL then no longer holds the ticket.
async fn log_in(
    State(state): State<AppState>,
    query: Result<Query<LoginQuery>, QueryRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    access::own_host(&state, &request)?;
    let Ok(Query(LoginQuery { ticket })) = query else { return Err(access::bad_ticket()) };
    let Some(session) = state.status_page.log_in(&ticket, access::unix_now()) else {
        tracing::warn!("a status page login link was refused: invalid, expired or used");
        return Err(access::bad_ticket());
    };
    let instance = state.library.store().instance_id();
    let mut response =
        (StatusCode::SEE_OTHER, [(header::LOCATION, HeaderValue::from_static("/"))]).into_response();
    response.headers_mut().insert(header::SET_COOKIE, access::set_cookie(&state.config, instance, &session));
    page_headers(response.headers_mut());
    Ok(response)
}

/// What a browser is told about the page: run no script, load nothing,
/// post forms only here, never show it in a frame, keep no copy, and send
/// no `Referer` (the login URL holds a ticket).
fn page_headers(headers: &mut axum::http::HeaderMap) {
    let set: [(HeaderName, &'static str); 5] = [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    for (name, value) in set {
        headers.insert(name, HeaderValue::from_static(value));
    }
}
