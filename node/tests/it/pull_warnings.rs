//! Warnings on pulled packets (#26 item 4): a packet received by pull whose
//! description is over the 1,024-character guideline (and under the hard
//! limit) is taken, and the warning is said by `ecp-node pull` on standard
//! output and in the puller's decision log, as a push's answer says it.

use std::process::Command;

use super::logs::Logged;
use crate::util::{packet, skill_md, update};

/// A packet `name` whose description is `chars` characters long.
fn described(name: &str, chars: usize) -> ecp_protocol::SkillPacket {
    let mut p = packet(name);
    p.skill_description = "d".repeat(chars);
    p.skill_body = skill_md(name, &p.skill_description);
    // Lowered by each node's trust on the way, still over the accept threshold.
    p.confidence = 1.0;
    p.reseal();
    p
}

#[test]
fn a_pulled_packet_with_a_long_description_is_taken_with_its_warning_in_the_output_and_the_log() {
    let a = Logged::start(&[], &[]);
    let skills = [described("long-one", 1_100), described("short-one", 1_024)];
    assert_eq!(a.push(&update("peer-x", &skills)), 200);
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["pull", &a.url, "--trust", "1.0", "--init", "--data", "b"])
        .current_dir(tmp.path())
        .env_clear()
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("new 2,"), "both taken: {stdout}");
    let warnings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("  warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{stdout}");
    assert!(
        warnings[0].starts_with("  warning: long-one: ")
            && warnings[0].contains("over the guideline of 1024"),
        "{stdout}"
    );
    // The decision log's line for it says the warning; the other's says none.
    let line = |name: &str| {
        stderr
            .lines()
            .find(|l| l.contains("skill accepted") && l.contains(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("long-one").contains("over the guideline of 1024"), "{stderr}");
    assert!(!line("short-one").is_empty() && !line("short-one").contains("warning"), "{stderr}");
}
