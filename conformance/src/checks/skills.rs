//! SKL: `GET /ecp/skills` (SPEC §3.1, §3.3, §4, §5.3) — shape, every packet
//! verified with the suite's own SHA-256, ids, names, and agreement with
//! the manifest.
//!
//! Each check pushes the run's seed skill first (once per run), so there is
//! at least one packet to verify.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, ensure, fail, served_names, skip,
};
use crate::expect;
use crate::packets;
use crate::target::Exchange;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "SKL-001",
        level: Must,
        profile: Ecp11,
        spec: "§5.1, §5.3.1",
        title: "GET /ecp/skills",
        requirement: "The node MUST answer 200 with a JSON object (a KnowledgeUpdate).",
        needs: Needs::Nothing,
        run: skl_001,
    },
    Check {
        id: "SKL-002",
        level: Must,
        profile: Ecp11,
        spec: "§3.1, §3.3, §2.6",
        title: "KnowledgeUpdate and packet fields and their JSON types",
        requirement: "The update and every packet MUST carry their fields with the types of §3.",
        needs: Needs::Nothing,
        run: skl_002,
    },
    Check {
        id: "SKL-003",
        level: Must,
        profile: Ecp11,
        spec: "§4.1, §4.4.2",
        title: "Every served packet verifies (SHA-256 computed by the suite)",
        requirement: "integrityHash MUST be the lowercase hex SHA-256 of the skillBody's UTF-8 bytes.",
        needs: Needs::Nothing,
        run: skl_003,
    },
    Check {
        id: "SKL-004",
        level: Must,
        profile: Ecp11,
        spec: "§4.2.1, §8.5.1",
        title: "Every served packet's id is its hash prefix",
        requirement: "id MUST be the first 16 characters of integrityHash.",
        needs: Needs::Nothing,
        run: skl_004,
    },
    Check {
        id: "SKL-005",
        level: Must,
        profile: Ecp11,
        spec: "§7.6.1, §7.9",
        title: "Served skill names are valid and distinct",
        requirement: "Every skillName MUST match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$; a name is served once.",
        needs: Needs::Nothing,
        run: skl_005,
    },
    Check {
        id: "SKL-006",
        level: Must,
        profile: Ecp11,
        spec: "§5.2.1, §3.5",
        title: "Manifest and skills listing agree",
        requirement: "skillNames and skillCount MUST describe exactly the skills GET /ecp/skills serves.",
        needs: Needs::Nothing,
        run: skl_006,
    },
    Check {
        id: "SKL-007",
        level: Must,
        profile: Ecp11,
        spec: "§5.3.1",
        title: "Listing peerInstance is the node's instance",
        requirement: "peerInstance MUST be the node's own instance id (the manifest's instance).",
        needs: Needs::Nothing,
        run: skl_007,
    },
    Check {
        id: "SKL-008",
        level: Must,
        profile: Ecp11,
        spec: "§5.3.2",
        title: "Only shareable skills are served",
        requirement: "A node MUST NOT serve a skill whose shareable is false.",
        needs: Needs::Nothing,
        run: skl_008,
    },
    Check {
        id: "SKL-009",
        level: Must,
        profile: Ecp11,
        spec: "§3.1, §7.6.2",
        title: "Served confidence is in 0..1",
        requirement: "confidence MUST be a finite number from 0 to 1.",
        needs: Needs::Nothing,
        run: skl_009,
    },
    Check {
        id: "SKL-010",
        level: Must,
        profile: Ecp11,
        spec: "§4.1.1, §4.4.1",
        title: "Served integrityHash is 64 lowercase hex characters",
        requirement: "integrityHash MUST be exactly 64 characters from 0-9a-f.",
        needs: Needs::Nothing,
        run: skl_010,
    },
    Check {
        id: "SKL-011",
        level: Must,
        profile: Ecp12,
        spec: "§5.3.3, §7.6.5, §7.8.3",
        title: "Served bodies keep their frontmatter, named as the skill",
        requirement: "Every served skillBody MUST start with frontmatter whose name is the skillName \
                      (no stripped bodies, Appendix A flaw 3).",
        needs: Needs::Nothing,
        run: skl_011,
    },
    Check {
        id: "SKL-012",
        level: Must,
        profile: Ecp12,
        spec: "§3.2, §3.2.1",
        title: "Served provenance is well-formed",
        requirement: "A provenance, where present, MUST carry originConfidence in 0..1, hops ≥ 1 and \
                      a path of strings, and MUST NOT be an empty object.",
        needs: Needs::Nothing,
        run: skl_012,
    },
];

fn listing(cx: &mut Ctx<'_>) -> Result<(Exchange, Value), Problem> {
    cx.seed();
    cx.listing()
}

/// The listing's packets; a skip when it has none.
fn packets_of(cx: &mut Ctx<'_>) -> Result<(Exchange, Vec<Value>), Problem> {
    let (ex, listing) = listing(cx)?;
    let packets = listing["skills"].as_array().cloned().unwrap_or_default();
    if packets.is_empty() {
        return Err(skip("the target serves no skills, and the seed push did not add one"));
    }
    Ok((ex, packets))
}

/// Fails on the first packet for which `problem` says something.
fn each_packet(cx: &mut Ctx<'_>, what: &str, problem: impl Fn(&Value) -> Option<String>) -> Verdict {
    let (ex, packets) = packets_of(cx)?;
    for (i, p) in packets.iter().enumerate() {
        if let Some(text) = problem(p) {
            let name = p["skillName"].as_str().unwrap_or("?");
            return Err(fail(format!("skills[{i}] ({name}): {text}"))
                .on(&ex)
                .show(&format!("skills[{i}]"), expect::short_packet(p)));
        }
    }
    Ok(format!("{} packet(s): {what}", packets.len()))
}

fn skl_001(cx: &mut Ctx<'_>) -> Verdict {
    let (_, l) = listing(cx)?;
    Ok(format!("a KnowledgeUpdate with {} packet(s)", l["skills"].as_array().map_or(0, Vec::len)))
}

fn skl_002(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, l) = listing(cx)?;
    let mut problems = expect::fields(&l, "update", expect::UPDATE_FIELDS);
    for (i, p) in l["skills"].as_array().into_iter().flatten().enumerate() {
        problems.extend(expect::fields(p, &format!("skills[{i}]"), expect::PACKET_FIELDS));
    }
    ensure(problems.is_empty(), || {
        let shown: Vec<String> = problems.iter().take(5).cloned().collect();
        fail(format!("{} mismatch(es): {}", problems.len(), shown.join("; "))).on(&ex)
    })?;
    Ok("every field present with its type".into())
}

fn skl_003(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "SHA-256 of skillBody = integrityHash", |p| {
        let body = p["skillBody"].as_str()?;
        let computed = packets::sha256_hex(body.as_bytes());
        let claimed = p["integrityHash"].as_str().unwrap_or_default();
        (computed != claimed).then(|| format!("integrityHash {claimed:?}, SHA-256 of skillBody {computed}"))
    })
}

fn skl_004(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "id = integrityHash[..16]", |p| {
        let hash = p["integrityHash"].as_str().unwrap_or_default();
        let id = p["id"].as_str().unwrap_or_default();
        let prefix: String = hash.chars().take(16).collect();
        (id != prefix || prefix.len() != 16).then(|| format!("id {id:?}, integrityHash starts {prefix:?}"))
    })
}

fn skl_005(cx: &mut Ctx<'_>) -> Verdict {
    let (ex, l) = listing(cx)?;
    let names = served_names(&l);
    if let Some(bad) = names.iter().find(|n| !packets::valid_name(n)) {
        return Err(fail(format!("the listing serves the invalid name {bad:?}")).on(&ex));
    }
    let mut seen = BTreeSet::new();
    if let Some(twice) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(fail(format!("the listing serves {twice:?} twice")).on(&ex));
    }
    Ok(format!("{} valid, distinct name(s)", names.len()))
}

fn skl_006(cx: &mut Ctx<'_>) -> Verdict {
    cx.seed();
    let (mex, m) = cx.manifest()?;
    let (lex, l) = cx.listing()?;
    let listed: BTreeSet<String> = m["skillNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    let served: BTreeSet<String> = served_names(&l).into_iter().collect();
    let only_manifest: Vec<&String> = listed.difference(&served).collect();
    let only_listing: Vec<&String> = served.difference(&listed).collect();
    ensure(only_manifest.is_empty() && only_listing.is_empty(), || {
        fail(format!(
            "names only in the manifest: {only_manifest:?}; only in the listing: {only_listing:?} \
             (a concurrent change on the target can also cause this)"
        ))
        .on(&mex)
        .on(&lex)
    })?;
    let served_count = l["skills"].as_array().map_or(0, Vec::len) as i64;
    ensure(m["skillCount"].as_i64() == Some(served_count), || {
        fail(format!("skillCount {} but the listing serves {served_count} packet(s)", m["skillCount"]))
            .on(&mex)
            .on(&lex)
    })?;
    Ok(format!("{} name(s) in both", served.len()))
}

fn skl_007(cx: &mut Ctx<'_>) -> Verdict {
    let instance = cx.instance()?;
    let (ex, l) = listing(cx)?;
    ensure(l["peerInstance"] == instance.as_str(), || {
        fail(format!("peerInstance {} but the manifest's instance is {instance:?}", l["peerInstance"]))
            .on(&ex)
    })?;
    Ok(format!("peerInstance {instance:?}"))
}

fn skl_008(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "shareable", |p| {
        (p["shareable"] != true).then(|| format!("shareable is {}", p["shareable"]))
    })
}

fn skl_009(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "confidence in 0..1", |p| {
        let c = p["confidence"].as_f64();
        (!c.is_some_and(|c| (0.0..=1.0).contains(&c))).then(|| format!("confidence {}", p["confidence"]))
    })
}

fn skl_010(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "integrityHash is 64 lowercase hex", |p| {
        let h = p["integrityHash"].as_str().unwrap_or_default();
        (!packets::is_lower_hex64(h)).then(|| format!("integrityHash {:?}", p["integrityHash"]))
    })
}

fn skl_011(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "frontmatter name = skillName", |p| {
        let body = p["skillBody"].as_str().unwrap_or_default();
        let name = p["skillName"].as_str().unwrap_or_default();
        match packets::frontmatter_name(body) {
            None => Some("skillBody has no frontmatter with a name".into()),
            Some(n) if n != name => Some(format!("frontmatter name {n:?} differs from skillName")),
            Some(_) => None,
        }
    })
}

fn skl_012(cx: &mut Ctx<'_>) -> Verdict {
    each_packet(cx, "provenance well-formed where present", |p| {
        let problems = expect::provenance(p, "packet");
        (!problems.is_empty()).then(|| problems.join("; "))
    })
}
