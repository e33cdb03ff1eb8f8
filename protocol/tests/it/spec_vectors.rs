//! The test vectors of `SPEC.md` (`protocol/testdata/vectors/*.json`, made by
//! `generate.py` beside them) checked against this crate.
//!
//! Every file is `{description, format, cases: [...]}`; each test walks one
//! file, collects every mismatch as `"<file> case <i> (<description>): ..."`
//! and fails once with the whole list, so one run shows all that is wrong.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use ecp_protocol::error::{AuthError, IntegrityError};
use ecp_protocol::legacy_auth::{self, LegacyVerifier};
use ecp_protocol::signed_auth::{
    self, Exchange, NonceCache, PresentedHeaders, RequestLine, RequestVerifier, SigningKey,
};
use ecp_protocol::{
    Decision, KnowledgeUpdate, MergeContext, SkillKind, StandardPolicy, StoredSkill, Timestamp, integrity,
    merge_knowledge, skill_doc,
};
use serde_json::Value;

/// Files checked by a test below; `every_vector_file_is_checked` keeps this
/// list and the directory in step.
const FILES: &[&str] = &[
    "hashes.json",
    "legacy-hmac.json",
    "signed-auth.json",
    "times.json",
    "merge-reference-push.json",
    "merge-chain.json",
    "merge-resolution.json",
    "merge-tombstone.json",
    "merge-duplicates.json",
    "merge-stripped-body.json",
    "merge-loop.json",
    "merge-checks.json",
    "merge-bundles.json",
    // Checked in bundle_vectors.rs.
    "bundle-digest.json",
    "bundle-content.json",
    // Checked in bundle_scan.rs.
    "bundle-scan.json",
    // Checked in origin_signatures.rs (both).
    "origin-signatures.json",
    "node-signatures.json",
    // Checked in revocations.rs.
    "revocations.json",
    // Checked in proposals.rs.
    "proposals.json",
];

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join("vectors")
}

/// The cases of one vector file.
pub(crate) fn cases(file: &str) -> Vec<Value> {
    let path = vectors_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: cannot read: {e}"));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: not JSON: {e}"));
    for key in ["description", "format"] {
        assert!(doc[key].is_string(), "{file}: the file has no {key:?} string");
    }
    doc["cases"].as_array().unwrap_or_else(|| panic!("{file}: no cases array")).clone()
}

/// Collects the mismatches of one file, each naming the file and case.
pub(crate) struct Failures {
    file: &'static str,
    list: Vec<String>,
}

impl Failures {
    pub(crate) fn new(file: &'static str) -> Self {
        Failures { file, list: Vec::new() }
    }

    pub(crate) fn add(&mut self, index: usize, case: &Value, what: String) {
        let description = case["description"].as_str().unwrap_or("");
        self.list.push(format!("{} case {index} ({description}): {what}", self.file));
    }

    pub(crate) fn check_eq<T: PartialEq + std::fmt::Debug>(
        &mut self,
        index: usize,
        case: &Value,
        what: &str,
        actual: T,
        expected: T,
    ) {
        if actual != expected {
            self.add(index, case, format!("{what}: expected {expected:?}, got {actual:?}"));
        }
    }

    pub(crate) fn finish(self) {
        assert!(
            self.list.is_empty(),
            "{} mismatch(es) in {}:\n{}",
            self.list.len(),
            self.file,
            self.list.join("\n")
        );
    }
}

pub(crate) fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or_else(|| panic!("field {key:?} is not a string in {value}"))
}

#[test]
fn every_vector_file_is_checked() {
    let mut on_disk: Vec<String> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut known: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
    known.sort();
    assert_eq!(on_disk, known, "testdata/vectors/*.json and FILES in spec_vectors.rs differ");
}

#[test]
fn hash_vectors() {
    let file = "hashes.json";
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        match str_of(case, "kind") {
            "body" => {
                let body = str_of(input, "skillBody");
                let hash = integrity::body_hash(body);
                failures.check_eq(i, case, "integrityHash", hash.as_str(), str_of(expected, "integrityHash"));
                failures.check_eq(
                    i,
                    case,
                    "id",
                    integrity::packet_id(&hash).as_str(),
                    str_of(expected, "id"),
                );
            }
            "user_id" => {
                let hash = integrity::user_hash(str_of(input, "userId"));
                failures.check_eq(
                    i,
                    case,
                    "originUserHash",
                    hash.as_str(),
                    str_of(expected, "originUserHash"),
                );
            }
            "verify" => {
                let outcome = match integrity::verify_body(
                    str_of(input, "skillBody"),
                    str_of(input, "integrityHash"),
                ) {
                    Ok(()) => "ok",
                    Err(IntegrityError::MalformedHash { .. }) => "malformed",
                    Err(IntegrityError::BodyHashMismatch { .. }) => "mismatch",
                    Err(other) => panic!("{file} case {i}: unexpected error {other:?}"),
                };
                failures.check_eq(i, case, "outcome", outcome, str_of(expected, "outcome"));
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}

#[test]
fn legacy_hmac_vectors() {
    let file = "legacy-hmac.json";
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        let secret = str_of(input, "secret").as_bytes();
        match str_of(case, "kind") {
            "sign" => {
                let payload = str_of(input, "payload");
                let want = str_of(expected, "x_ecp_hmac");
                failures.check_eq(
                    i,
                    case,
                    "sign",
                    legacy_auth::sign(secret, payload.as_bytes()).as_str(),
                    want,
                );
                let by_method = match str_of(input, "method") {
                    "POST" => legacy_auth::sign_post(secret, payload.as_bytes()),
                    _ => legacy_auth::sign_get(secret, payload),
                };
                failures.check_eq(i, case, "sign_post/sign_get", by_method.as_str(), want);
            }
            "verify" => {
                let mut verifier = LegacyVerifier::new(secret.to_vec());
                verifier.accept_full_url = input["accept_full_url"].as_bool().unwrap();
                let header = input["header"].as_str();
                let verdict = match str_of(input, "method") {
                    "POST" => verifier.verify_post(str_of(input, "body").as_bytes(), header),
                    _ => verifier.verify_get(str_of(input, "path"), input["host"].as_str(), header),
                };
                let outcome = match verdict {
                    Ok(()) => "ok",
                    Err(AuthError::MissingSignature) => "missing",
                    Err(AuthError::MalformedSignature) => "malformed",
                    Err(AuthError::SignatureMismatch) => "mismatch",
                    Err(other) => panic!("{file} case {i}: unexpected error {other:?}"),
                };
                failures.check_eq(i, case, "outcome", outcome, str_of(expected, "outcome"));
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}

#[test]
fn time_vectors() {
    let file = "times.json";
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        let decoded = serde_json::from_value::<Timestamp>(input.clone());
        // The same value inside a message, where a Go peer puts it.
        let in_packet = serde_json::from_value::<ecp_protocol::SkillPacket>(
            serde_json::json!({ "skillName": "x", "createdAt": input }),
        );
        if expected["error"].as_bool() == Some(true) {
            if let Ok(t) = decoded {
                failures.add(i, case, format!("expected a decode error, got {t}"));
            }
            if in_packet.is_ok() {
                failures.add(i, case, "a packet with this createdAt decoded".to_owned());
            }
            continue;
        }
        let canonical = str_of(expected, "canonical");
        match decoded {
            Err(e) => failures.add(i, case, format!("does not decode: {e}")),
            Ok(t) => {
                failures.check_eq(i, case, "Display", t.to_string().as_str(), canonical);
                failures.check_eq(
                    i,
                    case,
                    "JSON encoding",
                    serde_json::to_value(t).unwrap(),
                    Value::String(canonical.to_owned()),
                );
                failures.check_eq(
                    i,
                    case,
                    "is_go_zero",
                    t.is_go_zero(),
                    expected["is_zero"].as_bool().unwrap(),
                );
            }
        }
        match in_packet {
            Err(e) => failures.add(i, case, format!("a packet with this createdAt does not decode: {e}")),
            Ok(p) => failures.check_eq(
                i,
                case,
                "createdAt in a packet",
                p.created_at.to_string().as_str(),
                canonical,
            ),
        }
    }
    failures.finish();
}

fn policy_from(input: &Value) -> StandardPolicy {
    let mut policy = StandardPolicy::default();
    let Some(p) = input.get("policy") else { return policy };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
    };
    if let Some(v) = p.get("min_confidence") {
        policy.min_confidence = v.as_f64().unwrap();
    }
    if let Some(v) = p.get("max_packets") {
        policy.max_packets = v.as_u64().unwrap() as usize;
    }
    if let Some(v) = p.get("allow_origins") {
        policy.allow_origins = Some(strings(v));
    }
    if let Some(v) = p.get("deny_origins") {
        policy.deny_origins = strings(v);
    }
    if let Some(v) = p.get("max_clock_skew_secs") {
        policy.max_clock_skew_secs = v.as_i64().unwrap();
    }
    if let Some(v) = p.get("max_files") {
        policy.bundle.max_files = v.as_u64().unwrap() as usize;
    }
    if let Some(v) = p.get("max_file_bytes") {
        policy.bundle.max_file_bytes = v.as_u64().unwrap();
    }
    if let Some(v) = p.get("max_bundle_bytes") {
        policy.bundle.max_bundle_bytes = v.as_u64().unwrap();
    }
    policy
}

fn store_from(input: &Value) -> HashMap<String, StoredSkill> {
    input["store"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let kind = match str_of(s, "kind") {
                "local" => SkillKind::Local,
                "external" => SkillKind::External,
                other => panic!("store kind {other:?}"),
            };
            let skill = StoredSkill {
                kind,
                origin: str_of(s, "origin").to_owned(),
                integrity_hash: str_of(s, "integrityHash").to_owned(),
                created_at: Timestamp::parse(str_of(s, "createdAt")).unwrap(),
                deprecated: s["deprecated"].as_bool().unwrap(),
                confidence: s["confidence"].as_f64(),
                bundle_digest: s["bundleDigest"].as_str().unwrap_or_default().to_owned(),
                origin_verified: s["originVerified"].as_bool().unwrap_or(true),
                content_key: s["contentKey"].as_str().map(str::to_owned),
                origin_key: s["originKey"].as_str().map(str::to_owned),
            };
            (str_of(s, "name").to_owned(), skill)
        })
        .collect()
}

fn decision_name(decision: &Decision) -> &'static str {
    match decision {
        Decision::New => "new",
        Decision::Updated { .. } => "updated",
        Decision::Unchanged => "unchanged",
        Decision::Echo => "echo",
        Decision::Rejected { .. } => "rejected",
    }
}

fn check_merge_file(file: &'static str) {
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        let now = Timestamp::parse(str_of(input, "now")).unwrap();
        let ctx = MergeContext {
            local_instance: str_of(input, "local_instance"),
            sender: str_of(input, "sender"),
            trust: input["trust"].as_f64().unwrap(),
            now,
            sender_kind: match input["sender_kind"].as_str() {
                Some("legacy") => ecp_protocol::merge::SenderKind::Legacy,
                _ => ecp_protocol::merge::SenderKind::Current,
            },
        };
        // Decode the update as a node does, from the bytes of the request.
        let bytes = serde_json::to_vec(&input["update"]).unwrap();
        let update = KnowledgeUpdate::from_json(&bytes)
            .unwrap_or_else(|e| panic!("{file} case {i}: the update does not decode: {e}"));
        let outcome = merge_knowledge(update, &store_from(input), &policy_from(input), &ctx);

        // The wire answer.
        let actual = serde_json::to_value(&outcome.result).unwrap();
        let want = &expected["result"];
        if expected["conflicts_match"].as_str() == Some("prefix") {
            let strip = |v: &Value| {
                let mut v = v.clone();
                v.as_object_mut().unwrap().remove("conflicts");
                v
            };
            failures.check_eq(i, case, "result counts", strip(&actual), strip(want));
            let got: Vec<&str> =
                actual["conflicts"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
            let prefixes: Vec<&str> =
                want["conflicts"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
            let all_match =
                got.len() == prefixes.len() && got.iter().zip(&prefixes).all(|(g, p)| g.starts_with(p));
            if !all_match {
                failures.add(
                    i,
                    case,
                    format!("conflicts: expected lines starting with {prefixes:#?}, got {got:#?}"),
                );
            }
        } else {
            failures.check_eq(i, case, "result", &actual, want);
        }
        let total = outcome.result.total() as usize;
        let packets = input["update"]["skills"].as_array().unwrap().len();
        failures.check_eq(i, case, "new + updated + unchanged + rejected", total, packets);

        // The decisions.
        let expected_decisions = expected["decisions"].as_array().unwrap();
        failures.check_eq(i, case, "number of decisions", outcome.decisions.len(), expected_decisions.len());
        for (want, got) in expected_decisions.iter().zip(&outcome.decisions) {
            let k = want["index"].as_u64().unwrap() as usize;
            let at = |what: &str| format!("packet {k}: {what}");
            failures.check_eq(i, case, &at("index"), got.index, k);
            let name = decision_name(&got.decision);
            if name != str_of(want, "decision") {
                let why = match &got.decision {
                    Decision::Rejected { reason, .. } => format!(" ({reason})"),
                    _ => String::new(),
                };
                failures.add(i, case, at(&format!("expected {}, got {name}{why}", str_of(want, "decision"))));
                continue;
            }
            match &got.decision {
                Decision::Rejected { stage, reason } => {
                    failures.check_eq(i, case, &at("stage"), stage.name(), str_of(want, "stage"));
                    let prefix = str_of(want, "reason_prefix");
                    if !reason.starts_with(prefix) {
                        failures.add(
                            i,
                            case,
                            at(&format!("reason {reason:?} does not start with {prefix:?}")),
                        );
                    }
                }
                Decision::Updated { previous_hash } => {
                    if let Some(h) = want["previous_hash"].as_str() {
                        failures.check_eq(i, case, &at("previous_hash"), previous_hash.as_str(), h);
                    }
                }
                _ => {}
            }
            if got.decision.installs() {
                check_stored(&mut failures, i, case, k, want, &got.packet, now);
            }
        }
    }
    failures.finish();
}

/// Checks the packet a `new` or `updated` decision hands the caller to store.
fn check_stored(
    failures: &mut Failures,
    i: usize,
    case: &Value,
    k: usize,
    want: &Value,
    stored: &ecp_protocol::SkillPacket,
    now: Timestamp,
) {
    let at = |what: &str| format!("packet {k}: stored {what}");
    let confidence = want["stored_confidence"].as_f64().unwrap();
    if (stored.confidence - confidence).abs() > 1e-9 {
        failures.add(i, case, at(&format!("confidence: expected {confidence}, got {}", stored.confidence)));
    }
    if let Err(e) = stored.verify() {
        failures.add(i, case, at(&format!("packet does not verify: {e}")));
    }
    failures.check_eq(
        i,
        case,
        &at("id"),
        stored.id.as_str(),
        integrity::packet_id(&stored.integrity_hash).as_str(),
    );
    failures.check_eq(i, case, &at("version"), stored.version.as_str(), "1.0");
    let Some(prov) = &stored.provenance else {
        failures.add(i, case, at("packet has no provenance"));
        return;
    };
    let path: Vec<&str> = want["path"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    failures.check_eq(i, case, &at("path"), prov.path.iter().map(String::as_str).collect::<Vec<_>>(), path);
    failures.check_eq(i, case, &at("receivedAt"), prov.received_at, Some(now));
    if let Some(hops) = want["hops"].as_u64() {
        failures.check_eq(i, case, &at("hops"), u64::from(prov.hops), hops);
    }
    if let Some(c) = want["origin_confidence"].as_f64()
        && prov.origin_confidence.is_none_or(|got| (got - c).abs() > 1e-9)
    {
        failures.add(
            i,
            case,
            at(&format!("originConfidence: expected {c}, got {:?}", prov.origin_confidence)),
        );
    }
    if let Some(from) = want["received_from"].as_str() {
        failures.check_eq(i, case, &at("receivedFrom"), prov.received_from.as_str(), from);
    }
    if let Some(h) = want["stored_integrity_hash"].as_str() {
        failures.check_eq(
            i,
            case,
            &at("integrityHash (body kept byte for byte)"),
            stored.integrity_hash.as_str(),
            h,
        );
    }
    if let Some(d) = want["stored_bundle_digest"].as_str() {
        failures.check_eq(i, case, &at("bundleDigest"), stored.bundle_digest.as_str(), d);
    }
    if let Some(d) = want["stored_deprecated"].as_bool() {
        failures.check_eq(i, case, &at("deprecated"), stored.deprecated, d);
    }
    if let Some(prefix) = want["stored_body_prefix"].as_str()
        && !stored.skill_body.starts_with(prefix)
    {
        failures.add(i, case, at(&format!("body does not start with {prefix:?}: {:?}", stored.skill_body)));
    }
    if let Some(suffix) = want["stored_body_suffix"].as_str()
        && !stored.skill_body.ends_with(suffix)
    {
        failures.add(
            i,
            case,
            at(&format!("body does not end with the received body: {:?}", stored.skill_body)),
        );
    }
    if let Some(fm) = want.get("stored_frontmatter") {
        match skill_doc::parse(&stored.skill_body) {
            Ok(doc) => match doc.frontmatter {
                Some(front) => {
                    failures.check_eq(
                        i,
                        case,
                        &at("frontmatter name"),
                        front.name.as_deref(),
                        fm["name"].as_str(),
                    );
                    failures.check_eq(
                        i,
                        case,
                        &at("frontmatter description"),
                        front.description.as_deref(),
                        fm["description"].as_str(),
                    );
                }
                None => failures.add(i, case, at("body has no frontmatter")),
            },
            Err(e) => failures.add(i, case, at(&format!("body does not parse: {e}"))),
        }
    }
}

#[test]
fn merge_reference_push_vectors() {
    check_merge_file("merge-reference-push.json");
}

#[test]
fn merge_chain_vectors() {
    check_merge_file("merge-chain.json");
}

#[test]
fn merge_resolution_vectors() {
    check_merge_file("merge-resolution.json");
}

#[test]
fn merge_tombstone_vectors() {
    check_merge_file("merge-tombstone.json");
}

#[test]
fn merge_duplicates_vectors() {
    check_merge_file("merge-duplicates.json");
}

#[test]
fn merge_stripped_body_vectors() {
    check_merge_file("merge-stripped-body.json");
}

#[test]
fn merge_loop_vectors() {
    check_merge_file("merge-loop.json");
}

#[test]
fn merge_bundles_vectors() {
    check_merge_file("merge-bundles.json");
}

#[test]
fn merge_checks_vectors() {
    check_merge_file("merge-checks.json");
}

fn i64_of(value: &Value, key: &str) -> i64 {
    value[key].as_i64().unwrap_or_else(|| panic!("field {key:?} is not an integer in {value}"))
}

#[test]
fn signed_auth_vectors() {
    let file = "signed-auth.json";
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let (input, expected) = (&case["input"], &case["expected"]);
        let request =
            RequestLine { method: str_of(input, "method"), path_and_query: str_of(input, "path_and_query") };
        let body = input["body"].as_str().unwrap_or("").as_bytes();
        match str_of(case, "kind") {
            "sign-request" => {
                let key = SigningKey::new(str_of(input, "key_id"), str_of(input, "secret")).unwrap();
                let (ts, nonce) = (i64_of(input, "timestamp"), str_of(input, "nonce"));
                let digest = signed_auth::body_digest(body);
                failures.check_eq(i, case, "body_sha256", digest.as_str(), str_of(expected, "body_sha256"));
                let authority = str_of(input, "authority");
                let canonical = signed_auth::canonical_request(
                    authority,
                    key.id(),
                    request.method,
                    request.path_and_query,
                    ts,
                    nonce,
                    &digest,
                );
                failures.check_eq(i, case, "canonical", canonical.as_str(), str_of(expected, "canonical"));
                let signed = signed_auth::sign_request(&key, authority, &request, body, ts, nonce);
                failures.check_eq(
                    i,
                    case,
                    "signature",
                    signed.signature.as_str(),
                    str_of(expected, "signature"),
                );
            }
            "sign-response" => {
                let key = SigningKey::new(str_of(input, "key_id"), str_of(input, "secret")).unwrap();
                let status = u16::try_from(i64_of(input, "status")).unwrap();
                let exchange = Exchange { request, request_nonce: str_of(input, "request_nonce"), status };
                let ts = i64_of(input, "timestamp");
                let digest = signed_auth::body_digest(body);
                let canonical = signed_auth::canonical_response(key.id(), &exchange, ts, &digest);
                failures.check_eq(i, case, "canonical", canonical.as_str(), str_of(expected, "canonical"));
                let signed = signed_auth::sign_response(&key, &exchange, body, ts);
                failures.check_eq(
                    i,
                    case,
                    "signature",
                    signed.signature.as_str(),
                    str_of(expected, "signature"),
                );
            }
            "verify-request" => {
                let keys = input["keys"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| SigningKey::new(str_of(k, "id"), str_of(k, "secret")).unwrap())
                    .collect();
                let verifier = RequestVerifier::new(keys);
                let now = i64_of(input, "now");
                let mut cache = NonceCache::default();
                for seen in input["seen_nonces"].as_array().unwrap() {
                    let (key_id, nonce) = (seen[0].as_str().unwrap(), seen[1].as_str().unwrap());
                    cache.admit(key_id, nonce, now, now, signed_auth::MAX_CLOCK_SKEW_SECS).unwrap();
                }
                let nonces = Mutex::new(cache);
                let headers = &input["headers"];
                let presented = PresentedHeaders::read(|name| headers[name].as_str());
                let answers_to: Vec<&str> =
                    input["answers_to"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
                let answers = |authority: &str| answers_to.contains(&authority);
                let outcome = match verifier.verify(&presented, &request, body, now, &nonces, &answers) {
                    Ok(_) => "ok",
                    Err(e) => e.code(),
                };
                failures.check_eq(i, case, "outcome", outcome, str_of(expected, "outcome"));
            }
            other => failures.add(i, case, format!("unknown kind {other:?}")),
        }
    }
    failures.finish();
}
