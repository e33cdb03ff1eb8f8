//! The revocation vectors of `SPEC.md` §14 (`revocations.json`, made by
//! `generate_revocations.py` with an independent Ed25519) checked against
//! [`ecp_protocol::revocation`].

use ecp_protocol::identity::{NodeKey, SignatureError};
use ecp_protocol::revocation::{self, Revocation, RevocationError};
use serde_json::Value;

use crate::spec_vectors::{Failures, cases, str_of};

const FILE: &str = "revocations.json";

fn revocation_of(input: &Value) -> Revocation {
    serde_json::from_value(input["revocation"].clone()).expect("a revocation")
}

fn error_name(e: &RevocationError) -> &'static str {
    match e {
        RevocationError::Unsigned => "unsigned",
        RevocationError::Mismatch { .. } => "mismatch",
        RevocationError::BadDigest(_) => "badDigest",
        RevocationError::BadReason => "badReason",
        RevocationError::BadName(_) => "badName",
        RevocationError::Signature(SignatureError::KeyIdMismatch { .. }) => "keyIdMismatch",
        RevocationError::Signature(SignatureError::NotTheInstanceKey { .. }) => "notTheInstanceKey",
        RevocationError::Signature(SignatureError::BadKey) => "badKey",
        RevocationError::Signature(SignatureError::BadSignature) => "badSignature",
        _ => "other",
    }
}

#[test]
fn revocation_vectors() {
    let mut failures = Failures::new(FILE);
    let all = cases(FILE);
    for kind in ["canonical", "sign", "verify"] {
        assert!(all.iter().any(|c| c["kind"] == kind), "{FILE} has no {kind} case");
    }
    for (i, case) in all.iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        match str_of(case, "kind") {
            "canonical" => {
                let text = revocation::canonical_form(&revocation_of(input), str_of(input, "instance"));
                failures.check_eq(i, case, "canonical", text.as_str(), str_of(expected, "canonical"));
            }
            "sign" => {
                let mut seed = [0u8; 32];
                hex::decode_to_slice(str_of(input, "seed"), &mut seed).expect("a 32-byte hex seed");
                let key = NodeKey::from_seed(&seed);
                let signature = key.sign_revocation(&revocation_of(input), str_of(input, "instance"));
                let signature = serde_json::to_value(signature).unwrap();
                failures.check_eq(i, case, "originSignature", &signature, &expected["originSignature"]);
            }
            "verify" => {
                let r = revocation_of(input);
                let outcome = revocation::verify(&r).map(|_| ()).map_err(|e| error_name(&e));
                let wanted = expected["error"].as_str().map_or(Ok(()), Err);
                failures.check_eq(i, case, "outcome", outcome, wanted);
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}

#[test]
fn an_update_carries_revocations_only_when_there_are_some_and_reads_them_back() {
    let update = ecp_protocol::KnowledgeUpdate::default();
    let json = serde_json::to_value(&update).unwrap();
    assert!(json.get("revocations").is_none(), "a Go node sees its own shape: {json}");
    let r = revocation_of(&cases(FILE).iter().find(|c| c["kind"] == "verify").unwrap()["input"]);
    let with = ecp_protocol::KnowledgeUpdate { revocations: vec![r.clone()], ..update };
    let bytes = serde_json::to_vec(&with).unwrap();
    assert_eq!(ecp_protocol::KnowledgeUpdate::from_json(&bytes).unwrap().revocations, vec![r]);
    let null = br#"{"peerInstance":"p","skills":[],"revocations":null}"#;
    assert!(ecp_protocol::KnowledgeUpdate::from_json(null).unwrap().revocations.is_empty());
}
