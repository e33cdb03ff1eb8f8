//! The metrics layer: every request counted by route template (never the
//! raw path, which would make a series per skill name or probe), method and
//! status, its time to answer in a histogram, and body bytes in and out.
//! Outermost, so requests the rate limit refuses are counted too.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
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
    Body::new(Counted { inner: body, counter })
}

/// A body that counts its data bytes and is otherwise the body it wraps —
/// its size hint included, so an answer of known length keeps its
/// `Content-Length` rather than becoming chunked.
struct Counted {
    inner: Body,
    counter: Counter,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.counter.inc_by(data.len() as u64);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
