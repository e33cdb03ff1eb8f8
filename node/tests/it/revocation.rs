//! Revocation (#25 item 4, `SPEC.md` §14) with real nodes and the real
//! binary: a revocation made at A with `skill revoke` reaches C through B;
//! each goes back to its newest version not revoked (or removes the skill
//! when none is left), a pin on the revoked version is dropped with a
//! warning, and the revoked digest is refused when a fourth node pushes it
//! again; a revocation that is not provably from the origin (another key,
//! tampered, signed by a node that is not the origin) is refused and
//! recorded, and changes nothing.
//!
//! Waiting is polling with a deadline; pulls are awaited.

use std::time::Duration;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::revocation::Revocation;
use ecp_protocol::{KnowledgeUpdate, Timestamp};
use serde_json::{Value, json};

use crate::cli::eventually;
use crate::federation::Fed;
use crate::util::put_local_text;
use crate::versions::{digest_where, file_with, history, pull, run, skills_dir, text};

const SOON: Duration = Duration::from_secs(30);

/// Posts `update` to `node` as a push from an unconfigured sender; its MergeResult.
async fn push(node: &Fed, update: &Value) -> Value {
    let reply = node.http.post(format!("{}/ecp/skills", node.url())).json(update).send().await.unwrap();
    assert!(reply.status().is_success(), "{}", reply.status());
    reply.json().await.unwrap()
}

/// The audit entries of `node` whose decision is `decision`, newest first.
async fn audited(node: &Fed, decision: &str) -> Vec<Value> {
    let audit = node.get_json("/v1/audit?limit=1000").await;
    audit["audit"].as_array().unwrap().iter().filter(|e| e["decision"] == decision).cloned().collect()
}

/// The file of `name` in `fed`'s folder is gone.
async fn file_gone(fed: &Fed, name: &str) {
    let file = skills_dir(fed).join(name).join("SKILL.md");
    eventually(&format!("{name}'s file is removed"), SOON, || {
        let gone = (!file.exists()).then_some(());
        async move { gone }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revocation_made_at_a_reaches_c_through_b_which_go_back_and_refuse_it_from_a_fourth_node() {
    let (a, b, c, d) = (Fed::start().await, Fed::start().await, Fed::start().await, Fed::start().await);
    // B and C each hold both versions of alpha (they pulled in between); beta has one.
    put_local_text(a.node().library(), &text("alpha", "first alpha")).await;
    put_local_text(a.node().library(), &text("beta", "only beta")).await;
    pull(&b, &a).await;
    pull(&c, &b).await;
    put_local_text(a.node().library(), &text("alpha", "second alpha")).await;
    pull(&b, &a).await;
    pull(&c, &b).await;
    pull(&d, &a).await;
    file_with(&c, "alpha", "second alpha").await;
    file_with(&c, "beta", "only beta").await;
    // C pins alpha at the version about to be revoked.
    let pinned = run(&c, &["skill", "pin", "alpha"]).await;
    assert_eq!(pinned.code, 0, "{pinned:?}");
    let second = digest_where(&history(&a, "alpha").await, |v| v["version"] == 2);
    let first = digest_where(&history(&a, "alpha").await, |v| v["version"] == 1);

    // Only the origin revokes.
    let not_origin = run(&b, &["skill", "revoke", "alpha", "--version", &second, "--reason", "x"]).await;
    assert_eq!(not_origin.code, 2, "{not_origin:?}");
    assert!(not_origin.stderr.contains("only its origin revokes"), "{not_origin:?}");
    let out =
        run(&a, &["skill", "revoke", "alpha", "--version", "2", "--reason", "leaks the deploy token"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("revoked"), "{out:?}");
    file_with(&a, "alpha", "first alpha").await;
    let again = run(&a, &["skill", "revoke", "alpha", "--version", &second, "--reason", "again"]).await;
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("revoked already"), "{again:?}");
    let beta = run(&a, &["skill", "revoke", "beta", "--version", "1", "--reason", "wrong advice"]).await;
    assert_eq!(beta.code, 0, "{beta:?}");
    assert!(beta.stdout.contains("withdrawn"), "{beta:?}");
    // Never served again, by digest either.
    let exact = a.http.get(format!("{}/ecp/skills/alpha?digest={second}", a.url())).send().await.unwrap();
    assert_eq!(exact.status(), 404);

    pull(&b, &a).await;
    file_with(&b, "alpha", "first alpha").await;
    file_gone(&b, "beta").await;
    let at_b = history(&b, "alpha").await;
    assert!(at_b.iter().any(|v| v["digest"] == second.as_str() && v["revoked"] == "leaks the deploy token"));
    assert_eq!(digest_where(&at_b, |v| v["current"] == true), first, "{at_b:?}");

    // C takes it from B, which is not its origin: signed by A, it holds.
    pull(&c, &b).await;
    file_with(&c, "alpha", "first alpha").await;
    file_gone(&c, "beta").await;
    assert_eq!(c.get_json("/v1/skills").await["pins"], json!({}), "revocation beats pinning");
    let unpins = audited(&c, "unpin").await;
    assert!(unpins.iter().any(|e| e["reason"].as_str().unwrap().contains("was revoked")), "{unpins:?}");
    assert_eq!(audited(&c, "revoked").await.len(), 2, "alpha and beta");
    let shown = run(&c, &["skill", "history", "alpha"]).await;
    assert!(shown.stdout.contains("revoked by its origin: leaks the deploy token"), "{shown:?}");

    // D never heard of it, and pushes the revoked version to C.
    let listing: Value =
        d.http.get(format!("{}/ecp/skills", d.url())).send().await.unwrap().json().await.unwrap();
    let result = push(&c, &listing).await;
    let conflicts = result["conflicts"].as_array().unwrap();
    assert!(
        conflicts.iter().any(|l| l.as_str().unwrap().starts_with("alpha: revoked by its origin")),
        "{result}"
    );
    file_with(&c, "alpha", "first alpha").await;
    let q = c.get_json("/v1/quarantine").await;
    assert!(
        q["quarantine"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["stage"] == "revoked" && e["skillName"] == "alpha"),
        "{q}"
    );
    // And the search never shows it: alpha's current version is the first.
    assert_eq!(digest_where(&history(&c, "alpha").await, |v| v["current"] == true), first);
}

/// A revocation of `digest` of `name`, signed by `key` for `instance`.
fn revocation(key: &NodeKey, instance: &str, name: &str, digest: &str, reason: &str) -> Revocation {
    let mut r = Revocation {
        skill_name: name.into(),
        digest: digest.into(),
        reason: reason.into(),
        revoked_at: Timestamp::parse("2026-11-26T08:00:00Z").unwrap(),
        origin_signature: None,
    };
    r.origin_signature = Some(key.sign_revocation(&r, instance));
    r
}

fn update(revocations: Vec<Revocation>) -> Value {
    serde_json::to_value(KnowledgeUpdate {
        peer_instance: "pusher".into(),
        revocations,
        ..KnowledgeUpdate::default()
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revocation_not_provably_from_the_origin_is_refused_and_recorded() {
    let (a, b, c) = (Fed::start().await, Fed::start().await, Fed::start().await);
    put_local_text(a.node().library(), &text("alpha", "first alpha")).await;
    put_local_text(c.node().library(), &text("gamma", "only gamma")).await;
    pull(&b, &a).await;
    pull(&b, &c).await;
    file_with(&b, "alpha", "first alpha").await;
    let digest = digest_where(&history(&b, "alpha").await, |v| v["current"] == true);
    let a_key = a.node().library().store().node_key().clone();
    let c_key = c.node().library().store().node_key().clone();
    let a_id = a.instance();

    let other_key = revocation(&NodeKey::from_seed(&[9; 32]), &a_id, "alpha", &digest, "forged");
    let mut tampered = revocation(&a_key, &a_id, "alpha", &digest, "genuine");
    tampered.reason = "tampered".into();
    let not_origin = revocation(&c_key, &c.instance(), "alpha", &digest, "c is not alpha's origin");
    let mut unsigned = revocation(&a_key, &a_id, "alpha", &digest, "unsigned");
    unsigned.origin_signature = None;
    let result = push(&b, &update(vec![other_key, tampered, not_origin, unsigned])).await;
    assert!(result["conflicts"].as_array().is_none_or(Vec::is_empty), "revocations are no packets: {result}");
    let refused = audited(&b, "rejected:revocation").await;
    let reasons: Vec<&str> = refused.iter().map(|e| e["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("is the key id of another key")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("does not match this revocation")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("only the origin revokes")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("not signed")), "{reasons:?}");
    let at_b = history(&b, "alpha").await;
    assert!(at_b.iter().all(|v| v["revoked"].is_null()), "{at_b:?}");
    assert!(std::fs::read_to_string(skills_dir(&b).join("alpha/SKILL.md")).unwrap().contains("first alpha"));

    // The same revocation, signed by A's own key, holds: the checks above are what refused.
    let genuine = revocation(&a_key, &a_id, "alpha", &digest, "genuine");
    push(&b, &update(vec![genuine])).await;
    file_gone(&b, "alpha").await;
    assert_eq!(audited(&b, "revocation").await.len(), 1);
}
