//! `--cleanup` against real `ecp-node`s: after a run the target serves no
//! live skill the run created; with `--no-cleanup` they stay; a target
//! that ignores tombstones is reported, skill by skill.

use ecp_conformance::check::Profile;
use ecp_conformance::report::Report;
use ecp_conformance::{Settings, cleanup};
use serde_json::Value;

use crate::util::{Faults, Proxy, SECRET, TestNode, suite_with};

/// The skill names `url` (a node with [`SECRET`]) serves as active that
/// this run (`report`) created.
async fn live_of_run(url: &str, report: &Report) -> Vec<String> {
    let prefix = format!("ecpconf-{}-", report.run_id);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let signature = ecp_conformance::packets::hmac_hex(SECRET.as_bytes(), b"/ecp/skills");
    let request = client.get(format!("{url}/ecp/skills")).header("x-ecp-hmac", signature);
    let listing: Value = request.send().await.unwrap().json().await.unwrap();
    listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["deprecated"] != true)
        .filter_map(|p| p["skillName"].as_str())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

fn settings(url: String, profile: Profile, cleanup: bool) -> Settings {
    let mut s = Settings::new(url);
    s.secret = Some(SECRET.into());
    s.profile = profile;
    s.timeout = std::time::Duration::from_secs(20);
    s.cleanup = cleanup;
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_whole_run_with_cleanup_the_node_serves_no_live_skill_of_the_run() {
    let node = TestNode::with_secret().await;
    let report = suite_with(settings(node.url(), Profile::Ecp12, true)).await;
    let done = report.cleanup.clone().expect("cleanup is on by default");
    assert!(done.withdrawn.len() > cleanup::BATCH * 2, "more than a few batches: {:?}", done.withdrawn);
    assert!(done.left.is_empty() && done.error.is_none(), "{done:?}");
    assert_eq!(live_of_run(&node.url(), &report).await, Vec::<String>::new());
    let text = ecp_conformance::report::human::render(&report);
    assert!(text.contains(&format!("withdrawn by tombstone: {} skill(s)", done.withdrawn.len())), "{text}");
    assert!(text.contains("quarantine"), "it says what it cannot remove:\n{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_cleanup_the_skills_of_the_run_stay() {
    let node = TestNode::with_secret().await;
    let report = suite_with(settings(node.url(), Profile::Ecp11, false)).await;
    assert!(report.cleanup.is_none());
    let live = live_of_run(&node.url(), &report).await;
    assert!(live.len() > cleanup::BATCH, "{live:?}");
    assert!(!ecp_conformance::report::human::render(&report).contains("\nCleanup\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_that_ignores_tombstones_is_reported_skill_by_skill() {
    let proxy = Proxy::start(Faults { tombstones_active: true, ..Faults::default() }, true).await;
    let mut s = settings(proxy.url(), Profile::Ecp11, true);
    s.only = vec!["PUSH-001".into(), "PUSH-012".into()];
    let report = suite_with(s).await;
    let done = report.cleanup.clone().unwrap();
    let names: Vec<&str> = done.left.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 2, "{done:?}");
    assert!(done.withdrawn.is_empty(), "{done:?}");
    for (name, why) in &done.left {
        assert!(name.starts_with(&format!("ecpconf-{}-", report.run_id)), "{name}");
        assert!(why.contains("still served as active"), "{why}");
    }
    let text = ecp_conformance::report::human::render(&report);
    assert!(text.contains("still served as active: 2"), "{text}");
}
