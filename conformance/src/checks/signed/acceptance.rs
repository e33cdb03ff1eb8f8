//! SIGN checks of what a node MUST accept: signed GETs and POSTs, and the
//! signed answers it gives back with the nonce echoed (SPEC §10.1.6).

use reqwest::Method;

use super::{accepted, key, pairs, send_raw, send_signed, sign, verify_answer};
use super::{merged_and_served, push_body};
use crate::check::{Ctx, Verdict, ensure, fail, skip};

// ---------------------------------------------------------------------------
// Accepted requests and signed answers

pub(super) fn sign_001(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let signed = sign(cx, &key, &Method::GET, "/ecp/manifest", b"");
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?;
    accepted(&ex, "a correctly signed GET /ecp/manifest")?;
    Ok("200".into())
}

pub(super) fn sign_002(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let path = "/ecp/skills?since=0";
    let signed = sign(cx, &key, &Method::GET, path, b"");
    let ex = send_signed(cx, Method::GET, path, None, &signed)?;
    accepted(&ex, "a GET signed over its path and query")?;
    Ok(format!("200 ({} signed)", cx.target.request_target(path)))
}

pub(super) fn sign_003(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let (name, body) = push_body(cx, "s003-signed");
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", &body);
    let ex = send_signed(cx, Method::POST, "/ecp/skills", Some(body), &signed)?;
    let result = accepted(&ex, "a correctly signed push")?;
    merged_and_served(cx, &ex, &result, &name)
}

/// A signed GET of `path`, answered 200, and its answer verified.
fn signed_answer(cx: &Ctx<'_>, path: &str) -> Verdict {
    let key = key(cx)?;
    let signed = sign(cx, &key, &Method::GET, path, b"");
    let ex = send_signed(cx, Method::GET, path, None, &signed)?;
    accepted(&ex, &format!("a correctly signed GET {path}"))?;
    verify_answer(cx, &ex, &key, &signed)
}

pub(super) fn sign_004(cx: &mut Ctx<'_>) -> Verdict {
    signed_answer(cx, "/ecp/manifest")
}

pub(super) fn sign_005(cx: &mut Ctx<'_>) -> Verdict {
    signed_answer(cx, "/ecp/skills?since=0")
}

pub(super) fn sign_006(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let path = "/ecp/skills";
    let first = sign(cx, &key, &Method::GET, path, b"");
    let ex = send_signed(cx, Method::GET, path, None, &first)?;
    accepted(&ex, "a correctly signed GET /ecp/skills")?;
    let Some(etag) = ex.header("etag").map(str::to_owned) else {
        return Err(skip("GET /ecp/skills carries no ETag (see SYNC-004), so there is no 304 to check"));
    };
    let again = sign(cx, &key, &Method::GET, path, b"");
    let mut headers = pairs(&again);
    headers.push(("if-none-match".to_owned(), etag.clone()));
    let ex = send_raw(cx, Method::GET, path, &headers, None)?;
    ensure(ex.status == 304, || {
        fail(format!("a signed GET with If-None-Match: {etag} (the current ETag) was answered {}", ex.status))
            .on(&ex)
    })?;
    verify_answer(cx, &ex, &key, &again)
}
