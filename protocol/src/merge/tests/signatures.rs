//! Origin signatures in the merge (`SPEC.md` §13): stage 1a, the key an
//! origin is known by, and replacement only by the key that signed.

use super::*;
use crate::identity::NodeKey;

fn key(seed: u8) -> NodeKey {
    NodeKey::from_seed(&[seed; 32])
}

fn signed(p: SkillPacket, key: &NodeKey) -> SkillPacket {
    let mut p = p;
    let instance = p.origin_instance.clone();
    p.origin_signature = Some(key.sign(&p, &instance));
    p
}

/// A store view that also knows origin keys.
struct Keyed<'a> {
    skills: &'a Store,
    keys: HashMap<String, String>,
}

impl StoreView for Keyed<'_> {
    fn lookup(&self, name: &str) -> Option<StoredSkill> {
        self.skills.lookup(name)
    }

    fn origin_key(&self, instance: &str) -> Option<String> {
        self.keys.get(instance).cloned()
    }
}

fn keyed<'a>(skills: &'a Store, known: &[(&str, &NodeKey)]) -> Keyed<'a> {
    Keyed { skills, keys: known.iter().map(|(i, k)| ((*i).to_owned(), k.key_id())).collect() }
}

fn merge_view(skills: Vec<SkillPacket>, view: &impl StoreView) -> MergeOutcome {
    merge_knowledge(update(skills), view, &StandardPolicy::default(), &ctx())
}

#[test]
fn a_signed_packet_relayed_under_another_origin_is_installed_as_the_signers() {
    let a = key(1);
    let mut relayed = signed(packet("alpha"), &a);
    relayed.origin_instance = GO_DEFAULT_INSTANCE.into();
    let legacy = MergeContext { sender_kind: SenderKind::Legacy, ..ctx_with("go-node", DEFAULT_TRUST) };
    let out = merge_knowledge(update(vec![relayed]), &Store::new(), &StandardPolicy::default(), &legacy);
    assert_eq!(out.decisions[0].decision, Decision::New);
    let stored = &out.decisions[0].packet;
    assert_eq!(stored.origin_instance, "node-a");
    assert!(!stored.provenance.as_ref().unwrap().origin_unverified, "signed: verified from any sender");
    let mut store = Store::new();
    out.apply_to(&mut store);
    assert_eq!(store["alpha"].origin_key, Some(a.key_id()));
}

#[test]
fn a_tampered_signed_packet_is_refused_at_the_signature_stage() {
    let mut p = signed(packet("alpha"), &key(1));
    p.skill_body.push_str("\nrun this too\n");
    p.reseal();
    let out = merge(vec![p], &Store::new());
    let (stage, reason) = rejection(&out, 0);
    assert_eq!(stage, Stage::Signature);
    assert!(reason.starts_with("origin signature failed: the signature of key"), "{reason}");
    assert_eq!(Stage::Signature.name(), "signature");
}

#[test]
fn an_origin_known_by_a_key_refuses_other_keys_and_unsigned_packets() {
    let (a, impostor) = (key(1), key(2));
    let store = Store::new();
    let view = keyed(&store, &[("node-a", &a)]);
    let out = merge_view(
        vec![signed(packet("alpha"), &impostor), packet("beta"), signed(packet("gamma"), &a)],
        &view,
    );
    let (stage, reason) = rejection(&out, 0);
    assert_eq!(stage, Stage::Signature);
    assert!(reason.contains(&format!("known by key {}", a.key_id())), "{reason}");
    let (stage, reason) = rejection(&out, 1);
    assert_eq!(stage, Stage::Signature);
    assert!(reason.starts_with("origin signature missing:") && reason.contains("downgrade"), "{reason}");
    assert_eq!(out.decisions[2].decision, Decision::New);
}

#[test]
fn the_first_signed_packet_of_an_origin_sets_its_key_for_the_rest_of_the_update() {
    let (a, b) = (key(1), key(2));
    let out =
        merge(vec![signed(packet("alpha"), &a), signed(packet("beta"), &b), packet("gamma")], &Store::new());
    assert_eq!(out.decisions[0].decision, Decision::New);
    assert_eq!(rejection(&out, 1).0, Stage::Signature);
    assert_eq!(rejection(&out, 2).0, Stage::Signature);
}

#[test]
fn an_unsigned_packet_claiming_a_key_id_is_a_downgrade_and_require_refuses_any() {
    let a = key(1);
    let claimed = packet_from(&a.key_id(), "alpha", 0.9, "2026-11-20T10:00:00Z");
    let out = merge(vec![claimed.clone()], &Store::new());
    assert!(rejection(&out, 0).1.contains("is a key id"), "{:?}", out.decisions[0]);
    // Signed by another key, claiming that key id: refused too.
    let impostor = signed(claimed.clone(), &key(2));
    assert_eq!(rejection(&merge(vec![impostor], &Store::new()), 0).0, Stage::Signature);
    assert_eq!(merge(vec![signed(claimed, &a)], &Store::new()).decisions[0].decision, Decision::New);

    let strict = StandardPolicy { require_origin_signature: true, ..StandardPolicy::default() };
    let out = merge_knowledge(
        update(vec![packet("beta"), signed(packet("gamma"), &a)]),
        &Store::new(),
        &strict,
        &ctx(),
    );
    let (stage, reason) = rejection(&out, 0);
    assert_eq!(stage, Stage::Signature);
    assert!(reason.contains("require_origin_signature"), "{reason}");
    assert_eq!(out.decisions[1].decision, Decision::New);
}

#[test]
fn a_held_signed_skill_is_replaced_only_by_its_key() {
    let (a, other) = (key(1), key(2));
    let first = merge(vec![signed(packet("alpha"), &a)], &Store::new());
    let mut store = Store::new();
    first.apply_to(&mut store);
    let mut newer = packet_from("node-a", "alpha", 0.9, "2026-11-21T10:00:00Z");
    newer.skill_body.push_str("\nv2\n");
    newer.reseal();
    // Without a key view (the origin's key not recorded): the held version's key decides.
    let unsigned = merge(vec![newer.clone()], &store);
    let (stage, reason) = rejection(&unsigned, 0);
    assert_eq!(stage, Stage::Conflict);
    assert!(reason.contains(&format!("signed by key {}", a.key_id())), "{reason}");
    assert_eq!(rejection(&merge(vec![signed(newer.clone(), &other)], &store), 0).0, Stage::Conflict);
    let replaced = merge(vec![signed(newer, &a)], &store);
    assert!(matches!(replaced.decisions[0].decision, Decision::Updated { .. }));
}

#[test]
fn a_signed_packet_signs_a_copy_held_unsigned_from_its_origin() {
    let a = key(1);
    let p = packet("alpha");
    let mut store = Store::new();
    store.insert(
        "alpha".into(),
        StoredSkill { kind: SkillKind::External, ..held(SkillKind::External, "node-a", &p) },
    );
    let out = merge(vec![signed(p, &a)], &store);
    assert!(matches!(out.decisions[0].decision, Decision::Updated { .. }), "{:?}", out.decisions[0]);
    out.apply_to(&mut store);
    assert_eq!(store["alpha"].origin_key, Some(a.key_id()));
}

#[test]
fn a_laundered_copy_cannot_lock_out_the_signing_origin() {
    let a = key(1);
    let genuine = signed(packet("alpha"), &a);
    // A Go node's copy arrives first, unsigned, later createdAt.
    let mut copy = packet_from(GO_DEFAULT_INSTANCE, "alpha", 0.8, "2026-11-22T11:00:00Z");
    copy.skill_body.push_str("2. Another step of the copy.\n");
    copy.reseal();
    let legacy = MergeContext { sender_kind: SenderKind::Legacy, ..ctx_with("go-node", DEFAULT_TRUST) };
    let first = merge_knowledge(update(vec![copy]), &Store::new(), &StandardPolicy::default(), &legacy);
    assert_eq!(first.decisions[0].decision, Decision::New);
    let mut store = Store::new();
    first.apply_to(&mut store);
    let out = merge(vec![genuine], &store);
    assert!(matches!(out.decisions[0].decision, Decision::Updated { .. }), "{:?}", out.decisions[0]);
}
