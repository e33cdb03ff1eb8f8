//! Tests of [`BundleManifest`]: building, checking a received listing,
//! checking held bytes.

use super::*;
use crate::packet::Origin;
use crate::wire::Timestamp;

const BODY: &str = "---\nname: fill-form\ndescription: Fill a PDF form\n---\n# fill-form\n\nRun `scripts/fill.py` on the form.\n";
const FILL: &[u8] = b"#!/usr/bin/env python3\nprint('filled')\n";
const REFERENCE: &[u8] = b"# Reference\n\nField names.\n";

fn limits() -> BundleLimits {
    BundleLimits::default()
}

fn manifest() -> BundleManifest {
    BundleManifest::for_skill(
        BODY,
        [("scripts/fill.py", FILL, true), ("reference.md", REFERENCE, false)],
        &limits(),
    )
    .unwrap()
}

fn packet() -> SkillPacket {
    let origin = Origin::new("node-a", "u", "linux/amd64", "1");
    SkillPacket::new(&origin, "fill-form", "Fill a PDF form", BODY, 0.9, Timestamp::go_zero())
        .with_bundle(&manifest())
        .unwrap()
}

fn entry(path: &str, size: u64, sha: &str) -> BundleFile {
    BundleFile { path: path.into(), size, mode: "0644".into(), sha256: sha.into() }
}

/// `packet()` with `edit` applied to its files and the digest recomputed.
fn edited(edit: impl FnOnce(&mut Vec<BundleFile>)) -> SkillPacket {
    let mut p = packet();
    edit(&mut p.files);
    p.bundle_digest = bundle_digest(&p.files);
    p
}

#[test]
fn a_three_file_bundle_lists_every_file_sorted_with_skill_md_as_the_body() {
    let m = manifest();
    let paths: Vec<&str> = m.files().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["SKILL.md", "reference.md", "scripts/fill.py"]);
    let skill_md = m.entry("SKILL.md").unwrap();
    assert_eq!(skill_md.sha256, integrity::body_hash(BODY));
    assert_eq!(skill_md.size, BODY.len() as u64);
    assert_eq!(m.entry("scripts/fill.py").unwrap().mode, "0755");
    assert_eq!(m.entry("reference.md").unwrap().mode, "0644");
    assert_eq!(m.total_bytes(), (BODY.len() + FILL.len() + REFERENCE.len()) as u64);
    assert_eq!(m.digest(), bundle_digest(m.files()));
    assert_eq!(m.blob_ids().len(), 2, "SKILL.md travels as skillBody");
}

#[test]
fn the_executable_bit_is_kept_for_scripts_only() {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR";
    let m =
        BundleManifest::for_skill(BODY, [("logo.png", png, true), ("notes.md", REFERENCE, true)], &limits())
            .unwrap();
    assert!(m.files().iter().all(|f| f.mode == "0644"), "{:?}", m.files());
}

#[test]
fn a_received_bundle_checks_out_and_a_plain_packet_is_no_bundle() {
    assert_eq!(BundleManifest::from_packet(&packet(), &limits()).unwrap(), Some(manifest()));
    let mut plain = packet();
    plain.files.clear();
    plain.bundle_digest.clear();
    assert_eq!(BundleManifest::from_packet(&plain, &limits()), Ok(None));
}

#[test]
fn files_in_any_order_give_the_same_digest() {
    let p = edited(|files| files.reverse());
    assert_eq!(BundleManifest::from_packet(&p, &limits()).unwrap().unwrap().digest(), manifest().digest());
}

#[test]
fn digest_and_files_go_together() {
    let mut p = packet();
    p.bundle_digest.clear();
    assert_eq!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::DigestMissing));
    let mut p = packet();
    p.files.clear();
    assert_eq!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::DigestWithoutFiles));
    let mut p = packet();
    p.bundle_digest = format!("sha256:{}", "0".repeat(64));
    assert!(matches!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::DigestMismatch { .. })));
}

#[test]
fn the_skill_md_entry_must_describe_the_body() {
    let skill_md = |p: &mut Vec<BundleFile>| p.iter_mut().find(|f| f.path == SKILL_MD).unwrap().clone();
    type Edit = fn(&mut BundleFile);
    let cases: [(Edit, &str); 3] = [
        (|f| f.sha256 = "0".repeat(64), "its sha256 is not integrityHash"),
        (|f| f.size += 1, "its size is not the byte length of skillBody"),
        (|f| f.mode = "0755".into(), "its mode is not 0644"),
    ];
    for (edit, what) in cases {
        let p = edited(|files| {
            let mut e = skill_md(files);
            files.retain(|f| f.path != SKILL_MD);
            edit(&mut e);
            files.push(e);
        });
        assert_eq!(
            BundleManifest::from_packet(&p, &limits()),
            Err(BundleError::SkillMdMismatch { what }),
            "{what}"
        );
    }
    let p = edited(|files| files.retain(|f| f.path != SKILL_MD));
    assert_eq!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::NoSkillMd));
}

#[test]
fn bad_entries_are_refused_with_their_rule() {
    let sha = integrity::sha256_hex(b"x");
    let p = edited(|f| f.push(entry("../x", 1, &sha)));
    assert!(matches!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::BadPath { .. })));
    let p = edited(|f| f.push(entry("x", 1, &sha.to_uppercase())));
    assert_eq!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::BadHash { path: "x".into() }));
    let p = edited(|f| f.push(BundleFile { mode: "0777".into(), ..entry("x", 1, &sha) }));
    assert_eq!(
        BundleManifest::from_packet(&p, &limits()),
        Err(BundleError::BadMode { path: "x".into(), mode: "0777".into() })
    );
    let p = edited(|f| f.push(entry("Reference.md", 1, &sha)));
    assert!(matches!(BundleManifest::from_packet(&p, &limits()), Err(BundleError::CaseCollision { .. })));
}

#[test]
fn file_count_at_the_limit_and_one_past() {
    let sha = integrity::sha256_hex(b"x");
    let small = BundleLimits { max_files: 5, ..limits() };
    // 3 files now: 2 more reach the limit.
    let p = edited(|f| f.extend((0..2).map(|i| entry(&format!("f{i}"), 1, &sha))));
    assert!(BundleManifest::from_packet(&p, &small).unwrap().is_some());
    let p = edited(|f| f.extend((0..3).map(|i| entry(&format!("f{i}"), 1, &sha))));
    assert_eq!(
        BundleManifest::from_packet(&p, &small),
        Err(BundleError::TooManyFiles { count: 6, limit: 5 })
    );
    let companions: Vec<(String, Vec<u8>)> = (0..5).map(|i| (format!("f{i}"), vec![b'x'])).collect();
    let listed = companions.iter().map(|(p, b)| (p.as_str(), b.as_slice(), false));
    assert_eq!(
        BundleManifest::for_skill(BODY, listed, &small),
        Err(BundleError::TooManyFiles { count: 6, limit: 5 })
    );
}

#[test]
fn the_default_limits_hold_at_their_value_and_refuse_one_past() {
    let sha = integrity::sha256_hex(b"x");
    let max = DEFAULT_MAX_FILE_BYTES;
    // One file of exactly 16 MiB; then 16 MiB + 1.
    let p = edited(|f| f.push(entry("big.bin", max, &sha)));
    assert!(BundleManifest::from_packet(&p, &limits()).unwrap().is_some());
    let p = edited(|f| f.push(entry("big.bin", max + 1, &sha)));
    assert_eq!(
        BundleManifest::from_packet(&p, &limits()),
        Err(BundleError::FileTooLarge { path: "big.bin".into(), size: max + 1, limit: max })
    );
    // The bundle: 64 MiB in all (the three files, three of 16 MiB, the rest), then one byte more.
    let base = manifest().total_bytes();
    let rest = DEFAULT_MAX_BUNDLE_BYTES - base - 3 * max;
    let full = |extra: u64| {
        edited(|f| {
            f.extend((0..3).map(|i| entry(&format!("big{i}.bin"), max, &sha)));
            f.push(entry("rest.bin", rest + extra, &sha));
        })
    };
    assert!(BundleManifest::from_packet(&full(0), &limits()).unwrap().is_some());
    assert_eq!(
        BundleManifest::from_packet(&full(1), &limits()),
        Err(BundleError::BundleTooLarge {
            size: DEFAULT_MAX_BUNDLE_BYTES + 1,
            limit: DEFAULT_MAX_BUNDLE_BYTES
        })
    );
    // Sizes that would overflow a sum are still refused, not wrapped.
    let p = edited(|f| f.extend((0..3).map(|i| entry(&format!("h{i}"), u64::MAX, &sha))));
    let huge = BundleLimits { max_file_bytes: u64::MAX, ..limits() };
    assert!(matches!(BundleManifest::from_packet(&p, &huge), Err(BundleError::BundleTooLarge { .. })));
}

#[test]
fn held_bytes_must_match_their_entry() {
    let m = manifest();
    let check = m.verify_blob("scripts/fill.py", FILL).unwrap();
    assert_eq!(check, BlobCheck { kind: ContentKind::Text, mismatch: None });
    assert_eq!(
        m.verify_blob("scripts/fill.py", b"#!/usr/bin/env python3\nprint('FILLED')\n"),
        Err(BundleError::ContentMismatch { path: "scripts/fill.py".into(), what: "sha256" })
    );
    assert_eq!(
        m.verify_blob("reference.md", b"short"),
        Err(BundleError::ContentMismatch { path: "reference.md".into(), what: "size" })
    );
    assert_eq!(m.verify_blob("other.md", REFERENCE), Err(BundleError::NotListed { path: "other.md".into() }));
}

#[test]
fn native_code_is_refused_unless_allowed() {
    let elf: &[u8] = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0";
    let refused = BundleManifest::for_skill(BODY, [("bin/tool", elf, true)], &limits());
    assert_eq!(refused, Err(BundleError::NativeCode { path: "bin/tool".into(), kind: ContentKind::Elf }));
    let wasm: &[u8] = b"\0asm\x01\0\0\0";
    assert!(matches!(
        BundleManifest::for_skill(BODY, [("m.wasm", wasm, false)], &limits()),
        Err(BundleError::NativeCode { kind: ContentKind::Wasm, .. })
    ));
    let allowed = BundleLimits { allow_native_code: true, ..limits() };
    let m = BundleManifest::for_skill(BODY, [("bin/tool", elf, true)], &allowed).unwrap();
    assert_eq!(m.entry("bin/tool").unwrap().mode, "0644", "a binary never keeps the executable bit");

    // A received listing cannot know the bytes: they are checked when held.
    let sha = integrity::sha256_hex(elf);
    let p = edited(|f| f.push(entry("bin/tool", elf.len() as u64, &sha)));
    let received = BundleManifest::from_packet(&p, &limits()).unwrap().unwrap();
    assert!(matches!(received.verify_blob("bin/tool", elf), Err(BundleError::NativeCode { .. })));
}

#[test]
fn mode_0755_on_a_file_that_is_not_a_script_is_refused_when_held() {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR";
    let sha = integrity::sha256_hex(png);
    let p =
        edited(|f| f.push(BundleFile { mode: "0755".into(), ..entry("logo.png", png.len() as u64, &sha) }));
    let m = BundleManifest::from_packet(&p, &limits()).unwrap().unwrap();
    assert_eq!(
        m.verify_blob("logo.png", png),
        Err(BundleError::ExecutableNotScript { path: "logo.png".into() })
    );
}

#[test]
fn content_that_differs_from_its_extension_is_reported_not_refused() {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR";
    let m = BundleManifest::for_skill(BODY, [("doc.pdf", png, false)], &limits()).unwrap();
    let check = m.verify_blob("doc.pdf", png).unwrap();
    assert_eq!(check.kind, ContentKind::Png);
    assert_eq!(
        check.mismatch.unwrap().to_string(),
        "content does not match extension: a .pdf file holds PNG image"
    );
}

#[test]
fn a_refusal_is_a_bundle_stage_decision() {
    let decision = crate::Decision::from(BundleError::NoSkillMd);
    assert_eq!(
        decision,
        crate::Decision::Rejected {
            stage: crate::Stage::Bundle,
            reason: "invalid bundle: files has no SKILL.md at its root; list it with the sha256 of skillBody"
                .into()
        }
    );
}

#[test]
fn blob_queries_are_bounded_and_well_formed() {
    let id = integrity::sha256_hex(b"x");
    let at_limit = BlobQuery { blobs: vec![id.clone(); MAX_BLOBS_PER_QUERY] };
    assert_eq!(at_limit.validate(), Ok(()));
    let past = BlobQuery { blobs: vec![id.clone(); MAX_BLOBS_PER_QUERY + 1] };
    assert_eq!(past.validate(), Err(BlobQueryError::TooMany { count: MAX_BLOBS_PER_QUERY + 1 }));
    let bad = BlobQuery { blobs: vec![id, "xyz".into()] };
    assert_eq!(bad.validate(), Err(BlobQueryError::BadDigest { index: 1 }));
}

#[test]
fn a_bundle_with_files_not_held_is_pending_naming_the_first() {
    let m = manifest();
    assert_eq!(m.pending_decision(|_| true), None, "all held");
    let fill = integrity::sha256_hex(FILL);
    let pending = m.pending_decision(|sha| sha != fill).unwrap();
    assert_eq!(
        pending,
        crate::Decision::Rejected {
            stage: crate::Stage::Bundle,
            reason: "pending: 1 of 3 files not held yet (first: scripts/fill.py); upload them (POST \
                     /ecp/blobs/missing) or the node fetches them and retries"
                .into()
        }
    );
    // SKILL.md is the body: never missing.
    let none_held = m.pending_decision(|_| false).unwrap();
    let crate::Decision::Rejected { reason, .. } = none_held else { unreachable!() };
    assert!(reason.starts_with("pending: 2 of 3 files not held yet (first: reference.md)"), "{reason}");
}
