//! `GET /v1/events`: the live event stream ([`crate::events`]) as
//! server-sent events — `event: audit` with the audit entry as JSON data
//! and its id as the event id, for each entry committed after the client
//! connected; a comment every 15 s keeps idle connections alive. A client
//! that falls behind gets one `event: dropped` saying how many entries it
//! lost, and the stream ends.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::ApiError;
use super::state::AppState;
use crate::events::{BUFFER, MAX_SUBSCRIBERS, Next};

/// How often an idle stream carries a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /v1/events`; 503 `too_many_subscribers` past [`MAX_SUBSCRIBERS`].
pub(super) async fn get(State(state): State<AppState>) -> Response {
    let Some(subscription) = state.library.events().subscribe() else {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_subscribers",
            format!(
                "{MAX_SUBSCRIBERS} clients already follow this node's events; close one, or read the audit log \
                 (`ecp-node audit --follow`)"
            ),
        )
        .into_response();
    };
    let stream = futures_util::stream::unfold(Some(subscription), |subscription| async move {
        let mut subscription = subscription?;
        let event = match subscription.next().await {
            Next::Entry(entry) => Event::default()
                .event("audit")
                .id(entry.id.to_string())
                .data(serde_json::to_string(&*entry).expect("an audit entry serialises")),
            Next::Lost(lost) => {
                let note = json!({
                    "lost": lost,
                    "message": format!(
                        "this client fell more than {BUFFER} events behind and lost {lost}; it is disconnected: \
                         read what it missed with `ecp-node audit --since TIME`, then follow again"
                    ),
                });
                return Some((
                    Ok::<_, Infallible>(Event::default().event("dropped").data(note.to_string())),
                    None,
                ));
            }
            Next::Closed => return None,
        };
        Some((Ok(event), Some(subscription)))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)).into_response()
}
