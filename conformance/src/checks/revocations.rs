//! REV: revocations (SPEC §14, our addition): an origin revokes one exact
//! version with a revocation signed by its key; the target goes back to
//! the newest version not revoked, refuses the revoked one from then on,
//! serves the revocation on, and refuses a revocation its origin did not
//! sign. Every check is skipped when the target's manifest does not list
//! `revocations` in its profiles (a Go node ignores the member).
//!
//! Each check speaks for an origin of its own (`ecpconf-revoker<n>-<run>`)
//! with a key made from the run id, pushes two signed versions of its own
//! skill, and withdraws it at the end with a signed tombstone.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, conflicts, count, counts_text, ensure, fail,
    served, skip,
};
use crate::packets;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "REV-001",
        level: Must,
        profile: Ecp12,
        spec: "§14.5, §14.6",
        title: "Push two signed versions, then the origin's revocation of the newer one",
        requirement: "The node MUST go back to the earlier version: served again, the revoked one not served.",
        needs: Needs::Nothing,
        run: rev_001,
    },
    Check {
        id: "REV-002",
        level: Must,
        profile: Ecp12,
        spec: "§14.6",
        title: "Push the revoked version again after its revocation",
        requirement: "The packet MUST be refused, its conflicts line saying it was revoked, and not served.",
        needs: Needs::Nothing,
        run: rev_002,
    },
    Check {
        id: "REV-003",
        level: Must,
        profile: Ecp12,
        spec: "§14.4",
        title: "Read the revocations a node serves after taking one",
        requirement: "GET /ecp/skills MUST carry the revocation in `revocations`, its originSignature unchanged.",
        needs: Needs::Nothing,
        run: rev_003,
    },
    Check {
        id: "REV-004",
        level: Must,
        profile: Ecp12,
        spec: "§14.5",
        title: "Push a revocation signed by another key, and one changed after signing",
        requirement: "Both MUST be refused: the revoked version stays served.",
        needs: Needs::Nothing,
        run: rev_004,
    },
];

/// The key of check `n` within this run.
fn seed(cx: &Ctx<'_>, n: u8) -> [u8; 32] {
    Sha256::digest(format!("ecpconf-revoker-key-{n}-{}", cx.run_id).as_bytes()).into()
}

fn takes_revocations(cx: &Ctx<'_>) -> Result<(), Problem> {
    let (_, manifest) = cx.manifest()?;
    let listed = manifest["profiles"].as_array().is_some_and(|p| p.iter().any(|p| p == "revocations"));
    ensure(listed, || skip("the target does not list revocations in its manifest's profiles"))
}

/// One skill of check `n`, its two versions pushed and installed (signed).
struct Versions {
    key: [u8; 32],
    origin: String,
    name: String,
    first: Value,
    second: Value,
}

fn two_versions(cx: &Ctx<'_>, n: u8, tag: &str) -> Result<Versions, Problem> {
    let (key, origin, name) = (seed(cx, n), format!("ecpconf-revoker{n}-{}", cx.run_id), cx.name(tag));
    let mut first = packets::good_packet(&origin, &name, &packets::time_from_now(-3600));
    packets::sign_origin(&mut first, &key, &origin);
    let mut second = packets::good_packet(&origin, &name, &packets::time_from_now(-60));
    let body = format!("{}\n4. The second version.\n", second["skillBody"].as_str().unwrap_or_default());
    packets::set_body(&mut second, &body);
    packets::sign_origin(&mut second, &key, &origin);
    for packet in [&first, &second] {
        let (ex, result) = cx.push(&cx.update(vec![packet.clone()]))?;
        let installed = count(&result, "newSkills") + count(&result, "updatedSkills");
        ensure(installed == 1, || {
            fail(format!("a version of {name} was not installed: {}", counts_text(&result)))
                .on(&ex)
                .show("conflicts", &result["conflicts"])
        })?;
    }
    Ok(Versions { key, origin, name, first, second })
}

fn digest(packet: &Value) -> String {
    packet["integrityHash"].as_str().unwrap_or_default().to_owned()
}

/// Pushes an update of `revocations` alone.
fn push_revocations(cx: &Ctx<'_>, revocations: Vec<Value>) -> Result<(), Problem> {
    let mut update = cx.update(Vec::new());
    update["revocations"] = Value::Array(revocations);
    let (ex, _) = cx.push(&update)?;
    ensure(ex.status == 200, || fail(format!("a push of revocations was answered {}", ex.status)).on(&ex))
}

/// The integrityHash the listing serves for `name`, if any.
fn served_hash(cx: &Ctx<'_>, name: &str) -> Result<(crate::target::Exchange, Option<String>), Problem> {
    let (ex, listing) = cx.listing()?;
    let hash = served(&listing, name).and_then(|p| p["integrityHash"].as_str()).map(str::to_owned);
    Ok((ex, hash))
}

/// Revokes the second version with the origin's key; the revocation pushed.
fn revoke_second(cx: &Ctx<'_>, v: &Versions) -> Result<Value, Problem> {
    let revocation = packets::signed_revocation(
        &v.key,
        &v.origin,
        &v.name,
        &digest(&v.second),
        "conformance: a bad version",
    );
    push_revocations(cx, vec![revocation.clone()])?;
    Ok(revocation)
}

/// Withdraws the skill with a tombstone of the version served, signed by its origin.
fn withdraw(cx: &Ctx<'_>, v: &Versions) {
    for packet in [&v.first, &v.second] {
        let mut tombstone = packet.clone();
        tombstone["deprecated"] = Value::Bool(true);
        packets::sign_origin(&mut tombstone, &v.key, &v.origin);
        let _ = cx.push(&cx.update(vec![tombstone]));
    }
}

fn rev_001(cx: &mut Ctx<'_>) -> Verdict {
    takes_revocations(cx)?;
    let v = two_versions(cx, 1, "r001")?;
    revoke_second(cx, &v)?;
    let (ex, now) = served_hash(cx, &v.name)?;
    withdraw(cx, &v);
    ensure(now.as_deref() == Some(digest(&v.first).as_str()), || {
        fail(format!("after the revocation {} is served as {now:?}, not as its first version", v.name))
            .on(&ex)
    })?;
    Ok("the earlier version is served again".into())
}

fn rev_002(cx: &mut Ctx<'_>) -> Verdict {
    takes_revocations(cx)?;
    let v = two_versions(cx, 2, "r002")?;
    revoke_second(cx, &v)?;
    let (ex, result) = cx.push(&cx.update(vec![v.second.clone()]))?;
    let line = conflicts(&result).into_iter().find(|l| l.contains(&v.name)).unwrap_or_default();
    let (lex, now) = served_hash(cx, &v.name)?;
    withdraw(cx, &v);
    ensure(count(&result, "rejectedSkills") == 1 && line.contains("revoked"), || {
        fail(format!("the revoked version pushed again: {}, {line:?}", counts_text(&result))).on(&ex)
    })?;
    ensure(now.as_deref() != Some(digest(&v.second).as_str()), || {
        fail(format!("the revoked version of {} is served", v.name)).on(&lex)
    })?;
    Ok(crate::target::cut(&line, 100))
}

fn rev_003(cx: &mut Ctx<'_>) -> Verdict {
    takes_revocations(cx)?;
    let v = two_versions(cx, 3, "r003")?;
    let revocation = revoke_second(cx, &v)?;
    let (ex, listing) = cx.listing()?;
    withdraw(cx, &v);
    let carried = listing["revocations"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["skillName"] == v.name.as_str()))
        .cloned();
    let carried =
        carried.ok_or_else(|| fail("GET /ecp/skills carries no revocation of the skill").on(&ex))?;
    ensure(
        carried["originSignature"] == revocation["originSignature"]
            && carried["digest"] == revocation["digest"],
        || fail("the revocation served is not the one pushed").on(&ex).show("served", &carried),
    )?;
    Ok("served on, signature unchanged".into())
}

fn rev_004(cx: &mut Ctx<'_>) -> Verdict {
    takes_revocations(cx)?;
    let v = two_versions(cx, 4, "r004")?;
    let other = seed(cx, 40);
    let forged = packets::signed_revocation(&other, &v.origin, &v.name, &digest(&v.second), "forged");
    let mut tampered = packets::signed_revocation(&v.key, &v.origin, &v.name, &digest(&v.second), "genuine");
    tampered["reason"] = Value::String("changed after signing".into());
    push_revocations(cx, vec![forged, tampered])?;
    let (ex, now) = served_hash(cx, &v.name)?;
    withdraw(cx, &v);
    ensure(now.as_deref() == Some(digest(&v.second).as_str()), || {
        fail(format!("after forged revocations {} is served as {now:?}, not as its current version", v.name))
            .on(&ex)
    })?;
    Ok("both refused; the version stays served".into())
}
