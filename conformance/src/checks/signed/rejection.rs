//! SIGN checks of the rejection paths of SPEC §10.1.4 in order, each a
//! request wrong in exactly one way: headers missing or malformed, an
//! unknown key, clock skew, a wrong secret, another body, query or method.

use reqwest::Method;

use super::{accepted, forged, key, pairs, refused, send_raw, send_signed, sign};
use super::{not_served, push_body};
use crate::check::{Ctx, Problem, Verdict, expect_json_error};
use crate::packets::{self, fresh_nonce, hmac_hex, unix_now};
use crate::target::{Exchange, KEY_ID_HEADER, Key, NONCE_HEADER, SIGNATURE_HEADER, Signed, TIMESTAMP_HEADER};

// ---------------------------------------------------------------------------
// Refusals, in the order of SPEC §10.1.4

pub(super) fn sign_007(cx: &mut Ctx<'_>) -> Verdict {
    let mut seen = Vec::new();
    for path in ["/ecp/manifest", "/ecp/skills"] {
        let ex = send_raw(cx, Method::GET, path, &[], None)?;
        expect_json_error(&ex, &[401, 403])?;
        seen.push(format!("GET {path} {}", ex.status));
    }
    let (name, body) = push_body(cx, "s007-unsigned");
    let ex = send_raw(cx, Method::POST, "/ecp/skills", &[], Some(body))?;
    expect_json_error(&ex, &[401, 403])?;
    not_served(cx, &name)?;
    seen.push(format!("POST {}", ex.status));
    Ok(seen.join(", "))
}

pub(super) fn sign_008(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    for left_out in [KEY_ID_HEADER, TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER] {
        let signed = sign(cx, &key, &Method::GET, "/ecp/manifest", b"");
        let headers: Vec<(String, String)> =
            pairs(&signed).into_iter().filter(|(n, _)| n != left_out).collect();
        let ex = send_raw(cx, Method::GET, "/ecp/manifest", &headers, None)?;
        refused(&ex, "missing_signature").map_err(|p| p.show("left out", left_out))?;
    }
    let (name, body) = push_body(cx, "s008-unsigned");
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", &body);
    let headers: Vec<(String, String)> =
        pairs(&signed).into_iter().filter(|(n, _)| n != SIGNATURE_HEADER).collect();
    let ex = send_raw(cx, Method::POST, "/ecp/skills", &headers, Some(body))?;
    refused(&ex, "missing_signature").map_err(|p| p.show("left out", SIGNATURE_HEADER))?;
    not_served(cx, &name)?;
    Ok("401 missing_signature for each header, GET and POST".into())
}

pub(super) fn sign_009(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let path = "/ecp/manifest";
    let now = unix_now().to_string();
    let at = |timestamp: &str, nonce: &str| cx.target.sign_at(&key, "GET", path, b"", timestamp, nonce);
    // Each case breaks one rule of §10.1.2 and is otherwise signed
    // correctly over exactly the text sent, so a node that skips the rule
    // would accept it.
    let mut cases: Vec<(&str, Signed)> = vec![
        ("a nonce of 15 characters", at(&now, &fresh_nonce()[..15])),
        ("a nonce of 129 characters", at(&now, &format!("{}{}", "n".repeat(97), fresh_nonce()))),
        ("a nonce with base64 padding '='", at(&now, &format!("{}==", &fresh_nonce()[..22]))),
        ("a timestamp with a fraction", at(&format!("{now}.5"), &fresh_nonce())),
        ("a timestamp with a sign", at(&format!("+{now}"), &fresh_nonce())),
    ];
    let bad_id = format!("{}!", key.id);
    let target = cx.target.request_target(path);
    let nonce = fresh_nonce();
    let authority = cx.target.authority();
    let canonical = packets::canonical_request(&authority, &bad_id, "GET", &target, &now, &nonce, b"");
    cases.push((
        "a key id with '!'",
        Signed {
            authority,
            key_id: bad_id,
            timestamp: now.clone(),
            nonce,
            signature: hmac_hex(key.secret(), canonical.as_bytes()),
        },
    ));
    let mut not_hex = at(&now, &fresh_nonce());
    not_hex.signature = "z".repeat(64);
    cases.push(("a signature that is not hex", not_hex));
    let mut short = at(&now, &fresh_nonce());
    short.signature.pop();
    cases.push(("a signature of 63 hex characters", short));
    for (what, signed) in &cases {
        let ex = send_signed(cx, Method::GET, path, None, signed)?;
        refused(&ex, "malformed_signature").map_err(|p| p.show("malformed", what))?;
    }
    Ok(format!("401 malformed_signature for all {} cases", cases.len()))
}

pub(super) fn sign_010(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let stranger = Key::new(format!("ecpconf-unknown-{}", cx.run_id), String::from_utf8_lossy(key.secret()))
        .expect("a valid key id");
    let signed = sign(cx, &stranger, &Method::GET, "/ecp/manifest", b"");
    refused(&send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?, "unknown_key")
}

/// A GET /ecp/manifest signed `offset` seconds from now.
fn skewed(cx: &Ctx<'_>, offset: i64) -> Result<Exchange, Problem> {
    let key = key(cx)?;
    let at = (unix_now() + offset).to_string();
    let signed = cx.target.sign_at(&key, "GET", "/ecp/manifest", b"", &at, &fresh_nonce());
    send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)
}

pub(super) fn sign_011(cx: &mut Ctx<'_>) -> Verdict {
    refused(&skewed(cx, -900)?, "clock_skew")
}

pub(super) fn sign_012(cx: &mut Ctx<'_>) -> Verdict {
    refused(&skewed(cx, 900)?, "clock_skew")
}

pub(super) fn sign_013(cx: &mut Ctx<'_>) -> Verdict {
    for offset in [-200, 200] {
        let ex = skewed(cx, offset)?;
        accepted(&ex, &format!("a GET signed {offset:+} s from now (within the 300 s window)"))?;
    }
    Ok("200 at -200 s and +200 s".into())
}

pub(super) fn sign_014(cx: &mut Ctx<'_>) -> Verdict {
    let wrong = forged(&key(cx)?);
    let signed = sign(cx, &wrong, &Method::GET, "/ecp/manifest", b"");
    refused(&send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?, "bad_signature")?;
    let (name, body) = push_body(cx, "s014-forged");
    let signed = sign(cx, &wrong, &Method::POST, "/ecp/skills", &body);
    refused(&send_signed(cx, Method::POST, "/ecp/skills", Some(body), &signed)?, "bad_signature")?;
    not_served(cx, &name)?;
    Ok("401 bad_signature for GET and POST".into())
}

pub(super) fn sign_015(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let (signed_name, body) = push_body(cx, "s015-signed");
    let (other_name, other) = push_body(cx, "s015-other");
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", &body);
    let ex = send_signed(cx, Method::POST, "/ecp/skills", Some(other), &signed)?;
    refused(&ex, "bad_signature").map_err(|p| p.show("sent", "another update than the one signed"))?;
    let mut appended = body.clone();
    appended.push(b' ');
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", &body);
    let ex = send_signed(cx, Method::POST, "/ecp/skills", Some(appended), &signed)?;
    refused(&ex, "bad_signature").map_err(|p| p.show("sent", "the signed body with a space appended"))?;
    not_served(cx, &signed_name)?;
    not_served(cx, &other_name)?;
    Ok("401 bad_signature for both bodies; nothing merged".into())
}

pub(super) fn sign_016(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let signed = sign(cx, &key, &Method::GET, "/ecp/skills", b"");
    refused(&send_signed(cx, Method::GET, "/ecp/skills?since=0", None, &signed)?, "bad_signature")
}

pub(super) fn sign_017(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", b"");
    refused(&send_signed(cx, Method::GET, "/ecp/skills", None, &signed)?, "bad_signature")
}
