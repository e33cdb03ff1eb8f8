use super::*;
use crate::signed_auth::body_digest;

const NOW: i64 = 1_800_000_000;
const AT: &str = "127.0.0.1:7327";
const NONCE: &str = "0123456789abcdef0123456789abcdef";

fn line() -> RequestLine<'static> {
    RequestLine { method: "POST", path_and_query: "/ecp/skills" }
}

fn signed(key: &NodeKey) -> String {
    sign_request(key, AT, &line(), &body_digest(b"{}"), NOW, NONCE)
}

fn check(header: &str, nonces: &Mutex<NonceCache>) -> Result<VerifiedNode, NodeAuthError> {
    verify(header, &line(), &body_digest(b"{}"), NOW, nonces, &|a| a == AT)
}

#[test]
fn a_signed_request_names_its_key_and_cannot_be_replayed() {
    let key = NodeKey::from_seed(&[5; 32]);
    let nonces = Mutex::new(NonceCache::default());
    let header = signed(&key);
    let verified = check(&header, &nonces).unwrap();
    assert_eq!(verified, VerifiedNode { key_id: key.key_id(), public_key: key.public_hex() });
    assert_eq!(check(&header, &nonces), Err(NodeAuthError::Replay));
    let full = Mutex::new(NonceCache::with_capacity(1));
    check(&signed(&NodeKey::from_seed(&[6; 32])), &full).unwrap();
    assert_eq!(check(&header, &full), Err(NodeAuthError::ReplayCacheFull));
}

#[test]
fn the_header_is_bounded_and_every_parameter_is_checked() {
    let key = NodeKey::from_seed(&[5; 32]);
    let header = signed(&key);
    let nonces = Mutex::new(NonceCache::default());
    let at_limit = format!("{header};{}", "x".repeat(MAX_HEADER_LEN - header.len() - 1));
    assert_eq!(at_limit.len(), MAX_HEADER_LEN);
    let over = format!("{at_limit}x");
    let code = |h: &str| check(h, &nonces).map_err(|e| e.to_string()).unwrap_err();
    assert!(code(&at_limit).contains("is not name=value"), "{}", code(&at_limit));
    assert!(code(&over).contains("longer than 1024"), "{}", code(&over));
    for (broken, says) in [
        (header.replace("ts=", "ts=x"), "ts is not"),
        (header.replace(";nonce=", ";nonce=!"), "nonce is not"),
        (format!("{header};key=00"), "key is given twice"),
        (header.replacen("key=", "kee=", 1), "unknown parameter \"kee\""),
        (header.replace(";authority=127.0.0.1:7327", ""), "authority is missing"),
    ] {
        assert!(code(&broken).contains(says), "{broken}: {}", code(&broken));
    }
    // A point that is not on the curve is no key.
    let not_a_point = format!("key={};{}", "ff".repeat(32), header.split_once(';').unwrap().1);
    let e = check(&not_a_point, &nonces).unwrap_err();
    assert!(matches!(e, NodeAuthError::Malformed { .. } | NodeAuthError::Mismatch), "{e:?}");
}

#[test]
fn the_window_is_300_seconds_either_way() {
    let key = NodeKey::from_seed(&[5; 32]);
    let digest = body_digest(b"{}");
    for (now, ok) in [(NOW + 300, true), (NOW - 300, true), (NOW + 301, false), (NOW - 301, false)] {
        let nonces = Mutex::new(NonceCache::default());
        let outcome = verify(&signed(&key), &line(), &digest, now, &nonces, &|a| a == AT);
        assert_eq!(outcome.is_ok(), ok, "now {now}: {outcome:?}");
    }
}

#[test]
fn a_signature_is_bound_to_its_node_method_target_and_body() {
    let key = NodeKey::from_seed(&[5; 32]);
    let header = signed(&key);
    let nonces = Mutex::new(NonceCache::default());
    let digest = body_digest(b"{}");
    let elsewhere = verify(&header, &line(), &digest, NOW, &nonces, &|a| a == "127.0.0.1:7328");
    assert_eq!(elsewhere, Err(NodeAuthError::WrongAuthority { signed_for: AT.into() }));
    let get = RequestLine { method: "GET", path_and_query: "/ecp/skills" };
    assert_eq!(verify(&header, &get, &digest, NOW, &nonces, &|a| a == AT), Err(NodeAuthError::Mismatch));
    let other = body_digest(b"{ }");
    assert_eq!(verify(&header, &line(), &other, NOW, &nonces, &|a| a == AT), Err(NodeAuthError::Mismatch));
    let injected = RequestLine { method: "POST", path_and_query: "/ecp/skills\n" };
    assert_eq!(verify(&header, &injected, &digest, NOW, &nonces, &|a| a == AT), Err(NodeAuthError::Mismatch));
}

#[test]
fn the_signer_is_read_from_a_well_formed_header_only() {
    let key = NodeKey::from_seed(&[5; 32]);
    assert_eq!(signer(&signed(&key)), Ok(key.key_id()));
    assert!(matches!(signer("key=00"), Err(NodeAuthError::Malformed { .. })));
}
