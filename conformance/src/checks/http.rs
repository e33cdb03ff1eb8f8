//! HTTP: hygiene of the endpoints (SPEC §5.1, §5.5) — JSON content types,
//! 404 and 405 as JSON errors, no server paths in error texts, content
//! types and unknown query parameters that must not matter.

use std::collections::BTreeSet;

use reqwest::Method;

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, count, counts_text, ensure, expect_json_error,
    fail, served_names,
};
use crate::packets;
use crate::target::{Exchange, Sign};

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "HTTP-001",
        level: Should,
        profile: Ecp11,
        spec: "§5.1.1",
        title: "Content-Type of GET /ecp/manifest",
        requirement: "The node SHOULD send Content-Type: application/json.",
        needs: Needs::Nothing,
        run: http_001,
    },
    Check {
        id: "HTTP-002",
        level: Should,
        profile: Ecp11,
        spec: "§5.1.1",
        title: "Content-Type of GET /ecp/skills",
        requirement: "The node SHOULD send Content-Type: application/json.",
        needs: Needs::Nothing,
        run: http_002,
    },
    Check {
        id: "HTTP-003",
        level: Should,
        profile: Ecp11,
        spec: "§5.1.1",
        title: "Content-Type of the MergeResult",
        requirement: "The node SHOULD send Content-Type: application/json.",
        needs: Needs::Nothing,
        run: http_003,
    },
    Check {
        id: "HTTP-004",
        level: Should,
        profile: Ecp11,
        spec: "§5.1.1, §5.5.1",
        title: "Content-Type of a 400 error",
        requirement: "An error answer SHOULD be sent as Content-Type: application/json.",
        needs: Needs::Nothing,
        run: http_004,
    },
    Check {
        id: "HTTP-005",
        level: Should,
        profile: Ecp11,
        spec: "§5.5.2",
        title: "GET an unknown path under /ecp/",
        requirement: "The node SHOULD answer 404.",
        needs: Needs::Nothing,
        run: http_005,
    },
    Check {
        id: "HTTP-006",
        level: Must,
        profile: Ecp12,
        spec: "§5.5.1, §5.5.2",
        title: "GET an unknown path: a JSON 404",
        requirement: "The node MUST answer 404 with a JSON object carrying an \"error\" string.",
        needs: Needs::Nothing,
        run: http_006,
    },
    Check {
        id: "HTTP-007",
        level: Must,
        profile: Ecp12,
        spec: "§5.5.1, §5.5.2",
        title: "DELETE /ecp/skills",
        requirement: "A known path with another method MUST be answered 405 with a JSON error.",
        needs: Needs::Nothing,
        run: http_007,
    },
    Check {
        id: "HTTP-008",
        level: Must,
        profile: Ecp12,
        spec: "§5.5.1, §5.5.2",
        title: "POST /ecp/manifest",
        requirement: "A known path with another method MUST be answered 405 with a JSON error.",
        needs: Needs::Nothing,
        run: http_008,
    },
    Check {
        id: "HTTP-009",
        level: Should,
        profile: Ecp12,
        spec: "§5.5.2",
        title: "A 405 names the allowed methods",
        requirement: "A 405 SHOULD carry an Allow header naming GET for /ecp/manifest (RFC 9110 §15.5.6).",
        needs: Needs::Nothing,
        run: http_009,
    },
    Check {
        id: "HTTP-010",
        level: Must,
        profile: Ecp12,
        spec: "§5.5.4",
        title: "Error texts show no server paths",
        requirement: "An error answer (bad JSON, wrong types, bad UTF-8, unknown path, wrong method, empty body) \
                      MUST NOT show /home/, /root/, /tmp/, /var/, /usr/, /opt/, /srv/, /Users/ or C:\\.",
        needs: Needs::Nothing,
        run: http_010,
    },
    Check {
        id: "HTTP-011",
        level: Must,
        profile: Ecp11,
        spec: "§5.1.1",
        title: "POST /ecp/skills with Content-Type: text/plain",
        requirement: "A node MUST NOT refuse a request body because of its Content-Type: the update is merged.",
        needs: Needs::Nothing,
        run: http_011,
    },
    Check {
        id: "HTTP-012",
        level: Must,
        profile: Ecp11,
        spec: "§5.1.2",
        title: "GET /ecp/manifest and /ecp/skills with unknown query parameters",
        requirement: "A node MUST ignore query parameters it does not know: 200 and the same skills.",
        needs: Needs::Nothing,
        run: http_012,
    },
];

fn json_content_type(ex: &Exchange) -> Verdict {
    let ct = ex.header("content-type").unwrap_or_default();
    let essence = ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    ensure(essence == "application/json", || {
        fail(format!("Content-Type {ct:?}, not application/json")).on(ex)
    })?;
    Ok(ct.to_owned())
}

fn http_001(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, _) = cx.manifest()?;
    json_content_type(&ex)
}

fn http_002(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, _) = cx.listing()?;
    json_content_type(&ex)
}

fn http_003(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("h003");
    let (ex, _) = cx.push(&cx.update(vec![cx.good(&name)]))?;
    json_content_type(&ex)
}

fn http_004(cx: &mut Ctx<'_>) -> Verdict {
    let ex = cx.post(b"not json".to_vec())?;
    expect_json_error(&ex, &[400])?;
    json_content_type(&ex)
}

fn unknown_path(cx: &Ctx<'_>) -> Result<Exchange, Problem> {
    cx.get(&format!("/ecp/{}-nope", cx.name("h")))
}

fn http_005(cx: &mut Ctx<'_>) -> Verdict {
    let ex = unknown_path(cx)?;
    ensure(ex.status == 404, || fail(format!("expected 404, got {}", ex.status)).on(&ex))?;
    Ok("404".into())
}

fn http_006(cx: &mut Ctx<'_>) -> Verdict {
    let ex = unknown_path(cx)?;
    expect_json_error(&ex, &[404])?;
    Ok("404 with a JSON error".into())
}

fn http_007(cx: &mut Ctx<'_>) -> Verdict {
    let ex = cx.send(Method::DELETE, "/ecp/skills", &[], None, Sign::Auto)?;
    expect_json_error(&ex, &[405])?;
    cx.still_answers()?;
    Ok("405 with a JSON error".into())
}

fn post_manifest(cx: &Ctx<'_>) -> Result<Exchange, Problem> {
    cx.send(
        Method::POST,
        "/ecp/manifest",
        &[("content-type", "application/json")],
        Some(b"{}".to_vec()),
        Sign::Auto,
    )
}

fn http_008(cx: &mut Ctx<'_>) -> Verdict {
    let ex = post_manifest(cx)?;
    expect_json_error(&ex, &[405])?;
    Ok("405 with a JSON error".into())
}

fn http_009(cx: &mut Ctx<'_>) -> Verdict {
    let ex = post_manifest(cx)?;
    let allow = ex.header("allow").unwrap_or_default().to_owned();
    ensure(ex.status == 405 && allow.to_ascii_uppercase().contains("GET"), || {
        fail(format!("status {}, Allow {allow:?}", ex.status)).on(&ex)
    })?;
    Ok(format!("Allow: {allow}"))
}

/// Prefixes of absolute server paths that no error text may show.
const SERVER_PATHS: &[&str] =
    &["/home/", "/root/", "/tmp/", "/var/", "/usr/", "/opt/", "/srv/", "/Users/", "C:\\"];

fn http_010(cx: &mut Ctx<'_>) -> Verdict {
    let mut deep = b"{\"skills\":".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 50_000));
    let mut errors = vec![
        cx.post(b"hello, node".to_vec())?,
        cx.post(b"{\"peerInstance\": 7, \"skills\": \"x\"}".to_vec())?,
        cx.post(b"{\"peerInstance\":\"p\",\"skills\":[{\"confidence\":\"high\"}]}".to_vec())?,
        cx.post(b"{\"peerInstance\":\"caf\xe9\xff\"}".to_vec())?,
        cx.post(deep)?,
        cx.post(Vec::new())?,
        cx.send(Method::DELETE, "/ecp/skills", &[], None, Sign::Auto)?,
    ];
    errors.push(unknown_path(cx)?);
    let mut seen = BTreeSet::new();
    for ex in &errors {
        if ex.status < 400 {
            continue;
        }
        seen.insert(ex.status);
        let raw = ex.text();
        let decoded = ex.json().and_then(|v| v["error"].as_str().map(str::to_owned)).unwrap_or_default();
        if let Some(p) = SERVER_PATHS.iter().find(|p| raw.contains(*p) || decoded.contains(*p)) {
            return Err(fail(format!("an error text shows the server path prefix {p:?}")).on(ex));
        }
    }
    ensure(!seen.is_empty(), || fail("none of the hostile requests was answered with an error status"))?;
    Ok(format!(
        "{} error answer(s) clean (statuses {seen:?})",
        errors.iter().filter(|e| e.status >= 400).count()
    ))
}

fn http_011(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("h011-text-plain");
    let body = packets::encode(&cx.update(vec![cx.good(&name)]));
    let ex =
        cx.send(Method::POST, "/ecp/skills", &[("content-type", "text/plain")], Some(body), Sign::Auto)?;
    let result = ex.json().filter(|_| ex.status == 200);
    ensure(result.as_ref().is_some_and(|r| count(r, "newSkills") == 1), || {
        fail(format!(
            "expected 200 and new 1, got {} {}",
            ex.status,
            result.as_ref().map(counts_text).unwrap_or_default()
        ))
        .on(&ex)
    })?;
    Ok("merged: new 1".into())
}

fn http_012(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (_, plain_m) = cx.manifest()?;
    let (_, plain_l) = cx.listing()?;
    let (mex, m) = cx.get_object("/ecp/manifest?ecpconf=1&verbose")?;
    let (lex, l) = cx.get_object("/ecp/skills?ecpconf=1&page=2")?;
    ensure(m["skillNames"] == plain_m["skillNames"], || {
        fail("the manifest's skillNames differ with an unknown query parameter").on(&mex)
    })?;
    let (a, b): (BTreeSet<String>, BTreeSet<String>) =
        (served_names(&l).into_iter().collect(), served_names(&plain_l).into_iter().collect());
    ensure(a == b, || fail("the listing differs with unknown query parameters").on(&lex))?;
    Ok(format!("same {} skill(s)", a.len()))
}
