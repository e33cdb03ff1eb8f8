//! The skills folder as an agent's own: the SKILL.md files the agent writes
//! there are imported as local skills (at start and on change), deleting one
//! makes a tombstone, a remote skill never replaces the agent's file, and
//! the node's own projected files are not imported back.
//!
//! Waits poll with a deadline (`eventually`); no fixed sleeps.

use std::time::Duration;

use ecp_node::Node;
use serde_json::Value;

use super::cli::{Folders, eventually, get, packet_named, post, skill_md, update_from, write_skill};

/// How long a change in the folder may take to be served: the watcher's
/// debounce plus an import, with room for a loaded test machine.
const WITHIN: Duration = Duration::from_secs(30);

/// Waits until `GET /ecp/skills` serves `name`; its packet.
async fn served(node: &Node, name: &'static str) -> Value {
    eventually(&format!("{name} is served"), WITHIN, move || async move {
        packet_named(&get(node, "/ecp/skills").await, name).cloned()
    })
    .await
}

/// The `/v1/skills` record of `name`.
async fn record(node: &Node, name: &str) -> Value {
    let list = get(node, "/v1/skills").await;
    list["skills"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().expect("skill is listed")
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_skill_written_into_the_folder_is_served_with_its_confidence() {
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("node starts");
    write_skill(&f.skills(), "agent-wrote", &skill_md("agent-wrote", "confidence: 0.7\ntags: [ops]\n"));
    let packet = served(&node, "agent-wrote").await;
    assert_eq!(packet["confidence"], 0.7);
    assert_eq!(packet["originInstance"], node.library().store().instance_id());
    assert_eq!(packet["tags"], serde_json::json!(["ops"]));
    assert_eq!(packet["skillBody"], skill_md("agent-wrote", "confidence: 0.7\ntags: [ops]\n"));
    let local = record(&node, "agent-wrote").await;
    assert_eq!(local["kind"], "local");

    // Without `confidence` in the frontmatter: 0.8.
    write_skill(&f.skills(), "plain", &skill_md("plain", ""));
    assert_eq!(served(&node, "plain").await["confidence"], 0.8);
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_skills_already_in_the_folder_are_imported_before_serving() {
    let f = Folders::new();
    write_skill(&f.skills(), "waiting", &skill_md("waiting", ""));
    let node = Node::bind(f.config()).await.expect("node starts");
    let update = get(&node, "/ecp/skills").await;
    assert!(packet_named(&update, "waiting").is_some(), "{update}");
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_agent_file_makes_a_tombstone() {
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("node starts");
    write_skill(&f.skills(), "short-lived", &skill_md("short-lived", ""));
    served(&node, "short-lived").await;
    // The import stores the skill first and then records the file as the
    // node's (its projection); deleting in between races with that write, which
    // puts the file back (see the report on Library::put_local's projection).
    let file = f.skills().join("short-lived").join("SKILL.md");
    let projection =
        ecp_node::projection::Projection::new(f.skills()).stamped_by(node.library().store().instance_id());
    eventually("the import recorded the file", WITHIN, || {
        let done = std::fs::read(&file)
            .is_ok_and(|text| projection.wrote("short-lived", &text) == ecp_node::projection::Written::Own);
        async move { done.then_some(()) }
    })
    .await;
    std::fs::remove_dir_all(f.skills().join("short-lived")).unwrap();
    let n = &node;
    eventually("the deleted skill is a tombstone", WITHIN, move || async move {
        let changes = get(n, "/ecp/skills?since=0").await;
        packet_named(&changes, "short-lived").filter(|p| p["deprecated"] == true).map(|_| ())
    })
    .await;
    assert!(packet_named(&get(&node, "/ecp/skills").await, "short-lived").is_none());
    assert_eq!(record(&node, "short-lived").await["deprecated"], true);
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_file_deleted_while_the_node_was_down_is_not_projected_back() {
    let f = Folders::new();
    write_skill(&f.skills(), "gone-offline", &skill_md("gone-offline", ""));
    let node = Node::bind(f.config()).await.expect("node starts");
    node.shutdown().await.unwrap();
    std::fs::remove_dir_all(f.skills().join("gone-offline")).unwrap();
    let node = Node::bind(f.config()).await.expect("node restarts");
    assert_eq!(record(&node, "gone-offline").await["deprecated"], true);
    assert!(!f.skills().join("gone-offline").join("SKILL.md").exists());
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn remote_skill_with_the_name_of_an_agent_file_is_a_conflict() {
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("node starts");
    let text = skill_md("mine", "confidence: 0.9\n");
    let file = write_skill(&f.skills(), "mine", &text);
    served(&node, "mine").await;

    let result = post(&node, &update_from("peer-b", &[("mine", 0.95)])).await;
    assert_eq!(
        (result["newSkills"].as_i64(), result["updatedSkills"].as_i64()),
        (Some(0), Some(0)),
        "{result}"
    );
    assert_eq!(result["rejectedSkills"], 1, "{result}");
    let conflict = result["conflicts"][0].as_str().unwrap_or_default();
    assert!(conflict.starts_with("mine:") && conflict.contains("conflict"), "{result}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "the agent's file is untouched");
    let held = record(&node, "mine").await;
    assert_eq!((held["kind"].as_str(), held["version"].as_i64()), (Some("local"), Some(1)));
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn projected_remote_skills_are_not_reimported_as_local() {
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("node starts");
    let result = post(&node, &update_from("peer-c", &[("from-afar", 0.9)])).await;
    assert_eq!(result["newSkills"], 1, "{result}");
    // The skills folder is written by a background worker after the commit.
    let projected = f.skills().join("from-afar").join("SKILL.md");
    eventually("the node projected it", WITHIN, || {
        let done = projected.is_file();
        async move { done.then_some(()) }
    })
    .await;
    // Imports scan the whole folder in order: once a file written after the
    // projection is imported, the projection has been looked at too.
    write_skill(&f.skills(), "marker", &skill_md("marker", ""));
    served(&node, "marker").await;
    let held = record(&node, "from-afar").await;
    assert_eq!((held["kind"].as_str(), held["origin"].as_str()), (Some("external"), Some("peer-c")));
    assert_eq!(held["version"], 1);
    node.shutdown().await.unwrap();
}
