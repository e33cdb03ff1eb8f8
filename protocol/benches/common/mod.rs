//! What the benches share: the realistic skill bodies and update of the
//! merge bench, and the scan corpus.
// Each bench uses a part of this module.
#![allow(dead_code)]

#[path = "../../tests/it/generated_bundle.rs"]
pub(crate) mod generated_bundle;

use std::fs;
use std::path::Path;

use ecp_protocol::packet::Origin;
use ecp_protocol::{KnowledgeUpdate, SkillPacket, Timestamp};

/// Packets in the update of [`update_json`].
pub(crate) const PACKETS: usize = 10_000;

const TOOLS: &[&str] = &["git", "cargo", "npm", "docker", "kubectl", "psql", "make", "pytest"];
const TOPICS: &[&str] = &["flaky tests", "slow builds", "memory leaks", "merge conflicts", "schema drift"];

/// A realistic skill body of about 1.5 KB, different for every `i`.
pub(crate) fn skill_body(i: usize) -> String {
    let name = format!("skill-{i:05}");
    let tool = TOOLS[i % TOOLS.len()];
    let topic = TOPICS[i % TOPICS.len()];
    let mut text = format!(
        "---\nname: {name}\ndescription: Diagnose {topic} with {tool}, step {i}\ntags: [debugging, {tool}]\n---\n\
         # {name}\n\n## When to Use\nUse this when a teammate reports {topic} and the usual quick checks did not \
         explain it. It assumes a clean checkout and a working `{tool}` on the PATH.\n\n## Steps\n"
    );
    for step in 1..=5 {
        text.push_str(&format!(
            "{step}. Run `{tool}` with verbose output for case {i}.{step}, save the log under ./logs/{name}-{step}.txt \
             and compare it with the previous run; note every difference in timing or ordering.\n"
        ));
    }
    text.push_str(
        "\n## Verification\nThe problem reproduces before the fix and no longer after it; the logs of both runs \
         are attached to the ticket together with the exact commands that were used.\n",
    );
    text
}

/// A 10,000-packet update of [`skill_body`]s, as JSON.
pub(crate) fn update_json() -> Vec<u8> {
    let origin = Origin::new("bench-origin", "bench-user", "linux/amd64", "1.0.0");
    let created = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
    let skills: Vec<SkillPacket> = (0..PACKETS)
        .map(|i| {
            SkillPacket::new(
                &origin,
                &format!("skill-{i:05}"),
                "Diagnose a problem",
                &skill_body(i),
                0.9,
                created,
            )
            .with_tags(["debugging"])
            .with_patterns(["workflow:debug:bisect"])
        })
        .collect();
    let update = KnowledgeUpdate {
        id: "bench".into(),
        peer_instance: "bench-origin".into(),
        skills,
        ..Default::default()
    };
    serde_json::to_vec(&update).unwrap()
}

/// The update of [`update_json`] with every packet a bundle of three files
/// (`SKILL.md`, a 2 KB script, a 2.5 KB reference: about 6 KB a bundle,
/// issue #26's benchmark), as JSON. The files' bytes are blobs, not part of
/// the update: the packet carries their listing.
pub(crate) fn bundle_update_json() -> Vec<u8> {
    let limits = ecp_protocol::bundle::BundleLimits::default();
    let mut update: KnowledgeUpdate = serde_json::from_slice(&update_json()).unwrap();
    for (i, packet) in update.skills.iter_mut().enumerate() {
        let script = format!("#!/bin/sh\n# step {i}\n{}", "echo checking the build cache again\n".repeat(55));
        let reference =
            format!("# Reference {i}\n\n{}", "One line of background for the playbook.\n".repeat(60));
        let companions =
            [("scripts/check.sh", script.as_bytes(), true), ("reference.md", reference.as_bytes(), false)];
        let manifest =
            ecp_protocol::bundle::BundleManifest::for_skill(&packet.skill_body, companions, &limits).unwrap();
        *packet = std::mem::take(packet).with_bundle(&manifest).unwrap();
    }
    serde_json::to_vec(&update).unwrap()
}

/// Every `.md` file of `testdata/scan-corpus/<kind>` and its class folders,
/// in path order, joined.
pub(crate) fn corpus(kind: &str) -> String {
    fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in fs::read_dir(dir).expect("corpus directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus").join(kind);
    let mut paths = Vec::new();
    collect(&dir, &mut paths);
    paths.sort();
    paths.iter().map(|p| fs::read_to_string(p).expect("corpus file")).collect::<Vec<_>>().join("\n")
}
