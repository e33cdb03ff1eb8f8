//! MAN: `GET /ecp/manifest` (SPEC §3.5, §5.2) — shape, types, counts, times.
//!
//! Each check pushes the run's seed skill first (once per run), so the
//! manifest has at least one name to look at.

use serde_json::Value;

use crate::check::{Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, ensure, fail};
use crate::expect;
use crate::packets;
use crate::target::Exchange;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "MAN-001",
        level: Must,
        profile: Ecp11,
        spec: "§5.1, §5.2.1",
        title: "GET /ecp/manifest",
        requirement: "The node MUST answer 200 with a JSON object (the Manifest).",
        needs: Needs::Nothing,
        run: man_001,
    },
    Check {
        id: "MAN-002",
        level: Must,
        profile: Ecp11,
        spec: "§3.5, §2.6.1",
        title: "Manifest fields and their JSON types",
        requirement: "Every Manifest field MUST be present with its type: strings, integer counts, \
                      arrays of strings (or null), RFC 3339 times.",
        needs: Needs::Nothing,
        run: man_002,
    },
    Check {
        id: "MAN-003",
        level: Must,
        profile: Ecp11,
        spec: "§3.5",
        title: "Manifest skillCount against skillNames",
        requirement: "skillCount MUST equal the number of skillNames.",
        needs: Needs::Nothing,
        run: man_003,
    },
    Check {
        id: "MAN-004",
        level: Must,
        profile: Ecp11,
        spec: "§2.5.1, §3.5",
        title: "Manifest generatedAt and lastUpdate parse",
        requirement: "generatedAt and lastUpdate MUST be RFC 3339 date-times.",
        needs: Needs::Nothing,
        run: man_004,
    },
    Check {
        id: "MAN-005",
        level: Must,
        profile: Ecp11,
        spec: "§7.6.1, §3.5",
        title: "Manifest skillNames are valid and distinct",
        requirement: "Every skill name MUST match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$ and appear once.",
        needs: Needs::Nothing,
        run: man_005,
    },
    Check {
        id: "MAN-006",
        level: Must,
        profile: Ecp11,
        spec: "§3.5",
        title: "Manifest instance",
        requirement: "instance MUST name the node: a non-empty string.",
        needs: Needs::Nothing,
        run: man_006,
    },
    Check {
        id: "MAN-007",
        level: Should,
        profile: Ecp11,
        spec: "§3.5",
        title: "Manifest version",
        requirement: "version SHOULD be the protocol version \"1.0\".",
        needs: Needs::Nothing,
        run: man_007,
    },
    Check {
        id: "MAN-008",
        level: Must,
        profile: Ecp11,
        spec: "§3.5, §2.6.1",
        title: "Manifest sequenceNum",
        requirement: "sequenceNum MUST be an integer ≥ 0.",
        needs: Needs::Nothing,
        run: man_008,
    },
    Check {
        id: "MAN-009",
        level: Must,
        profile: Ecp12,
        spec: "§2.5.4",
        title: "Manifest times in canonical form",
        requirement: "A sender MUST write times in UTC with Z and no trailing zeros in the fraction.",
        needs: Needs::Nothing,
        run: man_009,
    },
];

fn manifest(cx: &mut Ctx<'_>) -> Result<(Exchange, Value), Problem> {
    cx.seed();
    cx.manifest()
}

fn man_001(cx: &mut Ctx<'_>) -> Verdict {
    let (_, m) = manifest(cx)?;
    Ok(format!("a Manifest with {} field(s)", m.as_object().map_or(0, |o| o.len())))
}

fn man_002(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    let problems = expect::fields(&m, "manifest", expect::MANIFEST_FIELDS);
    ensure(problems.is_empty(), || fail(problems.join("; ")).on(&ex))?;
    Ok("every field present with its type".into())
}

fn man_003(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    let names = m["skillNames"].as_array().map_or(0, Vec::len);
    let count = m["skillCount"].as_i64();
    ensure(count == Some(names as i64), || {
        fail(format!("skillCount is {}, skillNames has {names} name(s)", m["skillCount"]))
            .on(&ex)
            .show("skillNames", &m["skillNames"])
    })?;
    Ok(format!("skillCount {names} = {names} name(s)"))
}

fn man_004(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    for field in ["generatedAt", "lastUpdate"] {
        let text = m[field].as_str().unwrap_or_default();
        ensure(packets::parse_time(text).is_some(), || {
            fail(format!("{field} {} is not an RFC 3339 time", m[field])).on(&ex)
        })?;
    }
    Ok(format!("generatedAt {}, lastUpdate {}", m["generatedAt"], m["lastUpdate"]))
}

fn man_005(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    let names: Vec<&str> =
        m["skillNames"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    if let Some(bad) = names.iter().find(|n| !packets::valid_name(n)) {
        return Err(fail(format!("skillNames holds the invalid name {bad:?}")).on(&ex));
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(fail(format!("skillNames lists {:?} twice", w[0])).on(&ex));
    }
    Ok(format!("{} valid, distinct name(s)", names.len()))
}

fn man_006(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    let instance = m["instance"].as_str().unwrap_or_default();
    ensure(!instance.trim().is_empty(), || fail(format!("instance is {}", m["instance"])).on(&ex))?;
    Ok(format!("instance {instance:?}"))
}

fn man_007(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    ensure(m["version"] == "1.0", || fail(format!("version is {}", m["version"])).on(&ex))?;
    Ok("version \"1.0\"".into())
}

fn man_008(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    let seq = m["sequenceNum"].as_i64();
    ensure(seq.is_some_and(|s| s >= 0), || {
        fail(format!("sequenceNum is {}, not an integer ≥ 0", m["sequenceNum"])).on(&ex)
    })?;
    Ok(format!("sequenceNum {}", m["sequenceNum"]))
}

fn man_009(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, m) = manifest(cx)?;
    for field in ["generatedAt", "lastUpdate"] {
        let text = m[field].as_str().unwrap_or_default();
        ensure(packets::is_canonical_time(text), || {
            fail(format!("{field} {} is not in canonical form (e.g. 2026-11-20T10:00:05.5Z)", m[field]))
                .on(&ex)
        })?;
    }
    Ok("both times canonical".into())
}
