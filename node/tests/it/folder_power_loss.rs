//! The skills folder after a power loss (#18 item 2): the projection never
//! syncs, and on ext4 a `SKILL.md` the node wrote can come back empty with
//! its record of the write, or holding only its first 4 KiB page without
//! one; and a fill writing a new skill's file in place
//! (`Projection::fill_in_place`, built but off), killed between the file's
//! creation and its record, would leave it empty without a record. A real `ecp-node serve` started on such a folder imports before
//! it projects: no such file is imported over the store's version (nor
//! sent on as the user's edit — the store's sequence does not move), and
//! each is written again from the store.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use ecp_node::store::{OriginLimits, Store};

use crate::cli::Folders;
use crate::local_api::Served;
use crate::util::{TestNode, packet, update};

const SOON: Duration = Duration::from_secs(30);

/// A packet whose `SKILL.md` is about 5.7 KB: more than a page.
fn long_packet(name: &str) -> ecp_protocol::SkillPacket {
    let mut p = packet(name);
    p.skill_body.push_str("\n## Notes\n");
    for i in 0..90 {
        p.skill_body.push_str(&format!("{i:02}. Keep the test output next to the change that fixed it.\n"));
    }
    p.reseal();
    p
}

fn record(file: &Path) -> Option<Vec<u8>> {
    let mut buf = [0u8; 256];
    let n = rustix::fs::lgetxattr(file, "user.ecp-written", &mut buf[..]).ok()?;
    Some(buf[..n].to_vec())
}

/// Each held skill's kind and integrity hash, and the store's sequence.
fn held(data: &Path) -> (BTreeMap<String, (String, String)>, i64) {
    let store = Store::open(data).unwrap();
    let skills = store
        .list_skills()
        .unwrap()
        .into_iter()
        .map(|r| (r.name.clone(), (r.kind.to_owned(), r.integrity_hash.clone())))
        .collect();
    (skills, store.sequence().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_start_after_a_power_loss_writes_empty_and_torn_files_again_and_imports_neither() {
    let off = OriginLimits { per_hour: 0, per_day: 0 };
    let source = TestNode::start_with(|c| {
        c.origin_limits = off;
        c.sender_limits = off;
        c.default_trust = 1.0;
    })
    .await;
    let names = ["power-empty", "power-bare", "power-torn", "power-whole"];
    let packets: Vec<_> = names.iter().map(|n| long_packet(n)).collect();
    let merged = source.push_ok(&update("pusher", &packets)).await;
    assert_eq!(merged["newSkills"], names.len(), "{merged}");

    let f = Folders::new();
    let url = source.url("");
    let pulled = f.run_async(&["pull", url.trim_end_matches('/'), "--trust", "1", "--init"]).await;
    assert_eq!(pulled.code, 0, "{pulled:?}");
    let skills = f.skills();
    let whole: BTreeMap<&str, Vec<u8>> =
        names.iter().map(|n| (*n, std::fs::read(skills.join(n).join("SKILL.md")).unwrap())).collect();
    for (name, bytes) in &whole {
        assert!(bytes.len() > 4096, "{name}: {} bytes", bytes.len());
    }
    let before = held(&f.data());

    // What ext4 can leave: the empty file with its record (truncated in
    // place: the attribute stays), and the first page of one without it.
    let empty = skills.join("power-empty").join("SKILL.md");
    std::fs::OpenOptions::new().write(true).truncate(true).open(&empty).unwrap();
    assert!(record(&empty).is_some(), "the record is kept");
    // What a kill of the fill's in-place write can leave: empty, no record.
    let bare = skills.join("power-bare").join("SKILL.md");
    std::fs::remove_file(&bare).unwrap();
    std::fs::write(&bare, b"").unwrap();
    assert!(record(&bare).is_none());
    let torn = skills.join("power-torn").join("SKILL.md");
    std::fs::remove_file(&torn).unwrap();
    std::fs::write(&torn, &whole["power-torn"][..4096]).unwrap();
    assert!(record(&torn).is_none());

    let (data, dir) = (f.data(), skills.clone());
    let expected = whole.clone();
    tokio::task::spawn_blocking(move || {
        let served = Served::start(&data, &dir, &[]);
        let deadline = Instant::now() + SOON;
        loop {
            let now: BTreeMap<&str, Vec<u8>> = expected
                .keys()
                .map(|n| (*n, std::fs::read(dir.join(n).join("SKILL.md")).unwrap_or_default()))
                .collect();
            if now == expected {
                break;
            }
            let lengths: Vec<_> = now.iter().map(|(n, b)| (*n, b.len())).collect();
            assert!(Instant::now() < deadline, "the folder is not written again from the store: {lengths:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        served.stop();
    })
    .await
    .unwrap();

    assert!(
        record(&empty).is_some() && record(&torn).is_some() && record(&bare).is_some(),
        "recorded as the node's again"
    );
    let after = held(&f.data());
    assert_eq!(after, before, "nothing imported: the same skills, kinds, hashes and sequence");
    assert!(after.0.values().all(|(kind, _)| kind == "external"), "{after:?}");
}
