//! The merge step and approvals against a real store.

use ecp_protocol::merge::{MergeContext, receive};
use ecp_protocol::{AcceptPolicy, KnowledgeUpdate, Origin, SkillPacket, StandardPolicy, Timestamp};

use super::{IntakeMode, Limits, Merged, Mode, OnExcess, Sender, approve, merge, settle};
use crate::deletion_guard::Guard;
use crate::store::origin_limits::Per;
use crate::store::{OriginLimited, OriginLimits, Source, Store, StoreError, now};

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

/// Merges `update` from `sender`: over a limit, refused; withdrawals
/// applied; no review.
fn apply(
    store: &Store,
    update: KnowledgeUpdate,
    sender: &Sender,
    policy: &impl AcceptPolicy,
    limits: &Limits,
) -> Result<Merged, StoreError> {
    merge(store, update, sender, policy, limits, Mode::applying(OnExcess::Refuse), IntakeMode::Auto)
}

fn sender(trust: f64) -> Sender {
    Sender {
        instance: "relay".into(),
        account: "peer:http://relay".into(),
        trust,
        reshare: true,
        kind: ecp_protocol::merge::SenderKind::Current,
    }
}

const TWO_AN_HOUR: Limits =
    Limits { origin: OriginLimits { per_hour: 2, per_day: 0 }, ..Limits::NO_RATE_LIMITS };

#[test]
fn held_back_packets_are_in_no_count_and_everything_else_is_applied() {
    let (_dir, store) = store();
    let packets =
        [packet("a", "a-1", 0.9), packet("b", "b-1", 0.9), packet("a", "a-2", 0.9), packet("a", "a-3", 0.9)];
    let policy = StandardPolicy::default();
    let merged = merge(
        &store,
        update(&packets),
        &sender(1.0),
        &policy,
        &TWO_AN_HOUR,
        Mode::applying(OnExcess::HoldBack),
        IntakeMode::Auto,
    )
    .unwrap();
    assert_eq!((merged.result.new_skills, merged.result.unchanged, merged.result.rejected_skills), (3, 0, 0));
    let installed: Vec<&str> = merged.changes.iter().map(|c| c.packet.skill_name.as_str()).collect();
    assert_eq!(installed, ["a-1", "b-1", "a-2"]);
    let [e] = merged.held_back.as_slice() else { panic!("one origin held back: {:?}", merged.held_back) };
    assert_eq!((e.origin.as_str(), e.arriving, e.room), ("a", 3, 2));
    let audit = store.audit(1).unwrap();
    assert_eq!((audit[0].decision.as_str(), audit[0].peer.as_str()), ("origin-limit", "peer:relay"));
    assert!(
        audit[0].reason.starts_with("1 of 3 installs held back by the origin limit (origin \"a\""),
        "{audit:?}"
    );

    // The installs counted: the next round holds a-3 back again, the rest is unchanged.
    let again = merge(
        &store,
        update(&packets),
        &sender(1.0),
        &policy,
        &TWO_AN_HOUR,
        Mode::applying(OnExcess::HoldBack),
        IntakeMode::Auto,
    )
    .unwrap();
    assert_eq!((again.result.new_skills, again.result.unchanged), (0, 3));
    assert_eq!(again.held_back[0].room, 0);
    assert!(again.changes.is_empty());
}

#[test]
fn a_refused_merge_applies_nothing() {
    let (_dir, store) = store();
    let packets =
        [packet("a", "a-1", 0.9), packet("a", "a-2", 0.9), packet("a", "a-3", 0.9), packet("b", "b", 0.1)];
    let refused = apply(&store, update(&packets), &sender(1.0), &StandardPolicy::default(), &TWO_AN_HOUR);
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
    let merged = apply(
        &store,
        update(std::slice::from_ref(&sent)),
        &sender(0.8),
        &StandardPolicy::default(),
        &Limits::NO_RATE_LIMITS,
    )
    .unwrap();
    assert_eq!(merged.result.rejected_skills, 1);
    let [entry] = store.quarantine().unwrap().try_into().unwrap();
    assert_eq!((entry.peer.to_string(), entry.trust), ("peer:relay".to_owned(), Some(0.8)));

    let change = approve(&store, entry.id, 0.3, true, false).unwrap();
    let ctx = MergeContext {
        local_instance: store.instance_id(),
        sender: "relay",
        trust: 0.8,
        now: now(),
        sender_kind: ecp_protocol::merge::SenderKind::Current,
    };
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
    let again = approve(&store, entry.id, 0.3, true, false);
    assert!(matches!(again, Err(StoreError::QuarantineEntryNotHeld { .. })), "{again:?}");
}

#[test]
fn an_approved_signed_packet_teaches_its_origins_key_on_first_use_and_a_forged_one_does_not() {
    let (_dir, store) = store();
    let key = ecp_protocol::identity::NodeKey::from_seed(&[9; 32]);
    let signed = |name: &str| {
        let mut p = packet("signer", name, 0.5);
        p.origin_signature = Some(key.sign(&p, "signer"));
        p
    };
    let mut forged = packet("forger", "forged", 0.5);
    forged.origin_signature = Some(key.sign(&packet("forger", "other", 0.5), "forger"));
    // Below the threshold as received: both refused, held.
    let sent = update(&[signed("low"), forged]);
    apply(&store, sent, &sender(0.8), &StandardPolicy::default(), &Limits::NO_RATE_LIMITS).unwrap();
    let known = |origin: &str| {
        store.origin_keys().unwrap().into_iter().find(|k| k.instance == origin).map(|k| (k.key_id, k.source))
    };
    assert_eq!(known("signer"), None, "a refused packet teaches nothing");
    for entry in store.quarantine().unwrap() {
        let forced = entry.skill_name == "forged";
        approve(&store, entry.id, 0.3, true, forced).unwrap();
    }
    assert_eq!(known("signer"), Some((key.key_id(), "first-use".to_owned())), "learned from the approval");
    assert_eq!(known("forger"), None, "a signature that does not verify teaches nothing");
}

fn refused(prefix: &str, n: usize) -> Vec<SkillPacket> {
    (0..n).map(|i| packet("origin", &format!("{prefix}-{i}"), 0.1)).collect()
}

/// Issue #12 items 5 and 7: a flood of refusals from one sender flushes only
/// its own share, and the bookkeeping stays cheap. Prints the time of the
/// flood's transaction (`cargo test -p ecp-node --lib flood -- --nocapture`).
#[test]
fn a_flood_of_refusals_from_one_sender_evicts_only_its_own_share() {
    let (_dir, store) = store();
    let policy = StandardPolicy::default();
    let limits = Limits::NO_RATE_LIMITS;
    let max = crate::store::QuarantineCaps::DEFAULT.entries as usize;
    let first = Sender {
        instance: "honest".into(),
        account: "peer:http://honest".into(),
        trust: 1.0,
        reshare: true,
        kind: ecp_protocol::merge::SenderKind::Current,
    };
    apply(&store, update(&refused("honest", max / 4)), &first, &policy, &limits).unwrap();
    let flooder = sender(1.0);
    let flood = update(&refused("flood", max));
    let started = std::time::Instant::now();
    let merged = apply(&store, flood, &flooder, &policy, &limits).unwrap();
    let took = started.elapsed();
    println!("merge of {max} refused packets into a quarantine holding {}: {took:?}", max / 4);
    assert_eq!(merged.result.rejected_skills, max as u64);
    let held = store.quarantine().unwrap();
    assert!(held.len() <= max, "{} held", held.len());
    let honest = held.iter().filter(|e| e.peer.to_string() == "peer:honest").count();
    assert_eq!(honest, max / 4, "the honest sender's entries are all kept");
}

fn from(account: &str) -> Sender {
    Sender {
        instance: account.into(),
        account: format!("peer:http://{account}"),
        trust: 1.0,
        reshare: true,
        kind: ecp_protocol::merge::SenderKind::Current,
    }
}

fn caps(entries: u64, bytes: u64) -> Limits {
    let body = crate::store::QuarantineCaps::DEFAULT.body;
    Limits { quarantine: crate::store::QuarantineCaps { entries, bytes, body }, ..Limits::NO_RATE_LIMITS }
}

fn held_names(store: &Store) -> Vec<String> {
    store.quarantine().unwrap().into_iter().map(|e| e.skill_name).collect()
}

#[test]
fn the_entry_cap_holds_at_its_limit_and_one_past_it_the_largest_sender_loses_its_oldest() {
    let (_dir, store) = store();
    let policy = StandardPolicy::default();
    let limits = caps(4, u64::MAX);
    apply(&store, update(&refused("a", 3)), &from("a"), &policy, &limits).unwrap();
    apply(&store, update(&refused("b", 1)), &from("b"), &policy, &limits).unwrap();
    assert_eq!(held_names(&store), ["a-0", "a-1", "a-2", "b-0"], "at the cap: nothing evicted");
    apply(&store, update(&refused("b", 2)[1..]), &from("b"), &policy, &limits).unwrap();
    assert_eq!(
        held_names(&store),
        ["a-1", "a-2", "b-0", "b-1"],
        "one past: a, holding most, loses its oldest"
    );
    let audit = store.audit(1).unwrap();
    assert_eq!((audit[0].decision.as_str(), audit[0].peer.as_str()), ("quarantine-evicted", "peer:b"));
    assert!(audit[0].reason.starts_with("1 held entries of peer:http://a (ids 1..=1"), "{audit:?}");

    // b floods: it flushes only its own entries beyond its share.
    apply(&store, update(&refused("flood", 100)), &from("b"), &policy, &limits).unwrap();
    let held = held_names(&store);
    assert_eq!(held, ["a-1", "a-2", "flood-98", "flood-99"], "b keeps its newest two");
    let evictions: Vec<_> =
        store.audit(200).unwrap().into_iter().filter(|a| a.decision == "quarantine-evicted").collect();
    assert_eq!(evictions.len(), 2, "one line per sender and transaction: {evictions:?}");
}

#[test]
fn the_byte_cap_is_shared_between_senders_and_review_frees_room() {
    let (_dir, store) = store();
    let policy = StandardPolicy::default();
    let unlimited = caps(u64::MAX, u64::MAX);
    apply(&store, update(&refused("a", 2)), &from("a"), &policy, &unlimited).unwrap();
    let weight = |store: &Store| store.quarantine_held().unwrap().1;
    let two = weight(&store);
    assert!(two > 0);
    // Room for exactly the two held: at the cap, nothing goes.
    let at_cap = caps(u64::MAX, two);
    apply(&store, update(&[]), &from("a"), &policy, &at_cap).unwrap();
    assert_eq!(held_names(&store).len(), 2);
    // One byte less: a, the only holder, loses its oldest.
    apply(&store, update(&[]), &from("a"), &policy, &caps(u64::MAX, two - 1)).unwrap();
    assert_eq!(held_names(&store), ["a-1"]);
    // Dropping an entry gives its bytes back.
    let [entry] = store.quarantine().unwrap().try_into().unwrap();
    store.quarantine_drop(entry.id).unwrap();
    assert_eq!(store.quarantine_held().unwrap(), (0, 0));
}

#[test]
fn a_pull_over_the_sender_limit_installs_what_fits_of_any_origin_and_holds_the_rest_back() {
    let (_dir, store) = store();
    let limits = Limits { sender: OriginLimits { per_hour: 2, per_day: 0 }, ..Limits::NO_RATE_LIMITS };
    let policy = StandardPolicy::default();
    let packets = [packet("a", "a-1", 0.9), packet("b", "b-1", 0.9), packet("c", "c-1", 0.9)];
    let merged = merge(
        &store,
        update(&packets),
        &sender(1.0),
        &policy,
        &limits,
        Mode::applying(OnExcess::HoldBack),
        IntakeMode::Auto,
    )
    .unwrap();
    let installed: Vec<&str> = merged.changes.iter().map(|c| c.packet.skill_name.as_str()).collect();
    assert_eq!(installed, ["a-1", "b-1"], "at the limit");
    let [e] = merged.held_back.as_slice() else { panic!("{:?}", merged.held_back) };
    assert_eq!((e.per, e.origin.as_str(), e.arriving, e.room), (Per::Sender, "peer:http://relay", 3, 2));
    // Another sender is not held to relay's count.
    let other = merge(
        &store,
        update(&packets),
        &from("other"),
        &policy,
        &limits,
        Mode::applying(OnExcess::HoldBack),
        IntakeMode::Auto,
    )
    .unwrap();
    assert_eq!((other.result.new_skills, other.result.unchanged), (1, 2));
    // One past the limit for relay: refused whole when pushed.
    let refused = apply(&store, update(&[packet("d", "d-1", 0.9)]), &sender(1.0), &policy, &limits);
    let Err(StoreError::OriginLimited(limited)) = refused else { panic!("{refused:?}") };
    assert!(limited.to_string().starts_with("sender \"peer:http://relay\" is over its limit"), "{limited}");
}

#[test]
fn a_packet_over_the_body_cap_is_kept_as_an_excerpt_with_its_size_and_hash_and_cannot_be_approved() {
    let policy = StandardPolicy::default();
    let sent = packet("origin", "big", 0.1);
    let json = serde_json::to_string(&sent).unwrap();
    let size = json.len() as u64;
    let held_under = |body: u64| {
        let (dir, store) = store();
        let mut limits = caps(u64::MAX, u64::MAX);
        limits.quarantine.body = body;
        apply(&store, update(std::slice::from_ref(&sent)), &sender(1.0), &policy, &limits).unwrap();
        let [entry] = store.quarantine().unwrap().try_into().unwrap();
        (dir, store, entry)
    };
    let (_dir, store, whole) = held_under(size);
    assert!(whole.truncated.is_none(), "at the cap: kept whole");
    assert!(store.quarantined(whole.id).unwrap().1.is_some());

    let (_dir, store, cut) = held_under(size - 1);
    let t = cut.truncated.clone().expect("one byte past the cap: an excerpt");
    assert_eq!(t.size as u64, size);
    assert_eq!(t.sha256, hex::encode(<sha2::Sha256 as sha2::Digest>::digest(json.as_bytes())));
    assert!(store.quarantined(cut.id).unwrap().1.is_none());
    assert!(store.quarantine_held().unwrap().1 < size + 200, "the excerpt is what weighs");
    let refused = approve(&store, cut.id, 0.5, true, false);
    let Err(StoreError::CannotApprove(message)) = refused else { panic!("{refused:?}") };
    assert!(message.contains("only an excerpt was kept"), "{message}");
    assert_eq!(store.quarantine().unwrap().len(), 1, "still held, for review or drop");
    store.quarantine_drop(cut.id).unwrap();
}

#[test]
fn a_megabyte_refused_packet_costs_the_quarantine_an_excerpt() {
    let (_dir, store) = store();
    let mut big = packet("origin", "huge", 0.9);
    big.skill_body = "x".repeat(1024 * 1024);
    let limits = caps(u64::MAX, u64::MAX);
    let merged = apply(&store, update(&[big]), &sender(1.0), &StandardPolicy::default(), &limits).unwrap();
    assert_eq!(merged.result.rejected_skills, 1, "over max_skill_bytes");
    let (entries, bytes) = store.quarantine_held().unwrap();
    assert_eq!(entries, 1);
    assert!(bytes <= 20 * 1024, "{bytes} bytes held for a 1 MiB packet");
    assert!(store.quarantine().unwrap()[0].truncated.as_ref().is_some_and(|t| t.size > 1024 * 1024));
}

#[test]
fn history_keeps_the_configured_depth_of_superseded_versions() {
    let (_dir, store) = store();
    store.set_history_depth(2);
    let origin = Origin::new("me", "someone", "linux/amd64", "1.0");
    let versions = |store: &Store| -> Vec<i64> {
        let (_, _, versions) = store.skill("s").unwrap().unwrap();
        versions.into_iter().map(|v| v.version).collect()
    };
    for n in 1..=3 {
        let body = format!("# s\n\nVersion {n}: run the tests before every commit.\n");
        store
            .put_local(&SkillPacket::new(&origin, "s", "d", &body, 0.9, now()), None, Source::Operator)
            .unwrap();
    }
    assert_eq!(versions(&store), [1, 2, 3], "at the depth: two superseded kept");
    let body = "# s\n\nVersion 4: run the tests before every commit.\n";
    store.put_local(&SkillPacket::new(&origin, "s", "d", body, 0.9, now()), None, Source::Operator).unwrap();
    assert_eq!(versions(&store), [2, 3, 4], "one past: the oldest is pruned");
    store.set_history_depth(0);
    store.tombstone("s", Source::Operator).unwrap();
    assert_eq!(versions(&store), [5], "depth 0 keeps the current version only");
}

#[test]
fn review_intake_holds_each_version_once_under_a_new_id_and_remembers_verdicts() {
    use crate::store::Verdict;
    let (_dir, store) = store();
    let policy = StandardPolicy::default();
    let review = |packets: &[SkillPacket]| {
        merge(
            &store,
            update(packets),
            &sender(1.0),
            &policy,
            &Limits::NO_RATE_LIMITS,
            Mode::applying(OnExcess::Refuse),
            IntakeMode::Review,
        )
        .unwrap()
    };
    let v1 = packet("a", "alpha", 0.9);
    let merged = review(std::slice::from_ref(&v1));
    assert!(merged.changes[0].withheld, "held for review");
    let first = store.inbox().unwrap();
    assert_eq!(first.len(), 1);
    // A newer version replaces the entry under a new id.
    let mut v2 = v1.clone();
    v2.skill_body.push_str("Then push.\n");
    v2.created_at = Timestamp::from_unix(v1.created_at.unix_seconds() + 1, 0).unwrap();
    let v2 = SkillPacket::new(
        &Origin::new("a", "someone", "linux/amd64", "1.0"),
        "alpha",
        "From a peer",
        &v2.skill_body,
        0.9,
        v2.created_at,
    );
    review(std::slice::from_ref(&v2));
    let second = store.inbox().unwrap();
    assert_eq!(second.len(), 1, "one entry per skill");
    assert!(second[0].id > first[0].id, "a new id for new content");
    let held = store.skill("alpha").unwrap().unwrap().0;
    assert_eq!(second[0].integrity_hash, held.integrity_hash, "the entry shows what the store holds");
    assert_eq!(
        store.inbox_entry(first[0].id).unwrap_err().to_string(),
        format!("no pending inbox entry with id {}", first[0].id)
    );
    // Rejected, withdrawn, sent again with the same content: not offered again, still withheld.
    store.transaction(|tx| tx.decide(second[0].id, Verdict::Rejected)).unwrap();
    let mut tomb = v2.clone();
    tomb.deprecated = true;
    let tomb = SkillPacket {
        created_at: Timestamp::from_unix(v2.created_at.unix_seconds() + 1, 0).unwrap(),
        ..tomb
    };
    let withdrawn = review(&[tomb]);
    assert!(!withdrawn.changes[0].withheld, "a tombstone is never held");
    let again = SkillPacket::new(
        &Origin::new("a", "someone", "linux/amd64", "1.0"),
        "alpha",
        "From a peer",
        &v2.skill_body,
        0.9,
        Timestamp::from_unix(v2.created_at.unix_seconds() + 2, 0).unwrap(),
    );
    let merged = review(&[again]);
    assert_eq!(merged.result.updated_skills, 1);
    assert!(merged.changes[0].withheld, "the rejected version stays out");
    assert!(store.inbox().unwrap().is_empty(), "and is not offered again");
    assert!(store.withheld_from_folder().unwrap().contains("alpha"));
    // Auto intake holds nothing.
    let auto =
        apply(&store, update(&[packet("a", "beta", 0.9)]), &sender(1.0), &policy, &Limits::NO_RATE_LIMITS)
            .unwrap();
    assert!(!auto.changes[0].withheld);
    assert!(store.inbox().unwrap().is_empty());
}

#[test]
fn deferred_withdrawals_are_in_no_count_and_a_bulk_of_them_is_held_once_per_sender() {
    let (_dir, store) = store();
    let (policy, limits, auto) = (StandardPolicy::default(), Limits::NO_RATE_LIMITS, IntakeMode::Auto);
    let live: Vec<SkillPacket> = (0..8).map(|i| packet("a", &format!("s-{i}"), 0.9)).collect();
    apply(&store, update(&live), &sender(1.0), &policy, &limits).unwrap();
    let tombs: Vec<SkillPacket> =
        live.iter().map(|p| SkillPacket { deprecated: true, ..p.clone() }).collect();

    // Six withdrawals and a new skill: the new one is applied, the withdrawals set aside as they came.
    let mut sent = tombs[..6].to_vec();
    sent.push(packet("a", "fresh", 0.9));
    let merged =
        merge(&store, update(&sent), &sender(1.0), &policy, &limits, Mode::deferring(OnExcess::Refuse), auto)
            .unwrap();
    assert_eq!((merged.result.new_skills, merged.result.updated_skills, merged.result.total()), (1, 0, 1));
    assert_eq!(merged.withdrawals, tombs[..6], "as received: not lowered, no provenance added");
    assert!(!store.skill("s-0").unwrap().unwrap().0.deprecated);

    // 6 of the 9 skills held from the sender: over max_bulk_delete and over half.
    let guard = Guard::default();
    let settled = settle(&store, merged.withdrawals, &sender(1.0), guard, &policy, &limits, auto).unwrap();
    assert_eq!((settled.result.held_skills, settled.result.total()), (6, 6));
    assert!(settled.changes.is_empty());
    assert!(settled.result.held[0].starts_with("s-0: deletion held: 6 of the 9 skills held from peer:relay"));
    let [held] = store.held_deletions().unwrap().try_into().unwrap();
    assert_eq!(
        (held.source, held.via.as_deref(), held.names.len()),
        (Source::Peer("relay".into()), Some("peer:http://relay"), 6)
    );
    assert!(!store.skill("s-0").unwrap().unwrap().0.deprecated, "nothing withdrawn");

    // The same withdrawals again (a round from 0) stay in that deletion.
    let again = settle(&store, tombs[..6].to_vec(), &sender(1.0), guard, &policy, &limits, auto).unwrap();
    assert_eq!(again.result.held_skills, 6);
    assert!(again.result.held[5].ends_with(&format!("already held as deletion {}", held.id)), "{again:?}");
    assert_eq!(store.held_deletions().unwrap().len(), 1);

    // Two of nine pass and are applied.
    let passed = settle(&store, tombs[6..].to_vec(), &sender(1.0), guard, &policy, &limits, auto).unwrap();
    assert_eq!((passed.result.updated_skills, passed.result.held_skills), (2, 0));
    assert!(store.skill("s-7").unwrap().unwrap().0.deprecated);
}
