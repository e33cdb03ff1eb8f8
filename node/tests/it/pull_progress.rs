//! The progress of `ecp-node pull` and `sync` (#16 item 6): one plain line
//! per page on standard error off a terminal, a bar on one (run under
//! script(1) for a pty), and standard output left to the result.

use std::process::{Command, Output};

use super::cli::update_from;
use super::logs::Logged;

/// A node holding five skills of one origin; pulls of two packets a page
/// (`ECP_MAX_PACKETS=2`, the pulling node's page size) take three pages.
fn five_skills() -> Logged {
    let a = Logged::start(&[], &[]);
    let names = [("p-one", 1.0), ("p-two", 1.0), ("p-three", 1.0), ("p-four", 1.0), ("p-five", 1.0)];
    assert_eq!(a.push(&serde_json::to_vec(&update_from("busy", &names)).unwrap()), 200);
    a
}

/// Runs `ecp-node ARGS --init --data DATA` in `dir`, pages of two packets.
fn ecp_node(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(args)
        .args(["--init", "--data", "b"])
        .current_dir(dir)
        .env_clear()
        .env("ECP_MAX_PACKETS", "2")
        .output()
        .unwrap()
}

/// The packet counts of the progress lines naming `url`.
fn counts(stderr: &str, url: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter(|l| l.starts_with("pulled ") && l.contains(&format!("from {url} (page ")))
        .map(|l| l["pulled ".len()..].split(' ').next().unwrap().replace(',', "").parse().unwrap())
        .collect()
}

#[test]
fn a_pull_off_a_terminal_prints_a_line_per_page_to_stderr_and_json_to_stdout() {
    let a = five_skills();
    let tmp = tempfile::tempdir().unwrap();
    let out = ecp_node(tmp.path(), &["pull", &a.url, "--trust", "1.0", "--json"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON only");
    assert_eq!((report["packets"].as_u64(), report["result"]["newSkills"].as_u64()), (Some(5), Some(5)));
    assert_eq!(counts(&stderr, &a.url), [2, 4, 5], "{stderr}");
    assert!(stderr.contains("pulled 5 of 5 packets, ") && stderr.contains(" kB from "), "{stderr}");
    assert!(!stderr.contains('\u{1b}') && !stderr.contains("[="), "no bar off a terminal: {stderr}");
}

#[test]
fn a_sync_off_a_terminal_prints_the_pulls_progress_to_stderr_and_json_to_stdout() {
    let a = five_skills();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("peers.toml"), format!("[[peer]]\nurl = \"{}\"\ntrust = 1.0\n", a.url))
        .unwrap();
    let out = ecp_node(tmp.path(), &["sync", "--peers", "peers.toml", "--json"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let synced: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON only");
    assert_eq!(synced["peers"][0]["pull"]["packets"], 5, "{synced}");
    assert_eq!(counts(&stderr, &a.url), [2, 4, 5], "{stderr}");
}

#[test]
fn a_pull_on_a_terminal_draws_a_bar() {
    let a = five_skills();
    let tmp = tempfile::tempdir().unwrap();
    let command = format!("{} pull {} --trust 1.0 --init --data b", env!("CARGO_BIN_EXE_ecp-node"), a.url);
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(tmp.path())
        .env("ECP_MAX_PACKETS", "2")
        .env_remove("ECP_DATA")
        .output()
        .expect("script(1) runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains(&format!("pull {} [===", a.url)) && shown.contains("5/5 packets"), "{shown:?}");
    assert!(!shown.contains("pulled 5 of 5 packets"), "no plain lines on a terminal: {shown:?}");
    assert!(shown.contains("5 packets since 0"), "the result follows the bar: {shown:?}");
}
