//! A bundle whose files are not all held is never projected (#26 items 1,
//! 6): pulled from a real peer that answers 404 for one of its blobs, it
//! stays pending in the quarantine with its reason and no folder of it
//! reaches the skills folder, while the peer's other skills arrive; once the
//! peer serves the blob, the next round fetches it — though the cursor
//! has moved past the packet and the peer's manifest has not changed — and
//! the bundle is installed and projected whole.

use std::time::Duration;

use serde_json::Value;

use crate::bundles::{pull, put_form_filler};
use crate::cli::eventually;
use crate::util::{TestNode, local_skill_text};

const SCRIPT: &[u8] = b"#!/usr/bin/env python3\nprint('filling the form')\n";
const REFERENCE: &[u8] = b"# Reference\n\nThe form has three fields.\n";
/// Generous: tests run in parallel on two cores.
const SOON: Duration = Duration::from_secs(30);

fn sha(bytes: &[u8]) -> String {
    ecp_protocol::integrity::sha256_hex(bytes)
}

/// The held quarantine entries of `node` for `name`.
async fn held(node: &TestNode, name: &str) -> Vec<Value> {
    let listed = node.get_json("/v1/quarantine").await;
    listed["quarantine"].as_array().unwrap().iter().filter(|e| e["skillName"] == name).cloned().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bundle_whose_blob_the_peer_answers_404_for_stays_pending_unprojected_and_is_fetched_later() {
    let peer = TestNode::start().await;
    put_form_filler(&peer, SCRIPT, REFERENCE).await;
    let plain = local_skill_text("plain-one", 0.9);
    let library = peer.library().clone();
    tokio::task::spawn_blocking(move || {
        let origin = ecp_node::import::local_origin(library.store().instance_id());
        let limits = ecp_protocol::skill_doc::StructureLimits::default();
        let (packet, _) =
            ecp_node::import::local_packet(&plain, None, &origin, &limits, ecp_node::store::now()).unwrap();
        library.put_local(&packet, ecp_node::store::Source::Operator).unwrap();
    })
    .await
    .unwrap();
    // The peer lists the script but has lost its file: it answers 404 for it.
    let script_file = peer.library().store().blob_files().path(&sha(SCRIPT));
    std::fs::remove_file(&script_file).unwrap();
    let answer = peer.client().get(peer.url(&format!("/ecp/blobs/{}", sha(SCRIPT)))).send().await.unwrap();
    assert_eq!(answer.status(), 404);

    let node = TestNode::start().await;
    let report = pull(&node, &peer).await;
    assert_eq!((report.result.new_skills, report.blobs_fetched), (1, 1), "{report:?}");
    let conflict = report.result.conflicts.join("; ");
    assert!(
        conflict.contains("form-filler: pending: 1 of 3 files not held yet (first: scripts/fill.py)"),
        "{report:?}"
    );
    // Pending, with its reason, in the quarantine; not a skill the node holds.
    let entries = held(&node, "form-filler").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["stage"], "bundle");
    assert!(entries[0]["reason"].as_str().unwrap().starts_with("pending: 1 of 3"), "{entries:?}");
    let shown = node.client().get(node.url("/v1/skills/form-filler")).send().await.unwrap();
    assert_eq!(shown.status(), 404);
    // The projection has written the plain skill that came with it, and
    // nothing of the bundle: no folder, no temporary sibling.
    let skills = node.config().skills_dir.clone();
    eventually("plain-one projected", SOON, || async {
        skills.join("plain-one/SKILL.md").is_file().then_some(())
    })
    .await;
    let names: Vec<String> = std::fs::read_dir(&skills)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("form-filler"))
        .collect();
    assert!(names.is_empty(), "nothing of the pending bundle in the skills folder: {names:?}");

    // A round while the peer still answers 404: still pending, the cursor where it was.
    let again = pull(&node, &peer).await;
    assert_eq!((again.blobs_fetched, again.cursor), (0, report.cursor), "{again:?}");
    assert_eq!(held(&node, "form-filler").await.len(), 1);

    // The peer serves the file again; its manifest is unchanged, yet the
    // next round asks for the blob, and the bundle installs whole.
    std::fs::write(&script_file, SCRIPT).unwrap();
    let later = pull(&node, &peer).await;
    assert_eq!(later.blobs_fetched, 1, "{later:?}");
    assert!(held(&node, "form-filler").await.is_empty(), "the pending entry is done");
    let shown = node.get_json("/v1/skills/form-filler").await;
    assert_eq!(shown["packet"]["files"].as_array().map(Vec::len), Some(3), "{shown}");
    let script = skills.join("form-filler/scripts/fill.py");
    eventually("the bundle projected whole", SOON, || async {
        (std::fs::read(&script).ok()? == SCRIPT
            && std::fs::read(skills.join("form-filler/reference.md")).ok()? == REFERENCE)
            .then_some(())
    })
    .await;
}
