//! The importer reads whole skill folders (#26 item 6), with real nodes: a
//! folder with `SKILL.md`, an executable `scripts/fill.py` and
//! `reference.md` imported on A arrives at B with all three files held; an
//! edit of one file is a new version with one new blob, an unchanged folder
//! is not; hidden files stay home; `skill show --files` lists them; a symlink, a pipe or a folder over
//! `[limits] bundle_max_files` keeps the skill home with its reason.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ecp_node::Node;
use serde_json::Value;

use crate::cli::{Folders, get, skill_md, write_skill};
use crate::deletion_guard::{import, pull};

const SCRIPT: &[u8] = b"#!/usr/bin/env python3\nprint('filling the form')\n";
const REFERENCE: &[u8] = b"# Reference\n\nThe form has three fields.\n";

/// Writes `form-filler`: SKILL.md, `scripts/fill.py` (0755), `reference.md`,
/// and a `.git/` folder that is not the skill's.
fn write_form_filler(skills: &Path) {
    let dir = skills.join("form-filler");
    write_skill(skills, "form-filler", &skill_md("form-filler", ""));
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/fill.py"), SCRIPT).unwrap();
    std::fs::set_permissions(dir.join("scripts/fill.py"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("reference.md"), REFERENCE).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(dir.join(".DS_Store"), [0u8, 1, 2]).unwrap();
}

/// `node`'s packet of `name`: its files as (path, mode, sha256), and its version.
async fn listing(node: &Node, name: &str) -> (Vec<(String, String, String)>, i64) {
    let shown = get(node, &format!("/v1/skills/{name}")).await;
    let files = shown["packet"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("a bundle: {shown}"))
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap().to_owned();
            (field("path"), field("mode"), field("sha256"))
        })
        .collect();
    (files, shown["skill"]["version"].as_i64().unwrap())
}

fn sha(bytes: &[u8]) -> String {
    ecp_protocol::integrity::sha256_hex(bytes)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_folder_travels_whole_and_an_edit_of_one_file_is_a_new_version() {
    let a = Folders::new();
    write_form_filler(&a.skills());
    let node_a = Node::bind(a.config()).await.expect("A starts");
    let (files, version) = listing(&node_a, "form-filler").await;
    let paths: Vec<_> = files.iter().map(|(p, m, _)| (p.as_str(), m.as_str())).collect();
    assert_eq!(paths, [("SKILL.md", "0644"), ("reference.md", "0644"), ("scripts/fill.py", "0755")]);
    assert_eq!(files[2].2, sha(SCRIPT));
    // Unchanged on a second pass: no new version.
    let report = import(&node_a).await;
    assert!(report.imported.is_empty(), "{report:?}");
    assert_eq!(listing(&node_a, "form-filler").await.1, version);

    let b = Folders::new();
    let node_b = Node::bind(b.config()).await.expect("B starts");
    let report = pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(report.result.new_skills, 1, "{report:?}");
    let (held, _) = listing(&node_b, "form-filler").await;
    assert_eq!(held, files, "B holds the listing A sent");
    let blobs = node_b.library().store().blob_files();
    assert_eq!(blobs.read(&sha(SCRIPT)).unwrap(), SCRIPT);
    assert_eq!(blobs.read(&sha(REFERENCE)).unwrap(), REFERENCE);

    // An edit of reference.md alone: a new version whose one new file B fetches.
    let edited = b"# Reference\n\nThe form has four fields.\n";
    std::fs::write(a.skills().join("form-filler/reference.md"), edited).unwrap();
    let report = import(&node_a).await;
    assert_eq!(report.imported, ["form-filler"], "{report:?}");
    let (after, new_version) = listing(&node_a, "form-filler").await;
    assert!(new_version > version);
    let changed: Vec<_> = after.iter().filter(|f| !files.contains(f)).map(|f| f.0.as_str()).collect();
    assert_eq!(changed, ["reference.md"]);
    let before = node_b.library().store().blob_usage().unwrap();
    let report = pull(&node_b, &b.config(), &node_a).await;
    assert_eq!(report.result.updated_skills, 1, "{report:?}");
    assert_eq!(listing(&node_b, "form-filler").await.0, after);
    assert_eq!(node_b.library().store().blob_files().read(&sha(edited)).unwrap(), edited);
    let grown = node_b.library().store().blob_usage().unwrap();
    assert_eq!(grown.bytes - before.bytes, edited.len() as u64, "one new blob: {before:?} -> {grown:?}");
    node_b.shutdown().await.unwrap();
    node_a.shutdown().await.unwrap();
    // `skill show --files`: one line per file, and the same as JSON.
    let shown = a.run_async(&["skill", "show", "form-filler", "--files"]).await;
    assert_eq!(shown.code, 0, "{shown:?}");
    let script = format!("scripts/fill.py  0755  {}    {}", SCRIPT.len(), sha(SCRIPT));
    assert!(shown.stdout.contains(&script), "{script:?} in {shown:?}");
    assert!(shown.stdout.starts_with("PATH"), "{shown:?}");
    assert_eq!(shown.stdout.lines().count(), 4, "{shown:?}");
    let json = a.run_async(&["skill", "show", "form-filler", "--files", "--json"]).await.json();
    let listed: Vec<_> =
        json["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(listed, ["SKILL.md", "reference.md", "scripts/fill.py"], "{json}");
    assert_eq!(json["files"][2]["size"], SCRIPT.len());
}

/// The `notShared` entry of `path` in `listed`: its code and reason.
fn not_shared(listed: &Value, path: &str) -> (String, String) {
    let entry = listed["notShared"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["path"] == path)
        .unwrap_or_else(|| panic!("{path} is not shared: {listed}"));
    (entry["code"].as_str().unwrap().to_owned(), entry["reason"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_a_pipe_or_too_many_files_keep_the_skill_home_with_its_reason() {
    let f = Folders::new();
    let s = f.skills();
    // At the limit of 3 files (SKILL.md and two), and one past it.
    write_skill(&s, "at-limit", &skill_md("at-limit", ""));
    std::fs::write(s.join("at-limit/one.md"), "1\n").unwrap();
    std::fs::write(s.join("at-limit/two.md"), "2\n").unwrap();
    write_skill(&s, "crowded", &skill_md("crowded", ""));
    for n in ["one", "two", "three"] {
        std::fs::write(s.join(format!("crowded/{n}.md")), "x\n").unwrap();
    }
    write_skill(&s, "linked", &skill_md("linked", ""));
    std::fs::create_dir_all(s.join("linked/notes")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", s.join("linked/notes/host.txt")).unwrap();
    write_skill(&s, "piped", &skill_md("piped", ""));
    let fifo = s.join("piped/queue");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let mut config = f.config();
    config.policy.bundle.max_files = 3;
    let node = Node::bind(config).await.expect("the node starts");
    let listed = get(&node, "/v1/skills").await;
    let (code, reason) = not_shared(&listed, "crowded/SKILL.md");
    assert_eq!(code, "bundle");
    assert!(reason.contains("files lists 4 files, over the limit of 3"), "{reason}");
    assert!(reason.contains("bundle_max_files"), "{reason}");
    let (code, reason) = not_shared(&listed, "linked/SKILL.md");
    assert_eq!(code, "symlink");
    assert!(reason.contains("\"notes/host.txt\" is a symlink"), "{reason}");
    let (code, reason) = not_shared(&listed, "piped/SKILL.md");
    assert_eq!(code, "not-a-file");
    assert!(reason.contains("\"queue\""), "{reason}");
    assert_eq!(listed["notShared"].as_array().map(Vec::len), Some(3), "{listed}");
    crate::util::assert_no_server_path(&listed.to_string());
    let served = get(&node, "/ecp/skills").await;
    assert_eq!(crate::util::served_names(&served), ["at-limit"]);
    assert_eq!(listing(&node, "at-limit").await.0.len(), 3);
    let list = f.run_async(&["skill", "list"]).await;
    assert!(list.stdout.contains("folder 1, linked/SKILL.md (linked): symlink:"), "{list:?}");
    assert!(list.stdout.contains("folder 1, crowded/SKILL.md (crowded): bundle:"), "{list:?}");
    node.shutdown().await.unwrap();
}
