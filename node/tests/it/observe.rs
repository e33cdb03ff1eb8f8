//! What an operator sees (#16 items 3 and 4), with real nodes: `/metrics`
//! read by a Prometheus text-format parser that is not ours
//! (`prometheus-parse`), guarded like `/v1/`; `ecp-node audit` on a data
//! folder, filtered and followed; `ecp-node events --follow` from a running
//! `ecp-node serve` process.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ecp_node::config::{ClientRateLimit, PeersConfig};
use ecp_node::federation::{self, Context, PeerSpec};
use prometheus_parse::{Sample, Scrape, Value as Metric};
use reqwest::StatusCode;
use serde_json::Value;

use crate::cli::{Folders, skill_md, write_skill};
use crate::util::{TestNode, packet, update};

/// Generous bound for what should take milliseconds, under a loaded machine.
const SOON: Duration = Duration::from_secs(30);

/// `GET /metrics` with the node's API token, parsed.
async fn scrape(node: &TestNode) -> Scrape {
    let reply = node.get("/metrics").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    parse(&String::from_utf8(reply.body).expect("UTF-8"))
}

fn parse(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("the Prometheus text format")
}

/// The samples of `metric` whose labels include every `(name, value)` of `labels`.
fn samples<'a>(scrape: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .collect()
}

/// The value of the one sample of `metric` with exactly `labels`' values.
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found = samples(scrape, metric, labels);
    assert_eq!(
        found.len(),
        1,
        "one {metric} {labels:?}: {found:?} in {:#?}",
        scrape.samples.iter().filter(|s| s.metric == metric).collect::<Vec<_>>()
    );
    match found[0].value {
        Metric::Counter(v) | Metric::Gauge(v) | Metric::Untyped(v) => v,
        ref other => panic!("{metric} is not a single number: {other:?}"),
    }
}

#[tokio::test]
async fn metrics_count_a_push_of_one_accepted_and_one_refused_skill_and_every_route_used() {
    let node = TestNode::start().await;
    let mut tampered = packet("tampered");
    tampered.integrity_hash = "0".repeat(64);
    let body = update("pusher", &[packet("accepted"), tampered]);
    let result = node.push_ok(&body).await;
    assert_eq!((result["newSkills"].as_u64(), result["rejectedSkills"].as_u64()), (Some(1), Some(1)));
    node.get_json("/v1/skills/accepted").await;
    // Unencoded: the client would unpack a gzipped manifest and drop its length.
    let manifest = node.get_with("/ecp/manifest", &[("accept-encoding", "identity")]).await;
    let length = manifest.header("content-length").map(|n| n.parse::<usize>().unwrap());
    assert_eq!(length, Some(manifest.body.len()), "counting the bytes out keeps Content-Length");

    let scrape = scrape(&node).await;
    let decisions: Vec<_> = samples(&scrape, "ecp_decisions_total", &[])
        .iter()
        .map(|s| (s.labels.get("decision").unwrap(), s.labels.get("stage").unwrap()))
        .collect();
    assert_eq!(decisions.len(), 2, "only the push decided anything: {decisions:?}");
    assert_eq!(value(&scrape, "ecp_decisions_total", &[("decision", "new"), ("stage", "none")]), 1.0);
    assert_eq!(
        value(&scrape, "ecp_decisions_total", &[("decision", "rejected"), ("stage", "integrity")]),
        1.0
    );

    let push = [("route", "/ecp/skills"), ("method", "POST")];
    assert_eq!(value(&scrape, "ecp_http_requests_total", &[push[0], push[1], ("status", "200")]), 1.0);
    let show = [("route", "/v1/skills/:name"), ("method", "GET"), ("status", "200")];
    assert_eq!(value(&scrape, "ecp_http_requests_total", &show), 1.0);
    assert!(
        !scrape.samples.iter().any(|s| s.labels.get("route").is_some_and(|r| r.contains("accepted"))),
        "routes are templates, never raw paths"
    );
    for route in [&push[..], &show[..2]] {
        let histogram = samples(&scrape, "ecp_http_request_duration_seconds", route);
        let Metric::Histogram(buckets) = &histogram.first().expect("a latency histogram").value else {
            panic!("not a histogram: {histogram:?}");
        };
        let all = buckets.iter().find(|b| b.less_than.is_infinite()).expect("a +Inf bucket");
        assert_eq!(all.count, 1.0, "{route:?}");
    }
    assert!(value(&scrape, "ecp_http_body_bytes_total", &[("direction", "in")]) >= body.len() as f64);
    assert!(value(&scrape, "ecp_http_body_bytes_total", &[("direction", "out")]) > 0.0);
    assert_eq!(value(&scrape, "ecp_skills", &[("kind", "received")]), 1.0);
    assert_eq!(value(&scrape, "ecp_skills", &[("kind", "own")]), 0.0);
    assert_eq!(value(&scrape, "ecp_quarantine_held", &[]), 1.0);
    assert_eq!(value(&scrape, "ecp_inbox_waiting", &[]), 0.0);
    assert_eq!(value(&scrape, "ecp_replay_cache_entries", &[]), 0.0);
    assert_eq!(value(&scrape, "ecp_rate_limited_requests_total", &[]), 0.0);
    assert_eq!(value(&scrape, "ecp_connections_refused_total", &[]), 0.0);
}

/// Every `ecp_*` series the Grafana dashboard in deploy/ queries (a
/// histogram by its name, not its `_bucket` series).
fn dashboard_series() -> Vec<String> {
    let board: Value =
        serde_json::from_str(include_str!("../../../deploy/monitoring/grafana-dashboard.json")).unwrap();
    let mut names: Vec<String> = board["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .flat_map(|t| {
            let expr = t["expr"].as_str().unwrap();
            expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("ecp_"))
                .map(|w| w.strip_suffix("_bucket").unwrap_or(w).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names.dedup();
    assert!(names.len() >= 12, "the dashboard has panels for the main series: {names:?}");
    names
}

#[tokio::test]
async fn metrics_need_the_token_even_from_loopback_and_trusted_loopback_not_when_forwarded() {
    let node = TestNode::start().await;
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    let reply = plain.get(node.url("/metrics")).send().await.unwrap();
    assert_eq!(reply.status(), StatusCode::UNAUTHORIZED);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["code"], "api_token_required");
    let wrong = plain.get(node.url("/metrics")).bearer_auth("not-the-token").send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let trusting = TestNode::start_with(|c| c.trust_loopback = true).await;
    let local = plain.get(trusting.url("/metrics")).send().await.unwrap();
    assert_eq!(local.status(), StatusCode::OK);
    let forwarded =
        plain.get(trusting.url("/metrics")).header("x-forwarded-for", "192.0.2.9").send().await.unwrap();
    assert_eq!(forwarded.status(), StatusCode::UNAUTHORIZED, "a proxied client is not local");
}

#[tokio::test]
async fn metrics_count_requests_the_rate_limit_refused() {
    let node = TestNode::start_with(|c| {
        c.client_rate_limit = ClientRateLimit { per_minute: 1, burst: 2, loopback: true };
    })
    .await;
    let statuses =
        [node.get("/livez").await.status, node.get("/livez").await.status, node.get("/livez").await.status];
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS]);
    // Read in process: a scrape over HTTP would be refused by the same limit.
    let scrape = parse(&node.library().metrics().encode());
    assert_eq!(value(&scrape, "ecp_rate_limited_requests_total", &[]), 1.0);
    let limited = [("route", "/livez"), ("method", "GET"), ("status", "429")];
    assert_eq!(value(&scrape, "ecp_http_requests_total", &limited), 1.0);
}

#[tokio::test]
async fn metrics_count_pulls_and_pushes_by_peer_and_result_and_the_last_success() {
    let a = TestNode::start().await;
    let b = TestNode::start().await;
    crate::util::add_local_skill(a.library(), "travels", 0.9).await;
    let dead = "http://127.0.0.1:9".to_owned();
    let ctx = Context::new(b.library().clone(), b.config().policy.clone(), true, Duration::from_secs(5));
    let before = chrono::Utc::now().timestamp() as f64;
    for url in [a.url(""), dead.clone()] {
        let file =
            PeersConfig::parse(&format!("[[peer]]\nurl = \"{url}\"\ntrust = 1.0\n"), "test peers").unwrap();
        let spec = PeerSpec::configured(&file, &file.peers[0]);
        let pulled = federation::pull(&ctx, &spec).await;
        let pushed = federation::push(&ctx, &spec).await;
        assert_eq!((pulled.is_ok(), pushed.is_ok()), (url != dead, url != dead), "{url}");
    }
    let scrape = scrape(&b).await;
    let a_url = a.url("");
    for metric in ["ecp_pulls_total", "ecp_pushes_total"] {
        assert_eq!(value(&scrape, metric, &[("peer", &a_url), ("result", "ok")]), 1.0, "{metric}");
        assert_eq!(value(&scrape, metric, &[("peer", &dead), ("result", "error")]), 1.0, "{metric}");
        assert!(samples(&scrape, metric, &[("peer", &a_url), ("result", "error")]).is_empty());
    }
    let last = value(&scrape, "ecp_peer_last_success_timestamp_seconds", &[("peer", &a_url)]);
    assert!(last >= before - 1.0 && last <= chrono::Utc::now().timestamp() as f64 + 1.0, "{last}");
    assert!(samples(&scrape, "ecp_peer_last_success_timestamp_seconds", &[("peer", &dead)]).is_empty());
    assert_eq!(value(&scrape, "ecp_decisions_total", &[("decision", "new"), ("stage", "none")]), 1.0);
    // Every series has samples now (the first scrape made the request
    // series): the dashboard in deploy/ queries only series the node serves.
    let again = crate::observe::scrape(&b).await;
    for name in dashboard_series() {
        assert!(
            again.docs.contains_key(&name),
            "the dashboard queries {name}, which the node does not serve"
        );
    }
}

// ---- ecp-node audit ----

/// `audit ARGS --json` on `f`: the entries printed, one JSON object a line.
fn audit_json(f: &Folders, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["audit", "--json"];
    all.extend(args);
    let out = f.run(&all);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn names(entries: &[Value]) -> Vec<&str> {
    entries.iter().map(|e| e["skillName"].as_str().unwrap()).collect()
}

#[test]
fn audit_filters_by_skill_time_and_peer_read_only() {
    let f = Folders::new();
    for name in ["alpha", "beta"] {
        write_skill(&f.skills(), name, &skill_md(name, ""));
    }
    let out = f.run(&["--init", "skill", "add", &f.skills().join("alpha").display().to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    std::thread::sleep(Duration::from_millis(50));
    let between = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    std::thread::sleep(Duration::from_millis(50));
    let out = f.run(&["skill", "add", &f.skills().join("beta").display().to_string()]);
    assert_eq!(out.code, 0, "{out:?}");

    let all = audit_json(&f, &[]);
    assert_eq!(names(&all), ["alpha", "beta"], "{all:?}");
    let alpha = audit_json(&f, &["--skill", "alpha"]);
    assert_eq!(names(&alpha), ["alpha"]);
    assert_eq!(alpha[0], all[0], "the same entry, whole");
    assert!(audit_json(&f, &["--skill", "gamma"]).is_empty());
    assert_eq!(names(&audit_json(&f, &["--since", &between])), ["beta"]);
    assert_eq!(names(&audit_json(&f, &["--since", "1h"])), ["alpha", "beta"]);
    assert!(audit_json(&f, &["--since", "2999-01-01T00:00:00Z"]).is_empty());
    assert!(audit_json(&f, &["--peer", "ecp-000000000000"]).is_empty());

    let refused = f.run(&["audit", "--since", "yesterday"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("RFC 3339"), "{refused:?}");
    let unknown = f.run(&["audit", "--peer", "http://127.0.0.1:9"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("has not reached"), "{unknown:?}");

    let text = f.run(&["audit", "--skill", "beta"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert_eq!(text.stdout.lines().count(), 1, "{text:?}");
    assert!(text.stdout.contains("operator") && text.stdout.contains("beta"), "{text:?}");

    let db = std::fs::read(f.data().join(ecp_node::store::DB_FILE)).unwrap();
    audit_json(&f, &[]);
    assert_eq!(std::fs::read(f.data().join(ecp_node::store::DB_FILE)).unwrap(), db, "audit writes nothing");
    let missing = Folders::new();
    let out = missing.run(&["audit"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!missing.data().exists(), "audit creates no data folder");
}

#[tokio::test]
async fn audit_peer_lists_exactly_the_entries_of_the_peer_at_that_url() {
    let a = TestNode::start().await;
    a.push_ok(&update("seed", &[packet("from-a")])).await;
    let f = Folders::new();
    let out = f.run_async(&["--init", "pull", &a.url("")]).await;
    assert_eq!(out.code, 0, "{out:?}");
    write_skill(&f.skills(), "mine", &skill_md("mine", ""));
    let out = f.run_async(&["skill", "add", &f.skills().join("mine").display().to_string()]).await;
    assert_eq!(out.code, 0, "{out:?}");

    let of_a = tokio::task::spawn_blocking({
        let url = a.url("");
        move || (audit_json(&f, &["--peer", &url]), audit_json(&f, &[]), f)
    })
    .await
    .unwrap();
    let (of_a, all, _f) = of_a;
    assert_eq!(names(&of_a), ["from-a"], "{of_a:?}");
    assert_eq!(of_a[0]["peer"], format!("peer:{}", a.instance_id().await));
    assert!(names(&all).contains(&"mine"), "{all:?}");
}

/// A child process printing lines: each line sent on a channel as it comes.
struct Lines {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Lines {
    fn spawn(args: &[&str]) -> Lines {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
            .args(args)
            .env_remove("ECP_DATA")
            .env_remove("ECP_SKILLS_DIR")
            .env_remove("ECP_CONFIG")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { child, lines }
    }

    /// The next printed line that mentions `text`, within [`SOON`].
    fn until(&self, text: &str) -> Value {
        let deadline = Instant::now() + SOON;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| panic!("no line with {text}: {e}"));
            if line.contains(text) {
                return serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            }
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn data_args(f: &Folders) -> Vec<String> {
    let (data, skills) = (f.data(), f.skills());
    vec!["--data".into(), data.display().to_string(), "--skills-dir".into(), skills.display().to_string()]
}

#[test]
fn audit_follow_prints_an_entry_written_after_it_started() {
    let f = Folders::new();
    write_skill(&f.skills(), "first", &skill_md("first", ""));
    write_skill(&f.skills(), "later", &skill_md("later", ""));
    let out = f.run(&["--init", "skill", "add", &f.skills().join("first").display().to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    let args = data_args(&f);
    let mut all = vec!["audit", "--follow", "--json"];
    all.extend(args.iter().map(String::as_str));
    let follow = Lines::spawn(&all);
    assert_eq!(follow.until("first")["decision"], "local-install");
    let out = f.run(&["skill", "add", &f.skills().join("later").display().to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    let entry = follow.until("later");
    assert_eq!(entry["skillName"], "later");
}

// ---- ecp-node events ----

#[test]
fn events_follow_receives_a_decision_made_after_it_connected() {
    let f = Folders::new();
    let args = data_args(&f);
    let mut serve = vec!["serve", "--listen", "127.0.0.1:0", "--no-mdns"];
    serve.extend(args.iter().map(String::as_str));
    let mut server = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(&serve)
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let url = crate::util::server_url(&f.data(), &mut server);
    let token = std::fs::read_to_string(f.data().join("api-token")).unwrap().trim().to_owned();

    let mut all = vec!["events", "--follow", "--json"];
    all.extend(args.iter().map(String::as_str));
    let events = Lines::spawn(&all);
    // Connected once the server has answered /v1/events (its headers are
    // sent after the subscription is made).
    wait_until(|| scrape_blocking(&url, &token).contains(r#"route="/v1/events""#));
    let pushed = blocking(async {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let body = update("pusher", &[packet("live")]);
        let request = client.post(format!("{url}/ecp/skills")).header("content-type", "application/json");
        request.body(body).send().await.unwrap().status()
    });
    assert_eq!(pushed, StatusCode::OK);
    let entry = events.until("live");
    assert_eq!((entry["decision"].as_str(), entry["peer"].as_str()), (Some("new"), Some("peer:pusher")));
    drop(events);
    let _ = Command::new("kill").args(["-TERM", &server.id().to_string()]).status();
    let _ = server.wait();

    let refused = f.run(&["events", "--follow"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("no server runs"), "{refused:?}");
    let without = f.run(&["events"]);
    assert!(without.stderr.contains("--follow"), "{without:?}");
}

fn scrape_blocking(url: &str, token: &str) -> String {
    blocking(async {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let answer = client.get(format!("{url}/metrics")).bearer_auth(token).send().await;
        match answer {
            Ok(response) => response.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    })
}

/// Runs `future` to its end on a runtime of its own (for tests without one).
fn blocking<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + SOON;
    while !done() {
        assert!(Instant::now() < deadline, "not in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}
