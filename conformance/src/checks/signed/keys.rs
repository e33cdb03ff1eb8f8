//! SIGN checks of keys and authorities: ECP/1.2 beside the legacy
//! `X-ECP-HMAC` (§10.1.4.3, §10.1.5.2), rotation to a second key
//! (§10.1.1.2), and requests signed for another node or for none (§10.1.3).

use reqwest::Method;

use super::{
    accepted, another_authority, forged, key, pairs, refused, second_key, send_raw, send_signed, sign,
    verify_answer,
};
use super::{not_served, push_body};
use crate::check::{Ctx, Verdict};
use crate::packets::{self, fresh_nonce, hmac_hex, unix_now};
use crate::target::{HMAC_HEADER, KEY_ID_HEADER, Key, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};

pub(super) fn sign_021(cx: &mut Ctx<'_>) -> Verdict {
    let wrong = forged(&key(cx)?);
    let secret = cx.target.secret().unwrap_or_default().as_bytes().to_vec();
    let path_hmac = hmac_hex(&secret, cx.target.signed_path("/ecp/skills").as_bytes());
    let mut headers = pairs(&sign(cx, &wrong, &Method::GET, "/ecp/skills", b""));
    headers.push((HMAC_HEADER.to_owned(), path_hmac));
    refused(&send_raw(cx, Method::GET, "/ecp/skills", &headers, None)?, "bad_signature")?;
    let (name, body) = push_body(cx, "s021-both");
    let mut headers = pairs(&sign(cx, &wrong, &Method::POST, "/ecp/skills", &body));
    headers.push((HMAC_HEADER.to_owned(), hmac_hex(&secret, &body)));
    refused(&send_raw(cx, Method::POST, "/ecp/skills", &headers, Some(body))?, "bad_signature")?;
    not_served(cx, &name)?;
    Ok("401 bad_signature for GET and POST despite the valid X-ECP-HMAC".into())
}

pub(super) fn sign_022(cx: &mut Ctx<'_>) -> Verdict {
    // The legacy signature is a valid one where the suite can make it
    // (with --secret, or the key's secret, which ecp-node also holds as
    // its shared secret under the id `default`): refused for what it is,
    // not for being wrong.
    let secret = match cx.target.secret() {
        Some(s) => s.as_bytes().to_vec(),
        None => key(cx)?.secret().to_vec(),
    };
    for path in ["/ecp/manifest", "/ecp/skills"] {
        let hmac = hmac_hex(&secret, cx.target.signed_path(path).as_bytes());
        let ex = send_raw(cx, Method::GET, path, &[(HMAC_HEADER.to_owned(), hmac)], None)?;
        refused(&ex, "legacy_auth_refused")?;
    }
    let (name, body) = push_body(cx, "s022-legacy");
    let hmac = hmac_hex(&secret, &body);
    let ex = send_raw(cx, Method::POST, "/ecp/skills", &[(HMAC_HEADER.to_owned(), hmac)], Some(body))?;
    refused(&ex, "legacy_auth_refused")?;
    not_served(cx, &name)?;
    Ok("401 legacy_auth_refused on all three endpoints".into())
}

// ---------------------------------------------------------------------------
// Rotation: two keys at once

pub(super) fn sign_023(cx: &mut Ctx<'_>) -> Verdict {
    let second = second_key(cx)?;
    let signed = sign(cx, &second, &Method::GET, "/ecp/manifest", b"");
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?;
    accepted(&ex, &format!("a GET signed with the second key {:?}", second.id))?;
    verify_answer(cx, &ex, &second, &signed)
}

pub(super) fn sign_024(cx: &mut Ctx<'_>) -> Verdict {
    let (first, second) = (key(cx)?, second_key(cx)?);
    let swapped = Key::new(second.id.clone(), String::from_utf8_lossy(first.secret())).expect("a valid id");
    let signed = sign(cx, &swapped, &Method::GET, "/ecp/manifest", b"");
    refused(&send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?, "bad_signature")
}

pub(super) fn sign_025(cx: &mut Ctx<'_>) -> Verdict {
    let (first, second) = (key(cx)?, second_key(cx)?);
    let nonce = fresh_nonce();
    let now = unix_now().to_string();
    for key in [&first, &second] {
        let signed = cx.target.sign_at(key, "GET", "/ecp/manifest", b"", &now, &nonce);
        let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?;
        accepted(&ex, &format!("a GET with nonce {nonce} under key {:?}", key.id))?;
    }
    Ok("200 under both keys".into())
}

pub(super) fn sign_026(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let other = another_authority(cx);
    let now = unix_now().to_string();
    let signed = cx.target.sign_for(&other, &key, "GET", "/ecp/skills", b"", &now, &fresh_nonce());
    refused(&send_signed(cx, Method::GET, "/ecp/skills", None, &signed)?, "wrong_authority")?;
    let (name, body) = push_body(cx, "s026-relayed");
    let signed = cx.target.sign_for(&other, &key, "POST", "/ecp/skills", &body, &now, &fresh_nonce());
    refused(&send_signed(cx, Method::POST, "/ecp/skills", Some(body), &signed)?, "wrong_authority")?;
    not_served(cx, &name)?;
    Ok(format!("401 wrong_authority for GET and POST signed for {other}"))
}

pub(super) fn sign_027(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let target = cx.target.request_target("/ecp/manifest");
    let (now, nonce) = (unix_now().to_string(), fresh_nonce());
    let canonical =
        [packets::UNBOUND_REQUEST_PREFIX, &key.id, "GET", &target, &now, &nonce, &packets::sha256_hex(b"")]
            .join("\n");
    let signature = hmac_hex(key.secret(), canonical.as_bytes());
    let headers: Vec<(String, String)> = [
        (KEY_ID_HEADER, key.id.clone()),
        (TIMESTAMP_HEADER, now),
        (NONCE_HEADER, nonce),
        (SIGNATURE_HEADER, signature),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    refused(&send_raw(cx, Method::GET, "/ecp/manifest", &headers, None)?, "unbound_signature")
}
