//! mDNS discovery between real nodes on loopback.
//!
//! Two nodes finding each other needs multicast on the loopback interface,
//! which not every sandbox or CI container has. Rust's harness has no
//! runtime skip, so that test is `#[ignore]`d: `.ci/run` asks
//! `deploy/check-multicast.sh` first and runs it with `--ignored` only where
//! multicast works, else prints `mdns test skipped: <reason>` — never a pass.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::Config;
use ecp_node::discovery::{DiscoveredPeer, DiscoveryEvent};
use tokio::sync::mpsc::Receiver;

/// mDNS probes for about a second before it announces; leave room for a slow machine.
const FIND_DEADLINE: Duration = Duration::from_secs(20);

async fn node_with_mdns(dir: &std::path::Path, secret: Option<&str>) -> Node {
    let mut config = Config::for_tests(dir);
    config.mdns = true;
    config.secret = secret.map(str::to_owned);
    Node::bind(config).await.expect("the node starts")
}

/// Waits for the first event that `wanted` accepts, keeping every event seen.
async fn wait_for(
    events: &mut Receiver<DiscoveryEvent>,
    seen: &mut Vec<DiscoveryEvent>,
    what: &str,
    wanted: impl Fn(&DiscoveryEvent) -> bool,
) -> DiscoveryEvent {
    let found = tokio::time::timeout(FIND_DEADLINE, async {
        while let Some(event) = events.recv().await {
            seen.push(event.clone());
            if wanted(&event) {
                return Some(event);
            }
        }
        None
    })
    .await;
    match found {
        Ok(Some(event)) => event,
        Ok(None) => panic!("the discovery channel closed before {what}; events seen: {seen:?}"),
        Err(_) => panic!("no {what} within {FIND_DEADLINE:?}; events seen: {seen:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs multicast: run by .ci/run when available"]
async fn two_nodes_on_loopback_find_each_other_and_report_a_stopped_one_lost() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = node_with_mdns(dir_a.path(), None).await;
    let mut b = node_with_mdns(dir_b.path(), Some("mesh-secret")).await;
    let id_a = a.library().store().instance_id().to_owned();
    let id_b = b.library().store().instance_id().to_owned();
    let mut events_a = a.take_discovery_events().expect("discovery runs on A (is multicast available?)");
    let mut events_b = b.take_discovery_events().expect("discovery runs on B (is multicast available?)");
    assert!(a.take_discovery_events().is_none(), "the event channel is handed out once");

    let (mut seen_a, mut seen_b) = (Vec::new(), Vec::new());
    let found_b = wait_for(
        &mut events_a,
        &mut seen_a,
        "Found(B) at A",
        |e| matches!(e, DiscoveryEvent::Found(p) if p.instance == id_b),
    )
    .await;
    assert_eq!(
        found_b,
        DiscoveryEvent::Found(DiscoveredPeer { instance: id_b.clone(), url: b.url(), auth_required: true })
    );
    let found_a = wait_for(
        &mut events_b,
        &mut seen_b,
        "Found(A) at B",
        |e| matches!(e, DiscoveryEvent::Found(p) if p.instance == id_a),
    )
    .await;
    assert_eq!(
        found_a,
        DiscoveryEvent::Found(DiscoveredPeer { instance: id_a.clone(), url: a.url(), auth_required: false })
    );

    b.shutdown().await.expect("B stops cleanly");
    wait_for(
        &mut events_a,
        &mut seen_a,
        "Lost(B) at A after B stopped",
        |e| matches!(e, DiscoveryEvent::Lost { instance } if *instance == id_b),
    )
    .await;
    let own = |seen: &[DiscoveryEvent], id: &str| {
        seen.iter().any(|e| match e {
            DiscoveryEvent::Found(p) => p.instance == id,
            DiscoveryEvent::Lost { instance } => instance == id,
        })
    };
    assert!(!own(&seen_a, &id_a), "A reported itself: {seen_a:?}");
    assert!(!own(&seen_b, &id_b), "B reported itself: {seen_b:?}");
    a.shutdown().await.expect("A stops cleanly");
}

#[tokio::test]
async fn test_nodes_run_without_discovery_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::for_tests(dir.path());
    assert!(!config.mdns, "test nodes must not find each other by accident");
    let mut node = Node::bind(config).await.expect("the node starts");
    assert!(node.take_discovery_events().is_none());
    node.shutdown().await.expect("the node stops cleanly");
}
