//! Outcome evidence travels (#19 item 5, SPEC §16), between real nodes:
//! a summary of outcomes goes one hop by pull and by push and is weighed
//! by the receiver's trust in the sender; one observer's claim relayed by
//! two paths counts once; a policy refuses a skill peers report failing,
//! and records why; the origin sees its skill's outcomes across the mesh
//! (`skill show --mesh`, `/v1/skills/{name}`); the stats of a push are true.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::routing::{get, post};

use ecp_node::federation::{self, Context, PeerSpec};
use serde_json::{Value, json};

use crate::outcomes::report;
use crate::util::{TestNode, add_local_skill};

/// Generous: tests run in parallel on two cores.
const SOON: Duration = Duration::from_secs(30);

/// A node whose agents' failures never retire a skill here (the evidence
/// must reach its peers while it is still shared).
async fn keeping() -> TestNode {
    TestNode::start_with(|c| c.outcomes.min_uses = 0).await
}

fn context(node: &TestNode) -> Context {
    Context::new(node.library().clone(), node.config().policy.clone(), true, SOON)
}

/// `to` pulls from `from`, trusting it `trust`.
async fn pull(to: &TestNode, from: &TestNode, trust: f64) {
    federation::pull(&context(to), &PeerSpec::manual(&from.url(""), None, trust))
        .await
        .unwrap_or_else(|e| panic!("pull: {e}"));
}

/// How `node` sees `name` fare across the mesh (`/v1/skills/{name}`'s `mesh`).
async fn mesh(node: &TestNode, name: &str) -> Value {
    node.get_json(&format!("/v1/skills/{name}")).await["mesh"].clone()
}

/// `successes` then `failures` reported on `node` for `name`.
async fn outcomes(node: &TestNode, name: &str, successes: usize, failures: usize) {
    for _ in 0..successes {
        report(node, name, "success").await;
    }
    for _ in 0..failures {
        report(node, name, "failure").await;
    }
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_summary_travels_one_hop_by_pull_and_by_push_weighed_by_trust() {
    let (a, b, c) = (keeping().await, TestNode::start().await, TestNode::start().await);
    add_local_skill(a.library(), "shaky", 0.9).await;
    outcomes(&a, "shaky", 4, 6).await;
    let observer = a.instance_id().await;

    // The served packet carries A's own count.
    let served = a.get_json("/ecp/skills").await;
    let claims = &served["skills"][0]["outcomes"];
    assert_eq!(claims.as_array().map(Vec::len), Some(1), "{served}");
    assert_eq!(
        (&claims[0]["observer"], &claims[0]["uses"], &claims[0]["successes"], &claims[0]["failures"]),
        (&json!(observer), &json!(10), &json!(4), &json!(6))
    );
    assert!(claims[0]["at"].is_string(), "{claims}");

    // Pull: B trusts A 0.9.
    pull(&b, &a, 0.9).await;
    let seen = mesh(&b, "shaky").await;
    assert_eq!(seen["claims"].as_array().map(Vec::len), Some(1), "{seen}");
    assert_eq!(
        (&seen["claims"][0]["observer"], &seen["claims"][0]["failures"]),
        (&json!(observer), &json!(6))
    );
    assert!(close(&seen["claims"][0]["trust"], 0.9), "{seen}");
    assert!(close(&seen["weighedUses"], 9.0) && close(&seen["weighedFailures"], 5.4), "{seen}");
    assert!(close(&seen["failureRate"], 0.6), "{seen}");
    // B's own score is untouched: the evidence is kept apart.
    let held = b.get_json("/v1/skills/shaky").await;
    assert_eq!(held["skill"]["score"]["uses"], 0, "{held}");
    assert!(held["packet"].get("outcomes").is_none(), "never stored with the skill: {held}");

    // Push: C has not configured A, so it trusts it the default 0.6.
    federation::push(&context(&a), &PeerSpec::manual(&c.url(""), None, 1.0)).await.expect("pushed");
    let seen = mesh(&c, "shaky").await;
    assert_eq!(seen["claims"][0]["uses"], 10, "{seen}");
    assert!(close(&seen["weighedUses"], 6.0), "{seen}");

    // Another report at A: the packet changes sequence, and the next incremental pull carries the new count.
    report(&a, "shaky", "failure").await;
    pull(&b, &a, 0.9).await;
    let seen = mesh(&b, "shaky").await;
    assert_eq!(
        (&seen["claims"][0]["uses"], &seen["claims"][0]["failures"]),
        (&json!(11), &json!(7)),
        "{seen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_observers_claim_relayed_by_two_paths_counts_once() {
    let x = keeping().await;
    let (a, b, c) = (TestNode::start().await, TestNode::start().await, TestNode::start().await);
    add_local_skill(x.library(), "relayed", 1.0).await;
    outcomes(&x, "relayed", 0, 5).await;
    pull(&a, &x, 1.0).await;
    pull(&b, &x, 1.0).await;
    // A and B relay X's claim (they hold no outcomes of their own).
    let served = a.get_json("/ecp/skills").await;
    assert_eq!(served["skills"][0]["outcomes"][0]["observer"], json!(x.instance_id().await), "{served}");
    pull(&c, &a, 0.9).await;
    pull(&c, &b, 0.8).await;
    let seen = mesh(&c, "relayed").await;
    assert_eq!((&seen["observers"], &seen["senders"]), (&json!(1), &json!(1)), "{seen}");
    assert!(close(&seen["weighedUses"], 4.5), "counted once, from the more trusted path: {seen}");
    // Pulled again, the same claims change nothing.
    pull(&c, &b, 0.8).await;
    pull(&c, &a, 0.9).await;
    assert_eq!(mesh(&c, "relayed").await, seen);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_refuses_a_skill_peers_report_failing_and_records_why() {
    let a = keeping().await;
    add_local_skill(a.library(), "broken", 0.9).await;
    add_local_skill(a.library(), "fine", 0.9).await;
    outcomes(&a, "broken", 1, 9).await;
    outcomes(&a, "fine", 9, 1).await;
    let strict = TestNode::start_with(|c| {
        c.policy.evidence =
            Some(ecp_protocol::outcomes::EvidenceRule { max_failure_rate: 0.5, min_uses: 5.0 });
    })
    .await;
    pull(&strict, &a, 0.9).await;
    let listed = strict.get_json("/v1/skills").await;
    let names: Vec<&str> =
        listed["skills"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["fine"], "{listed}");
    let held = strict.get_json("/v1/quarantine").await;
    let entries = held["quarantine"].as_array().cloned().unwrap_or_default();
    let entry = entries.iter().find(|e| e["skillName"] == "broken").unwrap_or_else(|| panic!("{held}"));
    let reason = entry["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "rejected by policy: peers report a failure rate of 0.9 over 9 uses weighed by trust"
        ),
        "{reason}"
    );
    assert_eq!(entry["stage"], "policy", "{entry}");
    // The evidence it was refused on is kept.
    let kept = strict.library().store().mesh("broken").expect("the store reads");
    assert_eq!(kept.claims.iter().map(|m| m.claim.failures).collect::<Vec<_>>(), [9]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_origin_sees_its_skill_fare_across_the_mesh() {
    let (a, b) = (TestNode::start().await, keeping().await);
    add_local_skill(a.library(), "roaming", 0.9).await;
    pull(&b, &a, 0.9).await;
    outcomes(&b, "roaming", 2, 3).await;
    pull(&a, &b, 0.7).await;
    let seen = mesh(&a, "roaming").await;
    let observer = b.instance_id().await;
    assert_eq!(
        (&seen["claims"][0]["observer"], &seen["claims"][0]["uses"]),
        (&json!(observer), &json!(5)),
        "{seen}"
    );
    // The CLI beside the running server says the same.
    let data = a.config().data_dir.to_str().expect("UTF-8 paths").to_owned();
    let shown = tokio::task::spawn_blocking(move || {
        crate::cli::ecp_node_bin(&["skill", "show", "roaming", "--mesh", "--data", &data])
    })
    .await
    .unwrap();
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(shown.stdout.contains("mesh: 1 observers from 1 senders"), "{shown:?}");
    assert!(shown.stdout.contains("failure rate 60%"), "{shown:?}");
    let row = shown.stdout.lines().find(|l| l.contains(&observer)).unwrap_or_else(|| panic!("{shown:?}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[1..5], ["5", "2", "3", "0"], "{row}");
    // Without --mesh, no section.
    let data = a.config().data_dir.to_str().expect("UTF-8 paths").to_owned();
    let plain = tokio::task::spawn_blocking(move || {
        crate::cli::ecp_node_bin(&["skill", "show", "roaming", "--data", &data])
    })
    .await
    .unwrap();
    assert!(!plain.stdout.contains("mesh:"), "{plain:?}");
}

/// A peer that only records what is pushed to it: a manifest naming it, and
/// `POST /ecp/skills` answered with an empty MergeResult. The updates it
/// received, as JSON.
async fn recording_peer() -> (String, Arc<Mutex<Vec<Value>>>) {
    let received: Arc<Mutex<Vec<Value>>> = Arc::default();
    let kept = Arc::clone(&received);
    let app = axum::Router::new()
        .route(
            "/ecp/manifest",
            get(|| async { Json(json!({ "instance": "recording-peer", "version": "1.0" })) }),
        )
        .route(
            "/ecp/skills",
            post(move |body: axum::body::Bytes| {
                let kept = Arc::clone(&kept);
                async move {
                    let update: Value = serde_json::from_slice(&body).expect("a pushed update is JSON");
                    kept.lock().unwrap().push(update);
                    Json(json!({ "newSkills": 0, "updatedSkills": 0, "unchanged": 0, "rejectedSkills": 0 }))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listens");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serves") });
    (url, received)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stats_of_a_push_and_of_the_listing_are_true_after_each_report() {
    let a = keeping().await;
    add_local_skill(a.library(), "counted", 0.9).await;
    let before = a.get_json("/ecp/skills").await["stats"].clone();
    assert_eq!(before["totalUses"], 0, "{before}");
    outcomes(&a, "counted", 2, 1).await;
    // The listing follows at once: a report is a change.
    let stats = a.get_json("/ecp/skills").await["stats"].clone();
    assert_eq!((&stats["totalUses"], &stats["totalSuccesses"]), (&json!(3), &json!(2)), "{stats}");
    let (url, received) = recording_peer().await;
    federation::push(&context(&a), &PeerSpec::manual(&url, None, 1.0)).await.expect("pushed");
    report(&a, "counted", "success").await;
    federation::push(&context(&a), &PeerSpec::manual(&url, None, 1.0)).await.expect("pushed again");
    let updates = received.lock().unwrap().clone();
    assert_eq!(updates.len(), 2, "the report is a change, pushed again: {updates:?}");
    let uses = |u: &Value| (u["stats"]["totalUses"].clone(), u["stats"]["totalSuccesses"].clone());
    assert_eq!(uses(&updates[0]), (json!(3), json!(2)), "{}", updates[0]);
    assert_eq!(uses(&updates[1]), (json!(4), json!(3)), "{}", updates[1]);
    assert_eq!(updates[1]["skills"][0]["outcomes"][0]["uses"], 4, "{}", updates[1]);
}
