//! Permission-bearing frontmatter of received skills (#23 item 1), between
//! real nodes: `allowed-tools`, `hooks` and a configured key are removed
//! from the file B writes (recorded in the audit, `skill show` and
//! `/v1/skills/{name}`) while B stores and re-serves the body as A sent it
//! and does not take its own file for an edit; kept under
//! `keep-from-trusted` from a trusted origin only; quarantined under `refuse`.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::Config;
use ecp_node::federation::{self, Context, PeerSpec};
use ecp_node::permissions::ReceivedPermissions;
use ecp_protocol::SkillPacket;
use ecp_protocol::packet::Origin;
use serde_json::Value;

use crate::cli::{Folders, eventually, get};

const SOON: Duration = Duration::from_secs(30);

/// A skill granting Bash and Write, with a hook and a `model`.
fn granting(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Deploys the site\nallowed-tools: Bash, Write\nhooks:\n  PreToolUse:\n    \
         - matcher: Bash\n      hooks:\n        - type: command\n          command: ./scripts/check.sh\n\
         model: opus\nlicense: MIT\n---\n# {name}\n\nRun the deploy script.\n"
    )
}

async fn put_local(node: &Node, text: &str) {
    crate::util::put_local_text(node.library(), text).await;
}

/// A pushes everything it holds to B.
async fn push_all(a: &Node, b: &Node) {
    let ctx =
        Context::new(a.library().clone(), Config::for_tests(std::path::Path::new(".")).policy, true, SOON);
    federation::push(&ctx, &PeerSpec::manual(&b.url(), None, 1.0)).await.expect("pushed");
}

fn file(f: &Folders, name: &str) -> Option<String> {
    std::fs::read_to_string(f.skills().join(name).join("SKILL.md")).ok()
}

/// The packet of `name` in a node's `/ecp/skills`.
async fn served(node: &Node, name: &str) -> Value {
    let all = get(node, "/ecp/skills").await;
    all["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .find(|p| p["skillName"] == name)
        .cloned()
        .expect("served")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grants_are_removed_from_the_file_only_and_the_file_is_not_an_edit() {
    let a_dir = tempfile::tempdir().expect("a temporary folder");
    let a = Node::bind(Config::for_tests(a_dir.path())).await.expect("A starts");
    put_local(&a, &granting("deploy")).await;
    let f = Folders::new();
    let mut config = f.config();
    config.permissions.extra_keys = vec!["model".into()];
    let b = Node::bind(config).await.expect("B starts");
    push_all(&a, &b).await;
    let shown = eventually("the skill is in B's folder", SOON, || async { file(&f, "deploy") }).await;
    for gone in ["allowed-tools", "hooks", "PreToolUse", "check.sh", "model:"] {
        assert!(!shown.contains(gone), "{gone} removed: {shown}");
    }
    for kept in [
        "name: deploy\n",
        "description: Deploys the site\n",
        "license: MIT\n",
        "ecp-origin",
        "Run the deploy",
    ] {
        assert!(shown.contains(kept), "{kept} kept: {shown}");
    }
    // Stored and re-served exactly as A sent it.
    let (from_a, from_b) = (served(&a, "deploy").await, served(&b, "deploy").await);
    assert_eq!(from_b["skillBody"], from_a["skillBody"]);
    assert_eq!(from_b["integrityHash"], from_a["integrityHash"]);
    assert!(from_b["skillBody"].as_str().expect("a body").contains("allowed-tools: Bash, Write"));
    // Every removal is recorded.
    let origin = a.library().store().instance_id().to_owned();
    let api = get(&b, "/v1/skills/deploy").await;
    let removed: Vec<String> = serde_json::from_value(api["removedPermissions"].clone()).expect("a list");
    assert_eq!(
        removed,
        [
            format!("allowed-tools: Bash, Write removed — received from {origin}"),
            format!("hooks: PreToolUse removed — received from {origin}"),
            format!("model: opus removed — received from {origin}"),
        ]
    );
    let audit = get(&b, "/v1/audit?limit=100").await;
    let audited = audit["audit"].as_array().expect("audit").iter().any(|e| {
        e["skillName"] == "deploy"
            && e["decision"] == "permissions-removed"
            && e["reason"].as_str().is_some_and(|r| r.contains("allowed-tools: Bash, Write removed"))
    });
    assert!(audited, "{audit}");
    let show = f.run_async(&["skill", "show", "deploy"]).await;
    assert_eq!(show.code, 0, "{show:?}");
    assert!(
        show.stdout.contains(&format!("allowed-tools: Bash, Write removed — received from {origin}")),
        "{show:?}"
    );
    assert!(show.stdout.contains("(1 hop; origin confidence"), "one hop, in the singular: {show:?}");
    // B's importer knows the file as B's own: no new version after the rescans settle
    // (and past the window in which the watcher takes file events for the node's own writes).
    let seq = get(&b, "/v1/status").await["sequence"].clone();
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    assert_eq!(f.run_async(&["skill", "list"]).await.code, 0);
    assert_eq!(get(&b, "/v1/status").await["sequence"], seq, "the stripped file is not an edit");
    assert_eq!(get(&b, "/v1/skills/deploy").await["skill"]["kind"], "external");
    // The agent's own edit still is one: its derived version (#20).
    std::fs::write(f.skills().join("deploy").join("SKILL.md"), format!("{shown}\nAlso check the logs.\n"))
        .expect("the agent writes");
    let edit = eventually("the agent's edit is kept as a derived version", SOON, || async {
        b.library()
            .store()
            .derived("deploy")
            .unwrap()
            .filter(|d| d.state == "active")
            .map(|d| d.packet.skill_body)
    })
    .await;
    assert!(edit.contains("Also check the logs.") && !edit.contains("ecp-origin"), "{edit}");
    assert_eq!(get(&b, "/v1/skills/deploy").await["skill"]["kind"], "external");
    b.shutdown().await.expect("clean shutdown");
    a.shutdown().await.expect("clean shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keep_from_trusted_keeps_the_grants_of_a_trusted_origin_only() {
    let a_dir = tempfile::tempdir().expect("a temporary folder");
    let a = Node::bind(Config::for_tests(a_dir.path())).await.expect("A starts");
    put_local(&a, &granting("deploy")).await;
    let f = Folders::new();
    let peers = f.tmp.path().join("peers.toml");
    std::fs::write(&peers, format!("[[peer]]\nurl = \"{}\"\ntrust = 0.9\ninterval = \"1h\"\n", a.url()))
        .expect("peers file");
    let mut config = f.config();
    config.permissions.mode = ReceivedPermissions::KeepFromTrusted;
    config.peers_file = Some(peers);
    let b = Node::bind(config).await.expect("B starts");
    // From A (trust 0.9, at the default permissions_trust): kept.
    let shown = eventually("A's skill is in B's folder", SOON, || async { file(&f, "deploy") }).await;
    assert!(shown.contains("allowed-tools: Bash, Write\n") && shown.contains("hooks:\n"), "{shown}");
    assert_eq!(get(&b, "/v1/skills/deploy").await["removedPermissions"], serde_json::json!([]));
    // A stranger's skill, even relayed by A, is stripped: the origin's trust counts.
    let stranger = Origin::new("stranger", "someone", "linux/amd64", "1.0");
    let relayed =
        SkillPacket::new(&stranger, "lint", "From a peer", &granting("lint"), 0.9, ecp_node::store::now());
    let (library, packet) = (a.library().clone(), relayed);
    tokio::task::spawn_blocking(move || {
        let update = ecp_protocol::KnowledgeUpdate { skills: vec![packet], ..Default::default() };
        let sender = ecp_node::intake::Sender {
            instance: "stranger".into(),
            account: "peer:http://127.0.0.1:9".into(),
            trust: 1.0,
            reshare: true,
            kind: ecp_protocol::merge::SenderKind::Current,
        };
        library.merge(update, &sender, &Config::for_tests(std::path::Path::new(".")).policy).expect("merged")
    })
    .await
    .expect("no panic");
    push_all(&a, &b).await;
    let lint = eventually("the relayed skill is in B's folder", SOON, || async { file(&f, "lint") }).await;
    assert!(!lint.contains("allowed-tools") && !lint.contains("hooks"), "{lint}");
    b.shutdown().await.expect("clean shutdown");
    a.shutdown().await.expect("clean shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refuse_quarantines_skills_with_grants_at_intake() {
    let a_dir = tempfile::tempdir().expect("a temporary folder");
    let a = Node::bind(Config::for_tests(a_dir.path())).await.expect("A starts");
    put_local(&a, &granting("deploy")).await;
    put_local(
        &a,
        "---\nname: plain\ndescription: Harmless\n---\n# plain\n\nRead the project docs before any change.\n",
    )
    .await;
    let f = Folders::new();
    let mut config = f.config();
    config.permissions.mode = ReceivedPermissions::Refuse;
    let b = Node::bind(config).await.expect("B starts");
    push_all(&a, &b).await;
    eventually("the harmless skill is in B's folder", SOON, || async { file(&f, "plain") }).await;
    assert_eq!(file(&f, "deploy"), None, "not in the folder");
    let held = get(&b, "/v1/quarantine").await;
    let entry = held["quarantine"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["skillName"] == "deploy")
        .cloned()
        .unwrap_or_else(|| panic!("deploy quarantined: {held}"));
    let text = entry.to_string();
    assert!(text.contains("policy") && text.contains("received_permissions"), "{text}");
    b.shutdown().await.expect("clean shutdown");
    a.shutdown().await.expect("clean shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_skill_accepted_from_the_inbox_is_written_without_its_grants_and_the_removal_audited() {
    let a_dir = tempfile::tempdir().expect("a temporary folder");
    let a = Node::bind(Config::for_tests(a_dir.path())).await.expect("A starts");
    put_local(&a, &granting("deploy")).await;
    let f = Folders::new();
    let mut config = f.config();
    config.intake = ecp_node::intake::IntakeMode::Review;
    let b = Node::bind(config).await.expect("B starts");
    push_all(&a, &b).await;
    let audited = || async {
        let audit = get(&b, "/v1/audit?limit=100").await;
        audit["audit"].as_array().expect("audit").iter().any(|e| e["decision"] == "permissions-removed")
    };
    let waiting = get(&b, "/v1/inbox").await;
    let id = waiting["inbox"][0]["id"].as_i64().unwrap_or_else(|| panic!("an inbox entry: {waiting}"));
    assert!(!audited().await, "nothing written, nothing removed yet");
    let http = crate::util::v1_client(&b, SOON);
    let r = http.post(format!("{}/v1/inbox/{id}/accept", b.url())).send().await.expect("POST");
    assert_eq!(r.status(), 200);
    let shown =
        eventually("the accepted skill is in B's folder", SOON, || async { file(&f, "deploy") }).await;
    assert!(!shown.contains("allowed-tools") && !shown.contains("hooks"), "{shown}");
    assert!(audited().await, "the removal is audited");
    b.shutdown().await.expect("clean shutdown");
    a.shutdown().await.expect("clean shutdown");
}
