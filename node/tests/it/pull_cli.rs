//! `ecp-node pull` by hand: a pull that held skills back over the limits
//! installed what fit and exits 0 saying how many wait and for how long;
//! the limits come from the same flags and environment as `serve`'s (#16).

use std::process::Command;

use super::cli::update_from;
use super::logs::Logged;

#[test]
fn a_pull_that_holds_skills_back_over_an_origin_limit_exits_0_saying_when_the_rest_comes() {
    let a = Logged::start(&[], &[]);
    let three =
        serde_json::to_vec(&update_from("busy", &[("one", 1.0), ("two", 1.0), ("three", 1.0)])).unwrap();
    assert_eq!(a.push(&three), 200);
    let tmp = tempfile::tempdir().unwrap();
    // The limit from the environment, as `serve` takes it.
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["pull", &a.url, "--trust", "1.0", "--init", "--data", "b"])
        .current_dir(tmp.path())
        .env_clear()
        .env("ECP_ORIGIN_LIMIT_HOUR", "2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("new 2,") && stdout.contains("held back 1, next round in "), "{stdout}");
    // And from the flag, as `serve` takes it (`sync` takes it too).
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["pull", &a.url, "--trust", "1.0", "--init", "--data", "c", "--origin-limit-hour", "1"])
        .current_dir(tmp.path())
        .env_clear()
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("new 1,") && stdout.contains("held back 2, next round in "), "{stdout}");
}
