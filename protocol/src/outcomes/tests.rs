use super::*;

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("RFC 3339")
}

fn claim(observer: &str, successes: u64, failures: u64, when: &str) -> OutcomeClaim {
    OutcomeClaim {
        observer: observer.into(),
        uses: successes + failures,
        successes,
        failures,
        streak: 0,
        at: at(when),
    }
}

const NOW: &str = "2026-11-26T12:00:00Z";

#[test]
fn claims_are_checked_at_their_limits_and_one_past() {
    let now = at(NOW);
    let check = |claims: &[OutcomeClaim]| check_claims(claims, now, 60);
    let many: Vec<OutcomeClaim> =
        (0..MAX_CLAIMS).map(|i| claim(&format!("o{i}"), 1, 0, "2026-11-26T11:00:00Z")).collect();
    assert_eq!(check(&many), Ok(()));
    let mut over = many.clone();
    over.push(claim("one-more", 1, 0, "2026-11-26T11:00:00Z"));
    assert_eq!(check(&over), Err(ClaimError::TooMany { count: MAX_CLAIMS + 1 }));

    let big = OutcomeClaim { uses: MAX_COUNT, successes: MAX_COUNT, streak: MAX_COUNT, ..many[0].clone() };
    assert_eq!(check(std::slice::from_ref(&big)), Ok(()));
    let bigger = OutcomeClaim { uses: MAX_COUNT + 1, successes: MAX_COUNT + 1, ..many[0].clone() };
    assert!(matches!(check(&[bigger]), Err(ClaimError::BadCounts { problem: "a count is too large", .. })));

    let unsummed = OutcomeClaim { uses: 3, ..claim("a", 1, 1, NOW) };
    assert!(matches!(check(&[unsummed]), Err(ClaimError::BadCounts { .. })));
    let streaky = OutcomeClaim { streak: 2, ..claim("a", 1, 1, NOW) };
    assert!(matches!(check(&[streaky]), Err(ClaimError::BadCounts { .. })));
    assert!(matches!(check(&[claim("", 1, 0, NOW)]), Err(ClaimError::BadObserver { .. })));
    assert!(matches!(check(&[claim("a\u{202e}b", 1, 0, NOW)]), Err(ClaimError::BadObserver { .. })));
    let twice = [claim("a", 1, 0, NOW), claim("a", 2, 0, NOW)];
    assert_eq!(check(&twice), Err(ClaimError::RepeatedObserver { observer: "a".into() }));

    // `at`: required, and at most the skew ahead.
    let unset = OutcomeClaim { at: Timestamp::go_zero(), ..claim("a", 1, 0, NOW) };
    assert!(matches!(check(&[unset]), Err(ClaimError::BadTime { .. })));
    assert_eq!(check(&[claim("a", 1, 0, "2026-11-26T12:01:00Z")]), Ok(()), "60 s ahead: the limit");
    assert!(matches!(check(&[claim("a", 1, 0, "2026-11-26T12:01:01Z")]), Err(ClaimError::BadTime { .. })));
}

#[test]
fn the_newest_claim_per_observer_is_kept_and_the_own_is_never_taken() {
    let first = combine(Vec::new(), &[claim("x", 5, 5, "2026-11-26T10:00:00Z")], "a", 0.9, "me");
    assert_eq!(first.len(), 1);
    // The same claim relayed by b, trusted less: counted once, from a.
    let relayed = combine(first.clone(), &[claim("x", 5, 5, "2026-11-26T10:00:00Z")], "b", 0.5, "me");
    assert_eq!(relayed, first);
    // An older claim by x changes nothing; a newer one replaces it.
    let older = combine(first.clone(), &[claim("x", 1, 0, "2026-11-26T09:00:00Z")], "b", 1.0, "me");
    assert_eq!(older, first);
    let newer = combine(first, &[claim("x", 6, 5, "2026-11-26T11:00:00Z")], "b", 0.5, "me");
    assert_eq!((newer.len(), newer[0].claim.uses, newer[0].sender.as_str()), (1, 11, "b"));
    // The same claim by a more trusted path: same counts, higher weight.
    let trusted = combine(newer, &[claim("x", 6, 5, "2026-11-26T11:00:00Z")], "c", 0.8, "me");
    assert_eq!((trusted[0].sender.as_str(), trusted[0].trust), ("c", 0.8));
    // A peer's word for this node's own outcomes is not taken.
    assert!(combine(Vec::new(), &[claim("me", 0, 9, NOW)], "a", 1.0, "me").is_empty());
}

#[test]
fn evidence_is_weighed_by_trust_and_one_sender_counts_as_one_observer() {
    let held = combine(Vec::new(), &[claim("a", 0, 10, NOW)], "a", 0.9, "me");
    let e = weigh(&held);
    assert_eq!((e.observers, e.senders), (1, 1));
    assert!((e.uses - 9.0).abs() < 1e-9 && (e.failures - 9.0).abs() < 1e-9);

    // One sender claiming ten observers weighs as one observer at its trust.
    let sybils: Vec<OutcomeClaim> = (0..10).map(|i| claim(&format!("s{i}"), 0, 10, NOW)).collect();
    let e = weigh(&combine(Vec::new(), &sybils, "liar", 0.5, "me"));
    assert_eq!((e.observers, e.senders), (10, 1));
    assert!((e.uses - 5.0).abs() < 1e-9, "{e:?}");
}

#[test]
fn the_rule_refuses_over_the_line_with_enough_uses_only() {
    let rule = EvidenceRule { max_failure_rate: 0.5, min_uses: 5.0 };
    let evidence = |uses: f64, failures: f64| Evidence { observers: 1, senders: 1, uses, failures };
    assert_eq!(rule.refusal(&evidence(5.0, 2.5)), None, "at the line");
    assert!(rule.refusal(&evidence(5.0, 2.6)).is_some(), "past the line");
    assert_eq!(rule.refusal(&evidence(4.9, 4.9)), None, "under min_uses");
    assert_eq!(rule.refusal(&Evidence::default()), None, "no evidence");
    let reason = rule.refusal(&evidence(9.0, 9.0)).unwrap().to_string();
    assert_eq!(
        reason,
        "peers report a failure rate of 1 over 9 uses weighed by trust (1 observers), above the limit 0.5"
    );
}
