//! Unit tests of ECP/1.2 signing: every refusal path, and the nonce cache bounds.

use std::sync::Mutex;

use super::*;

const NOW: i64 = 1_795_000_000;
const NONCE: &str = "0123456789abcdef0123456789abcdef";
/// The node the tests' requests are signed for and sent to.
const NODE_A: &str = "node-a.example:7327";

fn answers_as_a(authority: &str) -> bool {
    authority == NODE_A
}

fn key(id: &str, secret: &str) -> SigningKey {
    SigningKey::new(id, secret.as_bytes()).unwrap()
}

fn get_skills() -> RequestLine<'static> {
    RequestLine { method: "GET", path_and_query: "/ecp/skills?since=5" }
}

type Presented = (String, String, String, String, String);

fn presented(h: &SignatureHeaders) -> Presented {
    let authority = h.authority.clone().unwrap_or_default();
    (h.key_id.clone(), h.timestamp.to_string(), h.nonce.clone(), h.signature.clone(), authority)
}

fn as_presented(t: &Presented) -> PresentedHeaders<'_> {
    PresentedHeaders {
        authority: Some(&t.4),
        key_id: Some(&t.0),
        timestamp: Some(&t.1),
        nonce: Some(&t.2),
        signature: Some(&t.3),
    }
}

fn verify(
    verifier: &RequestVerifier,
    headers: &Presented,
    request: &RequestLine<'_>,
    body: &[u8],
    now: i64,
    nonces: &Mutex<NonceCache>,
) -> Result<String, SignedAuthError> {
    verifier
        .verify(&as_presented(headers), request, body, now, nonces, &answers_as_a)
        .map(|v| v.key.id().to_owned())
}

#[test]
fn a_signed_request_verifies_once_and_its_replay_is_refused() {
    let k = key("k1", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let nonces = Mutex::new(NonceCache::default());
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW + 10, &nonces), Ok("k1".to_owned()));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW + 11, &nonces), Err(SignedAuthError::Replay));
    assert_eq!(nonces.lock().unwrap().len(), 1);
}

#[test]
fn every_bound_part_changes_the_signature() {
    let k = key("k1", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let post = RequestLine { method: "POST", path_and_query: "/ecp/skills" };
    let h = presented(&sign_request(&k, NODE_A, &post, b"{\"a\":1}", NOW, NONCE));
    let cases: [(&str, RequestLine<'_>, &[u8]); 4] = [
        ("method", RequestLine { method: "PUT", path_and_query: "/ecp/skills" }, b"{\"a\":1}"),
        ("path", RequestLine { method: "POST", path_and_query: "/ecp/skillz" }, b"{\"a\":1}"),
        ("query", RequestLine { method: "POST", path_and_query: "/ecp/skills?x=1" }, b"{\"a\":1}"),
        ("body", post, b"{\"a\":2}"),
    ];
    for (what, request, body) in cases {
        let nonces = Mutex::new(NonceCache::default());
        assert_eq!(
            verify(&verifier, &h, &request, body, NOW, &nonces),
            Err(SignedAuthError::SignatureMismatch),
            "changing the {what} must break the signature"
        );
        assert!(nonces.lock().unwrap().is_empty(), "a bad signature must not enter the nonce cache");
    }
    // Method case does not matter: it is upper-cased in the canonical string.
    let nonces = Mutex::new(NonceCache::default());
    let lower = RequestLine { method: "post", path_and_query: "/ecp/skills" };
    assert!(verify(&verifier, &h, &lower, b"{\"a\":1}", NOW, &nonces).is_ok());
}

#[test]
fn tampered_timestamp_nonce_or_key_id_are_refused() {
    let k1 = key("k1", "one");
    let k2 = key("k2", "one"); // same secret, other id: the id is signed too
    let verifier = RequestVerifier::new(vec![k1.clone(), k2]);
    let h = presented(&sign_request(&k1, NODE_A, &get_skills(), b"", NOW, NONCE));
    let nonces = Mutex::new(NonceCache::default());
    let mut t = h.clone();
    t.1 = (NOW + 1).to_string();
    assert_eq!(
        verify(&verifier, &t, &get_skills(), b"", NOW, &nonces),
        Err(SignedAuthError::SignatureMismatch)
    );
    let mut t = h.clone();
    t.2 = "ffffffffffffffffffffffffffffffff".into();
    assert_eq!(
        verify(&verifier, &t, &get_skills(), b"", NOW, &nonces),
        Err(SignedAuthError::SignatureMismatch)
    );
    let mut t = h.clone();
    t.0 = "k2".into();
    assert_eq!(
        verify(&verifier, &t, &get_skills(), b"", NOW, &nonces),
        Err(SignedAuthError::SignatureMismatch)
    );
}

#[test]
fn unknown_keys_and_wrong_secrets_are_refused() {
    let signer = key("k1", "right");
    let h = presented(&sign_request(&signer, NODE_A, &get_skills(), b"", NOW, NONCE));
    let nonces = Mutex::new(NonceCache::default());
    let other_id = RequestVerifier::new(vec![key("k9", "right")]);
    assert_eq!(verify(&other_id, &h, &get_skills(), b"", NOW, &nonces), Err(SignedAuthError::UnknownKey));
    let other_secret = RequestVerifier::new(vec![key("k1", "wrong")]);
    assert_eq!(
        verify(&other_secret, &h, &get_skills(), b"", NOW, &nonces),
        Err(SignedAuthError::SignatureMismatch)
    );
    let none = RequestVerifier::new(Vec::new());
    assert!(none.is_empty());
    assert_eq!(verify(&none, &h, &get_skills(), b"", NOW, &nonces), Err(SignedAuthError::UnknownKey));
}

#[test]
fn rotation_accepts_every_configured_key() {
    let old = key("2026-10", "old secret");
    let new = key("2026-11", "new secret");
    let verifier = RequestVerifier::new(vec![old.clone(), new.clone()]);
    let nonces = Mutex::new(NonceCache::default());
    for (k, nonce) in [(&old, "aaaaaaaaaaaaaaaa"), (&new, "bbbbbbbbbbbbbbbb")] {
        let h = presented(&sign_request(k, NODE_A, &get_skills(), b"", NOW, nonce));
        assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW, &nonces), Ok(k.id().to_owned()));
    }
}

#[test]
fn clock_skew_is_refused_beyond_the_window_in_both_directions() {
    let k = key("k1", "s");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    for (offset, ok) in [(-300, true), (300, true), (-301, false), (301, false), (-100_000, false)] {
        let nonces = Mutex::new(NonceCache::default());
        let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW + offset, NONCE));
        let result = verify(&verifier, &h, &get_skills(), b"", NOW, &nonces);
        if ok {
            assert!(result.is_ok(), "offset {offset}: {result:?}");
        } else {
            assert_eq!(
                result,
                Err(SignedAuthError::ClockSkew { skew_secs: offset, max_secs: MAX_CLOCK_SKEW_SECS }),
                "offset {offset}"
            );
        }
    }
}

#[test]
fn missing_and_malformed_headers_name_the_header() {
    let k = key("k1", "s");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let good = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    let nonces = Mutex::new(NonceCache::default());
    let full = as_presented(&good);
    let missing = [
        (PresentedHeaders { key_id: None, ..full }, KEY_ID_HEADER),
        (PresentedHeaders { timestamp: None, ..full }, TIMESTAMP_HEADER),
        (PresentedHeaders { nonce: None, ..full }, NONCE_HEADER),
        (PresentedHeaders { signature: None, ..full }, SIGNATURE_HEADER),
    ];
    for (p, header) in missing {
        assert!(p.any());
        let err = verifier.verify(&p, &get_skills(), b"", NOW, &nonces, &answers_as_a).unwrap_err();
        assert_eq!(err, SignedAuthError::Missing(header));
        assert!(err.to_string().contains(header));
    }
    assert!(!PresentedHeaders::default().any());
    let malformed = [
        (PresentedHeaders { key_id: Some("has space"), ..full }, KEY_ID_HEADER),
        (PresentedHeaders { key_id: Some(""), ..full }, KEY_ID_HEADER),
        (PresentedHeaders { timestamp: Some("-5"), ..full }, TIMESTAMP_HEADER),
        (PresentedHeaders { timestamp: Some("1.5"), ..full }, TIMESTAMP_HEADER),
        (PresentedHeaders { timestamp: Some("9999999999999999999999"), ..full }, TIMESTAMP_HEADER),
        (PresentedHeaders { nonce: Some("short"), ..full }, NONCE_HEADER),
        (PresentedHeaders { nonce: Some("0123456789abcdef/0123"), ..full }, NONCE_HEADER),
        (PresentedHeaders { signature: Some("zz"), ..full }, SIGNATURE_HEADER),
    ];
    for (p, header) in malformed {
        let err = verifier.verify(&p, &get_skills(), b"", NOW, &nonces, &answers_as_a).unwrap_err();
        assert!(
            matches!(err, SignedAuthError::Malformed { header: h, .. } if h == header),
            "{header}: {err:?}"
        );
    }
    assert!(nonces.lock().unwrap().is_empty());
}

#[test]
fn nonces_are_forgotten_only_after_the_window_and_the_cache_is_bounded() {
    let mut cache = NonceCache::with_capacity(2);
    assert_eq!(cache.admit("k", "n1", NOW, NOW, 300), Ok(()));
    assert_eq!(cache.admit("k", "n1", NOW, NOW + 300, 300), Err(SignedAuthError::Replay));
    // Same nonce under another key is another entry.
    assert_eq!(cache.admit("k2", "n1", NOW, NOW, 300), Ok(()));
    assert_eq!(cache.admit("k", "n3", NOW, NOW, 300), Err(SignedAuthError::ReplayCacheFull));
    assert_eq!(cache.len(), 2);
    // Past timestamp + window both entries expire and room is made.
    assert_eq!(cache.admit("k", "n3", NOW + 301, NOW + 301, 300), Ok(()));
    assert_eq!(cache.len(), 1);
}

#[test]
fn a_signed_response_verifies_and_tampering_is_detected() {
    let k = key("k1", "s3cret");
    let exchange = Exchange { request: get_skills(), request_nonce: NONCE, status: 200 };
    let body = br#"{"skills":[]}"#;
    let h = presented(&sign_response(&k, &exchange, body, NOW));
    assert_eq!(h.2, NONCE, "a response echoes the request nonce");
    let check = |t: &Presented, exchange: &Exchange<'_>, body: &[u8]| {
        verify_response(&k, &as_presented(t), exchange, body, NOW + 1, MAX_CLOCK_SKEW_SECS)
    };
    assert_eq!(check(&h, &exchange, body), Ok(()));
    assert_eq!(check(&h, &exchange, br#"{"skills":[1]}"#), Err(SignedAuthError::SignatureMismatch));
    assert_eq!(
        check(&h, &Exchange { status: 304, ..exchange }, body),
        Err(SignedAuthError::SignatureMismatch)
    );
    let other = Exchange { request_nonce: "ffffffffffffffffffffffffffffffff", ..exchange };
    assert_eq!(check(&h, &other, body), Err(SignedAuthError::NonceMismatch));
    let mut t = h.clone();
    t.0 = "k2".into();
    assert_eq!(check(&t, &exchange, body), Err(SignedAuthError::UnknownKey));
    let old = presented(&sign_response(&k, &exchange, body, NOW - 1000));
    assert!(matches!(check(&old, &exchange, body), Err(SignedAuthError::ClockSkew { .. })));
    let digest = body_digest(body);
    assert_eq!(sign_response_digest(&k, &exchange, &digest, NOW), sign_response(&k, &exchange, body, NOW));
}

#[test]
fn canonical_strings_have_the_specified_layout() {
    let empty = body_digest(b"");
    assert_eq!(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(
        canonical_request(NODE_A, "k1", "get", "/ecp/skills?since=5", 7, NONCE, &empty),
        format!("ECP-1.2-REQUEST-FOR\n{NODE_A}\nk1\nGET\n/ecp/skills?since=5\n7\n{NONCE}\n{empty}")
    );
    let exchange = Exchange { request: get_skills(), request_nonce: NONCE, status: 304 };
    assert_eq!(
        canonical_response("k1", &exchange, 8, &empty),
        format!("ECP-1.2-RESPONSE\nk1\n304\nGET\n/ecp/skills?since=5\n8\n{NONCE}\n{empty}")
    );
}

#[test]
fn keys_follow_the_id_rule_and_never_print_their_secret() {
    assert!(SigningKey::new("a b", "x").is_err());
    assert!(SigningKey::new("x".repeat(65), "x").is_err());
    let k = key("peer-b.2026", "super-secret-value");
    let shown = format!("{k:?}");
    assert!(shown.contains("SigningKey") && shown.contains("peer-b.2026"), "{shown}");
    assert!(!shown.contains("super-secret-value") && !shown.contains("secret:"), "{shown}");
}

#[test]
fn the_most_negative_window_neither_panics_nor_forgets_nonces() {
    // Found by fuzzing (signature): `with_max_skew(i64::MIN)` overflowed in
    // `abs`; in release builds the window stayed negative, every nonce expired
    // as it was stored, and a replay got through.
    let k = key("k1", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]).with_max_skew(i64::MIN);
    assert_eq!(verifier.max_skew_secs(), i64::MAX);
    let nonces = Mutex::new(NonceCache::default());
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW, &nonces), Ok("k1".to_owned()));
    // Time passes and another request makes the cache forget what expired.
    let later = NOW + 1_000_000;
    let other = presented(&sign_request(&k, NODE_A, &get_skills(), b"", later, &NONCE.replace('0', "1")));
    assert_eq!(verify(&verifier, &other, &get_skills(), b"", later, &nonces), Ok("k1".to_owned()));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", later, &nonces), Err(SignedAuthError::Replay));
    // The cache itself takes the most negative window as the largest.
    let mut cache = NonceCache::with_capacity(4);
    assert_eq!(cache.admit("k1", NONCE, NOW, NOW, i64::MIN), Ok(()));
    assert_eq!(cache.admit("k1", NONCE, NOW, NOW + 1_000_000, i64::MIN), Err(SignedAuthError::Replay));
}

#[test]
fn the_skew_check_measures_the_exact_distance() {
    // A difference beyond i64 saturates; it must not slip into a window of i64::MAX.
    assert!(check_skew(0, i64::MIN, i64::MAX).is_err());
    assert_eq!(check_skew(i64::MAX, i64::MAX - 5, 5), Ok(()));
    assert_eq!(
        check_skew(NOW + 301, NOW, -300),
        Err(SignedAuthError::ClockSkew { skew_secs: 301, max_secs: 300 })
    );
}

#[test]
fn a_line_break_in_the_method_or_target_cannot_shift_signed_text() {
    let k = key("k1", "s");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    // Method "GET\n/1" with target "/2", and method "GET" with target
    // "/1\n/2", give the same canonical string (digits do not change case).
    let signed_as = RequestLine { method: "GET\n/1", path_and_query: "/2" };
    let h = presented(&sign_request(&k, NODE_A, &signed_as, b"", NOW, NONCE));
    let shifted = RequestLine { method: "GET", path_and_query: "/1\n/2" };
    let nonces = Mutex::new(NonceCache::default());
    assert_eq!(verify(&verifier, &h, &shifted, b"", NOW, &nonces), Err(SignedAuthError::SignatureMismatch));
    assert_eq!(verify(&verifier, &h, &signed_as, b"", NOW, &nonces), Err(SignedAuthError::SignatureMismatch));
    assert!(nonces.lock().unwrap().is_empty());
}

#[test]
fn a_request_signed_for_one_node_is_refused_by_another_with_the_same_key() {
    let k = key("mesh", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    let answers_as_b = |a: &str| a == "node-b.example:7327";
    let at_b = verifier.verify(&as_presented(&h), &get_skills(), b"", NOW, &Mutex::default(), &answers_as_b);
    assert_eq!(at_b, Err(SignedAuthError::WrongAuthority { signed_for: NODE_A.to_owned() }));
    // Claiming B's authority in the header breaks the signature, which covers A's.
    let mut relabelled = h.clone();
    relabelled.4 = "node-b.example:7327".into();
    let at_b = verifier.verify(
        &as_presented(&relabelled),
        &get_skills(),
        b"",
        NOW,
        &Mutex::default(),
        &answers_as_b,
    );
    assert_eq!(at_b, Err(SignedAuthError::SignatureMismatch));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW, &Mutex::default()), Ok("mesh".to_owned()));
}

#[test]
fn a_request_without_an_authority_is_refused_as_unbound() {
    let k = key("mesh", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    let p = PresentedHeaders { authority: None, ..as_presented(&h) };
    assert!(p.any());
    let err = verifier.verify(&p, &get_skills(), b"", NOW, &Mutex::default(), &answers_as_a).unwrap_err();
    assert_eq!((err.code(), err.to_string().contains(AUTHORITY_HEADER)), ("unbound_signature", true));
}

#[test]
fn the_authority_is_compared_lower_cased_and_signed_as_sent() {
    let k = key("mesh", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let h = presented(&sign_request(&k, "Node-A.Example:7327", &get_skills(), b"", NOW, NONCE));
    assert_eq!(verify(&verifier, &h, &get_skills(), b"", NOW, &Mutex::default()), Ok("mesh".to_owned()));
    assert_eq!(authority("Node-A.EXAMPLE", 7327), NODE_A);
    assert_eq!(authority("[::1]", 80), "[::1]:80");
}

#[test]
fn malformed_authorities_are_refused_by_rule() {
    let longest = format!("{}:65535", "a".repeat(MAX_AUTHORITY_LEN - 6));
    assert!(is_valid_authority(&longest));
    assert!(!is_valid_authority(&format!("a{longest}")), "one past the limit");
    for good in ["a:1", "127.0.0.1:7327", "[::1]:7327", "[fe80::1]:1", "node_a.local:65535"] {
        assert!(is_valid_authority(good), "{good}");
    }
    for bad in
        ["", "node-a", "node-a:", ":7327", "node-a:123456", "node a:1", "a:1x", "[::1:7327", "[]:1", "a/b:1"]
    {
        assert!(!is_valid_authority(bad), "{bad}");
    }
    let k = key("mesh", "s3cret");
    let verifier = RequestVerifier::new(vec![k.clone()]);
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    let p = PresentedHeaders { authority: Some("node-a.example"), ..as_presented(&h) };
    let err = verifier.verify(&p, &get_skills(), b"", NOW, &Mutex::default(), &|_| true).unwrap_err();
    assert_eq!(
        err,
        SignedAuthError::Malformed {
            header: AUTHORITY_HEADER,
            rule: "host:port, the port written, at most 262 characters"
        }
    );
}

#[test]
fn a_verifier_without_keys_is_empty_and_refuses_every_key() {
    let empty = RequestVerifier::new(Vec::new());
    assert!(empty.is_empty());
    assert!(!RequestVerifier::new(vec![key("k1", "s")]).is_empty());
    let k = key("k1", "s");
    let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE));
    let nonces = Mutex::new(NonceCache::default());
    assert_eq!(verify(&empty, &h, &get_skills(), b"", NOW, &nonces), Err(SignedAuthError::UnknownKey));
}

#[test]
fn any_one_of_the_five_headers_is_an_attempt_at_ecp_1_2() {
    let none = PresentedHeaders::default();
    assert!(!none.any());
    let one_each = [
        PresentedHeaders { authority: Some(NODE_A), ..none },
        PresentedHeaders { key_id: Some("k1"), ..none },
        PresentedHeaders { timestamp: Some("1"), ..none },
        PresentedHeaders { nonce: Some(NONCE), ..none },
        PresentedHeaders { signature: Some("00"), ..none },
    ];
    for p in one_each {
        assert!(p.any(), "{p:?}");
    }
    let read = PresentedHeaders::read(|name| (name == NONCE_HEADER).then_some(NONCE));
    assert_eq!(read, PresentedHeaders { nonce: Some(NONCE), ..none });
}

#[test]
fn header_rules_hold_at_their_limits_and_one_past() {
    assert!(is_valid_key_id(&"k".repeat(MAX_KEY_ID_LEN)));
    assert!(!is_valid_key_id(&"k".repeat(MAX_KEY_ID_LEN + 1)));
    assert!(is_valid_key_id("a.b_c-D9"));
    assert!(!is_valid_key_id("a/b"));
    assert!(SigningKey::new("k".repeat(MAX_KEY_ID_LEN), "s").is_ok());

    assert!(is_valid_nonce(&"n".repeat(*NONCE_LEN.start())));
    assert!(!is_valid_nonce(&"n".repeat(NONCE_LEN.start() - 1)));
    assert!(is_valid_nonce(&"n".repeat(*NONCE_LEN.end())));
    assert!(!is_valid_nonce(&"n".repeat(NONCE_LEN.end() + 1)));
    assert!(is_valid_nonce("abcdefgh_-ABCDEF"));
    assert!(!is_valid_nonce("abcdefgh.-ABCDEF"));

    assert_eq!(parse_timestamp(&"9".repeat(12)), Ok(999_999_999_999));
    assert!(parse_timestamp(&"9".repeat(13)).is_err());
    assert!(parse_timestamp("").is_err());
    assert_eq!(parse_timestamp("0"), Ok(0));

    // host (253) + ':' + port (5) + brackets' worth of room: 262 in all.
    let host_of = |len: usize| "h".repeat(len);
    assert!(is_valid_authority(&format!("{}:65535", host_of(MAX_AUTHORITY_LEN - 6))));
    assert!(!is_valid_authority(&format!("{}:65535", host_of(MAX_AUTHORITY_LEN - 5))));
    assert!(is_valid_authority("h:1"));
    assert!(!is_valid_authority("h:"));
    assert!(!is_valid_authority("h:123456"));
    assert!(!is_valid_authority("h:12a"));
    assert!(!is_valid_authority(":80"));
    assert!(!is_valid_authority("[]:80"));
    assert!(!is_valid_authority("[::1:80"));
    assert!(is_valid_authority("[::1]:80"));
    assert!(is_valid_authority("[::ffff:10.0.0.1]:80"));
    assert!(!is_valid_authority("[::g]:80"));
    assert!(!is_valid_authority("Host:80"), "lower case only");
    assert!(!is_valid_authority("host"));
    assert_eq!(authority("Node-A.Example", 7327), "node-a.example:7327");
    assert_eq!(authority("[::1]", 80), "[::1]:80");
}

#[test]
fn the_skew_window_of_a_verifier_takes_effect() {
    let k = key("k1", "s");
    let verifier = RequestVerifier::new(vec![k.clone()]).with_max_skew(10);
    assert_eq!(verifier.max_skew_secs(), 10);
    assert_eq!(RequestVerifier::new(vec![k.clone()]).with_max_skew(-10).max_skew_secs(), 10);
    for (offset, ok) in [(10, true), (-10, true), (11, false), (-11, false)] {
        let nonces = Mutex::new(NonceCache::default());
        let h = presented(&sign_request(&k, NODE_A, &get_skills(), b"", NOW + offset, NONCE));
        let result = verify(&verifier, &h, &get_skills(), b"", NOW, &nonces);
        assert_eq!(result.is_ok(), ok, "offset {offset}: {result:?}");
    }
}

#[test]
fn a_nonce_is_held_to_the_end_of_its_window_inclusive() {
    let mut cache = NonceCache::with_capacity(8);
    assert!(cache.is_empty());
    assert_eq!(cache.admit("k", NONCE, NOW, NOW, 300), Ok(()));
    assert!(!cache.is_empty());
    assert_eq!(cache.len(), 1);
    assert_eq!(
        cache.admit("k", NONCE, NOW, NOW + 300, 300),
        Err(SignedAuthError::Replay),
        "at the end of the window"
    );
    assert_eq!(cache.admit("k", "other-nonce-0000", NOW, NOW + 301, 300), Ok(()));
    assert_eq!(cache.len(), 1, "the first nonce was forgotten one second past its window");
    // A capacity of zero holds one.
    let mut tiny = NonceCache::with_capacity(0);
    assert_eq!(tiny.admit("k", NONCE, NOW, NOW, 300), Ok(()));
    assert_eq!(tiny.admit("k", "other-nonce-0000", NOW, NOW, 300), Err(SignedAuthError::ReplayCacheFull));
}

#[test]
fn a_response_carries_four_headers_and_a_request_five() {
    let k = key("k1", "s");
    let exchange = Exchange { request: get_skills(), request_nonce: NONCE, status: 200 };
    let response = sign_response(&k, &exchange, b"{}", NOW);
    let names: Vec<_> = response.pairs().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, [KEY_ID_HEADER, TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER]);
    let request = sign_request(&k, NODE_A, &get_skills(), b"", NOW, NONCE);
    let pairs = request.pairs();
    assert_eq!(pairs[0], (AUTHORITY_HEADER, NODE_A.to_owned()));
    assert_eq!(pairs[2], (TIMESTAMP_HEADER, NOW.to_string()));
    assert_eq!(pairs.len(), 5);
    assert_eq!(
        sign_response_digest(&k, &exchange, &body_digest(b"{}"), NOW),
        response,
        "signing a digest is signing its body"
    );
}
