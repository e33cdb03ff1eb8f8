//! The bundle vectors of `SPEC.md` §12 that are not merges: the digest of a
//! listing (`bundle-digest.json`) and the check of a held file's bytes
//! (`bundle-content.json`). `merge-bundles.json` is a merge file, checked
//! in `spec_vectors.rs`.

use ecp_protocol::bundle::{self, BundleLimits, BundleManifest};
use ecp_protocol::packet::Origin;
use ecp_protocol::wire::BundleFile;
use ecp_protocol::{Decision, SkillPacket, Timestamp, integrity};

use super::spec_vectors::{Failures, cases, str_of};

#[test]
fn bundle_digest_vectors() {
    let file = "bundle-digest.json";
    let mut failures = Failures::new(file);
    for (i, case) in cases(file).iter().enumerate() {
        let files: Vec<BundleFile> = serde_json::from_value(case["input"]["files"].clone()).unwrap();
        let want = &case["expected"];
        failures.check_eq(
            i,
            case,
            "listing",
            bundle::canonical_listing(&files).as_str(),
            str_of(want, "listing"),
        );
        failures.check_eq(
            i,
            case,
            "bundleDigest",
            bundle::bundle_digest(&files).as_str(),
            str_of(want, "bundleDigest"),
        );
        // The digest is the one a received packet must carry.
        let body = files.iter().find(|f| f.path == bundle::SKILL_MD).map(|_| ());
        failures.check_eq(i, case, "a SKILL.md entry", body, Some(()));
    }
    failures.finish();
}

const BODY: &str = "---\nname: probe\ndescription: A bundle with one file to check\n---\n# probe\n\nOpen the file beside this one and read it.\n";

#[test]
fn bundle_content_vectors() {
    let file = "bundle-content.json";
    let mut failures = Failures::new(file);
    let origin = Origin::new("node-a", "u", "linux/amd64", "1");
    let limits = BundleLimits::default();
    for (i, case) in cases(file).iter().enumerate() {
        let (input, want) = (&case["input"], &case["expected"]);
        let path = str_of(input, "path");
        let bytes = hex::decode(str_of(input, "content_hex")).unwrap();
        let mut packet = SkillPacket::new(&origin, "probe", "probe", BODY, 0.9, Timestamp::go_zero());
        packet.files = vec![
            BundleFile {
                path: bundle::SKILL_MD.into(),
                size: BODY.len() as u64,
                mode: "0644".into(),
                sha256: integrity::body_hash(BODY),
            },
            BundleFile {
                path: path.into(),
                size: bytes.len() as u64,
                mode: str_of(input, "mode").into(),
                sha256: integrity::sha256_hex(&bytes),
            },
        ];
        packet.bundle_digest = bundle::bundle_digest(&packet.files);
        let manifest = match BundleManifest::from_packet(&packet, &limits) {
            Ok(Some(m)) => m,
            other => {
                failures.add(i, case, format!("the listing is refused: {other:?}"));
                continue;
            }
        };
        failures.check_eq(i, case, "kind", bundle::kind::sniff(&bytes).id(), str_of(want, "kind"));
        match (manifest.verify_blob(path, &bytes), str_of(want, "verdict")) {
            (Ok(check), "held") => {
                let mismatch = want["mismatch"].as_bool().unwrap();
                failures.check_eq(i, case, "mismatch", check.mismatch.is_some(), mismatch);
            }
            (Err(error), "refused") => {
                let Decision::Rejected { stage, reason } = Decision::from(error) else { unreachable!() };
                failures.check_eq(i, case, "stage", stage.name(), "bundle");
                let prefix = str_of(want, "reason_prefix");
                if !reason.starts_with(prefix) {
                    failures.add(i, case, format!("reason {reason:?} does not start with {prefix:?}"));
                }
            }
            (got, verdict) => failures.add(i, case, format!("expected {verdict}, got {got:?}")),
        }
    }
    failures.finish();
}
