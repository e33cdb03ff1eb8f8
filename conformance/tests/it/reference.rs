//! Go-like targets (shared/ECP.md): AUTH-010 does not mistake times set per
//! request for a change, the ecp-1.2 checks ECP/1.1 implies show a Go node's
//! flaws under ecp-1.1 as SHOULD failures, and the text report explains
//! them in "Differences from the reference implementation".

use std::sync::atomic::{AtomicI64, Ordering};

use ecp_conformance::check::{Level, Outcome, Profile};
use ecp_conformance::packets::time_from_now;
use serde_json::{Value, json};

use crate::real_node::unexpected_failures;
use crate::util::{Faults, Proxy, SECRET, explain, failed, launder, suite_only};

/// A time that differs on every call: the Go node's `lastUpdate` and
/// `createdAt` are the time of the request.
fn request_time() -> Value {
    static CALLS: AtomicI64 = AtomicI64::new(0);
    json!(time_from_now(-1000 + CALLS.fetch_add(1, Ordering::SeqCst)))
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_010_passes_against_a_node_that_sets_its_times_per_request() {
    let faults = Faults {
        manifest: Some(|m| {
            m["lastUpdate"] = request_time();
            m["generatedAt"] = request_time();
        }),
        listing: Some(|l| {
            l["generatedAt"] = request_time();
            for p in l["skills"].as_array_mut().into_iter().flatten() {
                p["createdAt"] = request_time();
            }
        }),
        ..Faults::default()
    };
    let proxy = Proxy::start(faults, true).await;
    let report = suite_only(proxy.url(), Some(SECRET), Profile::Ecp11, &["SKL-001", "AUTH-010"]).await;
    let r = report.results.iter().find(|r| r.check.id == "AUTH-010").unwrap();
    assert_eq!(r.outcome, Outcome::Pass, "{}\n{}", r.reason, r.evidence.join("\n"));
}

/// A Go-like target: the reference's identity and its documented flaws
/// (laundered origins and stripped frontmatter, sequenceNum 0, no body
/// limit, no ETag or `since`, a re-push counted updated).
fn go_like() -> Faults {
    Faults {
        manifest: Some(|m| {
            m["instance"] = json!("ok-agent");
            m["sequenceNum"] = json!(0);
            m.as_object_mut().map(|o| o.remove("profiles"));
        }),
        listing: Some(|l| {
            l["peerInstance"] = json!("ok-agent");
            launder(l);
            l["sequenceNum"] = json!(0);
        }),
        result: Some(|v| {
            let unchanged = v["unchanged"].as_i64().unwrap_or(0);
            v["updatedSkills"] = (v["updatedSkills"].as_i64().unwrap_or(0) + unchanged).into();
            v.as_object_mut().map(|o| o.remove("unchanged"));
        }),
        no_body_limit: true,
        no_etag: true,
        ignore_query: true,
        ..Faults::default()
    }
}

/// What the Go-like target fails under ecp-1.1 through the checks ECP/1.1
/// implies: laundering (SKL-011, PUSH-016, PUSH-017, PUSH-023), no body
/// limit (ROB-005), a sequence number that never counts (SYNC-001).
const IMPLIED_FLAWS: &[&str] = &["SKL-011", "PUSH-016", "PUSH-017", "PUSH-023", "ROB-005", "SYNC-001"];

/// The areas run against the Go-like target. Not ROB-018: the node behind
/// the proxy takes bundles (ecp-1.3) though its manifest no longer says so.
const AREAS: &[&str] = &["MAN", "SKL", "HTTP", "PUSH", "SYNC", "ROB-00"];

#[tokio::test(flavor = "multi_thread")]
async fn under_ecp_1_1_a_go_like_node_shows_its_flaws_as_should_failures_and_the_differences() {
    let proxy = Proxy::start(go_like(), false).await;
    let report = suite_only(proxy.url(), None, Profile::Ecp11, AREAS).await;
    let must = unexpected_failures(&report, false).await;
    assert!(must.is_empty(), "no MUST of ecp-1.1 fails: {}", explain(&report, &must));
    let failed = failed(&report);
    for id in IMPLIED_FLAWS {
        let r = report.results.iter().find(|r| r.check.id == *id).unwrap();
        assert_eq!(r.outcome, Outcome::Fail, "{id} passes against a Go-like target: {}", r.reason);
        assert_eq!(r.level, Level::Should, "{id} runs at SHOULD under ecp-1.1");
        assert_eq!(r.check.level, Level::Must, "{id} stays a MUST of ecp-1.2");
    }
    assert_eq!(report.exit_code(), 0, "SHOULD failures alone: exit 0\n{}", explain(&report, &failed));
    let strict = ecp_conformance::report::Report { strict: true, ..report.clone() };
    assert_eq!(strict.exit_code(), 1, "--strict counts them");

    assert!(report.reference.as_deref().is_some_and(|w| w.contains("ok-agent")), "{:?}", report.reference);
    let text = ecp_conformance::report::human::render(&report);
    let section = text
        .split("Differences from the reference implementation\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no differences section:\n{text}"));
    for needle in
        ["ECP.md flaw 3", "ECP.md flaw 5", "ECP.md flaw 6", "SKL-011", "PUSH-016", "ROB-005", "SYNC-001"]
    {
        assert!(section.contains(needle), "{needle} missing from:\n{section}");
    }
    assert!(!section.contains("no known flaw explains"), "every failure is a known flaw:\n{section}");
    assert!(section.contains("--profile ecp-1.2"), "{section}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_failure_of_a_go_node_is_listed_as_unexplained() {
    let mut faults = go_like();
    faults.text_content_type = true;
    let proxy = Proxy::start(faults, false).await;
    let report = suite_only(proxy.url(), None, Profile::Ecp11, &["MAN", "HTTP-001"]).await;
    assert_eq!(crate::util::outcome(&report, "HTTP-001"), Outcome::Fail);
    let text = ecp_conformance::report::human::render(&report);
    let line =
        text.lines().find(|l| l.contains("no known flaw explains")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("HTTP-001"), "{line}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_of_this_project_gets_no_differences_section() {
    let proxy = Proxy::start(Faults { listing: Some(launder), ..Faults::default() }, false).await;
    let report = suite_only(proxy.url(), None, Profile::Ecp12, &["MAN", "SKL"]).await;
    assert!(failed(&report).contains("SKL-011"), "the laundering is seen");
    assert_eq!(report.reference, None);
    let text = ecp_conformance::report::human::render(&report);
    assert!(!text.contains("Differences from the reference implementation"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn under_ecp_1_1_a_fresh_node_passes_the_implied_checks_with_any_reason_wording() {
    let node = crate::util::TestNode::start().await;
    let only: Vec<&str> = ecp_conformance::checks::all()
        .into_iter()
        .filter(|c| c.profile == Profile::Ecp12 && c.level_under(Profile::Ecp11).is_some())
        .map(|c| c.id)
        .collect();
    assert!(only.len() >= 10, "{only:?}");
    let report = suite_only(node.url(), None, Profile::Ecp11, &only).await;
    for r in &report.results {
        assert_eq!((r.outcome, r.level), (Outcome::Pass, Level::Should), "{}: {}", r.check.id, r.reason);
    }
}
