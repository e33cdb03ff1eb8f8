//! A handler that panics is answered, not hung up on.
//!
//! Without this layer a panic in a handler's own future unwinds into the
//! connection's task, which `hyper` drops: the client sees a reset
//! connection and nothing says what happened. Every router the node serves
//! carries [`caught`] innermost, so a panic becomes the same JSON 500 as
//! any internal error (`{"error", "code": "internal"}`). Neither the answer
//! nor the log line carries the panic's message — it may quote a request's
//! body or a path on this machine; the panic hook has printed it to the
//! process's standard error, where an operator looks for a bug's details.
//!
//! Handlers hold no state across a panic that this could leave half-done:
//! store writes run in transactions on the blocking pool (rolled back when
//! dropped) and shared state sits behind locks that recover from poisoning,
//! so [`AssertUnwindSafe`] holds.

use std::panic::AssertUnwindSafe;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;

use super::error::ApiError;

/// Runs the rest of the stack; its panic becomes a 500.
pub(super) async fn caught(request: Request, next: Next) -> Response {
    match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(_panic) => ApiError::internal(
            &"a request handler panicked (a bug: please report it with the node's standard error)",
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt;

    use super::super::{AppState, ecp_routes, router, v1_routes};
    use crate::config::Config;
    use crate::library::Library;

    async fn panics() -> &'static str {
        panic!("secret body /home/someone/.ssh/id_rsa")
    }

    #[tokio::test]
    async fn a_panicking_handler_is_answered_500_in_json_without_its_message_and_the_node_serves_on() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::for_tests(dir.path());
        let library = Library::open(&config.data_dir, &config.skills_dir).expect("a fresh store opens");
        let app = router(
            AppState::with_federator(library, config, None, None),
            ecp_routes().route("/ecp/panics", get(panics)),
            Some(v1_routes()),
        );
        let local: std::net::SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let request = |path: &str| {
            let mut r = Request::get(path).body(Body::empty()).unwrap();
            r.extensions_mut().insert(axum::extract::ConnectInfo(local));
            r
        };
        let response = app.clone().oneshot(request("/ecp/panics")).await.expect("the router answers");
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("a JSON error");
        assert_eq!(value["code"], "internal", "{value}");
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("id_rsa") && !text.contains("secret") && !text.contains("panic"), "{text}");

        let after = app.oneshot(request("/ecp/manifest")).await.expect("the router answers");
        assert_eq!(after.status(), StatusCode::OK, "the next request is served as usual");
    }
}
