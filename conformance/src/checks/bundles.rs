//! BUN: the ECP/1.3 bundle profile (SPEC §12): the blob endpoints, a bundle
//! served back as pushed, pending until its last blob, path rules, the
//! per-file limit. Every check is skipped when the target's manifest does
//! not list `ecp-1.3` (such a node takes a bundle as its plain SKILL.md:
//! ROB-018).
//!
//! Blob contents carry the run id, so a second run against the same node
//! never finds them held already.

use reqwest::Method;
use serde_json::{Value, json};

use crate::check::{
    Check, Ctx, Level::*, Needs, Problem, Profile::*, Verdict, conflicts, count, counts_text, ensure,
    expect_json_error, fail, served, skip,
};
use crate::packets;
use crate::target::{Exchange, Sign};

/// The per-file limit SPEC §12.6 documents; the manifest does not state one.
const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) static CHECKS: &[Check] = &[
    Check {
        id: "BUN-001",
        level: Must,
        profile: Ecp12,
        spec: "§12.2, §12.3, §12.9.1",
        title: "Upload a bundle's blobs, push it, read it back",
        requirement: "A bundle whose blobs are held MUST be installed (new 1) and served with the same \
                      files and bundleDigest.",
        needs: Needs::Nothing,
        run: bun_001,
    },
    Check {
        id: "BUN-002",
        level: Must,
        profile: Ecp12,
        spec: "§12.8, §12.8.2",
        title: "PUT a blob, GET it back once a served bundle lists it",
        requirement: "PUT MUST answer 201 {sha256, stored: true} (200, stored false, when held); GET MUST \
                      serve the same bytes as application/octet-stream.",
        needs: Needs::Nothing,
        run: bun_002,
    },
    Check {
        id: "BUN-003",
        level: Must,
        profile: Ecp12,
        spec: "§12.8.3",
        title: "POST /ecp/blobs/missing with held, unheld and repeated digests",
        requirement: "The answer MUST list exactly the digests not held, in the order asked, each once.",
        needs: Needs::Nothing,
        run: bun_003,
    },
    Check {
        id: "BUN-004",
        level: Must,
        profile: Ecp12,
        spec: "§12.9.2",
        title: "Push a bundle before its two blobs, then upload them one by one",
        requirement: "The bundle MUST be pending (rejected, a conflicts line saying pending, not served) \
                      until its last blob is uploaded, then served with its files.",
        needs: Needs::Nothing,
        run: bun_004,
    },
    Check {
        id: "BUN-005",
        level: Must,
        profile: Ecp12,
        spec: "§12.4.1, §12.7",
        title: "Push a bundle with a path that has a .. segment",
        requirement: "The bundle MUST be refused, its conflicts line naming the .. rule, and not served.",
        needs: Needs::Nothing,
        run: bun_005,
    },
    Check {
        id: "BUN-006",
        level: Must,
        profile: Ecp12,
        spec: "§12.4.1, §12.7",
        title: "Push a bundle with an absolute path",
        requirement: "The bundle MUST be refused, its conflicts line saying the path is absolute, and not served.",
        needs: Needs::Nothing,
        run: bun_006,
    },
    Check {
        id: "BUN-007",
        level: Must,
        profile: Ecp12,
        spec: "§12.4.1, §12.7",
        title: "Push a bundle with a backslash in a path",
        requirement: "The bundle MUST be refused, its conflicts line naming the backslash, and not served.",
        needs: Needs::Nothing,
        run: bun_007,
    },
    Check {
        id: "BUN-008",
        level: Must,
        profile: Ecp12,
        spec: "§12.4.2.2, §12.7",
        title: "Push a bundle with two paths differing only in case",
        requirement: "The bundle MUST be refused, its conflicts line saying the paths differ only in case, \
                      and not served.",
        needs: Needs::Nothing,
        run: bun_008,
    },
    Check {
        id: "BUN-009",
        level: Must,
        profile: Ecp12,
        spec: "§12.8.4",
        title: "PUT bytes whose SHA-256 is not the path's digest",
        requirement: "The node MUST answer 400 with a JSON error and keep nothing: the digest is still missing.",
        needs: Needs::Nothing,
        run: bun_009,
    },
    Check {
        id: "BUN-010",
        level: Must,
        profile: Ecp12,
        spec: "§12.8.4, §12.6",
        title: "PUT a blob of exactly 16 MiB, then one of 16 MiB + 1 byte",
        requirement: "A blob at the per-file limit (16 MiB by default) MUST be stored; one byte over it \
                      MUST be answered 413 with a JSON error and not kept.",
        needs: Needs::Nothing,
        run: bun_010,
    },
    Check {
        id: "BUN-011",
        level: Must,
        profile: Ecp12,
        spec: "§12.8.2, §5.5.1",
        title: "GET a blob the node does not hold",
        requirement: "The node MUST answer 404 with a JSON error.",
        needs: Needs::Nothing,
        run: bun_011,
    },
];

/// Skips unless the target lists `ecp-1.3` in its manifest's profiles.
fn bundles_served(cx: &Ctx<'_>) -> Result<(), Problem> {
    let (_, manifest) = cx.manifest()?;
    let listed = manifest["profiles"].as_array().is_some_and(|p| p.iter().any(|p| p == "ecp-1.3"));
    ensure(listed, || skip("the target does not list ecp-1.3 in its manifest's profiles (no bundles)"))
}

/// File contents unique to this run and `tag`.
fn content(cx: &Ctx<'_>, tag: &str) -> Vec<u8> {
    format!("# {tag}\n\nNotes for conformance run {}.\n", cx.run_id).into_bytes()
}

/// An update of one bundle named for `tag`: its SKILL.md plus `others`.
fn bundle(cx: &Ctx<'_>, tag: &str, others: &[(&str, &str, &[u8])]) -> (String, Value) {
    let name = cx.name(tag);
    let mut packet = cx.good(&name);
    let body = packet["skillBody"].as_str().unwrap_or_default().to_owned();
    let files = packets::bundle_files(&body, others);
    packet["bundleDigest"] = json!(packets::bundle_digest(&files));
    packet["files"] = json!(files);
    (name, cx.update(vec![packet]))
}

/// `PUT /ecp/blobs/{digest}` of `bytes`, signed over the path's digest (SPEC §12.8.5).
fn put(cx: &Ctx<'_>, digest: &str, bytes: Vec<u8>) -> Result<Exchange, Problem> {
    let path = format!("/ecp/blobs/{digest}");
    cx.send(Method::PUT, &path, &[("content-type", "application/octet-stream")], Some(bytes), Sign::Auto)
}

/// Uploads `bytes`, which must be stored (201, or 200 when already held).
fn upload(cx: &Ctx<'_>, bytes: &[u8]) -> Result<Exchange, Problem> {
    let digest = packets::sha256_hex(bytes);
    let ex = put(cx, &digest, bytes.to_vec())?;
    let answer = ex.json().unwrap_or_default();
    ensure(matches!(ex.status, 200 | 201) && answer["sha256"] == digest.as_str(), || {
        fail(format!("PUT of a blob matching its digest was answered {}", ex.status)).on(&ex)
    })?;
    Ok(ex)
}

/// `POST /ecp/blobs/missing` for `digests`: the `missing` array.
fn missing(cx: &Ctx<'_>, digests: &[String]) -> Result<(Exchange, Vec<String>), Problem> {
    let body = packets::encode(&json!({ "blobs": digests }));
    let ex = cx.send(
        Method::POST,
        "/ecp/blobs/missing",
        &[("content-type", "application/json")],
        Some(body),
        Sign::Auto,
    )?;
    let list = ex.json().filter(|_| ex.status == 200).and_then(|v| {
        v["missing"].as_array().map(|a| a.iter().map(|d| d.as_str().unwrap_or_default().to_owned()).collect())
    });
    match list {
        Some(list) => Ok((ex, list)),
        None => {
            Err(fail(format!("POST /ecp/blobs/missing answered {} without a missing array", ex.status))
                .on(&ex))
        }
    }
}

/// Pushes `update` (one bundle named `name`); it must be installed and served
/// with the pushed `files` and `bundleDigest`.
fn installed_as_pushed(cx: &Ctx<'_>, update: &Value, name: &str) -> Verdict {
    let (ex, result) = cx.push(update)?;
    ensure(count(&result, "newSkills") == 1 && count(&result, "rejectedSkills") == 0, || {
        fail(format!("a bundle whose blobs are held: expected new 1, got {}", counts_text(&result)))
            .on(&ex)
            .show("conflicts", &result["conflicts"])
    })?;
    served_as_pushed(cx, &update["skills"][0], name)
}

/// `name` is served with the `files` and `bundleDigest` of `pushed`.
fn served_as_pushed(cx: &Ctx<'_>, pushed: &Value, name: &str) -> Verdict {
    let (lex, listing) = cx.listing()?;
    let packet = served(&listing, name).ok_or_else(|| fail(format!("{name} is not served")).on(&lex))?;
    ensure(packet["bundleDigest"] == pushed["bundleDigest"], || {
        fail(format!(
            "{name} is served with bundleDigest {}, pushed {}",
            packet["bundleDigest"], pushed["bundleDigest"]
        ))
        .on(&lex)
    })?;
    let sorted = |files: &Value| {
        let mut f = files.as_array().cloned().unwrap_or_default();
        f.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
        f
    };
    ensure(sorted(&packet["files"]) == sorted(&pushed["files"]), || {
        fail(format!("{name} is served with other files than pushed"))
            .on(&lex)
            .show("served files", &packet["files"])
    })?;
    Ok(format!("{name} served with bundleDigest {}", pushed["bundleDigest"]))
}

/// Pushes `update` (one bundle named `name` whose listing breaks a path
/// rule): one rejection whose conflicts line contains `rule`, not served.
fn refused_for(cx: &Ctx<'_>, update: &Value, name: &str, rule: &str) -> Verdict {
    let ex = cx.post(packets::encode(update))?;
    let line = if ex.status == 200 {
        let result = ex.json().unwrap_or_default();
        let lines = conflicts(&result);
        ensure(count(&result, "rejectedSkills") == 1 && count(&result, "newSkills") == 0, || {
            fail(format!("expected rejected 1, got {}", counts_text(&result)))
                .on(&ex)
                .show("conflicts", &result["conflicts"])
        })?;
        lines.into_iter().find(|l| l.contains(name)).unwrap_or_default()
    } else {
        expect_json_error(&ex, &[])?["error"].as_str().unwrap_or_default().to_owned()
    };
    ensure(line.contains(rule), || {
        fail(format!("the refusal does not name the rule ({rule:?}): {line:?}")).on(&ex)
    })?;
    let (lex, listing) = cx.listing()?;
    ensure(served(&listing, name).is_none(), || fail(format!("{name}, refused, is served")).on(&lex))?;
    Ok(crate::target::cut(&line, 100))
}

fn bun_001(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let script = [b"#!/bin/sh\n".as_slice(), &content(cx, "b001-script")].concat();
    let reference = content(cx, "b001-reference");
    for bytes in [&script, &reference] {
        upload(cx, bytes)?;
    }
    let (name, u) =
        bundle(cx, "b001", &[("scripts/run.sh", "0755", &script), ("reference.md", "0644", &reference)]);
    installed_as_pushed(cx, &u, &name)
}

fn bun_002(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    // Bytes of every value, so a text-only path would show.
    let mut bytes = content(cx, "b002");
    bytes.extend((0..=255u8).rev());
    let digest = packets::sha256_hex(&bytes);
    let first = upload(cx, &bytes)?;
    ensure(first.status == 201 && first.json().is_some_and(|v| v["stored"] == true), || {
        fail("the first PUT of a blob was not answered 201 with stored: true").on(&first)
    })?;
    let again = upload(cx, &bytes)?;
    ensure(again.status == 200 && again.json().is_some_and(|v| v["stored"] == false), || {
        fail("a PUT of a blob already held was not answered 200 with stored: false").on(&again)
    })?;
    let (name, u) = bundle(cx, "b002", &[("assets/data.bin", "0644", &bytes)]);
    installed_as_pushed(cx, &u, &name)?;
    let ex = cx.get(&format!("/ecp/blobs/{digest}"))?;
    ensure(ex.status == 200, || fail(format!("GET of a blob a served bundle lists: {}", ex.status)).on(&ex))?;
    ensure(ex.body == bytes, || {
        fail(format!("GET served {} bytes that are not the {} uploaded", ex.body.len(), bytes.len())).on(&ex)
    })?;
    let ct = ex.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    ensure(ct.starts_with("application/octet-stream"), || {
        fail(format!("GET of a blob has Content-Type {ct:?}")).on(&ex)
    })?;
    Ok(format!("{} bytes round-trip", bytes.len()))
}

fn bun_003(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let held = content(cx, "b003-held");
    upload(cx, &held)?;
    let held = packets::sha256_hex(&held);
    let a = packets::sha256_hex(&content(cx, "b003-a"));
    let b = packets::sha256_hex(&content(cx, "b003-b"));
    let asked = vec![b.clone(), held.clone(), a.clone(), b.clone()];
    let (ex, answer) = missing(cx, &asked)?;
    ensure(answer == vec![b.clone(), a.clone()], || {
        fail(format!("asked [unheld b, held, unheld a, b again]: expected [b, a], got {answer:?}"))
            .on(&ex)
            .show("b", &b)
            .show("a", &a)
    })?;
    Ok("exactly the unheld, in order, once".into())
}

fn bun_004(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let one = content(cx, "b004-one");
    let two = content(cx, "b004-two");
    let (name, u) = bundle(cx, "b004", &[("one.md", "0644", &one), ("two.md", "0644", &two)]);
    let ex = cx.post(packets::encode(&u))?;
    let result = ex.json().filter(|_| ex.status == 200).unwrap_or_default();
    let pending = conflicts(&result).into_iter().any(|l| l.contains(&name) && l.contains("pending"));
    ensure(count(&result, "rejectedSkills") == 1 && count(&result, "newSkills") == 0 && pending, || {
        fail(format!(
            "a bundle pushed before its blobs: expected rejected 1 (pending), got {}",
            counts_text(&result)
        ))
        .on(&ex)
        .show("conflicts", &result["conflicts"])
    })?;
    let not_served = |when: &str| -> Result<(), Problem> {
        let (lex, listing) = cx.listing()?;
        ensure(served(&listing, &name).is_none(), || fail(format!("{name} is served {when}")).on(&lex))
    };
    not_served("while both of its blobs are missing")?;
    upload(cx, &one)?;
    not_served("while one of its blobs is missing")?;
    upload(cx, &two)?;
    served_as_pushed(cx, &u["skills"][0], &name)?;
    Ok(format!("{name}: pending, then installed by its last blob"))
}

/// A bundle for `tag` listing one extra file at `path`, refused for `rule`.
fn bad_path(cx: &Ctx<'_>, tag: &str, path: &str, rule: &str) -> Verdict {
    bundles_served(cx)?;
    let bytes = content(cx, tag);
    let (name, u) = bundle(cx, tag, &[(path, "0644", &bytes)]);
    refused_for(cx, &u, &name, rule)
}

fn bun_005(cx: &mut Ctx<'_>) -> Verdict {
    bad_path(cx, "b005", "scripts/../../escape.sh", "..")
}

fn bun_006(cx: &mut Ctx<'_>) -> Verdict {
    bad_path(cx, "b006", "/etc/ecpconf.md", "absolute")
}

fn bun_007(cx: &mut Ctx<'_>) -> Verdict {
    bad_path(cx, "b007", "scripts\\run.sh", "backslash")
}

fn bun_008(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let lower = content(cx, "b008-lower");
    let upper = content(cx, "b008-upper");
    let (name, u) = bundle(cx, "b008", &[("notes.md", "0644", &lower), ("NOTES.md", "0644", &upper)]);
    refused_for(cx, &u, &name, "differ only in case")
}

fn bun_009(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let claimed = packets::sha256_hex(&content(cx, "b009-claimed"));
    let ex = put(cx, &claimed, content(cx, "b009-sent"))?;
    let error = expect_json_error(&ex, &[400])?;
    let (mex, answer) = missing(cx, std::slice::from_ref(&claimed))?;
    ensure(answer == [claimed.clone()], || {
        fail("after a refused PUT of mismatching bytes, the node says it holds the digest").on(&mex)
    })?;
    Ok(format!("400 {}", crate::target::cut(error["error"].as_str().unwrap_or_default(), 80)))
}

fn bun_010(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let mut bytes = content(cx, "b010");
    bytes.resize(MAX_FILE_BYTES, b'.');
    upload(cx, &bytes)?;
    bytes.push(b'\n');
    let over = packets::sha256_hex(&bytes);
    // Streamed: the node may answer 413 by Content-Length and close before reading it all.
    let ex = cx.target.send_streaming(
        Method::PUT,
        &format!("/ecp/blobs/{over}"),
        "application/octet-stream",
        bytes,
    )?;
    expect_json_error(&ex, &[413])?;
    let (mex, answer) = missing(cx, std::slice::from_ref(&over))?;
    ensure(answer == [over.clone()], || fail("a blob refused 413 is held afterwards").on(&mex))?;
    cx.still_answers()?;
    Ok("16 MiB stored, 16 MiB + 1 refused 413".into())
}

fn bun_011(cx: &mut Ctx<'_>) -> Verdict {
    bundles_served(cx)?;
    let digest = packets::sha256_hex(&content(cx, "b011-never-uploaded"));
    let ex = cx.get(&format!("/ecp/blobs/{digest}"))?;
    let error = expect_json_error(&ex, &[404])?;
    Ok(format!("404 {}", crate::target::cut(error["error"].as_str().unwrap_or_default(), 80)))
}
