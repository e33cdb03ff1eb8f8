//! Federation between real nodes on loopback ports, each with its own data
//! folder: chains with confidence decay, a ring with push on change, dead
//! and slow peers, resuming after a restart, deletions, the
//! discovery consumer, peers-file reloads and the `pull`/`push`/`sync`/
//! `peers` commands.
//!
//! Rounds are driven with [`Federator::sync_now`] (what `ecp-node sync`
//! does) where the test is about what travels, and by the scheduler with
//! short intervals where it is about timing. Waiting is polling with a
//! deadline, never a long fixed sleep.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use ecp_node::Node;
use ecp_node::config::Config;
use ecp_node::config::PeersConfig;
use ecp_node::discovery::{DiscoveredPeer, DiscoveryEvent};
use ecp_node::federation::{self, Context, PeerSpec, PullOutcome, PullReport};
use ecp_node::store::Source;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::net::TcpListener;

use crate::cli::eventually;

/// Generous bound for anything that should take milliseconds.
const SOON: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------
// Helpers

/// A node in its own temporary folder, federating as told.
pub(crate) struct Fed {
    dir: TempDir,
    config: Config,
    node: Option<Node>,
    pub(crate) http: reqwest::Client,
}

impl Fed {
    pub(crate) async fn start() -> Fed {
        Fed::start_with(|_| {}).await
    }

    pub(crate) async fn start_with(adjust: impl FnOnce(&mut Config)) -> Fed {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut config = Config::for_tests(dir.path());
        adjust(&mut config);
        let node = Node::bind(config.clone()).await.expect("the node starts");
        let http = crate::util::v1_client(&node, SOON);
        Fed { dir, config, node: Some(node), http }
    }

    pub(crate) fn node(&self) -> &Node {
        self.node.as_ref().expect("the node runs")
    }

    pub(crate) fn url(&self) -> String {
        self.node().url()
    }

    pub(crate) fn instance(&self) -> String {
        self.node().library().store().instance_id().to_owned()
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.config.data_dir.clone()
    }

    /// Applies a peers file given as text.
    pub(crate) async fn peers(&self, toml: &str) {
        let config = PeersConfig::parse(toml, "test peers").expect("valid peers");
        self.node().federator().apply(config).await;
    }

    /// One pull from `url`, as `ecp-node sync` does it: `extra` are more
    /// keys of its `[[peer]]`. The node's own federator has no part in it.
    pub(crate) async fn pull_from(&self, url: &str, extra: &str) -> Result<PullReport, String> {
        let file = PeersConfig::parse(&peer(url, extra), "test peers").expect("valid peer");
        let spec = PeerSpec::configured(&file, &file.peers[0]);
        let ctx = Context::new(
            self.node().library().clone(),
            self.config.policy.clone(),
            self.config.reshare_external,
            Duration::from_secs(5),
        );
        federation::pull(&ctx, &spec).await.map_err(|f| f.to_string())
    }

    /// [`Fed::pull_from`], which must succeed.
    async fn pull_ok(&self, from: &Fed, extra: &str) -> PullReport {
        let url = from.url();
        self.pull_from(&url, extra).await.unwrap_or_else(|e| panic!("pull from {url}: {e}"))
    }

    async fn stop(&mut self) {
        let node = self.node.take().expect("the node runs");
        node.shutdown().await.expect("clean shutdown");
    }

    async fn restart(&mut self) {
        let node = Node::bind(self.config.clone()).await.expect("the node starts again");
        self.node = Some(node);
    }

    /// Adds a local skill whose frontmatter says `confidence`.
    pub(crate) async fn add_local(&self, name: &str, confidence: f64) {
        crate::util::add_local_skill(self.node().library(), name, confidence).await;
    }

    async fn tombstone(&self, name: &str) {
        let (library, name) = (self.node().library().clone(), name.to_owned());
        tokio::task::spawn_blocking(move || library.tombstone(&name, Source::Operator).expect("tombstoned"))
            .await
            .expect("no panic");
    }

    pub(crate) async fn get_json(&self, path: &str) -> Value {
        let response = self.http.get(format!("{}{path}", self.url())).send().await.expect("GET");
        assert_eq!(response.status(), StatusCode::OK, "GET {path}");
        response.json().await.expect("JSON")
    }

    /// `/v1/skills/{name}` when the node holds it.
    pub(crate) async fn skill(&self, name: &str) -> Option<Value> {
        let response = self.http.get(format!("{}/v1/skills/{name}", self.url())).send().await.expect("GET");
        if response.status() == StatusCode::NOT_FOUND {
            return None;
        }
        Some(response.json().await.expect("JSON"))
    }

    /// The stored confidence of `name`, once the node holds it (not deprecated).
    async fn confidence(&self, name: &str) -> Option<f64> {
        let shown = self.skill(name).await?;
        (!shown["skill"]["deprecated"].as_bool()?).then(|| shown["skill"]["confidence"].as_f64())?
    }

    async fn sequence(&self) -> i64 {
        self.get_json("/v1/status").await["sequence"].as_i64().expect("a sequence")
    }

    /// This node's view of the peer at `url`, from `/v1/peers`.
    pub(crate) async fn peer_state(&self, url: &str) -> Value {
        let peers = self.get_json("/v1/peers").await;
        peers["peers"]
            .as_array()
            .and_then(|all| all.iter().find(|p| p["url"] == url))
            .cloned()
            .unwrap_or(Value::Null)
    }
}

/// A `[[peer]]` block.
fn peer(url: &str, extra: &str) -> String {
    format!("[[peer]]\nurl = \"{url}\"\n{extra}\n")
}

/// Runs the binary with `args`, no ECP_* variables from outside.
pub(crate) fn bin(args: &[&str]) -> crate::cli::Out {
    let output = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(args)
        .env_remove("ECP_DATA")
        .env_remove("ECP_SKILLS_DIR")
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_PEERS")
        .env_remove("ECP_PEER_SECRET")
        .env("RUST_LOG", "warn")
        .output()
        .expect("the ecp-node binary runs");
    crate::cli::Out {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

async fn bin_async(args: Vec<String>) -> crate::cli::Out {
    tokio::task::spawn_blocking(move || bin(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .expect("the binary ran")
}

fn path(p: &Path) -> String {
    p.to_str().expect("UTF-8 temporary path").to_owned()
}

// ---------------------------------------------------------------------------
// Chains: decay, provenance, refusal, full trust

#[tokio::test(flavor = "multi_thread")]
async fn chain_lowers_confidence_per_hop_and_the_fourth_node_refuses() {
    let (a, b, c, d) = (Fed::start().await, Fed::start().await, Fed::start().await, Fed::start().await);
    a.add_local("chain-skill", 1.0).await;
    assert_eq!(b.pull_ok(&a, "trust = 0.6").await.result.new_skills, 1);
    assert_eq!(c.pull_ok(&b, "trust = 0.6").await.result.new_skills, 1);
    let at_d = d.pull_ok(&c, "trust = 0.6").await;
    assert_eq!((at_d.result.new_skills, at_d.result.rejected_skills), (0, 1), "{at_d:?}");
    assert_eq!(
        at_d.result.conflicts,
        ["chain-skill: rejected by policy: confidence 0.36 is below the accept threshold 0.6"]
    );

    let at_b = b.skill("chain-skill").await.expect("B holds it");
    assert_eq!(at_b["skill"]["confidence"], json!(0.6));
    assert_eq!(at_b["packet"]["provenance"]["path"], json!([a.instance()]));
    let at_c = c.skill("chain-skill").await.expect("C holds it");
    assert!((at_c["skill"]["confidence"].as_f64().unwrap() - 0.36).abs() < 1e-12, "{at_c}");
    assert_eq!(at_c["packet"]["provenance"]["path"], json!([a.instance(), b.instance()]));
    assert_eq!(at_c["packet"]["provenance"]["hops"], 2);
    assert_eq!(at_c["packet"]["originInstance"], json!(a.instance()), "the origin is kept along the chain");

    assert!(d.skill("chain-skill").await.is_none(), "D must not hold it");
    let quarantine = d.get_json("/v1/quarantine").await;
    let held = quarantine["quarantine"]
        .as_array()
        .and_then(|q| q.iter().find(|e| e["skillName"] == "chain-skill"))
        .unwrap_or_else(|| panic!("D quarantined it: {quarantine}"));
    assert_eq!(held["reason"], "rejected by policy: confidence 0.36 is below the accept threshold 0.6");
    assert_eq!(held["stage"], "policy");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_trust_1_a_skill_arrives_unlowered() {
    let (a, b) = (Fed::start().await, Fed::start().await);
    a.add_local("full-trust", 1.0).await;
    b.pull_ok(&a, "trust = 1.0").await;
    let at_b = b.skill("full-trust").await.expect("B holds it");
    assert_eq!(at_b["skill"]["confidence"], json!(1.0));
    assert_eq!(at_b["packet"]["provenance"]["originConfidence"], json!(1.0));

    // Nothing changed: the next round is one manifest request answered 304.
    let idle = b.pull_ok(&a, "trust = 1.0").await;
    assert_eq!((idle.outcome, idle.bytes, idle.packets), (PullOutcome::Unchanged, 0, 0), "{idle:?}");
}

// ---------------------------------------------------------------------------
// A ring with push on change

#[tokio::test(flavor = "multi_thread")]
async fn a_five_node_ring_with_push_on_change_converges_and_the_skill_never_returns_as_new() {
    let mut ring = Vec::new();
    for _ in 0..5 {
        ring.push(Fed::start().await);
    }
    for i in 0..5 {
        let (next, prev) = (&ring[(i + 1) % 5], &ring[(i + 4) % 5]);
        let toml = format!(
            "[federation]\ninterval = \"1h\"\n{}{}",
            peer(
                &next.url(),
                &format!("trust = 1.0\npull = false\npush = true\ninstance = \"{}\"", next.instance())
            ),
            peer(&prev.url(), &format!("trust = 1.0\npull = false\ninstance = \"{}\"", prev.instance())),
        );
        ring[i].peers(&toml).await;
    }
    let started = Instant::now();
    ring[0].add_local("ring-skill", 1.0).await;
    for (i, node) in ring.iter().enumerate().skip(1) {
        let confidence =
            eventually(&format!("node {i} holds ring-skill"), SOON, || node.confidence("ring-skill")).await;
        assert_eq!(confidence, 1.0, "trust 1.0 between neighbours keeps the confidence");
    }
    let converged = started.elapsed();

    // The last node has pushed to the origin too (nothing it would take).
    let (last, origin) = (&ring[4], &ring[0]);
    let last_seq = last.sequence().await;
    eventually("the last node's push to the origin is acknowledged", SOON, || async {
        let state = last.peer_state(&origin.url()).await;
        (state["ackedSeq"] == last_seq).then_some(())
    })
    .await;
    let at_origin = origin.skill("ring-skill").await.expect("the origin still holds it");
    assert_eq!(at_origin["skill"]["kind"], "local");
    assert_eq!(at_origin["skill"]["version"], 1, "it never came back as new or updated: {at_origin}");
    assert_eq!(origin.get_json("/v1/quarantine").await["quarantine"], json!([]));

    // Had it been sent back, the origin's merge refuses it as a loop.
    let served = last.get_json("/ecp/skills").await;
    let reply = origin.http.post(format!("{}/ecp/skills", origin.url())).json(&served).send().await.unwrap();
    let result: Value = reply.json().await.unwrap();
    assert_eq!(result["newSkills"], 0, "{result}");
    let conflicts = result["conflicts"].as_array().expect("conflicts");
    assert!(conflicts.iter().any(|c| c.as_str().unwrap().starts_with("ring-skill: loop: ")), "{result}");
    eprintln!("5-node ring converged in {converged:?}");
}

// ---------------------------------------------------------------------------
// Dead and slow peers

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_and_a_slow_peer_do_not_delay_a_live_one() {
    // Nothing listens on the discard port: a peer that refuses at once.
    let dead_url = "http://127.0.0.1:9".to_owned();
    let slow = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slow_addr = slow.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let held = Arc::clone(&accepted);
    let hold = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = slow.accept().await {
            held.fetch_add(1, Ordering::SeqCst);
            open.push(stream); // accepted, never answered
        }
    });

    let live = Fed::start().await;
    let b = Fed::start().await;
    let slow_url = format!("http://{slow_addr}");
    let applied = Instant::now();
    // A request timeout far longer than a round with the live peer takes,
    // even on a loaded machine: a round held up by the slow one shows.
    b.peers(&format!(
        "[federation]\ninterval = \"200ms\"\ntimeout = \"10s\"\n{}{}{}",
        peer(&dead_url, ""),
        peer(&slow_url, ""),
        peer(&live.url(), "trust = 1.0"),
    ))
    .await;
    eventually("the slow peer has a request hanging", SOON, || async {
        (accepted.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;

    live.add_local("arrives-anyway", 1.0).await;
    eventually("the live peer's skill arrives", SOON, || b.confidence("arrives-anyway")).await;
    let slow_state = b.peer_state(&slow_url).await;
    assert_eq!(
        slow_state["failures"], 0,
        "the skill arrived while the slow peer's first request hung: {slow_state}"
    );

    let dead_state = eventually("the dead peer's failure is recorded", SOON, || async {
        let s = b.peer_state(&dead_url).await;
        (s["failures"].as_i64() >= Some(1)).then_some(s)
    })
    .await;
    assert!(dead_state["lastError"].as_str().unwrap().starts_with("cannot connect"), "{dead_state}");
    let slow_state = eventually("the slow peer's timeout is recorded", SOON, || async {
        let s = b.peer_state(&slow_url).await;
        (s["failures"].as_i64() >= Some(1)).then_some(s)
    })
    .await;
    assert!(slow_state["lastError"].as_str().unwrap().contains("timeout"), "{slow_state}");
    // Ticks every 200 ms, but a round never overlaps the previous one: one
    // hanging request per round that timed out, plus the one in flight.
    let connections = accepted.load(Ordering::SeqCst);
    let slow_failures = b.peer_state(&slow_url).await["failures"].as_i64().unwrap();
    assert!(connections as i64 <= slow_failures + 1, "{connections} connections, {slow_failures} timeouts");
    // And failing peers back off (0.5–1 s, then 1–2 s, …) instead of failing
    // every tick: failure k comes 0.5 s · (2^(k−1) − 1) after the first at
    // the earliest, so in T seconds at most 1 + log2(2T + 1) — against five
    // a second without backoff.
    let elapsed = applied.elapsed().as_secs_f64();
    let dead_failures = b.peer_state(&dead_url).await["failures"].as_i64().unwrap();
    let most = 1 + (2.0 * elapsed + 1.0).log2().floor() as i64;
    assert!(
        dead_failures <= most,
        "{dead_failures} failures of the dead peer in {elapsed:.1} s (at most {most})"
    );
    assert_eq!(b.peer_state(&live.url()).await["failures"], 0);
    hold.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cron_scheduler_runs_second_intervals_and_cron_expressions() {
    let (a, c, b) = (Fed::start().await, Fed::start().await, Fed::start().await);
    b.peers(&format!(
        "{}{}",
        peer(&a.url(), "trust = 1.0\ncron = \"* * * * * *\""),
        peer(&c.url(), "trust = 1.0\ninterval = \"1s\"")
    ))
    .await;
    eventually("both first rounds ran", SOON, || async {
        let (sa, sc) = (b.peer_state(&a.url()).await, b.peer_state(&c.url()).await);
        (sa["lastSuccess"].is_string() && sc["lastSuccess"].is_string()).then_some(())
    })
    .await;
    a.add_local("by-cron", 1.0).await;
    c.add_local("by-interval", 1.0).await;
    // Scheduled rounds only from here on: within a few seconds at most.
    eventually("the cron peer's skill arrives", SOON, || b.confidence("by-cron")).await;
    eventually("the interval peer's skill arrives", SOON, || b.confidence("by-interval")).await;
}

// ---------------------------------------------------------------------------
// Restart: resume with ?since=

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_a_node_resumes_with_a_since_pull() {
    let a = Fed::start().await;
    for name in ["first", "second", "third"] {
        a.add_local(name, 0.9).await;
    }
    let peers_dir = tempfile::tempdir().unwrap();
    let peers_file = peers_dir.path().join("peers.toml");
    std::fs::write(&peers_file, format!("[federation]\ninterval = \"1h\"\n{}", peer(&a.url(), ""))).unwrap();
    let file = peers_file.clone();
    let mut b = Fed::start_with(move |c| c.peers_file = Some(file)).await;

    // The first round runs at start: everything, from 0.
    let first = eventually("B's first pull", SOON, || async {
        let s = b.peer_state(&a.url()).await;
        s["lastSuccess"].is_string().then_some(s)
    })
    .await;
    assert_eq!(first["packetsReceived"], 3, "{first}");
    let cursor = first["cursor"].as_i64().unwrap();
    assert_eq!(cursor, a.sequence().await);

    b.stop().await;
    a.add_local("fourth", 0.9).await;
    b.restart().await;

    let resumed = eventually("B's pull after the restart", SOON, || async {
        let s = b.peer_state(&a.url()).await;
        (s["cursor"].as_i64() > Some(cursor)).then_some(s)
    })
    .await;
    assert_eq!(resumed["packetsReceived"], 1, "only the new skill travels: {resumed}");
    assert_eq!(resumed["cursor"], a.sequence().await);
    assert!(b.confidence("fourth").await.is_some());
    assert_eq!(resumed["kind"], "configured");
}

/// #12 item 8: a backlog bigger than a page (here a one-byte budget, so a
/// page per skill) drains in one round, page after page; a larger one than
/// a round's pages goes on, from where it stopped, in the next round.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_peer_catches_up_on_a_backlog_bigger_than_a_page_and_than_a_round() {
    use ecp_node::federation::pull::MAX_PAGES_PER_ROUND;
    let a = Fed::start_with(|c| {
        c.page_bytes = 1;
        // Stored unlowered, so that B accepts them.
        c.default_trust = 1.0;
    })
    .await;
    let backlog = MAX_PAGES_PER_ROUND + 3;
    let packets: Vec<_> = (0..backlog).map(|i| crate::util::packet(&format!("backlog-{i:03}"))).collect();
    let answer = a.http.post(format!("{}/ecp/skills", a.url())).body(crate::util::update("pusher", &packets));
    assert_eq!(answer.send().await.expect("push").status(), StatusCode::OK);
    let b = Fed::start().await;

    let first = b.pull_ok(&a, "").await;
    assert_eq!(first.packets, MAX_PAGES_PER_ROUND, "one packet per page, a round's pages: {first:?}");
    assert_eq!(first.result.new_skills, MAX_PAGES_PER_ROUND as u64);
    assert!(first.cursor < a.sequence().await, "the round stopped before the end");
    assert_eq!(b.peer_state(&a.url()).await["cursor"], first.cursor, "the cursor is saved");

    let second = b.pull_ok(&a, "").await;
    assert_eq!(second.packets, 3, "the next round goes on from the cursor: {second:?}");
    assert_eq!(second.cursor, a.sequence().await);
    for i in 0..backlog {
        assert!(b.skill(&format!("backlog-{i:03}")).await.is_some(), "backlog-{i:03} arrived");
    }
    let idle = b.pull_ok(&a, "").await;
    assert_eq!(idle.packets, 0, "{idle:?}");
}

// ---------------------------------------------------------------------------
// Deletions

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_skill_ends_up_deprecated_on_every_node() {
    let (a, b, c) = (Fed::start().await, Fed::start().await, Fed::start().await);
    a.add_local("short-lived", 1.0).await;
    a.add_local("long-lived", 1.0).await;
    b.pull_ok(&a, "trust = 0.6").await;
    c.pull_ok(&b, "trust = 0.6").await;
    assert!(c.confidence("short-lived").await.is_some());

    a.tombstone("short-lived").await;
    let at_b = b.pull_ok(&a, "trust = 0.6").await;
    assert_eq!((at_b.packets, at_b.result.updated_skills), (1, 1), "only the tombstone travels: {at_b:?}");
    let at_c = c.pull_ok(&b, "trust = 0.6").await;
    assert_eq!((at_c.packets, at_c.result.updated_skills), (1, 1), "{at_c:?}");

    for (name, node) in [("A", &a), ("B", &b), ("C", &c)] {
        let record = node.skill("short-lived").await.unwrap_or_else(|| panic!("{name} lost the record"));
        assert_eq!(record["skill"]["deprecated"], true, "{name}: {record}");
        let since = node.get_json("/ecp/skills?since=0").await;
        let served = since["skills"].as_array().unwrap().iter().find(|p| p["skillName"] == "short-lived");
        assert_eq!(served.map(|p| &p["deprecated"]), Some(&json!(true)), "{name} serves the tombstone");
        assert!(node.confidence("long-lived").await.is_some(), "{name} keeps the other skill");
    }
    assert_eq!(c.skill("short-lived").await.unwrap()["skill"]["origin"], json!(a.instance()));
}

// ---------------------------------------------------------------------------
// Pushes from configured peers, discovery, reloads

#[tokio::test(flavor = "multi_thread")]
async fn a_push_from_a_configured_peer_gets_its_trust_and_others_the_default() {
    let (a, b, stranger) = (Fed::start().await, Fed::start().await, Fed::start().await);
    // B trusts A fully (A's instance learned from its manifest), nobody else.
    b.peers(&format!("[federation]\ninterval = \"1h\"\n{}", peer(&a.url(), "trust = 1.0\npull = false")))
        .await;
    eventually("B learned A's instance", SOON, || async {
        (b.peer_state(&a.url()).await["instance"] == json!(a.instance())).then_some(())
    })
    .await;
    a.peers(&format!("[federation]\ninterval = \"1h\"\n{}", peer(&b.url(), "pull = false\npush = true")))
        .await;
    stranger
        .peers(&format!("[federation]\ninterval = \"1h\"\n{}", peer(&b.url(), "pull = false\npush = true")))
        .await;
    a.add_local("from-a", 1.0).await;
    stranger.add_local("from-stranger", 1.0).await;
    assert_eq!(eventually("A's push arrives", SOON, || b.confidence("from-a")).await, 1.0);
    assert_eq!(eventually("the stranger's push arrives", SOON, || b.confidence("from-stranger")).await, 0.6);
}

#[tokio::test(flavor = "multi_thread")]
async fn discovered_nodes_become_temporary_peers_unless_configured_or_ourselves() {
    let (a, c) = (Fed::start().await, Fed::start().await);
    let (events, receiver) = tokio::sync::mpsc::channel(8);
    let dir = tempfile::tempdir().unwrap();
    let peers_file = dir.path().join("peers.toml");
    std::fs::write(
        &peers_file,
        format!("[federation]\ninterval = \"1h\"\n{}", peer(&c.url(), "trust = 1.0")),
    )
    .unwrap();
    let mut config = Config::for_tests(dir.path());
    config.peers_file = Some(peers_file);
    let b = Node::bind_with(config, Some(receiver)).await.unwrap();
    let found = |instance: String, url: String| {
        DiscoveryEvent::Found(DiscoveredPeer { instance, url, auth_required: false, tls: None })
    };
    a.add_local("found-by-mdns", 1.0).await;

    // Ourselves and a configured peer first: once A shows up, they were handled.
    events.send(found(b.library().store().instance_id().to_owned(), b.url())).await.unwrap();
    events.send(found(c.instance(), c.url())).await.unwrap();
    events.send(found(a.instance(), a.url())).await.unwrap();
    let peers = eventually("A is a discovered peer", SOON, || async {
        let peers = b.federator().active_peers().await;
        (peers.len() == 2).then_some(peers)
    })
    .await;
    let discovered = peers.iter().find(|p| p.url == a.url()).expect("A is a peer");
    assert_eq!((discovered.trust, discovered.pull, discovered.push), (0.6, true, false));
    assert_eq!(discovered.kind, ecp_node::store::PeerKind::Discovered);
    let configured = peers.iter().find(|p| p.url == c.url()).expect("C stays configured");
    assert_eq!((configured.kind, configured.trust), (ecp_node::store::PeerKind::Configured, 1.0));

    // Its skills arrive at discovery trust (its first round runs at once).
    let b_http = crate::util::v1_client(&b, SOON);
    let confidence = eventually("A's skill arrives", SOON, || async {
        let shown: Value = b_http
            .get(format!("{}/v1/skills/found-by-mdns", b.url()))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        shown["skill"]["confidence"].as_f64()
    })
    .await;
    assert_eq!(confidence, 0.6);
    let views = b.federator().views().await.unwrap();
    let a_view = views.iter().find(|v| v.state.url == a.url()).unwrap();
    assert_eq!((a_view.state.kind, a_view.active), (ecp_node::store::PeerKind::Discovered, true));

    events.send(DiscoveryEvent::Lost { instance: a.instance() }).await.unwrap();
    eventually("A is dropped when lost", SOON, || async {
        (b.federator().active_peers().await.len() == 1).then_some(())
    })
    .await;
    b.shutdown().await.unwrap();
}

/// Counts the requests a fake host receives, and those signed (ECP/1.2).
#[derive(Default)]
struct Recorder {
    requests: AtomicUsize,
    signed: AtomicUsize,
}

/// A host that records every request and answers 401, as a node requiring signatures would.
async fn start_recorder() -> (String, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let seen = Arc::clone(&recorder);
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let seen = Arc::clone(&seen);
        async move {
            seen.requests.fetch_add(1, Ordering::SeqCst);
            if headers.contains_key("x-ecp-signature") || headers.contains_key("x-ecp-hmac") {
                seen.signed.fetch_add(1, Ordering::SeqCst);
            }
            (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "sign your requests"})))
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, recorder)
}

/// #12 item 11: anyone on the network can advertise a node; one that asks
/// for signatures must not get requests signed with this node's own key.
#[tokio::test(flavor = "multi_thread")]
async fn a_discovered_node_requiring_signatures_gets_no_request_signed_with_the_node_key() {
    let (rogue_url, rogue) = start_recorder().await;
    let open = Fed::start().await;
    open.add_local("from-an-open-node", 1.0).await;
    let (events, receiver) = tokio::sync::mpsc::channel(8);
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::for_tests(dir.path());
    config.secret = Some("mesh-secret".into());
    let b = Node::bind_with(config, Some(receiver)).await.unwrap();
    let found = |instance: String, url: String, auth_required: bool| {
        DiscoveryEvent::Found(DiscoveredPeer { instance, url, auth_required, tls: None })
    };
    events.send(found("rogue".into(), rogue_url.clone(), true)).await.unwrap();
    // Events are handled in order: once the open node's skill is in, the rogue's event was handled.
    events.send(found(open.instance(), open.url(), false)).await.unwrap();
    let http = crate::util::v1_client(&b, SOON);
    eventually("the open node's skill arrives", SOON, || async {
        let answer = http.get(format!("{}/v1/skills/from-an-open-node", b.url())).send().await.ok()?;
        answer.status().is_success().then_some(())
    })
    .await;
    let peers: Vec<String> = b.federator().active_peers().await.into_iter().map(|p| p.url).collect();
    assert_eq!(peers, [open.url()], "the node requiring signatures is not a peer");
    assert_eq!(
        (rogue.requests.load(Ordering::SeqCst), rogue.signed.load(Ordering::SeqCst)),
        (0, 0),
        "no request reached the node requiring signatures"
    );
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_peers_file_is_reloaded_when_it_changes_and_a_broken_one_is_ignored() {
    let (a, c) = (Fed::start().await, Fed::start().await);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("peers.toml");
    std::fs::write(&file, format!("[federation]\ninterval = \"1h\"\n{}", peer(&a.url(), ""))).unwrap();
    let watched = file.clone();
    let b = Fed::start_with(move |config| config.peers_file = Some(watched)).await;
    let urls =
        || async { b.node().federator().active_peers().await.into_iter().map(|p| p.url).collect::<Vec<_>>() };
    assert_eq!(urls().await, [a.url()]);

    std::fs::write(
        &file,
        format!("[federation]\ninterval = \"1h\"\n{}{}", peer(&a.url(), ""), peer(&c.url(), "")),
    )
    .unwrap();
    let mut both = vec![a.url(), c.url()];
    both.sort();
    eventually("C is added", SOON, || async { (urls().await == both).then_some(()) }).await;

    // Saved whole, as an editor (or `ecp-node peers`) does: a file written in
    // place is empty for a moment, and a reload that reads it then rightly
    // drops every peer before the broken text arrives.
    let saved = dir.path().join("peers.toml.new");
    std::fs::write(&saved, "[[peer]]\nurl = \"http://x\"\ntrust = 7\n").unwrap();
    std::fs::rename(&saved, &file).unwrap();
    tokio::time::sleep(ecp_node::reload::DEBOUNCE * 10).await;
    assert_eq!(urls().await, both, "a broken file leaves the peers as they were");

    std::fs::write(&file, format!("[federation]\ninterval = \"1h\"\n{}", peer(&c.url(), ""))).unwrap();
    eventually("A is removed", SOON, || async { (urls().await == [c.url()]).then_some(()) }).await;
}

// ---------------------------------------------------------------------------
// The commands

#[tokio::test(flavor = "multi_thread")]
async fn pull_push_sync_and_peers_commands_work_beside_a_running_node() {
    let a = Fed::start_with(|c| c.secret = Some("mesh-secret".into())).await;
    a.add_local("cli-one", 1.0).await;
    let b = Fed::start().await; // runs on the data folder the commands use
    let data = path(&b.data());
    let skills = path(&b.dir.path().join("skills"));
    let common = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        all.extend(["--data".into(), data.clone(), "--skills-dir".into(), skills.clone()]);
        all
    };

    let refused = bin_async(common(&["pull", &a.url()])).await;
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("403"), "{refused:?}");

    let out = bin_async(common(&["pull", &a.url(), "--secret", "mesh-secret", "--trust", "0.9"])).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("1 packet since 0") && out.stdout.contains("new 1"), "{out:?}");
    let again = bin_async(common(&["pull", &a.url(), "--secret", "mesh-secret", "--json"])).await;
    assert_eq!(again.json()["outcome"], "unchanged", "{again:?}");
    assert_eq!(eventually("the server serves the CLI's merge", SOON, || b.confidence("cli-one")).await, 0.9);

    b.add_local("cli-two", 1.0).await;
    let pushed = bin_async(common(&["push", &a.url(), "--secret", "mesh-secret", "--json"])).await;
    let report = pushed.json();
    assert_eq!(report["names"], json!(["cli-two"]), "cli-one came from A and is not sent back: {report}");
    assert_eq!((report["sent"].as_u64(), report["echoes"].as_u64()), (Some(1), Some(1)));
    assert_eq!(report["result"]["newSkills"], 1);
    assert_eq!(a.confidence("cli-two").await, Some(0.6), "an unconfigured pusher gets the default trust");
    let nothing = bin_async(common(&["push", &a.url(), "--secret", "mesh-secret"])).await;
    assert!(nothing.stdout.contains("nothing to send"), "{nothing:?}");

    let peers_file = b.dir.path().join("peers.toml");
    std::fs::write(&peers_file, peer(&a.url(), "secret = \"mesh-secret\"\npush = true")).unwrap();
    let synced = bin_async(common(&["sync", "--peers", &path(&peers_file), "--json"])).await;
    let synced = synced.json();
    // A changed since (it took cli-two): the only packet is our own skill coming back, left out.
    let pulled = &synced["peers"][0]["pull"];
    assert_eq!((pulled["packets"].as_u64(), pulled["echoes"].as_u64()), (Some(1), Some(1)), "{synced}");
    assert_eq!(pulled["result"]["newSkills"], 0, "{synced}");
    assert_eq!(synced["peers"][0]["push"]["sent"], 0, "{synced}");

    let listed = bin_async(common(&["peers", "--json"])).await.json();
    let entry = &listed["peers"][0];
    assert_eq!(
        (entry["url"].as_str(), entry["instance"].as_str()),
        (Some(a.url().as_str()), Some(a.instance().as_str()))
    );
    assert_eq!(entry["cursor"], a.sequence().await);
    assert_eq!(entry["failures"], 0, "the 403 was followed by successes: {entry}");
    assert!(entry["lastSuccess"].is_string() && entry["lastPush"].is_string(), "{entry}");
    let table = bin_async(common(&["peers"])).await;
    assert!(table.stdout.starts_with("URL") && table.stdout.contains(&a.instance()), "{table:?}");
    let served = b.get_json("/v1/peers").await;
    assert_eq!(served["peers"][0]["cursor"], entry["cursor"], "/v1/peers shows the same state");
}

#[test]
fn serve_refuses_a_peers_file_with_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("peers.toml");
    std::fs::write(&file, "[[peer]]\nurl = \"http://127.0.0.1:9\"\ntrust = 1.5\n").unwrap();
    let out = bin(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        &path(&dir.path().join("d")),
        "--peers",
        &path(&file),
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("peer[0].trust") && out.stderr.contains("1.5"), "{out:?}");
}
