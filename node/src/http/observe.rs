//! The metrics layer: every request counted by route template (never the
//! raw path, which would make a series per skill name or probe), method and
//! status, its time to answer in a histogram, and body bytes in and out.
//! Outermost, so requests the rate limit refuses are counted too.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use prometheus_client::metrics::counter::Counter;

use super::rate_limit::RateLimited;
use crate::metrics::Metrics;

/// Counts a request and its answer in `metrics`. The time is to the
/// answer's headers: a streamed answer (`/v1/events`) would otherwise
/// never end.
pub(super) async fn observe(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());
    let method = request.method().clone();
    let started = Instant::now();
    let request = request.map(|body| counted(body, metrics.bytes_in()));
    let response = next.run(request).await;
    if response.extensions().get::<RateLimited>().is_some() {
        metrics.rate_limited();
    }
    metrics.request(route.as_deref(), method.as_str(), response.status().as_u16(), started.elapsed());
    response.map(|body| counted(body, metrics.bytes_out()))
}

/// `body`, adding the length of each data frame to `counter` as it passes.
fn counted(body: Body, counter: Counter) -> Body {
    Body::new(body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            counter.inc_by(data.len() as u64);
        }
        frame
    }))
}
