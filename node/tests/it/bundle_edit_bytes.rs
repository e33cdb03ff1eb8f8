//! One SKILL.md edit in a 5 MB bundle moves less than 50 KB between nodes
//! (#26 benchmarks), by pull and by push: the bytes are counted on the wire
//! by a [`CountingProxy`] between the nodes, both ways, heads included.

use std::collections::HashSet;

use ecp_node::import::Companion;
use serde_json::Value;

use crate::bundles::{context, pull_through, push, put_own_bundle_text};
use crate::counting_proxy::CountingProxy;
use crate::generated_bundle::{SKILL_MD, generated_bundle};
use crate::util::TestNode;

/// The bundle's size, all files.
const BUNDLE_BYTES: usize = 5 * 1024 * 1024;
/// Most bytes the second version may move (the goal).
const EDIT_BUDGET: u64 = 50 * 1000;

fn companions() -> Vec<Companion> {
    generated_bundle(BUNDLE_BYTES)
        .into_iter()
        .map(|(path, bytes)| Companion { path, bytes, executable: false })
        .collect()
}

/// `SKILL_MD` with one step more.
fn edited() -> String {
    format!("{SKILL_MD}4. Keep a copy of the filled form beside the data.\n")
}

/// The packet `node` serves as `document-forms`.
async fn served(node: &TestNode) -> Value {
    node.get_json("/v1/skills/document-forms").await["packet"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_skill_md_edit_in_a_5_mb_bundle_moves_under_50_kb_by_pull_and_by_push() {
    let a = TestNode::start().await;
    let (b, c) = (TestNode::start().await, TestNode::start_with(|c| c.default_trust = 1.0).await);
    let files = companions();
    let total: usize = files.iter().map(|f| f.bytes.len()).sum();
    assert!(total >= BUNDLE_BYTES, "{total}");
    // What a first transfer must move at least: each distinct file once
    // (the folder repeats one schema three times).
    let distinct: HashSet<&[u8]> = files.iter().map(|f| f.bytes.as_slice()).collect();
    let once = distinct.iter().map(|b| b.len() as u64).sum::<u64>();
    put_own_bundle_text(&a, SKILL_MD, files.clone()).await;
    let (to_a, to_c) = (CountingProxy::start(a.addr()).await, CountingProxy::start(c.addr()).await);

    // The first version moves whole, through the proxies: they count what moved.
    let first = pull_through(&context(&b), &to_a.url()).await;
    assert_eq!(first.result.new_skills, 1, "{first:?}");
    let pulled = to_a.take();
    assert!(pulled >= once, "the first pull moved the whole bundle: {pulled} bytes");
    let first = push(&a, &to_c.url()).await;
    assert_eq!(first.result.new_skills, 1, "{first:?}");
    let pushed = to_c.take();
    assert!(pushed >= once, "the first push moved the whole bundle: {pushed} bytes");

    // One line more in SKILL.md: the listing and the new SKILL.md move, no file.
    put_own_bundle_text(&a, &edited(), files).await;
    let version = served(&a).await;
    assert_ne!(version["bundleDigest"], Value::Null);

    let second = pull_through(&context(&b), &to_a.url()).await;
    let pulled = to_a.take();
    assert_eq!((second.result.updated_skills, second.blobs_fetched), (1, 0), "{second:?}");
    assert_eq!(served(&b).await["bundleDigest"], version["bundleDigest"], "B holds the second version");
    assert!(pulled > 0 && pulled < EDIT_BUDGET, "the pull of the edit moved {pulled} bytes");

    let second = push(&a, &to_c.url()).await;
    let pushed = to_c.take();
    assert_eq!((second.result.updated_skills, second.blobs_sent), (1, 0), "{second:?}");
    assert_eq!(served(&c).await["bundleDigest"], version["bundleDigest"], "C holds the second version");
    assert!(pushed > 0 && pushed < EDIT_BUDGET, "the push of the edit moved {pushed} bytes");
}
