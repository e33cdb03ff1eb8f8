//! The origin-signature vectors of `SPEC.md` §13 (`origin-signatures.json`,
//! made by `generate_origin_signatures.py` with an independent Ed25519)
//! checked against [`ecp_protocol::identity`].

use ecp_protocol::SkillPacket;
use ecp_protocol::identity::{self, NodeKey, SignatureError};
use serde_json::Value;

use crate::spec_vectors::{Failures, cases, str_of};

const FILE: &str = "origin-signatures.json";

fn seed(input: &Value) -> NodeKey {
    let mut seed = [0u8; 32];
    hex::decode_to_slice(str_of(input, "seed"), &mut seed).expect("a 32-byte hex seed");
    NodeKey::from_seed(&seed)
}

fn packet(input: &Value) -> SkillPacket {
    serde_json::from_value(input["packet"].clone()).expect("a packet")
}

fn error_name(e: &SignatureError) -> &'static str {
    match e {
        SignatureError::BadKey => "badKey",
        SignatureError::KeyIdMismatch { .. } => "keyIdMismatch",
        SignatureError::BadSignature => "badSignature",
        SignatureError::Mismatch { .. } => "mismatch",
        SignatureError::NotTheInstanceKey { .. } => "notTheInstanceKey",
        _ => "other",
    }
}

#[test]
fn origin_signature_vectors() {
    let mut failures = Failures::new(FILE);
    let all = cases(FILE);
    for kind in ["key", "parseKeyId", "canonical", "sign", "verify"] {
        assert!(all.iter().any(|c| c["kind"] == kind), "{FILE} has no {kind} case");
    }
    for (i, case) in all.iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        match str_of(case, "kind") {
            "key" => {
                let key = seed(input);
                failures.check_eq(
                    i,
                    case,
                    "publicKey",
                    key.public_hex().as_str(),
                    str_of(expected, "publicKey"),
                );
                failures.check_eq(i, case, "keyId", key.key_id().as_str(), str_of(expected, "keyId"));
                failures.check_eq(
                    i,
                    case,
                    "keyIdOf",
                    identity::key_id_of(&key.public_hex()),
                    Some(key.key_id()),
                );
            }
            "parseKeyId" => {
                let parsed = identity::parse_key_id(str_of(input, "text"));
                failures.check_eq(i, case, "keyId", parsed.as_deref(), expected["keyId"].as_str());
            }
            "canonical" => {
                let text = identity::canonical_form(&packet(input), str_of(input, "instance"));
                failures.check_eq(i, case, "canonical", text.as_str(), str_of(expected, "canonical"));
            }
            "sign" => {
                let signature = seed(input).sign(&packet(input), str_of(input, "instance"));
                let signature = serde_json::to_value(signature).unwrap();
                failures.check_eq(i, case, "originSignature", &signature, &expected["originSignature"]);
            }
            "verify" => {
                let outcome = identity::verify(&packet(input)).map(|_| ()).map_err(|e| error_name(&e));
                let wanted = expected["error"].as_str().map_or(Ok(()), Err);
                failures.check_eq(i, case, "outcome", outcome, wanted);
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}

const NODE_FILE: &str = "node-signatures.json";

#[test]
fn node_signature_vectors() {
    use ecp_protocol::node_auth;
    use ecp_protocol::signed_auth::{NonceCache, RequestLine, body_digest};
    let mut failures = Failures::new(NODE_FILE);
    let all = cases(NODE_FILE);
    for kind in ["canonical", "sign", "verify"] {
        assert!(all.iter().any(|c| c["kind"] == kind), "{NODE_FILE} has no {kind} case");
    }
    for (i, case) in all.iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        let line = RequestLine { method: str_of(input, "method"), path_and_query: str_of(input, "target") };
        let digest = body_digest(str_of(input, "body").as_bytes());
        let int = |key: &str| input[key].as_i64().expect("an integer");
        match str_of(case, "kind") {
            "canonical" => {
                let text = node_auth::canonical_request(
                    str_of(input, "authority"),
                    str_of(input, "keyId"),
                    &line,
                    int("ts"),
                    str_of(input, "nonce"),
                    &digest,
                );
                failures.check_eq(i, case, "canonical", text.as_str(), str_of(expected, "canonical"));
            }
            "sign" => {
                let header = node_auth::sign_request(
                    &seed(input),
                    str_of(input, "authority"),
                    &line,
                    &digest,
                    int("ts"),
                    str_of(input, "nonce"),
                );
                failures.check_eq(i, case, "header", header.as_str(), str_of(expected, "header"));
            }
            "verify" => {
                let nonces = std::sync::Mutex::new(NonceCache::default());
                let answers_to = |authority: &str| authority == str_of(input, "answersTo");
                let outcome = node_auth::verify(
                    str_of(input, "header"),
                    &line,
                    &digest,
                    int("now"),
                    &nonces,
                    &answers_to,
                )
                .map(|v| v.key_id)
                .map_err(|e| e.code());
                let wanted = match expected["error"].as_str() {
                    Some(code) => Err(code),
                    None => Ok(str_of(expected, "keyId").to_owned()),
                };
                failures.check_eq(i, case, "outcome", outcome, wanted);
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}
