//! Test support: [`TestNode`] (a real node on a loopback ephemeral port, in
//! its own temporary folder), [`Reply`] (an HTTP answer kept as bytes),
//! raw-socket requests for bytes reqwest will not send, packet builders,
//! the reference fixtures, and JSON assertions that print readable diffs.
//!
//! Nothing here talks to an address outside 127.0.0.0/8: the client has no
//! proxy and every URL is built from the node's own loopback address.

#![allow(dead_code)] // Each test module uses a different part of this toolbox.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::Config;
use ecp_node::node::StartError;
use ecp_protocol::{KnowledgeUpdate, Origin, SkillPacket, Timestamp};
use hmac::{Hmac, Mac};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Sha256;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The reference push: four packets, one good (see `push1.result.json`).
pub(crate) const PUSH1: &[u8] = include_bytes!("../../../protocol/testdata/push1.json");
/// Legacy HMAC vectors checked against the reference server.
pub(crate) const HMAC_VECTORS: &str = include_str!("../../../protocol/testdata/legacy-hmac-vectors.json");

/// The instance every helper-built packet comes from, as in the fixtures.
pub(crate) const ORIGIN: &str = "alice-laptop";
/// A `createdAt` in the past of every test run (the fixtures' own time).
pub(crate) const CREATED_AT: &str = "2026-11-20T10:00:00Z";

/// For [`Reply::assert_error`]: any non-empty `code` will do.
pub(crate) const ANY_CODE: &str = "*";

/// How long any single exchange with a test node may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// Absolute-path prefixes an error message must never show.
const SERVER_PATHS: &[&str] = &["/work", "/tmp", "/home", "/root", "/var", "/usr", "/etc/ecp"];

// ---------------------------------------------------------------------------
// The node

/// A node serving from its own temporary folder on `127.0.0.1:<ephemeral>`.
pub(crate) struct TestNode {
    /// Data and skills folders; removed when the test ends.
    dir: TempDir,
    /// The configuration it was (and is re-) bound with.
    config: Config,
    /// `None` only in the middle of [`TestNode::restart`].
    node: Option<Node>,
    client: reqwest::Client,
}

impl TestNode {
    /// A node with the test configuration.
    pub(crate) async fn start() -> TestNode {
        TestNode::start_with(|_| {}).await
    }

    /// A node whose test configuration `adjust` changed first (secret, limits, …).
    pub(crate) async fn start_with(adjust: impl FnOnce(&mut Config)) -> TestNode {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut config = Config::for_tests(dir.path());
        adjust(&mut config);
        assert!(config.listen.ip().is_loopback(), "test nodes listen on loopback only");
        let node = Node::bind(config.clone()).await.expect("the test node starts");
        let client = v1_client(&node, DEADLINE);
        TestNode { dir, config, node: Some(node), client }
    }

    fn node(&self) -> &Node {
        self.node.as_ref().expect("the node is running")
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.node().local_addr()
    }

    /// Where it serves the health endpoints alone (`health_listen`), if anywhere.
    pub(crate) fn health_addr(&self) -> Option<SocketAddr> {
        self.node().health_addr()
    }

    /// The `Host` header value a client sends to it, e.g. `127.0.0.1:40123`.
    pub(crate) fn host(&self) -> String {
        self.addr().to_string()
    }

    /// The full URL of `path` (which may carry a query).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.node().url())
    }

    /// The temporary folder holding `data/` and `skills/`.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The configuration it runs with.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The shared HTTP client (no proxy, with a deadline, sending the
    /// node's API token unless a request sets `Authorization` itself).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Its skill library: the store itself, for what HTTP cannot show (or
    /// when the node answers 429).
    pub(crate) fn library(&self) -> &ecp_node::library::Library {
        self.node().library()
    }

    /// Its federator (to apply a peers file, or sync now).
    pub(crate) fn federator(&self) -> &ecp_node::federation::Federator {
        self.node().federator()
    }

    /// Shuts the node down and binds a new one on the same data folder (and
    /// a new ephemeral port).
    pub(crate) async fn restart(&mut self) {
        self.restart_with(|_| {}).await;
    }

    /// [`TestNode::restart`] with the configuration changed by `adjust` first.
    pub(crate) async fn restart_with(&mut self, adjust: impl FnOnce(&mut Config)) {
        adjust(&mut self.config);
        self.restart_after(|| {}).await;
    }

    /// [`TestNode::restart`], running `while_down` between the shutdown and
    /// the new start: changes to its folders that no running node may see
    /// half of (its first import sees them whole).
    pub(crate) async fn restart_after(&mut self, while_down: impl FnOnce()) {
        self.stop().await;
        while_down();
        self.resume().await;
    }

    /// Shuts the node down, keeping its folders, until [`TestNode::resume`]:
    /// for what happens to them while no node runs (a crash's leftovers).
    pub(crate) async fn stop(&mut self) {
        let node = self.node.take().expect("the node is running");
        tokio::time::timeout(DEADLINE, node.shutdown())
            .await
            .expect("the node shuts down in time")
            .expect("the node shuts down cleanly");
    }

    /// Binds a new node on the data folder of a stopped one (a new ephemeral port).
    pub(crate) async fn resume(&mut self) {
        assert!(self.node.is_none(), "resume follows stop");
        // A process another test forks holds a copy of every open file until
        // it execs, and with it the old node's `flock`s on its folders: a
        // restart waits that moment out (up to 5 s) rather than failing. A
        // second node on the same folders is still refused, after the wait.
        let mut waited = 0;
        let node = loop {
            match Node::bind(self.config.clone()).await {
                Err(StartError::FolderLocked(_) | StartError::Locked(_)) if waited < 50 => {
                    waited += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                started => break started.expect("the node starts again on the same data"),
            }
        };
        self.node = Some(node);
    }

    /// Sends a request; `headers` are added as given.
    pub(crate) async fn request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        let mut request = self.client.request(method.clone(), self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.unwrap_or_else(|e| panic!("{method} {path}: body: {e}")).to_vec();
        Reply { status, headers, body }
    }

    /// `GET path`.
    pub(crate) async fn get(&self, path: &str) -> Reply {
        self.request(Method::GET, path, &[], None).await
    }

    /// `GET path` with headers.
    pub(crate) async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.request(Method::GET, path, headers, None).await
    }

    /// `GET path`, which must answer 200 JSON; returns the JSON.
    pub(crate) async fn get_json(&self, path: &str) -> Value {
        let reply = self.get(path).await;
        assert_eq!(reply.status, StatusCode::OK, "GET {path}: {}", reply.text());
        reply.json()
    }

    /// `POST /ecp/skills` with the pushed update, as the reference client does.
    pub(crate) async fn push(&self, update: &[u8]) -> Reply {
        post_update(self, update, None).await
    }

    /// Pushes `update`, which must be merged (200); returns the MergeResult.
    pub(crate) async fn push_ok(&self, update: &[u8]) -> Value {
        let reply = self.push(update).await;
        assert_eq!(reply.status, StatusCode::OK, "POST /ecp/skills: {}", reply.text());
        reply.json()
    }

    /// The node's instance id, from `/v1/status`.
    pub(crate) async fn instance_id(&self) -> String {
        let status = self.get_json("/v1/status").await;
        status["instance"].as_str().expect("status names the instance").to_owned()
    }

    /// The node's sequence number, from `/v1/status`.
    pub(crate) async fn sequence(&self) -> i64 {
        self.get_json("/v1/status").await["sequence"].as_i64().expect("status has a sequence")
    }

    /// Asserts that the node still answers `/healthz` with 200 JSON.
    pub(crate) async fn assert_healthy(&self) {
        let reply = self.get("/healthz").await;
        assert_eq!(reply.status, StatusCode::OK, "/healthz after the request: {}", reply.text());
        assert_eq!(reply.json()["status"], "ok");
    }

    /// The store as the local API shows it (see [`Snapshot`]).
    pub(crate) async fn snapshot(&self) -> Snapshot {
        let status = self.get_json("/v1/status").await;
        let skills = self.get_json("/v1/skills").await["skills"].clone();
        let mut versions = serde_json::Map::new();
        for skill in skills.as_array().expect("/v1/skills lists an array") {
            let name = skill["name"].as_str().expect("a listed skill has a name");
            let shown = self.get_json(&format!("/v1/skills/{name}")).await;
            versions.insert(name.to_owned(), shown["versions"].clone());
        }
        let quarantine = self.get_json("/v1/quarantine").await["quarantine"].clone();
        let audit = self.get_json("/v1/audit?limit=10000").await;
        let audit_entries = audit["audit"].as_array().expect("/v1/audit lists an array").len();
        Snapshot(json!({
            "instance": status["instance"],
            "sequence": status["sequence"],
            "skills": skills,
            "versions": versions,
            "quarantine": quarantine,
            "auditEntries": audit_entries,
        }))
    }
}

/// A client of `node` (no proxy, `timeout`) that sends its API token, so
/// the `/v1/` API answers it; the token survives restarts on the same data.
pub(crate) fn v1_client(node: &Node, timeout: Duration) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let bearer = format!("Bearer {}", node.api_token().expose());
    headers.insert(reqwest::header::AUTHORIZATION, bearer.parse().expect("a token is a header value"));
    reqwest::Client::builder()
        .no_proxy()
        .timeout(timeout)
        .default_headers(headers)
        .build()
        .expect("an HTTP client")
}

/// The URL of the `ecp-node serve` process `child` on the data folder
/// `data`, once it has named itself in `server.json` (it listens by then).
/// Serve processes listen on `127.0.0.1:0` and are found this way: a port
/// picked beforehand and freed may be taken by another test meanwhile.
/// Fails at once if `child` exits, and after [`DEADLINE`].
#[track_caller]
pub(crate) fn server_url(data: &Path, child: &mut std::process::Child) -> String {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let info = std::fs::read(data.join(ecp_node::data_lock::SERVER_FILE)).ok();
        let info =
            info.and_then(|t| serde_json::from_slice::<Value>(&t).ok()).filter(|i| i["pid"] == child.id());
        if let Some(info) = info {
            return info["url"].as_str().expect("server.json names a url").to_owned();
        }
        if let Some(status) = child.try_wait().expect("the server's status") {
            panic!("the server exited ({status}) before writing server.json");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no server.json within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `POST /ecp/skills` with exactly `body`, and `X-ECP-HMAC: hmac` when given.
pub(crate) async fn post_update(node: &TestNode, body: impl Into<Vec<u8>>, hmac: Option<&str>) -> Reply {
    let mut headers = vec![("content-type", "application/json")];
    if let Some(signature) = hmac {
        headers.push(("x-ecp-hmac", signature));
    }
    node.request(Method::POST, "/ecp/skills", &headers, Some(body.into())).await
}

// ---------------------------------------------------------------------------
// Store snapshots

/// A comparable dump of a node's store: instance id, sequence number, every
/// skill record, every skill's versions, the held quarantine and the number
/// of audit entries. Two equal snapshots mean "the store is exactly as
/// before" as far as any client can tell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot(pub(crate) Value);

impl Snapshot {
    /// The `/v1/skills` records.
    pub(crate) fn skills(&self) -> &Vec<Value> {
        self.0["skills"].as_array().expect("snapshot has skills")
    }

    /// Names of every skill record, tombstones included.
    pub(crate) fn skill_names(&self) -> Vec<String> {
        self.skills().iter().map(|s| s["name"].as_str().unwrap_or_default().to_owned()).collect()
    }

    /// The held quarantine entries, oldest first.
    pub(crate) fn quarantine(&self) -> &Vec<Value> {
        self.0["quarantine"].as_array().expect("snapshot has quarantine")
    }

    /// The sequence number.
    pub(crate) fn sequence(&self) -> i64 {
        self.0["sequence"].as_i64().expect("snapshot has a sequence")
    }

    /// The number of audit entries.
    pub(crate) fn audit_entries(&self) -> u64 {
        self.0["auditEntries"].as_u64().expect("snapshot counts audit entries")
    }

    /// The skills as stored: every record, every version, and the instance.
    /// Not the sequence number: recording a refusal may take one.
    pub(crate) fn skill_state(&self) -> Value {
        json!({
            "instance": self.0["instance"],
            "skills": self.0["skills"],
            "versions": self.0["versions"],
        })
    }

    /// Asserts that `after` is exactly this snapshot.
    #[track_caller]
    pub(crate) fn assert_unchanged(&self, after: &Snapshot, context: &str) {
        let diff = json_diff(&after.0, &self.0, false);
        assert!(diff.is_empty(), "{context}: the store changed:\n{}", diff.join("\n"));
    }

    /// Asserts that `after` has the same skill records and versions.
    #[track_caller]
    pub(crate) fn assert_skills_unchanged(&self, after: &Snapshot, context: &str) {
        let diff = json_diff(&after.skill_state(), &self.skill_state(), false);
        assert!(diff.is_empty(), "{context}: the skills changed:\n{}", diff.join("\n"));
    }
}

// ---------------------------------------------------------------------------
// Replies

/// An HTTP answer, body kept as bytes.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// Status code.
    pub(crate) status: StatusCode,
    /// Headers.
    pub(crate) headers: HeaderMap,
    /// Body, as received (after gzip decoding, for reqwest replies).
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// The body as text (lossy), for messages.
    pub(crate) fn text(&self) -> String {
        format!("{} {}", self.status, String::from_utf8_lossy(&self.body))
    }

    /// A header's value as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON; panics with the body shown.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("the answer is not JSON ({e}): {}", self.text()))
    }

    /// Asserts `Content-Type: application/json` (parameters allowed).
    #[track_caller]
    pub(crate) fn assert_json_content_type(&self) {
        let ct = self.header(CONTENT_TYPE.as_str()).unwrap_or("(none)");
        let essence = ct.split(';').next().unwrap_or_default().trim();
        assert!(essence.eq_ignore_ascii_case("application/json"), "content-type {ct:?} for {}", self.text());
    }

    /// Asserts an ECP error: `status`, JSON content type, a body
    /// `{"error": <non-empty one line>, "code": code}` (any code for
    /// [`ANY_CODE`]) and no server path in it. Returns the body.
    #[track_caller]
    pub(crate) fn assert_error(&self, status: u16, code: &str) -> Value {
        assert_eq!(self.status.as_u16(), status, "status; answer: {}", self.text());
        self.assert_json_content_type();
        let body = self.json();
        let message = body["error"].as_str().unwrap_or_else(|| panic!("no \"error\" string: {body}"));
        assert!(!message.trim().is_empty(), "empty error message: {body}");
        assert!(!message.contains('\n'), "error message is not one line: {message:?}");
        if code == ANY_CODE {
            assert!(body["code"].as_str().is_some_and(|c| !c.is_empty()), "no \"code\": {body}");
        } else {
            assert_eq!(body["code"], code, "code; answer: {body}");
        }
        assert_no_server_path(&String::from_utf8_lossy(&self.body));
        body
    }

    /// Like [`Reply::assert_error`], collecting the problem instead of panicking.
    pub(crate) fn check_error(&self, status: u16, code: &str) -> Result<Value, String> {
        if self.status.as_u16() != status {
            return Err(format!("expected {status} {code}, got {}", self.text()));
        }
        let ct = self.header(CONTENT_TYPE.as_str()).unwrap_or("(none)");
        if !ct.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json") {
            return Err(format!("content-type {ct:?}, not application/json: {}", self.text()));
        }
        let body: Value = serde_json::from_slice(&self.body)
            .map_err(|e| format!("answer is not JSON ({e}): {}", self.text()))?;
        match body["error"].as_str() {
            Some(m) if !m.trim().is_empty() && !m.contains('\n') => {}
            _ => return Err(format!("no one-line \"error\" message: {body}")),
        }
        if code == ANY_CODE && body["code"].as_str().is_none_or(str::is_empty) {
            return Err(format!("no \"code\" string: {body}"));
        }
        if code != ANY_CODE && body["code"] != code {
            return Err(format!("expected code {code:?}: {body}"));
        }
        let text = String::from_utf8_lossy(&self.body);
        if let Some(p) = SERVER_PATHS.iter().find(|p| text.contains(*p)) {
            return Err(format!("the answer shows a server path ({p}): {text}"));
        }
        Ok(body)
    }
}

/// Asserts that `text` shows no absolute server path.
#[track_caller]
pub(crate) fn assert_no_server_path(text: &str) {
    for prefix in SERVER_PATHS {
        assert!(!text.contains(prefix), "the answer shows a server path ({prefix}): {text}");
    }
}

// ---------------------------------------------------------------------------
// Raw sockets

/// Sends `head` then `body` on a fresh connection to `addr` and reads one
/// answer. The body is written concurrently with reading, and write errors
/// are ignored: a node may answer (413) and close before reading it all.
/// The answer is complete at its `Content-Length` or at end of stream.
pub(crate) async fn raw_exchange(addr: SocketAddr, head: &[u8], body: Vec<u8>) -> Reply {
    assert!(addr.ip().is_loopback());
    let stream = tokio::time::timeout(DEADLINE, TcpStream::connect(addr))
        .await
        .expect("connect in time")
        .expect("connect to the test node");
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(head).await.expect("write the request head");
    let writing = tokio::spawn(async move {
        for chunk in body.chunks(64 * 1024) {
            if writer.write_all(chunk).await.is_err() {
                return writer;
            }
        }
        let _ = writer.flush().await;
        // Keep the write half open: a half-close could end the exchange early.
        writer
    });
    let reply = tokio::time::timeout(DEADLINE, read_reply(&mut reader))
        .await
        .expect("the node answers in time (raw request)");
    writing.abort();
    reply
}

async fn read_reply(reader: &mut (impl AsyncReadExt + Unpin)) -> Reply {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(reply) = parse_reply(&buf) {
            return reply;
        }
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    parse_reply(&buf).unwrap_or_else(|| {
        // End of stream: whatever arrived is the whole answer.
        parse_head(&buf)
            .map(|(reply, at)| Reply { body: buf[at..].to_vec(), ..reply })
            .unwrap_or_else(|| panic!("no HTTP answer, received {:?}", String::from_utf8_lossy(&buf)))
    })
}

/// The answer in `buf` when it is complete by its `Content-Length`.
fn parse_reply(buf: &[u8]) -> Option<Reply> {
    let (reply, at) = parse_head(buf)?;
    let length: usize = reply.header("content-length")?.trim().parse().ok()?;
    (buf.len() >= at + length).then(|| Reply { body: buf[at..at + length].to_vec(), ..reply })
}

fn parse_head(buf: &[u8]) -> Option<(Reply, usize)> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let code: u16 = status_line.split(' ').nth(1)?.parse().ok()?;
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.append(
            HeaderName::from_bytes(name.trim().as_bytes()).ok()?,
            HeaderValue::from_str(value.trim()).ok()?,
        );
    }
    Some((Reply { status: StatusCode::from_u16(code).ok()?, headers, body: Vec::new() }, end + 4))
}

// ---------------------------------------------------------------------------
// Packets and updates

/// A real `SKILL.md`: frontmatter naming `name`, and a playbook body.
pub(crate) fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n## When to Use\n\
         When a test needs a skill called {name}.\n\n## Steps\n1. Read the failing output.\n\
         2. Apply the fix and rerun the tests.\n\n## Verification\nThe tests pass.\n"
    )
}

/// A valid packet from [`ORIGIN`]: confidence 0.9, created at [`CREATED_AT`].
pub(crate) fn packet(name: &str) -> SkillPacket {
    packet_from(ORIGIN, name, CREATED_AT)
}

/// A valid packet from `origin`, created at `created_at` (RFC 3339).
pub(crate) fn packet_from(origin: &str, name: &str, created_at: &str) -> SkillPacket {
    let origin = Origin::new(origin, "test", "linux/amd64", "5.0.0");
    let description = format!("Handle {name} in tests");
    let at = Timestamp::parse(created_at).expect("a valid RFC 3339 time");
    SkillPacket::new(&origin, name, &description, &skill_md(name, &description), 0.9, at)
        .with_tags(["testing"])
        .with_patterns(["workflow:test:it"])
}

/// A newer version of `name` from [`ORIGIN`]: another body, later `createdAt`.
pub(crate) fn newer_version(name: &str, created_at: &str, extra_line: &str) -> SkillPacket {
    let mut p = packet_from(ORIGIN, name, created_at);
    p.skill_body.push_str(extra_line);
    p.skill_body.push('\n');
    p.reseal();
    p
}

/// A tombstone for `name` from [`ORIGIN`], newer than [`CREATED_AT`].
pub(crate) fn tombstone(name: &str, created_at: &str) -> SkillPacket {
    let mut p = packet_from(ORIGIN, name, created_at);
    p.deprecated = true;
    p
}

/// An update from `peer` carrying `packets`, as JSON bytes.
pub(crate) fn update(peer: &str, packets: &[SkillPacket]) -> Vec<u8> {
    serde_json::to_vec(&update_value(peer, packets)).expect("an update encodes")
}

/// An update from `peer` carrying `packets`, as a JSON value to tamper with.
pub(crate) fn update_value(peer: &str, packets: &[SkillPacket]) -> Value {
    let update = KnowledgeUpdate {
        id: format!("{peer}-test"),
        peer_instance: peer.to_owned(),
        generated_at: Timestamp::parse(CREATED_AT).expect("valid time"),
        skills: packets.to_vec(),
        sequence_num: 1,
        ..KnowledgeUpdate::default()
    };
    serde_json::to_value(&update).expect("an update encodes")
}

/// The `skills` of a `GET /ecp/skills` answer, by `skillName`.
pub(crate) fn served_named<'a>(listing: &'a Value, name: &str) -> Option<&'a Value> {
    listing["skills"].as_array()?.iter().find(|p| p["skillName"] == name)
}

/// The `skillName`s of a `GET /ecp/skills` answer, in order.
pub(crate) fn served_names(listing: &Value) -> Vec<String> {
    listing["skills"]
        .as_array()
        .map(|a| a.iter().map(|p| p["skillName"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Signatures

/// Lowercase hex HMAC-SHA256 of `payload`, computed here with `hmac`/`sha2`
/// rather than through the node's own code.
pub(crate) fn hmac_hex(secret: &str, payload: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(payload);
    hex::encode(mac.finalize().into_bytes())
}

/// The reference vectors, `legacy-hmac-vectors.json`.
pub(crate) fn vectors() -> Value {
    serde_json::from_str(HMAC_VECTORS).expect("the vectors are JSON")
}

/// A string field of the vectors.
#[track_caller]
pub(crate) fn vector(key: &str) -> String {
    vectors()[key].as_str().unwrap_or_else(|| panic!("vector {key} is missing")).to_owned()
}

// ---------------------------------------------------------------------------
// JSON assertions

/// Asserts `actual == expected`, printing each differing path.
#[track_caller]
pub(crate) fn assert_json_eq(actual: &Value, expected: &Value) {
    let diff = json_diff(actual, expected, false);
    assert!(
        diff.is_empty(),
        "JSON differs:\n{}\n--- expected:\n{}\n--- actual:\n{}",
        diff.join("\n"),
        pretty(expected),
        pretty(actual)
    );
}

/// Asserts that `actual` contains `expected`: every member of an expected
/// object is present and includes its value; arrays match in length and
/// element by element; other values are equal (numbers within 1e-9).
#[track_caller]
pub(crate) fn assert_json_includes(actual: &Value, expected: &Value) {
    let diff = json_diff(actual, expected, true);
    assert!(
        diff.is_empty(),
        "JSON does not include the expected values:\n{}\n--- expected (subset):\n{}\n--- actual:\n{}",
        diff.join("\n"),
        pretty(expected),
        pretty(actual)
    );
}

fn pretty(v: &Value) -> String {
    const MAX: usize = 4000;
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text,
    }
}

/// The paths where `actual` and `expected` differ, one line each. With
/// `subset`, members of `actual` objects that `expected` lacks are fine.
pub(crate) fn json_diff(actual: &Value, expected: &Value, subset: bool) -> Vec<String> {
    let mut out = Vec::new();
    diff_at("$", actual, expected, subset, &mut out);
    out
}

fn diff_at(path: &str, actual: &Value, expected: &Value, subset: bool, out: &mut Vec<String>) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (key, ev) in e {
                match a.get(key) {
                    Some(av) => diff_at(&format!("{path}.{key}"), av, ev, subset, out),
                    None => out.push(format!("{path}.{key}: missing, expected {ev}")),
                }
            }
            if !subset {
                for (key, av) in a {
                    if !e.contains_key(key) {
                        out.push(format!("{path}.{key}: unexpected {av}"));
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            if a.len() != e.len() {
                out.push(format!("{path}: {} elements, expected {}", a.len(), e.len()));
            }
            for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                diff_at(&format!("{path}[{i}]"), av, ev, subset, out);
            }
        }
        (Value::Number(a), Value::Number(e)) if subset => {
            let (a, e) = (a.as_f64().unwrap_or(f64::NAN), e.as_f64().unwrap_or(f64::NAN));
            if (a - e).abs() > 1e-9 {
                out.push(format!("{path}: {a}, expected {e}"));
            }
        }
        (a, e) if a != e => out.push(format!("{path}: {a}, expected {e}")),
        _ => {}
    }
}

/// Fails with every collected failure listed, when there is any.
pub(crate) fn assert_no_failures(failures: &[String], cases: usize) {
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
}

/// The text of a local skill named `name` whose frontmatter says `confidence`
/// and whose description is "How to <name>".
pub(crate) fn local_skill_text(name: &str, confidence: f64) -> String {
    format!(
        "---\nname: {name}\ndescription: How to {name}\nconfidence: {confidence}\n---\n# {name}\n\n\
         Read the failing output, change one thing, run the tests again.\n"
    )
}

/// Adds [`local_skill_text`] to `library` as a local skill, as an operator would.
pub(crate) async fn add_local_skill(library: &ecp_node::library::Library, name: &str, confidence: f64) {
    put_local_text(library, &local_skill_text(name, confidence)).await;
}

/// Adds the SKILL.md `text` to `library` as a local skill, as an operator would.
pub(crate) async fn put_local_text(library: &ecp_node::library::Library, text: &str) {
    let (library, text) = (library.clone(), text.to_owned());
    tokio::task::spawn_blocking(move || {
        let origin = ecp_node::import::local_origin(library.store().instance_id());
        let packet = ecp_node::import::local_packet(
            &text,
            None,
            &origin,
            &ecp_protocol::skill_doc::StructureLimits::default(),
            ecp_node::store::now(),
        )
        .expect("a valid local skill")
        .0;
        library.put_local(&packet, ecp_node::store::Source::Operator).expect("stored")
    })
    .await
    .expect("no panic");
}
