//! SIGN: ECP/1.2 signed requests and responses (SPEC §10.1), profile
//! ecp-1.2, run only with a key the target holds (`--key-id`,
//! `--key-secret`).
//!
//! A correctly signed GET and POST are accepted, and a signed GET's 200 or
//! 304 answer is signed back with the request's nonce echoed (§10.1.6).
//! Then every rejection path of §10.1.4 in its order, each a request that is
//! wrong in exactly one way and otherwise correctly signed, so the `code` of
//! the 401 must name that way: missing and malformed headers, an unknown
//! key, clock skew both ways, a wrong secret, a body, query or method other
//! than the signed one, a captured signature with a new nonce or time, and
//! replays — a replayed push is built so that accepting it would withdraw a
//! skill — and requests signed for another node or for none (§10.1.3: a
//! signed request relayed to another node holding the key is refused).
//! With `--secret` too, a bad ECP/1.2 signature beside a good
//! `X-ECP-HMAC` is refused (§10.1.4.3); with `--no-legacy`, `X-ECP-HMAC`
//! alone is refused (§10.1.5.2); with a second key, rotation (§10.1.1.2).
//!
//! Refused pushes are followed by a listing to show nothing was merged.
//!
//! # Layout
//!
//! This file holds the check table and the signing helpers; the checks are
//! in `acceptance`, `rejection` (§10.1.4's paths in order), `replay` and `keys`
//! (legacy beside ECP/1.2, rotation, authorities).

use reqwest::Method;
use serde_json::Value;

use super::{merged_and_served, not_served, push_body, state};
use crate::check::{Check, Ctx, Level::*, Needs, Problem, Profile::*, ensure, expect_json_error, fail, skip};
use crate::packets::{self, MAX_SKEW_SECS, canonical_response, hmac_hex, unix_now};
use crate::target::{
    Exchange, KEY_ID_HEADER, Key, NONCE_HEADER, SIGNATURE_HEADER, Sign, Signed, TIMESTAMP_HEADER, cut,
};

mod acceptance;
mod keys;
mod rejection;
mod replay;

use acceptance::{sign_001, sign_002, sign_003, sign_004, sign_005, sign_006};
use keys::{sign_021, sign_022, sign_023, sign_024, sign_025, sign_026, sign_027};
use rejection::{
    sign_007, sign_008, sign_009, sign_010, sign_011, sign_012, sign_013, sign_014, sign_015, sign_016,
    sign_017,
};
use replay::{sign_018, sign_019, sign_020};

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "SIGN-001",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.2, §10.1.3, §10.1.5.1",
        title: "GET /ecp/manifest signed with the key",
        requirement: "A request with the four headers over the canonical request MUST be accepted: 200.",
        needs: Needs::Key,
        run: sign_001,
    },
    Check {
        id: "SIGN-002",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.3.1",
        title: "GET /ecp/skills?since=0 signed over path and query",
        requirement: "The query is part of the signed request target: the signature MUST be accepted (200).",
        needs: Needs::Key,
        run: sign_002,
    },
    Check {
        id: "SIGN-003",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.5.1",
        title: "POST /ecp/skills signed over the body's SHA-256",
        requirement: "A signed push MUST be accepted: 200 and the packet merged and served.",
        needs: Needs::Key,
        run: sign_003,
    },
    Check {
        id: "SIGN-004",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.6, §10.1.6.1",
        title: "The 200 answer to a signed GET /ecp/manifest is signed",
        requirement: "It MUST carry X-ECP-Key-Id (the request's key), X-ECP-Timestamp (within 300 s), \
                      X-ECP-Nonce (the request's, echoed) and X-ECP-Signature over the canonical response.",
        needs: Needs::Key,
        run: sign_004,
    },
    Check {
        id: "SIGN-005",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.6, §10.1.6.1",
        title: "The 200 answer to a signed GET /ecp/skills?since=0 is signed",
        requirement: "Its signature MUST verify over the canonical response naming the path and query as signed.",
        needs: Needs::Key,
        run: sign_005,
    },
    Check {
        id: "SIGN-006",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.6, §10.2.3",
        title: "The 304 answer to a signed GET with If-None-Match is signed",
        requirement: "A 304 MUST carry the four headers, signed over status 304 and the SHA-256 of the empty body.",
        needs: Needs::Key,
        run: sign_006,
    },
    Check {
        id: "SIGN-007",
        level: Must,
        profile: Ecp12,
        spec: "§5.1.3, §10.1.5.1",
        title: "The three endpoints without any signature header",
        requirement: "A node holding a key MUST refuse them (401, or 403 where it still takes X-ECP-HMAC) \
                      with a JSON error, and merge nothing.",
        needs: Needs::Key,
        run: sign_007,
    },
    Check {
        id: "SIGN-008",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (1), §10.1.4.3",
        title: "Each of the four headers missing in turn",
        requirement: "Without X-ECP-Key-Id, X-ECP-Timestamp, X-ECP-Nonce or X-ECP-Signature the request MUST \
                      be answered 401 missing_signature; such a push merges nothing.",
        needs: Needs::Key,
        run: sign_008,
    },
    Check {
        id: "SIGN-009",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.2, §10.1.4 (2)",
        title: "Malformed headers, otherwise correctly signed",
        requirement: "A nonce of 15 or 129 characters or with '=', a timestamp with a fraction or a sign, a key \
                      id with '!', a signature not 64 hex characters: each MUST be answered 401 malformed_signature.",
        needs: Needs::Key,
        run: sign_009,
    },
    Check {
        id: "SIGN-010",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.1.2, §10.1.4 (3)",
        title: "A key id the target does not hold",
        requirement: "The request MUST be answered 401 unknown_key.",
        needs: Needs::Key,
        run: sign_010,
    },
    Check {
        id: "SIGN-011",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (4)",
        title: "Signed 900 s in the past",
        requirement: "A timestamp more than 300 s behind the node's clock MUST be answered 401 clock_skew.",
        needs: Needs::Key,
        run: sign_011,
    },
    Check {
        id: "SIGN-012",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (4)",
        title: "Signed 900 s in the future",
        requirement: "A timestamp more than 300 s ahead of the node's clock MUST be answered 401 clock_skew.",
        needs: Needs::Key,
        run: sign_012,
    },
    Check {
        id: "SIGN-013",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (4)",
        title: "Signed 200 s in the past and 200 s in the future",
        requirement: "Timestamps within 300 s of the node's clock MUST be accepted: 200.",
        needs: Needs::Key,
        run: sign_013,
    },
    Check {
        id: "SIGN-014",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (5)",
        title: "Signed with a wrong secret under the right key id",
        requirement: "GET and POST MUST be answered 401 bad_signature; the push merges nothing.",
        needs: Needs::Key,
        run: sign_014,
    },
    Check {
        id: "SIGN-015",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.4 (5), §10.1.4.4",
        title: "POST /ecp/skills with a body other than the signed one",
        requirement: "Another update, and the signed one with one byte appended, MUST be answered 401 \
                      bad_signature; neither is merged.",
        needs: Needs::Key,
        run: sign_015,
    },
    Check {
        id: "SIGN-016",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3.1, §10.1.4 (5)",
        title: "GET /ecp/skills?since=0 signed without the query",
        requirement: "A query that was not signed MUST be answered 401 bad_signature.",
        needs: Needs::Key,
        run: sign_016,
    },
    Check {
        id: "SIGN-017",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.4 (5)",
        title: "GET /ecp/skills signed as a POST",
        requirement: "A method other than the signed one MUST be answered 401 bad_signature.",
        needs: Needs::Key,
        run: sign_017,
    },
    Check {
        id: "SIGN-018",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.4 (5)",
        title: "An accepted request's signature re-sent with a new nonce, then a new timestamp",
        requirement: "Nonce and timestamp are signed: each variant MUST be answered 401 bad_signature.",
        needs: Needs::Key,
        run: sign_018,
    },
    Check {
        id: "SIGN-019",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (6), §10.1.4.1",
        title: "A signed GET replayed byte for byte",
        requirement: "The second copy MUST be answered 401 replayed_nonce.",
        needs: Needs::Key,
        run: sign_019,
    },
    Check {
        id: "SIGN-020",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4 (6), §6.5.2, §7.9.3",
        title: "A signed push replayed: a withdrawal sent before the skill existed",
        requirement: "The replay MUST be answered 401 replayed_nonce and apply nothing: the skill stays served, \
                      manifest and listing unchanged.",
        needs: Needs::Key,
        run: sign_020,
    },
    Check {
        id: "SIGN-021",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.4.3",
        title: "A bad ECP/1.2 signature beside a valid X-ECP-HMAC",
        requirement: "A request with the four headers is judged by §10.1 alone: 401 bad_signature, nothing merged.",
        needs: Needs::KeyAndSecret,
        run: sign_021,
    },
    Check {
        id: "SIGN-022",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.5.2",
        title: "Only X-ECP-HMAC, at a target that refuses it (--no-legacy)",
        requirement: "The three endpoints MUST answer 401 legacy_auth_refused; the push merges nothing.",
        needs: Needs::LegacyRefused,
        run: sign_022,
    },
    Check {
        id: "SIGN-023",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.1.2, §10.1.6",
        title: "GET /ecp/manifest signed with the second key",
        requirement: "A node holding two keys MUST accept either (200) and sign its answer with the key the \
                      request used.",
        needs: Needs::SecondKey,
        run: sign_023,
    },
    Check {
        id: "SIGN-024",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.1.2, §10.1.3.2",
        title: "The first key's signature presented under the second key's id",
        requirement: "A request is verified with the key its X-ECP-Key-Id names: 401 bad_signature.",
        needs: Needs::SecondKey,
        run: sign_024,
    },
    Check {
        id: "SIGN-025",
        level: Should,
        profile: Ecp12,
        spec: "§10.1.4 (6)",
        title: "One nonce under each of two keys",
        requirement: "The replay memory holds (key id, nonce) pairs: both requests SHOULD be accepted.",
        needs: Needs::SecondKey,
        run: sign_025,
    },
    Check {
        id: "SIGN-026",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3, §10.1.4 (3)",
        title: "GET /ecp/skills and POST /ecp/skills signed with the key for another node's authority",
        requirement: "A request signed for an authority the node does not answer to (a relay from another \
                      node holding the key) MUST be answered 401 wrong_authority, and the push merges nothing.",
        needs: Needs::Key,
        run: sign_026,
    },
    Check {
        id: "SIGN-027",
        level: Must,
        profile: Ecp12,
        spec: "§10.1.3.5, §10.1.4 (3)",
        title: "GET /ecp/manifest signed without X-ECP-Authority, over the unbound canonical string",
        requirement: "A signature of an earlier client that names no authority MUST be answered 401 \
                      unbound_signature.",
        needs: Needs::Key,
        run: sign_027,
    },
];

// ---------------------------------------------------------------------------
// Helpers

/// The key the suite signs with (the runner skips SIGN checks without one).
fn key(cx: &Ctx<'_>) -> Result<Key, Problem> {
    cx.target.key().cloned().ok_or_else(|| skip("no key"))
}

/// An authority no node answers to (`.invalid` is reserved, RFC 2606), on
/// the target's port: what a request for another node is signed for.
fn another_authority(cx: &Ctx<'_>) -> String {
    let own = cx.target.authority();
    let port = own.rsplit_once(':').map_or("7327", |(_, p)| p);
    format!("ecp-conformance-other-node.invalid:{port}")
}

/// The second key, for rotation.
fn second_key(cx: &Ctx<'_>) -> Result<Key, Problem> {
    cx.target.keys().get(1).cloned().ok_or_else(|| skip("no second key"))
}

/// `key` with another secret: what a stranger who guessed the id signs with.
fn forged(key: &Key) -> Key {
    let secret = format!("{}-not-it", String::from_utf8_lossy(key.secret()));
    Key::new(key.id.clone(), secret).expect("the id was valid")
}

/// ECP/1.2 headers for `method path body` with `key`, now, with a fresh nonce.
fn sign(cx: &Ctx<'_>, key: &Key, method: &Method, path: &str, body: &[u8]) -> Signed {
    cx.target.sign(key, method.as_str(), path, body)
}

/// Sends `method path` with exactly the headers `headers` (signature headers
/// included) and `body`.
fn send_raw(
    cx: &Ctx<'_>,
    method: Method,
    path: &str,
    headers: &[(String, String)],
    body: Option<Vec<u8>>,
) -> Result<Exchange, Problem> {
    let mut all: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    if body.is_some() {
        all.push(("content-type", "application/json"));
    }
    cx.send(method, path, &all, body, Sign::Omit)
}

/// Sends `method path body` with the ECP/1.2 headers of `signed`.
fn send_signed(
    cx: &Ctx<'_>,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
    signed: &Signed,
) -> Result<Exchange, Problem> {
    send_raw(cx, method, path, &pairs(signed), body)
}

/// The five headers of `signed` as owned pairs, to edit.
fn pairs(signed: &Signed) -> Vec<(String, String)> {
    signed.headers().into_iter().map(|(n, v)| (n.to_owned(), v)).collect()
}

/// The `code` of an error answer, for reasons.
fn code_of(ex: &Exchange) -> String {
    ex.json()
        .and_then(|v| v["code"].as_str().map(|c| format!("code {c:?}")))
        .unwrap_or_else(|| "no code".to_owned())
}

/// The answer must be 401 with a JSON error whose `code` is `code` (SPEC
/// §10.1.4: the code names the first check that failed).
fn refused(ex: &Exchange, code: &str) -> Result<String, Problem> {
    ensure(ex.status == 401, || {
        let what = if ex.status == 200 { "accepted".to_owned() } else { code_of(ex) };
        fail(format!("expected 401 {code}, got {} ({what})", ex.status)).on(ex)
    })?;
    let body = expect_json_error(ex, &[401])?;
    let got = body["code"].as_str();
    ensure(got == Some(code), || {
        fail(format!("401 as required, but {} where SPEC §10.1.4 gives {code:?}", code_of(ex))).on(ex)
    })?;
    Ok(format!("401 {code}"))
}

/// The answer must be 200 with a JSON object: a correctly signed request was accepted.
fn accepted(ex: &Exchange, what: &str) -> Result<Value, Problem> {
    match ex.json() {
        Some(v) if ex.status == 200 && v.is_object() => Ok(v),
        _ => Err(fail(format!("{what} was answered {} ({})", ex.status, code_of(ex))).on(ex)),
    }
}

/// A canonical string on one line, for evidence.
fn one_line(canonical: &str) -> String {
    canonical.replace('\n', "⏎")
}

/// Checks the answer to a signed GET as a client holding `key` must (SPEC
/// §10.1.6.1): the four headers present, the key id the request's, the
/// nonce the request's, the timestamp within 300 s, and the signature over
/// the canonical response in lowercase hex.
fn verify_answer(cx: &Ctx<'_>, ex: &Exchange, key: &Key, request: &Signed) -> Result<String, Problem> {
    let names = [KEY_ID_HEADER, TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER];
    let missing: Vec<&str> = names.iter().copied().filter(|n| ex.header(n).is_none()).collect();
    ensure(missing.is_empty(), || {
        fail(format!(
            "the {} answer to a signed GET lacks {} (a signed request's answer is signed back)",
            ex.status,
            missing.join(", ")
        ))
        .on(ex)
    })?;
    let header = |n: &str| ex.header(n).unwrap_or_default().trim().to_owned();
    let (key_id, timestamp, nonce, signature) =
        (header(KEY_ID_HEADER), header(TIMESTAMP_HEADER), header(NONCE_HEADER), header(SIGNATURE_HEADER));
    ensure(key_id == key.id, || {
        fail(format!("the answer names key {key_id:?}, not {:?}, the key of the request", key.id)).on(ex)
    })?;
    ensure(nonce == request.nonce, || {
        fail(format!(
            "the answer's X-ECP-Nonce {nonce:?} is not the request's {:?}: it is not bound to this request",
            request.nonce
        ))
        .on(ex)
    })?;
    let at = packets::parse_timestamp(&timestamp).ok_or_else(|| {
        fail(format!("the answer's X-ECP-Timestamp {timestamp:?} is not Unix seconds (1 to 12 digits)"))
            .on(ex)
    })?;
    let skew = at - unix_now();
    ensure(skew.abs() <= MAX_SKEW_SECS, || {
        fail(format!("the answer's X-ECP-Timestamp is {skew} s from the suite's clock (at most 300)")).on(ex)
    })?;
    ensure(packets::is_lower_hex64(&signature), || {
        fail(format!(
            "the answer's X-ECP-Signature {:?} is not 64 lowercase hex characters",
            cut(&signature, 80)
        ))
        .on(ex)
    })?;
    let target = cx.target.request_target(&ex.path);
    let canonical = canonical_response(&key.id, ex.status, &ex.method, &target, &timestamp, &nonce, &ex.body);
    let expected = hmac_hex(key.secret(), canonical.as_bytes());
    ensure(signature == expected, || {
        fail(format!(
            "the {} answer's X-ECP-Signature does not verify over the canonical response",
            ex.status
        ))
        .on(ex)
        .show("canonical response the suite expects signed", one_line(&canonical))
    })?;
    Ok(format!("{} signed with {}, nonce echoed, verified", ex.status, key.id))
}
