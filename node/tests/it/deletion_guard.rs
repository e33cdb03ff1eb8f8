//! The deletion guard with real nodes: a folder that lost its `.ecp-folder`
//! marker tombstones nothing (and `/readyz` says why); an import pass that
//! would tombstone too much at once is held until accepted (the tombstones
//! reach the peer) or rejected (the files come back); a deliberate `skill rm`
//! is never held; a fresh node adopts a folder another node served.
//!
//! Import passes run through `import::import_all` (what the watcher runs), so
//! each test knows when one happened; the peer pulls over HTTP.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::{Config, PeersConfig};
use ecp_node::deletion_guard::MARKER_FILE;
use ecp_node::federation::{self, Context, PeerSpec, PullReport};
use ecp_node::import::{ImportReport, import_all};
use serde_json::Value;

use super::cli::{Folders, get, skill_md, write_skill};

/// A node on a skills folder holding `names` before it starts.
pub(super) async fn node_with(f: &Folders, names: &[String]) -> Node {
    for name in names {
        write_skill(&f.skills(), name, &skill_md(name, ""));
    }
    Node::bind(f.config()).await.expect("the node starts")
}

pub(super) fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

fn remove_files(f: &Folders, names: &[String]) {
    for name in names {
        std::fs::remove_dir_all(f.skills().join(name)).unwrap();
    }
}

/// Removes the files of `names` while the node is down (so no watcher
/// sees half of it), then starts it again: its first import pass sees all.
pub(super) async fn remove_while_down(node: Node, f: &Folders, names: &[String]) -> Node {
    node.shutdown().await.unwrap();
    remove_files(f, names);
    Node::bind(f.config()).await.expect("the node starts again")
}

/// The ids of the held deletions.
pub(super) async fn held(node: &Node) -> Vec<i64> {
    let held = get(node, "/v1/deletions").await;
    held["deletions"].as_array().unwrap().iter().map(|d| d["id"].as_i64().unwrap()).collect()
}

pub(super) async fn import(node: &Node) -> ImportReport {
    let library = node.library().clone();
    tokio::task::spawn_blocking(move || import_all(&library)).await.unwrap()
}

/// `into` pulls once from `from`, as a configured peer with full trust.
pub(super) async fn pull(into: &Node, config: &Config, from: &Node) -> PullReport {
    let toml = format!("[[peer]]\nurl = \"{}\"\ntrust = 1.0\n", from.url());
    let file = PeersConfig::parse(&toml, "test peers").expect("valid peer");
    let spec = PeerSpec::configured(&file, &file.peers[0]);
    let ctx = Context::new(into.library().clone(), config.policy.clone(), true, Duration::from_secs(10));
    federation::pull(&ctx, &spec).await.expect("the pull succeeds")
}

/// Of `names`, those `node` holds as tombstones.
pub(super) async fn deprecated(node: &Node, names: &[String]) -> Vec<String> {
    let skills = get(node, "/v1/skills").await;
    let all = skills["skills"].as_array().unwrap();
    names
        .iter()
        .filter(|n| all.iter().any(|s| s["name"] == n.as_str() && s["deprecated"] == true))
        .cloned()
        .collect()
}

/// `node` holds every one of `names`, none deprecated.
pub(super) async fn assert_all_live(node: &Node, names: &[String]) {
    let skills = get(node, "/v1/skills").await;
    let all = skills["skills"].as_array().unwrap();
    for name in names {
        let s = all.iter().find(|s| s["name"] == name.as_str()).unwrap_or_else(|| panic!("{name} held"));
        assert_eq!(s["deprecated"], false, "{name}: {s}");
    }
}

pub(super) async fn v1_post(node: &Node, path: &str) -> (u16, Value) {
    let client = crate::util::v1_client(node, Duration::from_secs(30));
    let response = client.post(format!("{}{path}", node.url())).send().await.expect("POST");
    (response.status().as_u16(), response.json().await.expect("JSON"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_without_its_marker_tombstones_nothing_at_the_peer_and_readyz_says_why() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("kept", 3);
    let a = node_with(&fa, &skills).await;
    let marker = std::fs::read_to_string(fa.skills().join(MARKER_FILE)).expect("serve wrote the marker");
    assert!(marker.contains(a.library().store().instance_id()), "{marker}");
    let b = Node::bind(fb.config()).await.unwrap();
    pull(&b, &fb.config(), &a).await;
    assert_all_live(&b, &skills).await;

    // An empty mount point: the marker went with the files.
    std::fs::remove_file(fa.skills().join(MARKER_FILE)).unwrap();
    remove_files(&fa, &skills);
    let report = import(&a).await;
    assert!(report.tombstoned.is_empty(), "{report:?}");
    assert_eq!(report.unavailable.len(), 1, "{report:?}");
    assert!(deprecated(&a, &skills).await.is_empty());
    pull(&b, &fb.config(), &a).await;
    assert_all_live(&b, &skills).await;

    let ready = reqwest::get(format!("{}/readyz", a.url())).await.unwrap();
    assert_eq!(ready.status(), 503);
    let ready: Value = ready.json().await.unwrap();
    let reason = ready["checks"]["skills_folder"]["reason"].as_str().expect("a reason");
    assert!(reason.contains(".ecp-folder") && reason.contains("nothing is withdrawn"), "{reason}");
    crate::util::assert_no_server_path(&ready.to_string());
    let status = get(&a, "/v1/status").await;
    assert!(status["foldersUnavailable"].as_str().is_some_and(|r| r.contains(".ecp-folder")), "{status}");

    // The user says the folder is right as it is: an empty marker is adopted.
    std::fs::write(fa.skills().join(MARKER_FILE), "").unwrap();
    let report = import(&a).await;
    assert_eq!(report.tombstoned.len(), 3, "{report:?}");
    assert_eq!(reqwest::get(format!("{}/readyz", a.url())).await.unwrap().status(), 200);
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_delete_is_held_until_accepted_then_the_tombstones_reach_the_peer() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("bulk", 6);
    let a = node_with(&fa, &skills).await;
    let b = Node::bind(fb.config()).await.unwrap();
    pull(&b, &fb.config(), &a).await;
    assert_all_live(&b, &skills).await;

    let a = remove_while_down(a, &fa, &skills).await;
    let ids = held(&a).await;
    let [id] = ids[..] else { panic!("one deletion is held: {ids:?} {}", get(&a, "/v1/skills").await) };
    assert!(deprecated(&a, &skills).await.is_empty());
    pull(&b, &fb.config(), &a).await;
    // Another pass holds nothing new and still withdraws nothing.
    let again = import(&a).await;
    assert!(again.held_deletion.is_none() && again.tombstoned.is_empty(), "{again:?}");
    let status = get(&a, "/v1/status").await;
    assert_eq!(status["heldDeletions"].as_array().unwrap().len(), 1, "{status}");
    let listed = fa.run_async(&["deletions", "list", "--json"]).await;
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.json()["deletions"][0]["id"], id);
    assert_eq!(listed.json()["deletions"][0]["names"].as_array().unwrap().len(), 6);
    let text = fa.run_async(&["status"]).await;
    assert!(text.stdout.contains("held deletions:  1"), "{text:?}");
    pull(&b, &fb.config(), &a).await;
    assert_all_live(&b, &skills).await;

    // Through the running server, without an id: the only one held.
    let accepted = fa.run_async(&["deletions", "accept"]).await;
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert!(
        accepted.stdout.contains(&format!("accepted deletion {id}: 6 skill(s) tombstoned")),
        "{accepted:?}"
    );
    assert_eq!(deprecated(&a, &skills).await, skills);
    // At B they are a peer's bulk withdrawal: held too, until B's user accepts.
    let reached = pull(&b, &fb.config(), &a).await;
    assert_eq!(reached.result.held_skills, 6, "{reached:?}");
    let [at_b] = held(&b).await[..] else { panic!("B holds A's withdrawals") };
    let (status, answer) = v1_post(&b, &format!("/v1/deletions/{at_b}/accept")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(deprecated(&b, &skills).await, skills);
    let (status, error) = v1_post(&a, &format!("/v1/deletions/{id}/accept")).await;
    assert_eq!((status, error["code"].as_str()), (404, Some("no_such_deletion")), "{error}");
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_bulk_delete_rejected_writes_the_files_back_and_keeps_the_skills() {
    let f = Folders::new();
    let skills = names("back", 7);
    let a = node_with(&f, &skills).await;
    let before: Vec<String> = skills
        .iter()
        .map(|n| std::fs::read_to_string(f.skills().join(n).join("SKILL.md")).unwrap())
        .collect();
    let a = remove_while_down(a, &f, &skills).await;
    let ids = held(&a).await;
    let [id] = ids[..] else { panic!("one deletion is held: {ids:?} {}", get(&a, "/v1/skills").await) };
    let (status, answer) = v1_post(&a, &format!("/v1/deletions/{id}/reject")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["restored"].as_array().unwrap().len(), 7, "{answer}");
    for (name, text) in skills.iter().zip(&before) {
        assert_eq!(&std::fs::read_to_string(f.skills().join(name).join("SKILL.md")).unwrap(), text);
    }
    let report = import(&a).await;
    assert!(report.tombstoned.is_empty() && report.imported.is_empty(), "{report:?}");
    assert!(report.held_deletion.is_none(), "{report:?}");
    assert_all_live(&a, &skills).await;
    assert!(get(&a, "/v1/deletions").await["deletions"].as_array().unwrap().is_empty());
    a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn exactly_max_bulk_delete_goes_out_and_one_more_is_held() {
    // At the limit: 5 of 6 gone (over half, but not over 5).
    let f = Folders::new();
    let skills = names("at", 6);
    let a = node_with(&f, &skills).await;
    let a = remove_while_down(a, &f, &skills[..5]).await;
    assert_eq!(deprecated(&a, &skills).await, skills[..5]);
    assert!(held(&a).await.is_empty());
    a.shutdown().await.unwrap();

    // One past it: 6 of 6 gone.
    let f = Folders::new();
    let a = node_with(&f, &skills).await;
    let a = remove_while_down(a, &f, &skills).await;
    assert_eq!(held(&a).await.len(), 1);
    assert!(deprecated(&a, &skills).await.is_empty());
    a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn deliberate_skill_rm_is_never_held() {
    let f = Folders::new();
    let skills = names("rm", 6);
    let a = node_with(&f, &skills).await;
    for name in &skills {
        let out = f.run_async(&["skill", "rm", name]).await;
        assert_eq!(out.code, 0, "{out:?}");
    }
    let report = import(&a).await;
    assert!(report.held_deletion.is_none(), "{report:?}");
    assert_eq!(deprecated(&a, &skills).await, skills);
    assert!(get(&a, "/v1/deletions").await["deletions"].as_array().unwrap().is_empty());
    a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_node_adopts_a_folder_another_node_served() {
    let f = Folders::new();
    let skills = names("adopted", 2);
    let first = node_with(&f, &skills).await;
    let first_id = first.library().store().instance_id().to_owned();
    first.shutdown().await.unwrap();

    // A new data folder on the same skills folder.
    let other = tempfile::tempdir().unwrap();
    let mut config = Config::for_tests(other.path());
    config.skills_dir = f.skills();
    config.sharing.folders[0].path = f.skills();
    let fresh = Node::bind(config).await.expect("the fresh node starts");
    let fresh_id = fresh.library().store().instance_id().to_owned();
    assert_ne!(fresh_id, first_id);
    let listing = get(&fresh, "/ecp/skills").await;
    for name in &skills {
        let packet = super::cli::packet_named(&listing, name).unwrap_or_else(|| panic!("{name} served"));
        assert_eq!(packet["originInstance"], fresh_id.as_str());
    }
    let marker = std::fs::read_to_string(f.skills().join(MARKER_FILE)).unwrap();
    assert!(marker.contains(&fresh_id) && !marker.contains(&first_id), "{marker}");
    assert_eq!(reqwest::get(format!("{}/readyz", fresh.url())).await.unwrap().status(), 200);
    fresh.shutdown().await.unwrap();
}
