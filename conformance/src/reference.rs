//! The Go reference implementation: how the suite tells that a target is
//! one ([`identify`]), and its known flaws ([`KNOWN_FLAWS`], from
//! `shared/ECP.md` "Flaws of the reference" and what runs of this suite
//! found beyond them) with the checks that show each. The text report
//! lists the flaws a run saw in a section "Differences from the reference
//! implementation" when the target identifies as a Go node.
//!
//! What it does not do: it never changes an outcome. A flaw of the
//! reference is still a failure of its check; the section only says which
//! failures are the reference's known behaviour.

use serde_json::Value;

use crate::check::Outcome;
use crate::report::Report;

/// A known flaw of the reference and the checks that fail because of it.
#[derive(Debug)]
pub struct Flaw {
    /// What the reference does, in one line.
    pub what: &'static str,
    /// Where it is described.
    pub source: &'static str,
    /// Checks a target with this flaw fails.
    pub checks: &'static [&'static str],
}

/// The reference's known flaws that a black-box run can see.
pub static KNOWN_FLAWS: &[Flaw] = &[
    Flaw {
        what: "accepts a GET signed over the URL path only, not over the full URL its own client signs: \
               with a secret it cannot pull from itself",
        source: "ECP.md flaw 1",
        checks: &["AUTH-014"],
    },
    Flaw {
        what: "re-serves every skill as its own (originInstance \"ok-agent\", confidence 0.8, patterns null, \
               frontmatter stripped): provenance is lost, confidence never decays",
        source: "ECP.md flaw 3",
        checks: &["SKL-011", "PUSH-014", "PUSH-015", "PUSH-016", "PUSH-017", "PUSH-021", "PUSH-023"],
    },
    Flaw {
        what: "its MergeResult counts a packet whose install failed (bad name, already present) as new or updated",
        source: "ECP.md flaw 4",
        checks: &["PUSH-003", "PUSH-008", "PUSH-009", "PUSH-011", "PUSH-033"],
    },
    Flaw {
        what: "no request size limit, an empty skill body accepted, server paths in error messages",
        source: "ECP.md flaw 5",
        checks: &["ROB-005", "ROB-015", "PUSH-007", "HTTP-010"],
    },
    Flaw {
        what: "sequenceNum is always 0: no incremental sync, withdrawals never propagate",
        source: "ECP.md flaw 6",
        checks: &[
            "SYNC-001", "SYNC-004", "SYNC-005", "SYNC-006", "SYNC-007", "SYNC-008", "SYNC-009", "SYNC-010",
            "SYNC-015", "SYNC-016",
        ],
    },
    Flaw {
        what: "its safety pattern for a download piped into a shell misses `wget -O- URL | sh`",
        source: "found by this suite (issue 17)",
        checks: &["PUSH-029"],
    },
];

/// Why the target is taken for a Go node, if it is: its manifest has the
/// reference's default identity (`instance: "ok-agent"`) or its listing
/// the reference's update id (`ok-<digits>`), and it lists no
/// `profiles` (which every ECP/1.2 node of this project does).
pub fn identify(manifest: &Value, listing: &Value) -> Option<String> {
    if manifest.get("profiles").is_some() {
        return None;
    }
    if manifest["instance"] == "ok-agent" {
        return Some("its manifest says instance \"ok-agent\" and lists no profiles".into());
    }
    let id = listing["id"].as_str().unwrap_or_default();
    let go_id =
        id.strip_prefix("ok-").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    go_id.then(|| format!("its listing's update id is {id:?} (the Go form ok-<unix time>) and its manifest lists no profiles"))
}

/// The known flaws `report` saw: each with the IDs of its checks that
/// failed in the run (not skipped, not an error of the suite).
pub fn seen(report: &Report) -> Vec<(&'static Flaw, Vec<&'static str>)> {
    KNOWN_FLAWS
        .iter()
        .filter_map(|flaw| {
            let failed: Vec<&'static str> = report
                .results
                .iter()
                .filter(|r| r.outcome == Outcome::Fail && flaw.checks.contains(&r.check.id))
                .map(|r| r.check.id)
                .collect();
            (!failed.is_empty()).then_some((flaw, failed))
        })
        .collect()
}

/// Failures of `report` that no known flaw explains (possibly new flaws).
pub fn unexplained(report: &Report) -> Vec<&'static str> {
    report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error))
        .map(|r| r.check.id)
        .filter(|id| !KNOWN_FLAWS.iter().any(|f| f.checks.contains(id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_go_manifest_or_update_id_identifies_the_reference_and_profiles_rule_it_out() {
        let go = json!({"instance": "ok-agent", "version": "1.0", "sequenceNum": 0});
        assert!(identify(&go, &json!({})).is_some());
        let renamed = json!({"instance": "laptop", "version": "1.0"});
        assert!(identify(&renamed, &json!({"id": "ok-1795334282"})).is_some());
        assert!(identify(&renamed, &json!({"id": "ok-"})).is_none());
        assert!(identify(&renamed, &json!({"id": "ecp-3f2a"})).is_none());
        let ours = json!({"instance": "ok-agent", "profiles": ["ecp-1.1", "ecp-1.2"]});
        assert!(identify(&ours, &json!({"id": "ok-1"})).is_none(), "an ECP/1.2 node named ok-agent");
    }

    #[test]
    fn every_flaw_names_existing_checks() {
        let all = crate::checks::all();
        for flaw in KNOWN_FLAWS {
            for id in flaw.checks {
                assert!(all.iter().any(|c| c.id == *id), "{}: {id} is no check", flaw.source);
            }
        }
    }
}
