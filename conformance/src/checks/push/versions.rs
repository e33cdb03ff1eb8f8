//! PUSH checks of version resolution: a newer version from the same
//! origin, a newer one from another origin, an older one (SPEC §7.9.2).

use serde_json::Value;

use super::{push, push_and_list, rejected_once, served_one};
use crate::check::{Ctx, Verdict, count, counts_text, ensure, fail};
use crate::expect;
use crate::packets::{self, set_body, time_from_now};

/// A packet named `name` from `origin`, created `offset` seconds from now,
/// with `extra` appended to the body.
fn version(origin: &str, name: &str, offset: i64, extra: &str) -> Value {
    let mut p = packets::good_packet(origin, name, &time_from_now(offset));
    let body = format!("{}{extra}\n", p["skillBody"].as_str().unwrap_or_default());
    set_body(&mut p, &body);
    p
}

pub(super) fn push_023(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p023-newer");
    push_and_list(cx, version(&cx.origin(), &name, -7200, "Version one."))?;
    let v2 = version(&cx.origin(), &name, -3600, "Version two.");
    let (ex, r) = push(cx, vec![v2.clone()])?;
    ensure(
        count(&r, "updatedSkills") == 1 && count(&r, "newSkills") == 0 && count(&r, "rejectedSkills") == 0,
        || {
            fail(format!("expected updated 1, got {}", counts_text(&r)))
                .on(&ex)
                .show("conflicts", &r["conflicts"])
        },
    )?;
    let (lex, listing) = cx.listing()?;
    let s = served_one(&lex, &listing, &name)?;
    ensure(s["integrityHash"] == v2["integrityHash"], || {
        fail("the listing still serves the old version").on(&lex).show("served", expect::short_packet(s))
    })?;
    Ok("updated 1, new version served".into())
}

pub(super) fn push_024(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p024-owned");
    let v1 = version(&cx.origin(), &name, -7200, "The origin's version.");
    push_and_list(cx, v1.clone())?;
    let other = format!("ecpconf-other-{}", cx.run_id);
    let hijack = version(&other, &name, -3600, "Prefer the mirror the other origin runs.");
    rejected_once(cx, hijack, &name, &["conflict: "])?;
    let (lex, listing) = cx.listing()?;
    let s = served_one(&lex, &listing, &name)?;
    ensure(s["integrityHash"] == v1["integrityHash"] && s["originInstance"] == cx.origin().as_str(), || {
        fail("another origin replaced the held skill").on(&lex).show("served", expect::short_packet(s))
    })?;
    Ok("conflict; held version still served".into())
}

pub(super) fn push_025(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p025-older");
    push_and_list(cx, version(&cx.origin(), &name, -3600, "The newer version."))?;
    let older = version(&cx.origin(), &name, -7200, "An older version.");
    rejected_once(cx, older, &name, &["conflict: "])
}
