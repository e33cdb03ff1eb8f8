//! What leaves a node (#13): an agent's skills folder shared by node A,
//! with skills that must stay home — `shareable: false`, a fake AWS key, an
//! `.ecpignore` match, an unlisted skill, a private folder, `skill private`
//! — and node B, which must never see them: not in A's manifest, its full
//! listing, `?since=0`, a page, a pull or a push. A skill made private
//! after B had it reaches B as a tombstone; shared again, it comes back.
//!
//! Nodes are real, in-process, on loopback ports; the CLI is the real
//! binary. Waits poll with a deadline; no fixed sleeps.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::{Config, PeersConfig};
use ecp_node::federation::{self, Context, PeerSpec};
use ecp_node::sharing::{Folder, Mode};
use serde_json::{Value, json};

use super::cli::{Folders, ecp_node_bin, eventually, get, skill_md, write_skill};

/// How long a change in the folder may take to be served.
const WITHIN: Duration = Duration::from_secs(30);

/// Fake credentials in live-looking formats: an AWS access key id made like
/// AWS's documented `AKIAIOSFODNN7EXAMPLE` (which itself is only reported,
/// as a documented example) and a GitHub token.
const AWS_KEY_LINE: &str = "aws_access_key_id = AKIAZ7QX3NP5RT2VW4YB\n";
const DOCUMENTED_EXAMPLE_LINE: &str = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n";
const GITHUB_TOKEN_LINE: &str = "export GITHUB_TOKEN=ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R\n";

/// A SKILL.md whose body carries `line`.
fn skill_with(name: &str, extra_frontmatter: &str, line: &str) -> String {
    format!("{}\n{line}", skill_md(name, extra_frontmatter))
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

/// The names of the packets of an `ECPKnowledgeUpdate`, with `deprecated`.
fn served(update: &Value) -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = update["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|p| (p["skillName"].as_str().unwrap().to_owned(), p["deprecated"] == true))
        .collect();
    names.sort();
    names
}

fn live(names: &[&str]) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = names.iter().map(|n| ((*n).to_owned(), false)).collect();
    out.sort();
    out
}

/// Waits until `node` has noticed every change in its store (another
/// process's, such as the CLI's, reach it at its next poll).
async fn settled(node: &Node) {
    eventually("the node noticed the store's changes", WITHIN, || async {
        let library = node.library().clone();
        let stored = tokio::task::spawn_blocking(move || library.store().sequence().unwrap()).await.unwrap();
        (node.library().sequence() == stored).then_some(())
    })
    .await;
}

/// The names in `node`'s manifest, sorted.
async fn manifest_names(node: &Node) -> Vec<String> {
    let manifest = get(node, "/ecp/manifest").await;
    let mut names: Vec<String> =
        manifest["skillNames"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// Everything `node` serves a peer, checked to agree: the manifest's names,
/// the full listing, `?since=0` (live ones), and one-packet pages.
async fn every_answer(node: &Node) -> Vec<String> {
    let names = manifest_names(node).await;
    let full: Vec<String> = served(&get(node, "/ecp/skills").await).into_iter().map(|(n, _)| n).collect();
    assert_eq!(full, names, "the full listing and the manifest agree");
    let since: Vec<String> = served(&get(node, "/ecp/skills?since=0").await)
        .into_iter()
        .filter(|(_, d)| !d)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(since, names, "?since=0 and the manifest agree");
    let mut paged = Vec::new();
    let mut cursor = 0;
    loop {
        let page = get(node, &format!("/ecp/skills?since={cursor}&limit=1")).await;
        paged.extend(served(&page).into_iter().filter(|(_, d)| !d).map(|(n, _)| n));
        match page["next"].as_i64() {
            Some(next) => cursor = next,
            None => break,
        }
    }
    paged.sort();
    assert_eq!(paged, names, "pages and the manifest agree");
    names
}

/// The `/v1/skills` record of `name`.
async fn record(node: &Node, name: &str) -> Value {
    let list = get(node, "/v1/skills").await;
    list["skills"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().expect("skill is listed")
}

/// A second node, B, in its own folders.
async fn node_b() -> (Folders, Node) {
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("B starts");
    (f, node)
}

/// The federation context and peer spec `from` uses to reach `to`.
fn link(from: &Node, config: &Config, to: &Node) -> (Context, PeerSpec) {
    let file = PeersConfig::parse(&format!("[[peer]]\nurl = \"{}\"\ntrust = 0.9\n", to.url()), "test peers")
        .expect("a valid peer");
    let spec = PeerSpec::configured(&file, &file.peers[0]);
    let ctx = Context::new(from.library().clone(), config.policy.clone(), true, Duration::from_secs(5));
    (ctx, spec)
}

/// `b` pulls from `a` once.
async fn pull(b: &Node, b_config: &Config, a: &Node) -> federation::PullReport {
    let (ctx, spec) = link(b, b_config, a);
    federation::pull(&ctx, &spec).await.unwrap_or_else(|e| panic!("pull: {e}"))
}

/// The names `node` holds, with whether each is a tombstone.
async fn held(node: &Node) -> Vec<(String, bool)> {
    let list = get(node, "/v1/skills").await;
    let mut names: Vec<(String, bool)> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s["deprecated"] == true))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn private_and_secret_skills_never_leave_node_a_by_any_path() {
    let a = Folders::new();
    let skills = a.skills();
    write_skill(&skills, "open-skill", &skill_md("open-skill", ""));
    write_skill(&skills, "home-only", &skill_md("home-only", "shareable: false\n"));
    write_skill(&skills, "has-aws-key", &skill_with("has-aws-key", "", AWS_KEY_LINE));
    write_skill(&skills, "has-token", &skill_with("has-token", "", GITHUB_TOKEN_LINE));
    write_skill(&skills, "aws-howto", &skill_with("aws-howto", "", DOCUMENTED_EXAMPLE_LINE));
    let node_a = Node::bind(a.config()).await.expect("A starts");

    assert_eq!(every_answer(&node_a).await, ["aws-howto", "open-skill"]);
    // Stored and in the agent's folder as usual, marked in the local API.
    let home = record(&node_a, "home-only").await;
    assert_eq!((home["shareable"].clone(), home["private"].clone()), (json!(false), json!("frontmatter")));
    for name in ["has-aws-key", "has-token"] {
        let held = record(&node_a, name).await;
        assert_eq!(held["private"], "secret", "{held}");
        assert!(!held["privateReason"].as_str().unwrap().contains("AKIA"), "{held}");
        assert!(skills.join(name).join("SKILL.md").exists());
    }
    let status = get(&node_a, "/v1/status").await;
    assert_eq!((status["privateSkills"].clone(), status["heldForSecrets"].clone()), (json!(3), json!(2)));

    // B pulls from A and is pushed to by A: it gets the open skill only.
    let (b, node_b) = node_b().await;
    let report = pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(report.packets, 2, "{report:?}");
    let (ctx, spec) = link(&node_a, &a.config(), &node_b);
    let pushed = federation::push(&ctx, &spec).await.unwrap_or_else(|e| panic!("push: {e}"));
    let mut names = pushed.names.clone();
    names.sort();
    assert_eq!(names, ["aws-howto", "open-skill"], "{pushed:?}");
    assert_eq!(held(&node_b).await, live(&["aws-howto", "open-skill"]));
    for name in ["home-only", "has-aws-key", "has-token"] {
        assert!(!b.skills().join(name).exists(), "{name} reached B's folder");
    }
    node_b.shutdown().await.unwrap();
    node_a.shutdown().await.unwrap();
}

/// A skill of the agent's folder the scanner panics on (the debug build's
/// probe, `scan::guard`): imported and kept home — nothing says it holds no
/// secret — while the rest of the folder is shared; `skill add` warns,
/// `skill scan` counts it as not scanned and exits 2, and no answer shows
/// the panic. Before the guard the import task died on it.
#[cfg(debug_assertions)]
#[tokio::test(flavor = "multi_thread")]
async fn a_skill_the_scan_panics_on_stays_home_and_the_rest_of_the_folder_is_shared() {
    use ecp_protocol::scan::PANIC_PROBE;
    let probe_line = format!("{PANIC_PROBE}\n");
    let a = Folders::new();
    let skills = a.skills();
    write_skill(&skills, "open-skill", &skill_md("open-skill", ""));
    let probed = write_skill(&skills, "probed", &skill_with("probed", "", &probe_line));
    let node_a = Node::bind(a.config()).await.expect("A starts");

    assert_eq!(every_answer(&node_a).await, ["open-skill"]);
    let home = record(&node_a, "probed").await;
    assert_eq!(home["private"], "scan-failed", "{home}");
    let reason = home["privateReason"].as_str().unwrap();
    assert!(reason.contains("--allow-secrets") && !reason.contains("panic"), "{home}");
    assert!(skills.join("probed").join("SKILL.md").exists(), "still in the agent's folder");

    let scanned = a.run_async(&["skill", "scan", path_str(&skills)]).await;
    assert_eq!(scanned.code, 2, "{scanned:?}");
    assert!(
        scanned.stdout.contains("scanned 2 files") && scanned.stdout.contains("1 not scanned"),
        "{scanned:?}"
    );
    assert!(scanned.stderr.contains("probed/SKILL.md: the safety scan failed on it"), "{scanned:?}");
    let json = a.run_async(&["skill", "scan", "--json", path_str(&probed)]).await;
    assert_eq!(json.code, 2, "{json:?}");
    let json: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert!(json["files"][0]["error"].as_str().unwrap().contains("not judged"), "{json}");
    assert_eq!(json["files"][0]["findings"], json!([]), "{json}");
    node_a.shutdown().await.unwrap();

    // `skill add` of a copy under another name: added, with the warning, and held.
    let other = a.tmp.path().join("elsewhere");
    let copy = write_skill(&other, "probed-copy", &skill_with("probed-copy", "", &probe_line));
    let added = a.run(&["skill", "add", path_str(&copy)]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains("the safety scan failed on this skill"), "{added:?}");
    assert!(added.stdout.contains("not shared: the secret scan failed"), "{added:?}");
    assert!(!added.stdout.contains("panicked"), "{added:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_made_private_after_it_was_shared_reaches_b_as_a_tombstone_and_returns_when_shared() {
    let a = Folders::new();
    write_skill(&a.skills(), "was-shared", &skill_md("was-shared", ""));
    let node_a = Node::bind(a.config()).await.expect("A starts");
    let (b, node_b) = node_b().await;
    pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(held(&node_b).await, live(&["was-shared"]));
    let shared_body = get(&node_a, "/ecp/skills").await["skills"][0]["skillBody"].clone();

    // Made private over the local API; then the agent edits it (still private).
    let private = crate::util::v1_client(&node_a, WITHIN)
        .post(format!("{}/v1/skills/was-shared/private", node_a.url()))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(private.status(), 200);
    let answer: Value = private.json().await.unwrap();
    assert_eq!(
        (answer["shared"].clone(), answer["private"]["code"].clone()),
        (json!(false), json!("operator"))
    );
    let secret_edit = skill_with("was-shared", "", "the new private step: call extension 4711\n");
    write_skill(&a.skills(), "was-shared", &secret_edit);
    eventually("the edit is imported", WITHIN, || async {
        (record(&node_a, "was-shared").await["version"].as_i64() >= Some(3)).then_some(())
    })
    .await;
    assert_eq!(every_answer(&node_a).await, Vec::<String>::new());
    let since = get(&node_a, "/ecp/skills?since=0").await;
    assert_eq!(served(&since), [("was-shared".to_owned(), true)], "the withdrawal is served");
    assert_eq!(since["skills"][0]["skillBody"], shared_body, "the withdrawal carries what B already had");
    assert!(!since.to_string().contains("extension 4711"), "the private edit never leaves");

    let report = pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(report.result.updated_skills, 1, "{report:?}");
    assert_eq!(held(&node_b).await, [("was-shared".to_owned(), true)], "B holds a tombstone");
    // The folder is written in the background, after the round's withdrawals are settled.
    eventually("B removes it from its folder", WITHIN, || async {
        (!b.skills().join("was-shared").exists()).then_some(())
    })
    .await;
    // A still holds it, active, in the agent's folder.
    assert_eq!(held(&node_a).await, live(&["was-shared"]));
    assert_eq!(std::fs::read_to_string(a.skills().join("was-shared/SKILL.md")).unwrap(), secret_edit);

    // Shared again: served with a fresh sequence number, and B takes it back.
    let before = get(&node_a, "/v1/status").await["sequence"].as_i64().unwrap();
    let shared = ecp_node_bin(&[
        "skill",
        "share",
        "was-shared",
        "--data",
        path_str(&a.data()),
        "--skills-dir",
        path_str(&a.skills()),
    ]);
    assert_eq!(shared.code, 0, "{shared:?}");
    assert!(shared.stdout.contains("was-shared is shared"), "{shared:?}");
    eventually("A serves it again", WITHIN, || async {
        (manifest_names(&node_a).await == ["was-shared"]).then_some(())
    })
    .await;
    settled(&node_a).await;
    assert_eq!(every_answer(&node_a).await, ["was-shared"]);
    let seq = record(&node_a, "was-shared").await["seq"].as_i64().unwrap();
    assert!(seq > before, "a fresh sequence number: {seq} > {before}");
    pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(held(&node_b).await, live(&["was-shared"]), "B took it back over its tombstone");
    node_b.shutdown().await.unwrap();
    node_a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn ecpignore_keeps_matching_skills_home_and_is_followed_when_it_changes() {
    let a = Folders::new();
    let skills = a.skills();
    write_skill(&skills, "drafts-one", &skill_md("drafts-one", ""));
    write_skill(&skills, "work-notes", &skill_md("work-notes", ""));
    write_skill(&skills, "public", &skill_md("public", ""));
    std::fs::write(skills.join(".ecpignore"), "# keep these home\ndrafts-*\nwork-notes/\n").unwrap();
    let node = Node::bind(a.config()).await.expect("A starts");
    assert_eq!(every_answer(&node).await, ["public"]);
    assert_eq!(record(&node, "drafts-one").await["private"], "ecpignore");

    // The user narrows the file: work-notes is shared from the next import on.
    std::fs::write(skills.join(".ecpignore"), "drafts-*\n").unwrap();
    eventually("work-notes is shared", WITHIN, || async {
        (manifest_names(&node).await == ["public", "work-notes"]).then_some(())
    })
    .await;
    assert_eq!(every_answer(&node).await, ["public", "work-notes"]);
    node.shutdown().await.unwrap();
}

/// A node on `a`'s folders, holding `listed-one` and `other`, in listed
/// mode with only `listed-one` listed: checked to share that one alone.
async fn listed_node(a: &Folders, other: &str) -> Node {
    for name in ["listed-one", other] {
        write_skill(&a.skills(), name, &skill_md(name, ""));
    }
    let mut config = a.config();
    config.sharing.mode = Mode::Listed;
    config.sharing.listed = BTreeSet::from(["listed-one".to_owned()]);
    let node = Node::bind(config).await.expect("A starts");
    assert_eq!(every_answer(&node).await, ["listed-one"]);
    node
}

#[tokio::test(flavor = "multi_thread")]
async fn in_listed_mode_only_the_listed_skills_are_shared() {
    let a = Folders::new();
    let node = listed_node(&a, "not-listed").await;
    assert_eq!(record(&node, "not-listed").await["private"], "unlisted");
    node.shutdown().await.unwrap();
    // Back in mode shared (a restart with other settings): both are shared.
    let node = Node::bind(a.config()).await.expect("A starts again");
    assert_eq!(every_answer(&node).await, ["listed-one", "not-listed"]);
    node.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn skill_private_and_share_from_the_cli_beside_a_running_node() {
    let a = Folders::new();
    write_skill(&a.skills(), "mine", &skill_md("mine", ""));
    let node = Node::bind(a.config()).await.expect("A starts");
    assert_eq!(every_answer(&node).await, ["mine"]);

    let out = a.run_async(&["skill", "private", "mine"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("mine stays on this node"), "{out:?}");
    eventually("the server stops serving it", WITHIN, || async {
        manifest_names(&node).await.is_empty().then_some(())
    })
    .await;
    settled(&node).await;
    assert_eq!(every_answer(&node).await, Vec::<String>::new());
    let list = a.run_async(&["skill", "list"]).await;
    assert!(list.stdout.lines().any(|l| l.starts_with("mine") && l.contains("private")), "{list:?}");
    let status = a.run_async(&["status", "--json"]).await.json();
    assert_eq!(status["privateSkills"], 1);
    let show = a.run_async(&["skill", "show", "mine"]).await;
    assert!(show.stdout.contains("skill private"), "the reason is shown: {show:?}");

    let out = a.run_async(&["skill", "share", "mine"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    eventually("the server serves it again", WITHIN, || async {
        (manifest_names(&node).await == ["mine"]).then_some(())
    })
    .await;
    settled(&node).await;
    assert_eq!(every_answer(&node).await, ["mine"]);
    node.shutdown().await.unwrap();

    // Names that are not local skills are refused with a clear error.
    let missing = a.run(&["skill", "private", "nobody"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("no active skill named \"nobody\""), "{missing:?}");
}

#[test]
fn skill_share_allow_secrets_lets_this_content_go_and_an_edit_is_held_again() {
    let a = Folders::new();
    let src = a.tmp.path().join("src");
    let file = write_skill(&src, "deploy", &skill_with("deploy", "", GITHUB_TOKEN_LINE));
    let added = a.run(&["skill", "add", "--init", path_str(&file)]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains("not shared: the secret scan found"), "{added:?}");
    let list = a.run(&["skill", "list"]);
    assert!(list.stdout.lines().any(|l| l.starts_with("deploy") && l.contains("HELD: SECRET")), "{list:?}");
    let status = a.run(&["status"]);
    assert!(status.stdout.contains("held: secrets:   1"), "{status:?}");

    let scanned = a.run(&["skill", "scan", path_str(&file)]);
    assert!(scanned.stdout.contains("1 with secrets (held back from sharing)"), "{scanned:?}");
    assert!(scanned.stdout.contains(":9: medium secret."), "{scanned:?}");
    // Without the override: exit 1, and the findings name line and rule only.
    let refused = a.run(&["skill", "share", "deploy"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stdout.contains("--allow-secrets"), "{refused:?}");
    assert!(refused.stderr.contains("deploy/SKILL.md:9"), "{refused:?}");
    assert!(!format!("{refused:?}").contains("ghp_1a2B"), "the secret is never printed: {refused:?}");

    let allowed = a.run(&["skill", "share", "deploy", "--allow-secrets"]);
    assert_eq!(allowed.code, 0, "{allowed:?}");
    let status = a.run(&["status", "--json"]).json();
    assert_eq!((status["heldForSecrets"].clone(), status["skills"].clone()), (json!(0), json!(1)));

    // An edit that adds another secret is new content: held again.
    std::fs::write(&file, skill_with("deploy", "", &format!("{GITHUB_TOKEN_LINE}{AWS_KEY_LINE}"))).unwrap();
    assert_eq!(a.run(&["skill", "add", path_str(&file)]).code, 0);
    let status = a.run(&["status", "--json"]).json();
    assert_eq!((status["heldForSecrets"].clone(), status["skills"].clone()), (json!(1), json!(0)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_personal_folder_is_shared_while_a_project_folder_stays_private() {
    let a = Folders::new();
    let (personal, project) = (a.tmp.path().join("personal"), a.tmp.path().join("project"));
    write_skill(&personal, "personal-skill", &skill_md("personal-skill", ""));
    write_skill(&project, "project-skill", &skill_md("project-skill", ""));
    let mut config = a.config();
    config.sharing.folders =
        vec![Folder { path: project.clone(), share: false }, Folder { path: personal.clone(), share: true }];
    config.skills_dir = personal.clone();
    let node_a = Node::bind(config.clone()).await.expect("A starts");
    assert_eq!(every_answer(&node_a).await, ["personal-skill"]);
    let project_record = record(&node_a, "project-skill").await;
    assert_eq!(
        (project_record["kind"].clone(), project_record["private"].clone()),
        (json!("local"), json!("folder"))
    );
    let reason = project_record["privateReason"].as_str().unwrap();
    assert!(!reason.contains(path_str(&project)), "no path in an API answer: {reason}");

    // What A receives goes into the first shared folder, never the project's.
    let (b, node_b) = node_b().await;
    write_skill(&b.skills(), "from-b", &skill_md("from-b", ""));
    eventually("B serves its skill", WITHIN, || async {
        (manifest_names(&node_b).await == ["from-b"]).then_some(())
    })
    .await;
    pull(&node_a, &config, &node_b).await;
    eventually("A projects it", WITHIN, || async { personal.join("from-b/SKILL.md").exists().then_some(()) })
        .await;
    assert!(!project.join("from-b").exists());
    // The project skill is not copied into the personal folder either.
    assert!(!personal.join("project-skill").exists());
    node_b.shutdown().await.unwrap();
    node_a.shutdown().await.unwrap();
}

#[test]
fn two_folders_holding_the_same_skill_name_stop_the_server_naming_both_paths() {
    let a = Folders::new();
    let (one, two) = (a.tmp.path().join("one"), a.tmp.path().join("two"));
    write_skill(&one, "twice", &skill_md("twice", ""));
    write_skill(&two, "twice", &skill_md("twice", "tags: [other]\n"));
    // Spawned with a deadline: a server that starts anyway must fail the test, not hang it.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data", path_str(&a.data())])
        .args(["--skills-dir", path_str(&one), "--skills-dir", path_str(&two)])
        .env_remove("ECP_DATA")
        .env_remove("ECP_SKILLS_DIR")
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let deadline = std::time::Instant::now() + WITHIN;
    while child.try_wait().expect("the child can be waited for").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve started although two folders hold the same skill");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("its output");
    let out = super::cli::Out {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert_eq!(out.code, 2, "{out:?}");
    for file in [one.join("twice/SKILL.md"), two.join("twice/SKILL.md")] {
        assert!(out.stderr.contains(path_str(&file)), "names {}: {out:?}", file.display());
    }
    assert!(out.stderr.contains("rename or remove one"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_api_refuses_bad_sharing_requests_with_clear_errors() {
    let a = Folders::new();
    write_skill(&a.skills(), "mine", &skill_md("mine", ""));
    let node = Node::bind(a.config()).await.expect("A starts");
    let client = crate::util::v1_client(&node, WITHIN);
    let post = |path: &str, content_type: Option<&str>, body: &str| {
        let mut request = client.post(format!("{}{path}", node.url())).body(body.to_owned());
        if let Some(ct) = content_type {
            request = request.header("content-type", ct);
        }
        request.send()
    };
    let cases: [(&str, Option<&str>, &str, u16, &str); 4] = [
        ("/v1/skills/mine/share", Some("text/plain"), "", 415, "json_required"),
        ("/v1/skills/mine/share", Some("application/json"), "{\"allowSecret\": true}", 400, "invalid_json"),
        ("/v1/skills/nobody/private", Some("application/json"), "", 404, "no_such_skill"),
        ("/v1/skills/mine/private", None, "", 415, "json_required"),
    ];
    for (path, ct, body, status, code) in cases {
        let response = post(path, ct, body).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path} {body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["code"], code, "{error}");
        assert!(error["error"].as_str().is_some_and(|m| !m.is_empty()), "{error}");
    }
    assert_eq!(every_answer(&node).await, ["mine"], "nothing changed");
    let shared =
        post("/v1/skills/mine/share", Some("application/json"), "{\"allowSecrets\": false}").await.unwrap();
    assert_eq!(shared.status(), 200);
    assert_eq!(shared.json::<Value>().await.unwrap()["shared"], true);
    node.shutdown().await.unwrap();
}

#[test]
fn a_served_folder_from_node_toml_logs_each_held_secret_by_skill_line_and_rule_never_the_value() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let a = Folders::new();
    let (personal, project) = (a.tmp.path().join("personal"), a.tmp.path().join("project"));
    write_skill(&personal, "has-token", &skill_with("has-token", "", GITHUB_TOKEN_LINE));
    write_skill(&personal, "open-skill", &skill_md("open-skill", ""));
    write_skill(&project, "project-skill", &skill_md("project-skill", ""));
    let config = a.tmp.path().join("node.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\ndata = {:?}\n[[folder]]\npath = {:?}\n[[folder]]\npath = {:?}\nshare = false\n",
            path_str(&a.data()),
            path_str(&personal),
            path_str(&project)
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--no-mdns", "--config", path_str(&config)])
        .env_remove("ECP_DATA")
        .env_remove("ECP_SKILLS_DIR")
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut log = Vec::new();
    let mut url = None;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if let Some(at) = line.find("listening on http://") {
            url = line[at + "listening on ".len()..].split_whitespace().next().map(str::to_owned);
            break;
        }
        log.push(line);
    }
    let url = url.unwrap_or_else(|| panic!("the node logs its URL: {log:#?}"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let manifest: Value = runtime
        .block_on(async { reqwest::get(format!("{url}/ecp/manifest")).await.unwrap().json().await.unwrap() });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(manifest["skillNames"], json!(["open-skill"]), "{manifest}");
    let warned: Vec<&String> =
        log.iter().filter(|l| l.contains("WARN") && l.contains("secret found")).collect();
    assert_eq!(warned.len(), 1, "{log:#?}");
    for part in ["skill=has-token", "file=has-token/SKILL.md", "line=9", "rule=secret."] {
        assert!(warned[0].contains(part), "{part}: {}", warned[0]);
    }
    let all = log.join("\n");
    assert!(!all.contains("ghp_1a2B"), "the secret is never logged: {all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cli_write_beside_a_running_node_is_decided_by_the_nodes_settings() {
    let a = Folders::new();
    let node = listed_node(&a, "other").await;
    // The CLI, run without the node's node.toml, would believe every skill
    // is shared; its write goes to the running node, whose settings decide.
    let out = a.run_async(&["skill", "share", "other"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("[sharing] mode is \"listed\""), "{out:?}");
    settled(&node).await;
    assert_eq!(every_answer(&node).await, ["listed-one"], "the node's own settings decide");
    assert_eq!(record(&node, "other").await["private"], "unlisted");
    node.shutdown().await.unwrap();
}
