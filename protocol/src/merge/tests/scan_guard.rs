//! A scan that panics (`scan::guard`) refuses its packet alone, at stage
//! `safety`, with a fixed reason; the rest of the update is merged as
//! usual. The panic is the debug build's probe ([`PANIC_PROBE`]).
#![cfg(debug_assertions)]

use super::*;
use crate::bundle::{BundleLimits, BundleManifest};
use crate::scan::{PANIC_PROBE, ScanFailed};

/// `name`'s packet with the probe line in its body.
fn probing(name: &str) -> SkillPacket {
    let origin = Origin::new("node-a", "user", "linux/amd64", "1.0.0");
    let body = format!("{}\n{PANIC_PROBE}\n", body(name));
    SkillPacket::new(&origin, name, &format!("Demo skill {name}"), &body, 0.9, at("2026-11-20T10:00:00Z"))
}

fn assert_scan_failed(reason: &str, file: Option<&str>) {
    let expected = match file {
        None => format!("rejected by safety scan: {ScanFailed}"),
        Some(f) => format!("rejected by safety scan: {ScanFailed} (file {f})"),
    };
    assert_eq!(reason, expected);
}

#[test]
fn a_panicking_scan_refuses_that_packet_and_merges_the_others() {
    let out = merge(vec![packet("alpha"), probing("beta"), packet("gamma")], &Store::new());
    assert_eq!(out.decisions[0].decision, Decision::New);
    let (stage, reason) = rejection(&out, 1);
    assert_eq!(stage, Stage::Safety);
    assert_scan_failed(reason, None);
    assert!(out.decisions[1].findings.is_empty(), "no findings from a scan that failed");
    assert_eq!(out.decisions[2].decision, Decision::New);
    assert_eq!((out.result.new_skills, out.result.rejected_skills), (2, 1));
}

#[test]
fn a_held_version_stays_when_its_update_makes_the_scan_panic() {
    let v1 = packet("alpha");
    let mut store = Store::new();
    store.insert("alpha".into(), held(SkillKind::External, "node-a", &v1));
    let mut v2 = probing("alpha");
    v2.created_at = at("2026-11-21T10:00:00Z");
    v2.reseal();
    let out = merge(vec![v2], &store);
    assert_eq!(rejection(&out, 0).0, Stage::Safety);
    assert!(!out.decisions[0].decision.installs());
}

#[test]
fn on_the_parallel_path_too_one_panic_refuses_one_packet() {
    // 256 packets: the merge maps them on rayon's pool (`par`).
    let mut skills: Vec<SkillPacket> = (0..255).map(|i| packet(&format!("skill-{i}"))).collect();
    skills.insert(100, probing("probe"));
    let out = merge(skills, &Store::new());
    assert_eq!((out.result.new_skills, out.result.rejected_skills), (255, 1));
    assert_eq!(rejection(&out, 100).0, Stage::Safety);
}

#[test]
fn a_bundle_file_the_scan_panics_on_refuses_the_bundle_and_names_the_file() {
    let script = format!("#!/bin/sh\n# {PANIC_PROBE}\necho one\n");
    let limits = BundleLimits::default();
    let p = packet("alpha");
    let manifest =
        BundleManifest::for_skill(&p.skill_body, [("scripts/run.sh", script.as_bytes(), true)], &limits)
            .unwrap();
    let p = p.with_bundle(&manifest).unwrap();
    let mut out = merge(vec![p], &Store::new());
    assert_eq!(out.decisions[0].decision, Decision::New, "SKILL.md alone is clean");
    let body = out.decisions[0].packet.skill_body.clone();
    let held = |_: &str| Some(script.as_bytes());
    let scan = crate::bundle::scan_bundle(&manifest, &body, held, &StandardPolicy::default());
    out.decisions[0].apply_bundle_scan(scan);
    let Decision::Rejected { stage, reason } = &out.decisions[0].decision else {
        panic!("{:?}", out.decisions[0].decision)
    };
    assert_eq!(*stage, Stage::Safety);
    assert_scan_failed(reason, Some("scripts/run.sh"));
}
