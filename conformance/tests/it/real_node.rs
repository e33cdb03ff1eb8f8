//! A freshly started `ecp-node` against the suite: every MUST of ecp-1.2
//! passes, with and without a secret (SPEC is what the node implements).
//!
//! KNOWN FAILURES: while the protocol crate's safety scanner is a stub that
//! refuses nothing (this branch), the node fails PUSH-006 and PUSH-029
//! (MUST) and PUSH-030 (SHOULD): it merges `curl … | sh` and the rest as
//! new skills. The tests below accept exactly those failures, and only
//! when [`scanner_is_stub`] confirms the stub; once the real scanner lands
//! they demand a clean pass. (The scanner in progress on the scan branch,
//! 0d91ca1, rates `eval $REMOTE_PAYLOAD` Medium, below the default High
//! threshold, while SPEC §7.7.3 requires refusing `eval $…`: with it these
//! tests will fail on PUSH-029 — rightly.)

use std::collections::BTreeSet;

use ecp_conformance::check::{Level, Outcome, Profile};

use crate::util::{
    Faults, NEEDS_SCANNER, Proxy, SECRET, TestNode, explain, failed, launder, outcome, scanner_is_stub, suite,
};

/// The MUST (and, with `shoulds`, SHOULD) checks that failed, less the
/// ones a stub scanner explains.
pub(crate) async fn unexpected_failures(
    report: &ecp_conformance::report::Report,
    shoulds: bool,
) -> BTreeSet<&'static str> {
    let stub = scanner_is_stub().await;
    report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error))
        .filter(|r| r.level == Level::Must || (shoulds && r.level == Level::Should))
        .filter(|r| !(stub && NEEDS_SCANNER.contains(&r.check.id)))
        .map(|r| r.check.id)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_node_passes_every_must_and_should_of_ecp_1_2_without_a_secret() {
    let node = TestNode::start().await;
    let report = suite(node.url(), None, Profile::Ecp12).await;
    let bad = unexpected_failures(&report, true).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
    assert_eq!(outcome(&report, "AUTH-001"), Outcome::Skip, "no secret: AUTH is skipped");
    assert_eq!(outcome(&report, "SIGN-001"), Outcome::Skip, "no key: SIGN is skipped");
    assert!(report.results.len() >= 50);
    bundle_checks_pass(&report);
}

/// The node lists ecp-1.3: every BUN check ran and passed.
fn bundle_checks_pass(report: &ecp_conformance::report::Report) {
    let bun: Vec<_> = report.results.iter().filter(|r| r.check.area() == "BUN").collect();
    assert_eq!(bun.len(), 11);
    for r in bun {
        assert_eq!(r.outcome, Outcome::Pass, "{}: {}", r.check.id, r.reason);
    }
}

/// A node without ecp-1.3 in its manifest's profiles (an ECP/1.2 node):
/// every BUN check is skipped, saying why.
#[tokio::test(flavor = "multi_thread")]
async fn the_bundle_checks_are_skipped_against_a_node_without_ecp_1_3() {
    let faults = Faults {
        manifest: Some(|m| {
            m.as_object_mut().map(|o| o.remove("profiles"));
        }),
        ..Faults::default()
    };
    let proxy = Proxy::start(faults, false).await;
    let report = crate::util::suite_only(proxy.url(), None, Profile::Ecp12, &["BUN"]).await;
    assert_eq!(report.results.len(), 11);
    for r in &report.results {
        assert_eq!(r.outcome, Outcome::Skip, "{}: {}", r.check.id, r.reason);
        assert!(r.reason.contains("ecp-1.3"), "{}: {}", r.check.id, r.reason);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_node_with_a_secret_passes_every_must_of_ecp_1_2_auth_included() {
    let node = TestNode::with_secret().await;
    let report = suite(node.url(), Some(SECRET), Profile::Ecp12).await;
    let bad = unexpected_failures(&report, true).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
    for r in report.results.iter().filter(|r| r.check.area() == "AUTH") {
        assert_eq!(r.outcome, Outcome::Pass, "{}: {}", r.check.id, r.reason);
    }
    bundle_checks_pass(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_node_passes_ecp_1_1_and_the_ecp_1_2_checks_it_does_not_imply_are_skipped() {
    let node = TestNode::start().await;
    let report = suite(node.url(), None, Profile::Ecp11).await;
    let bad = unexpected_failures(&report, true).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
    assert_eq!(outcome(&report, "SYNC-004"), Outcome::Skip);
    assert_eq!(outcome(&report, "SYNC-001"), Outcome::Pass, "implied by ECP/1.1: run at SHOULD");
    assert!(report.results.iter().any(|r| r.check.profile == Profile::Ecp11 && r.outcome == Outcome::Pass));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_node_without_the_secret_is_not_run_against_and_says_why_once() {
    let node = TestNode::with_secret().await;
    let settings = ecp_conformance::Settings::new(node.url());
    let refused = tokio::task::spawn_blocking(move || ecp_conformance::run(&settings)).await.unwrap();
    let Err(error) = refused else { panic!("no run without credentials") };
    let error = error.to_string();
    assert_eq!(error, "this node requires authentication: pass --secret or --key-id/--key-secret");
}

/// The proxy the broken targets are built from is faithful when it breaks nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_faithful_proxy_passes_like_the_node() {
    let proxy = Proxy::start(Faults::default(), true).await;
    let report = suite(proxy.url(), Some(SECRET), Profile::Ecp12).await;
    let bad = unexpected_failures(&report, false).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
}

/// A target with the Go reference's documented behaviour (ECP.md flaws 3
/// and 6: laundered origin, sequenceNum 0, no ETag, no `since`, a re-push
/// counted updated) passes ecp-1.1 and fails ecp-1.2.
#[tokio::test(flavor = "multi_thread")]
async fn a_go_like_target_passes_ecp_1_1_and_fails_ecp_1_2() {
    let go_like = || Faults {
        listing: Some(|v| {
            launder(v);
            v["sequenceNum"] = 0.into();
        }),
        manifest: Some(|v| v["sequenceNum"] = 0.into()),
        result: Some(|v| {
            let unchanged = v["unchanged"].as_i64().unwrap_or(0);
            v["updatedSkills"] = (v["updatedSkills"].as_i64().unwrap_or(0) + unchanged).into();
            v.as_object_mut().map(|o| o.remove("unchanged"));
        }),
        no_etag: true,
        ignore_query: true,
        ..Faults::default()
    };
    let proxy = Proxy::start(go_like(), false).await;
    let report = suite(proxy.url(), None, Profile::Ecp11).await;
    let bad = unexpected_failures(&report, false).await;
    assert!(bad.is_empty(), "ecp-1.1: {}", explain(&report, &bad));

    let proxy = Proxy::start(go_like(), false).await;
    let report = suite(proxy.url(), None, Profile::Ecp12).await;
    let failed = failed(&report);
    for id in ["PUSH-003", "PUSH-014", "PUSH-015", "PUSH-016", "SKL-011", "SYNC-001", "SYNC-004", "SYNC-007"]
    {
        assert!(failed.contains(id), "{id} passes against a Go-like target:\n{}", explain(&report, &failed));
    }
}
