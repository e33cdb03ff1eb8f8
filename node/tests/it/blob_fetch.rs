//! A pull fetches a page's missing blobs several at a time, each streamed
//! to a temporary file and checked as it is written, and keeps them a batch
//! at a time (`federation/bundles.rs`): files at the per-file limit all
//! arrive; a blob longer than listed (by its `Content-Length`, or as it
//! streams), or hashing to another digest, is not kept, leaves no file
//! behind, and its bundle stays pending with its reason.

use std::collections::HashMap;

use ecp_node::federation;
use ecp_node::import::Companion;
use ecp_protocol::integrity::sha256_hex;

use crate::bundles::{bundle_of, context, pull, put_own_bundle, spec};
use crate::util::{TestNode, packet};

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
async fn files_at_the_per_file_limit_all_arrive() {
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

/// The files of the bundle a lying peer lists, and what it serves for each:
/// the right bytes, other bytes of the same length, the right bytes with
/// one more at the end.
const GOOD: &[u8] = b"# Good\n\nServed as listed.\n";
const SWAPPED: &[u8] = b"# Swap\n\nServed as other bytes.\n";
const LONG: &[u8] = b"# Long\n\nServed one byte longer.\n";
/// Served one byte longer too, in chunks without a `Content-Length`: refused as it streams.
const STREAMED: &[u8] = b"# Streamed\n\nServed in chunks, one byte longer.\n";

/// A peer listing a bundle `mixed` of [`GOOD`], [`SWAPPED`], [`LONG`] and
/// [`STREAMED`] and a plain skill, whose blob answers are the wrong bytes
/// but for [`GOOD`]; its URL.
async fn start_lying_peer() -> String {
    use axum::extract::Path;
    use axum::routing::get;
    use serde_json::json;
    let files = [
        ("good.md", GOOD, false),
        ("swapped.md", SWAPPED, false),
        ("long.md", LONG, false),
        ("streamed.md", STREAMED, false),
    ];
    let bundle = bundle_of(packet("mixed"), &files);
    let mut listing = crate::util::update_value("liar", &[bundle, packet("plain-one")]);
    listing["sequenceNum"] = json!(1);
    let mut swapped = SWAPPED.to_vec();
    swapped[2] = b'X';
    let served: HashMap<String, Vec<u8>> = HashMap::from([
        (sha256_hex(GOOD), GOOD.to_vec()),
        (sha256_hex(SWAPPED), swapped),
        (sha256_hex(LONG), [LONG, b"!"].concat()),
    ]);
    let app =
        axum::Router::new()
            .route(
                "/ecp/manifest",
                get(|| async {
                    axum::Json(
                        json!({"instance": "liar", "version": "1.0", "sequenceNum": 1, "skillCount": 2,
                                  "skillNames": ["mixed", "plain-one"], "generatedAt": "2026-11-20T10:00:00Z",
                                  "profiles": ["ecp-1.3"]}),
                    )
                }),
            )
            .route("/ecp/skills", get(move || async move { axum::Json(listing) }))
            .route(
                "/ecp/blobs/{sha256}",
                get(move |Path(sha256): Path<String>| async move {
                    served.get(&sha256).cloned().unwrap_or_default()
                }),
            );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The files under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_blobs_longer_than_listed_or_of_another_hash_are_not_kept_and_their_bundle_stays_pending() {
    let url = start_lying_peer().await;
    let b = TestNode::start().await;
    let report =
        federation::pull(&context(&b), &spec(&url, "trust = 1.0")).await.expect("the round succeeds");
    // The right blob kept, the wrong ones not; the other skill arrives.
    assert_eq!((report.result.new_skills, report.result.rejected_skills, report.blobs_fetched), (1, 1, 1));
    let store = b.library().store();
    assert!(store.holds_blob(&sha256_hex(GOOD)).unwrap());
    assert!(!store.holds_blob(&sha256_hex(SWAPPED)).unwrap(), "another hash");
    assert!(!store.holds_blob(&sha256_hex(LONG)).unwrap(), "longer than listed");
    assert!(!store.holds_blob(&sha256_hex(STREAMED)).unwrap(), "longer than listed, as it streamed");
    let blobs = b.config().data_dir.join(ecp_node::store::BLOBS_DIR);
    assert_eq!(files_under(&blobs), 1, "the good blob's file alone, no temporary file left");
    // The bundle is held with its pending reason, to be fetched again.
    let reason = "mixed: pending: 3 of 5 files not held yet";
    assert!(report.result.conflicts.iter().any(|c| c.contains(reason)), "{report:?}");
    let held = b.get_json("/v1/quarantine").await;
    let entry = held["quarantine"].as_array().unwrap().iter().find(|e| e["skillName"] == "mixed").cloned();
    let entry = entry.expect("held in the quarantine");
    assert!(entry["reason"].as_str().unwrap().starts_with("pending: 3 of 5 files"), "{entry}");

    // The next round asks again, gets the same wrong bytes, and keeps the reason.
    let again = federation::pull(&context(&b), &spec(&url, "trust = 1.0")).await.expect("the round succeeds");
    assert_eq!(again.blobs_fetched, 0, "{again:?}");
    assert!(!store.holds_blob(&sha256_hex(SWAPPED)).unwrap());
    let held = b.get_json("/v1/quarantine").await;
    let entry = held["quarantine"].as_array().unwrap().iter().find(|e| e["skillName"] == "mixed").cloned();
    assert!(entry.expect("still held")["reason"].as_str().unwrap().starts_with("pending: 3 of 5 files"));
    assert_eq!(files_under(&blobs), 1);
}
