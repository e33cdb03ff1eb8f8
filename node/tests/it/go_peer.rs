//! Mixed meshes with a node of the Go reference (#17 items 1–3): an
//! in-process server that behaves like it on the wire (`ECP.md`), beside
//! real ecp nodes.
//!
//! The Go peer serves every skill it holds laundered: as its own
//! (`originInstance: "ok-agent"`), at confidence 0.8, patterns null,
//! frontmatter stripped and the body trimmed, `createdAt` the time of the
//! request. Its server verifies `X-ECP-HMAC` over the URL path only; its
//! client signs a GET over the full URL. It collects skills by pulling
//! ecp nodes ([`GoPeer::pull_from`]), as the Go federator does.
//!
//! Pulls by the ecp nodes are one-off rounds ([`Fed::pull_from`]), so each
//! test decides the order in which copies arrive.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use ecp_node::federation::PullOutcome;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

use crate::federation::Fed;
use crate::util::hmac_hex;

/// The shared secret of the secret meshes.
const SECRET: &str = "s3cret";

/// A node of the Go reference, as seen on the wire.
pub(crate) struct GoPeer {
    /// `None`: an open node.
    secret: Option<String>,
    /// The skills it holds by name, as they reached it.
    held: Mutex<BTreeMap<String, Value>>,
    pub(crate) last_update: Mutex<String>,
    skills_requests: AtomicUsize,
    /// Requests answered 403.
    refused: AtomicUsize,
    /// Requests that carried `X-ECP-HMAC`.
    legacy_headers: AtomicUsize,
    /// A relay rather than the reference: serves each packet as it got it
    /// (unknown fields too) under its own `originInstance` — the one
    /// change of the reference's laundering an origin signature survives.
    relay: bool,
}

/// One of the Go node's own skills, as it holds it: no frontmatter.
fn go_packet(name: &str) -> Value {
    go_packet_with_body(
        name,
        format!("# {name}\n\nRead the failing output, change one thing, run the tests again.\n"),
    )
}

/// A Go node's skill `name` whose body is `body`, as the Go node holds it.
pub(crate) fn go_packet_with_body(name: &str, body: String) -> Value {
    let hash = hex::encode(Sha256::digest(body.as_bytes()));
    json!({
        "id": &hash[..16], "version": "1.0", "createdAt": "2026-11-20T10:00:00Z",
        "originInstance": "ok-agent", "originUserHash": "00112233445566778899aabbccddeeff",
        "originOS": "linux/amd64", "originVersion": "0.9.0", "skillName": name,
        "skillDescription": format!("How to {name}"), "skillBody": body, "patterns": null,
        "confidence": 0.8, "integrityHash": hash, "shareable": true, "tags": null, "deprecated": false
    })
}

/// `body` without its frontmatter block, trimmed: what a Go node serves.
fn strip_frontmatter(body: &str) -> &str {
    let rest = body
        .strip_prefix("---\n")
        .and_then(|after| after.find("\n---\n").map(|end| &after[end + "\n---\n".len()..]))
        .unwrap_or(body);
    rest.trim()
}

/// `packet` as a relay re-serves it: only `originInstance` rewritten.
fn relabelled(packet: &Value) -> Value {
    let mut copy = packet.clone();
    copy["originInstance"] = json!("ok-agent");
    copy
}

/// `packet` as a Go node re-serves it (`ECP.md` › Flaws, 3).
fn laundered(packet: &Value) -> Value {
    let body = strip_frontmatter(packet["skillBody"].as_str().unwrap_or_default()).to_owned();
    let hash = hex::encode(Sha256::digest(body.as_bytes()));
    json!({
        "id": &hash[..16], "version": "1.0", "createdAt": ecp_node::store::now().to_string(),
        "originInstance": "ok-agent", "originUserHash": "e3b0c44298fc1c149afbf4c8996fb924",
        "originOS": "unknown", "originVersion": "5.0.0", "skillName": packet["skillName"],
        "skillDescription": packet["skillDescription"], "skillBody": body, "patterns": null,
        "confidence": 0.8, "integrityHash": hash, "shareable": true, "tags": ["general"],
        "deprecated": false
    })
}

impl GoPeer {
    /// Verifies `X-ECP-HMAC` over the path, as the Go server does.
    fn verify(&self, uri: &Uri, headers: &HeaderMap) -> bool {
        let given = headers.get("x-ecp-hmac").and_then(|v| v.to_str().ok());
        if given.is_some() {
            self.legacy_headers.fetch_add(1, Ordering::SeqCst);
        }
        let Some(secret) = &self.secret else { return true };
        let ok = given == Some(hmac_hex(secret, uri.path().as_bytes()).as_str());
        if !ok {
            self.refused.fetch_add(1, Ordering::SeqCst);
        }
        ok
    }

    /// Pulls every skill of the node at `url`, as the Go federator does: a
    /// GET signed over the full URL, what passes its policy (confidence at
    /// least 0.6, the hash right) held by name.
    pub(crate) async fn pull_from(&self, url: &str) {
        let full = format!("{url}/ecp/skills");
        let mut request = reqwest::Client::new().get(&full);
        if let Some(secret) = &self.secret {
            request = request.header("x-ecp-hmac", hmac_hex(secret, full.as_bytes()));
        }
        let response = request.send().await.expect("the Go client reaches the node");
        assert_eq!(response.status(), StatusCode::OK, "the Go client's pull of {full}");
        let update: Value = response.json().await.expect("an ECPKnowledgeUpdate");
        let mut held = self.held.lock().unwrap();
        for packet in update["skills"].as_array().expect("skills") {
            let body = packet["skillBody"].as_str().unwrap_or_default();
            let intact = packet["integrityHash"] == hex::encode(Sha256::digest(body.as_bytes()));
            if intact && packet["confidence"].as_f64() >= Some(0.6) {
                held.insert(packet["skillName"].as_str().unwrap().to_owned(), packet.clone());
            }
        }
    }

    /// Holds `packet` as if it had been merged.
    pub(crate) fn hold(&self, packet: Value) {
        self.held.lock().unwrap().insert(packet["skillName"].as_str().unwrap().to_owned(), packet);
    }
}

fn forbidden() -> axum::response::Response {
    (StatusCode::FORBIDDEN, axum::Json(json!({"error": "invalid HMAC signature"}))).into_response()
}

async fn go_manifest(
    State(go): State<Arc<GoPeer>>,
    uri: Uri,
    headers: HeaderMap,
) -> axum::response::Response {
    if !go.verify(&uri, &headers) {
        return forbidden();
    }
    let names: Vec<String> = go.held.lock().unwrap().keys().cloned().collect();
    let last_update = go.last_update.lock().unwrap().clone();
    axum::Json(json!({
        "instance": "ok-agent", "version": "1.0", "generatedAt": ecp_node::store::now().to_string(),
        "sequenceNum": 0, "skillCount": names.len(), "skillNames": names, "topTags": null,
        "lastUpdate": last_update
    }))
    .into_response()
}

async fn go_skills(State(go): State<Arc<GoPeer>>, uri: Uri, headers: HeaderMap) -> axum::response::Response {
    if !go.verify(&uri, &headers) {
        return forbidden();
    }
    go.skills_requests.fetch_add(1, Ordering::SeqCst);
    let serve = if go.relay { relabelled } else { laundered };
    let skills: Vec<Value> = go.held.lock().unwrap().values().map(serve).collect();
    axum::Json(json!({
        "id": "ok-agent-update", "peerInstance": "ok-agent", "generatedAt": ecp_node::store::now().to_string(),
        "skills": skills, "stats": {"totalSkills": skills.len(), "totalExtractions": 3,
        "avgConfidence": 0.8, "uptimeHours": 1.5, "topWorkflows": null}, "sequenceNum": 0
    }))
    .into_response()
}

/// A Go node holding `go-first` and `go-second`, with `secret` if any.
pub(crate) async fn start_go_peer(secret: Option<&str>) -> (String, Arc<GoPeer>) {
    start(secret, false).await
}

/// A Go-like relay ([`GoPeer::relay`]), open, holding `go-first` and `go-second`.
pub(crate) async fn start_go_relay() -> (String, Arc<GoPeer>) {
    start(None, true).await
}

async fn start(secret: Option<&str>, relay: bool) -> (String, Arc<GoPeer>) {
    let go = Arc::new(GoPeer {
        secret: secret.map(str::to_owned),
        held: Mutex::default(),
        last_update: Mutex::new("2026-11-20T10:00:00Z".into()),
        skills_requests: AtomicUsize::new(0),
        refused: AtomicUsize::new(0),
        legacy_headers: AtomicUsize::new(0),
        relay,
    });
    go.hold(go_packet("go-first"));
    go.hold(go_packet("go-second"));
    let app = axum::Router::new()
        .route("/ecp/manifest", axum::routing::get(go_manifest))
        .route("/ecp/skills", axum::routing::get(go_skills))
        .with_state(Arc::clone(&go));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, go)
}

/// An ecp node, with the mesh's secret when there is one.
async fn ecp_node(secret: Option<&str>) -> Fed {
    let secret = secret.map(str::to_owned);
    Fed::start_with(move |c| c.secret = secret.map(Into::into)).await
}

/// The `[[peer]]` keys for the Go node: marked legacy with the secret in a
/// secret mesh; nothing at all in an open one (its manifest's Go default
/// identity makes it a legacy sender).
fn go_peer_keys(secret: Option<&str>) -> String {
    secret.map(|s| format!("secret = \"{s}\"\nlegacy = true")).unwrap_or_default()
}

/// The `[[peer]]` keys for an ecp node of the mesh.
fn ecp_peer_keys(secret: Option<&str>) -> String {
    secret.map(|s| format!("secret = \"{s}\"")).unwrap_or_default()
}

async fn quarantined(node: &Fed) -> usize {
    node.get_json("/v1/quarantine").await["quarantine"].as_array().map_or(0, Vec::len)
}

async fn audit(node: &Fed) -> Vec<Value> {
    node.get_json("/v1/audit?limit=1000").await["audit"].as_array().cloned().unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Tests

#[tokio::test(flavor = "multi_thread")]
async fn pulls_from_a_go_peer_with_a_secret_and_an_unchanged_go_peer_transfers_nothing_new() {
    let (go_url, go) = start_go_peer(Some(SECRET)).await;
    let b = Fed::start().await;
    // A Go node verifies X-ECP-HMAC and does not sign its answers: a legacy peer.
    let signed = "secret = \"s3cret\"\ntrust = 0.9\nlegacy = true";
    let first = b.pull_from(&go_url, signed).await.expect("the first pull succeeds");
    assert_eq!(
        (first.outcome, first.result.new_skills, first.cursor),
        (PullOutcome::Merged, 2, 0),
        "{first:?}"
    );
    assert_eq!(go.refused.load(Ordering::SeqCst), 0, "every request was signed over its path");
    let held = b.skill("go-first").await.expect("merged");
    assert_eq!(held["skill"]["origin"], "ok-agent");
    assert_eq!(held["skill"]["originVerified"], false, "{held}");
    assert!((held["skill"]["confidence"].as_f64().unwrap() - 0.72).abs() < 1e-12, "0.8 × 0.9: {held}");
    assert!(
        held["packet"]["skillBody"].as_str().unwrap().starts_with("---\nname: go-first\n"),
        "frontmatter rebuilt"
    );

    // Nothing changed: the manifest says so, no skills are requested.
    let second = b.pull_from(&go_url, signed).await.expect("the second pull succeeds");
    assert_eq!((second.outcome, second.packets), (PullOutcome::Unchanged, 0));
    assert_eq!(go.skills_requests.load(Ordering::SeqCst), 1);

    // The manifest changed (Go says sequenceNum 0 and ignores since): a full
    // pull, which merges as unchanged although every createdAt is new.
    *go.last_update.lock().unwrap() = "2026-11-21T10:00:00Z".into();
    let third = b.pull_from(&go_url, signed).await.expect("the third pull succeeds");
    assert_eq!(
        (third.outcome, third.packets, third.result.unchanged),
        (PullOutcome::Merged, 2, 2),
        "{third:?}"
    );
    assert_eq!(
        (third.result.new_skills, third.result.updated_skills, third.result.rejected_skills),
        (0, 0, 0)
    );
    assert_eq!(go.skills_requests.load(Ordering::SeqCst), 2);

    // A wrong secret is a recorded failure, with the peer's reason and without the secret.
    let error = b.pull_from(&go_url, "secret = \"wrong-secret\"\nlegacy = true").await.unwrap_err();
    assert!(error.contains("403") && error.contains("invalid HMAC"), "{error}");
    let state = b.peer_state(&go_url).await;
    assert!(state["failures"].as_i64() >= Some(1), "{state}");
    assert!(!state.to_string().contains("wrong-secret"), "{state}");
}

/// Issue #17 item 1, in an open and a secret mesh: B gets A's skill from
/// the Go node first, laundered, then from A itself.
async fn the_true_origin_replaces_a_laundered_copy_in(secret: Option<&str>) {
    let (go_url, go) = start_go_peer(secret).await;
    let (a, b) = (ecp_node(secret).await, ecp_node(secret).await);
    a.add_local("bisect-a-regression", 1.0).await;
    go.pull_from(&a.url()).await;
    assert_eq!(go.refused.load(Ordering::SeqCst), 0, "our node takes the Go client's full-URL signature");

    let from_go = b.pull_from(&go_url, &go_peer_keys(secret)).await.expect("B pulls the Go node");
    assert_eq!(from_go.result.new_skills, 3, "{from_go:?}");
    let laundered = b.skill("bisect-a-regression").await.expect("held from the Go node");
    assert_eq!(
        (&laundered["skill"]["origin"], &laundered["skill"]["originVerified"]),
        (&json!("ok-agent"), &json!(false))
    );
    let data = b.data().to_str().expect("UTF-8 paths").to_owned();
    let shown = tokio::task::spawn_blocking(move || {
        crate::cli::ecp_node_bin(&["skill", "show", "bisect-a-regression", "--data", &data])
    })
    .await
    .unwrap();
    assert!(
        shown.stdout.contains("ok-agent — origin unverified (received from a legacy peer)"),
        "{}{}",
        shown.stdout,
        shown.stderr
    );

    let from_a = b.pull_from(&a.url(), &ecp_peer_keys(secret)).await.expect("B pulls A");
    assert_eq!((from_a.result.updated_skills, from_a.result.rejected_skills), (1, 0), "{from_a:?}");
    let genuine = b.skill("bisect-a-regression").await.expect("held");
    assert_eq!(genuine["skill"]["origin"], json!(a.instance()), "{genuine}");
    assert_eq!(genuine["skill"]["originVerified"], true);
    let why = audit(&b).await;
    let replaced = why
        .iter()
        .find(|e| e["skillName"] == "bisect-a-regression" && e["decision"] == "updated")
        .unwrap_or_else(|| panic!("the replacement is audited: {why:?}"));
    let reason = replaced["reason"].as_str().unwrap();
    assert!(reason.contains("unverified origin (\"ok-agent\"") && reason.contains(&a.instance()), "{reason}");

    // The Go node keeps serving its copy: now an echo of B's verified one,
    // neither a refusal nor a quarantine entry, round after round.
    for round in 0..2 {
        *go.last_update.lock().unwrap() = format!("2026-11-2{}T10:00:00Z", round + 2);
        let again = b.pull_from(&go_url, &go_peer_keys(secret)).await.expect("B pulls the Go node again");
        assert_eq!((again.result.rejected_skills, again.echoes), (0, 1), "round {round}: {again:?}");
        assert_eq!(b.skill("bisect-a-regression").await.unwrap()["skill"]["origin"], json!(a.instance()));
    }
    assert_eq!(quarantined(&b).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_true_origin_replaces_a_laundered_copy_in_an_open_mesh() {
    the_true_origin_replaces_a_laundered_copy_in(None).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_true_origin_replaces_a_laundered_copy_in_a_secret_mesh() {
    the_true_origin_replaces_a_laundered_copy_in(Some(SECRET)).await;
}

/// Issue #17 item 2: A's own skill comes back from the Go node every round.
#[tokio::test(flavor = "multi_thread")]
async fn a_laundered_echo_of_an_own_skill_is_counted_as_an_echo_round_after_round() {
    let (go_url, go) = start_go_peer(Some(SECRET)).await;
    let a = ecp_node(Some(SECRET)).await;
    a.add_local("own-skill", 1.0).await;
    go.pull_from(&a.url()).await;
    for round in 0..3 {
        // The Go node's manifest changes each round, so each is a full pull.
        *go.last_update.lock().unwrap() = format!("2026-11-2{round}T10:00:00Z");
        let pulled = a.pull_from(&go_url, &go_peer_keys(Some(SECRET))).await.expect("A pulls the Go node");
        assert_eq!(pulled.packets, 3, "{pulled:?}");
        assert_eq!((pulled.echoes, pulled.result.rejected_skills), (1, 0), "round {round}: {pulled:?}");
        assert!(pulled.result.conflicts.is_empty(), "{pulled:?}");
        assert_eq!(quarantined(&a).await, 0, "round {round}");
    }
    assert_eq!(go.skills_requests.load(Ordering::SeqCst), 3);
    let own = a.skill("own-skill").await.expect("still held");
    assert_eq!((&own["skill"]["kind"], &own["skill"]["originVerified"]), (&json!("local"), &json!(true)));
    let echoes: Vec<Value> = audit(&a).await.into_iter().filter(|e| e["decision"] == "echo").collect();
    assert_eq!(echoes.len(), 3, "one echo line per round: {echoes:?}");
    assert_eq!(echoes[0]["reason"], "1 packets");
    let metrics = a.http.get(format!("{}/metrics", a.url())).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.lines().any(|l| l.contains("decision=\"echo\"") && l.trim_end().ends_with(" 3")),
        "{metrics}"
    );

    // An unchanged manifest: nothing downloaded at all.
    let quiet = a.pull_from(&go_url, &go_peer_keys(Some(SECRET))).await.expect("A pulls again");
    assert_eq!((quiet.outcome, quiet.packets), (PullOutcome::Unchanged, 0));
    assert_eq!(go.skills_requests.load(Ordering::SeqCst), 3);
}

/// Issue #17 item 1: what B got from its origin stays, whatever the Go node serves.
#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_peer_never_replaces_a_verified_copy() {
    let (go_url, go) = start_go_peer(None).await;
    let (a, b) = (ecp_node(None).await, ecp_node(None).await);
    a.add_local("verified-skill", 1.0).await;
    b.pull_from(&a.url(), "").await.expect("B pulls A");
    // The Go node holds another text under the name, stamped later.
    let mut other = go_packet("verified-skill");
    let body = "# verified-skill\n\nSomething else entirely, run it twice.";
    other["skillBody"] = json!(body);
    other["integrityHash"] = json!(hex::encode(Sha256::digest(body.as_bytes())));
    go.hold(other);
    let pulled = b.pull_from(&go_url, "").await.expect("B pulls the Go node");
    assert_eq!(pulled.result.rejected_skills, 1, "{pulled:?}");
    let line = &pulled.result.conflicts[0];
    assert!(
        line.starts_with("verified-skill: conflict: this node holds the skill from the verified origin"),
        "{line}"
    );
    let held = b.skill("verified-skill").await.unwrap();
    assert_eq!(
        (&held["skill"]["origin"], &held["skill"]["originVerified"]),
        (&json!(a.instance()), &json!(true))
    );
    assert_eq!(held["skill"]["version"], 1, "not replaced");
}

/// Issue #17 item 3: no hint-less 403, and no fallback to the replayable header.
#[tokio::test(flavor = "multi_thread")]
async fn a_go_peer_not_marked_legacy_refuses_the_signed_pull_with_a_hint() {
    let (go_url, go) = start_go_peer(Some(SECRET)).await;
    let b = Fed::start().await;
    let error = b.pull_from(&go_url, &ecp_peer_keys(Some(SECRET))).await.unwrap_err();
    assert!(
        error.contains(
            "the peer refused ECP/1.2 signatures; if it is an ECP/1.1 node, mark it `legacy = true` (peers.toml) \
             or pass `--legacy`"
        ),
        "{error}"
    );
    assert!(error.contains("403") && error.contains("invalid HMAC signature"), "{error}");
    assert_eq!(go.refused.load(Ordering::SeqCst), 1, "one request, not retried");
    assert_eq!(go.legacy_headers.load(Ordering::SeqCst), 0, "never downgraded to X-ECP-HMAC");
    // Marked legacy, the same pull works.
    b.pull_from(&go_url, &go_peer_keys(Some(SECRET))).await.expect("a legacy pull");
}
