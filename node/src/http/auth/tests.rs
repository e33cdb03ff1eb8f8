//! The authentication steps of `super` through the router: legacy
//! signatures accepted or refused as configured, the status of each
//! refusal, and the rate limit answering before authentication.

use axum::http::{Request, StatusCode};
use axum::response::IntoResponse;
use ecp_protocol::signed_auth::SigningKey;
use ecp_protocol::{SignedAuthError, legacy_auth};

use super::super::tests::{REMOTE, SECRET, app_with, code, get_from, send};
use super::*;

#[tokio::test]
async fn legacy_signatures_of_the_path_and_of_the_body_are_accepted_where_legacy_is() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |_| {});
    let over_path = [("x-ecp-hmac", legacy_auth::sign_get(SECRET.as_bytes(), "/ecp/extra"))];
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra?since=5", &over_path).await;
    assert_eq!((status, body.as_slice()), (StatusCode::OK, b"extra".as_slice()), "the query is not signed");
    let over_url =
        [("x-ecp-hmac", legacy_auth::sign_get(SECRET.as_bytes(), "http://node.example:7327/ecp/extra"))];
    let with_host = [over_url[0].clone(), ("host", "node.example:7327".to_owned())];
    assert_eq!(
        get_from(&app, REMOTE, "/ecp/extra", &with_host).await.0,
        StatusCode::OK,
        "the Go client's full URL"
    );

    let body = br#"{"skills":[]}"#.to_vec();
    let over_body = [("x-ecp-hmac", legacy_auth::sign_post(SECRET.as_bytes(), &body))];
    let (status, _, answer) = send(&app, REMOTE, Request::post("/ecp/extra"), &over_body, body.clone()).await;
    assert_eq!((status, answer.as_slice()), (StatusCode::OK, b"posted".as_slice()));
    // A POST signed over its path, as a GET would be, is refused.
    let (status, _, answer) = send(&app, REMOTE, Request::post("/ecp/extra"), &over_path, body).await;
    assert_eq!((status, code(&answer)), (StatusCode::FORBIDDEN, "bad_signature".into()));
}

#[tokio::test]
async fn legacy_signatures_are_refused_with_401_where_legacy_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |config| config.accept_legacy = false);
    let good = [("x-ecp-hmac", legacy_auth::sign_get(SECRET.as_bytes(), "/ecp/extra"))];
    let (status, headers, body) = get_from(&app, REMOTE, "/ecp/extra", &good).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "legacy_auth_refused".into()));
    assert_eq!(headers.get("www-authenticate").map(|v| v.to_str().unwrap()), Some("ECP-1.2"));
    assert!(String::from_utf8_lossy(&body).contains("accept_legacy is false"));
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra", &[]).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "missing_signature".into()));
}

#[tokio::test]
async fn a_node_with_keys_but_no_secret_cannot_check_legacy_signatures() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |config| {
        config.secret = None;
        config.keys = vec![SigningKey::new("k1", "key-secret").unwrap()];
    });
    let some = [("x-ecp-hmac", legacy_auth::sign_get(b"key-secret", "/ecp/extra"))];
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra", &some).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "legacy_auth_refused".into()));
    assert!(String::from_utf8_lossy(&body).contains("no shared secret"));
}

#[tokio::test]
async fn an_ecp_1_2_header_that_is_not_text_is_malformed_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |_| {});
    let mut request = Request::get("/ecp/extra");
    request = request.header("x-ecp-nonce", axum::http::HeaderValue::from_bytes(b"\xff\xfe").unwrap());
    let (status, _, body) = send(&app, REMOTE, request, &[], Vec::new()).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "malformed_signature".into()));
    assert!(String::from_utf8_lossy(&body).contains("X-ECP-Nonce"));
}

#[test]
fn a_full_replay_cache_is_503_with_retry_after_and_other_failures_401() {
    let full = ApiError::from(SignedAuthError::ReplayCacheFull).into_response();
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(full.headers().get("retry-after").map(|v| v.to_str().unwrap()), Some("30"));
    let replay = ApiError::from(SignedAuthError::Replay).into_response();
    assert_eq!(replay.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(replay.headers().get("www-authenticate").map(|v| v.to_str().unwrap()), Some("ECP-1.2"));
}

#[test]
fn the_signed_target_is_the_path_and_query_as_sent() {
    let uri: Uri = "/ecp/skills?since=5&x=%20".parse().unwrap();
    assert_eq!(target(&uri), "/ecp/skills?since=5&x=%20");
    let uri: Uri = "http://node.example/ecp/manifest".parse().unwrap();
    assert_eq!(target(&uri), "/ecp/manifest");
}

#[tokio::test]
async fn the_rate_limit_answers_429_before_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_with(dir.path(), |config| {
        config.client_rate_limit =
            crate::config::ClientRateLimit { per_minute: 6, burst: 1, loopback: false };
    });
    let (status, _, body) = get_from(&app, REMOTE, "/ecp/extra", &[]).await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "missing_signature".into()));
    let (status, headers, body) = get_from(&app, REMOTE, "/ecp/extra", &[]).await;
    assert_eq!((status, code(&body)), (StatusCode::TOO_MANY_REQUESTS, "rate_limited".into()));
    let wait: u64 = headers.get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
    assert!((1..=10).contains(&wait), "{wait}");
    let message = String::from_utf8_lossy(&body).into_owned();
    assert!(message.contains("6 per minute (bursts of 1)"), "{message}");
    // Loopback clients are not limited by default.
    for _ in 0..3 {
        assert_eq!(get_from(&app, "127.0.0.1:40000", "/ecp/extra", &[]).await.0, StatusCode::FORBIDDEN);
    }
}

#[test]
fn a_peers_signed_request_names_the_peer_its_key_id_and_nonce_and_the_nodes_own_key_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::config::Config::for_tests(dir.path());
    config.secret = Some(SECRET.into());
    let library = crate::library::Library::open(&config.data_dir, &config.skills_dir).unwrap();
    let state = AppState::with_federator(library, config, None, None);
    let peer_key = SigningKey::new("peer-a", "peer-a-key-secret").unwrap();
    let owner = KeyOwner { url: "http://192.0.2.9:7327".into(), trust: 0.8 };
    state.keyring.set_peer_keys(crate::keys::PeerProofs {
        shared: vec![(peer_key.clone(), owner)],
        ..Default::default()
    });
    let own_key = SigningKey::new("default", SECRET.as_bytes()).unwrap();
    let uri: Uri = "/ecp/skills".parse().unwrap();
    let line = RequestLine { method: "GET", path_and_query: "/ecp/skills" };
    let caller_with = |key: &SigningKey, nonce: &str| {
        let signed = signed_auth::sign_request(key, "127.0.0.1:0", &line, b"", unix_now(), nonce);
        let mut headers = HeaderMap::new();
        for (name, value) in signed.pairs() {
            headers.insert(name, HeaderValue::from_str(&value).unwrap());
        }
        authenticate(&state, &axum::http::Extensions::new(), &Method::GET, &uri, &headers, b"")
            .expect("a good signature")
    };
    let by_peer = caller_with(&peer_key, "0123456789abcdef0123456789abcdef");
    assert_eq!(by_peer.peer().map(|o| (o.url.as_str(), o.trust)), Some(("http://192.0.2.9:7327", 0.8)));
    // The key id and nonce a hub's replicas share to refuse a replay.
    let Caller::Signed(signed) = &by_peer else { panic!("not signed: {by_peer:?}") };
    assert_eq!((signed.key_id(), signed.nonce()), ("peer-a", "0123456789abcdef0123456789abcdef"));
    let by_node = caller_with(&own_key, "fedcba9876543210fedcba9876543210");
    assert!(matches!(by_node, Caller::Signed(_)), "{by_node:?}");
    assert!(by_node.peer().is_none(), "the node's own key is no peer's");
}

#[test]
fn a_node_key_and_a_certificate_prove_one_peer_and_two_different_peers_are_refused() {
    use ecp_protocol::identity::NodeKey;
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::config::Config::for_tests(dir.path());
    config.secret = Some(SECRET.into());
    let library = crate::library::Library::open(&config.data_dir, &config.skills_dir).unwrap();
    let state = AppState::with_federator(library, config, None, None);
    let owner = |url: &str| KeyOwner { url: url.into(), trust: 0.8 };
    let (a_key, stranger) = (NodeKey::from_seed(&[1; 32]), NodeKey::from_seed(&[2; 32]));
    let (a_cert, b_cert) = (
        ClientCert { sha256: [0xa; 32], key_sha256: None },
        ClientCert { sha256: [0xb; 32], key_sha256: None },
    );
    state.keyring.set_peer_keys(crate::keys::PeerProofs {
        node_keys: vec![(a_key.key_id(), owner("http://192.0.2.1:7327"))],
        certs: vec![
            (a_cert.sha256, owner("http://192.0.2.1:7327")),
            (b_cert.sha256, owner("http://192.0.2.2:7327")),
        ],
        ..Default::default()
    });
    let uri: Uri = "/ecp/skills".parse().unwrap();
    let line = RequestLine { method: "GET", path_and_query: "/ecp/skills" };
    let nonces = std::cell::Cell::new(0u32);
    let call = |key: Option<&NodeKey>, cert: Option<ClientCert>| {
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            nonces.set(nonces.get() + 1);
            let nonce = format!("nonce-{:012}", nonces.get());
            let digest = signed_auth::body_digest(b"");
            let value = node_auth::sign_request(key, "127.0.0.1:0", &line, &digest, unix_now(), &nonce);
            headers.insert(node_auth::HEADER, HeaderValue::from_str(&value).unwrap());
        }
        let mut conn = Extensions::new();
        if let Some(cert) = cert {
            conn.insert(cert);
        }
        authenticate(&state, &conn, &Method::GET, &uri, &headers, b"")
    };
    let peer = |caller: Result<Caller, ApiError>| match caller {
        Ok(caller) => caller.peer().map(|o| o.url.clone()),
        Err(e) => panic!("refused: {} {}", e.code, e.message),
    };
    let a = Some("http://192.0.2.1:7327".to_owned());
    assert_eq!(peer(call(Some(&a_key), None)), a, "the node key alone");
    assert_eq!(
        peer(call(None, Some(b_cert))),
        Some("http://192.0.2.2:7327".to_owned()),
        "the certificate alone"
    );
    assert_eq!(peer(call(Some(&a_key), Some(a_cert))), a, "both proofs name the same peer");
    assert_eq!(
        peer(call(Some(&stranger), Some(b_cert))),
        Some("http://192.0.2.2:7327".to_owned()),
        "a node key no peer is known by proves nothing"
    );
    let Err(conflict) = call(Some(&a_key), Some(b_cert)) else { panic!("two peers proven") };
    assert_eq!((conflict.status, conflict.code), (StatusCode::UNAUTHORIZED, "identity_conflict"));
    assert!(conflict.message.contains("192.0.2.1:7327") && conflict.message.contains("192.0.2.2:7327"));
}
