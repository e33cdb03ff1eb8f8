//! mDNS discovery between real nodes on loopback.
//!
//! Two nodes finding each other needs multicast on the loopback interface,
//! which not every sandbox or CI container has. Rust's harness has no
//! runtime skip, so that test is `#[ignore]`d: `.ci/run` asks
//! `deploy/check-multicast.sh` first and runs it with `--ignored` only where
//! multicast works, else prints `mdns test skipped: <reason>` — never a pass.
//! The same goes for a TLS node found by mDNS and pulled over HTTPS, its
//! certificate checked against the fingerprint it advertises.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::Config;
use ecp_node::store::PeerKind;

/// mDNS probes for about a second before it announces; leave room for a slow machine.
const FIND_DEADLINE: Duration = Duration::from_secs(20);

async fn node_with_mdns(dir: &std::path::Path, secret: Option<&str>) -> Node {
    let mut config = Config::for_tests(dir);
    config.mdns = true;
    config.secret = secret.map(Into::into);
    Node::bind(config).await.expect("the node starts")
}

/// Waits until `node`'s federator lists (or, with `present = false`, no
/// longer lists) a discovered peer at `url`.
async fn wait_for_peer(node: &Node, url: &str, present: bool, what: &str) {
    let found = tokio::time::timeout(FIND_DEADLINE, async {
        loop {
            let peers = node.federator().active_peers().await;
            let listed = peers.iter().any(|p| p.url == url && p.kind == PeerKind::Discovered);
            if listed == present {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    if found.is_err() {
        let peers = node.federator().active_peers().await;
        let urls: Vec<_> = peers.iter().map(|p| (&p.url, p.kind)).collect();
        panic!("no {what} within {FIND_DEADLINE:?}; active peers: {urls:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs multicast: run by .ci/run when available"]
async fn two_nodes_on_loopback_find_each_other_and_drop_a_stopped_one() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = node_with_mdns(dir_a.path(), None).await;
    let b = node_with_mdns(dir_b.path(), None).await;
    wait_for_peer(&a, &b.url(), true, "discovered peer B at A").await;
    wait_for_peer(&b, &a.url(), true, "discovered peer A at B").await;
    // Neither lists itself.
    assert!(a.federator().active_peers().await.iter().all(|p| p.url != a.url()));
    let b_url = b.url();
    b.shutdown().await.expect("B stops cleanly");
    wait_for_peer(&a, &b_url, false, "B dropped at A after B stopped").await;
    a.shutdown().await.expect("A stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs multicast: run by .ci/run when available"]
async fn a_tls_node_found_by_mdns_is_pulled_over_https_with_its_advertised_certificate() {
    let pki = crate::tls::Pki::new();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut config = Config::for_tests(dir_a.path());
    config.mdns = true;
    config.tls = ecp_node::tls::TlsFiles {
        cert: Some(pki.path("server.pem")),
        key: Some(pki.path("server.key")),
        ..Default::default()
    };
    let a = Node::bind(config).await.expect("A serves TLS");
    crate::util::add_local_skill(a.library(), "found-over-https", 1.0).await;
    let b = node_with_mdns(dir_b.path(), None).await;
    assert!(a.url().starts_with("https://"), "{}", a.url());
    wait_for_peer(&b, &a.url(), true, "A found at B under its https URL").await;
    let pinned =
        b.federator().active_peers().await.into_iter().find(|p| p.url == a.url()).expect("A").tls.pin;
    assert_eq!(pinned, a.served_certificate().map(|s| s.leaf_sha256), "pinned to what A serves");
    let held = tokio::time::timeout(FIND_DEADLINE, async {
        loop {
            let skills = b.library().store().list_skills().expect("skills");
            if skills.iter().any(|s| s.name == "found-over-https") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let state = b.library().store().peer_state(&a.url()).expect("peer state");
    assert!(held.is_ok(), "A's skill not pulled over HTTPS; B's state of A: {state:?}");
    b.shutdown().await.expect("B stops cleanly");
    a.shutdown().await.expect("A stops cleanly");
}

#[tokio::test]
async fn test_nodes_run_without_discovery_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::for_tests(dir.path());
    assert!(!config.mdns, "test nodes must not find each other by accident");
    let node = Node::bind(config).await.expect("the node starts");
    assert!(node.federator().active_peers().await.is_empty());
    node.shutdown().await.expect("the node stops cleanly");
}
