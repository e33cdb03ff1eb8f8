//! Router tests without a socket: a route added to a group, with no
//! authentication code of its own, is behind the group's guard.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::routing::get;
use ecp_protocol::signed_auth::{self, Exchange, PresentedHeaders, RequestLine, SigningKey};
use serde_json::Value;
use tower::ServiceExt;

use super::{AppState, ecp_routes, router, v1_routes};
use crate::config::Config;
use crate::keys::unix_now;
use crate::library::Library;

pub(super) const SECRET: &str = "s3cret";

/// A client off this machine (the address is a value, nothing is sent to it).
pub(super) const REMOTE: &str = "192.0.2.7:40000";

const TOKEN: &str = "an-api-token";

/// The node's router with one extra route in each group, on a node that
/// has a secret and an API token and takes bodies of up to 1 KiB.
fn app_with_extra_routes(dir: &std::path::Path) -> Router {
    app_with(dir, |_| {})
}

/// [`app_with_extra_routes`] with the configuration changed by `adjust`.
pub(super) fn app_with(dir: &std::path::Path, adjust: impl FnOnce(&mut Config)) -> Router {
    let mut config = Config::for_tests(dir);
    config.secret = Some(SECRET.into());
    config.max_body_bytes = 1024;
    adjust(&mut config);
    let library = Library::open(&config.data_dir, &config.skills_dir).expect("a fresh store opens");
    router(
        AppState::with_federator(library, config, None, Some(TOKEN.into())),
        ecp_routes().route("/ecp/extra", get(|| async { "extra" }).post(|| async { "posted" })),
        Some(v1_routes().route("/v1/extra", get(|| async { "extra" }))),
    )
}

/// `GET path` from `from`, with `headers`.
pub(super) async fn get_from(
    app: &Router,
    from: &str,
    path: &str,
    headers: &[(&str, String)],
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    send(app, from, Request::get(path), headers, Vec::new()).await
}

/// `request` with `headers` and `body` from `from`.
pub(super) async fn send(
    app: &Router,
    from: &str,
    mut request: axum::http::request::Builder,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let mut request = request.body(Body::from(body)).expect("a valid request");
    request.extensions_mut().insert(ConnectInfo(from.parse::<SocketAddr>().expect("an address")));
    let response = app.clone().oneshot(request).await.expect("the router answers");
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.expect("a body");
    (parts.status, parts.headers, body.to_vec())
}

pub(super) fn code(body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).expect("a JSON error");
    value["code"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_new_ecp_route_is_refused_unsigned_like_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with_extra_routes(dir.path());
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra", &[]).await;
    let (manifest_status, _, manifest_body) = get_from(&app, REMOTE, "/ecp/manifest", &[]).await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "missing_signature".into()));
    assert_eq!((status, code(&body)), (manifest_status, code(&manifest_body)));
    let wrong = [("x-ecp-hmac", "00".repeat(32))];
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra", &wrong).await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "bad_signature".into()));
    let (status, _, body) = send(&app, REMOTE, Request::post("/ecp/extra"), &[], b"{}".to_vec()).await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "missing_signature".into()));
}

#[tokio::test]
async fn a_new_ecp_route_gets_the_push_body_limit() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with_extra_routes(dir.path());
    let (status, _, body) = send(&app, REMOTE, Request::post("/ecp/extra"), &[], vec![b' '; 2048]).await;
    assert_eq!((status, code(&body)), (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large".into()));
}

#[tokio::test]
async fn a_new_ecp_route_answers_a_signed_get_with_a_signed_answer() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with_extra_routes(dir.path());
    let key = SigningKey::new("default", SECRET.as_bytes()).unwrap();
    let line = RequestLine { method: "GET", path_and_query: "/ecp/extra" };
    let nonce = "0123456789abcdef0123456789abcdef";
    // Without a socket the request counts as arriving at the configured listen address.
    let signed = signed_auth::sign_request(&key, "127.0.0.1:0", &line, b"", unix_now(), nonce);
    let headers: Vec<(&str, String)> = signed.pairs().to_vec();
    let (status, answer, body) = get_from(&app, REMOTE, "/ecp/extra", &headers).await;
    assert_eq!((status, body.as_slice()), (StatusCode::OK, b"extra".as_slice()));
    let presented = PresentedHeaders::read(|name| answer.get(name).and_then(|v| v.to_str().ok()));
    let exchange = Exchange { request: line, request_nonce: nonce, status: 200 };
    signed_auth::verify_response(&key, &presented, &exchange, &body, unix_now(), 300)
        .expect("the answer is signed for its request");
}

#[tokio::test]
async fn a_new_v1_route_needs_the_token_or_the_secret_from_any_address() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with_extra_routes(dir.path());
    for from in [REMOTE, "127.0.0.1:40000", "[::1]:40000"] {
        let (status, headers, body) = get_from(&app, from, "/v1/extra", &[]).await;
        assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "api_token_required".into()), "{from}");
        assert_eq!(headers.get("www-authenticate").map(|v| v.to_str().unwrap()), Some("Bearer"));
        let message = String::from_utf8_lossy(&body).into_owned();
        assert!(message.contains("api-token"), "names the file: {message}");
        let data = dir.path().to_str().unwrap();
        assert!(!message.contains(data), "no absolute path: {message}");
        for wrong in [format!("Bearer {TOKEN}x"), "Bearer ".into(), format!("Basic {TOKEN}"), TOKEN.into()] {
            let (status, _, body) =
                get_from(&app, from, "/v1/extra", &[("authorization", wrong.clone())]).await;
            assert_eq!(
                (status, code(&body)),
                (StatusCode::UNAUTHORIZED, "api_token_required".into()),
                "{wrong}"
            );
        }
        for good in [TOKEN, SECRET] {
            let bearer = [("authorization", format!("Bearer {good}"))];
            assert_eq!(get_from(&app, from, "/v1/extra", &bearer).await.0, StatusCode::OK, "{from} {good}");
        }
    }
}

#[tokio::test]
async fn trust_loopback_opens_v1_to_loopback_clients_no_proxy_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |config| config.trust_loopback = true);
    // A local client names the node it reached (the configured address here).
    let own = ("host", Config::for_tests(dir.path()).listen.to_string());
    for from in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
        assert_eq!(
            get_from(&app, from, "/v1/extra", std::slice::from_ref(&own)).await.0,
            StatusCode::OK,
            "{from}"
        );
    }
    assert_eq!(
        get_from(&app, REMOTE, "/v1/extra", std::slice::from_ref(&own)).await.0,
        StatusCode::UNAUTHORIZED
    );
    // A page of another name (DNS rebinding), or no Host at all, is not local.
    let rebound = ("host", format!("rebound.example:{}", Config::for_tests(dir.path()).listen.port()));
    for host in [vec![rebound], vec![]] {
        let (status, _, body) = get_from(&app, "127.0.0.1:40000", "/v1/extra", &host).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNAUTHORIZED, "api_token_required".into()),
            "{host:?}"
        );
    }
    for (name, value) in
        [("x-forwarded-for", "192.0.2.9"), ("forwarded", "for=192.0.2.9"), ("X-Forwarded-For", "")]
    {
        let headers = [own.clone(), (name, value.into())];
        let (status, _, body) = get_from(&app, "127.0.0.1:40000", "/v1/extra", &headers).await;
        assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "api_token_required".into()), "{name}");
        let bearer = [(name, value.into()), ("authorization", format!("Bearer {TOKEN}"))];
        assert_eq!(get_from(&app, "127.0.0.1:40000", "/v1/extra", &bearer).await.0, StatusCode::OK, "{name}");
    }
}
