//! Stage 5 and the answer: what a refused packet keeps, the rollback rules
//! against the held version, ties between packets of one update, and the
//! counts and conflicts lines.

use super::*;

#[test]
fn a_refused_packet_keeps_its_confidence_and_provenance_as_received() {
    let v1 = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &v1));
    let mut stale = newer_version(&v1, "2026-11-19T10:00:00Z");
    stale.provenance = Some(Provenance { hops: 1, path: vec!["node-a".into()], ..Default::default() });
    let dup_a = packet("beta");
    let dup_b = newer_version(&dup_a, "2026-11-21T10:00:00Z");
    let out = merge(vec![stale.clone(), dup_a.clone(), dup_b], &store);
    assert_eq!(rejection(&out, 0).0, Stage::Conflict);
    assert_eq!(rejection(&out, 1).0, Stage::Duplicate);
    assert_eq!(out.decisions[0].packet, stale, "a conflict is recorded as received");
    assert_eq!(out.decisions[1].packet, dup_a, "a duplicate is recorded as received");
    assert!(out.decisions[2].decision.installs());
    assert!((out.decisions[2].packet.confidence - 0.9 * DEFAULT_TRUST).abs() < 1e-12);
}

#[test]
fn an_update_needs_a_later_created_at_not_an_equal_one() {
    let v1 = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &v1));
    let same_time = newer_version(&v1, "2026-11-20T10:00:00Z");
    let out = merge(vec![same_time], &store);
    let (stage, reason) = rejection(&out, 0);
    assert_eq!(stage, Stage::Conflict);
    assert_eq!(
        reason,
        "conflict: createdAt 2026-11-20T10:00:00Z is not newer than the held version's 2026-11-20T10:00:00Z"
    );
    let one_second_later = newer_version(&v1, "2026-11-20T10:00:01Z");
    let out = merge(vec![one_second_later], &store);
    assert_eq!(out.decisions[0].decision, Decision::Updated { previous_hash: v1.integrity_hash.clone() });
    assert_eq!(out.result.updated_skills, 1);
    assert_eq!(out.result.total(), 1);
}

#[test]
fn only_the_tombstone_of_the_held_version_withdraws_it_without_a_later_time() {
    let v1 = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &v1));

    // An older tombstone does not withdraw a newer version.
    let mut old_tomb = newer_version(&v1, "2026-11-19T10:00:00Z");
    old_tomb.deprecated = true;
    assert_eq!(rejection(&merge(vec![old_tomb], &store), 0).0, Stage::Conflict);

    // A withdrawn skill stays withdrawn: neither another tombstone of its
    // time nor the very body it had revives or replaces it.
    let mut gone = held(SkillKind::External, "node-a", &v1);
    gone.deprecated = true;
    store.insert("alpha".into(), gone);
    let mut other_tomb = newer_version(&v1, "2026-11-20T10:00:00Z");
    other_tomb.deprecated = true;
    assert_eq!(rejection(&merge(vec![other_tomb], &store), 0).0, Stage::Conflict);
    assert_eq!(rejection(&merge(vec![v1.clone()], &store), 0).0, Stage::Conflict);
    let mut same_tomb = v1.clone();
    same_tomb.deprecated = true;
    assert_eq!(merge(vec![same_tomb], &store).decisions[0].decision, Decision::Unchanged);
    // A later version revives it.
    let revived = newer_version(&v1, "2026-11-21T10:00:00Z");
    assert!(matches!(merge(vec![revived], &store).decisions[0].decision, Decision::Updated { .. }));
}

#[test]
fn a_full_tie_between_packets_goes_to_the_first() {
    let p = packet("alpha");
    let out = merge(vec![p.clone(), p.clone(), p], &Store::new());
    assert_eq!(out.decisions[0].decision, Decision::New);
    for i in [1, 2] {
        let (stage, reason) = rejection(&out, i);
        assert_eq!(stage, Stage::Duplicate);
        assert_eq!(
            reason,
            "duplicate skill name in this update: packet #0 wins (latest createdAt, then larger hash, then first)"
        );
    }
    assert_eq!((out.result.new_skills, out.result.rejected_skills), (1, 2));
}

#[test]
fn at_one_time_the_larger_stored_hash_wins() {
    let a = packet("alpha");
    let b = newer_version(&a, "2026-11-20T10:00:00Z");
    let larger = if a.integrity_hash > b.integrity_hash { &a } else { &b };
    for skills in [vec![a.clone(), b.clone()], vec![b.clone(), a.clone()]] {
        let out = merge(skills, &Store::new());
        let winner = out.decisions.iter().find(|d| d.decision.installs()).unwrap();
        assert_eq!(winner.packet.integrity_hash, larger.integrity_hash);
    }
}

#[test]
fn a_packet_refused_before_stage_5_takes_no_part_in_the_tie() {
    let good = packet("alpha");
    let mut tampered = newer_version(&good, "2026-11-21T10:00:00Z");
    tampered.skill_body.push_str("tampered");
    let out = merge(vec![tampered, good], &Store::new());
    assert_eq!(rejection(&out, 0).0, Stage::Integrity);
    assert_eq!(out.decisions[1].decision, Decision::New);
}

#[test]
fn receiving_without_a_sender_adds_no_empty_hop() {
    let out = merge_knowledge(
        update(vec![packet("alpha")]),
        &Store::new(),
        &StandardPolicy::default(),
        &ctx_with("", 0.5),
    );
    let prov = out.decisions[0].packet.provenance.clone().unwrap();
    assert_eq!(prov.path, vec!["node-a".to_string()]);
    assert_eq!(prov.received_from, "");
    assert_eq!(prov.hops, 1);
    // A relay that is not the last hop is added once.
    let mut relayed = packet("beta");
    relayed.provenance = Some(Provenance {
        hops: 1,
        path: vec!["node-a".into()],
        origin_confidence: Some(1.0),
        ..Default::default()
    });
    let out = merge_knowledge(
        update(vec![relayed]),
        &Store::new(),
        &StandardPolicy::default(),
        &ctx_with("node-r", 0.5),
    );
    let prov = out.decisions[0].packet.provenance.clone().unwrap();
    assert_eq!(prov.path, vec!["node-a".to_string(), "node-r".to_string()]);
    assert_eq!(prov.hops, 2);
    assert_eq!(prov.origin_confidence, Some(1.0));
}

#[test]
fn an_origin_confidence_that_is_not_a_number_or_out_of_range_is_replaced() {
    for (claimed, kept) in [(f64::NAN, 0.9), (f64::INFINITY, 0.9), (1.5, 1.0), (-2.0, 0.0)] {
        let mut p = packet("alpha");
        p.provenance = Some(Provenance {
            hops: 1,
            path: vec!["node-a".into()],
            origin_confidence: Some(claimed),
            ..Default::default()
        });
        let out = merge(vec![p], &Store::new());
        let prov = out.decisions[0].packet.provenance.clone().unwrap();
        assert_eq!(prov.origin_confidence, Some(kept), "{claimed}");
    }
}

#[test]
fn stored_packets_carry_the_protocol_version_and_their_id() {
    let mut p = packet("alpha");
    p.version = "0.9".into();
    p.id = "anything".into();
    let out = merge(vec![p.clone()], &Store::new());
    let stored = &out.decisions[0].packet;
    assert_eq!(stored.version, crate::PROTOCOL_VERSION);
    assert_eq!(stored.id, integrity::packet_id(&p.integrity_hash));
}

#[test]
fn counts_add_up_to_the_packets_of_the_update() {
    let held_v1 = packet("held");
    let mut store = Store::new();
    store.insert("held".into(), held(SkillKind::External, "node-a", &held_v1));
    let unchanged = packet("same");
    store.insert("same".into(), held(SkillKind::External, "node-a", &unchanged));
    let skills =
        vec![packet("fresh"), newer_version(&held_v1, "2026-11-21T10:00:00Z"), unchanged, packet("../bad")];
    let out = merge(skills, &store);
    let r = &out.result;
    assert_eq!((r.new_skills, r.updated_skills, r.unchanged, r.rejected_skills), (1, 1, 1, 1));
    assert_eq!(r.total(), 4);
    assert_eq!(r.conflicts.len(), 1);
}

#[test]
fn every_stage_has_its_spec_name() {
    let names = [
        (Stage::Limit, "limit"),
        (Stage::Integrity, "integrity"),
        (Stage::Name, "name"),
        (Stage::Structure, "structure"),
        (Stage::Safety, "safety"),
        (Stage::Policy, "policy"),
        (Stage::Duplicate, "duplicate"),
        (Stage::Conflict, "conflict"),
    ];
    for (stage, name) in names {
        assert_eq!(stage.name(), name);
    }
}

#[test]
fn conflict_lines_shorten_long_names_and_reasons_at_their_limits() {
    let line_for = |name: &str| -> String {
        let mut p = packet("alpha");
        p.skill_name = name.into();
        merge(vec![p], &Store::new()).result.conflicts.remove(0)
    };
    assert!(line_for("").starts_with("(unnamed): invalid name"));
    let n64 = "n".repeat(64);
    assert!(line_for(&format!("/{}", &n64[1..])).starts_with(&format!("/{}: ", &n64[1..])));
    assert!(line_for(&format!("/{n64}")).starts_with(&format!("/{}…: ", &n64[1..])));

    let prefix = "rejected by policy: ";
    let reason_line = |len: usize| -> String {
        let custom = "r".repeat(len - prefix.len());
        let says = move |_: &SkillPacket, _: &MergeContext<'_>| Err(PolicyRefusal::Custom(custom.clone()));
        merge_knowledge(update(vec![packet("alpha")]), &Store::new(), &says, &ctx())
            .result
            .conflicts
            .remove(0)
    };
    assert_eq!(reason_line(300), format!("alpha: {prefix}{}", "r".repeat(300 - prefix.len())));
    assert_eq!(reason_line(301), format!("alpha: {prefix}{}…", "r".repeat(300 - prefix.len())));
}

#[test]
fn a_raise_of_the_noise_margin_is_no_raise_and_one_past_it_is() {
    // `raises_confidence`: a raise must exceed 1e-9, the floating-point noise margin.
    let stored = 0.8;
    let p = packet_from("node-a", "alpha", 0.9, "2026-11-19T10:00:00Z");
    let store = Store::from([(
        "alpha".to_owned(),
        StoredSkill { confidence: Some(stored), ..held(SkillKind::External, "node-a", &p) },
    )]);
    let decide = |confidence: f64| {
        let arriving = SkillPacket { confidence, ..p.clone() };
        merge_knowledge(update(vec![arriving]), &store, &StandardPolicy::default(), &ctx_with("node-a", 1.0))
            .decisions[0]
            .decision
            .clone()
    };
    assert_eq!(decide(stored), Decision::Unchanged, "the held confidence");
    assert_eq!(decide(stored + 1e-9), Decision::Unchanged, "at the margin");
    let updated = Decision::Updated { previous_hash: p.integrity_hash.clone() };
    assert_eq!(decide(stored + 2e-9), updated, "past the margin");
}
