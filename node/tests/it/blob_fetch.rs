//! A pull fetches a page's missing blobs several at a time within a budget
//! of one per-file limit of bytes (`federation/bundles.rs`): files at the
//! limit, which take the whole budget each, still all arrive.

use ecp_node::import::Companion;

use crate::bundles::{pull, put_own_bundle};
use crate::util::TestNode;

/// B's per-file limit, and the size of every file of the bundle.
const LIMIT: usize = 1024;

/// Text of exactly [`LIMIT`] bytes, different for every `i`.
fn note(i: usize) -> Vec<u8> {
    let mut text = format!("# Note {i}\n\n").into_bytes();
    text.resize(LIMIT - 1, b'a');
    text.push(b'\n');
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn files_at_the_per_file_limit_each_taking_the_whole_fetch_budget_all_arrive() {
    let a = TestNode::start().await;
    let b = TestNode::start_with(|c| c.policy.bundle.max_file_bytes = LIMIT as u64).await;
    let companions: Vec<Companion> = (0..20)
        .map(|i| Companion { path: format!("notes/n{i:02}.md"), bytes: note(i), executable: false })
        .collect();
    put_own_bundle(&a, "notes", companions.clone()).await;
    let report = pull(&b, &a).await;
    assert_eq!((report.result.new_skills, report.blobs_fetched), (1, 20), "{report:?}");
    for file in &companions {
        let sha256 = ecp_protocol::integrity::sha256_hex(&file.bytes);
        let held = b.library().store().blob_files().read(&sha256).expect("the file is held");
        assert_eq!(held, file.bytes, "{}", file.path);
    }
}
