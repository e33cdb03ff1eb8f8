//! VER: exact versions by digest, `GET /ecp/skills/{name}?digest=HEX`
//! (SPEC §5.7, our addition for lockfiles). Every check is skipped when the
//! target's manifest does not list `versions` in its profiles (a Go node
//! answers 404 to the path, which says nothing).
//!
//! The checks push their own skills (named for the run), one version
//! after another, so they never depend on what the target held before.

use serde_json::Value;

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, ensure, expect_json_error, fail, skip,
};
use crate::packets;
use crate::target::Exchange;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "VER-001",
        level: Must,
        profile: Ecp12,
        spec: "§5.7.1, §5.7.2",
        title: "GET /ecp/skills/{name}?digest= with the integrityHash of the served version",
        requirement: "The node MUST answer 200 with a KnowledgeUpdate whose peerInstance is its own and whose \
                      skills are exactly that one version.",
        needs: Needs::Nothing,
        run: ver_001,
    },
    Check {
        id: "VER-002",
        level: Should,
        profile: Ecp12,
        spec: "§5.7.2, §5.6.6",
        title: "Push a newer version, then ask for the superseded one by its digest",
        requirement: "A node that keeps superseded versions SHOULD serve the one asked for, not the current one.",
        needs: Needs::Nothing,
        run: ver_002,
    },
    Check {
        id: "VER-003",
        level: Must,
        profile: Ecp12,
        spec: "§5.7.3",
        title: "Ask for a digest no version of the skill has",
        requirement: "The node MUST answer 404 with a JSON error, never another version.",
        needs: Needs::Nothing,
        run: ver_003,
    },
    Check {
        id: "VER-004",
        level: Must,
        profile: Ecp12,
        spec: "§5.7.3",
        title: "Ask with a digest that is not 64 hex digits, and with none",
        requirement: "The node MUST answer 400 with a JSON error.",
        needs: Needs::Nothing,
        run: ver_004,
    },
];

/// Skips unless the target lists `versions` in its manifest's profiles.
fn versions_served(cx: &Ctx<'_>) -> Result<(), Problem> {
    let (_, manifest) = cx.manifest()?;
    let listed = manifest["profiles"].as_array().is_some_and(|p| p.iter().any(|p| p == "versions"));
    ensure(listed, || skip("the target does not list versions in its manifest's profiles"))
}

/// Pushes a good packet named for `tag` with `body_line` in its body,
/// created `age` seconds ago; its name and integrityHash.
fn push_version(cx: &Ctx<'_>, tag: &str, body_line: &str, age: i64) -> Result<(String, String), Problem> {
    let name = cx.name(tag);
    let mut packet = packets::good_packet(&cx.origin(), &name, &packets::time_from_now(-age));
    let body = format!("{}\n{body_line}\n", packet["skillBody"].as_str().unwrap_or_default());
    packets::set_body(&mut packet, &body);
    let hash = packet["integrityHash"].as_str().unwrap_or_default().to_owned();
    let (ex, result) = cx.push(&cx.update(vec![packet]))?;
    let installed = result["newSkills"].as_u64().unwrap_or(0) + result["updatedSkills"].as_u64().unwrap_or(0);
    ensure(installed == 1, || fail(format!("the push of {name} was not installed: {result}")).on(&ex))?;
    Ok((name, hash))
}

/// The one packet of an exact-version answer, checked to be `hash`.
fn exactly(cx: &mut Ctx<'_>, ex: &Exchange, name: &str, hash: &str) -> Result<(), Problem> {
    ensure(ex.status == 200, || fail(format!("expected 200, got {}", ex.status)).on(ex))?;
    let body: Value = ex.json().ok_or_else(|| fail("the answer is not JSON").on(ex))?;
    let instance = cx.instance()?;
    ensure(body["peerInstance"] == instance.as_str(), || {
        fail(format!("peerInstance is {}, not the node's {instance:?}", body["peerInstance"])).on(ex)
    })?;
    let skills = body["skills"].as_array().ok_or_else(|| fail("no skills array").on(ex))?;
    ensure(skills.len() == 1, || fail(format!("{} packets, not exactly one", skills.len())).on(ex))?;
    let p = &skills[0];
    ensure(p["skillName"] == name && p["integrityHash"] == hash, || {
        fail(format!("served {} {}, not {name} {hash}", p["skillName"], p["integrityHash"])).on(ex)
    })?;
    let body_hash = packets::sha256_hex(p["skillBody"].as_str().unwrap_or_default().as_bytes());
    ensure(body_hash == hash, || fail("the served body does not hash to its integrityHash").on(ex))
}

fn ver_001(cx: &mut Ctx<'_>) -> Verdict {
    versions_served(cx)?;
    let (name, hash) = push_version(cx, "v001", "only version", 3600)?;
    let ex = cx.get(&format!("/ecp/skills/{name}?digest={hash}"))?;
    exactly(cx, &ex, &name, &hash)?;
    Ok(format!("200, exactly {name} {}", &hash[..16]))
}

fn ver_002(cx: &mut Ctx<'_>) -> Verdict {
    versions_served(cx)?;
    let (name, first) = push_version(cx, "v002", "first version", 7200)?;
    let (_, second) = push_version(cx, "v002", "second version", 3600)?;
    let ex = cx.get(&format!("/ecp/skills/{name}?digest={first}"))?;
    exactly(cx, &ex, &name, &first)?;
    let ex = cx.get(&format!("/ecp/skills/{name}?digest={second}"))?;
    exactly(cx, &ex, &name, &second)?;
    Ok("both versions served, each as asked".into())
}

fn ver_003(cx: &mut Ctx<'_>) -> Verdict {
    versions_served(cx)?;
    let (name, hash) = push_version(cx, "v003", "held version", 3600)?;
    let other = packets::sha256_hex(format!("no version {}", cx.run_id).as_bytes());
    ensure(other != hash, || fail("digests collide"))?;
    let ex = cx.get(&format!("/ecp/skills/{name}?digest={other}"))?;
    let error = expect_json_error(&ex, &[404])?;
    Ok(format!("404 {}", crate::target::cut(error["error"].as_str().unwrap_or_default(), 80)))
}

fn ver_004(cx: &mut Ctx<'_>) -> Verdict {
    versions_served(cx)?;
    let (name, hash) = push_version(cx, "v004", "held version", 3600)?;
    for query in [format!("?digest={}", &hash[..63]), "?digest=not-a-digest".into(), String::new()] {
        let ex = cx.get(&format!("/ecp/skills/{name}{query}"))?;
        expect_json_error(&ex, &[400])?;
    }
    Ok("400 for a short, a non-hex and a missing digest".into())
}
