//! kill -9 of a bulk pull (#18 item 2): `ecp-node pull` into an empty node
//! fills its store with a rollback journal (`store::bulk`); killed between
//! or inside its transactions, it leaves a store that opens whole, in WAL
//! mode, holding a prefix of what it was pulling — every skill as the
//! source has it — and the next pull brings the rest. Its skills folder is
//! made whole by the next start: whatever the killed writers left (an empty
//! folder, a temporary file; with `Projection::fill_in_place`, built but
//! off, an empty or short file with or without its record) is written
//! again from the store, nothing of it imported.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ecp_node::store::{DB_FILE, OriginLimits, Store};

use crate::local_api::Served;
use crate::util::{TestNode, packet, update};

const SKILLS: usize = 3_000;
const SOON: Duration = Duration::from_secs(120);

fn pull(url: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ecp-node"));
    cmd.args(["pull", url, "--trust", "1", "--json", "--init", "--data", "b"])
        .current_dir(dir)
        .env_clear()
        .env("ECP_ORIGIN_LIMIT_HOUR", "0")
        .env("ECP_ORIGIN_LIMIT_DAY", "0")
        .env("ECP_SENDER_LIMIT_HOUR", "0")
        .env("ECP_SENDER_LIMIT_DAY", "0");
    cmd
}

fn held(store: &Store) -> BTreeMap<String, String> {
    store.list_skills().unwrap().into_iter().map(|r| (r.name, r.integrity_hash)).collect()
}

fn folders(skills: &Path) -> usize {
    std::fs::read_dir(skills)
        .map(|d| d.flatten().filter(|e| !e.file_name().to_string_lossy().starts_with('.')).count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_pull_killed_midway_leaves_a_whole_store_and_the_next_pull_brings_the_rest() {
    let off = OriginLimits { per_hour: 0, per_day: 0 };
    let source = TestNode::start_with(|c| {
        c.origin_limits = off;
        c.sender_limits = off;
        c.default_trust = 1.0;
        // Pages of about 75 packets: many transactions to land in.
        c.page_bytes = 64 * 1024;
    })
    .await;
    let names: Vec<String> = (0..SKILLS).map(|i| format!("kill-{i:05}")).collect();
    for chunk in names.chunks(500) {
        let packets: Vec<_> = chunk.iter().map(|n| packet(n)).collect();
        source.push_ok(&update("bulk-pusher", &packets)).await;
    }
    let expected = held(source.library().store());
    let url = source.url("").trim_end_matches('/').to_owned();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_owned();

    let (killed_at, journal_seen) = {
        let (url, dir) = (url.clone(), dir.clone());
        tokio::task::spawn_blocking(move || {
            let mut child = pull(&url, &dir).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            let (data, skills) = (dir.join("b"), dir.join("b").join("skills"));
            let journal = data.join(format!("{DB_FILE}-journal"));
            let deadline = Instant::now() + SOON;
            let mut journal_seen = false;
            // Once a few pages are in the folder (committed), mid-pull.
            loop {
                journal_seen |= journal.exists() && !data.join(format!("{DB_FILE}-wal")).exists();
                let shown = folders(&skills);
                if shown >= 300 {
                    break;
                }
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "the pull ended before it was killed ({shown} shown)"
                );
                assert!(Instant::now() < deadline, "no progress: {shown} shown");
                std::thread::sleep(Duration::from_millis(2));
            }
            assert!(child.try_wait().unwrap().is_none(), "still running when killed");
            child.kill().unwrap();
            child.wait().unwrap();
            (folders(&skills), journal_seen)
        })
        .await
        .unwrap()
    };
    assert!(journal_seen, "the pull ran with a rollback journal (a -journal file, no WAL)");

    // The store opens whole: the journal of a cut transaction rolled back.
    let data = dir.join("b");
    let store = Store::open(&data).unwrap();
    assert_eq!(store.journal_mode().unwrap(), "wal");
    let check: String = rusqlite::Connection::open(data.join(DB_FILE))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let got = held(&store);
    assert!(got.len() >= killed_at && got.len() < SKILLS, "{} held, {killed_at} shown", got.len());
    for (name, hash) in &got {
        assert_eq!(expected.get(name), Some(hash), "{name} as the source has it");
    }
    drop(store);

    let second = dir.clone();
    let out = tokio::task::spawn_blocking(move || pull(&url, &second).output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["result"]["newSkills"], SKILLS - got.len(), "{report}");
    let store = Store::open(&data).unwrap();
    assert_eq!(held(&store), expected, "every skill after the second pull");
    assert_eq!(store.journal_mode().unwrap(), "wal");
    let sequence = store.sequence().unwrap();
    drop(store);

    // The next start makes the folder whole.
    let skills = dir.join("b").join("skills");
    let (served_data, names) = (data.clone(), expected.keys().cloned().collect::<Vec<_>>());
    tokio::task::spawn_blocking(move || {
        let served = Served::start(&served_data, &skills, &[]);
        let deadline = Instant::now() + SOON;
        loop {
            let missing: Vec<&String> =
                names.iter().filter(|n| !whole_and_recorded(&skills.join(n))).collect();
            if missing.is_empty() {
                break;
            }
            assert!(Instant::now() < deadline, "not written again: {:?}", &missing[..missing.len().min(5)]);
            std::thread::sleep(Duration::from_millis(50));
        }
        served.stop();
        let left: Vec<_> = std::fs::read_dir(&skills)
            .unwrap()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .filter(|f| f.file_name() != "SKILL.md")
            .map(|f| f.path())
            .collect();
        assert!(left.is_empty(), "only SKILL.md files are left: {left:?}");
    })
    .await
    .unwrap();
    let store = Store::open(&data).unwrap();
    assert_eq!(held(&store), expected, "nothing imported from the folder");
    assert_eq!(store.sequence().unwrap(), sequence, "nothing imported: the sequence did not move");
}

/// Whether `dir/SKILL.md` holds a skill (frontmatter, more than a page's
/// worth is not needed here) and carries the node's record of the write.
fn whole_and_recorded(dir: &Path) -> bool {
    let file = dir.join("SKILL.md");
    let mut buf = [0u8; 128];
    std::fs::read(&file).is_ok_and(|b| b.starts_with(b"---\n") && b.ends_with(b"\n"))
        && rustix::fs::lgetxattr(&file, "user.ecp-written", &mut buf[..]).is_ok_and(|n| n == 64)
}
