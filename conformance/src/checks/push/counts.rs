//! PUSH checks of the MergeResult's counts: a new skill, the same update
//! twice, a mixed update whose counts add up and are truthful, and the
//! result's fields and JSON types (SPEC §7.9, §7.10).

use serde_json::Value;

use super::{low_confidence, push, tampered, uppercase_hash};
use crate::check::{Ctx, Problem, Verdict, conflicts, count, counts_text, ensure, fail};
use crate::expect;
use crate::target::Exchange;

pub(super) fn push_001(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p001-good");
    let (ex, r) = push(cx, vec![cx.good(&name)])?;
    let ok = count(&r, "newSkills") == 1
        && count(&r, "updatedSkills") == 0
        && count(&r, "rejectedSkills") == 0
        && count(&r, "unchanged") == 0
        && conflicts(&r).is_empty();
    ensure(ok, || fail(format!("expected new 1 and nothing else, got {}", counts_text(&r))).on(&ex))?;
    Ok("new 1".into())
}

/// Pushes one good packet twice; returns the second exchange and result.
fn push_twice(cx: &Ctx<'_>, tag: &str) -> Result<(Exchange, Value), Problem> {
    let name = cx.name(tag);
    let update = cx.update(vec![cx.good(&name)]);
    let (ex, first) = cx.push(&update)?;
    ensure(count(&first, "newSkills") == 1, || {
        fail(format!("the first push was not counted new: {}", counts_text(&first))).on(&ex)
    })?;
    cx.push(&update)
}

pub(super) fn push_002(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, r) = push_twice(cx, "p002-again")?;
    let ok = count(&r, "newSkills") == 0
        && count(&r, "rejectedSkills") == 0
        && count(&r, "updatedSkills") + count(&r, "unchanged") == 1;
    ensure(ok, || fail(format!("expected updated or unchanged 1, got {}", counts_text(&r))).on(&ex))?;
    Ok(counts_text(&r))
}

pub(super) fn push_003(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, r) = push_twice(cx, "p003-again")?;
    let ok = count(&r, "unchanged") == 1
        && count(&r, "newSkills") == 0
        && count(&r, "updatedSkills") == 0
        && count(&r, "rejectedSkills") == 0;
    ensure(ok, || fail(format!("expected unchanged 1 and nothing else, got {}", counts_text(&r))).on(&ex))?;
    Ok("unchanged 1".into())
}

/// The mixed update of PUSH-010/011: one held skill first, then
/// [good, held again, tampered, low confidence, uppercase hash]. Its
/// refusals are all ones the Go reference makes too, and none depends on
/// the safety scanner (PUSH-006 and PUSH-029 test that on their own).
fn mixed(cx: &Ctx<'_>, tag: &str) -> Result<(Exchange, Value, Vec<String>), Problem> {
    let held = cx.name(&format!("{tag}-held"));
    let held_packet = cx.good(&held);
    let (ex, first) = cx.push(&cx.update(vec![held_packet.clone()]))?;
    ensure(count(&first, "newSkills") == 1, || {
        fail(format!("the preparatory push was not counted new: {}", counts_text(&first))).on(&ex)
    })?;
    let names: Vec<String> =
        ["good", "tampered", "low", "upper"].iter().map(|n| cx.name(&format!("{tag}-{n}"))).collect();
    let packets = vec![
        cx.good(&names[0]),
        held_packet,
        tampered(cx, &names[1]),
        low_confidence(cx, &names[2]),
        uppercase_hash(cx, &names[3]),
    ];
    let (ex, r) = push(cx, packets)?;
    Ok((ex, r, names))
}

pub(super) fn push_010(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, r, _) = mixed(cx, "p010")?;
    let total = count(&r, "newSkills")
        + count(&r, "updatedSkills")
        + count(&r, "unchanged")
        + count(&r, "rejectedSkills");
    ensure(total == 5, || fail(format!("5 packets sent, {total} counted ({})", counts_text(&r))).on(&ex))?;
    ensure(count(&r, "rejectedSkills") == conflicts(&r).len() as i64, || {
        fail(format!(
            "rejectedSkills {} but {} conflicts line(s)",
            count(&r, "rejectedSkills"),
            conflicts(&r).len()
        ))
        .on(&ex)
        .show("conflicts", &r["conflicts"])
    })?;
    Ok(counts_text(&r))
}

pub(super) fn push_011(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, r, names) = mixed(cx, "p011")?;
    let ok = count(&r, "newSkills") == 1
        && count(&r, "unchanged") == 1
        && count(&r, "updatedSkills") == 0
        && count(&r, "rejectedSkills") == 3;
    ensure(ok, || fail(format!("expected new 1, unchanged 1, rejected 3, got {}", counts_text(&r))).on(&ex))?;
    let lines = conflicts(&r);
    let in_order =
        lines.len() == 3 && lines.iter().zip(&names[1..]).all(|(l, n)| l.starts_with(&format!("{n}: ")));
    ensure(in_order, || {
        fail("the conflicts lines are not one per refused packet, in packet order")
            .on(&ex)
            .show("conflicts", &r["conflicts"])
    })?;
    Ok("new 1, unchanged 1, rejected 3".into())
}

pub(super) fn push_032(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("p032-shape");
    let bad = cx.name("p032-tampered");
    let (ex, r) = push(cx, vec![cx.good(&name), tampered(cx, &bad)])?;
    let mut problems = expect::fields(&r, "result", expect::RESULT_FIELDS);
    if let Some(u) = r.get("unchanged")
        && u.as_i64().is_none_or(|n| n < 0)
    {
        problems.push(format!("result.unchanged: expected an integer ≥ 0, got {u}"));
    }
    for key in ["newSkills", "updatedSkills", "rejectedSkills"] {
        if r[key].as_i64().is_some_and(|n| n < 0) {
            problems.push(format!("result.{key} is negative"));
        }
    }
    ensure(problems.is_empty(), || fail(problems.join("; ")).on(&ex))?;
    Ok("every field present with its type".into())
}
