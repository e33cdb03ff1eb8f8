//! SYNC: what our node promises beyond ECP/1.1 for synchronisation (SPEC
//! §3.3.1, §5.3.5, §5.3.6, §7.9.3, §10.2) — sequence numbers that grow with
//! each change, an ETag with 304, `?since=N` deltas, and tombstones that
//! travel as `deprecated: true`, and paging (`?since=N&limit=M` with a
//! `next` cursor). All are ecp-1.2 checks: the Go reference
//! always sends sequenceNum 0 and has no ETag, `since` or tombstones.

use serde_json::{Value, json};

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, count, counts_text, ensure, expect_json_error,
    fail, served, served_names,
};
use crate::packets::{self, time_from_now};
use crate::target::Exchange;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "SYNC-001",
        level: Must,
        profile: Ecp12,
        spec: "§3.3.1, §3.5",
        title: "Manifest sequenceNum after a change",
        requirement: "After a push that installs a skill, sequenceNum MUST be greater than before.",
        needs: Needs::Nothing,
        run: sync_001,
    },
    Check {
        id: "SYNC-002",
        level: Must,
        profile: Ecp12,
        spec: "§3.3.1, §3.5",
        title: "Listing and manifest report one sequenceNum",
        requirement: "With no change between them, GET /ecp/skills and GET /ecp/manifest MUST report the same sequenceNum.",
        needs: Needs::Nothing,
        run: sync_002,
    },
    Check {
        id: "SYNC-003",
        level: Should,
        profile: Ecp12,
        spec: "§3.3.1, §5.3.6",
        title: "sequenceNum after a push that changes nothing",
        requirement: "Re-pushing a held skill (unchanged) SHOULD leave sequenceNum as it was.",
        needs: Needs::Nothing,
        run: sync_003,
    },
    Check {
        id: "SYNC-004",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.6",
        title: "GET /ecp/skills carries an ETag",
        requirement: "The listing MUST be answered with an ETag header.",
        needs: Needs::Nothing,
        run: sync_004,
    },
    Check {
        id: "SYNC-005",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.6",
        title: "GET /ecp/skills with If-None-Match: the current ETag",
        requirement: "The node MUST answer 304 without a body.",
        needs: Needs::Nothing,
        run: sync_005,
    },
    Check {
        id: "SYNC-006",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.6",
        title: "GET /ecp/skills with If-None-Match: an ETag from before a change",
        requirement: "The node MUST answer 200 with the listing and a new ETag.",
        needs: Needs::Nothing,
        run: sync_006,
    },
    Check {
        id: "SYNC-007",
        level: Must,
        profile: Ecp12,
        spec: "§10.2, §5.3.5",
        title: "GET /ecp/skills?since=N after two pushes",
        requirement: "?since=N MUST serve the skill changed after N and not the one changed before it.",
        needs: Needs::Nothing,
        run: sync_007,
    },
    Check {
        id: "SYNC-008",
        level: Must,
        profile: Ecp12,
        spec: "§10.2",
        title: "GET /ecp/skills?since=<current sequenceNum>",
        requirement: "Nothing changed after the current sequence number: the answer MUST carry no skills.",
        needs: Needs::Nothing,
        run: sync_008,
    },
    Check {
        id: "SYNC-009",
        level: Must,
        profile: Ecp12,
        spec: "§7.9.3, §5.3.5, §10.2",
        title: "A tombstone travels as deprecated",
        requirement: "After the origin withdraws a skill (newer createdAt, deprecated: true), counted updated, \
                      ?since=N MUST serve it with deprecated: true.",
        needs: Needs::Nothing,
        run: sync_009,
    },
    Check {
        id: "SYNC-010",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.5, §5.2.1",
        title: "A withdrawn skill is no longer served as active",
        requirement: "The full listing MUST NOT serve it with deprecated: false, and the manifest MUST agree with the listing.",
        needs: Needs::Nothing,
        run: sync_010,
    },
    Check {
        id: "SYNC-011",
        level: Must,
        profile: Ecp12,
        spec: "§5.5.3, §10.2",
        title: "GET /ecp/skills?since=abc",
        requirement: "A since that is not an integer ≥ 0 MUST be answered 400 with a JSON error.",
        needs: Needs::Nothing,
        run: sync_011,
    },
    Check {
        id: "SYNC-012",
        level: Must,
        profile: Ecp12,
        spec: "§7.9.3.3, §7.9.2 (rule 1)",
        title: "Push a tombstone for a name the node does not hold",
        requirement: "It MUST change nothing: counted unchanged, not served.",
        needs: Needs::Nothing,
        run: sync_012,
    },
    Check {
        id: "SYNC-013",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.6",
        title: "GET /ecp/skills with If-None-Match: a tag that is not the node's",
        requirement: "The node MUST answer 200 with the listing.",
        needs: Needs::Nothing,
        run: sync_013,
    },
    Check {
        id: "SYNC-014",
        level: Should,
        profile: Ecp12,
        spec: "§3.3.1, §10.2",
        title: "A ?since answer reports the newest sequenceNum",
        requirement: "The sequenceNum of a ?since=N answer SHOULD be the manifest's current sequenceNum.",
        needs: Needs::Nothing,
        run: sync_014,
    },
    Check {
        id: "SYNC-015",
        level: Should,
        profile: Ecp12,
        spec: "§10.2.5, §10.2.6",
        title: "GET /ecp/skills?since=N&limit=1 after three pushes, following next",
        requirement: "A node SHOULD page: each answer MUST then carry at most limit packets and a next cursor \
                      while more remain, and following next until it is absent MUST serve every packet changed \
                      after N exactly once. A node that ignores limit is reported as not paging.",
        needs: Needs::Nothing,
        run: sync_015,
    },
    Check {
        id: "SYNC-016",
        level: Should,
        profile: Ecp12,
        spec: "§5.5.3, §10.2.5",
        title: "GET /ecp/skills?since=0&limit=0",
        requirement: "A node that pages SHOULD answer a limit that is not an integer ≥ 1 with 400 and a JSON error.",
        needs: Needs::Nothing,
        run: sync_016,
    },
];

/// The manifest's sequenceNum.
fn sequence(cx: &Ctx<'_>) -> Result<i64, Problem> {
    let (ex, m) = cx.manifest()?;
    m["sequenceNum"].as_i64().ok_or_else(|| fail(format!("sequenceNum is {}", m["sequenceNum"])).on(&ex))
}

/// Pushes one good packet; it must be counted new.
fn push_new(cx: &Ctx<'_>, p: Value) -> Result<(), Problem> {
    let (ex, r) = cx.push(&cx.update(vec![p]))?;
    ensure(count(&r, "newSkills") == 1, || {
        fail(format!("the push was not counted new: {}", counts_text(&r))).on(&ex)
    })
}

fn etag(ex: &Exchange) -> Result<String, Problem> {
    ex.header("etag").map(str::to_owned).ok_or_else(|| fail("GET /ecp/skills has no ETag").on(ex))
}

fn sync_001(cx: &mut Ctx<'_>) -> Verdict {
    let before = sequence(cx)?;
    push_new(cx, cx.good(&cx.name("s001")))?;
    let after = sequence(cx)?;
    ensure(after > before, || fail(format!("sequenceNum {before} before the push, {after} after")))?;
    Ok(format!("{before} → {after}"))
}

fn sync_002(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (lex, l) = cx.listing()?;
    let (mex, m) = cx.manifest()?;
    ensure(l["sequenceNum"] == m["sequenceNum"], || {
        fail(format!("listing sequenceNum {}, manifest {}", l["sequenceNum"], m["sequenceNum"]))
            .on(&lex)
            .on(&mex)
    })?;
    Ok(format!("both {}", m["sequenceNum"]))
}

fn sync_003(cx: &mut Ctx<'_>) -> Verdict {
    let update = cx.update(vec![cx.good(&cx.name("s003"))]);
    cx.push(&update)?;
    let before = sequence(cx)?;
    let (ex, r) = cx.push(&update)?;
    let after = sequence(cx)?;
    ensure(after == before, || {
        fail(format!("sequenceNum {before} → {after} after a push counted {}", counts_text(&r))).on(&ex)
    })?;
    Ok(format!("stays {before}"))
}

fn sync_004(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (ex, _) = cx.listing()?;
    etag(&ex).map(|t| format!("ETag {t}"))
}

fn sync_005(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (ex, _) = cx.listing()?;
    let tag = etag(&ex)?;
    let again = cx.get_with("/ecp/skills", &[("if-none-match", &tag)])?;
    ensure(again.status == 304 && again.body.is_empty(), || {
        fail(format!(
            "If-None-Match {tag}: expected 304 without a body, got {} ({} bytes)",
            again.status,
            again.body.len()
        ))
        .on(&again)
    })?;
    Ok("304".into())
}

fn sync_006(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (ex, _) = cx.listing()?;
    let old = etag(&ex)?;
    push_new(cx, cx.good(&cx.name("s006")))?;
    let fresh = cx.get_with("/ecp/skills", &[("if-none-match", &old)])?;
    ensure(fresh.status == 200 && fresh.json().is_some(), || {
        fail(format!("a stale ETag got {}, expected 200 with the listing", fresh.status)).on(&fresh)
    })?;
    let new = etag(&fresh)?;
    ensure(new != old, || fail(format!("the ETag {old} did not change with the skill set")).on(&fresh))?;
    Ok(format!("{old} → {new}"))
}

fn since(cx: &Ctx<'_>, n: i64) -> Result<(Exchange, Value), Problem> {
    cx.get_object(&format!("/ecp/skills?since={n}"))
}

fn sync_007(cx: &mut Ctx<'_>) -> Verdict {
    let (a, b) = (cx.name("s007-a"), cx.name("s007-b"));
    push_new(cx, cx.good(&a))?;
    let n = sequence(cx)?;
    push_new(cx, cx.good(&b))?;
    let (ex, delta) = since(cx, n)?;
    let names = served_names(&delta);
    ensure(names.contains(&b) && !names.contains(&a), || {
        fail(format!("?since={n} should serve {b} and not {a}; it serves {} skill(s)", names.len()))
            .on(&ex)
            .show("served", format!("{names:?}"))
    })?;
    Ok(format!("?since={n}: {} skill(s)", names.len()))
}

fn sync_008(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let n = sequence(cx)?;
    let (ex, delta) = since(cx, n)?;
    let names = served_names(&delta);
    ensure(names.is_empty(), || {
        fail(format!("?since={n} (the current sequenceNum) serves {} skill(s) (a concurrent writer can also cause this)", names.len()))
            .on(&ex)
    })?;
    Ok(format!("?since={n}: no skills"))
}

/// Pushes a skill, then its tombstone (newer createdAt, deprecated); returns
/// the skill's name and the sequence number between the two.
fn withdraw(cx: &Ctx<'_>, tag: &str) -> Result<(String, i64), Problem> {
    let name = cx.name(tag);
    push_new(cx, packets::good_packet(&cx.origin(), &name, &time_from_now(-7200)))?;
    let n = sequence(cx)?;
    let mut tombstone = packets::good_packet(&cx.origin(), &name, &time_from_now(-3600));
    tombstone["deprecated"] = json!(true);
    let (ex, r) = cx.push(&cx.update(vec![tombstone]))?;
    ensure(count(&r, "updatedSkills") == 1 && count(&r, "rejectedSkills") == 0, || {
        fail(format!("the origin's tombstone was not counted updated: {}", counts_text(&r)))
            .on(&ex)
            .show("conflicts", &r["conflicts"])
    })?;
    Ok((name, n))
}

fn sync_009(cx: &mut Ctx<'_>) -> Verdict {
    let (name, n) = withdraw(cx, "s009")?;
    let (ex, delta) = since(cx, n)?;
    let p = served(&delta, &name)
        .ok_or_else(|| fail(format!("?since={n} does not serve the withdrawn {name}")).on(&ex))?;
    ensure(p["deprecated"] == true, || {
        fail(format!("?since={n} serves {name} with deprecated {}", p["deprecated"])).on(&ex)
    })?;
    Ok(format!("?since={n} serves it deprecated"))
}

fn sync_010(cx: &mut Ctx<'_>) -> Verdict {
    let (name, _) = withdraw(cx, "s010")?;
    let (lex, l) = cx.listing()?;
    if let Some(p) = served(&l, &name) {
        ensure(p["deprecated"] == true, || {
            fail(format!("the full listing still serves {name} as active")).on(&lex)
        })?;
    }
    let (mex, m) = cx.manifest()?;
    let named = m["skillNames"].as_array().is_some_and(|a| a.iter().any(|n| n == name.as_str()));
    ensure(named == served(&l, &name).is_some(), || {
        fail(format!(
            "the manifest {} {name} but the listing {}",
            if named { "names" } else { "omits" },
            if named { "omits it" } else { "serves it" }
        ))
        .on(&mex)
    })?;
    Ok(if named { "served as deprecated".into() } else { "left out of listing and manifest".into() })
}

fn sync_011(cx: &mut Ctx<'_>) -> Verdict {
    let ex = cx.get("/ecp/skills?since=abc")?;
    let e = expect_json_error(&ex, &[400])?;
    Ok(format!("400 {}", crate::target::cut(e["error"].as_str().unwrap_or_default(), 80)))
}

fn sync_012(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("s012-never-held");
    let mut tombstone = cx.good(&name);
    tombstone["deprecated"] = json!(true);
    let (ex, r) = cx.push(&cx.update(vec![tombstone]))?;
    let ok = count(&r, "unchanged") == 1
        && count(&r, "newSkills") == 0
        && count(&r, "updatedSkills") == 0
        && count(&r, "rejectedSkills") == 0;
    ensure(ok, || fail(format!("expected unchanged 1, got {}", counts_text(&r))).on(&ex))?;
    let (lex, l) = cx.listing()?;
    ensure(served(&l, &name).is_none(), || fail(format!("{name} is served")).on(&lex))?;
    Ok("unchanged 1, not served".into())
}

fn sync_013(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let ex = cx.get_with("/ecp/skills", &[("if-none-match", "\"ecpconf-not-a-tag\"")])?;
    ensure(ex.status == 200 && ex.json().is_some_and(|v| v.is_object()), || {
        fail(format!("expected 200 with the listing, got {}", ex.status)).on(&ex)
    })?;
    Ok("200".into())
}

fn sync_014(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let n = sequence(cx)?;
    let (ex, delta) = since(cx, 0)?;
    ensure(delta["sequenceNum"] == n, || {
        fail(format!("?since=0 reports sequenceNum {}, the manifest {n}", delta["sequenceNum"])).on(&ex)
    })?;
    Ok(format!("sequenceNum {n}"))
}

/// Most pages SYNC-015 follows: three packets need three, a few more allow
/// for concurrent writers.
const MAX_PAGES: usize = 20;

fn sync_015(cx: &mut Ctx<'_>) -> Verdict {
    let n = sequence(cx)?;
    let names: Vec<String> = ["s015-a", "s015-b", "s015-c"].iter().map(|t| cx.name(t)).collect();
    for name in &names {
        push_new(cx, cx.good(name))?;
    }
    let mut cursor = n;
    let mut seen: Vec<String> = Vec::new();
    for page in 1..=MAX_PAGES {
        let (ex, answer) = cx.get_object(&format!("/ecp/skills?since={cursor}&limit=1"))?;
        let served = served_names(&answer);
        let next = answer.get("next").and_then(Value::as_i64);
        if page == 1 && next.is_none() && served.len() > 1 {
            return Err(fail(format!(
                "the node does not page: ?since={n}&limit=1 served {} skills and no next",
                served.len()
            ))
            .on(&ex));
        }
        ensure(served.len() <= 1, || {
            fail(format!("page {page} (?since={cursor}&limit=1) serves {} skills", served.len())).on(&ex)
        })?;
        seen.extend(served);
        let Some(next) = next else {
            for name in &names {
                let times = seen.iter().filter(|s| *s == name).count();
                ensure(times == 1, || {
                    fail(format!("following next served {name} {times} time(s)"))
                        .on(&ex)
                        .show("served", format!("{seen:?}"))
                })?;
            }
            return Ok(format!("{page} page(s) of at most 1 skill, each pushed skill once"));
        };
        ensure(next > cursor && answer["sequenceNum"] == next, || {
            fail(format!(
                "page {page} (?since={cursor}) names next {next} with sequenceNum {}: next must move past since \
                 and equal sequenceNum",
                answer["sequenceNum"]
            ))
            .on(&ex)
        })?;
        cursor = next;
    }
    Err(fail(format!("still a next after {MAX_PAGES} pages of ?since={n}&limit=1 (3 skills pushed)")))
}

fn sync_016(cx: &mut Ctx<'_>) -> Verdict {
    let ex = cx.get("/ecp/skills?since=0&limit=0")?;
    let e = expect_json_error(&ex, &[400])?;
    Ok(format!("400 {}", crate::target::cut(e["error"].as_str().unwrap_or_default(), 80)))
}
