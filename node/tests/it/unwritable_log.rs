//! A node whose log cannot be written (stderr on a full disk) keeps serving
//! and shuts down cleanly: logging is never a reason to stop.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::PUSH1;

#[tokio::test(flavor = "multi_thread")]
async fn a_node_logging_to_a_full_disk_serves_merges_and_exits_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // /dev/full fails every write with ENOSPC, as a full disk does.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full exists on Linux");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(dir.path().join("data"))
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_PEERS")
        .env_remove("ECP_SECRET")
        // Everything logs: each request and merge tries to write.
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::from(full))
        .spawn()
        .expect("the binary starts");
    let data = dir.path().join("data");
    let (mut child, base) = tokio::task::spawn_blocking(move || {
        let url = crate::util::server_url(&data, &mut child);
        (child, url)
    })
    .await
    .expect("the node starts with its log on a full disk");
    let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(30)).build().unwrap();
    let started = http.get(format!("{base}/ecp/manifest")).send().await.expect("an answer");
    assert_eq!(started.status(), 200);

    let pushed =
        http.post(format!("{base}/ecp/skills")).body(PUSH1).send().await.expect("a reply to the push");
    assert_eq!(pushed.status(), 200);
    let result: serde_json::Value = pushed.json().await.expect("a MergeResult");
    assert_eq!(
        (result["newSkills"].as_u64(), result["rejectedSkills"].as_u64()),
        (Some(1), Some(3)),
        "{result}"
    );

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().expect("the node exits");
    assert_eq!(status.code(), Some(0), "SIGTERM is a clean shutdown, whatever happens to the log");
}
