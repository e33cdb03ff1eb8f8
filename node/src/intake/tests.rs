//! The merge step and approvals against a real store.

use ecp_protocol::merge::{MergeContext, receive};
use ecp_protocol::{KnowledgeUpdate, Origin, SkillPacket, StandardPolicy};

use super::{OnExcess, Sender, approve, merge};
use crate::store::{OriginLimited, OriginLimits, Store, StoreError, now};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

fn packet(origin: &str, name: &str, confidence: f64) -> SkillPacket {
    let origin = Origin::new(origin, "someone", "linux/amd64", "1.0");
    SkillPacket::new(
        &origin,
        name,
        "From a peer",
        &format!("# {name}\n\nRun the tests before every commit, then read what they say.\n"),
        confidence,
        now(),
    )
}

fn update(packets: &[SkillPacket]) -> KnowledgeUpdate {
    KnowledgeUpdate { skills: packets.to_vec(), ..KnowledgeUpdate::default() }
}

fn sender(trust: f64) -> Sender {
    Sender { instance: "relay".into(), trust, reshare: true }
}

const TWO_AN_HOUR: OriginLimits = OriginLimits { per_hour: 2, per_day: 0 };

#[test]
fn held_back_packets_are_in_no_count_and_everything_else_is_applied() {
    let (_dir, store) = store();
    let packets =
        [packet("a", "a-1", 0.9), packet("b", "b-1", 0.9), packet("a", "a-2", 0.9), packet("a", "a-3", 0.9)];
    let policy = StandardPolicy::default();
    let merged =
        merge(&store, update(&packets), &sender(1.0), &policy, &TWO_AN_HOUR, OnExcess::HoldBack).unwrap();
    assert_eq!((merged.result.new_skills, merged.result.unchanged, merged.result.rejected_skills), (3, 0, 0));
    let installed: Vec<&str> = merged.changes.iter().map(|c| c.packet.skill_name.as_str()).collect();
    assert_eq!(installed, ["a-1", "b-1", "a-2"]);
    let [e] = merged.held_back.as_slice() else { panic!("one origin held back: {:?}", merged.held_back) };
    assert_eq!((e.origin.as_str(), e.arriving, e.room), ("a", 3, 2));
    let audit = store.audit(1).unwrap();
    assert_eq!((audit[0].decision.as_str(), audit[0].peer.as_str()), ("origin-limit", "peer:relay"));
    assert!(
        audit[0].reason.starts_with("1 of 3 new skills held back by the origin limit (origin \"a\""),
        "{audit:?}"
    );

    // The installs counted: the next round holds a-3 back again, the rest is unchanged.
    let again =
        merge(&store, update(&packets), &sender(1.0), &policy, &TWO_AN_HOUR, OnExcess::HoldBack).unwrap();
    assert_eq!((again.result.new_skills, again.result.unchanged), (0, 3));
    assert_eq!(again.held_back[0].room, 0);
    assert!(again.changes.is_empty());
}

#[test]
fn a_refused_merge_applies_nothing() {
    let (_dir, store) = store();
    let packets =
        [packet("a", "a-1", 0.9), packet("a", "a-2", 0.9), packet("a", "a-3", 0.9), packet("b", "b", 0.1)];
    let refused = merge(
        &store,
        update(&packets),
        &sender(1.0),
        &StandardPolicy::default(),
        &TWO_AN_HOUR,
        OnExcess::Refuse,
    );
    let Err(StoreError::OriginLimited(OriginLimited { excess })) = refused else { panic!("{refused:?}") };
    assert_eq!((excess[0].arriving, excess[0].room), (3, 2));
    assert_eq!(store.sequence().unwrap(), 0);
    assert!(store.audit(10).unwrap().is_empty());
    assert!(store.quarantine().unwrap().is_empty(), "not even the refused packet is kept");
}

#[test]
fn an_approval_lowers_confidence_by_the_trust_at_refusal_as_an_accepting_merge_would() {
    let (_dir, store) = store();
    // Below the accept threshold as received: refused, held with the sender's trust.
    let sent = packet("origin", "low", 0.5);
    let merged = merge(
        &store,
        update(std::slice::from_ref(&sent)),
        &sender(0.8),
        &StandardPolicy::default(),
        &OriginLimits::OFF,
        OnExcess::Refuse,
    )
    .unwrap();
    assert_eq!(merged.result.rejected_skills, 1);
    let [entry] = store.quarantine().unwrap().try_into().unwrap();
    assert_eq!((entry.peer.to_string(), entry.trust), ("peer:relay".to_owned(), Some(0.8)));

    let change = approve(&store, entry.id, 0.3, true).unwrap();
    let ctx = MergeContext { local_instance: store.instance_id(), sender: "relay", trust: 0.8, now: now() };
    let mut expected = receive(sent, &ctx);
    expected.reseal();
    assert_eq!(change.packet.confidence, expected.confidence);
    assert!((change.packet.confidence - 0.4).abs() < 1e-12, "0.5 × 0.8: {}", change.packet.confidence);
    let provenance = change.packet.provenance.as_ref().unwrap();
    assert_eq!(
        (provenance.path.clone(), provenance.received_from.as_str()),
        (vec!["origin".to_owned(), "relay".to_owned()], "relay")
    );
    assert_eq!(change.packet.integrity_hash, expected.integrity_hash);
    assert!(store.quarantine().unwrap().is_empty());
    let audit = store.audit(1).unwrap();
    assert_eq!((audit[0].peer.as_str(), audit[0].decision.as_str()), ("operator", "quarantine-approve"));
    assert!(audit[0].reason.contains("from peer:relay, refused at stage policy;"), "{audit:?}");
    assert!(audit[0].reason.contains("at confidence 0.4 (trust 0.8)"), "{audit:?}");
    let again = approve(&store, entry.id, 0.3, true);
    assert!(matches!(again, Err(StoreError::QuarantineEntryNotHeld { .. })), "{again:?}");
}
