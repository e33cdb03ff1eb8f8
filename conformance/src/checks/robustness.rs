//! ROB: hostile and odd request bodies (SPEC §2, §5.5, §5.6). Whatever is
//! not a decodable update gets a 4xx with a JSON error, and the target
//! still answers afterwards; what Go peers legitimately send (unknown
//! fields, `null` arrays, missing fields) is merged.

use serde_json::{Value, json};

use crate::check::{
    Check, Ctx, Level::*, Needs, Profile::*, Verdict, conflicts, count, counts_text, ensure,
    expect_json_error, fail, served, skip,
};
use crate::packets;
use crate::target::Exchange;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "ROB-001",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.1, §5.5.2",
        title: "POST /ecp/skills with a body that is not JSON",
        requirement: "The node MUST answer 400 with a JSON error, and still answer afterwards.",
        needs: Needs::Nothing,
        run: rob_001,
    },
    Check {
        id: "ROB-002",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.2, §5.5.2",
        title: "POST an update whose packet has confidence as a string",
        requirement: "A field of the wrong JSON type MUST refuse the whole message: 400 with a JSON error.",
        needs: Needs::Nothing,
        run: rob_002,
    },
    Check {
        id: "ROB-003",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.2, §5.5.2",
        title: "POST an update whose skills is an object",
        requirement: "The node MUST answer 400 with a JSON error, and still answer afterwards.",
        needs: Needs::Nothing,
        run: rob_003,
    },
    Check {
        id: "ROB-004",
        level: Must,
        profile: Ecp11,
        spec: "§2.6.1, §2.1.2",
        title: "POST an update whose sequenceNum is 1.5",
        requirement: "An integer field with a fraction MUST be refused: 400 with a JSON error.",
        needs: Needs::Nothing,
        run: rob_004,
    },
    Check {
        id: "ROB-005",
        level: Must,
        profile: Ecp12,
        spec: "§5.6.1, §5.5.2",
        title: "POST a 9 MiB body",
        requirement: "A body over the node's size limit MUST be answered 413 with a JSON error \
                      (the default limit is 8 MiB), and the node still answers.",
        needs: Needs::Nothing,
        run: rob_005,
    },
    Check {
        id: "ROB-006",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.1, §5.5.2",
        title: "POST 100,000 nested JSON arrays",
        requirement: "The node MUST answer 400 with a JSON error and keep answering (no stack overflow).",
        needs: Needs::Nothing,
        run: rob_006,
    },
    Check {
        id: "ROB-007",
        level: Must,
        profile: Ecp12,
        spec: "§2.1.1",
        title: "POST an update with invalid UTF-8 inside a string",
        requirement: "A message that is not valid UTF-8 MUST be refused: 400 with a JSON error \
                      (Go substitutes U+FFFD instead).",
        needs: Needs::Nothing,
        run: rob_007,
    },
    Check {
        id: "ROB-008",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.1",
        title: "POST a body with invalid UTF-8 outside strings",
        requirement: "The node MUST answer 400 with a JSON error, and still answer afterwards.",
        needs: Needs::Nothing,
        run: rob_008,
    },
    Check {
        id: "ROB-009",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.1",
        title: "POST truncated JSON",
        requirement: "The node MUST answer 400 with a JSON error, and still answer afterwards.",
        needs: Needs::Nothing,
        run: rob_009,
    },
    Check {
        id: "ROB-010",
        level: Must,
        profile: Ecp11,
        spec: "§2.1, §3.3",
        title: "POST a JSON string instead of an object",
        requirement: "The node MUST answer 400 with a JSON error.",
        needs: Needs::Nothing,
        run: rob_010,
    },
    Check {
        id: "ROB-011",
        level: Must,
        profile: Ecp11,
        spec: "§2.4.1",
        title: "POST an update with unknown fields at every level",
        requirement: "Unknown fields in the update, stats, packets and provenance MUST be ignored: the packet is new.",
        needs: Needs::Nothing,
        run: rob_011,
    },
    Check {
        id: "ROB-012",
        level: Must,
        profile: Ecp11,
        spec: "§2.3.2",
        title: "POST an update with null arrays and null stats",
        requirement: "null for tags, patterns, topWorkflows, stats (and skills) MUST be read as empty: the packet is new.",
        needs: Needs::Nothing,
        run: rob_012,
    },
    Check {
        id: "ROB-013",
        level: Must,
        profile: Ecp11,
        spec: "§2.3.1",
        title: "POST an update with optional fields missing",
        requirement: "Missing fields (update id, stats, sequenceNum; packet id, version, tags, patterns, \
                      originUserHash) MUST take their zero value: the packet is new.",
        needs: Needs::Nothing,
        run: rob_013,
    },
    Check {
        id: "ROB-014",
        level: Must,
        profile: Ecp11,
        spec: "§5.5.2, §5.4",
        title: "POST /ecp/skills with an empty body",
        requirement: "The node MUST answer 400 with a JSON error.",
        needs: Needs::Nothing,
        run: rob_014,
    },
    Check {
        id: "ROB-015",
        level: Must,
        profile: Ecp12,
        spec: "§5.6.2, §7.4",
        title: "POST an update of 10,001 packets",
        requirement: "The node MUST bound the packets it considers: 413, or the packet at position 10,000 \
                      refused with \"rejected by policy: the update carries more than …\".",
        needs: Needs::Nothing,
        run: rob_015,
    },
    Check {
        id: "ROB-016",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.1, §2.6.2",
        title: "POST an update with confidence NaN (not JSON)",
        requirement: "The node MUST answer 400 with a JSON error.",
        needs: Needs::Nothing,
        run: rob_016,
    },
    Check {
        id: "ROB-017",
        level: Must,
        profile: Ecp11,
        spec: "§2.1.2",
        title: "POST a good packet in an update with one wrong-typed field",
        requirement: "The whole message MUST be refused (400), not one packet: the good packet is not installed.",
        needs: Needs::Nothing,
        run: rob_017,
    },
    Check {
        id: "ROB-018",
        level: Must,
        profile: Ecp11,
        spec: "§12.1.1, §2.4",
        title: "POST a bundle (files, bundleDigest) to a node without the ecp-1.3 profile",
        requirement: "A node that does not list ecp-1.3 in its manifest's profiles MUST take the packet as \
                      the plain skill: new 1, and served under its name.",
        needs: Needs::Nothing,
        run: rob_018,
    },
];

/// POSTs `body`; the answer must be a JSON error with one of `statuses`,
/// and the target must answer afterwards.
fn refused_with(cx: &Ctx<'_>, body: Vec<u8>, statuses: &[u16]) -> Verdict {
    let ex = cx.post(body)?;
    check_refused(cx, &ex, statuses)
}

fn check_refused(cx: &Ctx<'_>, ex: &Exchange, statuses: &[u16]) -> Verdict {
    let error = expect_json_error(ex, statuses)?;
    cx.still_answers()?;
    Ok(format!("{} {}", ex.status, crate::target::cut(error["error"].as_str().unwrap_or_default(), 80)))
}

/// An update of one good packet, as a value to spoil.
fn one(cx: &Ctx<'_>, tag: &str) -> (String, Value) {
    let name = cx.name(tag);
    (name.clone(), cx.update(vec![cx.good(&name)]))
}

/// `value` encoded with `raw` spliced in where the string "@@RAW@@" was.
fn splice(value: &Value, raw: &[u8]) -> Vec<u8> {
    let text = packets::encode(value);
    let marker = b"\"@@RAW@@\"";
    let at = text.windows(marker.len()).position(|w| w == marker).expect("the marker is there");
    let mut out = text[..at].to_vec();
    out.extend_from_slice(raw);
    out.extend_from_slice(&text[at + marker.len()..]);
    out
}

fn rob_001(cx: &mut Ctx<'_>) -> Verdict {
    refused_with(cx, b"hello, node".to_vec(), &[400])
}

fn rob_002(cx: &mut Ctx<'_>) -> Verdict {
    let (_, mut u) = one(cx, "r002");
    u["skills"][0]["confidence"] = json!("high");
    refused_with(cx, packets::encode(&u), &[400])
}

fn rob_003(cx: &mut Ctx<'_>) -> Verdict {
    let body = json!({"peerInstance": cx.peer(), "skills": {"many": true}});
    refused_with(cx, packets::encode(&body), &[400])
}

fn rob_004(cx: &mut Ctx<'_>) -> Verdict {
    let (_, mut u) = one(cx, "r004");
    u["sequenceNum"] = json!("@@RAW@@");
    refused_with(cx, splice(&u, b"1.5"), &[400])
}

fn rob_005(cx: &mut Ctx<'_>) -> Verdict {
    let mut body = packets::encode(&cx.update(Vec::new()));
    body.resize(9 * 1024 * 1024, b' ');
    let ex = cx.target.post_streaming("/ecp/skills", body)?;
    check_refused(cx, &ex, &[413])
}

fn rob_006(cx: &mut Ctx<'_>) -> Verdict {
    let depth = 100_000;
    let mut body = format!("{{\"peerInstance\":\"{}\",\"skills\":", cx.peer()).into_bytes();
    body.extend(std::iter::repeat_n(b'[', depth));
    body.extend(std::iter::repeat_n(b']', depth));
    body.push(b'}');
    refused_with(cx, body, &[400])
}

fn rob_007(cx: &mut Ctx<'_>) -> Verdict {
    let (_, mut u) = one(cx, "r007");
    u["skills"][0]["skillDescription"] = json!("@@RAW@@");
    refused_with(cx, splice(&u, b"\"caf\xe9 \xff\xfe\""), &[400])
}

fn rob_008(cx: &mut Ctx<'_>) -> Verdict {
    let body = format!("{{\"peerInstance\":\"{}\",", cx.peer())
        .into_bytes()
        .into_iter()
        .chain(*b"\xff\xfe}")
        .collect();
    refused_with(cx, body, &[400])
}

fn rob_009(cx: &mut Ctx<'_>) -> Verdict {
    let (_, u) = one(cx, "r009");
    let body = packets::encode(&u);
    refused_with(cx, body[..body.len() / 2].to_vec(), &[400])
}

fn rob_010(cx: &mut Ctx<'_>) -> Verdict {
    refused_with(cx, b"\"an update\"".to_vec(), &[400])
}

/// Pushes `body` (raw bytes of a legitimate update carrying `name`); it must be merged as new.
fn merged_new(cx: &Ctx<'_>, body: Vec<u8>, name: &str) -> Verdict {
    let ex = cx.post(body)?;
    let result = ex
        .json()
        .filter(|v| ex.status == 200 && v.is_object())
        .ok_or_else(|| fail(format!("a legitimate update was answered {}", ex.status)).on(&ex))?;
    ensure(count(&result, "newSkills") == 1 && count(&result, "rejectedSkills") == 0, || {
        fail(format!("expected new 1, got {}", counts_text(&result)))
            .on(&ex)
            .show("conflicts", &result["conflicts"])
    })?;
    Ok(format!("{name}: new 1"))
}

fn rob_011(cx: &mut Ctx<'_>) -> Verdict {
    let (name, mut u) = one(cx, "r011");
    u["ecpconfFuture"] = json!({"nested": [1, 2, {"deep": null}]});
    u["stats"]["ecpconfFutureStat"] = json!(3.5);
    u["skills"][0]["ecpconfSignature"] = json!("ed25519:abcdef");
    u["skills"][0]["ecpconfList"] = json!([]);
    u["skills"][0]["provenance"] =
        json!({"originConfidence": 0.9, "hops": 0, "path": [cx.origin()], "ecpconfHop": true});
    merged_new(cx, packets::encode(&u), &name)
}

fn rob_018(cx: &mut Ctx<'_>) -> Verdict {
    let (_, manifest) = cx.manifest()?;
    let profiles = manifest["profiles"].as_array().cloned().unwrap_or_default();
    if profiles.iter().any(|p| p == "ecp-1.3") {
        return Err(skip("the target lists ecp-1.3: a bundle needs its blobs uploaded first (SPEC §12.8.6)"));
    }
    let (name, mut u) = one(cx, "r018");
    let body = u["skills"][0]["skillBody"].as_str().unwrap_or_default().to_owned();
    let files = packets::bundle_files(&body, &[("scripts/fill.py", "0755", b"print('filled')\n")]);
    u["skills"][0]["bundleDigest"] = json!(packets::bundle_digest(&files));
    u["skills"][0]["files"] = json!(files);
    let verdict = merged_new(cx, packets::encode(&u), &name)?;
    // Served as the Go implementation serves any skill (re-labelled, its
    // frontmatter stripped: SPEC Appendix A, flaw 3): under its name.
    let (ex, listing) = cx.listing()?;
    ensure(served(&listing, &name).is_some(), || {
        fail("the bundle's skill is not served after new 1").on(&ex)
    })?;
    Ok(verdict)
}

fn rob_012(cx: &mut Ctx<'_>) -> Verdict {
    let (name, mut u) = one(cx, "r012");
    u["skills"][0]["tags"] = Value::Null;
    u["skills"][0]["patterns"] = Value::Null;
    u["stats"] = Value::Null;
    let verdict = merged_new(cx, packets::encode(&u), &name)?;
    let empty = json!({"id": "ecpconf-null", "peerInstance": cx.peer(), "skills": null, "stats": {"topWorkflows": null}});
    let ex = cx.post(packets::encode(&empty))?;
    ensure(ex.status == 200 && ex.json().is_some_and(|r| count(&r, "newSkills") == 0), || {
        fail("an update with skills: null was not answered 200 with an empty MergeResult").on(&ex)
    })?;
    Ok(verdict)
}

fn rob_013(cx: &mut Ctx<'_>) -> Verdict {
    let (name, mut u) = one(cx, "r013");
    for key in ["id", "generatedAt", "stats", "sequenceNum"] {
        u.as_object_mut().map(|o| o.remove(key));
    }
    if let Some(p) = u["skills"][0].as_object_mut() {
        for key in ["id", "version", "tags", "patterns", "originUserHash", "originOS", "originVersion"] {
            p.remove(key);
        }
    }
    merged_new(cx, packets::encode(&u), &name)
}

fn rob_014(cx: &mut Ctx<'_>) -> Verdict {
    refused_with(cx, Vec::new(), &[400])
}

fn rob_015(cx: &mut Ctx<'_>) -> Verdict {
    // Small packets the merge refuses anyway (their hash is wrong), so a
    // node that merges them installs nothing.
    let name = cx.name("r015-flood");
    let mut body = format!("{{\"peerInstance\":\"{}\",\"skills\":[", cx.peer()).into_bytes();
    for i in 0..10_001 {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(
            format!(
                "{{\"skillName\":\"{name}\",\"skillBody\":\"x\",\"integrityHash\":\"{}\",\"confidence\":0.9,\"originInstance\":\"o\"}}",
                "0".repeat(64)
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(b"]}");
    let ex = cx.post(body)?;
    if ex.status == 413 {
        return check_refused(cx, &ex, &[413]);
    }
    let result = ex
        .json()
        .filter(|_| ex.status == 200)
        .ok_or_else(|| fail(format!("expected 413 or a MergeResult, got {}", ex.status)).on(&ex))?;
    let lines = conflicts(&result);
    let expected = format!("{name}: rejected by policy: the update carries more than");
    ensure(lines.get(10_000).is_some_and(|l| l.starts_with(&expected)), || {
        fail(format!(
            "the packet at position 10,000 was not refused by the packet limit ({})",
            counts_text(&result)
        ))
        .on(&ex)
        .show("conflicts[10000]", lines.get(10_000).map_or("(none)", String::as_str))
    })?;
    Ok("position 10,000 refused by the packet limit".into())
}

fn rob_016(cx: &mut Ctx<'_>) -> Verdict {
    let (_, mut u) = one(cx, "r016");
    u["skills"][0]["confidence"] = json!("@@RAW@@");
    refused_with(cx, splice(&u, b"NaN"), &[400])
}

fn rob_017(cx: &mut Ctx<'_>) -> Verdict {
    let (name, mut u) = one(cx, "r017");
    u["sequenceNum"] = json!("not a number");
    let verdict = refused_with(cx, packets::encode(&u), &[400])?;
    let (lex, listing) = cx.listing()?;
    ensure(served(&listing, &name).is_none(), || {
        fail(format!("{name} was installed from a refused message")).on(&lex)
    })?;
    Ok(verdict)
}
