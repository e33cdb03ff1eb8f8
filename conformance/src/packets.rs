//! Requests built from raw JSON values, and the hashes and signatures
//! computed with `sha2`/`hmac` directly — never through `ecp-protocol` — so
//! a bug shared by a node and the protocol crate cannot pass unnoticed. The
//! ECP/1.2 canonical strings (SPEC §10.1.3, §10.1.6) are written here from
//! the SPEC text and checked against `protocol/testdata/vectors/signed-auth.json`.
//!
//! Every skill the suite writes is named `ecpconf-<run>-<tag>` (SPEC §7.6.1
//! allows 64 characters), and every instance it claims to be is
//! `ecpconf-peer-<run>` or `ecpconf-origin-<run>`.

use chrono::{DateTime, SecondsFormat, Utc};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes` (SPEC §4.1.1).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Lowercase hex HMAC-SHA256 of `payload` under `secret` (SPEC §6.1.1).
pub fn hmac_hex(secret: &[u8], payload: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(payload);
    hex::encode(mac.finalize().into_bytes())
}

/// The first line of a canonical request (SPEC §10.1.3).
pub const REQUEST_PREFIX: &str = "ECP-1.2-REQUEST-FOR";

/// The first line of the unbound canonical request of earlier nodes, which
/// named no authority (SPEC §10.1.3.5): a node MUST refuse it.
pub const UNBOUND_REQUEST_PREFIX: &str = "ECP-1.2-REQUEST";

/// The first line of a canonical response (SPEC §10.1.6).
pub const RESPONSE_PREFIX: &str = "ECP-1.2-RESPONSE";

/// How far a timestamp may be from the verifier's clock, seconds (SPEC §10.1.4, check 4).
pub const MAX_SKEW_SECS: i64 = 300;

/// The canonical request of SPEC §10.1.3: eight lines joined by LF, without
/// a final LF. `authority` is the `host:port` the request is signed for;
/// `target` is the path and query exactly as on the request line;
/// `timestamp` is the header's text (a check may sign a malformed one).
pub fn canonical_request(
    authority: &str,
    key_id: &str,
    method: &str,
    target: &str,
    timestamp: &str,
    nonce: &str,
    body: &[u8],
) -> String {
    // A blob PUT is signed over the digest its path names (SPEC §12.8.5),
    // so a body that does not match it still reaches the digest check.
    let body_sha = match blob_put_digest(method, target) {
        Some(digest) => digest.to_owned(),
        None => sha256_hex(body),
    };
    [REQUEST_PREFIX, authority, key_id, &method.to_ascii_uppercase(), target, timestamp, nonce, &body_sha]
        .join("\n")
}

/// The digest a `PUT /ecp/blobs/{sha256}` names (SPEC §12.8.5), for any
/// path prefix before `/ecp/blobs/`.
pub fn blob_put_digest<'a>(method: &str, path: &'a str) -> Option<&'a str> {
    let (_, digest) = path.split_once("/ecp/blobs/")?;
    (method.eq_ignore_ascii_case("PUT") && is_lower_hex64(digest)).then_some(digest)
}

/// The canonical response of SPEC §10.1.6: eight lines joined by LF. `body`
/// is the answer after removing any Content-Encoding, empty for a 304.
pub fn canonical_response(
    key_id: &str,
    status: u16,
    method: &str,
    target: &str,
    timestamp: &str,
    request_nonce: &str,
    body: &[u8],
) -> String {
    let status = status.to_string();
    let method = method.to_ascii_uppercase();
    [RESPONSE_PREFIX, key_id, &status, &method, target, timestamp, request_nonce, &sha256_hex(body)]
        .join("\n")
}

/// Whether `id` is a key id (SPEC §10.1.1.1): 1 to 64 of `A-Z a-z 0-9 . _ -`.
pub fn is_key_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether `nonce` follows SPEC §10.1.2: 16 to 128 of `A-Z a-z 0-9 _ -`.
pub fn is_nonce(nonce: &str) -> bool {
    (16..=128).contains(&nonce.len())
        && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// The Unix seconds of an `X-ECP-Timestamp` (SPEC §10.1.2: 1 to 12 decimal digits).
pub fn parse_timestamp(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The current Unix time, seconds.
pub fn unix_now() -> i64 {
    Utc::now().timestamp()
}

/// A fresh nonce: 32 lowercase hex characters, never the same twice in a
/// process. Uniqueness is what a verifier's replay memory needs; it is
/// drawn from std's randomly seeded hasher, a counter and the clock, so the
/// suite needs no random-number crate.
pub fn fresh_nonce() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let random = RandomState::new().hash_one(n);
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    sha256_hex(format!("{random:016x}-{n}-{nanos}-{}", std::process::id()).as_bytes())[..32].to_owned()
}

/// A time `offset_secs` from now, in canonical form (SPEC §2.5.4), whole seconds.
pub fn time_from_now(offset_secs: i64) -> String {
    let at = Utc::now() + chrono::Duration::seconds(offset_secs);
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A SKILL.md whose frontmatter names `name`, with a harmless playbook body
/// well over 20 non-whitespace characters (SPEC §7.6.5).
pub fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n## When to Use\n\
         When a conformance run needs a skill called {name}.\n\n## Steps\n1. Read the failing output.\n\
         2. Apply the fix and rerun the tests.\n\n## Verification\nThe tests pass.\n"
    )
}

/// A packet (SPEC §3.1) with every field, its `integrityHash` and `id`
/// computed over `body`.
pub fn packet(origin: &str, name: &str, created_at: &str, body: &str, confidence: f64) -> Value {
    let hash = sha256_hex(body.as_bytes());
    json!({
        "id": &hash[..16],
        "version": "1.0",
        "createdAt": created_at,
        "originInstance": origin,
        "originUserHash": &sha256_hex(b"ecp-conformance")[..32],
        "originOS": "linux/amd64",
        "originVersion": "ecpconf-1",
        "skillName": name,
        "skillDescription": format!("Conformance skill {name}"),
        "skillBody": body,
        "patterns": ["workflow:conformance:check"],
        "confidence": confidence,
        "integrityHash": hash,
        "shareable": true,
        "tags": ["ecpconf"],
        "deprecated": false,
    })
}

/// A good packet from `origin`: valid name, body with frontmatter, confidence 0.9.
pub fn good_packet(origin: &str, name: &str, created_at: &str) -> Value {
    packet(origin, name, created_at, &skill_md(name, &format!("Conformance skill {name}")), 0.9)
}

/// Sets `skillBody` to `body` and recomputes `integrityHash` and `id`.
pub fn set_body(packet: &mut Value, body: &str) {
    let hash = sha256_hex(body.as_bytes());
    packet["skillBody"] = json!(body);
    packet["id"] = json!(&hash[..16]);
    packet["integrityHash"] = json!(hash);
}

/// A KnowledgeUpdate (SPEC §3.3) from `peer` carrying `packets`.
pub fn update(peer: &str, packets: Vec<Value>) -> Value {
    let count = packets.len();
    json!({
        "id": format!("{peer}-{}", Utc::now().timestamp_nanos_opt().unwrap_or_default()),
        "peerInstance": peer,
        "generatedAt": time_from_now(0),
        "skills": packets,
        "stats": {
            "totalSkills": count,
            "totalExtractions": 0,
            "avgConfidence": 0.9,
            "uptimeHours": 0.0,
            "topWorkflows": ["workflow:conformance:check"],
        },
        "sequenceNum": 0,
    })
}

/// The `files` of a bundle (SPEC §12.2): `SKILL.md` (the body) and `others`
/// (path, mode, bytes), written here from the SPEC, not by the crate under test.
pub fn bundle_files(body: &str, others: &[(&str, &str, &[u8])]) -> Vec<Value> {
    let entry = |path: &str, mode: &str, bytes: &[u8]| json!({"path": path, "size": bytes.len(), "mode": mode, "sha256": sha256_hex(bytes)});
    let mut files = vec![entry("SKILL.md", "0644", body.as_bytes())];
    files.extend(others.iter().map(|(path, mode, bytes)| entry(path, mode, bytes)));
    files
}

/// `bundleDigest` of `files` (SPEC §12.3): SHA-256 of the lines
/// `<sha256> <mode> <size> <path>\n`, sorted by path bytes.
pub fn bundle_digest(files: &[Value]) -> String {
    let mut lines: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap_or_default().to_owned();
            let line = format!(
                "{} {} {} {path}\n",
                f["sha256"].as_str().unwrap_or_default(),
                f["mode"].as_str().unwrap_or_default(),
                f["size"]
            );
            (path, line)
        })
        .collect();
    lines.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let listing: String = lines.into_iter().map(|(_, line)| line).collect();
    format!("sha256:{}", sha256_hex(listing.as_bytes()))
}

/// `value` as the bytes of a request body.
pub fn encode(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("a Value encodes")
}

/// Whether `name` is a valid skill name (SPEC §7.6.1):
/// `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`.
pub fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether `text` is 64 lowercase hex characters (SPEC §4.4.1).
pub fn is_lower_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses an RFC 3339 `date-time` (SPEC §2.5.1).
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    // chrono also takes a space for `T`; RFC 3339 `date-time` does not.
    if bytes.len() < 20 || !matches!(bytes[10], b'T' | b't') {
        return None;
    }
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&Utc))
}

/// Whether `text` is in the canonical form of SPEC §2.5.4: UTC, `Z`, at
/// most nine fraction digits without trailing zeros, no `.` for a zero fraction.
pub fn is_canonical_time(text: &str) -> bool {
    if parse_time(text).is_none() {
        return false;
    }
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return false;
    }
    match &text[19..] {
        "Z" => true,
        rest => {
            let Some(fraction) = rest.strip_prefix('.').and_then(|r| r.strip_suffix('Z')) else {
                return false;
            };
            (1..=9).contains(&fraction.len())
                && fraction.bytes().all(|c| c.is_ascii_digit())
                && !fraction.ends_with('0')
        }
    }
}

/// The frontmatter `name` of a SKILL.md, if it has frontmatter with one.
pub fn frontmatter_name(body: &str) -> Option<String> {
    let rest = body.strip_prefix("---\n").or_else(|| body.strip_prefix("---\r\n"))?;
    for line in rest.lines() {
        let line = line.trim_end_matches('\r');
        if line == "---" {
            return None;
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            return Some(unquoted.to_owned());
        }
    }
    None
}

/// The first line of an origin signature's canonical form (SPEC §13.3).
pub const ORIGIN_TAG: &str = "ecp-origin-signature-v1";

/// The key id of an Ed25519 public key (SPEC §13.2): SHA-256, its first
/// 15 bytes in base32, four groups of six each followed by a Luhn mod 32
/// check character, joined by dashes.
pub fn origin_key_id(public: &[u8; 32]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let digest = Sha256::digest(public);
    let mut bits = String::new();
    for b in &digest[..15] {
        bits.push_str(&format!("{b:08b}"));
    }
    let plain: Vec<u8> = bits
        .as_bytes()
        .chunks(5)
        .map(|c| ALPHABET[usize::from_str_radix(std::str::from_utf8(c).unwrap_or("0"), 2).unwrap_or(0)])
        .collect();
    let luhn = |group: &[u8]| {
        let (mut factor, mut sum) = (2, 0);
        for c in group.iter().rev() {
            let addend = factor * ALPHABET.iter().position(|a| a == c).unwrap_or(0);
            factor = if factor == 2 { 1 } else { 2 };
            sum += addend / 32 + addend % 32;
        }
        ALPHABET[(32 - sum % 32) % 32]
    };
    let groups: Vec<String> = plain
        .chunks(6)
        .map(|g| {
            let mut group = g.to_vec();
            group.push(luhn(g));
            String::from_utf8(group).unwrap_or_default()
        })
        .collect();
    groups.join("-")
}

/// The canonical form an origin signs (SPEC §13.3), from the packet's JSON;
/// `createdAt` is taken as sent (the suite writes canonical times).
pub fn origin_canonical(packet: &Value, instance: &str) -> String {
    let authored =
        packet["provenance"]["originConfidence"].as_f64().or_else(|| packet["confidence"].as_f64());
    let millionths = (authored.unwrap_or(0.0).clamp(0.0, 1.0) * 1_000_000.0).round() as u32;
    let text = |key: &str| packet[key].as_str().unwrap_or_default().to_owned();
    format!(
        "{ORIGIN_TAG}\ninstance:{instance}\nname:{}\nintegrity:{}\nbundle:{}\ncreatedAt:{}\ndeprecated:{}\nconfidence:{millionths}\n",
        text("skillName"),
        text("integrityHash"),
        text("bundleDigest"),
        text("createdAt"),
        packet["deprecated"].as_bool().unwrap_or(false),
    )
}

/// Sets `packet`'s `originSignature` (SPEC §13.4): signed as `instance` with
/// the key of `seed`.
pub fn sign_origin(packet: &mut Value, seed: &[u8; 32], instance: &str) {
    use ed25519_dalek::Signer;
    let key = ed25519_dalek::SigningKey::from_bytes(seed);
    let public = key.verifying_key().to_bytes();
    let sig = key.sign(origin_canonical(packet, instance).as_bytes());
    packet["originSignature"] = json!({
        "instance": instance,
        "keyId": origin_key_id(&public),
        "publicKey": hex::encode(public),
        "sig": hex::encode(sig.to_bytes()),
    });
}

/// A revocation (SPEC §14) of version `digest` of `name`, signed as
/// `instance` with the key of `seed`: its canonical form written out here
/// from the spec, not taken from `ecp-protocol`.
pub fn signed_revocation(seed: &[u8; 32], instance: &str, name: &str, digest: &str, reason: &str) -> Value {
    use ed25519_dalek::Signer;
    let at = time_from_now(0);
    let canonical = format!(
        "ecp-revocation-v1\ninstance:{instance}\nname:{name}\ndigest:{digest}\nrevokedAt:{at}\nreason:{reason}\n"
    );
    let key = ed25519_dalek::SigningKey::from_bytes(seed);
    let public = key.verifying_key().to_bytes();
    let sig = key.sign(canonical.as_bytes());
    json!({
        "skillName": name,
        "digest": digest,
        "reason": reason,
        "revokedAt": at,
        "originSignature": {
            "instance": instance,
            "keyId": origin_key_id(&public),
            "publicKey": hex::encode(public),
            "sig": hex::encode(sig.to_bytes()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_spec_worked_examples() {
        // SPEC §4.5 and §6.1 tables.
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(
            hmac_hex(b"s3cret", b"/ecp/skills"),
            "e3b8545e366265acaef106714ec708c0d9989c8f5a39d54164a5a0acc4988230"
        );
        assert_eq!(
            hmac_hex(b"s3cret", b"/ecp/manifest"),
            "289b72dfa13d8e89a8cc62892c3beb32cdf647f6f8e8ad69666715079ce31ea1"
        );
    }

    /// The cases of `protocol/testdata/vectors/signed-auth.json` of one kind.
    fn signed_auth_vectors(kind: &str) -> Vec<Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../protocol/testdata/vectors/signed-auth.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file: Value = serde_json::from_str(&text).expect("the vectors are JSON");
        let cases: Vec<Value> =
            file["cases"].as_array().expect("cases").iter().filter(|c| c["kind"] == kind).cloned().collect();
        assert!(!cases.is_empty(), "no {kind} vectors");
        cases
    }

    fn text(v: &Value) -> &str {
        v.as_str().unwrap_or_else(|| panic!("{v} is not a string"))
    }

    #[test]
    fn bundle_digests_match_the_spec_vectors() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../protocol/testdata/vectors/bundle-digest.json");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let cases = file["cases"].as_array().expect("cases");
        assert!(!cases.is_empty());
        for case in cases {
            let files = case["input"]["files"].as_array().unwrap();
            assert_eq!(
                bundle_digest(files),
                text(&case["expected"]["bundleDigest"]),
                "{}",
                case["description"]
            );
        }
        let body = "---\nname: x\n---\nbody\n";
        let files = bundle_files(body, &[("run.sh", "0755", b"echo\n")]);
        assert_eq!(files[0]["sha256"], sha256_hex(body.as_bytes()));
        assert_eq!((files[1]["size"].as_u64(), files[1]["mode"].as_str()), (Some(5), Some("0755")));
    }

    #[test]
    fn origin_key_ids_and_signatures_match_the_spec_vectors() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../protocol/testdata/vectors/origin-signatures.json");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (mut keys, mut signed) = (0, 0);
        for case in file["cases"].as_array().expect("cases") {
            let (input, expected) = (&case["input"], &case["expected"]);
            let seed = || {
                let mut seed = [0u8; 32];
                hex::decode_to_slice(text(&input["seed"]), &mut seed).unwrap();
                seed
            };
            match text(&case["kind"]) {
                "key" => {
                    let mut public = [0u8; 32];
                    hex::decode_to_slice(text(&expected["publicKey"]), &mut public).unwrap();
                    assert_eq!(origin_key_id(&public), text(&expected["keyId"]), "{}", case["description"]);
                    keys += 1;
                }
                "sign" => {
                    let instance = text(&input["instance"]);
                    let mut packet = input["packet"].clone();
                    sign_origin(&mut packet, &seed(), instance);
                    assert_eq!(
                        packet["originSignature"], expected["originSignature"],
                        "{}",
                        case["description"]
                    );
                    signed += 1;
                }
                "canonical" => {
                    let canonical = origin_canonical(&input["packet"], text(&input["instance"]));
                    assert_eq!(canonical, text(&expected["canonical"]), "{}", case["description"]);
                }
                _ => {}
            }
        }
        assert!(keys > 0 && signed > 0);
    }

    #[test]
    fn canonical_requests_and_signatures_match_the_spec_vectors() {
        for case in signed_auth_vectors("sign-request") {
            let (i, e) = (&case["input"], &case["expected"]);
            let timestamp = i["timestamp"].as_i64().expect("a timestamp").to_string();
            let body = text(&i["body"]).as_bytes();
            assert_eq!(sha256_hex(body), text(&e["body_sha256"]), "{}", case["description"]);
            let canonical = canonical_request(
                text(&i["authority"]),
                text(&i["key_id"]),
                text(&i["method"]),
                text(&i["path_and_query"]),
                &timestamp,
                text(&i["nonce"]),
                body,
            );
            assert_eq!(canonical, text(&e["canonical"]), "{}", case["description"]);
            let signature = hmac_hex(text(&i["secret"]).as_bytes(), canonical.as_bytes());
            assert_eq!(signature, text(&e["signature"]), "{}", case["description"]);
            assert!(is_key_id(text(&i["key_id"])) && is_nonce(text(&i["nonce"])));
        }
    }

    #[test]
    fn canonical_responses_and_signatures_match_the_spec_vectors() {
        for case in signed_auth_vectors("sign-response") {
            let (i, e) = (&case["input"], &case["expected"]);
            let canonical = canonical_response(
                text(&i["key_id"]),
                u16::try_from(i["status"].as_u64().expect("a status")).expect("a status"),
                text(&i["method"]),
                text(&i["path_and_query"]),
                &i["timestamp"].as_i64().expect("a timestamp").to_string(),
                text(&i["request_nonce"]),
                text(&i["body"]).as_bytes(),
            );
            assert_eq!(canonical, text(&e["canonical"]), "{}", case["description"]);
            let signature = hmac_hex(text(&i["secret"]).as_bytes(), canonical.as_bytes());
            assert_eq!(signature, text(&e["signature"]), "{}", case["description"]);
        }
    }

    #[test]
    fn header_rules_of_ecp_1_2() {
        assert!(
            is_nonce(&"a".repeat(16)) && is_nonce(&"a".repeat(128)) && is_nonce("Zm9vYmFyYmF6cXV4LV9fLQ")
        );
        for bad in
            ["a".repeat(15), "a".repeat(129), format!("{}=", "a".repeat(20)), format!("{}.", "a".repeat(20))]
        {
            assert!(!is_nonce(&bad), "{bad}");
        }
        assert!(is_key_id("mesh-2026-11") && is_key_id("default") && is_key_id(&"k".repeat(64)));
        for bad in ["", "sp ace", "a/b", &"k".repeat(65)] {
            assert!(!is_key_id(bad), "{bad:?}");
        }
        assert_eq!(parse_timestamp("1795000000"), Some(1_795_000_000));
        for bad in ["", "1795000000.5", "+1795000000", "-1", "1234567890123", " 1"] {
            assert_eq!(parse_timestamp(bad), None, "{bad:?}");
        }
        let (a, b) = (fresh_nonce(), fresh_nonce());
        assert!(a != b && is_nonce(&a) && a.len() == 32, "{a} {b}");
    }

    #[test]
    fn names_follow_the_spec_pattern() {
        assert!(valid_name("csv-dedupe") && valid_name("a") && valid_name(&"x".repeat(64)));
        for bad in ["", ".hidden", "-x", "a/b", "sp ace", "café", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn canonical_times_are_recognised() {
        for good in ["2026-11-20T10:00:05.5Z", "2026-11-20T10:00:05Z", "2026-11-22T07:58:02.71999807Z"] {
            assert!(is_canonical_time(good), "{good}");
        }
        for bad in
            ["2026-11-20T10:00:05.500Z", "2026-11-20T12:00:05+02:00", "2026-11-20T10:00:05.0Z", "2026-11-20"]
        {
            assert!(!is_canonical_time(bad), "{bad}");
        }
        assert!(parse_time("2026-11-20T12:00:05.5+02:00").is_some());
        assert!(parse_time("2026-11-20 12:00:05Z").is_none());
    }

    #[test]
    fn frontmatter_name_is_read() {
        assert_eq!(frontmatter_name(&skill_md("a-b", "d")).as_deref(), Some("a-b"));
        assert_eq!(frontmatter_name("# no frontmatter"), None);
    }
}
