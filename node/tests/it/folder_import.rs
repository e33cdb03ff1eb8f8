//! Real folders import whole (#26 item 4), with real nodes: a skill whose
//! frontmatter name differs from its folder and one with a description over
//! the guideline reach a peer with their warnings shown on the sender (and
//! the peer puts the first in a folder of its frontmatter name); `skill
//! list` and `status` name every skill not shared and why; a new node on a
//! fresh data folder shares every skill of a folder another node served
//! (also after the marker was lost), while a second running node on the
//! same folder is refused.

use std::time::Duration;

use ecp_node::Node;
use serde_json::Value;

use crate::cli::{Folders, eventually, get, skill_md, write_skill};
use crate::deletion_guard::pull;
use crate::local_api::Served;

const SOON: Duration = Duration::from_secs(30);

/// A SKILL.md named `name` whose description has `len` characters.
fn with_description(name: &str, len: usize) -> String {
    format!(
        "---\nname: {name}\ndescription: {}\n---\n# {name}\n\nRun the steps of {name} in order.\n",
        "d".repeat(len)
    )
}

/// The entries of `list` (`notShared` or `sharedWithWarnings`) whose `path` is `path`.
fn at<'a>(list: &'a Value, path: &str) -> Vec<&'a Value> {
    list.as_array().into_iter().flatten().filter(|e| e["path"] == path).collect()
}

fn codes(entry: &Value) -> Vec<&str> {
    entry["warnings"].as_array().into_iter().flatten().filter_map(|w| w["code"].as_str()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_renamed_skill_and_a_long_description_reach_the_peer_with_warnings_on_the_sender() {
    let a = Folders::new();
    write_skill(&a.skills(), "template", &skill_md("template-skill", ""));
    write_skill(&a.skills(), "long", &with_description("long", 1100));
    let node_a = Node::bind(a.config()).await.expect("A starts");
    let b = Folders::new();
    let node_b = Node::bind(b.config()).await.expect("B starts");
    let report = pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(report.result.new_skills, 2, "{report:?}");
    // B puts the renamed skill in a folder of its frontmatter name.
    let file = b.skills().join("template-skill").join("SKILL.md");
    let shown = eventually("B projects template-skill", SOON, || {
        let file = file.clone();
        async move { std::fs::read_to_string(file).ok() }
    })
    .await;
    assert!(shown.contains("name: template-skill"), "{shown}");
    // The worker writes the pulled skills one after the other: wait for the other one too.
    let long = b.skills().join("long").join("SKILL.md");
    eventually("B projects long", SOON, || {
        let done = long.is_file();
        async move { done.then_some(()) }
    })
    .await;
    assert!(!b.skills().join("template").exists());
    // A keeps it in the agent's folder only.
    assert!(!a.skills().join("template-skill").exists(), "A wrote no second folder");
    // The sender shows both warnings: the API, `skill list` and `status`.
    let listed = get(&node_a, "/v1/skills").await;
    let warned = &listed["sharedWithWarnings"];
    assert_eq!(codes(at(warned, "template/SKILL.md")[0]), ["name-differs-from-folder"], "{listed}");
    assert_eq!(at(warned, "template/SKILL.md")[0]["skill"], "template-skill");
    assert_eq!(codes(at(warned, "long/SKILL.md")[0]), ["long-description"], "{listed}");
    assert_eq!(listed["notShared"], Value::Array(Vec::new()));
    let list = a.run_async(&["skill", "list"]).await;
    assert_eq!(list.code, 0, "{list:?}");
    for line in [
        "shared with warnings:",
        "folder 1, template/SKILL.md (template-skill): name-differs-from-folder:",
        "folder 1, long/SKILL.md (long): long-description: skillDescription has 1100 characters",
    ] {
        assert!(list.stdout.contains(line), "{line:?} in {list:?}");
    }
    let status = a.run_async(&["status", "--json"]).await.json();
    assert_eq!(status["sharedWithWarnings"].as_array().map(Vec::len), Some(2), "{status}");
    let status = a.run_async(&["status"]).await;
    assert!(status.stdout.contains("with warnings:   2"), "{status:?}");
    node_b.shutdown().await.unwrap();
    node_a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn skill_list_and_status_name_every_skill_not_shared_and_why() {
    let f = Folders::new();
    let s = f.skills();
    write_skill(&s, "fine", &skill_md("fine", ""));
    std::fs::write(s.join(".ecpignore"), "ignored/\n").unwrap();
    write_skill(&s, "ignored", &skill_md("ignored", ""));
    write_skill(&s, "homebody", &skill_md("homebody", "shareable: false\n"));
    write_skill(&s, "keyed", &(skill_md("keyed", "") + "token = ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R\n"));
    write_skill(&s, "broken", "# no frontmatter here at all\n");
    // The hard limit (4,096 bytes) and one past it.
    write_skill(&s, "at-limit", &with_description("at-limit", 4096));
    write_skill(&s, "too-long", &with_description("too-long", 4097));
    // Two folders claim one name: the one of that name keeps it.
    write_skill(&s, "claimed", &skill_md("claimed", ""));
    write_skill(&s, "another", &skill_md("claimed", ""));
    let node = Node::bind(f.config()).await.expect("the node starts");
    let listed = get(&node, "/v1/skills").await;
    let not_shared = &listed["notShared"];
    let code_at = |path: &str| -> Vec<String> {
        at(not_shared, path).iter().map(|e| e["code"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(code_at("ignored/SKILL.md"), ["ecpignore"], "{listed}");
    assert_eq!(code_at("homebody/SKILL.md"), ["frontmatter"]);
    assert_eq!(code_at("keyed/SKILL.md"), ["secret"]);
    assert_eq!(code_at("broken/SKILL.md"), ["invalid"]);
    assert_eq!(code_at("too-long/SKILL.md"), ["over-limit"]);
    assert_eq!(code_at("another/SKILL.md"), ["collision"]);
    assert!(code_at("at-limit/SKILL.md").is_empty() && code_at("fine/SKILL.md").is_empty());
    assert!(code_at("claimed/SKILL.md").is_empty());
    assert_eq!(not_shared.as_array().map(Vec::len), Some(6), "{listed}");
    let reason = |path: &str| at(not_shared, path)[0]["reason"].as_str().unwrap().to_owned();
    assert!(reason("too-long/SKILL.md").contains("4097 bytes, over the limit of 4096"));
    assert!(reason("another/SKILL.md").contains("\"claimed\""));
    crate::util::assert_no_server_path(&listed.to_string());
    // The peer's view: only what is shared.
    let served = get(&node, "/ecp/skills").await;
    let mut names = crate::util::served_names(&served);
    names.sort();
    assert_eq!(names, ["at-limit", "claimed", "fine"]);
    // The CLI says the same, in `skill list` and `status`.
    let list = f.run_async(&["skill", "list"]).await;
    assert_eq!(list.code, 0, "{list:?}");
    for line in [
        "not shared:",
        "folder 1, ignored/SKILL.md (ignored): ecpignore:",
        "folder 1, homebody/SKILL.md (homebody): frontmatter:",
        "folder 1, keyed/SKILL.md (keyed): secret:",
        "folder 1, broken/SKILL.md (broken): invalid:",
        "folder 1, too-long/SKILL.md (too-long): over-limit:",
        "folder 1, another/SKILL.md (claimed): collision:",
    ] {
        assert!(list.stdout.contains(line), "{line:?} in {list:?}");
    }
    let json = f.run_async(&["skill", "list", "--json"]).await.json();
    assert_eq!(json["notShared"], *not_shared);
    let status = f.run_async(&["status"]).await;
    assert!(status.stdout.contains("not shared:      6"), "{status:?}");
    assert!(status.stdout.contains("folder 1, broken/SKILL.md (broken): invalid:"), "{status:?}");
    node.shutdown().await.unwrap();
    // Without a server, from the store: the same.
    let status = f.run_async(&["status", "--json"]).await.json();
    assert_eq!(status["notShared"], *not_shared);
}

/// The names `served` serves, each from `instance`.
fn served_from(served: &Served, instance: &str) -> Vec<String> {
    let (status, listing) = served.get("/ecp/skills", &[]);
    assert_eq!(status, 200);
    let mut names: Vec<String> = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["originInstance"] == instance)
        .map(|p| p["skillName"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn instance(served: &Served) -> String {
    served.get("/ecp/manifest", &[]).1["instance"].as_str().expect("an instance id").to_owned()
}

/// Waits until `served` serves every one of `names` as its own.
fn wait_for_all(served: &Served, names: &[&str]) {
    let id = instance(served);
    let deadline = std::time::Instant::now() + SOON;
    loop {
        let got = served_from(served, &id);
        if got == names {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "served {got:?}, not {names:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_new_node_on_a_folder_another_node_served_shares_every_skill_and_a_second_running_one_is_refused() {
    let f = Folders::new();
    let skills = f.skills();
    for name in ["alpha", "beta", "gamma"] {
        write_skill(&skills, name, &skill_md(name, ""));
    }
    write_skill(&skills, "template", &skill_md("template-skill", ""));
    let all = ["alpha", "beta", "gamma", "template-skill"];
    let first = Served::start(&f.tmp.path().join("data-1"), &skills, &[]);
    wait_for_all(&first, &all);
    first.stop();
    // A reinstall: a fresh data folder on the same skills folder.
    let second = Served::start(&f.tmp.path().join("data-2"), &skills, &[]);
    wait_for_all(&second, &all);
    // A second node on the folder while this one runs is refused, naming the folder by number.
    // Spawned, not run to the end: a server that is not refused would never exit.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(f.tmp.path().join("data-3"))
        .arg("--skills-dir")
        .arg(&skills)
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let deadline = std::time::Instant::now() + SOON;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a second node on the folder was not refused");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).unwrap();
    let refused = crate::cli::Out { code: status.code().unwrap_or(-1), stdout: String::new(), stderr };
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stderr.contains("skills folder 1 is served by another running ecp-node"), "{refused:?}");
    assert!(!refused.stderr.contains(skills.to_str().unwrap()), "no path: {refused:?}");
    // Its own writes (the records it made of the agent's files) are not imported again: version 1 each.
    std::thread::sleep(Duration::from_secs(1));
    let listed = second.get_with_token("/v1/skills");
    let versions: Vec<(&str, i64)> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["version"].as_i64().unwrap()))
        .collect();
    assert_eq!(versions, all.map(|n| (n, 1)), "{listed}");
    second.stop();
    // The folder lost its marker too (a copy without dot files): still every skill.
    std::fs::remove_file(skills.join(ecp_node::deletion_guard::MARKER_FILE)).unwrap();
    let third = Served::start(&f.tmp.path().join("data-4"), &skills, &[]);
    wait_for_all(&third, &all);
    assert!(!skills.join("template-skill").exists(), "no second folder for the renamed skill");
    third.stop();
}
