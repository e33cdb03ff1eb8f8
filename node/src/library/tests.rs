//! The library's background gate and the sender kind that held packets keep.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::*;
use crate::intake::Sender;
use ecp_protocol::merge::SenderKind;
use ecp_protocol::{KnowledgeUpdate, StandardPolicy};

#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_background_waits_for_the_running_job_and_starts_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let library = Library::open(&dir.path().join("data"), &dir.path().join("skills")).unwrap();
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let finished = Arc::new(AtomicBool::new(false));
    let running = {
        let (library, finished) = (library.clone(), Arc::clone(&finished));
        tokio::spawn(async move {
            library
                .in_background(move |_| {
                    started_tx.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(300));
                    finished.store(true, Ordering::SeqCst);
                })
                .await
        })
    };
    tokio::task::spawn_blocking(move || started_rx.recv().unwrap()).await.unwrap();
    running.abort(); // as a shutdown aborts the task waiting for the job
    library.stop_background().await;
    assert!(finished.load(Ordering::SeqCst), "the running job ended before stop_background returned");
    let ran = Arc::new(AtomicBool::new(false));
    let later = {
        let ran = Arc::clone(&ran);
        library.in_background(move |_| ran.store(true, Ordering::SeqCst)).await
    };
    assert_eq!(later, None);
    assert!(!ran.load(Ordering::SeqCst), "no job starts once stopped");
}

#[test]
fn a_bundle_pushed_before_its_files_keeps_its_senders_kind_when_it_installs() {
    use ecp_protocol::Origin;
    use ecp_protocol::bundle::BundleManifest;

    for (kind, verified) in [(SenderKind::Legacy, false), (SenderKind::Current, true)] {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(&dir.path().join("data"), &dir.path().join("skills")).unwrap();
        let body = "---\nname: filler\ndescription: Fills forms.\n---\n# Filler\n\nRun `scripts/run.sh`.\n";
        let script: &[u8] = b"#!/bin/sh\necho filled\n";
        let manifest =
            BundleManifest::for_skill(body, [("scripts/run.sh", script, true)], &BundleLimits::default())
                .unwrap();
        let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
        let packet = SkillPacket::new(&origin, "filler", "Fills forms.", body, 0.9, crate::store::now())
            .with_bundle(&manifest)
            .unwrap();
        let sender = Sender {
            instance: "node-a".into(),
            account: "addr:127.0.0.1".into(),
            trust: 1.0,
            reshare: true,
            kind,
        };
        let policy = StandardPolicy::default();
        let update = KnowledgeUpdate { skills: vec![packet], ..KnowledgeUpdate::default() };
        let first = library.merge(update, &sender, &policy).unwrap();
        assert_eq!((first.new_skills, first.rejected_skills), (0, 1), "{kind:?}: pending its file");
        let blobs = library.limits().blobs;
        let (sha256, _) = library.store().put_blob_bytes(script, "addr:127.0.0.1", &blobs).unwrap();
        assert_eq!(library.retry_pending_bundles(&sha256, &policy, 1.0, true).unwrap(), 1, "{kind:?}");
        let (record, ..) = library.store().skill("filler").unwrap().expect("installed");
        assert_eq!(record.origin_verified, verified, "{kind:?}");
    }
}

#[test]
fn an_approved_packet_keeps_its_senders_kind() {
    use ecp_protocol::Origin;

    for (kind, verified) in [(SenderKind::Legacy, false), (SenderKind::Current, true)] {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(&dir.path().join("data"), &dir.path().join("skills")).unwrap();
        let body = "---\nname: doubtful\ndescription: Low confidence.\n---\n# Doubtful\n";
        let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
        let packet = SkillPacket::new(&origin, "doubtful", "Low confidence.", body, 0.5, crate::store::now());
        let sender = Sender {
            instance: "node-a".into(),
            account: "addr:127.0.0.1".into(),
            trust: 1.0,
            reshare: true,
            kind,
        };
        let update = KnowledgeUpdate { skills: vec![packet], ..KnowledgeUpdate::default() };
        let refused = library.merge(update, &sender, &StandardPolicy::default()).unwrap();
        assert_eq!(refused.rejected_skills, 1, "{kind:?}: below the threshold");
        let held = library.store().quarantine().unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].legacy_sender, kind == SenderKind::Legacy);
        library.approve(held[0].id, 1.0, true, false).unwrap();
        let (record, ..) = library.store().skill("doubtful").unwrap().expect("installed");
        assert_eq!(record.origin_verified, verified, "{kind:?}");
    }
}
