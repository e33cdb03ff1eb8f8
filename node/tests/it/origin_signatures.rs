//! Origin signatures across real nodes (#21 items 1–3, `SPEC.md` §13): a
//! skill signed by its origin is verified as the origin's however it
//! travels; an impostor, another key or a stripped signature is refused
//! with stage `signature`; pinned and first-seen keys are recorded and shown.

use ecp_protocol::identity::NodeKey;
use ecp_protocol::{KnowledgeUpdate, Origin, SkillPacket, Timestamp};
use serde_json::{Value, json};

use crate::federation::Fed;
use crate::go_peer::start_go_relay;

/// A packet of `origin` named `name`, signed by `key` when there is one.
fn packet(origin: &str, name: &str, created: &str, key: Option<&NodeKey>) -> SkillPacket {
    let body = format!(
        "---\nname: {name}\ndescription: How to {name}\n---\n# {name}\n\n## Steps\n1. Run `git` status and read it.\n"
    );
    let at = Timestamp::parse(created).unwrap();
    let mut p = SkillPacket::new(
        &Origin::new(origin, "u", "linux/amd64", "1"),
        name,
        &format!("How to {name}"),
        &body,
        0.9,
        at,
    );
    if let Some(key) = key {
        p.origin_signature = Some(key.sign(&p, origin));
    }
    p
}

/// Pushes `skills` to `node` as an unconfigured sender; the MergeResult.
async fn push(node: &Fed, skills: Vec<SkillPacket>) -> Value {
    let update = KnowledgeUpdate { peer_instance: "pusher".into(), skills, ..KnowledgeUpdate::default() };
    let reply = node.http.post(format!("{}/ecp/skills", node.url())).json(&update).send().await.unwrap();
    assert!(reply.status().is_success(), "{}", reply.status());
    reply.json().await.unwrap()
}

fn conflict<'a>(result: &'a Value, name: &str) -> &'a str {
    result["conflicts"]
        .as_array()
        .and_then(|c| c.iter().filter_map(Value::as_str).find(|line| line.starts_with(&format!("{name}: "))))
        .unwrap_or_else(|| panic!("no conflicts line for {name}: {result}"))
}

async fn known_key(node: &Fed, instance: &str) -> Option<Value> {
    let keys = node.get_json("/v1/origin-keys").await;
    keys["originKeys"].as_array().unwrap().iter().find(|k| k["instance"] == instance).cloned()
}

async fn quarantine_stages(node: &Fed) -> Vec<String> {
    let q = node.get_json("/v1/quarantine").await;
    q["quarantine"].as_array().unwrap().iter().map(|e| e["stage"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_signed_by_a_crosses_b_and_a_relay_that_rewrites_its_origin_and_is_as_at_c() {
    let (a, b, c) = (Fed::start().await, Fed::start().await, Fed::start().await);
    assert!(ecp_protocol::identity::is_key_id(&a.instance()), "a new node's instance id is its key id");
    let manifest = a.get_json("/ecp/manifest").await;
    assert_eq!(manifest["keyId"], json!(a.instance()));
    assert_eq!(
        ecp_protocol::identity::key_id_of(manifest["publicKey"].as_str().unwrap()).as_deref(),
        Some(a.instance().as_str())
    );
    a.add_local("bisect-signed", 1.0).await;
    b.pull_from(&a.url(), "trust = 1.0").await.expect("B pulls A");
    let at_b = known_key(&b, &a.instance()).await.expect("B knows A's key");
    assert_eq!(at_b["source"], "manifest", "learned from A's own manifest: {at_b}");

    let (relay_url, relay) = start_go_relay().await;
    relay.pull_from(&b.url()).await;
    let report = c.pull_from(&relay_url, "trust = 1.0").await.expect("C pulls the relay");
    assert_eq!(report.result.rejected_skills, 0, "{report:?}");

    let held = c.skill("bisect-signed").await.expect("C holds A's skill");
    assert_eq!(held["skill"]["origin"], json!(a.instance()), "the signature names the origin: {held}");
    assert_eq!(held["skill"]["originKey"], json!(a.instance()));
    assert_eq!(held["skill"]["originVerified"], true);
    assert!(held["packet"]["originSignature"].is_object(), "forwarded unchanged: {held}");
    // The relay's own skills stay claimed and unverified.
    assert_eq!(c.skill("go-first").await.unwrap()["skill"]["originKey"], Value::Null);

    let first = known_key(&c, &a.instance()).await.expect("C recorded A's key");
    assert_eq!(
        (first["source"].as_str(), first["keyId"].as_str()),
        (Some("first-use"), Some(a.instance().as_str()))
    );

    let data = c.data().to_str().unwrap().to_owned();
    let shown = tokio::task::spawn_blocking(move || {
        crate::cli::ecp_node_bin(&["skill", "show", "bisect-signed", "--data", &data])
    })
    .await
    .unwrap();
    assert!(shown.stdout.contains("origin verified (signed by key"), "{}{}", shown.stdout, shown.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_impostor_claiming_a_key_id_instance_is_refused_signed_or_not() {
    let (a, c) = (Fed::start().await, Fed::start().await);
    let impostor = NodeKey::from_seed(&[9; 32]);
    let claimed = a.instance();
    let result = push(
        &c,
        vec![
            packet(&claimed, "forged-signed", "2026-11-20T10:00:00Z", Some(&impostor)),
            packet(&claimed, "forged-unsigned", "2026-11-20T10:00:00Z", None),
        ],
    )
    .await;
    assert_eq!(
        (result["newSkills"].as_i64(), result["rejectedSkills"].as_i64()),
        (Some(0), Some(2)),
        "{result}"
    );
    assert!(conflict(&result, "forged-signed").contains("origin signature failed: the origin"), "{result}");
    assert!(conflict(&result, "forged-unsigned").contains("origin signature missing:"), "{result}");
    assert_eq!(quarantine_stages(&c).await, ["signature", "signature"], "recorded with their stage");
    assert!(c.skill("forged-signed").await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_key_decides_and_a_first_seen_key_is_recorded_and_holds() {
    let c = Fed::start().await;
    let (alice, bob, other) =
        (NodeKey::from_seed(&[1; 32]), NodeKey::from_seed(&[2; 32]), NodeKey::from_seed(&[3; 32]));
    // Pinned, written in lower case without dashes: read as the key id.
    let pin = alice.key_id().to_lowercase().replace('-', "");
    c.peers(&format!("[origin_keys]\n\"alice-laptop\" = \"{pin}\"\n")).await;
    let pinned = known_key(&c, "alice-laptop").await.expect("the pin is recorded");
    assert_eq!(
        (pinned["source"].as_str(), pinned["keyId"].as_str()),
        (Some("pinned"), Some(alice.key_id().as_str()))
    );

    let result = push(
        &c,
        vec![
            packet("alice-laptop", "by-other-key", "2026-11-20T10:00:00Z", Some(&other)),
            packet("alice-laptop", "stripped", "2026-11-20T10:00:00Z", None),
            packet("alice-laptop", "by-alice", "2026-11-20T10:00:00Z", Some(&alice)),
            packet("bob-desktop", "by-bob", "2026-11-20T10:00:00Z", Some(&bob)),
        ],
    )
    .await;
    assert_eq!(
        (result["newSkills"].as_i64(), result["rejectedSkills"].as_i64()),
        (Some(2), Some(2)),
        "{result}"
    );
    assert!(
        conflict(&result, "by-other-key").contains(&format!("known by key {}", alice.key_id())),
        "{result}"
    );
    assert!(conflict(&result, "stripped").contains("downgrade"), "{result}");

    // Bob was unknown: his first signed packet's key is now his.
    let first = known_key(&c, "bob-desktop").await.expect("bob's key recorded on first use");
    assert_eq!(
        (first["source"].as_str(), first["keyId"].as_str()),
        (Some("first-use"), Some(bob.key_id().as_str()))
    );
    let later = push(
        &c,
        vec![
            packet("bob-desktop", "bob-by-other", "2026-11-21T10:00:00Z", Some(&other)),
            packet("bob-desktop", "bob-unsigned", "2026-11-21T10:00:00Z", None),
        ],
    )
    .await;
    assert_eq!(later["rejectedSkills"].as_i64(), Some(2), "{later}");
    assert_eq!(
        known_key(&c, "bob-desktop").await.unwrap()["keyId"],
        json!(bob.key_id()),
        "the first key stays"
    );

    // Only the key that signed the held version replaces it.
    let mut replaced = packet("alice-laptop", "by-alice", "2026-11-22T10:00:00Z", None);
    replaced.skill_body.push_str("2. A second step.\n");
    replaced.reseal();
    replaced.origin_signature = Some(other.sign(&replaced, "alice-laptop"));
    let refused = push(&c, vec![replaced.clone()]).await;
    assert_eq!(refused["rejectedSkills"].as_i64(), Some(1), "{refused}");
    replaced.origin_signature = Some(alice.sign(&replaced, "alice-laptop"));
    let accepted = push(&c, vec![replaced]).await;
    assert_eq!(accepted["updatedSkills"].as_i64(), Some(1), "{accepted}");
}

#[tokio::test(flavor = "multi_thread")]
async fn require_origin_signature_refuses_every_unsigned_packet() {
    let c = Fed::start_with(|config| config.policy.require_origin_signature = true).await;
    let key = NodeKey::from_seed(&[4; 32]);
    let result = push(
        &c,
        vec![
            packet("carol", "unsigned", "2026-11-20T10:00:00Z", None),
            packet("carol-signed", "signed", "2026-11-20T10:00:00Z", Some(&key)),
        ],
    )
    .await;
    assert_eq!(
        (result["newSkills"].as_i64(), result["rejectedSkills"].as_i64()),
        (Some(1), Some(1)),
        "{result}"
    );
    assert!(conflict(&result, "unsigned").contains("require_origin_signature"), "{result}");
}
