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
