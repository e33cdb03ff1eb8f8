//! SIGN checks of replays: a captured signature with a new nonce or time,
//! a GET replayed byte for byte, and a replayed push that would withdraw a
//! skill if accepted (SPEC §10.1.4).

use reqwest::Method;
use serde_json::json;

use super::state;
use super::{accepted, key, refused, send_signed, sign};
use crate::check::{Ctx, Verdict, count, ensure, fail, served};
use crate::packets::{self, fresh_nonce};
use crate::target::Signed;

pub(super) fn sign_018(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let original = sign(cx, &key, &Method::GET, "/ecp/manifest", b"");
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &original)?;
    accepted(&ex, "a correctly signed GET /ecp/manifest")?;
    let new_nonce = Signed { nonce: fresh_nonce(), ..original.clone() };
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &new_nonce)?;
    refused(&ex, "bad_signature").map_err(|p| p.show("changed", "X-ECP-Nonce only"))?;
    let earlier = packets::parse_timestamp(&original.timestamp).unwrap_or_default() - 1;
    let new_time = Signed { timestamp: earlier.to_string(), ..original };
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &new_time)?;
    refused(&ex, "bad_signature")
        .map_err(|p| p.show("changed", "X-ECP-Timestamp only (one second earlier)"))?;
    Ok("401 bad_signature for a new nonce and for a new timestamp".into())
}

pub(super) fn sign_019(cx: &mut Ctx<'_>) -> Verdict {
    let key = key(cx)?;
    let signed = sign(cx, &key, &Method::GET, "/ecp/manifest", b"");
    let ex = send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?;
    accepted(&ex, "a correctly signed GET /ecp/manifest")?;
    refused(&send_signed(cx, Method::GET, "/ecp/manifest", None, &signed)?, "replayed_nonce")
}

pub(super) fn sign_020(cx: &mut Ctx<'_>) -> Verdict {
    // A withdrawal of a skill not yet held changes nothing (§7.9.2 rule 1);
    // once the skill is installed, the same withdrawal would withdraw it
    // (rule 7). So a node that accepts the replay visibly applies it.
    let key = key(cx)?;
    let name = cx.name("s020-replayed");
    let packet = cx.good(&name);
    let mut tombstone = packet.clone();
    tombstone["deprecated"] = json!(true);
    let withdrawal = packets::encode(&cx.update(vec![tombstone]));
    let captured = sign(cx, &key, &Method::POST, "/ecp/skills", &withdrawal);
    let ex = send_signed(cx, Method::POST, "/ecp/skills", Some(withdrawal.clone()), &captured)?;
    accepted(&ex, "a signed withdrawal of a skill not held")?;
    let install = packets::encode(&cx.update(vec![packet]));
    let signed = sign(cx, &key, &Method::POST, "/ecp/skills", &install);
    let ex = send_signed(cx, Method::POST, "/ecp/skills", Some(install), &signed)?;
    let result = accepted(&ex, "a signed push of the skill")?;
    ensure(count(&result, "newSkills") == 1, || {
        fail(format!("setting up: the push of {name} gave newSkills {}", result["newSkills"])).on(&ex)
    })?;
    let before = state(cx)?;
    let replay = send_signed(cx, Method::POST, "/ecp/skills", Some(withdrawal), &captured)?;
    let after = state(cx)?;
    let verdict = refused(&replay, "replayed_nonce")?;
    ensure(before == after, || {
        fail("the target changed after the replay was refused (a concurrent writer can also cause this)")
            .on(&replay)
            .show("before", &before["manifest"])
            .show("after", &after["manifest"])
    })?;
    ensure(served(&after["listing"], &name).is_some(), || {
        fail(format!("{name} was withdrawn by the replayed push")).on(&replay)
    })?;
    Ok(format!("{verdict}; {name} still served, nothing changed"))
}
