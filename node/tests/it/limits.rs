//! Per-origin limits on new skills and the per-client request rate, on real
//! nodes: an excess push gets 429 with `Retry-After` and the store stays
//! exactly as it was; a pull installs what fits and holds the rest back
//! without losing it; the counts survive a restart. Limits are set low
//! rather than waited for: nothing here depends on timing.

use std::time::Duration;

use ecp_node::config::ClientRateLimit;
use ecp_node::federation::{self, Context, PeerSpec, SyncError};
use ecp_node::store::{OriginLimits, QuarantineCaps};
use ecp_protocol::SkillPacket;
use serde_json::{Value, json};

use crate::util::{
    CREATED_AT, ORIGIN, Reply, TestNode, newer_version, packet, packet_from, raw_exchange, update,
};

/// A node whose origins may each bring `per_hour` and `per_day` new skills (0: no limit).
async fn node_with_origin_limits(per_hour: u64, per_day: u64) -> TestNode {
    TestNode::start_with(|c| c.origin_limits = OriginLimits { per_hour, per_day }).await
}

fn packets(origin: &str, names: &[&str]) -> Vec<SkillPacket> {
    names.iter().map(|n| packet_from(origin, n, CREATED_AT)).collect()
}

/// A packet the default policy refuses (confidence under 0.6): it would be quarantined.
fn refused_packet(origin: &str, name: &str) -> SkillPacket {
    let mut p = packet_from(origin, name, CREATED_AT);
    p.confidence = 0.5;
    p
}

/// Everything a client can see of the store: the snapshot plus every audit line.
async fn store_state(node: &TestNode) -> (crate::util::Snapshot, Value) {
    (node.snapshot().await, node.get_json("/v1/audit?limit=10000").await)
}

#[track_caller]
fn assert_store_unchanged(before: &(crate::util::Snapshot, Value), after: &(crate::util::Snapshot, Value)) {
    before.0.assert_unchanged(&after.0, "after a refused update");
    assert_eq!(before.1, after.1, "the audit log changed");
}

/// Asserts a 429 `code` with a `Retry-After` of 1 to `max` seconds; returns the message.
#[track_caller]
fn assert_429(reply: &Reply, code: &str, max: u64) -> String {
    let body = reply.assert_error(429, code);
    let retry = reply.header("retry-after").unwrap_or_else(|| panic!("no Retry-After: {}", reply.text()));
    let seconds: u64 = retry.parse().unwrap_or_else(|_| panic!("Retry-After {retry:?} is not whole seconds"));
    assert!((1..=max).contains(&seconds), "Retry-After {seconds} is not within 1..={max}");
    body["error"].as_str().expect("a message").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_origin_over_its_hourly_limit_gets_429_with_retry_after_and_nothing_is_applied() {
    let node = node_with_origin_limits(3, 0).await;
    let first = node.push_ok(&update(ORIGIN, &packets(ORIGIN, &["one", "two"]))).await;
    assert_eq!(first["newSkills"], 2, "{first}");
    let before = store_state(&node).await;

    // Two more would make four: refused whole, the packet to quarantine included.
    let mut over = packets(ORIGIN, &["three", "four"]);
    over.push(refused_packet(ORIGIN, "low"));
    let reply = node.push(&update(ORIGIN, &over)).await;
    let message = assert_429(&reply, "origin_rate_limited", 3_600);
    for part in
        ["\"alice-laptop\"", "limit of 3 new or updated skills per hour", "2 installed", "brings 2 more"]
    {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
    assert_store_unchanged(&before, &store_state(&node).await);

    // What fits is accepted: unchanged packets never count, an update does (it keeps a version).
    let mut fits = packets(ORIGIN, &["one"]);
    fits.push(newer_version("two", "2026-11-21T10:00:00Z", "A second version."));
    let result = node.push_ok(&update(ORIGIN, &fits)).await;
    assert_eq!(
        (result["newSkills"].as_u64(), result["updatedSkills"].as_u64(), result["unchanged"].as_u64()),
        (Some(0), Some(1), Some(1)),
        "{result}"
    );
    // At the limit: one past it is refused, a new skill or an update alike (#12 item 4).
    let full = node.push(&update(ORIGIN, &packets(ORIGIN, &["five"]))).await;
    assert_429(&full, "origin_rate_limited", 3_600);
    let update_over =
        node.push(&update(ORIGIN, &[newer_version("one", "2026-11-21T11:00:00Z", "Again.")])).await;
    let message = assert_429(&update_over, "origin_rate_limited", 3_600);
    assert!(message.contains("3 installed in the last hour, this update brings 1 more"), "{message}");
    node.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_origin_over_its_daily_limit_gets_429_naming_the_day() {
    let node = node_with_origin_limits(0, 2).await;
    node.push_ok(&update(ORIGIN, &packets(ORIGIN, &["one", "two"]))).await;
    let before = store_state(&node).await;
    let reply = node.push(&update(ORIGIN, &packets(ORIGIN, &["three"]))).await;
    let message = assert_429(&reply, "origin_rate_limited", 86_400);
    assert!(message.contains("limit of 2 new or updated skills per day"), "{message}");
    assert_store_unchanged(&before, &store_state(&node).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_origin_over_its_limit_refuses_the_whole_update_of_several_origins() {
    let node = node_with_origin_limits(2, 0).await;
    let before = store_state(&node).await;
    let mut mixed = packets("bob-desktop", &["from-bob"]);
    mixed.extend(packets("carol-vm", &["c1", "c2", "c3"]));
    mixed.extend(packets(ORIGIN, &["from-alice"]));
    let reply = node.push(&update("relay", &mixed)).await;
    let message = assert_429(&reply, "origin_rate_limited", 3_600);
    assert!(message.contains("\"carol-vm\"") && !message.contains("bob-desktop"), "{message}");
    // Carol's three can never fit under 2: the answer says to split, and to wait a whole window.
    assert!(message.contains("this update alone brings 3"), "{message}");
    assert_eq!(reply.header("retry-after"), Some("3600"));
    assert_store_unchanged(&before, &store_state(&node).await);

    // Without carol's third, everything fits.
    let result = node.push_ok(&update("relay", &mixed[..3])).await;
    assert_eq!(result["newSkills"], 3, "{result}");
    let result = node.push_ok(&update("relay", &mixed[4..])).await;
    assert_eq!(result["newSkills"], 1, "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_count_of_an_origin_survives_a_restart() {
    let mut node = node_with_origin_limits(2, 0).await;
    node.push_ok(&update(ORIGIN, &packets(ORIGIN, &["one", "two"]))).await;
    node.restart().await;
    let before = store_state(&node).await;
    let reply = node.push(&update(ORIGIN, &packets(ORIGIN, &["three"]))).await;
    assert_429(&reply, "origin_rate_limited", 3_600);
    assert_store_unchanged(&before, &store_state(&node).await);
    // Another origin has its own count.
    node.push_ok(&update(ORIGIN, &packets("bob-desktop", &["three"]))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_installs_what_fits_holds_the_rest_back_and_fetches_it_when_there_is_room() {
    // The source keeps the pushed confidence (trust 1), so the sink's policy accepts it.
    let source = TestNode::start_with(|c| c.default_trust = 1.0).await;
    let mut names: Vec<String> = (1..=5).map(|i| format!("alice-{i}")).collect();
    let mut sent = packets(ORIGIN, &names.iter().map(String::as_str).collect::<Vec<_>>());
    sent.extend(packets("bob-desktop", &["from-bob"]));
    assert_eq!(source.push_ok(&update("relay", &sent)).await["newSkills"], 6);

    let mut sink = node_with_origin_limits(3, 0).await;
    let url = source.url("");
    let pull = |sink: &TestNode| {
        let ctx =
            Context::new(sink.library().clone(), sink.config().policy.clone(), true, Duration::from_secs(10));
        let spec = PeerSpec::manual(&url, None, 1.0);
        async move { federation::pull(&ctx, &spec).await }
    };
    let failure = pull(&sink).await.expect_err("two of alice's are over the limit");
    let SyncError::OriginLimit(held) = &failure.error else { panic!("not an origin limit: {failure}") };
    assert_eq!((held.merged.new_skills, held.merged.rejected_skills), (4, 0), "{failure}");
    let message = failure.to_string();
    for part in
        ["origin limit: ", "\"alice-laptop\" brought 5 installs", "limit of 3 per hour", ": 2 held back"]
    {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
    let store = sink.library().store();
    let held_names: Vec<String> = store.list_skills().unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(
        held_names,
        ["alice-1", "alice-2", "alice-3", "from-bob"],
        "the first three of alice's, and bob's"
    );
    assert!(store.quarantine().unwrap().is_empty(), "held back is not refused: nothing is quarantined");
    let state = store.peer_state(&url).unwrap().expect("the peer's state is recorded");
    assert_eq!((state.cursor, state.failures), (0, 1), "the cursor stays for the next round");
    assert!(state.last_error.starts_with("origin limit: "), "{}", state.last_error);
    let audit = store.audit(10).unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a.decision == "origin-limit" && a.reason.starts_with("2 of 5 installs held back")),
        "{audit:?}"
    );

    // Still full: the next round holds the same two back and installs nothing new.
    let again = pull(&sink).await.expect_err("still over the limit");
    assert!(matches!(&again.error, SyncError::OriginLimit(h) if h.merged.new_skills == 0), "{again}");

    // With room (here: a higher limit), the next round fetches them: nothing was lost.
    sink.restart_with(|c| c.origin_limits.per_hour = 10).await;
    let report = pull(&sink).await.expect("everything fits now");
    assert_eq!((report.result.new_skills, report.result.unchanged), (2, 4), "{report:?}");
    assert_eq!(report.cursor, source.sequence().await);
    let store = sink.library().store();
    names.push("from-bob".into());
    assert_eq!(store.list_skills().unwrap().into_iter().map(|s| s.name).collect::<Vec<_>>(), names);
    let state = store.peer_state(&url).unwrap().unwrap();
    assert_eq!((state.failures, state.last_error.as_str()), (0, ""));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_over_its_request_rate_gets_429_before_anything_is_applied() {
    let node = TestNode::start_with(|c| {
        c.client_rate_limit = ClientRateLimit { per_minute: 1, burst: 3, loopback: true };
    })
    .await;
    let store = node.library().store();
    let before =
        (store.sequence().unwrap(), store.list_skills().unwrap().len(), store.audit(100).unwrap().len());

    assert_eq!(node.get("/healthz").await.status, 200);
    assert_eq!(node.get("/ecp/manifest").await.status, 200);
    assert_eq!(node.get("/no/such/path").await.status, 404, "every endpoint counts, unknown ones too");
    let reply = node.push(&update(ORIGIN, &[packet("too-soon")])).await;
    let message = assert_429(&reply, "rate_limited", 60);
    assert!(message.contains("1 per minute") && message.contains("bursts of 3"), "{message}");
    // Refused before the body is read: a body that never comes does not delay the answer.
    let head = format!(
        "POST /ecp/skills HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        node.host()
    );
    let unread = raw_exchange(node.addr(), head.as_bytes(), Vec::new()).await;
    assert_429(&unread, "rate_limited", 60);
    for path in ["/v1/status", "/ecp/skills"] {
        assert_429(&node.get(path).await, "rate_limited", 60);
    }

    let after =
        (store.sequence().unwrap(), store.list_skills().unwrap().len(), store.audit(100).unwrap().len());
    assert_eq!(before, after, "nothing of a rate-limited request is applied");
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_clients_are_not_rate_limited_by_default() {
    let node = TestNode::start_with(|c| c.client_rate_limit.burst = 2).await;
    assert!(!node.config().client_rate_limit.loopback);
    for _ in 0..10 {
        assert_eq!(node.get("/healthz").await.status, 200);
    }
    let status = node.get_json("/v1/status").await;
    assert_eq!(status["sequence"], json!(0));
}

/// Issue #12 item 9: rotating `originInstance` (and `peerInstance`) does not
/// lift the limit: new skills are also counted per verified sender, here the
/// client address of an unsigned push.
#[tokio::test(flavor = "multi_thread")]
async fn a_sender_rotating_origins_is_held_to_its_own_limit() {
    let node = TestNode::start_with(|c| c.sender_limits = OriginLimits { per_hour: 3, per_day: 0 }).await;
    for i in 0..3 {
        let origin = format!("rotated-{i}");
        let result = node.push_ok(&update(&origin, &packets(&origin, &[&format!("skill-{i}")]))).await;
        assert_eq!(result["newSkills"], 1, "at the limit: {result}");
    }
    let before = store_state(&node).await;
    let reply = node.push(&update("rotated-3", &packets("rotated-3", &["skill-3"]))).await;
    let message = assert_429(&reply, "origin_rate_limited", 3_600);
    for part in ["sender \"addr:127.0.0.1\"", "limit of 3 new skills per hour", "3 installed"] {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
    assert_store_unchanged(&before, &store_state(&node).await);
    // Updates of held skills and refusals are still taken from it.
    let result = node.push_ok(&update("rotated-4", &[refused_packet("rotated-4", "low")])).await;
    assert_eq!(result["rejectedSkills"], 1, "{result}");
}

/// Issue #12 item 5: a push of refused packets over the quarantine's cap
/// evicts the pusher's own entries only, never those a pulled peer left
/// awaiting review; the eviction is audited.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_refusals_flushes_only_the_flooders_share_of_the_quarantine() {
    // The source accepts low confidence, which the sink refuses on its pull.
    let source = TestNode::start_with(|c| {
        c.default_trust = 1.0;
        c.policy.min_confidence = 0.1;
    })
    .await;
    let low: Vec<SkillPacket> = (0..3).map(|i| refused_packet(ORIGIN, &format!("pulled-{i}"))).collect();
    assert_eq!(source.push_ok(&update("relay", &low)).await["newSkills"], 3);
    let sink =
        TestNode::start_with(|c| c.quarantine = QuarantineCaps { entries: 6, ..QuarantineCaps::DEFAULT })
            .await;
    let ctx =
        Context::new(sink.library().clone(), sink.config().policy.clone(), true, Duration::from_secs(10));
    federation::pull(&ctx, &PeerSpec::manual(&source.url(""), None, 1.0)).await.expect("a pull");
    let held = |sink: &TestNode| -> Vec<String> {
        sink.library().store().quarantine().unwrap().into_iter().map(|e| e.skill_name).collect()
    };
    assert_eq!(held(&sink), ["pulled-0", "pulled-1", "pulled-2"]);

    let flood: Vec<SkillPacket> = (0..10).map(|i| refused_packet("flooder", &format!("flood-{i}"))).collect();
    let result = sink.push_ok(&update("flooder", &flood)).await;
    assert_eq!(result["rejectedSkills"], 10, "{result}");
    assert_eq!(
        held(&sink),
        ["pulled-0", "pulled-1", "pulled-2", "flood-7", "flood-8", "flood-9"],
        "the flooder keeps its newest three, its share of six"
    );
    let audit = sink.library().store().audit(1).unwrap();
    assert_eq!(audit[0].decision, "quarantine-evicted");
    assert!(audit[0].reason.starts_with("7 held entries of addr:127.0.0.1 "), "{audit:?}");
}
