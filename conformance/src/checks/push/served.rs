//! PUSH checks of how a pushed skill is then served: listed, with lowered
//! confidence and provenance, its origin kept, as received; refused packets
//! never served (SPEC §5.4, §7).

use serde_json::json;

use super::{low_confidence, push, push_and_list, served_one, tampered, uppercase_hash};
use crate::check::{Ctx, Verdict, counts_text, ensure, fail, served};
use crate::expect;
use crate::packets::{self};

pub(super) fn push_012(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p012-served");
    let (lex, listing) = push_and_list(cx, cx.good(&name))?;
    served_one(&lex, &listing, &name)?;
    let (mex, m) = cx.manifest()?;
    let named = m["skillNames"].as_array().is_some_and(|a| a.iter().any(|n| n == name.as_str()));
    ensure(named, || fail(format!("the manifest does not name {name}")).on(&mex))?;
    Ok("served and named in the manifest".into())
}

pub(super) fn push_013(cx: &mut Ctx<'_>) -> Verdict {
    let names: Vec<String> =
        ["tampered", "low", "upper"].iter().map(|n| cx.name(&format!("p013-{n}"))).collect();
    let (ex, r) = push(
        cx,
        vec![tampered(cx, &names[0]), low_confidence(cx, &names[1]), uppercase_hash(cx, &names[2])],
    )?;
    let (lex, listing) = cx.listing()?;
    let shown: Vec<&String> = names.iter().filter(|n| served(&listing, n).is_some()).collect();
    ensure(shown.is_empty(), || fail(format!("refused packets are served: {shown:?}")).on(&ex).on(&lex))?;
    Ok(format!("none of 3 refused packets served ({})", counts_text(&r)))
}

pub(super) fn push_014(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p014-lowered");
    let (ex, listing) = push_and_list(cx, cx.good(&name))?;
    let p = served_one(&ex, &listing, &name)?;
    let c = p["confidence"].as_f64().unwrap_or(f64::NAN);
    ensure((c - 0.9 * 0.6).abs() < 1e-9, || {
        fail(format!("served confidence {}, expected 0.54 (0.9 received × trust 0.6)", p["confidence"]))
            .on(&ex)
            .show(&name, expect::short_packet(p))
    })?;
    Ok(format!("confidence {c}"))
}

pub(super) fn push_015(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p015-provenance");
    let (ex, listing) = push_and_list(cx, cx.good(&name))?;
    let p = served_one(&ex, &listing, &name)?;
    let prov = &p["provenance"];
    let mut problems = Vec::new();
    if (prov["originConfidence"].as_f64().unwrap_or(f64::NAN) - 0.9).abs() > 1e-9 {
        problems.push(format!("originConfidence {}, expected 0.9", prov["originConfidence"]));
    }
    if prov["hops"] != 1 {
        problems.push(format!("hops {}, expected 1", prov["hops"]));
    }
    // The received path is empty, so it starts at the origin; the sender is appended.
    if prov["path"] != json!([cx.origin(), cx.peer()]) {
        problems.push(format!("path {}, expected [{:?}, {:?}]", prov["path"], cx.origin(), cx.peer()));
    }
    if prov["receivedFrom"] != cx.peer().as_str() {
        problems.push(format!("receivedFrom {}, expected {:?}", prov["receivedFrom"], cx.peer()));
    }
    if prov["receivedAt"].as_str().and_then(packets::parse_time).is_none() {
        problems.push(format!("receivedAt {} is not a time", prov["receivedAt"]));
    }
    ensure(problems.is_empty(), || fail(problems.join("; ")).on(&ex).show("provenance", prov))?;
    Ok("provenance as §8.4.1".into())
}

pub(super) fn push_016(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p016-origin");
    let (ex, listing) = push_and_list(cx, cx.good(&name))?;
    let p = served_one(&ex, &listing, &name)?;
    ensure(p["originInstance"] == cx.origin().as_str(), || {
        fail(format!("served with originInstance {}, pushed with {:?}", p["originInstance"], cx.origin()))
            .on(&ex)
            .show(&name, expect::short_packet(p))
    })?;
    Ok(format!("originInstance {:?}", cx.origin()))
}

pub(super) fn push_017(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p017-as-stored");
    let sent = cx.good(&name);
    let (ex, listing) = push_and_list(cx, sent.clone())?;
    let p = served_one(&ex, &listing, &name)?;
    let kept = [
        "skillBody",
        "integrityHash",
        "skillDescription",
        "originUserHash",
        "originOS",
        "originVersion",
        "patterns",
        "tags",
    ];
    let mut changed: Vec<String> =
        kept.iter().filter(|k| p[**k] != sent[**k]).map(|k| (*k).to_owned()).collect();
    let same_time = match (
        p["createdAt"].as_str().and_then(packets::parse_time),
        sent["createdAt"].as_str().and_then(packets::parse_time),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    if !same_time {
        changed.push("createdAt".into());
    }
    ensure(changed.is_empty(), || {
        fail(format!("changed on the way: {}", changed.join(", ")))
            .on(&ex)
            .show("served", expect::short_packet(p))
            .show("sent", expect::short_packet(&sent))
    })?;
    Ok(format!("{} fields kept", kept.len() + 1))
}
