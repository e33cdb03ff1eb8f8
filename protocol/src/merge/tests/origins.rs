//! Verified and unverified origins (`SPEC.md` §6.6, §7.9.2 rules 3a, 4a,
//! 4b): a laundered copy gives way to the true origin, never the other way
//! round, and a laundered copy of a held skill is an echo.

use super::*;

fn legacy() -> MergeContext<'static> {
    MergeContext { sender_kind: SenderKind::Legacy, ..ctx_with("go-node", DEFAULT_TRUST) }
}

fn merge_in(skills: Vec<SkillPacket>, store: &Store, ctx: &MergeContext<'_>) -> MergeOutcome {
    merge_knowledge(update(skills), store, &StandardPolicy::default(), ctx)
}

/// `p` as a Go node re-serves it: its own origin, frontmatter stripped and
/// the body trimmed, stamped with the time of the request.
fn laundered(p: &SkillPacket, created: &str) -> SkillPacket {
    let mut copy = p.clone();
    copy.origin_instance = GO_DEFAULT_INSTANCE.into();
    let doc = crate::skill_doc::parse(&p.skill_body).unwrap();
    copy.skill_body = doc.body.trim().to_owned();
    copy.created_at = at(created);
    copy.confidence = 0.8;
    copy.provenance = None;
    copy.reseal();
    copy
}

/// What the store holds after `outcome` installed packet 0.
fn held_after(outcome: &MergeOutcome) -> StoredSkill {
    let mut store = Store::new();
    outcome.apply_to(&mut store);
    store.into_values().next().expect("one skill installed")
}

#[test]
fn a_laundered_copy_is_held_with_an_unverified_origin() {
    let genuine = packet("alpha");
    let out = merge_in(vec![laundered(&genuine, "2026-11-22T11:00:00Z")], &Store::new(), &legacy());
    assert_eq!(out.decisions[0].decision, Decision::New);
    let stored = &out.decisions[0].packet;
    assert!(stored.provenance.as_ref().unwrap().origin_unverified, "{stored:?}");
    assert!(!held_after(&out).origin_verified);
}

#[test]
fn the_true_origin_replaces_a_laundered_copy_even_with_an_older_created_at() {
    let genuine = packet("alpha");
    let first = merge_in(vec![laundered(&genuine, "2026-11-22T11:00:00Z")], &Store::new(), &legacy());
    let mut store = Store::new();
    first.apply_to(&mut store);
    // The Go node stamped its copy later than the origin's createdAt: rule 4a, not rule 8.
    let out = merge_in(vec![genuine.clone()], &store, &ctx());
    let previous_hash = first.decisions[0].packet.integrity_hash.clone();
    assert_eq!(out.decisions[0].decision, Decision::Updated { previous_hash });
    assert_eq!(out.decisions[0].packet.origin_instance, "node-a");
    assert!(!out.decisions[0].packet.provenance.as_ref().unwrap().origin_unverified);
    assert!(held_after(&out).origin_verified);
}

#[test]
fn a_legacy_packet_never_replaces_a_verified_copy() {
    let genuine = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &genuine));
    // Even claiming the same origin, later, with other content.
    let claimed = newer_version(&genuine, "2026-11-22T11:00:00Z");
    let out = merge_in(vec![claimed], &store, &legacy());
    let (stage, reason) = rejection(&out, 0);
    assert_eq!(stage, Stage::Conflict);
    assert!(reason.contains("verified origin \"node-a\"") && reason.contains("ECP/1.1"), "{reason}");
    // The same from a current sender is an ordinary update (rule 6).
    let out = merge_in(vec![newer_version(&genuine, "2026-11-22T11:00:00Z")], &store, &ctx());
    assert!(matches!(out.decisions[0].decision, Decision::Updated { .. }));
}

#[test]
fn an_unverified_origin_travels_on_through_current_senders() {
    let genuine = packet("alpha");
    // A Go node whose operator named it: no default identity to go by.
    let mut named = laundered(&genuine, "2026-11-22T11:00:00Z");
    named.origin_instance = "go-box".into();
    let at_b = merge_in(vec![named], &Store::new(), &legacy());
    let mut relayed = at_b.decisions[0].packet.clone();
    relayed.confidence = 0.9; // over C's threshold, whatever B lowered it to
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &genuine));
    // C receives B's copy from B, a current sender: still unverified, so it
    // does not replace C's verified copy.
    let at_c =
        merge_in(vec![newer_version(&relayed, "2026-11-22T11:30:00Z")], &store, &ctx_with("node-x", 0.6));
    assert_eq!(rejection(&at_c, 0).0, Stage::Conflict);
    let fresh = merge_in(vec![relayed], &Store::new(), &ctx_with("node-x", 0.6));
    assert!(fresh.decisions[0].packet.provenance.as_ref().unwrap().origin_unverified);
}

#[test]
fn the_go_default_identity_is_unverified_from_any_sender() {
    let mut claimed = packet("alpha");
    claimed.origin_instance = GO_DEFAULT_INSTANCE.into();
    assert!(!origin_verified(&claimed, &ctx()));
    claimed.origin_instance = "ok-agent2".into();
    assert!(origin_verified(&claimed, &ctx()), "only the exact default identity");
    assert!(!origin_verified(&claimed, &legacy()));
}

#[test]
fn the_same_content_from_a_current_sender_confirms_an_unverified_copy() {
    let genuine = packet("alpha");
    let mut store = Store::new();
    store.insert(
        "alpha".into(),
        StoredSkill { origin_verified: false, ..held(SkillKind::External, "node-a", &genuine) },
    );
    let out = merge_in(vec![genuine.clone()], &store, &ctx());
    assert_eq!(
        out.decisions[0].decision,
        Decision::Updated { previous_hash: genuine.integrity_hash.clone() }
    );
    assert!(held_after(&out).origin_verified);
    // From a legacy sender, the same content changes nothing.
    let out = merge_in(vec![genuine], &store, &legacy());
    assert_eq!(out.decisions[0].decision, Decision::Unchanged);
}

#[test]
fn a_laundered_copy_of_a_local_skill_is_an_echo_not_a_conflict() {
    let own = packet_from(LOCAL, "alpha", 1.0, "2026-11-20T10:00:00Z");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::Local, LOCAL, &own));
    let echo = laundered(&own, "2026-11-22T11:00:00Z");
    let out = merge_in(vec![echo.clone()], &store, &legacy());
    assert_eq!(out.decisions[0].decision, Decision::Echo);
    assert_eq!((out.result.unchanged, out.result.rejected_skills), (1, 0));
    assert!(out.result.conflicts.is_empty());
    assert_eq!(out.result.total(), 1, "counts still add up");

    // One character more is another skill: a conflict with the local one.
    let mut edited = echo.clone();
    edited.skill_body.push('!');
    edited.reseal();
    assert_eq!(rejection(&merge_in(vec![edited], &store, &legacy()), 0).0, Stage::Conflict);
    // Withdrawn by the Go node while held active here: not the same state.
    let mut withdrawn = echo.clone();
    withdrawn.deprecated = true;
    assert_eq!(rejection(&merge_in(vec![withdrawn], &store, &legacy()), 0).0, Stage::Conflict);
    // Without the held body's key, nothing is an echo.
    store.get_mut("alpha").unwrap().content_key = None;
    assert_eq!(rejection(&merge_in(vec![echo], &store, &legacy()), 0).0, Stage::Conflict);
}

#[test]
fn a_laundered_copy_of_a_verified_external_skill_is_an_echo() {
    let genuine = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &genuine));
    let out = merge_in(vec![laundered(&genuine, "2026-11-22T11:00:00Z")], &store, &legacy());
    assert_eq!(out.decisions[0].decision, Decision::Echo);
    // The same copy from a current sender (which claims "ok-agent") is no echo
    // of ours to forgive silently either: it is unverified, so also an echo.
    let out = merge_in(vec![laundered(&genuine, "2026-11-22T11:00:00Z")], &store, &ctx());
    assert_eq!(out.decisions[0].decision, Decision::Echo);
}
