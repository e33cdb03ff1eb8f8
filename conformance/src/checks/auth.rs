//! AUTH: legacy `X-ECP-HMAC` (SPEC §6) on all three endpoints — run only
//! with `--secret`. Missing, wrong, malformed and right signatures for GET
//! (over the URL path) and POST (over the raw body); a refused push changes
//! nothing. The right signatures are always legacy ones, also when the suite
//! has an ECP/1.2 key; under `--no-legacy` the whole area is skipped.

use reqwest::Method;
use serde_json::Value;

use super::{merged_and_served, not_served, push_body, state};
use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, ensure, expect_json_error, fail,
};
use crate::packets::hmac_hex;
use crate::target::{Exchange, Sign};

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "AUTH-001",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1, §6.4.1",
        title: "GET /ecp/manifest without X-ECP-HMAC",
        requirement: "A node with a secret MUST answer 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_001,
    },
    Check {
        id: "AUTH-002",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1, §6.4.1",
        title: "GET /ecp/skills without X-ECP-HMAC",
        requirement: "A node with a secret MUST answer 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_002,
    },
    Check {
        id: "AUTH-003",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1, §6.4.1, §5.1.3",
        title: "POST /ecp/skills without X-ECP-HMAC",
        requirement: "A node with a secret MUST answer 403 with a JSON error and merge nothing.",
        needs: Needs::Secret,
        run: auth_003,
    },
    Check {
        id: "AUTH-004",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1",
        title: "GET /ecp/manifest with a wrong X-ECP-HMAC",
        requirement: "A signature under another secret MUST be answered 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_004,
    },
    Check {
        id: "AUTH-005",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1",
        title: "GET /ecp/skills with a wrong X-ECP-HMAC",
        requirement: "A signature under another secret MUST be answered 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_005,
    },
    Check {
        id: "AUTH-006",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1, §6.1.2",
        title: "POST /ecp/skills with a wrong X-ECP-HMAC",
        requirement: "A signature of another body MUST be answered 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_006,
    },
    Check {
        id: "AUTH-007",
        level: Must,
        profile: Ecp11,
        spec: "§6.1.3",
        title: "GET /ecp/manifest signed over the URL path",
        requirement: "HMAC-SHA256(secret, \"/ecp/manifest\") in lowercase hex MUST be accepted: 200.",
        needs: Needs::Secret,
        run: auth_007,
    },
    Check {
        id: "AUTH-008",
        level: Must,
        profile: Ecp11,
        spec: "§6.1.3",
        title: "GET /ecp/skills signed over the URL path",
        requirement: "HMAC-SHA256(secret, \"/ecp/skills\") in lowercase hex MUST be accepted: 200.",
        needs: Needs::Secret,
        run: auth_008,
    },
    Check {
        id: "AUTH-009",
        level: Must,
        profile: Ecp11,
        spec: "§6.1.2",
        title: "POST /ecp/skills signed over the raw body",
        requirement: "HMAC-SHA256(secret, body bytes) MUST be accepted: 200 and the packet merged.",
        needs: Needs::Secret,
        run: auth_009,
    },
    Check {
        id: "AUTH-010",
        level: Must,
        profile: Ecp11,
        spec: "§5.1.3, §6.3.1",
        title: "A wrongly signed push changes nothing",
        requirement: "After a refused push the names, hashes, counts and sequence numbers of the manifest \
                      and the listing MUST be as before (times may differ: a node may set them per request).",
        needs: Needs::Secret,
        run: auth_010,
    },
    Check {
        id: "AUTH-011",
        level: Must,
        profile: Ecp11,
        spec: "§6.3.1",
        title: "GET /ecp/skills with a malformed X-ECP-HMAC (not hex)",
        requirement: "A header that is not 64 hex characters MUST be answered 403 with a JSON error.",
        needs: Needs::Secret,
        run: auth_011,
    },
    Check {
        id: "AUTH-012",
        level: Must,
        profile: Ecp11,
        spec: "§6.1.3",
        title: "GET /ecp/skills?since=0 signed over the path alone",
        requirement: "The query is not part of the signed payload: the path signature MUST be accepted (200).",
        needs: Needs::Secret,
        run: auth_012,
    },
    Check {
        id: "AUTH-013",
        level: Must,
        profile: Ecp11,
        spec: "§6.1.2, §6.3.1",
        title: "POST /ecp/skills signed over the path instead of the body",
        requirement: "A POST signature MUST cover the body: the path's signature MUST be answered 403.",
        needs: Needs::Secret,
        run: auth_013,
    },
    Check {
        id: "AUTH-014",
        level: May,
        profile: Ecp11,
        spec: "§6.2.1",
        title: "GET /ecp/skills signed over the full URL (as the Go client signs)",
        requirement: "A node MAY accept HMAC(secret, \"http://\" + Host + path).",
        needs: Needs::Secret,
        run: auth_014,
    },
];

fn secret(cx: &Ctx<'_>) -> String {
    cx.target.secret().unwrap_or_default().to_owned()
}

/// A signature under a secret the target does not have.
fn wrong(cx: &Ctx<'_>, payload: &[u8]) -> String {
    hmac_hex(format!("{}-not-it", secret(cx)).as_bytes(), payload)
}

fn get(cx: &Ctx<'_>, path: &str, sign: Sign) -> Result<Exchange, Problem> {
    cx.send(Method::GET, path, &[], None, sign)
}

fn post(cx: &Ctx<'_>, body: Vec<u8>, sign: Sign) -> Result<Exchange, Problem> {
    cx.send(Method::POST, "/ecp/skills", &[("content-type", "application/json")], Some(body), sign)
}

fn refused(ex: &Exchange) -> Verdict {
    let body = expect_json_error(ex, &[403])?;
    Ok(format!("403 {}", crate::target::cut(body["error"].as_str().unwrap_or_default(), 80)))
}

/// Pushes `body` (of [`push_body`], carrying `name`) signed as `sign`: it
/// must be refused, and `name` not served afterwards.
fn refused_push(cx: &Ctx<'_>, name: &str, body: Vec<u8>, sign: Sign) -> Verdict {
    let verdict = refused(&post(cx, body, sign)?)?;
    not_served(cx, name)?;
    Ok(verdict)
}

fn accepted(ex: &Exchange) -> Verdict {
    ensure(ex.status == 200 && ex.json().is_some(), || {
        fail(format!("a correctly signed request was answered {}", ex.status)).on(ex)
    })?;
    Ok("200".into())
}

fn auth_001(cx: &mut Ctx<'_>) -> Verdict {
    refused(&get(cx, "/ecp/manifest", Sign::Omit)?)
}

fn auth_002(cx: &mut Ctx<'_>) -> Verdict {
    refused(&get(cx, "/ecp/skills", Sign::Omit)?)
}

fn auth_003(cx: &mut Ctx<'_>) -> Verdict {
    let (name, body) = push_body(cx, "a003-unsigned");
    refused_push(cx, &name, body, Sign::Omit)
}

fn auth_004(cx: &mut Ctx<'_>) -> Verdict {
    let path = cx.target.signed_path("/ecp/manifest");
    refused(&get(cx, "/ecp/manifest", Sign::With(wrong(cx, path.as_bytes())))?)
}

fn auth_005(cx: &mut Ctx<'_>) -> Verdict {
    let path = cx.target.signed_path("/ecp/skills");
    refused(&get(cx, "/ecp/skills", Sign::With(wrong(cx, path.as_bytes())))?)
}

fn auth_006(cx: &mut Ctx<'_>) -> Verdict {
    let (name, body) = push_body(cx, "a006-wrong");
    let mut other = body.clone();
    other.push(b' ');
    let signature = hmac_hex(secret(cx).as_bytes(), &other);
    refused_push(cx, &name, body, Sign::With(signature))
}

fn auth_007(cx: &mut Ctx<'_>) -> Verdict {
    accepted(&get(cx, "/ecp/manifest", Sign::Legacy)?)
}

fn auth_008(cx: &mut Ctx<'_>) -> Verdict {
    accepted(&get(cx, "/ecp/skills", Sign::Legacy)?)
}

fn auth_009(cx: &mut Ctx<'_>) -> Verdict {
    let (name, body) = push_body(cx, "a009-signed");
    let ex = post(cx, body, Sign::Legacy)?;
    accepted(&ex)?;
    merged_and_served(cx, &ex, &ex.json().unwrap_or(Value::Null), &name)
}

fn auth_010(cx: &mut Ctx<'_>) -> Verdict {
    let before = state(cx)?;
    let (name, body) = push_body(cx, "a010-forged");
    let ex = post(cx, body.clone(), Sign::With(wrong(cx, &body)))?;
    let after = state(cx)?;
    ensure(before == after, || {
        fail(format!(
            "the target changed after a push answered {} (a concurrent writer can also cause this)",
            ex.status
        ))
        .on(&ex)
        .show("before", &before)
        .show("after", &after)
    })?;
    not_served(cx, &name)?;
    Ok(format!("push answered {}; names, hashes and counts unchanged", ex.status))
}

fn auth_011(cx: &mut Ctx<'_>) -> Verdict {
    refused(&get(cx, "/ecp/skills", Sign::With("z".repeat(64)))?)
}

fn auth_012(cx: &mut Ctx<'_>) -> Verdict {
    accepted(&get(cx, "/ecp/skills?since=0", Sign::Legacy)?)
}

fn auth_013(cx: &mut Ctx<'_>) -> Verdict {
    let (name, body) = push_body(cx, "a013-path-signed");
    let path = cx.target.signed_path("/ecp/skills");
    let signature = hmac_hex(secret(cx).as_bytes(), path.as_bytes());
    refused_push(cx, &name, body, Sign::With(signature))
}

fn auth_014(cx: &mut Ctx<'_>) -> Verdict {
    let url = reqwest::Url::parse(&cx.target.url("/ecp/skills")).map_err(|e| fail(e.to_string()))?;
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let full = format!("{}://{host}{}", url.scheme(), url.path());
    accepted(&get(cx, "/ecp/skills", Sign::With(hmac_hex(secret(cx).as_bytes(), full.as_bytes())))?)
}
