//! Legacy `X-ECP-HMAC` (`SPEC.md` › 6) on all three ECP endpoints, with and
//! without a secret, using the reference vectors
//! (`protocol/testdata/legacy-hmac-vectors.json`, secret `s3cret`).
//!
//! Expected signatures are computed here with `hmac`/`sha2`, never through
//! the node's own signing code, so a bug shared by both cannot pass.

use reqwest::{Method, StatusCode};

use crate::util::{
    ORIGIN, PUSH1, Reply, TestNode, assert_no_failures, hmac_hex, packet, post_update, raw_exchange,
    served_named, update, vector,
};

const SECRET: &str = "s3cret";

async fn secret_node() -> TestNode {
    TestNode::start_with(|c| c.secret = Some(SECRET.into())).await
}

async fn get_signed(node: &TestNode, path: &str, signature: Option<&str>) -> Reply {
    let headers: Vec<(&str, &str)> = signature.map(|s| ("x-ecp-hmac", s)).into_iter().collect();
    node.get_with(path, &headers).await
}

#[test]
fn our_hmac_reproduces_the_reference_vectors() {
    let cases = [
        (PUSH1.to_vec(), "post_x_ecp_hmac"),
        (b"/ecp/manifest".to_vec(), "get_manifest_x_ecp_hmac_over_path"),
        (b"/ecp/skills".to_vec(), "get_skills_x_ecp_hmac_over_path"),
        (
            vector("full_url_used").into_bytes(),
            "get_skills_x_ecp_hmac_over_full_url_as_reference_client_sends",
        ),
    ];
    for (payload, key) in cases {
        assert_eq!(hmac_hex(SECRET, &payload), vector(key), "vector {key}");
    }
}

// ---------------------------------------------------------------------------
// Without a secret

#[tokio::test(flavor = "multi_thread")]
async fn open_node_serves_all_three_endpoints_without_a_signature() {
    let node = TestNode::start().await;
    assert_eq!(node.get("/ecp/manifest").await.status, StatusCode::OK);
    assert_eq!(node.get("/ecp/skills").await.status, StatusCode::OK);
    let reply = post_update(&node, PUSH1, None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let listing = node.get_json("/ecp/skills").await;
    assert!(served_named(&listing, "git-bisect-regression").is_some(), "{listing:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn open_node_ignores_any_signature_header() {
    let node = TestNode::start().await;
    for signature in ["garbage", &"0".repeat(64), &vector("get_skills_x_ecp_hmac_over_path")] {
        assert_eq!(get_signed(&node, "/ecp/manifest", Some(signature)).await.status, StatusCode::OK);
        assert_eq!(get_signed(&node, "/ecp/skills", Some(signature)).await.status, StatusCode::OK);
    }
    let reply = post_update(&node, update(ORIGIN, &[packet("open-push")]), Some("not-hex")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["newSkills"], 1);
}

// ---------------------------------------------------------------------------
// With a secret: what is accepted

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_accepts_the_reference_push_signed_with_the_vector_hmac() {
    let node = secret_node().await;
    let reply = post_update(&node, PUSH1, Some(&vector("post_x_ecp_hmac"))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["newSkills"].as_u64().map(|n| n >= 1), Some(true), "{}", reply.text());
    let listing = get_signed(&node, "/ecp/skills", Some(&vector("get_skills_x_ecp_hmac_over_path"))).await;
    assert_eq!(listing.status, StatusCode::OK, "{}", listing.text());
    assert!(served_named(&listing.json(), "git-bisect-regression").is_some(), "{}", listing.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_accepts_gets_signed_over_the_path_with_the_vector_hmacs() {
    let node = secret_node().await;
    let manifest = vector("get_manifest_x_ecp_hmac_over_path");
    let skills = vector("get_skills_x_ecp_hmac_over_path");
    for (path, signature) in [
        ("/ecp/manifest", manifest.clone()),
        ("/ecp/skills", skills.clone()),
        // The query is not part of the signed payload.
        ("/ecp/skills?since=0", skills.clone()),
        // Hex in either case (SPEC 6.3.3); surrounding blanks are trimmed.
        ("/ecp/skills", skills.to_uppercase()),
        ("/ecp/manifest", format!(" {manifest}\t")),
    ] {
        let reply = get_signed(&node, path, Some(&signature)).await;
        assert_eq!(reply.status, StatusCode::OK, "GET {path} with {signature:?}: {}", reply.text());
        reply.json();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_accepts_a_get_signed_over_the_full_url_as_the_go_client_sends_it() {
    let node = secret_node().await;
    // What a Go client pulling from this node signs: the URL it requests,
    // with the Host header it sends (reqwest sends the same host:port).
    for path in ["/ecp/skills", "/ecp/manifest"] {
        for scheme in ["http", "https"] {
            let url = format!("{scheme}://{}{path}", node.host());
            let reply = get_signed(&node, path, Some(&hmac_hex(SECRET, url.as_bytes()))).await;
            assert_eq!(reply.status, StatusCode::OK, "signed over {url}: {}", reply.text());
        }
    }
    // The reference vector itself, with the Host it was computed for.
    let full = vector("full_url_used");
    let host = full.trim_start_matches("http://").trim_end_matches("/ecp/skills").to_owned();
    let go_signature = vector("get_skills_x_ecp_hmac_over_full_url_as_reference_client_sends");
    let reply = node.get_with("/ecp/skills", &[("host", &host), ("x-ecp-hmac", &go_signature)]).await;
    assert_eq!(reply.status, StatusCode::OK, "vector over {full} with Host {host}: {}", reply.text());
    // The same signature under this node's real Host names another URL.
    get_signed(&node, "/ecp/skills", Some(&go_signature)).await.assert_error(403, "bad_signature");
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_without_full_url_support_accepts_only_the_path_signature() {
    let node = TestNode::start_with(|c| {
        c.secret = Some(SECRET.into());
        c.accept_full_url_hmac = false;
    })
    .await;
    let url = format!("http://{}/ecp/skills", node.host());
    get_signed(&node, "/ecp/skills", Some(&hmac_hex(SECRET, url.as_bytes())))
        .await
        .assert_error(403, "bad_signature");
    let by_path = get_signed(&node, "/ecp/skills", Some(&vector("get_skills_x_ecp_hmac_over_path"))).await;
    assert_eq!(by_path.status, StatusCode::OK, "{}", by_path.text());
}

// ---------------------------------------------------------------------------
// With a secret: what is refused

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_refuses_missing_wrong_and_malformed_signatures_with_403_json() {
    let node = secret_node().await;
    let before = node.snapshot().await;
    let other_secret = |payload: &[u8]| hmac_hex("not-the-secret", payload);
    let malformed = ["zz".repeat(32), "abc".to_owned(), "a".repeat(65), String::new(), {
        let hex = vector("get_skills_x_ecp_hmac_over_path");
        format!("sha256={hex}")
    }];

    // (what, endpoint, signature, expected code)
    let mut cases: Vec<(String, &str, Option<String>, &str)> = Vec::new();
    for endpoint in ["GET /ecp/manifest", "GET /ecp/skills", "POST /ecp/skills"] {
        let payload: &[u8] = match endpoint {
            "POST /ecp/skills" => PUSH1,
            e => e.trim_start_matches("GET ").as_bytes(),
        };
        cases.push(("missing".into(), endpoint, None, "missing_signature"));
        cases.push(("another secret".into(), endpoint, Some(other_secret(payload)), "bad_signature"));
        for m in &malformed {
            cases.push((format!("malformed {m:?}"), endpoint, Some(m.clone()), "malformed_signature"));
        }
    }
    // Signatures valid for something else.
    let manifest_sig = vector("get_manifest_x_ecp_hmac_over_path");
    let skills_sig = vector("get_skills_x_ecp_hmac_over_path");
    cases.push(("the manifest's signature".into(), "GET /ecp/skills", Some(manifest_sig), "bad_signature"));
    cases.push(("a GET signature on a POST".into(), "POST /ecp/skills", Some(skills_sig), "bad_signature"));
    cases.push((
        "the POST signature on a GET".into(),
        "GET /ecp/skills",
        Some(vector("post_x_ecp_hmac")),
        "bad_signature",
    ));

    let mut failures = Vec::new();
    for (what, endpoint, signature, code) in &cases {
        let reply = match *endpoint {
            "POST /ecp/skills" => post_update(&node, PUSH1, signature.as_deref()).await,
            e => get_signed(&node, e.trim_start_matches("GET "), signature.as_deref()).await,
        };
        match reply.check_error(403, code) {
            Ok(_) if String::from_utf8_lossy(&reply.body).contains(SECRET) => {
                failures.push(format!("{endpoint} with {what}: the answer shows the secret"));
            }
            Ok(_) => {}
            Err(e) => failures.push(format!("{endpoint} with {what}: {e}")),
        }
    }
    assert_no_failures(&failures, cases.len());
    before.assert_unchanged(&node.snapshot().await, "after refused requests");
    node.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_signature_covers_the_exact_body_bytes() {
    let node = secret_node().await;
    let before = node.snapshot().await;
    let signature = vector("post_x_ecp_hmac");
    let mut with_newline = PUSH1.to_vec();
    with_newline.push(b'\n');
    let reencoded = serde_json::to_vec(&serde_json::from_slice::<serde_json::Value>(PUSH1).unwrap()).unwrap();
    for (what, body) in [("one more byte", with_newline), ("the same JSON re-encoded", reencoded)] {
        let reply = post_update(&node, body, Some(&signature)).await;
        reply.check_error(403, "bad_signature").unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    before.assert_unchanged(&node.snapshot().await, "after refused pushes");
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_node_checks_the_signature_before_the_query_and_the_body() {
    let node = secret_node().await;
    get_signed(&node, "/ecp/skills?since=abc", None).await.assert_error(403, "missing_signature");
    post_update(&node, b"not json".to_vec(), None).await.assert_error(403, "missing_signature");
    post_update(&node, Vec::new(), Some(&"0".repeat(64))).await.assert_error(403, "bad_signature");
    // A correctly signed bad body reaches the decoder.
    let body = b"not json".to_vec();
    let signature = hmac_hex(SECRET, &body);
    post_update(&node, body, Some(&signature)).await.assert_error(400, "invalid_json");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signature_header_that_is_not_utf8_gets_403_json() {
    let node = secret_node().await;
    let head = format!(
        "GET /ecp/manifest HTTP/1.1\r\nHost: {}\r\nX-ECP-HMAC: \u{0}\r\nConnection: close\r\n\r\n",
        node.host()
    );
    let mut head = head.into_bytes();
    let nul = head.iter().position(|b| *b == 0).expect("placeholder");
    head.splice(nul..=nul, [0xff, 0xfe, 0x80]);
    let reply = raw_exchange(node.addr(), &head, Vec::new()).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text());
    let body = reply.json();
    assert!(
        body["code"] == "malformed_signature" || body["code"] == "missing_signature",
        "code for a non-UTF-8 signature: {body}"
    );
    node.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_api_needs_no_signature_with_the_api_token() {
    let node = secret_node().await;
    for path in ["/v1/status", "/v1/skills", "/v1/quarantine", "/v1/audit", "/healthz"] {
        let reply = node.request(Method::GET, path, &[], None).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
    }
    assert_eq!(node.get_json("/v1/status").await["authRequired"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_reads_the_secret_from_ecp_secret_file() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let held = dir.path().join("secret");
    std::fs::write(&held, format!("{SECRET}\n")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(dir.path().join("data"))
        .arg("--skills-dir")
        .arg(dir.path().join("skills"))
        .env_remove("ECP_SECRET")
        .env_remove("ECP_CONFIG")
        .env("ECP_SECRET_FILE", &held)
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = child.stderr.take().expect("stderr");
    let url = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            let at = line.find("listening on http://")? + "listening on ".len();
            Some(line[at..].split_whitespace().next()?.to_owned())
        })
        .expect("the node logs its URL");
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let manifest = format!("{url}/ecp/manifest");
    let unsigned = http.get(&manifest).send().await.expect("GET").status();
    let signature = vector("get_manifest_x_ecp_hmac_over_path");
    let signed = http.get(&manifest).header("x-ecp-hmac", signature).send().await.expect("GET").status();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        (unsigned, signed),
        (StatusCode::FORBIDDEN, StatusCode::OK),
        "the file's secret, without its line break"
    );
}
