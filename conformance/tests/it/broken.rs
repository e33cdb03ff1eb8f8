//! Deliberately broken targets: a real node behind a [`Proxy`] that breaks
//! one rule, and the check IDs that must then fail. The table is also the
//! proof that every check can fail: [`every_check_fails_against_some_broken_target`]
//! demands that the cases together, with the broken gates of `signed.rs`
//! for the SIGN checks, name every check ID.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecp_conformance::check::{Outcome, Profile};
use ecp_conformance::packets::set_body;
use ecp_node::config::Config;
use serde_json::{Value, json};

use crate::util::{Faults, Proxy, SECRET, explain, failed, launder, outcome, suite};

/// One broken target.
struct Case {
    /// What is broken.
    name: &'static str,
    /// How.
    faults: fn() -> Faults,
    /// The node's configuration, changed.
    node: fn(&mut Config),
    /// Whether the node (and the suite) have a secret.
    secret: bool,
    /// Checks that must fail.
    fail: &'static [&'static str],
}

fn none(_: &mut Config) {}

fn first_packet(listing: &mut Value) -> Option<&mut Value> {
    listing["skills"].as_array_mut().and_then(|s| s.first_mut())
}

fn each_packet(listing: &mut Value, f: impl Fn(&mut Value)) {
    for p in listing["skills"].as_array_mut().into_iter().flatten() {
        f(p);
    }
}

const CASES: &[Case] = &[
    // Manifest.
    Case {
        name: "manifest-not-an-object",
        faults: || Faults { manifest: Some(|m| *m = json!("manifest")), ..Default::default() },
        node: none,
        secret: false,
        fail: &["MAN-001", "MAN-002", "SKL-006"],
    },
    Case {
        name: "manifest-without-lastUpdate",
        faults: || Faults {
            manifest: Some(|m| {
                if let Some(o) = m.as_object_mut() {
                    o.remove("lastUpdate");
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["MAN-002", "MAN-004"],
    },
    Case {
        name: "manifest-skillCount-off-by-one",
        faults: || Faults {
            manifest: Some(|m| m["skillCount"] = json!(m["skillCount"].as_i64().unwrap_or(0) + 1)),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["MAN-003", "SKL-006"],
    },
    Case {
        name: "manifest-invalid-name",
        faults: || Faults {
            manifest: Some(|m| {
                if let Some(names) = m["skillNames"].as_array_mut() {
                    names.push(json!("../escape"));
                }
                m["skillCount"] = json!(m["skillNames"].as_array().map_or(0, Vec::len));
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["MAN-005", "SKL-006"],
    },
    Case {
        name: "manifest-empty-instance",
        faults: || Faults { manifest: Some(|m| m["instance"] = json!("")), ..Default::default() },
        node: none,
        secret: false,
        fail: &["MAN-006", "SKL-007"],
    },
    Case {
        name: "manifest-version-2",
        faults: || Faults { manifest: Some(|m| m["version"] = json!("2.0")), ..Default::default() },
        node: none,
        secret: false,
        fail: &["MAN-007"],
    },
    Case {
        name: "manifest-negative-sequence",
        faults: || Faults { manifest: Some(|m| m["sequenceNum"] = json!(-1)), ..Default::default() },
        node: none,
        secret: false,
        fail: &["MAN-008"],
    },
    Case {
        name: "manifest-time-with-offset",
        faults: || Faults {
            manifest: Some(|m| m["generatedAt"] = json!("2026-11-20T12:00:05.500+02:00")),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["MAN-009"],
    },
    // Listing.
    Case {
        name: "listing-not-an-object",
        faults: || Faults { listing: Some(|l| *l = json!([])), ..Default::default() },
        node: none,
        secret: false,
        fail: &["SKL-001", "SKL-002", "PUSH-012"],
    },
    Case {
        name: "listing-sequenceNum-a-string",
        faults: || Faults { listing: Some(|l| l["sequenceNum"] = json!("0")), ..Default::default() },
        node: none,
        secret: false,
        fail: &["SKL-002"],
    },
    Case {
        name: "serves-a-packet-whose-hash-does-not-verify",
        faults: || Faults {
            listing: Some(|l| {
                if let Some(p) = first_packet(l) {
                    p["skillBody"] =
                        json!(format!("{}Also run this.\n", p["skillBody"].as_str().unwrap_or_default()));
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-003"],
    },
    Case {
        name: "ids-are-not-hash-prefixes",
        faults: || Faults {
            listing: Some(|l| each_packet(l, |p| p["id"] = json!("0000000000000000"))),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-004", "PUSH-031"],
    },
    Case {
        name: "serves-an-invalid-name",
        faults: || Faults {
            listing: Some(|l| {
                if let Some(p) = first_packet(l) {
                    p["skillName"] = json!("bad name/..")
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-005", "SKL-006"],
    },
    Case {
        name: "listing-empty",
        faults: || Faults { listing: Some(|l| l["skills"] = json!([])), ..Default::default() },
        node: none,
        secret: false,
        fail: &["SKL-006", "PUSH-012"],
    },
    Case {
        name: "listing-peerInstance-of-another-node",
        faults: || Faults {
            listing: Some(|l| l["peerInstance"] = json!("someone-else")),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-007"],
    },
    Case {
        name: "serves-unshareable-packets",
        faults: || Faults {
            listing: Some(|l| each_packet(l, |p| p["shareable"] = json!(false))),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-008"],
    },
    Case {
        name: "serves-confidence-over-one",
        faults: || Faults {
            listing: Some(|l| each_packet(l, |p| p["confidence"] = json!(1.5))),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-009"],
    },
    Case {
        name: "serves-uppercase-hashes",
        faults: || Faults {
            listing: Some(|l| {
                each_packet(l, |p| {
                    p["integrityHash"] = json!(p["integrityHash"].as_str().unwrap_or_default().to_uppercase())
                })
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-010", "SKL-003"],
    },
    Case {
        name: "serves-empty-provenance",
        faults: || Faults {
            listing: Some(|l| each_packet(l, |p| p["provenance"] = json!({}))),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SKL-012"],
    },
    Case {
        name: "launders-origin",
        faults: || Faults { listing: Some(launder), ..Default::default() },
        node: none,
        secret: false,
        fail: &["SKL-011", "PUSH-014", "PUSH-015", "PUSH-016", "PUSH-017", "PUSH-021", "PUSH-023"],
    },
    Case {
        name: "serves-private-skills",
        faults: || Faults { serves_private: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["PUSH-027"],
    },
    // Merge results.
    Case {
        name: "miscounts-merges",
        faults: || Faults {
            result: Some(|r| {
                r["newSkills"] =
                    json!(r["newSkills"].as_i64().unwrap_or(0) + r["rejectedSkills"].as_i64().unwrap_or(0))
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["PUSH-004", "PUSH-005", "PUSH-010", "PUSH-011", "PUSH-026"],
    },
    Case {
        name: "counts-nothing",
        faults: || Faults {
            result: Some(|r| {
                *r = json!({"newSkills": 0, "updatedSkills": 0, "rejectedSkills": 0, "conflicts": null})
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["PUSH-001", "PUSH-010"],
    },
    Case {
        name: "counts-a-re-push-as-new",
        faults: || Faults {
            result: Some(|r| {
                let unchanged = r["unchanged"].as_i64().unwrap_or(0);
                r["newSkills"] = json!(r["newSkills"].as_i64().unwrap_or(0) + unchanged);
                r.as_object_mut().map(|o| o.remove("unchanged"));
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["PUSH-002", "PUSH-003", "PUSH-011", "SYNC-012"],
    },
    Case {
        name: "counts-as-strings",
        faults: || Faults {
            result: Some(|r| {
                for k in ["newSkills", "updatedSkills", "rejectedSkills"] {
                    r[k] = json!(r[k].to_string());
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["PUSH-032"],
    },
    Case {
        name: "accepts-everything",
        faults: || Faults { accept_everything: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &[
            "PUSH-004", "PUSH-005", "PUSH-006", "PUSH-007", "PUSH-008", "PUSH-009", "PUSH-013", "PUSH-018",
            "PUSH-019", "PUSH-020", "PUSH-022", "PUSH-024", "PUSH-025", "PUSH-026", "PUSH-028", "PUSH-029",
            "PUSH-030", "PUSH-033", "BUN-004", "BUN-005", "BUN-006", "BUN-007", "BUN-008",
        ],
    },
    // Authentication.
    Case {
        name: "ignores-the-hmac",
        faults: || Faults { ignore_hmac: true, ..Default::default() },
        node: none,
        secret: true,
        fail: &[
            "AUTH-001", "AUTH-002", "AUTH-003", "AUTH-004", "AUTH-005", "AUTH-006", "AUTH-010", "AUTH-011",
            "AUTH-013",
        ],
    },
    Case {
        name: "a-skill-changes-between-reads",
        // Its body (and so its hash) differs on every read: AUTH-010 sees a
        // change that is no time (reference.rs: times alone do not fail it).
        faults: || Faults {
            listing: Some(|l| {
                static READS: AtomicUsize = AtomicUsize::new(0);
                let n = READS.fetch_add(1, Ordering::SeqCst);
                if let Some(p) = first_packet(l) {
                    let body = format!("{}Read {n}.\n", p["skillBody"].as_str().unwrap_or_default());
                    set_body(p, &body);
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: true,
        fail: &["AUTH-010"],
    },
    Case {
        name: "verifies-the-hmac-its-own-way",
        faults: || Faults { own_hmac: true, ..Default::default() },
        node: none,
        secret: true,
        fail: &["AUTH-007", "AUTH-008", "AUTH-009", "AUTH-012"],
    },
    Case {
        name: "no-full-url-hmac",
        faults: Faults::default,
        node: |c| c.accept_full_url_hmac = false,
        secret: true,
        fail: &["AUTH-014"],
    },
    // Robustness.
    Case {
        name: "crashes-on-bad-json",
        faults: || Faults { crash_on_bad_json: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ROB-001", "ROB-006", "ROB-007", "ROB-008", "ROB-009", "ROB-014", "ROB-016", "HTTP-004"],
    },
    Case {
        name: "plain-text-errors",
        faults: || Faults { plain_text_errors: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &[
            "ROB-001", "ROB-002", "ROB-003", "ROB-004", "ROB-010", "ROB-017", "HTTP-004", "HTTP-006",
            "HTTP-007", "HTTP-008", "SYNC-011", "BUN-009", "BUN-011",
        ],
    },
    Case {
        name: "lenient-decoding",
        faults: || Faults { lenient: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &[
            "ROB-001", "ROB-002", "ROB-003", "ROB-004", "ROB-006", "ROB-008", "ROB-009", "ROB-010",
            "ROB-014", "ROB-016", "ROB-017", "SYNC-011",
        ],
    },
    Case {
        name: "invalid-utf8-accepted",
        faults: || Faults { lenient: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ROB-007"],
    },
    Case {
        name: "installs-packets-of-a-refused-message",
        faults: || Faults { partial_decode: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ROB-002", "ROB-017"],
    },
    Case {
        name: "no-body-limit",
        faults: || Faults { no_body_limit: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ROB-005"],
    },
    Case {
        name: "no-packet-limit",
        faults: || Faults { no_packet_limit: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ROB-015"],
    },
    Case {
        name: "strict-about-fields",
        // An ECP/1.2 node: no ecp-1.3 in its profiles, so ROB-018 runs (#26).
        faults: || Faults {
            strict_fields: true,
            manifest: Some(|m| {
                m.as_object_mut().map(|o| o.remove("profiles"));
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        // OUT-001: a packet carrying `outcomes` is refused for the unknown member.
        fail: &["ROB-011", "ROB-012", "ROB-013", "ROB-018", "OUT-001"],
    },
    // HTTP hygiene.
    Case {
        name: "text-plain-content-type",
        faults: || Faults { text_content_type: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-001", "HTTP-002", "HTTP-003"],
    },
    Case {
        name: "unknown-paths-answered-200",
        faults: || Faults { unknown_path_200: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-005", "HTTP-006", "BUN-011"],
    },
    Case {
        name: "404-for-wrong-methods",
        faults: || Faults { not_found_for_405: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-007", "HTTP-008", "HTTP-009"],
    },
    Case {
        name: "405-without-allow",
        faults: || Faults { no_allow: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-009"],
    },
    Case {
        name: "leaks-server-paths",
        faults: || Faults {
            error_text: Some(|e| format!("{e} (reading /home/node/ecp-data/ecp.db)")),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["HTTP-010"],
    },
    Case {
        name: "refuses-text-plain-pushes",
        faults: || Faults { rejects_text_plain: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-011"],
    },
    Case {
        name: "refuses-unknown-query-parameters",
        faults: || Faults { strict_query: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["HTTP-012"],
    },
    // Synchronisation.
    Case {
        name: "sequenceNum-always-0",
        faults: || Faults {
            manifest: Some(|m| m["sequenceNum"] = json!(0)),
            listing: Some(|l| l["sequenceNum"] = json!(0)),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SYNC-001", "SYNC-008"],
    },
    Case {
        name: "listing-sequenceNum-off-by-one",
        faults: || Faults {
            listing: Some(|l| l["sequenceNum"] = json!(l["sequenceNum"].as_i64().unwrap_or(0) + 1)),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SYNC-002", "SYNC-014"],
    },
    Case {
        name: "bumps-the-sequence-on-every-push",
        faults: || Faults { bumps_sequence: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["SYNC-003"],
    },
    Case {
        name: "no-etag",
        faults: || Faults { no_etag: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["SYNC-004", "SYNC-005", "SYNC-006"],
    },
    Case {
        name: "always-304",
        faults: || Faults { always_304: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["SYNC-013"],
    },
    Case {
        name: "ignores-since",
        faults: || Faults { ignore_query: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["SYNC-007", "SYNC-008", "SYNC-009", "SYNC-011", "SYNC-015", "SYNC-016"],
    },
    Case {
        name: "pages-without-next",
        faults: || Faults {
            listing: Some(|l| {
                l.as_object_mut().map(|o| o.remove("next"));
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SYNC-015"],
    },
    Case {
        name: "drops-tombstones",
        faults: || Faults {
            listing: Some(|l| {
                if let Some(s) = l["skills"].as_array_mut() {
                    s.retain(|p| p["deprecated"] != true);
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["SYNC-009"],
    },
    Case {
        name: "withdrawn-skills-stay-active",
        faults: || Faults { tombstones_active: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["SYNC-010"],
    },
    // Bundles (ECP/1.3).
    Case {
        name: "serves-bundles-without-their-files",
        faults: || Faults {
            listing: Some(|l| {
                each_packet(l, |p| {
                    if let Some(files) = p["files"].as_array_mut() {
                        files.retain(|f| f["path"] == "SKILL.md");
                    }
                })
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["BUN-001", "BUN-002", "BUN-004"],
    },
    Case {
        name: "serves-altered-blobs",
        faults: || Faults { blob_bytes: Some(|b| b.push(b'\n')), ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-002"],
    },
    Case {
        name: "missing-says-everything-is-held",
        faults: || Faults { missing: Some(|m| m["missing"] = json!([])), ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-003", "BUN-009", "BUN-010"],
    },
    Case {
        name: "missing-lists-every-digest-asked",
        faults: || Faults { missing: Some(|m| m["missing"] = json!(["0".repeat(64)])), ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-003"],
    },
    Case {
        name: "installs-bundles-with-missing-blobs",
        faults: || Faults { installs_pending: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-004"],
    },
    Case {
        name: "stores-blobs-without-checking-the-digest",
        faults: || Faults { blob_digest_unchecked: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-009"],
    },
    Case {
        name: "no-blob-limit",
        faults: || Faults { no_blob_limit: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["BUN-010"],
    },
    // Exact versions by digest (#25).
    Case {
        name: "exact-versions-altered",
        faults: || Faults {
            exact: Some(|v| {
                if let Some(p) = first_packet(v) {
                    let body = format!("{}\naltered\n", p["skillBody"].as_str().unwrap_or_default());
                    set_body(p, &body);
                }
            }),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["VER-001", "VER-002"],
    },
    Case {
        name: "exact-errors-answered-200",
        faults: || Faults { exact_errors_200: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["VER-003", "VER-004"],
    },
    // Proposals (#20).
    Case {
        name: "proposal-answers-another-id",
        faults: || Faults {
            proposal_answer: Some(|v| v["id"] = json!("ffffffffffffffff")),
            ..Default::default()
        },
        node: none,
        secret: false,
        fail: &["PRP-001", "PRP-004"],
    },
    Case {
        name: "takes-any-proposal",
        faults: || Faults { takes_any_proposal: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["PRP-002", "PRP-003", "PRP-005"],
    },
    // Origin signatures.
    Case {
        name: "origin-signatures-dropped",
        faults: || Faults { strips_origin_signatures: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["ORG-001", "ORG-002", "ORG-003", "ORG-004"],
    },
    // Revocations (#25 item 4).
    Case {
        name: "revocations-dropped",
        faults: || Faults { drops_revocations: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["REV-001", "REV-002", "REV-003"],
    },
    Case {
        name: "any-revocation-obeyed",
        faults: || Faults { obeys_any_revocation: true, ..Default::default() },
        node: none,
        secret: false,
        fail: &["REV-001", "REV-004"],
    },
];

/// Runs case `name` with profile ecp-1.2; its checks must fail.
async fn check_case(name: &str) {
    let case = CASES.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}"));
    let proxy = Proxy::start_with((case.faults)(), case.secret, case.node).await;
    let only: Vec<&str> = {
        // The areas the case is about, plus MAN/SKL (cheap, and they seed the target).
        let mut areas: BTreeSet<&str> =
            case.fail.iter().map(|id| id.split('-').next().unwrap_or(id)).collect();
        areas.extend(["MAN", "SKL"]);
        areas.into_iter().collect()
    };
    let report =
        crate::util::suite_only(proxy.url(), case.secret.then_some(SECRET), Profile::Ecp12, &only).await;
    let failed = failed(&report);
    let missing: BTreeSet<&str> = case.fail.iter().copied().filter(|id| !failed.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "{name}: these checks pass against the broken target: {missing:?}\n{}",
        report
            .results
            .iter()
            .filter(|r| missing.contains(r.check.id))
            .map(|r| format!("{} {:?}: {}", r.check.id, r.outcome, r.reason))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // A failure says why, with the exchange as evidence.
    for r in report.results.iter().filter(|r| case.fail.contains(&r.check.id) && r.outcome == Outcome::Fail) {
        assert!(!r.reason.is_empty(), "{name}: {} fails without a reason", r.check.id);
    }
    let _ = explain(&report, &failed);
}

macro_rules! broken {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $test() {
                check_case($name).await;
            }
        )*

        /// Every case in the table has a test above.
        const TESTED: &[&str] = &[$($name),*];
    };
}

broken! {
    origin_signatures_dropped => "origin-signatures-dropped",
    revocations_dropped => "revocations-dropped",
    any_revocation_obeyed => "any-revocation-obeyed",
    manifest_not_an_object => "manifest-not-an-object",
    manifest_without_last_update => "manifest-without-lastUpdate",
    manifest_skill_count_off_by_one => "manifest-skillCount-off-by-one",
    manifest_invalid_name => "manifest-invalid-name",
    manifest_empty_instance => "manifest-empty-instance",
    manifest_version_2 => "manifest-version-2",
    manifest_negative_sequence => "manifest-negative-sequence",
    manifest_time_with_offset => "manifest-time-with-offset",
    listing_not_an_object => "listing-not-an-object",
    listing_sequence_num_a_string => "listing-sequenceNum-a-string",
    serves_a_packet_whose_hash_does_not_verify => "serves-a-packet-whose-hash-does-not-verify",
    ids_are_not_hash_prefixes => "ids-are-not-hash-prefixes",
    serves_an_invalid_name => "serves-an-invalid-name",
    listing_empty => "listing-empty",
    listing_peer_instance_of_another_node => "listing-peerInstance-of-another-node",
    serves_unshareable_packets => "serves-unshareable-packets",
    serves_confidence_over_one => "serves-confidence-over-one",
    serves_uppercase_hashes => "serves-uppercase-hashes",
    serves_empty_provenance => "serves-empty-provenance",
    launders_origin => "launders-origin",
    serves_private_skills => "serves-private-skills",
    miscounts_merges => "miscounts-merges",
    counts_nothing => "counts-nothing",
    counts_a_re_push_as_new => "counts-a-re-push-as-new",
    counts_as_strings => "counts-as-strings",
    accepts_everything => "accepts-everything",
    ignores_the_hmac => "ignores-the-hmac",
    a_skill_changes_between_reads => "a-skill-changes-between-reads",
    verifies_the_hmac_its_own_way => "verifies-the-hmac-its-own-way",
    no_full_url_hmac => "no-full-url-hmac",
    crashes_on_bad_json => "crashes-on-bad-json",
    plain_text_errors => "plain-text-errors",
    lenient_decoding => "lenient-decoding",
    invalid_utf8_accepted => "invalid-utf8-accepted",
    installs_packets_of_a_refused_message => "installs-packets-of-a-refused-message",
    no_body_limit => "no-body-limit",
    no_packet_limit => "no-packet-limit",
    strict_about_fields => "strict-about-fields",
    text_plain_content_type => "text-plain-content-type",
    unknown_paths_answered_200 => "unknown-paths-answered-200",
    wrong_methods_answered_404 => "404-for-wrong-methods",
    method_not_allowed_without_allow => "405-without-allow",
    leaks_server_paths => "leaks-server-paths",
    refuses_text_plain_pushes => "refuses-text-plain-pushes",
    refuses_unknown_query_parameters => "refuses-unknown-query-parameters",
    sequence_num_always_0 => "sequenceNum-always-0",
    listing_sequence_num_off_by_one => "listing-sequenceNum-off-by-one",
    bumps_the_sequence_on_every_push => "bumps-the-sequence-on-every-push",
    no_etag => "no-etag",
    always_304 => "always-304",
    ignores_since => "ignores-since",
    pages_without_next => "pages-without-next",
    drops_tombstones => "drops-tombstones",
    withdrawn_skills_stay_active => "withdrawn-skills-stay-active",
    serves_bundles_without_their_files => "serves-bundles-without-their-files",
    serves_altered_blobs => "serves-altered-blobs",
    missing_says_everything_is_held => "missing-says-everything-is-held",
    missing_lists_every_digest_asked => "missing-lists-every-digest-asked",
    installs_bundles_with_missing_blobs => "installs-bundles-with-missing-blobs",
    stores_blobs_without_checking_the_digest => "stores-blobs-without-checking-the-digest",
    no_blob_limit => "no-blob-limit",
    exact_versions_altered => "exact-versions-altered",
    exact_errors_answered_200 => "exact-errors-answered-200",
    proposal_answers_another_id => "proposal-answers-another-id",
    takes_any_proposal => "takes-any-proposal",
}

#[test]
fn every_check_fails_against_some_broken_target() {
    let mut named: BTreeSet<&str> = CASES.iter().flat_map(|c| c.fail.iter().copied()).collect();
    named.extend(crate::signed::proven());
    let unproven: Vec<&str> =
        ecp_conformance::checks::all().iter().map(|c| c.id).filter(|id| !named.contains(id)).collect();
    assert!(unproven.is_empty(), "no broken target makes these checks fail: {unproven:?}");
    let untested: Vec<&str> = CASES.iter().map(|c| c.name).filter(|n| !TESTED.contains(n)).collect();
    assert!(untested.is_empty(), "cases without a test: {untested:?}");
}

/// A target that hangs up instead of answering: the check ends in Error
/// (a `fail` in the JSON report), and the run goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_connection_lost_in_one_check_is_an_error_outcome_not_an_abort() {
    let proxy = Proxy::start(Faults { hang_up_on_bad_json: true, ..Default::default() }, false).await;
    let report = suite(proxy.url(), None, Profile::Ecp12).await;
    assert_eq!(
        outcome(&report, "ROB-001"),
        Outcome::Error,
        "{:?}",
        report.results.iter().find(|r| r.check.id == "ROB-001")
    );
    assert_eq!(outcome(&report, "ROB-017"), Outcome::Pass, "the run went on after the lost connection");
    let json: Value = serde_json::from_str(&ecp_conformance::report::json::render(&report)).unwrap();
    let rob = json["checks"].as_array().unwrap().iter().find(|c| c["id"] == "ROB-001").unwrap();
    assert_eq!(rob["result"], "fail");
    assert!(rob["reason"].as_str().unwrap().starts_with("error: "), "{rob}");
    assert_eq!(report.exit_code(), 1);
}
