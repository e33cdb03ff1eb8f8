//! Revocations and outcome evidence on a hub (#18 item 5, `SPEC.md` §14
//! and §16): two replicas on one real PostgreSQL database ([`crate::pg`]).
//! A revocation pushed to one replica is taken (signed by the origin's
//! key), applied — the hub goes back to the newest version not revoked, or
//! withdraws the skill — and served by the other on the next request; a
//! revoked version is served by neither, and refused when pushed again;
//! a revocation not provably from the origin changes nothing but the audit
//! log; replicas started again keep it all. Outcome claims pushed to one
//! replica are served on the skill's packet by the other, the newest per
//! observer, and the evidence rule refuses a skill reported failing.

use std::time::Duration;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::revocation::Revocation;
use ecp_protocol::{KnowledgeUpdate, OutcomeClaim, SkillPacket, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cli::eventually;
use crate::hub::{Replica, two_replicas};
use crate::pg::{PgServer, start_or_skip};
use crate::util::{ORIGIN, newer_version, packet_from, served_named, served_names};

/// The origin's key: [`ORIGIN`] signs its packets and revocations with it.
pub(crate) fn origin_key() -> NodeKey {
    NodeKey::from_seed(&[21; 32])
}

/// `packet` signed by `key` as [`ORIGIN`].
pub(crate) fn signed(mut packet: SkillPacket, key: &NodeKey) -> SkillPacket {
    packet.origin_signature = None;
    packet.origin_signature = Some(key.sign(&packet, ORIGIN));
    packet
}

/// A revocation of `digest` of `name`, signed by `key` for `instance`.
pub(crate) fn revocation(
    key: &NodeKey,
    instance: &str,
    name: &str,
    digest: &str,
    reason: &str,
) -> Revocation {
    let mut r = Revocation {
        skill_name: name.into(),
        digest: digest.into(),
        reason: reason.into(),
        revoked_at: Timestamp::parse("2026-11-26T08:00:00Z").expect("a time"),
        origin_signature: None,
    };
    r.origin_signature = Some(key.sign_revocation(&r, instance));
    r
}

/// An update from a pusher carrying `skills` and `revocations`.
pub(crate) fn update(skills: Vec<SkillPacket>, revocations: Vec<Revocation>) -> Vec<u8> {
    let update =
        KnowledgeUpdate { peer_instance: "pusher".into(), skills, revocations, ..KnowledgeUpdate::default() };
    serde_json::to_vec(&update).expect("an update encodes")
}

/// Pushes `body` to `replica`, which must answer 200; its MergeResult.
pub(crate) async fn push_ok(replica: &Replica, body: Vec<u8>) -> Value {
    let (status, result) = replica.push(body).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    result
}

/// The integrityHash `listing` serves for `name`, if it serves it.
fn served_hash(listing: &Value, name: &str) -> Option<String> {
    served_named(listing, name).and_then(|p| p["integrityHash"].as_str()).map(str::to_owned)
}

/// Alpha in two signed versions and beta in one, pushed to `a`.
struct Held {
    first: SkillPacket,
    second: SkillPacket,
    beta: SkillPacket,
}

async fn two_versions_and_beta(a: &Replica) -> Held {
    let key = origin_key();
    let first = signed(packet_from(ORIGIN, "alpha", "2026-11-20T10:00:00Z"), &key);
    let second = signed(newer_version("alpha", "2026-11-21T10:00:00Z", "Step two."), &key);
    let beta = signed(packet_from(ORIGIN, "beta", "2026-11-20T10:00:00Z"), &key);
    let result = push_ok(a, update(vec![first.clone(), beta.clone()], Vec::new())).await;
    assert_eq!(result["newSkills"], 2, "{result}");
    let result = push_ok(a, update(vec![second.clone()], Vec::new())).await;
    assert_eq!(result["updatedSkills"], 1, "{result}");
    Held { first, second, beta }
}

/// What the hub's database holds that a revocation could change: every
/// table but the audit log, as text.
fn state(server: &PgServer, db: &str) -> String {
    server.with(db, |client| {
        let mut out = String::new();
        for query in [
            "SELECT value FROM hub_meta WHERE key = 'sequence'",
            "SELECT name || ' ' || version || ' ' || integrity_hash || ' ' || seq || ' ' || deprecated || ' ' || shareable FROM hub_skills ORDER BY name",
            "SELECT name || ' ' || version || ' ' || integrity_hash || ' ' || seq || ' ' || deprecated FROM hub_versions ORDER BY name, version",
            "SELECT name || ' ' || digest || ' ' || seq FROM hub_revocations ORDER BY name, digest",
            "SELECT instance || ' ' || key_id FROM hub_origin_keys ORDER BY instance",
            "SELECT COUNT(*)::TEXT FROM hub_quarantine",
        ] {
            for row in client.query(query, &[]).expect("a query") {
                out.push_str(row.get::<_, &str>(0));
                out.push('\n');
            }
            out.push_str("--\n");
        }
        out
    })
}

/// The reasons of the hub's audit entries with `action`, oldest first.
fn audited(server: &PgServer, db: &str, action: &str) -> Vec<String> {
    server.with(db, |client| {
        let rows = client
            .query("SELECT reason FROM hub_audit WHERE action = $1 ORDER BY id", &[&action])
            .expect("a query");
        rows.iter().map(|r| r.get(0)).collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_pushed_to_one_replica_is_served_and_obeyed_by_the_other_and_kept_across_restarts() {
    let test =
        "a_revocation_pushed_to_one_replica_is_served_and_obeyed_by_the_other_and_kept_across_restarts";
    let Some(server) = start_or_skip(test) else { return };
    let (a, b) = two_replicas(&server, "revoked", |_| {}).await;
    let (_, manifest) = b.get("/ecp/manifest").await;
    assert!(manifest["profiles"].as_array().expect("profiles").contains(&json!("revocations")), "{manifest}");
    let held = two_versions_and_beta(&a).await;
    let (_, before) = b.get("/ecp/skills").await;
    assert_eq!(served_hash(&before, "alpha"), Some(held.second.integrity_hash.clone()));
    let seq_before = before["sequenceNum"].as_i64().expect("a sequence number");

    let key = origin_key();
    let second = revocation(&key, ORIGIN, "alpha", &held.second.integrity_hash, "leaks the deploy token");
    let heard = b.node.store().subscribe();
    let result = push_ok(&a, update(Vec::new(), vec![second.clone()])).await;
    // B makes no request: NOTIFY tells it of the revocation's commit (the
    // revocation and the version installed again: two sequence numbers).
    eventually("replica B hears of the revocation", Duration::from_secs(20), || {
        let seq = *heard.borrow();
        async move { (seq >= seq_before + 2).then_some(()) }
    })
    .await;
    assert_eq!(
        (result["newSkills"].as_i64(), result["rejectedSkills"].as_i64()),
        (Some(0), Some(0)),
        "{result}"
    );

    // The very next request, to the other replica: back to the first version,
    // the revocation served on with its signature unchanged.
    let (_, listing) = b.get("/ecp/skills").await;
    assert_eq!(served_hash(&listing, "alpha"), Some(held.first.integrity_hash.clone()), "{listing}");
    let served = listing["revocations"].as_array().expect("revocations served");
    assert_eq!(served.len(), 1, "{listing}");
    assert_eq!(served[0], serde_json::to_value(&second).expect("JSON"));
    let (_, since) = b.get(&format!("/ecp/skills?since={seq_before}")).await;
    assert_eq!(served_names(&since), ["alpha"], "the version installed again is a change: {since}");
    assert_eq!(since["revocations"][0]["digest"], held.second.integrity_hash.as_str(), "{since}");
    let (_, later) = b.get(&format!("/ecp/skills?since={}", since["sequenceNum"])).await;
    assert!(later.get("revocations").is_none(), "none recorded after: {later}");
    for replica in [&a, &b] {
        let (status, body) =
            replica.get(&format!("/ecp/skills/alpha?digest={}", held.second.integrity_hash)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "a revoked version is never served: {body}");
        let (status, _) =
            replica.get(&format!("/ecp/skills/alpha?digest={}", held.first.integrity_hash)).await;
        assert_eq!(status, StatusCode::OK);
    }
    assert_eq!(audited(&server, "revoked", "revocation").len(), 1);

    // Beta's only version, revoked at the other replica: withdrawn, served by neither.
    let beta = revocation(&key, ORIGIN, "beta", &held.beta.integrity_hash, "wrong advice");
    push_ok(&b, update(Vec::new(), vec![beta])).await;
    let (_, listing) = a.get("/ecp/skills").await;
    assert_eq!(served_names(&listing), ["alpha"], "{listing}");
    assert_eq!(listing["revocations"].as_array().map(Vec::len), Some(2), "{listing}");
    let (_, manifest) = a.get("/ecp/manifest").await;
    assert_eq!(manifest["skillNames"], json!(["alpha"]), "{manifest}");
    let reasons = audited(&server, "revoked", "revoked");
    assert!(reasons[0].contains("rolled back to the newest version not revoked"), "{reasons:?}");
    assert!(reasons[1].contains("removed: no kept version is not revoked"), "{reasons:?}");

    // Pushed again, by anyone, the revoked versions are refused.
    let result = push_ok(&b, update(vec![held.second.clone(), held.beta.clone()], Vec::new())).await;
    assert_eq!(result["rejectedSkills"], 2, "{result}");
    let conflicts: Vec<&str> =
        result["conflicts"].as_array().expect("conflicts").iter().filter_map(Value::as_str).collect();
    assert!(conflicts.iter().all(|l| l.contains(": revoked by its origin")), "{conflicts:?}");
    // A relay's repeat of a revocation held changes nothing.
    let seq = a.get("/ecp/manifest").await.1["sequenceNum"].clone();
    push_ok(&a, update(Vec::new(), vec![second])).await;
    assert_eq!(b.get("/ecp/manifest").await.1["sequenceNum"], seq);

    // Replicas started again on the same database keep it all.
    let snapshot = state(&server, "revoked");
    for replica in [a, b] {
        replica.node.shutdown().await.expect("the replica stops");
    }
    let url = server.url("revoked");
    let (c, d) = (Replica::start(&url, |_| {}).await, Replica::start(&url, |_| {}).await);
    assert_eq!(state(&server, "revoked"), snapshot, "a start changes nothing");
    let (_, listing) = c.get("/ecp/skills").await;
    assert_eq!(served_hash(&listing, "alpha"), Some(held.first.integrity_hash.clone()), "{listing}");
    assert_eq!(served_names(&listing), ["alpha"]);
    assert_eq!(listing["revocations"].as_array().map(Vec::len), Some(2), "{listing}");
    let result = push_ok(&d, update(vec![held.second.clone()], Vec::new())).await;
    assert_eq!(result["rejectedSkills"], 1, "{result}");
    let (status, _) = c.get(&format!("/ecp/skills/alpha?digest={}", held.second.integrity_hash)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_not_provably_from_the_origin_changes_nothing_but_the_audit_log() {
    let test = "a_revocation_not_provably_from_the_origin_changes_nothing_but_the_audit_log";
    let Some(server) = start_or_skip(test) else { return };
    let (a, b) = two_replicas(&server, "forged", |_| {}).await;
    let held = two_versions_and_beta(&a).await;
    let digest = held.second.integrity_hash.as_str();
    let before = state(&server, "forged");
    let tag = |r: &Replica| {
        let (client, url) = (r.client.clone(), r.url("/ecp/skills"));
        async move { client.get(url).send().await.expect("an answer").headers()["etag"].clone() }
    };
    let etag = tag(&b).await;

    let key = origin_key();
    let other_key = revocation(&NodeKey::from_seed(&[9; 32]), ORIGIN, "alpha", digest, "forged");
    let mut tampered = revocation(&key, ORIGIN, "alpha", digest, "genuine");
    tampered.reason = "tampered".into();
    let stranger = NodeKey::from_seed(&[10; 32]);
    let not_origin = revocation(&stranger, &stranger.key_id(), "alpha", digest, "not alpha's origin");
    let mut unsigned = revocation(&key, ORIGIN, "alpha", digest, "unsigned");
    unsigned.origin_signature = None;
    let unknown_origin =
        revocation(&NodeKey::from_seed(&[11; 32]), "carol-desktop", "gamma", digest, "no key known");
    // A name holding NUL, which PostgreSQL's TEXT refuses: refused, not a fault.
    let mut nul = revocation(&key, ORIGIN, "alpha", digest, "nul");
    nul.skill_name = "al\0pha".into();
    // A refused revocation is no packet (SPEC §14.5.3): the push is answered
    // 200 with nothing counted, as at a node (conformance REV-004).
    let forged = vec![other_key, tampered, not_origin, unsigned, unknown_origin, nul];
    let result = push_ok(&a, update(Vec::new(), forged)).await;
    assert_eq!(result["rejectedSkills"], 0, "{result}");
    assert!(result["conflicts"].as_array().is_none_or(Vec::is_empty), "{result}");
    let reasons = audited(&server, "forged", "rejected:revocation");
    assert_eq!(reasons.len(), 6, "{reasons:?}");
    for expected in [
        "is known here by key",
        "does not match this revocation",
        "only the origin revokes",
        "not signed",
        "knows no key of the origin \"carol-desktop\"",
        "is not a skill name",
    ] {
        assert!(reasons.iter().any(|r| r.contains(expected)), "{expected}: {reasons:?}");
    }
    assert_eq!(state(&server, "forged"), before, "nothing but the audit log changed");
    assert_eq!(tag(&b).await, etag, "the other replica serves the same listing");
    let (_, listing) = b.get("/ecp/skills").await;
    assert!(listing.get("revocations").is_none(), "{listing}");
    assert_eq!(served_hash(&listing, "alpha"), Some(held.second.integrity_hash.clone()));

    // A revocation that is not one (revokedAt not a time) is a bad request:
    // 400 naming where, and nothing changes at all.
    let mut body: Value = serde_json::from_slice(&update(Vec::new(), Vec::new())).expect("JSON");
    body["revocations"] =
        json!([{"skillName": "alpha", "digest": digest, "reason": "x", "revokedAt": "soon"}]);
    let audit_rows = audited(&server, "forged", "rejected:revocation").len();
    let (status, error) = a.push(serde_json::to_vec(&body).expect("JSON")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert!(error["error"].as_str().is_some_and(|e| e.contains("\"soon\" is not RFC 3339")), "{error}");
    assert_eq!(state(&server, "forged"), before);
    assert_eq!(audited(&server, "forged", "rejected:revocation").len(), audit_rows);

    // The same revocation signed by the origin's own key holds: the checks
    // above are what refused.
    let genuine = revocation(&key, ORIGIN, "alpha", digest, "genuine");
    push_ok(&b, update(Vec::new(), vec![genuine])).await;
    let (_, listing) = a.get("/ecp/skills").await;
    assert_eq!(served_hash(&listing, "alpha"), Some(held.first.integrity_hash.clone()), "{listing}");
    assert_ne!(state(&server, "forged"), before);
}

/// A claim by `observer` of `uses` uses, `failures` of them failures.
fn claim(observer: &str, uses: u64, failures: u64, at: &str) -> OutcomeClaim {
    OutcomeClaim {
        observer: observer.into(),
        uses,
        successes: uses - failures,
        failures,
        streak: 0,
        at: Timestamp::parse(at).expect("a time"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcome_claims_pushed_to_one_replica_are_served_by_the_other_and_refuse_a_failing_skill() {
    let test = "outcome_claims_pushed_to_one_replica_are_served_by_the_other_and_refuse_a_failing_skill";
    let Some(server) = start_or_skip(test) else { return };
    let strict = |c: &mut ecp_node::config::Config| {
        c.policy.evidence =
            Some(ecp_protocol::outcomes::EvidenceRule { max_failure_rate: 0.5, min_uses: 5.0 })
    };
    let (a, b) = two_replicas(&server, "evidence", strict).await;
    let mut alpha = packet_from(ORIGIN, "alpha", "2026-11-20T10:00:00Z");
    alpha.outcomes = vec![claim("obs-one", 10, 2, "2026-11-25T10:00:00Z")];
    let result = push_ok(&a, update(vec![alpha.clone()], Vec::new())).await;
    assert_eq!(result["newSkills"], 1, "{result}");
    let (_, listing) = b.get("/ecp/skills").await;
    let carried = &served_named(&listing, "alpha").expect("alpha served")["outcomes"];
    assert_eq!(carried, &serde_json::to_value(&alpha.outcomes).expect("JSON"), "{listing}");
    let seq = listing["sequenceNum"].as_i64().expect("a sequence number");

    // The same version with a newer claim of that observer and one of
    // another, pushed to the other replica: unchanged as a skill, but what
    // its packet carries changed — a new sequence number, served at once.
    alpha.outcomes =
        vec![claim("obs-one", 12, 2, "2026-11-25T12:00:00Z"), claim("obs-two", 3, 0, "2026-11-24T10:00:00Z")];
    let result = push_ok(&b, update(vec![alpha.clone()], Vec::new())).await;
    assert_eq!(result["unchanged"], 1, "{result}");
    let (_, since) = a.get(&format!("/ecp/skills?since={seq}")).await;
    assert_eq!(served_names(&since), ["alpha"], "{since}");
    let carried = since["skills"][0]["outcomes"].as_array().expect("claims carried").clone();
    assert_eq!(carried.len(), 2, "{since}");
    assert_eq!((carried[0]["observer"].as_str(), carried[0]["uses"].as_i64()), (Some("obs-one"), Some(12)));
    // An older claim of an observer held changes nothing.
    alpha.outcomes = vec![claim("obs-one", 11, 2, "2026-11-25T11:00:00Z")];
    let seq = since["sequenceNum"].clone();
    push_ok(&a, update(vec![alpha.clone()], Vec::new())).await;
    assert_eq!(b.get("/ecp/manifest").await.1["sequenceNum"], seq);
    // Stats count the hub's own agents' uses: it has none.
    assert!(since["stats"].get("totalUses").is_none_or(|u| u == 0), "{}", since["stats"]);

    // A new skill whose claims report 9 failures in 10 uses is refused by
    // the evidence rule; the claims are kept.
    let mut broken = packet_from(ORIGIN, "broken", "2026-11-20T10:00:00Z");
    broken.outcomes = vec![claim("obs-one", 10, 9, "2026-11-25T10:00:00Z")];
    let result = push_ok(&b, update(vec![broken], Vec::new())).await;
    assert_eq!(result["rejectedSkills"], 1, "{result}");
    let reason = server.with("evidence", |db| {
        db.query_one("SELECT reason FROM hub_quarantine WHERE name = 'broken'", &[])
            .expect("a refusal")
            .get::<_, String>(0)
    });
    assert!(reason.starts_with("rejected by policy: peers report a failure rate of 0.9"), "{reason}");
    let (_, listing) = a.get("/ecp/skills").await;
    assert_eq!(served_names(&listing), ["alpha"]);
}
