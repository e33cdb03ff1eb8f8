//! ECP/1.2 signed requests and answers (`SPEC.md` §10.1) against real nodes
//! on loopback: every refusal of §10.1.4 over HTTP (clock skew, replay,
//! unknown key, wrong signature, tampered body, query, path, method and
//! headers, missing and malformed headers, a full nonce memory) with the
//! store unchanged; key rotation; `accept_legacy` from config, flag and
//! environment; answers signed for their request (200, 304, gzip); a proxy
//! between two nodes that alters, strips or replays answers; the identity a
//! peer's own key carries; two nodes federating with a key of their own.
//!
//! Requests are signed and answers checked here with `hmac`/`sha2` over
//! canonical strings written out in this file, never through the node's own
//! signing code, so a bug shared by both cannot pass.

use std::io::Read as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use ecp_node::config::Config;
use ecp_node::config::PeersConfig;
use ecp_node::federation::{self, Context, PeerSpec};
use ecp_protocol::signed_auth::SigningKey;
use reqwest::header::{ACCEPT_ENCODING, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

use crate::cli::eventually;
use crate::util::{ORIGIN, PUSH1, Reply, TestNode, assert_no_failures, hmac_hex, packet, update, vector};

/// Generous bound for anything that should take milliseconds.
const SOON: Duration = Duration::from_secs(30);

/// A key as both sides configure it.
#[derive(Clone, Copy)]
pub(super) struct Key {
    id: &'static str,
    secret: &'static str,
}

const NEW: Key = Key { id: "k2026", secret: "rotated-in-2026" };
const OLD: Key = Key { id: "k2025", secret: "retiring-2025" };
/// The shared secret of legacy tests; as an ECP/1.2 key its id is `default`.
pub(super) const SECRET: &str = "s3cret";
pub(super) const DEFAULT: Key = Key { id: "default", secret: SECRET };

fn signing_key(key: Key) -> SigningKey {
    SigningKey::new(key.id, key.secret.as_bytes()).expect("a valid key id")
}

pub(super) fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs() as i64
}

pub(super) fn nonce() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The name every node of these tests answers to (`[server] names`), and
/// the authority [`signed`] signs for, so one signer serves every node.
const NAME: &str = "signed-auth.test";
const AUTHORITY: &str = "signed-auth.test:7327";

/// The five headers of a request signed by hand for [`AUTHORITY`] (`SPEC.md` §10.1.3).
fn signed(
    key: Key,
    method: &str,
    target: &str,
    body: &[u8],
    ts: i64,
    nonce: &str,
) -> Vec<(&'static str, String)> {
    signed_for(AUTHORITY, key, method, target, body, ts, nonce)
}

/// [`signed`] for `authority`.
pub(super) fn signed_for(
    authority: &str,
    key: Key,
    method: &str,
    target: &str,
    body: &[u8],
    ts: i64,
    nonce: &str,
) -> Vec<(&'static str, String)> {
    let canonical = format!(
        "ECP-1.2-REQUEST-FOR\n{authority}\n{}\n{method}\n{target}\n{ts}\n{nonce}\n{}",
        key.id,
        sha256_hex(body)
    );
    vec![
        ("x-ecp-authority", authority.to_owned()),
        ("x-ecp-key-id", key.id.to_owned()),
        ("x-ecp-timestamp", ts.to_string()),
        ("x-ecp-nonce", nonce.to_owned()),
        ("x-ecp-signature", hmac_hex(key.secret, canonical.as_bytes())),
    ]
}

/// [`signed`] now, with a fresh nonce.
fn signed_now(key: Key, method: &str, target: &str, body: &[u8]) -> Vec<(&'static str, String)> {
    signed(key, method, target, body, now(), &nonce())
}

/// Sends `method target` with `headers` and `body`.
pub(super) async fn send(
    node: &TestNode,
    method: Method,
    target: &str,
    headers: &[(&'static str, String)],
    body: Option<&[u8]>,
) -> Reply {
    let mut all: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    if body.is_some() {
        all.push(("content-type", "application/json"));
    }
    node.request(method, target, &all, body.map(<[u8]>::to_vec)).await
}

/// A signed `POST /ecp/skills` of `body` under `key`.
async fn signed_push(node: &TestNode, key: Key, body: &[u8]) -> Reply {
    send(node, Method::POST, "/ecp/skills", &signed_now(key, "POST", "/ecp/skills", body), Some(body)).await
}

/// Asserts that `reply` is signed for the request `method target` with
/// `nonce`, under `key`, over `body` (the identity encoding).
#[track_caller]
fn assert_signed_answer(reply: &Reply, key: Key, method: &str, target: &str, nonce: &str, body: &[u8]) {
    let header = |name: &str| {
        reply.header(name).unwrap_or_else(|| panic!("the answer lacks {name}: {}", reply.text())).to_owned()
    };
    assert_eq!(header("x-ecp-key-id"), key.id, "answer key id");
    assert_eq!(header("x-ecp-nonce"), nonce, "the answer echoes the request's nonce");
    let ts: i64 = header("x-ecp-timestamp").parse().expect("Unix seconds");
    assert!((ts - now()).abs() <= 300, "the answer's time is the node's clock: {ts}");
    let canonical = format!(
        "ECP-1.2-RESPONSE\n{}\n{}\n{method}\n{target}\n{ts}\n{nonce}\n{}",
        key.id,
        reply.status.as_u16(),
        sha256_hex(body)
    );
    assert_eq!(header("x-ecp-signature"), hmac_hex(key.secret, canonical.as_bytes()), "answer signature");
}

/// A node holding `keys` as `[[key]]`, adjusted further by `adjust`.
async fn keyed_node(keys: &[Key], adjust: impl FnOnce(&mut Config)) -> TestNode {
    let keys: Vec<SigningKey> = keys.iter().copied().map(signing_key).collect();
    TestNode::start_with(move |c| {
        c.keys = keys;
        c.names = vec![NAME.to_owned()];
        adjust(c);
    })
    .await
}

/// Adds a local skill whose frontmatter says `confidence` and whose
/// description is "How to <name>".
async fn add_local(node: &TestNode, name: &str, confidence: f64) {
    crate::util::add_local_skill(node.library(), name, confidence).await;
}

/// The stored confidence of `name`, once the node holds it.
async fn confidence(node: &TestNode, name: &str) -> Option<f64> {
    let reply = node.get(&format!("/v1/skills/{name}")).await;
    (reply.status == StatusCode::OK).then(|| reply.json()["skill"]["confidence"].as_f64()).flatten()
}

fn peers(toml: &str) -> PeersConfig {
    PeersConfig::parse(toml, "test peers").expect("valid peers")
}

// ---------------------------------------------------------------------------
// Signed answers

#[tokio::test(flavor = "multi_thread")]
async fn signed_gets_are_answered_signed_for_them_200_304_and_gzip() {
    let node = keyed_node(&[NEW], |_| {}).await;
    add_local(&node, "signed-listing", 1.0).await;
    for target in ["/ecp/manifest", "/ecp/skills", "/ecp/skills?since=0", "/ecp/skills?since=0&x=%20y"] {
        let n = nonce();
        let reply = send(&node, Method::GET, target, &signed(NEW, "GET", target, b"", now(), &n), None).await;
        assert_eq!(reply.status, StatusCode::OK, "GET {target}: {}", reply.text());
        assert_signed_answer(&reply, NEW, "GET", target, &n, &reply.body);
    }
    let manifest =
        send(&node, Method::GET, "/ecp/manifest", &signed_now(NEW, "GET", "/ecp/manifest", b""), None)
            .await
            .json();
    assert_eq!(manifest["auth"], json!(["ecp-1.2"]), "no shared secret: no X-ECP-HMAC: {manifest}");

    // 304: signed over no body.
    let listing =
        send(&node, Method::GET, "/ecp/skills", &signed_now(NEW, "GET", "/ecp/skills", b""), None).await;
    let etag = listing.header("etag").expect("an ETag").to_owned();
    for target in ["/ecp/skills", "/ecp/manifest"] {
        let tag = if target == "/ecp/skills" {
            etag.clone()
        } else {
            send(&node, Method::GET, target, &signed_now(NEW, "GET", target, b""), None)
                .await
                .header("etag")
                .expect("a manifest ETag")
                .to_owned()
        };
        let n = nonce();
        let mut headers = signed(NEW, "GET", target, b"", now(), &n);
        headers.push(("if-none-match", tag));
        let reply = send(&node, Method::GET, target, &headers, None).await;
        assert_eq!(reply.status, StatusCode::NOT_MODIFIED, "{target}: {}", reply.text());
        assert_signed_answer(&reply, NEW, "GET", target, &n, b"");
    }

    // gzip, the full listing and the manifest (cached gzipped, #18 item 3):
    // the signature covers the JSON before Content-Encoding.
    let raw = reqwest::Client::builder().no_proxy().no_gzip().timeout(SOON).build().unwrap();
    for target in ["/ecp/skills", "/ecp/manifest"] {
        let plain = send(&node, Method::GET, target, &signed_now(NEW, "GET", target, b""), None).await;
        let n = nonce();
        let mut request = raw.get(node.url(target)).header(ACCEPT_ENCODING, "gzip");
        for (name, value) in signed(NEW, "GET", target, b"", now(), &n) {
            request = request.header(name, value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(
            response.headers().get("content-encoding").map(|v| v.as_bytes()),
            Some(&b"gzip"[..]),
            "{target}"
        );
        let headers = response.headers().clone();
        let status = response.status();
        let gzipped = response.bytes().await.unwrap();
        let mut body = Vec::new();
        flate2::read::GzDecoder::new(&gzipped[..]).read_to_end(&mut body).unwrap();
        let reply = Reply { status, headers, body: body.clone() };
        assert_signed_answer(&reply, NEW, "GET", target, &n, &body);
        assert_eq!(body, plain.body, "{target}: the same answer");
    }

    // Error answers carry no data and no signature.
    let bad = send(
        &node,
        Method::GET,
        "/ecp/skills?since=x",
        &signed_now(NEW, "GET", "/ecp/skills?since=x", b""),
        None,
    )
    .await;
    bad.assert_error(400, "invalid_query");
    assert!(bad.header("x-ecp-signature").is_none(), "{:?}", bad.headers);
    // Unsigned (open) answers to an open node's requests stay unsigned.
    let open = TestNode::start().await;
    let reply =
        send(&open, Method::GET, "/ecp/skills", &signed_now(NEW, "GET", "/ecp/skills", b""), None).await;
    assert_eq!(reply.status, StatusCode::OK, "an open node ignores the headers: {}", reply.text());
    assert!(reply.header("x-ecp-signature").is_none());
    assert!(open.get_json("/ecp/manifest").await.get("auth").is_none(), "an open node advertises nothing");
}

// ---------------------------------------------------------------------------
// Refusals

#[tokio::test(flavor = "multi_thread")]
async fn every_refused_signed_request_is_401_with_its_code_and_changes_nothing() {
    let node = keyed_node(&[NEW], |c| c.secret = Some(SECRET.into())).await;
    let before = node.snapshot().await;
    let push = update(ORIGIN, &[packet("must-not-land")]);
    let other = update(ORIGIN, &[packet("neither-this")]);
    let t = now();
    let unknown = Key { id: "k-unknown", secret: NEW.secret };
    let guessed = Key { id: NEW.id, secret: "a-guess" };
    let with = |mut headers: Vec<(&'static str, String)>, name: &'static str, value: Option<&str>| {
        headers.retain(|(n, _)| *n != name);
        if let Some(value) = value {
            headers.push((name, value.to_owned()));
        }
        headers
    };
    let mut legacy_too = signed(guessed, "GET", "/ecp/skills", b"", t, &nonce());
    legacy_too.push(("x-ecp-hmac", vector("get_skills_x_ecp_hmac_over_path")));

    // (what, method, target sent, headers, body sent, code)
    type Headers = Vec<(&'static str, String)>;
    type Case = (String, Method, &'static str, Headers, Option<Vec<u8>>, &'static str);
    let post = |headers: Headers, body: &[u8]| (headers, Some(body.to_vec()));
    let mut cases: Vec<Case> = Vec::new();
    let mut add = |what: &str, method, target, (headers, body): (Headers, Option<Vec<u8>>), code| {
        cases.push((what.to_owned(), method, target, headers, body, code));
    };
    add(
        "a push signed 301 s ago",
        Method::POST,
        "/ecp/skills",
        post(signed(NEW, "POST", "/ecp/skills", &push, t - 301, &nonce()), &push),
        "clock_skew",
    );
    // The cases are signed now and sent one after another: time passing
    // makes a stamp in the past older, but brings one in the future nearer,
    // so the future one keeps a minute of headroom (a loaded machine took
    // over a second to reach it). The window's edge to the second is
    // `signed_auth`'s unit tests' (`check_skew` at ±300 and ±301).
    add(
        "a push signed 361 s ahead",
        Method::POST,
        "/ecp/skills",
        post(signed(NEW, "POST", "/ecp/skills", &push, t + 361, &nonce()), &push),
        "clock_skew",
    );
    add(
        "a GET signed 301 s ago",
        Method::GET,
        "/ecp/skills",
        (signed(NEW, "GET", "/ecp/skills", b"", t - 301, &nonce()), None),
        "clock_skew",
    );
    add(
        "an unknown key id",
        Method::POST,
        "/ecp/skills",
        post(signed(unknown, "POST", "/ecp/skills", &push, t, &nonce()), &push),
        "unknown_key",
    );
    add(
        "another secret under a known key id",
        Method::POST,
        "/ecp/skills",
        post(signed(guessed, "POST", "/ecp/skills", &push, t, &nonce()), &push),
        "bad_signature",
    );
    add(
        "a body other than the one signed",
        Method::POST,
        "/ecp/skills",
        post(signed(NEW, "POST", "/ecp/skills", &other, t, &nonce()), &push),
        "bad_signature",
    );
    add(
        "one byte more than signed",
        Method::POST,
        "/ecp/skills",
        post(signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()), &[push.as_slice(), b" "].concat()),
        "bad_signature",
    );
    add(
        "a query other than the one signed",
        Method::GET,
        "/ecp/skills?since=1",
        (signed(NEW, "GET", "/ecp/skills?since=0", b"", t, &nonce()), None),
        "bad_signature",
    );
    add(
        "a query the signature did not cover",
        Method::GET,
        "/ecp/skills?since=0",
        (signed(NEW, "GET", "/ecp/skills", b"", t, &nonce()), None),
        "bad_signature",
    );
    add(
        "another path than the one signed",
        Method::GET,
        "/ecp/skills",
        (signed(NEW, "GET", "/ecp/manifest", b"", t, &nonce()), None),
        "bad_signature",
    );
    add(
        "another method than the one signed",
        Method::POST,
        "/ecp/skills",
        post(signed(NEW, "GET", "/ecp/skills", &push, t, &nonce()), &push),
        "bad_signature",
    );
    add(
        "a nonce other than the one signed",
        Method::POST,
        "/ecp/skills",
        post(
            with(signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()), "x-ecp-nonce", Some(&nonce())),
            &push,
        ),
        "bad_signature",
    );
    add(
        "a timestamp other than the one signed",
        Method::POST,
        "/ecp/skills",
        post(
            with(
                signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()),
                "x-ecp-timestamp",
                Some(&(t - 1).to_string()),
            ),
            &push,
        ),
        "bad_signature",
    );
    add(
        "the key id swapped for another key's",
        Method::POST,
        "/ecp/skills",
        post(
            with(signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()), "x-ecp-key-id", Some("default")),
            &push,
        ),
        "bad_signature",
    );
    for header in ["x-ecp-key-id", "x-ecp-timestamp", "x-ecp-nonce", "x-ecp-signature"] {
        add(
            &format!("no {header}"),
            Method::POST,
            "/ecp/skills",
            post(with(signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()), header, None), &push),
            "missing_signature",
        );
    }
    for (header, value) in [
        ("x-ecp-nonce", "short-nonce"),
        ("x-ecp-nonce", "sixteen chars but spaces"),
        ("x-ecp-timestamp", "12a"),
        ("x-ecp-timestamp", "-5"),
        ("x-ecp-signature", "not-hex"),
        ("x-ecp-key-id", "key id with spaces"),
    ] {
        add(
            &format!("{header}: {value:?}"),
            Method::POST,
            "/ecp/skills",
            post(with(signed(NEW, "POST", "/ecp/skills", &push, t, &nonce()), header, Some(value)), &push),
            "malformed_signature",
        );
    }
    add(
        "a bad ECP/1.2 signature beside a valid X-ECP-HMAC",
        Method::GET,
        "/ecp/skills",
        (legacy_too, None),
        "bad_signature",
    );

    let mut failures = Vec::new();
    for (what, method, target, headers, body, code) in &cases {
        let reply = send(&node, method.clone(), target, headers, body.as_deref()).await;
        match reply.check_error(401, code) {
            Err(e) => failures.push(format!("{method} {target} with {what}: {e}")),
            Ok(_) if reply.header("www-authenticate") != Some("ECP-1.2") => {
                failures.push(format!("{method} {target} with {what}: no WWW-Authenticate: ECP-1.2"));
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&reply.body);
                if [SECRET, NEW.secret, guessed.secret].iter().any(|s| text.contains(s)) {
                    failures.push(format!("{method} {target} with {what}: the answer shows a secret"));
                }
            }
        }
    }
    assert_no_failures(&failures, cases.len());
    before.assert_unchanged(&node.snapshot().await, "after refused signed requests");

    // The window is ±300 s: 299 s off still passes (signed as it is sent:
    // a second gone by would take a stamp 299 s old out of the window).
    for skew in [-299, 299] {
        let target = "/ecp/manifest";
        let reply =
            send(&node, Method::GET, target, &signed(NEW, "GET", target, b"", now() + skew, &nonce()), None)
                .await;
        assert_eq!(reply.status, StatusCode::OK, "{skew} s: {}", reply.text());
    }
    node.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_request_is_refused_and_a_replayed_push_applies_nothing() {
    let node = keyed_node(&[NEW], |_| {}).await;
    let get = signed_now(NEW, "GET", "/ecp/skills", b"");
    assert_eq!(send(&node, Method::GET, "/ecp/skills", &get, None).await.status, StatusCode::OK);
    send(&node, Method::GET, "/ecp/skills", &get, None).await.assert_error(401, "replayed_nonce");

    let body = update(ORIGIN, &[packet("pushed-once")]);
    let push = signed_now(NEW, "POST", "/ecp/skills", &body);
    let first = send(&node, Method::POST, "/ecp/skills", &push, Some(&body)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    assert_eq!(first.json()["newSkills"], 1);
    let after_first = node.snapshot().await;
    send(&node, Method::POST, "/ecp/skills", &push, Some(&body)).await.assert_error(401, "replayed_nonce");
    after_first.assert_unchanged(&node.snapshot().await, "after the replayed push");

    // The nonce is the key's: the same nonce under another key is another request.
    let other = keyed_node(&[NEW, OLD], |_| {}).await;
    let n = nonce();
    for key in [NEW, OLD] {
        let reply = send(
            &other,
            Method::GET,
            "/ecp/manifest",
            &signed(key, "GET", "/ecp/manifest", b"", now(), &n),
            None,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}: {}", key.id, reply.text());
    }
}

/// #12 item 11: a signed GET recorded on its way to node A, relayed within
/// the window to node B holding the same key, is refused by B and its answer
/// never read, whatever `Host` or `X-ECP-Authority` the relay writes; at A
/// the same request verifies. Signed for each node's real address, as the
/// node's own client signs (the authority of the URL it connects to).
#[tokio::test(flavor = "multi_thread")]
async fn a_request_signed_for_one_node_is_refused_by_another_holding_the_same_key() {
    let a = TestNode::start_with(|c| c.keys = vec![signing_key(NEW)]).await;
    let b = TestNode::start_with(|c| c.keys = vec![signing_key(NEW)]).await;
    add_local(&b, "only-on-b", 0.9).await;
    let authority = |node: &TestNode| node.host();
    let n = nonce();
    let recorded = signed_for(&authority(&a), NEW, "GET", "/ecp/skills", b"", now(), &n);

    let at_b = send(&b, Method::GET, "/ecp/skills", &recorded, None).await;
    at_b.assert_error(401, "wrong_authority");
    assert!(
        !at_b.text().contains("only-on-b") && at_b.header("x-ecp-signature").is_none(),
        "{}",
        at_b.text()
    );
    // The relay writes A's authority as Host: B does not take the client's word for its own name.
    let mut with_host: Vec<(&str, &str)> = recorded.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a_host = authority(&a);
    with_host.push(("host", &a_host));
    b.request(Method::GET, "/ecp/skills", &with_host, None).await.assert_error(401, "wrong_authority");
    // Or claims B's authority: the signature covers A's.
    let b_authority = authority(&b);
    let relabelled: Vec<(&'static str, String)> = recorded
        .iter()
        .map(|(k, v)| (*k, if *k == "x-ecp-authority" { b_authority.clone() } else { v.clone() }))
        .collect();
    send(&b, Method::GET, "/ecp/skills", &relabelled, None).await.assert_error(401, "bad_signature");
    // An earlier client's unbound signature (no X-ECP-Authority) is refused by name.
    let unbound: Vec<_> = recorded.iter().filter(|(k, _)| *k != "x-ecp-authority").cloned().collect();
    send(&b, Method::GET, "/ecp/skills", &unbound, None).await.assert_error(401, "unbound_signature");

    // None of that spent the nonce at A, where the request verifies and is answered signed.
    let at_a = send(&a, Method::GET, "/ecp/skills", &recorded, None).await;
    assert_eq!(at_a.status, StatusCode::OK, "{}", at_a.text());
    assert_signed_answer(&at_a, NEW, "GET", "/ecp/skills", &n, &at_a.body);
    // Loopback nodes answer to localhost too; a name nobody configured is refused.
    let port = a.addr().port();
    let local = signed_for(&format!("localhost:{port}"), NEW, "GET", "/ecp/manifest", b"", now(), &nonce());
    assert_eq!(send(&a, Method::GET, "/ecp/manifest", &local, None).await.status, StatusCode::OK);
    let elsewhere =
        signed_for(&format!("a.example:{port}"), NEW, "GET", "/ecp/manifest", b"", now(), &nonce());
    send(&a, Method::GET, "/ecp/manifest", &elsewhere, None).await.assert_error(401, "wrong_authority");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_nonce_memory_answers_503_with_retry_after_and_forgets_nothing() {
    let node = keyed_node(&[NEW], |c| c.replay_cache_capacity = 2).await;
    let first = signed_now(NEW, "GET", "/ecp/manifest", b"");
    for headers in [first.clone(), signed_now(NEW, "GET", "/ecp/manifest", b"")] {
        assert_eq!(send(&node, Method::GET, "/ecp/manifest", &headers, None).await.status, StatusCode::OK);
    }
    let full =
        send(&node, Method::GET, "/ecp/manifest", &signed_now(NEW, "GET", "/ecp/manifest", b""), None).await;
    full.assert_error(503, "replay_cache_full");
    let retry: u64 = full.header("retry-after").expect("Retry-After").parse().expect("seconds");
    assert!(retry > 0, "{retry}");
    // A remembered nonce is still refused as a replay: nothing was forgotten to make room.
    send(&node, Method::GET, "/ecp/manifest", &first, None).await.assert_error(401, "replayed_nonce");
}

// ---------------------------------------------------------------------------
// Keys and the legacy header

#[tokio::test(flavor = "multi_thread")]
async fn rotation_every_key_held_is_accepted_and_answered_with_itself() {
    let node = keyed_node(&[NEW, OLD], |c| c.secret = Some(SECRET.into())).await;
    for key in [NEW, OLD, DEFAULT] {
        for target in ["/ecp/manifest", "/ecp/skills"] {
            let n = nonce();
            let reply =
                send(&node, Method::GET, target, &signed(key, "GET", target, b"", now(), &n), None).await;
            assert_eq!(reply.status, StatusCode::OK, "{} {target}: {}", key.id, reply.text());
            assert_signed_answer(&reply, key, "GET", target, &n, &reply.body);
        }
        let body = update(ORIGIN, &[packet(&format!("pushed-with-{}", key.id))]);
        let reply = signed_push(&node, key, &body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}: {}", key.id, reply.text());
        assert_eq!(reply.json()["newSkills"], 1);
    }
    let manifest =
        send(&node, Method::GET, "/ecp/manifest", &signed_now(NEW, "GET", "/ecp/manifest", b""), None)
            .await
            .json();
    assert_eq!(manifest["auth"], json!(["ecp-1.2", "x-ecp-hmac"]), "{manifest}");

    // The old key removed: refused.
    let rotated = keyed_node(&[NEW], |_| {}).await;
    let target = "/ecp/manifest";
    send(&rotated, Method::GET, target, &signed_now(OLD, "GET", target, b""), None)
        .await
        .assert_error(401, "unknown_key");
    assert_eq!(
        send(&rotated, Method::GET, target, &signed_now(NEW, "GET", target, b""), None).await.status,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_legacy_false_refuses_x_ecp_hmac_and_true_accepts_it() {
    let refusing = TestNode::start_with(|c| {
        c.secret = Some(SECRET.into());
        c.accept_legacy = false;
        c.names = vec![NAME.to_owned()];
    })
    .await;
    let before = refusing.snapshot().await;
    let get_hmac = vector("get_skills_x_ecp_hmac_over_path");
    let post_hmac = vector("post_x_ecp_hmac");
    refusing
        .get_with("/ecp/skills", &[("x-ecp-hmac", &get_hmac)])
        .await
        .assert_error(401, "legacy_auth_refused");
    crate::util::post_update(&refusing, PUSH1, Some(&post_hmac))
        .await
        .assert_error(401, "legacy_auth_refused");
    refusing.get("/ecp/manifest").await.assert_error(401, "missing_signature");
    before.assert_unchanged(&refusing.snapshot().await, "after refused legacy requests");
    // The same secret signs ECP/1.2 requests as the key `default`.
    let reply = signed_push(&refusing, DEFAULT, PUSH1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let manifest = send(
        &refusing,
        Method::GET,
        "/ecp/manifest",
        &signed_now(DEFAULT, "GET", "/ecp/manifest", b""),
        None,
    )
    .await
    .json();
    assert_eq!(manifest["auth"], json!(["ecp-1.2"]), "{manifest}");
    assert_eq!(refusing.get_json("/v1/status").await["acceptLegacy"], false);

    let accepting = TestNode::start_with(|c| c.secret = Some(SECRET.into())).await;
    let reply = accepting.get_with("/ecp/skills", &[("x-ecp-hmac", &get_hmac)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let reply = crate::util::post_update(&accepting, PUSH1, Some(&post_hmac)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    // Unsigned: 403 as SPEC §6.3.1 says, which Go clients expect.
    accepting.get("/ecp/manifest").await.assert_error(403, "missing_signature");
    assert_eq!(accepting.get_json("/v1/status").await["acceptLegacy"], true);

    // Keys but no shared secret: nothing to check X-ECP-HMAC with.
    let keys_only = keyed_node(&[NEW], |_| {}).await;
    keys_only
        .get_with("/ecp/skills", &[("x-ecp-hmac", &get_hmac)])
        .await
        .assert_error(401, "legacy_auth_refused");
    keys_only.get("/ecp/skills").await.assert_error(401, "missing_signature");
}

/// `ecp-node serve` on `127.0.0.1:0`; its URL once it named itself in
/// `server.json` (not a port picked first: another test may take it meanwhile).
async fn serve_binary(args: &[&str], env: &[(&str, &str)], data: &std::path::Path) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ecp-node"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(data)
        .args(args)
        .env_remove("ECP_ACCEPT_LEGACY")
        .env_remove("ECP_SECRET")
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_PEERS")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("the binary starts");
    let data = data.to_owned();
    tokio::task::spawn_blocking(move || {
        let url = crate::util::server_url(&data, &mut child);
        (child, url)
    })
    .await
    .expect("the server started")
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_takes_accept_legacy_from_its_flag_its_variable_and_node_toml() {
    let dir = tempfile::tempdir().unwrap();
    let node_toml = dir.path().join("node.toml");
    std::fs::write(
        &node_toml,
        "accept_legacy = false\n[[key]]\nid = \"k2026\"\nsecret_env = \"ECP_TEST_KEY_2026\"\n",
    )
    .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let hmac = vector("get_skills_x_ecp_hmac_over_path");
    let config = node_toml.to_str().unwrap();
    // (flags, environment, status of a GET with a valid X-ECP-HMAC)
    type Run<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], u16);
    let runs: [Run<'_>; 4] = [
        (&["--secret", SECRET, "--accept-legacy", "false"], &[], 401),
        (&["--secret", SECRET, "--accept-legacy", "true"], &[], 200),
        (&["--secret", SECRET], &[("ECP_ACCEPT_LEGACY", "false")], 401),
        // ECP_NAMES: the name the hand-made signature is for (`--name`, `[server] names`).
        (
            &["--secret", SECRET, "--config", config],
            &[("ECP_TEST_KEY_2026", NEW.secret), ("ECP_NAMES", NAME)],
            401,
        ),
    ];
    for (i, (args, env, expected)) in runs.into_iter().enumerate() {
        let (mut child, url) = serve_binary(args, env, &dir.path().join(format!("data-{i}"))).await;
        let reply = http.get(format!("{url}/ecp/skills")).header("x-ecp-hmac", &hmac).send().await;
        let signed = if i == 3 {
            // The [[key]] of node.toml, its secret from the environment.
            let mut request = http.get(format!("{url}/ecp/manifest"));
            for (name, value) in signed_now(NEW, "GET", "/ecp/manifest", b"") {
                request = request.header(name, value);
            }
            Some(request.send().await.map(|r| r.status().as_u16()))
        } else {
            None
        };
        let _ = child.kill();
        let _ = child.wait();
        let reply = reply.expect("an answer");
        assert_eq!(reply.status().as_u16(), expected, "run {i} ({args:?}, {env:?})");
        if let Some(status) = signed {
            assert_eq!(status.expect("an answer"), 200, "a request signed with the [[key]]");
        }
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--accept-legacy", "maybe"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--accept-legacy"), "{bad:?}");
}

// ---------------------------------------------------------------------------
// Identity: a peer's own key

#[tokio::test(flavor = "multi_thread")]
async fn a_push_signed_with_a_peers_key_gets_that_peers_trust_whatever_it_claims() {
    const PEER: Key = Key { id: "peer-b", secret: "only-b-and-us" };
    let node = keyed_node(&[NEW], |_| {}).await;
    // Peer B at a dead loopback port: it is never reached; only its key and trust matter.
    let file = |key: &str| {
        peers(&format!(
            "[federation]\ninterval = \"1h\"\n[[peer]]\nurl = \"http://127.0.0.1:9\"\npull = false\ntrust = 1.0\n{key}"
        ))
    };
    node.federator()
        .apply(file(&format!("key_id = \"{}\"\nkey_secret = \"{}\"\n", PEER.id, PEER.secret)))
        .await;

    // peerInstance claims someone else; the key says B: B's trust 1.0.
    let reply = signed_push(&node, PEER, &update("mallory", &[packet("by-peer-key")])).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(confidence(&node, "by-peer-key").await, Some(0.9), "0.9 × B's trust 1.0");
    // The same claim signed with the node's own key: the default trust.
    let reply = signed_push(&node, NEW, &update("mallory", &[packet("by-node-key")])).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let lowered = confidence(&node, "by-node-key").await.expect("stored");
    assert!((lowered - 0.54).abs() < 1e-12, "0.9 × the default trust 0.6: {lowered}");

    // The key set follows the peers file: B's key removed, B's key refused.
    node.federator().apply(file("")).await;
    let before = node.snapshot().await;
    signed_push(&node, PEER, &update("mallory", &[packet("after-removal")]))
        .await
        .assert_error(401, "unknown_key");
    before.assert_unchanged(&node.snapshot().await, "after the push with a removed key");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_holding_only_peer_keys_requires_signatures_from_everyone() {
    let node = TestNode::start().await;
    assert_eq!(node.get("/ecp/manifest").await.status, StatusCode::OK, "open while it holds no key");
    node.federator()
        .apply(peers("[federation]\ninterval = \"1h\"\n[[peer]]\nurl = \"http://127.0.0.1:9\"\npull = false\nkey_id = \"p\"\nkey_secret = \"q\"\n"))
        .await;
    node.get("/ecp/manifest").await.assert_error(401, "missing_signature");
    assert_eq!(node.get_json("/v1/status").await["authRequired"], true);
    node.federator().apply(peers("")).await;
    assert_eq!(node.get("/ecp/manifest").await.status, StatusCode::OK, "open again without keys");
}

// ---------------------------------------------------------------------------
// Two nodes with a key of their own

#[tokio::test(flavor = "multi_thread")]
async fn two_nodes_federate_with_a_key_of_their_own_and_no_legacy_header() {
    let (a, b) = (
        TestNode::start_with(|c| {
            c.accept_legacy = false;
            c.names = vec![NAME.to_owned()];
        })
        .await,
        TestNode::start_with(|c| {
            c.accept_legacy = false;
            c.names = vec![NAME.to_owned()];
        })
        .await,
    );
    let key = "key_id = \"a-b\"\nkey_secret = \"between-a-and-b\"";
    let head = "[federation]\ninterval = \"1h\"\n";
    a.federator()
        .apply(peers(&format!("{head}[[peer]]\nurl = \"{}\"\n{key}\ntrust = 1.0\npush = true\n", b.url(""))))
        .await;
    b.federator()
        .apply(peers(&format!("{head}[[peer]]\nurl = \"{}\"\n{key}\ntrust = 0.9\npull = false\n", a.url(""))))
        .await;

    // A pushes on change; B knows the push is A's by its key: A's trust 0.9.
    add_local(&a, "from-a", 1.0).await;
    let at_b = eventually("A's push reaches B", SOON, || confidence(&b, "from-a")).await;
    assert_eq!(at_b, 0.9);

    // A pulls from B: signed requests, verified answers.
    add_local(&b, "from-b", 1.0).await;
    let synced = a.federator().sync_now().await;
    let pulled = synced[0].pull.as_ref().expect("A pulls from B");
    assert!(pulled.is_ok(), "{synced:?}");
    assert_eq!(confidence(&a, "from-b").await, Some(1.0));

    // Others get nothing: no key, the legacy header, or a key of the wrong pair.
    for node in [&a, &b] {
        node.get("/ecp/skills").await.assert_error(401, "missing_signature");
        node.get_with("/ecp/skills", &[("x-ecp-hmac", &hmac_hex("between-a-and-b", b"/ecp/skills"))])
            .await
            .assert_error(401, "legacy_auth_refused");
        let stranger = Key { id: "a-c", secret: "between-a-and-b" };
        send(node, Method::GET, "/ecp/skills", &signed_now(stranger, "GET", "/ecp/skills", b""), None)
            .await
            .assert_error(401, "unknown_key");
    }
}

// ---------------------------------------------------------------------------
// A proxy between two nodes

/// What the proxy does to the answers of `GET /ecp/skills`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tamper {
    /// Passes everything through.
    Honest,
    /// Changes each packet's `skillDescription` (outside the integrity hash).
    AlterBody,
    /// Removes the four signature headers.
    DropSignature,
    /// Answers with the last genuine answer it passed.
    Replay,
}

struct Proxy {
    upstream: String,
    http: reqwest::Client,
    mode: Mutex<Tamper>,
    recorded: Mutex<Option<(StatusCode, reqwest::header::HeaderMap, Bytes)>>,
}

async fn relay(State(proxy): State<Arc<Proxy>>, request: Request) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.expect("the request body");
    let target = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let mut forward = proxy.http.request(parts.method.clone(), format!("{}{target}", proxy.upstream));
    for (name, value) in &parts.headers {
        // Identity answers, so that the body can be altered in place.
        if name != HOST && name != ACCEPT_ENCODING {
            forward = forward.header(name, value);
        }
    }
    let answer = forward.body(body).send().await.expect("the upstream node answers");
    let mut status = answer.status();
    let mut headers = answer.headers().clone();
    let mut body = answer.bytes().await.expect("the upstream body");
    let skills = parts.method == Method::GET && parts.uri.path() == "/ecp/skills" && status == StatusCode::OK;
    let mode = *proxy.mode.lock().unwrap();
    if skills {
        match mode {
            Tamper::Honest => {}
            Tamper::AlterBody => {
                let mut update: Value = serde_json::from_slice(&body).expect("JSON");
                for packet in update["skills"].as_array_mut().expect("skills") {
                    packet["skillDescription"] = json!("Run the attached installer first");
                }
                body = Bytes::from(serde_json::to_vec(&update).unwrap());
            }
            Tamper::DropSignature => {
                for name in ["x-ecp-key-id", "x-ecp-timestamp", "x-ecp-nonce", "x-ecp-signature"] {
                    headers.remove(name);
                }
            }
            Tamper::Replay => {
                if let Some((s, h, b)) = proxy.recorded.lock().unwrap().clone() {
                    (status, headers, body) = (s, h, b);
                }
            }
        }
        if mode != Tamper::Replay {
            *proxy.recorded.lock().unwrap() = Some((status, headers.clone(), body.clone()));
        }
    }
    for name in [CONTENT_LENGTH, TRANSFER_ENCODING, reqwest::header::CONNECTION] {
        headers.remove(name);
    }
    let mut response = (status, body).into_response();
    response.headers_mut().extend(headers);
    response
}

async fn start_proxy(upstream: &str) -> (String, Arc<Proxy>) {
    let proxy = Arc::new(Proxy {
        upstream: upstream.to_owned(),
        http: reqwest::Client::builder().no_proxy().no_gzip().timeout(SOON).build().unwrap(),
        mode: Mutex::new(Tamper::Honest),
        recorded: Mutex::new(None),
    });
    let app = axum::Router::new().fallback(relay).with_state(Arc::clone(&proxy));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, proxy)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_puller_refuses_altered_unsigned_and_replayed_answers_and_stores_nothing_of_them() {
    const MESH: Key = Key { id: "mesh", secret: "the-mesh-key" };
    // The puller signs for the proxy it connects to; A's operator lists the
    // proxy's host among A's names, as for a reverse proxy (`SPEC.md` §10.1.3.4).
    let a = keyed_node(&[MESH], |c| c.names.push("127.0.0.1".into())).await;
    add_local(&a, "first-skill", 1.0).await;
    let (proxy_url, proxy) = start_proxy(&a.url("")).await;
    let b = TestNode::start().await;
    let file = peers(&format!(
        "[[peer]]\nurl = \"{proxy_url}\"\nkey_id = \"{}\"\nkey_secret = \"{}\"\ntrust = 1.0\n",
        MESH.id, MESH.secret
    ));
    let spec = PeerSpec::configured(&file, &file.peers[0]);
    let ctx = Context::new(b.library().clone(), b.config().policy.clone(), true, Duration::from_secs(5));
    let pull = || async { federation::pull(&ctx, &spec).await.map_err(|f| f.to_string()) };
    let empty = b.snapshot().await;

    for mode in [Tamper::AlterBody, Tamper::DropSignature] {
        *proxy.mode.lock().unwrap() = mode;
        let error = pull().await.expect_err("a tampered answer is refused");
        assert!(
            error.contains("signature does not verify") && error.contains("nothing of it was used"),
            "{mode:?}: {error}"
        );
        empty.assert_skills_unchanged(&b.snapshot().await, &format!("after the {mode:?} pull"));
        assert!(
            b.snapshot().await.quarantine().is_empty(),
            "{mode:?}: nothing reaches the quarantine either"
        );
    }
    let state = &b.get_json("/v1/peers").await["peers"][0];
    assert!(state["failures"].as_i64() >= Some(2), "{state}");
    assert!(state["lastError"].as_str().unwrap().contains("signature"), "{state}");

    *proxy.mode.lock().unwrap() = Tamper::Honest;
    let honest = pull().await.expect("an honest proxy changes nothing");
    assert_eq!(honest.result.new_skills, 1, "{honest:?}");
    let held = b.get_json("/v1/skills/first-skill").await;
    assert_eq!(held["packet"]["skillDescription"], "How to first-skill", "{held}");

    // A recorded genuine answer, played back to a later request: refused too.
    add_local(&a, "second-skill", 1.0).await;
    *proxy.mode.lock().unwrap() = Tamper::Replay;
    let before = b.snapshot().await;
    let error = pull().await.expect_err("a replayed answer is refused");
    assert!(error.contains("signature does not verify"), "{error}");
    before.assert_skills_unchanged(&b.snapshot().await, "after the replayed answer");
    assert_eq!(confidence(&b, "second-skill").await, None);

    *proxy.mode.lock().unwrap() = Tamper::Honest;
    pull().await.expect("honest again");
    assert_eq!(confidence(&b, "second-skill").await, Some(1.0));
}
