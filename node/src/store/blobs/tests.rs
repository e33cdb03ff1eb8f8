//! The blob store's tests: blobs held once per digest, kept while a version uses them, collected after their grace period, the per-sender quota and the cap at their limits, bundles pending until their files arrive.

use ecp_protocol::bundle::bundle_digest;
use ecp_protocol::{Origin, SkillKind};

use super::*;
use crate::store::{Source, origin_limits::unix_now};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

fn body(name: &str) -> String {
    format!("---\nname: {name}\ndescription: Fill the form\n---\n# {name}\n\nRun scripts/fill.py.\n")
}

fn bundle(name: &str, files: &[(&str, &[u8], bool)]) -> SkillPacket {
    let origin = Origin::new("peer-a", "someone", "linux/amd64", "1.0");
    let packet = SkillPacket::new(&origin, name, "Fill the form", &body(name), 0.9, crate::store::now());
    let manifest =
        BundleManifest::for_skill(&packet.skill_body, files.iter().copied(), &BundleLimits::default())
            .unwrap();
    packet.with_bundle(&manifest).unwrap()
}

fn install(store: &Store, packet: &SkillPacket) -> Result<(), StoreError> {
    store.transaction(|tx| tx.install(packet, SkillKind::External, true, &Source::Operator).map(drop))
}

/// The blob files on disk, uploads in progress left out.
fn files_on_disk(dir: &std::path::Path) -> usize {
    walk(&dir.join("blobs"))
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { walk(&p) } else { 1 })
        .sum()
}

#[test]
fn two_skills_sharing_a_240_kb_file_store_it_once_until_no_kept_version_lists_it() {
    let (dir, store) = store();
    let line = b"<xs:element name=\"a\"/>\n";
    let schema: Vec<u8> = (0..240 * 1024).map(|i| line[i % line.len()]).collect();
    let limits = BlobLimits::DEFAULT;
    let (sha, new) = store.put_blob_bytes(&schema, "", &limits).unwrap();
    assert!(new);
    assert!(!store.put_blob_bytes(&schema, "", &limits).unwrap().1, "held already");
    install(&store, &bundle("form-a", &[("schema.xsd", &schema, false)])).unwrap();
    install(&store, &bundle("form-b", &[("refs/schema.xsd", &schema, false)])).unwrap();
    let usage = store.blob_usage().unwrap();
    assert_eq!((usage.blobs, usage.bytes, usage.unused_bytes), (1, 240 * 1024, 0));
    assert_eq!(files_on_disk(dir.path()), 1);
    assert!(store.collect_blobs(unix_now() + 1_000_000, Duration::ZERO).unwrap().is_empty(), "listed");

    // Each skill moves on; with no superseded version kept, nothing lists the file.
    store.set_history_depth(0);
    install(&store, &bundle("form-a", &[("other.md", b"other\n", false)])).unwrap_err();
    let mut plain = bundle("form-a", &[]);
    plain.files.clear();
    plain.bundle_digest.clear();
    install(&store, &plain).unwrap();
    assert!(store.collect_blobs(unix_now(), Duration::ZERO).unwrap().is_empty(), "form-b lists it");
    store.tombstone("form-b", Source::Operator).unwrap();
    assert_eq!(store.collect_blobs(unix_now(), Duration::ZERO).unwrap(), std::slice::from_ref(&sha));
    assert_eq!(files_on_disk(dir.path()), 0);
    assert!(!store.holds_blob(&sha).unwrap());
}

#[test]
fn a_bundle_whose_files_are_not_all_held_is_not_installed() {
    let (_dir, store) = store();
    let packet = bundle("form", &[("reference.md", b"# Reference\n", false)]);
    assert!(matches!(install(&store, &packet), Err(StoreError::BundleNotHeld(_))));
    assert!(store.list_skills().unwrap().is_empty());
}

#[test]
fn an_unused_blob_is_kept_for_its_grace_period_and_collected_at_its_end() {
    let (dir, store) = store();
    let before = unix_now();
    store.put_blob_bytes(b"ahead of its packet\n", "addr:1.2.3.4", &BlobLimits::DEFAULT).unwrap();
    let after = unix_now();
    let hour = Duration::from_secs(3600);
    assert!(store.collect_blobs(before + 3599, hour).unwrap().is_empty());
    assert_eq!(store.collect_blobs(after + 3600, hour).unwrap().len(), 1);
    assert_eq!(files_on_disk(dir.path()), 0);
}

#[test]
fn a_senders_unused_blobs_fill_its_quota_at_the_limit_and_one_byte_more_is_refused() {
    let (dir, store) = store();
    let limits = BlobLimits { sender_bytes: 10, total_bytes: 16, grace: DEFAULT_BLOB_GRACE };
    store.put_blob_bytes(b"six b\n", "addr:a", &limits).unwrap();
    store.put_blob_bytes(b"four", "addr:a", &limits).unwrap();
    let refused = store.put_blob_bytes(b"1", "addr:a", &limits).unwrap_err();
    assert!(
        matches!(refused, StoreError::BlobRefused(BlobRefused::Quota { held: 10, size: 1, quota: 10 })),
        "{refused}"
    );
    assert_eq!(files_on_disk(dir.path()), 2, "a refused blob leaves nothing");
    // Another sender has its own quota; a listed blob counts no more.
    store.put_blob_bytes(b"1", "addr:b", &limits).unwrap();
    install(&store, &bundle("form", &[("notes.txt", b"six b\n", false)])).unwrap();
    store.put_blob_bytes(b"2", "addr:a", &limits).unwrap();
    // The cap on all blobs: 6 + 4 + 1 + 1 = 12 held; 4 more is the cap, 5 one past.
    store.put_blob_bytes(b"abcd", "", &limits).unwrap();
    let full = store.put_blob_bytes(b"x", "", &limits).unwrap_err();
    assert!(
        matches!(full, StoreError::BlobRefused(BlobRefused::Full { held: 16, size: 1, cap: 16 })),
        "{full}"
    );
}

#[test]
fn a_batch_is_kept_in_one_go_once_per_digest_and_one_blob_over_the_cap_refuses_all_of_it() {
    let (dir, store) = store();
    let limits = BlobLimits { sender_bytes: 10, total_bytes: 12, grace: DEFAULT_BLOB_GRACE };
    let write = |bytes: &[u8]| {
        let mut w = store.blob_files().writer(bytes.len() as u64).unwrap();
        w.write(bytes).unwrap();
        w.finish(&ecp_protocol::integrity::sha256_hex(bytes)).unwrap()
    };
    // At the sender's quota exactly, one of them twice: kept once.
    let batch = vec![write(b"four"), write(b"six b\n"), write(b"four")];
    assert_eq!(store.put_blobs(batch, "addr:a", &limits).unwrap(), 2);
    assert_eq!(store.blob_usage().unwrap().bytes, 10);
    assert_eq!(files_on_disk(dir.path()), 2);
    // One byte more from that sender, within the cap: the whole batch refused.
    let over = store.put_blobs(vec![write(b"1"), write(b"ab")], "addr:a", &limits).unwrap_err();
    assert!(matches!(over, StoreError::BlobRefused(BlobRefused::Quota { held: 10, size: 1, quota: 10 })));
    // Another sender: 10 held, 2 more is the cap, 3 one past it.
    let full = store.put_blobs(vec![write(b"1"), write(b"ab")], "addr:b", &limits).unwrap_err();
    assert!(
        matches!(full, StoreError::BlobRefused(BlobRefused::Full { held: 11, size: 2, cap: 12 })),
        "{full}"
    );
    assert!(!store.holds_blob(&ecp_protocol::integrity::sha256_hex(b"1")).unwrap(), "nothing of it kept");
    assert_eq!((store.blob_usage().unwrap().blobs, files_on_disk(dir.path())), (2, 2));
    assert_eq!(std::fs::read_dir(dir.path().join("blobs/tmp")).unwrap().count(), 0);
    assert_eq!(store.put_blobs(vec![write(b"ab")], "addr:b", &limits).unwrap(), 1, "at the cap");
}

#[test]
fn a_bundle_is_pending_while_a_file_is_missing_and_refused_when_a_held_one_fails_its_entry() {
    let (_dir, store) = store();
    let limits = BundleLimits::default();
    let script = b"#!/usr/bin/env python3\nprint('fill')\n".as_slice();
    let packet = bundle("form", &[("scripts/fill.py", script, true), ("notes.txt", b"notes\n", false)]);
    let decide = |p: &SkillPacket| store.transaction(|tx| Ok(tx.bundle_decision(p, &limits))).unwrap();
    let Some(Decision::Rejected { reason, .. }) = decide(&packet) else { panic!("pending") };
    assert!(reason.starts_with("pending: 2 of 3 files not held yet (first: notes.txt)"), "{reason}");
    store.put_blob_bytes(script, "", &BlobLimits::DEFAULT).unwrap();
    store.put_blob_bytes(b"notes\n", "", &BlobLimits::DEFAULT).unwrap();
    assert_eq!(decide(&packet), None);

    // 0755 on a file that is no script: its bytes say so once held.
    let mut lying = packet.clone();
    lying.files.iter_mut().find(|f| f.path == "notes.txt").unwrap().mode = "0755".into();
    lying.bundle_digest = bundle_digest(&lying.files);
    let Some(Decision::Rejected { reason, .. }) = decide(&lying) else { panic!("refused") };
    assert_eq!(
        reason,
        "invalid bundle: file \"notes.txt\" has mode 0755 but is not a text script (a shebang or a script extension)"
    );
}
