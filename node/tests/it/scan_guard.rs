//! A skill the scanner panics on (#14, #12; `scan::guard`): refused alone,
//! with a reason that says so and shows nothing of the panic, the rest of
//! the push or the pulled page merged as usual. Before the guard a push
//! holding it was answered 500 and a pull round from a peer serving it
//! failed, every round. The panic is the debug build's probe
//! (`ecp_protocol::scan::PANIC_PROBE`), so these run in debug builds only.
#![cfg(debug_assertions)]

use ecp_node::federation::PullOutcome;
use ecp_protocol::scan::{PANIC_PROBE, ScanFailed};
use serde_json::{Value, json};

use crate::federation::Fed;
use crate::go_peer::{go_packet_with_body, start_go_peer};
use crate::util::{ORIGIN, TestNode, assert_no_server_path, packet, update};

/// The reason a refused probe carries.
fn refused() -> String {
    format!("rejected by safety scan: {ScanFailed}")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_push_holding_a_skill_the_scan_panics_on_merges_the_rest_and_refuses_it() {
    let node = TestNode::start().await;
    let mut probe = packet("probe-skill");
    probe.skill_body.push_str(&format!("\n{PANIC_PROBE}\n"));
    probe.reseal();
    let before = node.snapshot().await;

    let reply = node.push(&update(ORIGIN, &[packet("plain-one"), probe, packet("plain-two")])).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_no_server_path(&reply.text());
    let result = reply.json();
    assert_eq!((&result["newSkills"], &result["rejectedSkills"]), (&json!(2), &json!(1)), "{result}");
    assert_eq!(result["conflicts"], json!([format!("probe-skill: {}", refused())]));

    let after = node.snapshot().await;
    let mut names = after.skill_names();
    names.sort();
    assert_eq!(names, ["plain-one", "plain-two"], "the probe is not installed");
    assert_eq!(before.skill_names(), Vec::<String>::new());
    assert!(!after.0.to_string().contains("panicked"), "{}", after.0);
    node.assert_healthy().await;
}

/// One of a Go node's skills (`go_peer`) whose body holds the probe.
fn probing_go_packet(name: &str) -> Value {
    go_packet_with_body(name, format!("# {name}\n\nRead the failing output first.\n\n{PANIC_PROBE}\n"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pulled_page_holding_a_skill_the_scan_panics_on_merges_the_rest_round_after_round() {
    let (go_url, go) = start_go_peer(None).await;
    go.hold(probing_go_packet("go-probe"));
    let b = Fed::start().await;

    let first = b.pull_from(&go_url, "").await.expect("the round succeeds");
    assert_eq!(first.outcome, PullOutcome::Merged, "{first:?}");
    assert_eq!((first.result.new_skills, first.result.rejected_skills), (2, 1), "{first:?}");
    assert_eq!(first.result.conflicts, [format!("go-probe: {}", refused())]);
    assert!(b.skill("go-first").await.is_some() && b.skill("go-second").await.is_some());
    assert!(b.skill("go-probe").await.is_none());

    // The next round (a full one: the Go peer ignores `since`) succeeds too.
    *go.last_update.lock().unwrap() = "2026-11-21T10:00:00Z".into();
    let second = b.pull_from(&go_url, "").await.expect("the next round succeeds");
    assert_eq!((second.result.unchanged, second.result.rejected_skills), (2, 1), "{second:?}");
    let state = b.peer_state(&go_url).await;
    assert_eq!(state["failures"].as_i64().unwrap_or(0), 0, "{state}");
}
