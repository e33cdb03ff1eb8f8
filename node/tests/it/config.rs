//! Every key of `node.toml` takes effect (#23 item 4): for each row of the
//! key table, a real node is started from a `node.toml` holding that key
//! and the effect is observed through the node (its address, folders, HTTP
//! answers, store, a peer's pull) — mostly against a node without the key,
//! so the check could fail. Three keys whose effect is a time
//! (`request_timeout`, `header_read_timeout`) or multicast (`mdns`) are
//! observed through the resolved configuration `ecp-node config show --json`
//! prints instead; each says why.
//!
//! The precedence, `config show`, the schema and the README's table are
//! tested in `config_show.rs`; the shared toolbox is `config_setup.rs`.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use ecp_node::config::KEYS;
use reqwest::Method;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config_setup::{FileSetup, node_with, plain, shown_from_file, status_of, toml_path};
use crate::hostile_clients::body_reserved_from;
use crate::signed_auth::{DEFAULT, SECRET, nonce, now, send, signed_for};
use crate::util::{
    ORIGIN, TestNode, hmac_hex, newer_version, packet, packet_from, post_update, skill_md, update,
};

/// What an observation found wrong.
type Outcome = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// Names `GET /ecp/skills` serves.
async fn served(node: &TestNode) -> Vec<String> {
    crate::util::served_names(&node.get_json("/ecp/skills").await)
}

/// A packet from [`ORIGIN`] whose body is `size` bytes or more.
fn packet_of_size(name: &str, size: usize) -> ecp_protocol::SkillPacket {
    let mut p = packet(name);
    while p.skill_body.len() < size {
        p.skill_body.push_str("Check the output once more before the next step.\n");
    }
    p.reseal();
    p
}

/// A packet the default policy refuses (confidence 0.1): it is quarantined.
fn refused(name: &str) -> ecp_protocol::SkillPacket {
    let mut p = packet(name);
    p.confidence = 0.1;
    p.reseal();
    p
}

/// A packet from [`ORIGIN`] whose frontmatter carries `extra` (YAML lines).
fn packet_with_frontmatter(name: &str, extra: &str) -> ecp_protocol::SkillPacket {
    let mut p = packet(name);
    p.skill_body = p.skill_body.replacen("---\n", &format!("---\n{extra}"), 1);
    p.reseal();
    p
}

/// The skill file `name` once the node has written it into its folder.
async fn projected(setup: &FileSetup, name: &str) -> String {
    let file = setup.path("skills").join(name).join("SKILL.md");
    crate::cli::eventually("the projected file", Duration::from_secs(30), || {
        let file = file.clone();
        async move { std::fs::read_to_string(file).ok() }
    })
    .await
}

/// Whether the node closes a second connection from this address while a
/// first one is held open.
async fn second_connection_closed(node: &TestNode) -> bool {
    let mut first = TcpStream::connect(node.addr()).await.expect("connect");
    first.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\n").await.expect("half a head");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut second = TcpStream::connect(node.addr()).await.expect("connect");
    let _ = second.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    let mut buf = Vec::new();
    // Long enough for an answer on a loaded machine; a refused connection is closed at once.
    let read = tokio::time::timeout(Duration::from_secs(30), second.read_to_end(&mut buf)).await;
    drop(first);
    !matches!(read, Ok(Ok(_)) if buf.starts_with(b"HTTP/1.1 200"))
}

/// Removes `names` from the node's folder while it is down (a watcher
/// running meanwhile could import the removals one by one, each under the
/// limits), then starts it again: its first import sees them all at once.
/// Whether a deletion is held then.
async fn deletion_held_after_removing(setup: &FileSetup, node: &mut TestNode, names: &[String]) -> bool {
    node.restart_after(|| {
        for name in names {
            std::fs::remove_dir_all(setup.path("skills").join(name)).expect("remove a skill folder");
        }
    })
    .await;
    !node.get_json("/v1/deletions").await["deletions"].as_array().unwrap().is_empty()
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("bulk-{i}")).collect()
}

type Observation = Pin<Box<dyn Future<Output = Outcome>>>;

/// The observation of one key: set in a `node.toml`, seen on a real node.
/// A key without an arm fails the test, so every new key needs one.
fn observe(key: &str) -> Observation {
    let key = key.to_owned();
    Box::pin(async move {
        match key.as_str() {
            "listen" => {
                let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
                let (_s, node) = node_with("", format!("listen = \"127.0.0.1:{port}\"")).await;
                ensure!(node.addr().port() == port, "listens on {}", node.addr());
            }
            "data" => {
                let setup = FileSetup::new();
                let elsewhere = setup.path("elsewhere");
                let _node = setup.start(&[("", format!("data = {}", toml_path(&elsewhere)))]).await;
                ensure!(elsewhere.join(ecp_node::store::DB_FILE).is_file(), "no store in the data folder");
                ensure!(!setup.path("data").exists(), "the default data folder was made");
            }
            "secret" | "secret_file" | "secret_env" => {
                let setup = FileSetup::new();
                std::fs::write(setup.path("secret"), "from-a-file\n").unwrap();
                let line = match key.as_str() {
                    "secret" => "secret = \"config-test-secret\"".to_owned(),
                    "secret_file" => format!("secret_file = {}", toml_path(&setup.path("secret"))),
                    // Tests may not set variables; PATH is set wherever they run.
                    _ => "secret_env = \"PATH\"".to_owned(),
                };
                let node = setup.start(&[("", line)]).await;
                let status = status_of(&plain(), node.url("/ecp/skills")).await;
                ensure!(status == 401 || status == 403, "an unsigned GET got {status}");
            }
            "accept_legacy" => {
                let body = update("peer-x", &[packet("legacy-signed")]);
                let signature = hmac_hex("mesh-secret", &body);
                let (_s, node) =
                    node_with("", "secret = \"mesh-secret\"\naccept_legacy = false".into()).await;
                let refused = post_update(&node, body.clone(), Some(&signature)).await.status;
                let (_t, open) = node_with("", "secret = \"mesh-secret\"".into()).await;
                let accepted = post_update(&open, body, Some(&signature)).await.status;
                ensure!(refused != 200 && accepted == 200, "legacy push: {refused} with, {accepted} without");
            }
            "replay_cache_capacity" => {
                // Three signed requests: the third finds the memory full.
                let third = |line: &'static str| async move {
                    let (_s, node) = node_with("", format!("secret = \"{SECRET}\"\n{line}")).await;
                    let mut status = 0;
                    for _ in 0..3 {
                        let headers =
                            signed_for(&node.host(), DEFAULT, "GET", "/ecp/manifest", b"", now(), &nonce());
                        status =
                            send(&node, Method::GET, "/ecp/manifest", &headers, None).await.status.as_u16();
                    }
                    status
                };
                let (full, default) = (third("replay_cache_capacity = 2").await, third("").await);
                ensure!(
                    full == 503 && default == 200,
                    "the third signed request: {full}, by default {default}"
                );
            }
            "skills_dir" => {
                let setup = FileSetup::new();
                crate::cli::write_skill(&setup.path("agent"), "from-agent", &skill_md("from-agent", "x"));
                let node =
                    setup.start(&[("", format!("skills_dir = {}", toml_path(&setup.path("agent"))))]).await;
                ensure!(
                    served(&node).await.contains(&"from-agent".to_owned()),
                    "the agent's skill is not served"
                );
            }
            "peers" => {
                let setup = FileSetup::new();
                std::fs::write(setup.path("peers.toml"), "[[peer]]\nurl = \"http://127.0.0.1:9\"\n").unwrap();
                let node =
                    setup.start(&[("", format!("peers = {}", toml_path(&setup.path("peers.toml"))))]).await;
                let peers = node.federator().peers_config().peers.len();
                ensure!(peers == 1, "{peers} configured peers");
            }
            // mDNS on sends multicast beyond 127.0.0.0/8, which tests must
            // not; discovery.rs runs it in a private network namespace.
            "mdns" => return shown_from_file("", "mdns = true", "mdns", true.into()),
            // Its effect (the client a balancer names counts) is hub.rs's
            // the_per_sender_limit_counts_the_client_a_trusted_balancer_names_and_no_other.
            "trusted_proxy" => {
                return shown_from_file(
                    "",
                    "trusted_proxy = [\"10.0.0.5\"]",
                    "trusted_proxy",
                    serde_json::json!(["10.0.0.5"]),
                );
            }
            // The real binary given a hub's database in the file serves as a
            // replica of it: here a database nothing answers for (tests start
            // PostgreSQL only where it is installed: hub.rs), so it stops,
            // naming --store and not the URL's password.
            "store" => {
                let setup = FileSetup::new();
                let file =
                    setup.write(&[("", "store = \"postgres://ecp:hunter2@127.0.0.1:1/none\"".to_owned())]);
                let output = serve_until_it_stops(&setup, &file);
                let stderr = String::from_utf8_lossy(&output.stderr);
                ensure!(!output.status.success(), "serve with an unreachable store started");
                ensure!(stderr.contains("cannot use the hub's database (--store)"), "{stderr}");
                ensure!(!stderr.contains("hunter2"), "the password is shown: {stderr}");
            }
            // Its effect (a replica given the file serves its key, which never
            // reaches the database) is hub_review.rs's; here the real binary
            // reads the file named in node.toml before it connects: a file
            // without a key stops it, the file named and its content not shown.
            "hub_key_file" => {
                let setup = FileSetup::new();
                std::fs::write(setup.path("hub.key"), "not-a-key-hunter3\n").unwrap();
                let file = setup.write(&[(
                    "",
                    format!(
                        "store = \"postgres://ecp@127.0.0.1:1/none\"\nhub_key_file = {}",
                        toml_path(&setup.path("hub.key"))
                    ),
                )]);
                let output = serve_until_it_stops(&setup, &file);
                let stderr = String::from_utf8_lossy(&output.stderr);
                ensure!(!output.status.success(), "serve with a key file holding no key started");
                ensure!(
                    stderr.contains("cannot use the hub's key file") && stderr.contains("hub.key"),
                    "{stderr}"
                );
                ensure!(!stderr.contains("hunter3"), "the file's content is shown: {stderr}");
            }
            "server.health_listen" => {
                let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
                let (_s, node) = node_with("server", format!("health_listen = \"127.0.0.1:{port}\"")).await;
                let status = status_of(&plain(), format!("http://127.0.0.1:{port}/livez")).await;
                ensure!(
                    node.health_addr().map(|a| a.port()) == Some(port) && status == 200,
                    "livez: {status}"
                );
            }
            "server.names" => {
                // A request signed for the name clients reach the node by.
                let for_name = |names: &'static str| async move {
                    let setup = FileSetup::new();
                    let node = setup
                        .start(&[("", format!("secret = \"{SECRET}\"")), ("server", names.into())])
                        .await;
                    let headers = signed_for(
                        "node.example:7327",
                        DEFAULT,
                        "GET",
                        "/ecp/manifest",
                        b"",
                        now(),
                        &nonce(),
                    );
                    send(&node, Method::GET, "/ecp/manifest", &headers, None).await.status.as_u16()
                };
                let (named, default) =
                    (for_name("names = [\"Node.Example\"]").await, for_name("names = []").await);
                ensure!(
                    named == 200 && default == 401,
                    "signed for node.example: {named}, by default {default}"
                );
            }
            "server.trust_loopback" => {
                let (_s, node) = node_with("server", "trust_loopback = true".into()).await;
                let (_t, default) = node_with("server", "names = []".into()).await;
                let trusted = status_of(&plain(), node.url("/v1/status")).await;
                let untrusted = status_of(&plain(), default.url("/v1/status")).await;
                ensure!(
                    trusted == 200 && untrusted == 401,
                    "/v1/status without the token: {trusted}, {untrusted}"
                );
            }
            "sharing.mode" | "sharing.skills" => {
                let setup = FileSetup::new();
                setup.skills(&["kept-home", "shared-one"]);
                let node =
                    setup.start(&[("sharing", "mode = \"listed\"\nskills = [\"shared-one\"]".into())]).await;
                let names = served(&node).await;
                ensure!(names == ["shared-one"], "served {names:?}");
            }
            "limits.max_body_bytes" => {
                let (_s, node) = node_with("limits", "max_body_bytes = 2048".into()).await;
                let at = post_update(&node, vec![b' '; 2048], None).await.status;
                let past = post_update(&node, vec![b' '; 2049], None).await.status;
                ensure!(at != 413 && past == 413, "2048 bytes: {at}, 2049: {past}");
            }
            "limits.body_bytes_in_flight" => {
                // Two uploads of 1 KiB held half-sent from two addresses fill
                // a budget of 2 KiB: the next push waits, then gets 503.
                let next_push = |line: &'static str| async move {
                    let (_s, node) = node_with("limits", format!("max_body_bytes = 1024\n{line}")).await;
                    let mut held = Vec::new();
                    for source in ["127.0.0.2", "127.0.0.3"] {
                        held.push(body_reserved_from(source.parse().unwrap(), node.addr(), 1024).await);
                    }
                    node.push(br#"{"peerInstance":"tester","skills":[]}"#).await.status.as_u16()
                };
                let (full, default) = (next_push("body_bytes_in_flight = 2048").await, next_push("").await);
                ensure!(full == 503 && default == 200, "the next push: {full}, by default {default}");
            }
            "limits.max_packets" => {
                let (_s, node) = node_with("limits", "max_packets = 2".into()).await;
                let at = node.push(&update("p", &[packet("a-1"), packet("a-2")])).await.status;
                let past =
                    node.push(&update("p", &[packet("b-1"), packet("b-2"), packet("b-3")])).await.status;
                ensure!(at == 200 && past == 413, "2 packets: {at}, 3: {past}");
            }
            "limits.max_skill_bytes" => {
                let (_s, node) = node_with("limits", "max_skill_bytes = 3000".into()).await;
                node.push_ok(&update("p", &[packet_of_size("big-one", 3100), packet("small-one")])).await;
                let names = served(&node).await;
                ensure!(names == ["small-one"], "served {names:?}");
            }
            "limits.max_description_bytes" => {
                let (_s, node) = node_with("limits", "max_description_bytes = 1100".into()).await;
                let long = |name: &str, len: usize| {
                    let origin = ecp_protocol::packet::Origin::new(
                        crate::util::ORIGIN,
                        "test",
                        "linux/amd64",
                        "5.0.0",
                    );
                    let description = "d".repeat(len);
                    let body = crate::util::skill_md(name, &description);
                    let at = ecp_protocol::Timestamp::parse(crate::util::CREATED_AT).expect("a valid time");
                    ecp_protocol::SkillPacket::new(&origin, name, &description, &body, 0.9, at)
                };
                node.push_ok(&update("p", &[long("at-limit", 1100), long("past-limit", 1101)])).await;
                let names = served(&node).await;
                ensure!(names == ["at-limit"], "served {names:?}");
            }
            "limits.page_bytes" => {
                let (_s, node) = node_with("limits", "page_bytes = 1".into()).await;
                node.push_ok(&update("p", &[packet("page-1"), packet("page-2")])).await;
                let page = node.get_json("/ecp/skills?since=0&limit=10").await;
                let n = page["skills"].as_array().map_or(0, Vec::len);
                ensure!(n == 1, "a page of one byte carried {n} packets");
            }
            // Their effect is a time; tests assert no timings.
            "limits.request_timeout" => {
                return shown_from_file(
                    "limits",
                    "request_timeout = \"7s\"",
                    "limits.request_timeout",
                    "7s".into(),
                );
            }
            "limits.header_read_timeout" => {
                return shown_from_file(
                    "limits",
                    "header_read_timeout = \"3s\"",
                    "limits.header_read_timeout",
                    "3s".into(),
                );
            }
            "limits.origin_limit_hour" | "limits.origin_limit_day" => {
                let name = key.trim_start_matches("limits.");
                let (_s, node) = node_with("limits", format!("{name} = 1")).await;
                let at = node.push(&update("p", &[packet("o-1")])).await.status;
                let past = node.push(&update("p", &[packet("o-2")])).await.status;
                ensure!(at == 200 && past == 429, "first: {at}, second: {past}");
            }
            "limits.sender_limit_hour" | "limits.sender_limit_day" => {
                let name = key.trim_start_matches("limits.");
                let (_s, node) = node_with("limits", format!("{name} = 1")).await;
                let at =
                    node.push(&update("p", &[packet_from("origin-a", "s-1", crate::util::CREATED_AT)])).await;
                let past =
                    node.push(&update("p", &[packet_from("origin-b", "s-2", crate::util::CREATED_AT)])).await;
                ensure!(
                    at.status == 200 && past.status == 429,
                    "first: {}, second: {}",
                    at.status,
                    past.status
                );
            }
            "limits.quarantine_entries" | "limits.quarantine_bytes" => {
                let name = key.trim_start_matches("limits.");
                let (_s, node) = node_with("limits", format!("{name} = 1")).await;
                node.push_ok(&update("p", &[refused("q-1"), refused("q-2")])).await;
                let held = node.snapshot().await.quarantine().len();
                ensure!(held < 2, "{held} entries held");
            }
            "limits.quarantine_body_bytes" => {
                let (_s, node) = node_with("limits", "quarantine_body_bytes = 100".into()).await;
                node.push_ok(&update("p", &[refused("q-1")])).await;
                let entry = node.snapshot().await.quarantine()[0]["id"].as_i64().unwrap();
                let shown = node.get_json(&format!("/v1/quarantine/{entry}")).await;
                ensure!(shown["packet"].is_null(), "kept whole: {shown}");
            }
            "limits.history_depth" => {
                let (_s, node) = node_with("limits", "history_depth = 0".into()).await;
                node.push_ok(&update("p", &[packet("h")])).await;
                node.push_ok(&update("p", &[newer_version("h", "2026-11-21T10:00:00Z", "More.")])).await;
                let versions =
                    node.get_json("/v1/skills/h").await["versions"].as_array().map_or(99, Vec::len);
                // The current version and none superseded (the default keeps 10).
                ensure!(versions == 1, "{versions} versions kept");
            }
            "limits.client_rate_limit" => {
                // Off (0) with a burst of 1: three requests pass, where one a
                // minute with that burst refuses the second. (Not the default
                // rate: ten a second refills the bucket between two requests
                // of a loaded machine.)
                let statuses = |rate: &'static str| async move {
                    let line = format!("{rate}client_burst = 1\nclient_rate_limit_loopback = true");
                    let (_s, node) = node_with("limits", line).await;
                    let mut got = Vec::new();
                    for _ in 0..3 {
                        got.push(status_of(&plain(), node.url("/ecp/manifest")).await);
                    }
                    got
                };
                let (off, slow) =
                    (statuses("client_rate_limit = 0\n").await, statuses("client_rate_limit = 1\n").await);
                ensure!(off == [200; 3] && slow[1] == 429, "with no limit: {off:?}; one a minute: {slow:?}");
            }
            "limits.client_burst" | "limits.client_rate_limit_loopback" => {
                let setup = FileSetup::new();
                let node = setup
                    // One a minute: no refill between the three requests.
                    .start(&[(
                        "limits",
                        "client_burst = 2\nclient_rate_limit = 1\nclient_rate_limit_loopback = true".into(),
                    )])
                    .await;
                let mut got = Vec::new();
                for _ in 0..3 {
                    got.push(status_of(&plain(), node.url("/ecp/manifest")).await);
                }
                ensure!(got == [200, 200, 429], "three requests: {got:?}");
            }
            "limits.max_connections" | "limits.max_connections_per_address" => {
                let name = key.trim_start_matches("limits.");
                let (_s, node) = node_with("limits", format!("{name} = 1")).await;
                let (_t, default) = node_with("limits", "history_depth = 10".into()).await;
                ensure!(second_connection_closed(&node).await, "a second connection was served");
                ensure!(!second_connection_closed(&default).await, "the default refused a second connection");
            }
            "limits.max_bulk_delete" => {
                let setup = FileSetup::new();
                let all = names(2);
                setup.skills(&all.iter().map(String::as_str).collect::<Vec<_>>());
                let mut node = setup.start(&[("limits", "max_bulk_delete = 1".into())]).await;
                ensure!(
                    deletion_held_after_removing(&setup, &mut node, &all).await,
                    "2 of 2 removed: not held"
                );
            }
            "limits.max_bulk_delete_fraction" => {
                // 6 of 7 is over the default count (5) and share (0.5): held
                // by default, not under 0.9.
                let setup = FileSetup::new();
                let all = names(7);
                setup.skills(&all.iter().map(String::as_str).collect::<Vec<_>>());
                let mut node = setup.start(&[("limits", "max_bulk_delete_fraction = 0.9".into())]).await;
                ensure!(
                    !deletion_held_after_removing(&setup, &mut node, &all[..6]).await,
                    "6 of 7 removed: held"
                );
            }
            "policy.min_confidence" => {
                let (_s, node) = node_with("policy", "min_confidence = 0.95".into()).await;
                node.push_ok(&update("p", &[packet("unsure")])).await;
                ensure!(served(&node).await.is_empty(), "a 0.9 packet was installed");
            }
            "policy.require_origin_signature" => {
                // Off (the default) the same unsigned packet is installed: see
                // policy.default_trust below.
                let (_s, node) = node_with("policy", "require_origin_signature = true".into()).await;
                let reply = node.push_ok(&update("p", &[packet("unsigned")])).await;
                ensure!(served(&node).await.is_empty(), "an unsigned packet was installed");
                ensure!(reply.to_string().contains("require_origin_signature"), "reason not named: {reply}");
            }
            "policy.max_reported_failure_rate" | "policy.min_reported_uses" => {
                // The pusher is trusted the default 0.6: 10 failing uses weigh 6.
                let min = if key.ends_with("min_reported_uses") { 7 } else { 5 };
                let line = format!("max_reported_failure_rate = 0.5\nmin_reported_uses = {min}");
                let (_s, node) = node_with("policy", line).await;
                let mut failing = packet("failing");
                failing.outcomes = vec![ecp_protocol::OutcomeClaim {
                    observer: "p".into(),
                    uses: 10,
                    successes: 0,
                    failures: 10,
                    streak: 0,
                    at: ecp_node::store::now(),
                }];
                let reply = node.push_ok(&update("p", &[failing])).await;
                let installed = !served(&node).await.is_empty();
                ensure!(
                    installed == (min == 7),
                    "installed: {installed} with min_reported_uses {min}: {reply}"
                );
                ensure!(
                    installed || reply.to_string().contains("peers report a failure rate of 1 over 6 uses"),
                    "reason not named: {reply}"
                );
            }
            "policy.default_trust" => {
                let (_s, node) = node_with("policy", "default_trust = 0.5".into()).await;
                node.push_ok(&update("p", &[packet("trusted-half")])).await;
                let listing = node.get_json("/ecp/skills").await;
                let confidence =
                    crate::util::served_named(&listing, "trusted-half").map(|p| p["confidence"].clone());
                ensure!(confidence == Some(0.45.into()), "confidence {confidence:?}, not 0.9 × 0.5");
            }
            "policy.allow_origins" | "policy.deny_origins" => {
                let line = if key.ends_with("allow_origins") {
                    "allow_origins = [\"someone-else\"]".to_owned()
                } else {
                    format!("deny_origins = [\"{ORIGIN}\"]")
                };
                let (_s, node) = node_with("policy", line).await;
                node.push_ok(&update("p", &[packet("from-alice")])).await;
                ensure!(served(&node).await.is_empty(), "a packet of {ORIGIN} was installed");
            }
            "policy.reshare_external" => {
                let (_s, node) = node_with("policy", "reshare_external = false".into()).await;
                node.push_ok(&update("p", &[packet("received")])).await;
                let stored = node.snapshot().await.skill_names();
                ensure!(
                    stored == ["received"] && served(&node).await.is_empty(),
                    "stored {stored:?}, re-served"
                );
            }
            "policy.accept_full_url_hmac" => {
                // A GET signed over the full URL, as the Go client signs it.
                let get = |node: &TestNode| {
                    let url = node.url("/ecp/skills");
                    let signature = hmac_hex("mesh-secret", url.as_bytes());
                    plain().get(url).header("x-ecp-hmac", signature).send()
                };
                let setup = FileSetup::new();
                let secret = ("", "secret = \"mesh-secret\"".to_owned());
                let node = setup.start(&[secret, ("policy", "accept_full_url_hmac = false".into())]).await;
                let (_t, default) = node_with("", "secret = \"mesh-secret\"".into()).await;
                let refused = get(&node).await.map(|r| r.status().as_u16()).unwrap_or(0);
                let accepted = get(&default).await.map(|r| r.status().as_u16()).unwrap_or(0);
                ensure!(
                    refused == 403 && accepted == 200,
                    "full-URL signature: {refused}, by default {accepted}"
                );
            }
            "policy.intake" => {
                let (setup, node) = node_with("policy", "intake = \"review\"".into()).await;
                node.push_ok(&update("p", &[packet("waits")])).await;
                let inbox = node.get_json("/v1/inbox").await["inbox"].as_array().map_or(0, Vec::len);
                let written = setup.path("skills").join("waits").exists();
                ensure!(inbox == 1 && !written, "inbox {inbox}, written {written}");
            }
            "policy.received_permissions" => {
                let (_s, node) = node_with("policy", "received_permissions = \"refuse\"".into()).await;
                node.push_ok(&update("p", &[packet_with_frontmatter("granting", "allowed-tools: Bash\n")]))
                    .await;
                let snapshot = node.snapshot().await;
                let held = snapshot.quarantine().len();
                ensure!(held == 1 && !snapshot.skill_names().contains(&"granting".to_owned()), "held {held}");
            }
            "policy.permission_keys" => {
                let (setup, node) = node_with("policy", "permission_keys = [\"model\"]".into()).await;
                node.push_ok(&update("p", &[packet_with_frontmatter("picky", "model: opus\n")])).await;
                let text = projected(&setup, "picky").await;
                ensure!(!text.contains("model:"), "the grant stayed: {text}");
            }
            "policy.permissions_trust" => {
                // The skill's origin is a configured peer trusted 0.8: enough
                // under 0.75, not under the default 0.9.
                let kept = |trust: &'static str| async move {
                    let setup = FileSetup::new();
                    let peers = format!(
                        "[[peer]]\nurl = \"http://127.0.0.1:9\"\ninstance = \"{ORIGIN}\"\ntrust = 0.8\n"
                    );
                    std::fs::write(setup.path("peers.toml"), peers).unwrap();
                    let policy =
                        format!("received_permissions = \"keep-from-trusted\"\npermissions_trust = {trust}");
                    let peers_line = format!("peers = {}", toml_path(&setup.path("peers.toml")));
                    let node = setup.start(&[("", peers_line), ("policy", policy)]).await;
                    node.push_ok(&update(
                        "p",
                        &[packet_with_frontmatter("granted", "allowed-tools: Bash\n")],
                    ))
                    .await;
                    projected(&setup, "granted").await.contains("allowed-tools: Bash")
                };
                let (under, default) = (kept("0.75").await, kept("0.9").await);
                ensure!(under && !default, "kept at 0.75: {under}; at 0.9: {default}");
            }
            "log.format" => tokio::task::spawn_blocking(crate::logs::observe_format_from_node_toml)
                .await
                .map_err(|e| e.to_string())??,
            "tls.cert" | "tls.key" => {
                let pki = crate::tls::Pki::new();
                let line = format!(
                    "cert = {}\nkey = {}",
                    toml_path(&pki.path("server.pem")),
                    toml_path(&pki.path("server.key"))
                );
                let (_s, node) = node_with("tls", line).await;
                ensure!(node.url("/").starts_with("https://"), "serves {}", node.url("/"));
            }
            "tls.client_ca" => {
                let pki = crate::tls::Pki::new();
                let line = format!(
                    "cert = {}\nkey = {}\nclient_ca = {}",
                    toml_path(&pki.path("server.pem")),
                    toml_path(&pki.path("server.key")),
                    toml_path(&pki.path("ca.pem"))
                );
                let (_s, node) = node_with("tls", line).await;
                let ca = reqwest::Certificate::from_pem(&std::fs::read(pki.path("ca.pem")).unwrap()).unwrap();
                let client = reqwest::Client::builder().no_proxy().add_root_certificate(ca).build().unwrap();
                let status = status_of(&client, node.url("/livez")).await;
                ensure!(status == 0, "a client without a certificate got {status}");
            }
            "tls.client_cert" | "tls.client_key" => {
                // B pulls from A, which asks every client for a certificate.
                let pki = crate::tls::Pki::new();
                let pem = |name: &str| toml_path(&pki.path(name));
                let a_tls = format!(
                    "cert = {}\nkey = {}\nclient_ca = {}",
                    pem("node.pem"),
                    pem("node.key"),
                    pem("ca.pem")
                );
                let (_a, a) = node_with("tls", a_tls).await;
                crate::util::add_local_skill(a.library(), "from-a", 1.0).await;
                let pulled = |client_tls: Option<String>| {
                    let a_url = a.url("");
                    let ca = pem("ca.pem");
                    async move {
                        let setup = FileSetup::new();
                        let peers = format!(
                            "[federation]\ninterval = \"1h\"\n[[peer]]\nurl = \"{}\"\nca = {ca}\n",
                            a_url.trim_end_matches('/')
                        );
                        std::fs::write(setup.path("peers.toml"), peers).unwrap();
                        let mut entries =
                            vec![("", format!("peers = {}", toml_path(&setup.path("peers.toml"))))];
                        entries.extend(client_tls.map(|lines| ("tls", lines)));
                        let b = setup.start(&entries).await;
                        b.federator().sync_now().await;
                        b.snapshot().await.skill_names().contains(&"from-a".to_owned())
                    }
                };
                let with = pulled(Some(format!(
                    "client_cert = {}\nclient_key = {}",
                    pem("client.pem"),
                    pem("client.key")
                )))
                .await;
                let without = pulled(None).await;
                ensure!(with && !without, "pulled with the certificate: {with}; without: {without}");
            }
            "limits.bundle_max_files" | "limits.bundle_max_bytes" => {
                // SKILL.md and a file of 20 bytes: over one file, and over 30 bytes per bundle.
                let line =
                    if key.ends_with("files") { "bundle_max_files = 1" } else { "bundle_max_bytes = 30" };
                let (_s, node) = node_with("limits", line.into()).await;
                let files: &[(&str, &[u8], bool)] = &[("a.md", b"twenty bytes of text", false)];
                let bundle = crate::bundles::bundle_of(packet("two-files"), files);
                let result = node.push_ok(&update("p", &[bundle])).await;
                let conflict = result["conflicts"][0].as_str().unwrap_or_default().to_owned();
                let expected = if key.ends_with("files") {
                    "lists 2 files, over the limit of 1"
                } else {
                    "of 30 per bundle"
                };
                ensure!(conflict.contains(expected), "{conflict}");
            }
            "limits.bundle_max_file_bytes" | "limits.blob_quota_bytes" | "limits.blob_store_bytes" => {
                let name = key.trim_start_matches("limits.");
                let (_s, node) = node_with("limits", format!("{name} = 4")).await;
                let (status, _) = crate::bundles::put_blob(
                    &node, b"5 b
!",
                )
                .await;
                let want = if name == "bundle_max_file_bytes" { 413 } else { 507 };
                ensure!(status.as_u16() == want, "a 5-byte blob got {status}");
            }
            "limits.blob_grace" => {
                let (_s, node) = node_with("limits", "blob_grace = \"1s\"".into()).await;
                crate::bundles::put_blob(&node, b"waiting for its packet\n").await;
                crate::cli::eventually(
                    "an unused blob collected after 1 s",
                    Duration::from_secs(30),
                    || async {
                        node.library().store().blob_usage().is_ok_and(|u| u.blobs == 0).then_some(())
                    },
                )
                .await;
            }
            "outcomes.retire_failure_rate" | "outcomes.retire_min_uses" | "outcomes.retire_window" => {
                // Six successes, then four failures: by default (half of at
                // least 5 of the last 10) not retired. Retired with a lower
                // line, with 4 uses enough (after the fourth failure), or
                // with a window of the last 5.
                let line = match key.as_str() {
                    "outcomes.retire_failure_rate" => "retire_failure_rate = 0.4",
                    "outcomes.retire_min_uses" => "retire_min_uses = 4\nretire_failure_rate = 1.0",
                    _ => "retire_window = 5",
                };
                let (_s, node) = node_with("outcomes", line.into()).await;
                crate::util::add_local_skill(node.library(), "tried", 0.8).await;
                let outcomes = if key == "outcomes.retire_min_uses" {
                    ["failure"; 4].to_vec()
                } else {
                    [["success"; 6].as_slice(), ["failure"; 4].as_slice()].concat()
                };
                let mut retired = false;
                for outcome in outcomes {
                    retired |= crate::outcomes::report(&node, "tried", outcome).await["retired"] == true;
                }
                ensure!(retired, "not retired with {line}");
            }
            "proposals.per_hour" => {
                // One proposal an hour: the second of one sender is 429.
                let (_s, node) = node_with("proposals", "per_hour = 1".into()).await;
                let base = crate::util::packet("proposed");
                node.push_ok(&update("p", std::slice::from_ref(&base))).await;
                let statuses: Vec<u16> = {
                    let mut statuses = Vec::new();
                    for n in 1..=2 {
                        let body = proposal_of(&base, n);
                        let reply = node
                            .request(
                                reqwest::Method::POST,
                                "/ecp/proposals",
                                &[("content-type", "application/json")],
                                Some(body),
                            )
                            .await;
                        statuses.push(reply.status.as_u16());
                    }
                    statuses
                };
                ensure!(statuses == [202, 429], "{statuses:?}");
            }
            "proposals.poll_interval" => {
                // A relayed proposal no peer leads on from is undeliverable;
                // a peer of its origin's instance added later is tried within
                // the interval (that peer refuses it: it is not on its route).
                let (_s, node) = node_with("proposals", "poll_interval = \"200ms\"".into()).await;
                let (_o, other) = node_with("", String::new()).await;
                let base = crate::util::packet("relayed");
                node.push_ok(&update("p", std::slice::from_ref(&base))).await;
                let reply = node
                    .request(
                        reqwest::Method::POST,
                        "/ecp/proposals",
                        &[("content-type", "application/json")],
                        Some(proposal_of(&base, 1)),
                    )
                    .await;
                ensure!(reply.status.as_u16() == 202, "{}", reply.text());
                let peers = format!(
                    "[federation]\ninterval = \"1h\"\n[[peer]]\nurl = \"{}\"\ninstance = \"{}\"\n",
                    other.url("").trim_end_matches('/'),
                    base.origin_instance
                );
                node.federator().apply(ecp_node::config::PeersConfig::parse(&peers, "peers").unwrap()).await;
                crate::cli::eventually(
                    "the proposal tried again within the interval",
                    Duration::from_secs(20),
                    || async {
                        let all = node.get_json("/v1/proposals").await;
                        (all["proposals"][0]["state"] == "refused").then_some(())
                    },
                )
                .await;
            }
            "sharing.eligible" | "sharing.proven_streak" | "sharing.proven_confidence" => {
                // A new local skill at 0.8: shared at once by default; held
                // back when proven; shared after one success with a streak
                // of 1; shared at once when 0.5 is proven enough.
                let line = match key.as_str() {
                    "sharing.eligible" => "eligible = \"proven\"",
                    "sharing.proven_streak" => "eligible = \"proven\"\nproven_streak = 1",
                    _ => "eligible = \"proven\"\nproven_confidence = 0.5",
                };
                let (_s, node) = node_with("sharing", line.into()).await;
                crate::util::add_local_skill(node.library(), "new-one", 0.8).await;
                if key == "sharing.proven_streak" {
                    crate::outcomes::report(&node, "new-one", "success").await;
                }
                let manifest = node.get_json("/ecp/manifest").await;
                let shared = manifest["skillNames"].as_array().is_some_and(|n| n.contains(&"new-one".into()));
                ensure!(shared == (key != "sharing.eligible"), "shared: {shared} with {line}");
            }
            other => return Err(format!("no observation of {other}: add one to config.rs")),
        }
        Ok(())
    })
}

/// A proposal (`SPEC.md` §17) of an edit `n` of `base`, by another instance.
fn proposal_of(base: &ecp_protocol::SkillPacket, n: usize) -> Vec<u8> {
    let origin = ecp_protocol::Origin::new("proposer", "someone", "linux/amd64", "1.0");
    let body = format!("{}\nEdit {n}.\n", base.skill_body);
    let packet = ecp_protocol::SkillPacket::new(
        &origin,
        &base.skill_name,
        &base.skill_description,
        &body,
        0.8,
        base.created_at,
    );
    let derived_from = ecp_protocol::proposal::DerivedFrom {
        origin: base.origin_instance.clone(),
        name: base.skill_name.clone(),
        integrity_hash: base.integrity_hash.clone(),
    };
    let proposal =
        ecp_protocol::proposal::Proposal { peer_instance: "proposer".into(), derived_from, packet };
    serde_json::to_vec(&proposal).expect("a proposal encodes")
}

#[test]
fn every_key_of_node_toml_takes_effect_on_a_real_node() {
    // `observe` is one large future (an arm per key): polled on the test
    // thread's 2 MiB stack a debug build overflowed it once the keys grew.
    let run = || {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async {
            let mut failures = Vec::new();
            for key in KEYS {
                if let Err(e) = Box::pin(observe(&key.id())).await {
                    failures.push(format!("{}: {e}", key.id()));
                }
            }
            failures
        })
    };
    let failures = std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(run)
        .expect("a thread")
        .join()
        .expect("the keys were observed");
    crate::util::assert_no_failures(&failures, KEYS.len());
}

/// Runs the real `ecp-node serve` with node.toml `file` and the data folder
/// of `setup`, environment cleared, until it exits (these cases stop it at
/// start), and returns what it printed and how it ended.
fn serve_until_it_stops(setup: &FileSetup, file: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--config", file.to_str().unwrap(), "--no-mdns", "--listen", "127.0.0.1:0"])
        .args(["--data", setup.path("data").to_str().unwrap()])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}
