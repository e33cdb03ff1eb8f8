//! `ecp-node skill add FOLDER` takes the whole skill folder, also through a
//! running `ecp-node serve` (#26 item 6, #13): the CLI uploads the files the
//! server lacks (`/v1/blobs/`) and then adds the skill with their listing;
//! `skill show --files` lists every file and a peer pulling from the server
//! gets them byte-identical, the executable bit kept. The `/v1/` upload
//! endpoints refuse what they must, with their reason.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::PeersConfig;
use ecp_node::federation::{self, Context, PeerSpec};
use serde_json::{Value, json};

use crate::cli::{Folders, eventually, skill_md, write_skill};
use crate::local_api::Served;

const SCRIPT: &[u8] = b"#!/usr/bin/env python3\nprint('filling the form')\n";
const REFERENCE: &[u8] = b"# Reference\n\nThe form has three fields.\n";
/// Generous: tests run in parallel on two cores.
const SOON: Duration = Duration::from_secs(30);

/// Writes the skill folder `<dir>/form-filler`: SKILL.md, `scripts/fill.py`
/// (0755) and `reference.md`.
fn write_form_filler(dir: &Path) -> std::path::PathBuf {
    write_skill(dir, "form-filler", &skill_md("form-filler", ""));
    let skill = dir.join("form-filler");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(skill.join("scripts/fill.py"), SCRIPT).unwrap();
    std::fs::set_permissions(skill.join("scripts/fill.py"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(skill.join("reference.md"), REFERENCE).unwrap();
    skill
}

fn sha(bytes: &[u8]) -> String {
    ecp_protocol::integrity::sha256_hex(bytes)
}

/// `into` pulls once from the node at `url`, as a configured peer with full trust.
async fn pull_from(into: &Node, folders: &Folders, url: &str) -> ecp_node::federation::PullReport {
    let file =
        PeersConfig::parse(&format!("[[peer]]\nurl = \"{url}\"\ntrust = 1.0\n"), "test peers").unwrap();
    let spec = PeerSpec::configured(&file, &file.peers[0]);
    let ctx = Context::new(into.library().clone(), folders.config().policy.clone(), true, SOON);
    federation::pull(&ctx, &spec).await.expect("the pull succeeds")
}

/// The file at `path` once it holds `bytes` (the projection writes in the background).
async fn projected(path: &Path, bytes: &[u8]) -> u32 {
    eventually(&format!("{} projected", path.display()), SOON, || async {
        let held = std::fs::read(path).ok().filter(|held| held == bytes)?;
        assert_eq!(held, bytes);
        Some(std::fs::metadata(path).ok()?.permissions().mode() & 0o777)
    })
    .await
}

#[test]
fn skill_add_of_a_folder_through_a_running_server_takes_every_file() {
    let a = Folders::new();
    let src = a.tmp.path().join("src");
    let folder = write_form_filler(&src);
    let served = Served::start(&a.data(), &a.skills(), &[]);

    let added = a.run(&["skill", "add", folder.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains("added      form-filler (version 1)"), "{added:?}");
    let held = served.get_with_token("/v1/skills/form-filler");
    let files = held["packet"]["files"].as_array().cloned().unwrap_or_default();
    assert_eq!(files.len(), 3, "the server holds the bundle: {held}");

    let shown = a.run(&["skill", "show", "form-filler", "--files", "--json"]).json();
    let listed: Vec<(&str, &str, &str)> = shown["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["mode"].as_str().unwrap(), f["sha256"].as_str().unwrap()))
        .collect();
    let skill_sha = sha(skill_md("form-filler", "").as_bytes());
    assert_eq!(
        listed,
        [
            ("SKILL.md", "0644", skill_sha.as_str()),
            ("reference.md", "0644", sha(REFERENCE).as_str()),
            ("scripts/fill.py", "0755", sha(SCRIPT).as_str()),
        ],
        "{shown}"
    );

    // Adding it again uploads nothing new and changes nothing.
    let again = a.run(&["skill", "add", folder.to_str().unwrap()]);
    assert!(again.stdout.contains("unchanged  form-filler"), "{again:?}");

    // A peer pulling from the server gets every file, byte for byte, the script executable.
    runtime().block_on(async {
        let b = Folders::new();
        let node_b = Node::bind(b.config()).await.expect("B starts");
        let report = pull_from(&node_b, &b, &served.url).await;
        assert_eq!(report.result.new_skills, 1, "{report:?}");
        let dir = b.skills().join("form-filler");
        assert_eq!(projected(&dir.join("scripts/fill.py"), SCRIPT).await, 0o755);
        assert_eq!(projected(&dir.join("reference.md"), REFERENCE).await & 0o111, 0);
        // SKILL.md is stamped with where it came from: its steps are there.
        let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
        assert!(text.contains("Run the steps of form-filler in order."), "{text}");
        node_b.shutdown().await.unwrap();
    });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

#[test]
fn skill_add_of_a_folder_without_a_server_takes_every_file_and_a_skill_md_alone_stays_plain() {
    let a = Folders::new();
    let src = a.tmp.path().join("src");
    let folder = write_form_filler(&src);
    let added = a.run(&["skill", "add", "--init", folder.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{added:?}");
    let shown = a.run(&["skill", "show", "form-filler", "--files", "--json"]).json();
    assert_eq!(shown["files"].as_array().unwrap().len(), 3, "{shown}");
    assert_eq!(shown["files"][2]["mode"], "0755", "{shown}");

    // The SKILL.md given alone: a new version without its companions.
    let alone = a.run(&["skill", "add", folder.join("SKILL.md").to_str().unwrap()]);
    assert!(alone.stdout.contains("added      form-filler (version 2)"), "{alone:?}");
    let shown = a.run(&["skill", "show", "form-filler", "--files", "--json"]).json();
    assert_eq!(shown["files"].as_array().unwrap().len(), 1, "{shown}");
    assert_eq!(shown["bundleDigest"], "", "{shown}");
}

#[test]
fn skill_add_through_a_server_refuses_a_folder_with_a_native_executable_and_adds_the_others() {
    let a = Folders::new();
    let src = a.tmp.path().join("src");
    write_form_filler(&src);
    write_skill(&src, "native", &skill_md("native", ""));
    let mut elf = b"\x7fELF\x02\x01\x01\0".to_vec();
    elf.resize(256, 0);
    std::fs::write(src.join("native/helper"), &elf).unwrap();
    let served = Served::start(&a.data(), &a.skills(), &[]);

    let added = a.run(&["skill", "add", src.to_str().unwrap()]);
    assert_eq!(added.code, 2, "{added:?}");
    assert!(added.stdout.contains("added      form-filler"), "{added:?}");
    assert!(added.stdout.contains("refused    ") && added.stdout.contains("native executable"), "{added:?}");
    let (status, body) = served.get("/v1/skills/native", &[("authorization", &served.bearer())]);
    assert_eq!((status, &body["code"]), (404, &json!("no_such_skill")), "{body}");
}

#[test]
fn the_v1_upload_refuses_a_wrong_digest_an_unknown_file_and_a_missing_token() {
    let a = Folders::new();
    let served = Served::start(&a.data(), &a.skills(), &[]);
    runtime().block_on(uploads(&served));
    // The uploaded file listed alone was added, the script executable.
    let shown = served.get_with_token("/v1/skills/form-filler");
    assert_eq!(shown["packet"]["files"][1]["mode"], "0755", "{shown}");
}

/// The `/v1/` upload's refusals, then an add of what was uploaded.
async fn uploads(served: &Served) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let bearer = served.bearer();
    let url = |path: &str| format!("{}{path}", served.url);

    // No token: 401, nothing kept.
    let response = client.put(url(&format!("/v1/blobs/{}", sha(SCRIPT)))).body(SCRIPT).send().await.unwrap();
    assert_eq!(response.status(), 401);
    // Bytes that are not the digest named: 400, nothing kept.
    let response = client
        .put(url(&format!("/v1/blobs/{}", sha(REFERENCE))))
        .header("authorization", &bearer)
        .body(SCRIPT)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.json::<Value>().await.unwrap()["code"], "digest_mismatch");
    let missing = |blobs: Vec<String>| {
        let (client, bearer) = (client.clone(), bearer.clone());
        let url = url("/v1/blobs/missing");
        async move {
            let response = client
                .post(url)
                .header("authorization", &bearer)
                .json(&json!({ "blobs": blobs }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()["missing"].clone()
        }
    };
    assert_eq!(missing(vec![sha(SCRIPT), sha(REFERENCE)]).await, json!([sha(SCRIPT), sha(REFERENCE)]));
    // The right bytes: 201, then 200 when sent again.
    for expected in [201, 200] {
        let response = client
            .put(url(&format!("/v1/blobs/{}", sha(SCRIPT))))
            .header("authorization", &bearer)
            .body(SCRIPT)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected);
    }
    assert_eq!(missing(vec![sha(SCRIPT), sha(REFERENCE)]).await, json!([sha(REFERENCE)]));

    // A listing naming a file never uploaded: 409 naming it; nothing added.
    let add = |files: Value| {
        let (client, bearer) = (client.clone(), bearer.clone());
        let url = url("/v1/skills");
        async move {
            let body = json!({ "text": skill_md("form-filler", ""), "files": files });
            let response =
                client.post(url).header("authorization", &bearer).json(&body).send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    };
    let entry = |path: &str, bytes: &[u8], mode: &str| json!({ "path": path, "size": bytes.len(), "mode": mode, "sha256": sha(bytes) });
    let (status, body) =
        add(json!([entry("scripts/fill.py", SCRIPT, "0755"), entry("reference.md", REFERENCE, "0644")]))
            .await;
    assert_eq!((status, &body["code"]), (409, &json!("blob_missing")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("\"reference.md\""), "{body}");
    // A path the bundle rules refuse: 422 with the rule.
    let (status, body) = add(json!([entry("../escape.py", SCRIPT, "0755")])).await;
    assert_eq!((status, &body["code"]), (422, &json!("skill_refused")), "{body}");
    assert!(body["error"].as_str().unwrap().contains(".."), "{body}");
    let response = client.get(url("/v1/skills/form-filler")).header("authorization", &bearer).send().await;
    assert_eq!(response.unwrap().status(), 404, "nothing added");
    let (status, body) = add(json!([entry("scripts/fill.py", SCRIPT, "0755")])).await;
    assert_eq!((status, &body["result"]), (200, &json!("added")), "{body}");
}
