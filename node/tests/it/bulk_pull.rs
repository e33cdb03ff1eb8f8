//! A bulk pull (#18 items 1–2): `ecp-node pull` of a few thousand skills,
//! over several pages, into an empty node installs every one of them — the
//! same names and integrity hashes as the source, bodies byte-identical
//! after the store's compression — and writes each to the skills folder.

use std::collections::BTreeMap;
use std::process::Command;

use ecp_node::store::{OriginLimits, Store};

use crate::util::{TestNode, packet, update};

/// Skills the source holds: enough for several pages and for the
/// projection's map of its own writes to pass its first prune (4,096 entries,
/// two per skill).
const SKILLS: usize = 3_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_of_3000_skills_over_several_pages_installs_every_one_byte_identical() {
    let off = OriginLimits { per_hour: 0, per_day: 0 };
    let source = TestNode::start_with(|c| {
        c.origin_limits = off;
        c.sender_limits = off;
        // Served at the pushed confidence, which the puller's accept threshold admits.
        c.default_trust = 1.0;
        // About 20 pages of 150 packets.
        c.page_bytes = 128 * 1024;
    })
    .await;
    let names: Vec<String> = (0..SKILLS).map(|i| format!("bulk-{i:05}")).collect();
    for chunk in names.chunks(500) {
        let packets: Vec<_> = chunk.iter().map(|n| packet(n)).collect();
        let merged = source.push_ok(&update("bulk-pusher", &packets)).await;
        assert_eq!(merged["newSkills"], chunk.len(), "{merged}");
    }
    let held = |store: &Store| -> BTreeMap<String, String> {
        store.list_skills().unwrap().into_iter().map(|r| (r.name, r.integrity_hash)).collect()
    };
    let expected = held(source.library().store());
    assert_eq!(expected.len(), SKILLS);

    let tmp = tempfile::tempdir().unwrap();
    let url = source.url("");
    let bin = env!("CARGO_BIN_EXE_ecp-node");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(bin)
            .args(["pull", url.trim_end_matches('/'), "--trust", "1", "--json", "--init", "--data", "b"])
            .current_dir(tmp.path())
            .env_clear()
            .env("ECP_ORIGIN_LIMIT_HOUR", "0")
            .env("ECP_ORIGIN_LIMIT_DAY", "0")
            .env("ECP_SENDER_LIMIT_HOUR", "0")
            .env("ECP_SENDER_LIMIT_DAY", "0")
            .output()
            .map(|out| (out, tmp))
    })
    .await
    .unwrap()
    .unwrap();
    let (out, tmp) = out;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["result"]["newSkills"], SKILLS, "{report}");
    assert_eq!(report["packets"], SKILLS, "{report}");

    // The pull has exited: its store and skills folder are complete.
    let data = tmp.path().join("b");
    let pulled = Store::open(&data).unwrap();
    assert_eq!(held(&pulled), expected, "names and integrity hashes");
    let packets = pulled.current_packets().unwrap();
    assert_eq!(packets.len(), SKILLS);
    for (p, _) in &packets {
        assert_eq!(p.skill_body, packet(&p.skill_name).skill_body, "{}", p.skill_name);
        p.verify().unwrap();
        let file = data.join("skills").join(&p.skill_name).join("SKILL.md");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!("# {}\n", p.skill_name)), "{}: {text}", file.display());
    }
}
