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
    // About 20 pages of 150 packets.
    pulls_every_skill(SKILLS, Some(128 * 1024)).await;
}

/// Pages of the default size: a round's first of 1,000 packets
/// (`federation::pull::FIRST_PAGE`), then the rest, each merged in one
/// transaction (at most a slice of 1,000 packets, `MERGE_SLICE`), whose
/// changes the skills folder's writer takes in batches large enough for
/// its several threads.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_of_1500_skills_merged_in_slices_installs_and_indexes_every_one() {
    pulls_every_skill(1_500, None).await;
}

/// A page of two slices (`MERGE_SLICE`): the round's first page of 1,000
/// packets, then one of 1,001, fetched while the first is merged: its
/// first slice is scanned where it is decoded (`federation::pull`), its
/// second — one packet — on a thread of its own while the first is merged
/// (`federation::scan_ahead`): every skill is installed and indexed, and
/// the time line shows each slice's bodies handed to its merge scanned but
/// the round's first page's, which nothing came before.
#[tokio::test(flavor = "multi_thread")]
async fn a_pages_slices_are_scanned_ahead_and_every_skill_installed() {
    let timeline = pulls_every_skill(2_001, None).await;
    let slices: Vec<&str> = timeline.lines().filter(|l| l.contains("slice merge starts")).collect();
    assert_eq!(slices.len(), 3, "{timeline}");
    assert!(slices[0].contains("packets=1000 ahead=0"), "the first page's one slice: {}", slices[0]);
    assert!(
        slices[1].contains("packets=1000 ahead=1000"),
        "a prefetched page's first slice, scanned as it was decoded: {}",
        slices[1]
    );
    assert!(slices[2].contains("packets=1 ahead=1"), "its second, ahead: {}", slices[2]);
    let decoded: Vec<&str> = timeline.lines().filter(|l| l.contains("page decoded")).collect();
    assert!(decoded[0].contains("packets=1000 scanned=0"), "the round's first page: {}", decoded[0]);
    assert!(decoded[1].contains("packets=1001 scanned=1000"), "at most a slice: {}", decoded[1]);
}

/// A source holding `skills` skills, served in pages of `page_bytes` (the
/// default otherwise), pulled by `ecp-node pull` into an empty node; the
/// pull's time line (its standard error).
async fn pulls_every_skill(skills: usize, page_bytes: Option<usize>) -> String {
    let off = OriginLimits { per_hour: 0, per_day: 0 };
    let source = TestNode::start_with(|c| {
        c.origin_limits = off;
        c.sender_limits = off;
        // Served at the pushed confidence, which the puller's accept threshold admits.
        c.default_trust = 1.0;
        if let Some(bytes) = page_bytes {
            c.page_bytes = bytes;
        }
    })
    .await;
    let names: Vec<String> = (0..skills).map(|i| format!("bulk-{i:05}")).collect();
    for chunk in names.chunks(500) {
        let packets: Vec<_> = chunk.iter().map(|n| packet(n)).collect();
        let merged = source.push_ok(&update("bulk-pusher", &packets)).await;
        assert_eq!(merged["newSkills"], chunk.len(), "{merged}");
    }
    let held = |store: &Store| -> BTreeMap<String, String> {
        store.list_skills().unwrap().into_iter().map(|r| (r.name, r.integrity_hash)).collect()
    };
    let expected = held(source.library().store());
    assert_eq!(expected.len(), skills);

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
            .env("RUST_LOG", "warn,ecp_node::timeline=debug")
            .env("NO_COLOR", "1")
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
    assert_eq!(report["result"]["newSkills"], skills, "{report}");
    assert_eq!(report["packets"], skills, "{report}");

    // The pull has exited: its store and skills folder are complete.
    let data = tmp.path().join("b");
    let pulled = Store::open(&data).unwrap();
    assert_eq!(held(&pulled), expected, "names and integrity hashes");
    let packets = pulled.current_packets().unwrap();
    assert_eq!(packets.len(), skills);
    for (p, _) in &packets {
        assert_eq!(p.skill_body, packet(&p.skill_name).skill_body, "{}", p.skill_name);
        p.verify().unwrap();
        let file = data.join("skills").join(&p.skill_name).join("SKILL.md");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!("# {}\n", p.skill_name)), "{}: {text}", file.display());
    }
    the_index_holds_every_skill(&pulled, &data, &names);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The search index after a bulk pull (its rows handed to FTS5 at the end
/// of each of the pull's transactions): FTS5's own check passes, it holds
/// one row per skill, and a search for each skill's number finds that skill.
fn the_index_holds_every_skill(pulled: &Store, data: &std::path::Path, names: &[String]) {
    let db = rusqlite::Connection::open(data.join(ecp_node::store::DB_FILE)).unwrap();
    db.execute("INSERT INTO skill_search (skill_search) VALUES ('integrity-check')", []).unwrap();
    let rows: i64 = db.query_row("SELECT count(*) FROM skill_search", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, names.len() as i64, "rows of the search index after the pull");
    for name in names {
        let number = name.trim_start_matches("bulk-");
        let answer = pulled.search_text(number, Some("5"), None).unwrap().unwrap();
        let found: Vec<&str> = answer.results.iter().map(|h| h.name.as_str()).collect();
        assert!(found.contains(&name.as_str()), "search {number:?} found {found:?}, not {name}");
    }
}

/// One batch of many changes (a merged slice of a pull) is written by the
/// projection's several threads: each folder's changes in their order (a
/// new version after the first, a tombstone after an install), every file
/// recorded as the node's, and an agent's own file of a received name left
/// alone — as one thread writing them in turn would.
#[test]
fn a_large_batch_is_written_in_order_per_folder_by_several_threads() {
    use ecp_node::projection::{Projection, SKILL_FILE, Written};
    use ecp_node::store::Change;
    use ecp_protocol::SkillKind;

    use crate::util::{newer_version, tombstone};

    let tmp = tempfile::tempdir().unwrap();
    let agents = tmp.path().join("batch-0299");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(SKILL_FILE), "the agent's own\n").unwrap();
    let projection = Projection::new(tmp.path()).stamped_by("batch-node");
    let names: Vec<String> = (0..300).map(|i| format!("batch-{i:04}")).collect();
    let mut packets: Vec<_> = names.iter().map(|n| packet(n)).collect();
    packets.extend(names[..50].iter().map(|n| newer_version(n, "2026-06-01T00:00:00Z", "Version two.")));
    packets.extend(names[50..60].iter().map(|n| tombstone(n, "2026-06-01T00:00:00Z")));
    let changes: Vec<Change> = packets
        .into_iter()
        .enumerate()
        .map(|(i, packet)| Change { seq: i as i64 + 1, packet, kind: SkillKind::External, withheld: false })
        .collect();
    projection.apply(&changes).unwrap();

    for (i, name) in names.iter().enumerate() {
        let file = tmp.path().join(name).join(SKILL_FILE);
        if (50..60).contains(&i) {
            assert!(!tmp.path().join(name).exists(), "{name}: withdrawn, yet its folder is there");
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if i == 299 {
            assert_eq!(text, "the agent's own\n", "the agent's file was overwritten");
            continue;
        }
        assert_eq!(text.contains("Version two."), i < 50, "{name}: {text}");
        assert!(text.contains("ecp-node: \"batch-node\""), "{name}: not stamped: {text}");
        assert_eq!(projection.wrote(name, text.as_bytes()), Written::Own, "{name}");
    }
}

/// A round's first page asks for at most `FIRST_PAGE` packets (its merge
/// starts only once it is whole), the pages after it for the whole
/// budget: a source holding exactly `FIRST_PAGE` skills fills the first
/// page, one more comes in a second.
#[tokio::test(flavor = "multi_thread")]
async fn a_rounds_first_page_holds_first_page_packets_and_the_next_one_the_rest() {
    use ecp_node::federation::pull::FIRST_PAGE;

    let source = TestNode::start_with(|c| {
        c.origin_limits = UNLIMITED;
        c.sender_limits = UNLIMITED;
        c.default_trust = 1.0;
    })
    .await;
    push_names(&source, 0..FIRST_PAGE).await;
    let (new, pages) = pages_of_a_pull(&source).await;
    assert_eq!(new, FIRST_PAGE as u64);
    assert_eq!(pages.first(), Some(&FIRST_PAGE), "at the limit, the first page is full: {pages:?}");
    assert!(pages.iter().all(|&p| p == FIRST_PAGE), "and nothing follows: {pages:?}");

    push_names(&source, FIRST_PAGE..FIRST_PAGE + 1).await;
    let (new, pages) = pages_of_a_pull(&source).await;
    assert_eq!(new, FIRST_PAGE as u64 + 1);
    assert_eq!(pages, [FIRST_PAGE, FIRST_PAGE + 1], "one past: a second page brings the rest");
}

const UNLIMITED: OriginLimits = OriginLimits { per_hour: 0, per_day: 0 };

/// Pushes skills `first-<i>` for each `i` of `range` to `source`.
async fn push_names(source: &TestNode, range: std::ops::Range<usize>) {
    let names: Vec<String> = range.map(|i| format!("first-{i:05}")).collect();
    for chunk in names.chunks(500) {
        let packets: Vec<_> = chunk.iter().map(|n| packet(n)).collect();
        source.push_ok(&update("bulk-pusher", &packets)).await;
    }
}

/// A fresh node pulls `source` once: the new skills, and the packets
/// received so far as each page was merged.
async fn pages_of_a_pull(source: &TestNode) -> (u64, Vec<usize>) {
    use std::sync::{Arc, Mutex};

    use ecp_node::federation::{self, Context, PeerSpec, ProgressHook};

    let puller = TestNode::start_with(|c| {
        c.origin_limits = UNLIMITED;
        c.sender_limits = UNLIMITED;
    })
    .await;
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&told);
    let hook = ProgressHook::new(move |p| seen.lock().unwrap().push(p.packets));
    let ctx = Context::new(
        puller.library().clone(),
        puller.config().policy.clone(),
        false,
        std::time::Duration::from_secs(60),
    )
    .with_progress(hook);
    let spec = PeerSpec::manual(source.url("").trim_end_matches('/'), None, 1.0);
    let report = federation::pull(&ctx, &spec).await.expect("the pull");
    let pages = told.lock().unwrap().clone();
    (report.result.new_skills, pages)
}
