//! Restart: a node shut down and bound again on the same data folder keeps
//! its skills, their versions, the quarantine, the sequence number and its
//! instance id — and so its ETags and `?since=` answers stay valid.

use reqwest::StatusCode;
use serde_json::json;

use crate::util::{
    ORIGIN, PUSH1, TestNode, assert_json_eq, newer_version, packet, served_names, tombstone, update,
};

/// A node holding: the reference push (one skill and refusals in
/// quarantine), a skill with two versions and a tombstone.
async fn populated_node() -> TestNode {
    let node = TestNode::start().await;
    node.push_ok(PUSH1).await;
    node.push_ok(&update(ORIGIN, &[packet("two-versions"), packet("to-withdraw")])).await;
    let v2 = newer_version("two-versions", "2026-11-21T08:00:00Z", "Then tag the release.");
    let result = node.push_ok(&update(ORIGIN, &[v2])).await;
    assert_eq!(result["updatedSkills"], 1, "{result}");
    let tombstone = tombstone("to-withdraw", "2026-11-21T09:00:00Z");
    let result = node.push_ok(&update(ORIGIN, &[tombstone])).await;
    assert_eq!(result["updatedSkills"], 1, "{result}");
    node
}

#[tokio::test(flavor = "multi_thread")]
async fn restart_keeps_skills_versions_quarantine_sequence_and_instance_id() {
    let mut node = populated_node().await;
    let before = node.snapshot().await;
    assert!(before.sequence() > 0);
    assert!(before.quarantine().len() >= 2, "the reference push leaves refusals: {:#}", before.0);
    let two = node.get_json("/v1/skills/two-versions").await;
    assert_eq!(two["versions"].as_array().map(Vec::len), Some(2), "{two:#}");
    let instance = node.instance_id().await;
    let manifest = node.get_json("/ecp/manifest").await;
    let listing = node.get_json("/ecp/skills").await;

    node.restart().await;

    before.assert_unchanged(&node.snapshot().await, "after a restart");
    assert_eq!(node.instance_id().await, instance);
    let two_after = node.get_json("/v1/skills/two-versions").await;
    assert_json_eq(&two_after, &two);
    let manifest_after = node.get_json("/ecp/manifest").await;
    for key in ["instance", "sequenceNum", "skillCount", "skillNames", "topTags"] {
        assert_eq!(manifest_after[key], manifest[key], "manifest {key} after a restart");
    }
    let listing_after = node.get_json("/ecp/skills").await;
    assert_json_eq(&listing_after["skills"], &listing["skills"]);
    assert_eq!(listing_after["peerInstance"], json!(instance));
    node.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sequence_continues_after_a_restart() {
    let mut node = populated_node().await;
    let before = node.sequence().await;
    node.restart().await;
    assert_eq!(node.sequence().await, before);
    node.push_ok(&update(ORIGIN, &[packet("after-restart")])).await;
    let after = node.sequence().await;
    assert!(after > before, "sequence {after} after a change, {before} before the restart");
    let since = node.get_json(&format!("/ecp/skills?since={before}")).await;
    assert_eq!(served_names(&since), ["after-restart"], "?since= spans the restart");
    let withdrawn = node.get_json("/ecp/skills?since=0").await;
    assert!(served_names(&withdrawn).contains(&"to-withdraw".to_owned()), "the tombstone is still served");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_etag_from_before_a_restart_still_gives_304() {
    let mut node = populated_node().await;
    let etag = node.get("/ecp/skills").await.header("etag").expect("an ETag").to_owned();
    node.restart().await;
    let reply = node.get_with("/ecp/skills", &[("if-none-match", &etag)]).await;
    assert_eq!(reply.status, StatusCode::NOT_MODIFIED, "{}", reply.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_node_still_refuses_what_it_refused_and_counts_it_again() {
    let mut node = populated_node().await;
    node.restart().await;
    let before = node.snapshot().await;
    let again = node.push_ok(PUSH1).await;
    assert_eq!(again["newSkills"], 0, "{again}");
    before.assert_skills_unchanged(&node.snapshot().await, "the reference push after a restart");
    let quarantine = node.get_json("/v1/quarantine").await;
    let tampered = quarantine["quarantine"]
        .as_array()
        .and_then(|q| q.iter().find(|e| e["skillName"] == "tampered-skill"))
        .expect("tampered-skill stays in quarantine");
    assert_eq!(tampered["timesSeen"], 2, "the same refusal is counted, not duplicated: {tampered:#}");
    assert_eq!(before.quarantine().len(), node.snapshot().await.quarantine().len());
}
