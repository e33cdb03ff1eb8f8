//! Bulk mode's tests: when it applies, what it leaves, and a second
//! connection meanwhile.

use super::*;
use crate::store::{DB_FILE, Source, now};
use ecp_protocol::{Origin, SkillKind, SkillPacket};
use std::time::{Duration, Instant};

fn packet(name: &str) -> SkillPacket {
    SkillPacket::new(
        &Origin::new("i", "u", "linux/amd64", "1"),
        name,
        "d",
        &format!("---\nname: {name}\ndescription: d\n---\nbody of {name}\n"),
        0.9,
        now(),
    )
}

fn install(store: &Store, names: impl IntoIterator<Item = String>) {
    store
        .transaction(|tx| {
            for name in names {
                tx.install(&packet(&name), SkillKind::External, true, &Source::Operator)?;
            }
            Ok(())
        })
        .unwrap();
}

fn count(store: &Store) -> usize {
    store.list_skills().unwrap().len()
}

#[test]
fn an_empty_store_is_filled_with_a_rollback_journal_and_goes_back_to_wal() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert!(store.begin_bulk().unwrap());
    assert_eq!(store.journal_mode().unwrap(), "truncate");
    assert!(!dir.path().join(format!("{DB_FILE}-wal")).exists(), "the WAL was folded in and removed");
    install(&store, (0..50).map(|i| format!("s-{i}")));
    install(&store, (50..60).map(|i| format!("s-{i}")));
    store.end_bulk().unwrap();
    assert_eq!(store.journal_mode().unwrap(), "wal");
    install(&store, ["after".to_owned()]);
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.journal_mode().unwrap(), "wal");
    assert_eq!(count(&store), 61);
}

/// 0 OFF, 1 NORMAL, 2 FULL.
fn synchronous(store: &Store) -> i64 {
    store.conn().pragma_query_value(None, "synchronous", |row| row.get(0)).unwrap()
}

#[test]
fn a_bulk_fill_syncs_as_normal_and_the_store_is_full_again_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(synchronous(&store), 2);
    assert!(store.begin_bulk().unwrap());
    assert_eq!(synchronous(&store), 1, "one sync fewer per commit while the pull fills the store");
    install(&store, ["a".to_owned()]);
    store.end_bulk().unwrap();
    assert_eq!(synchronous(&store), 2);
    // Refused (a store past the limit, or another connection): FULL stays.
    let other = Store::open(dir.path()).unwrap();
    other.sequence().unwrap();
    assert!(!store.begin_bulk().unwrap());
    assert_eq!(synchronous(&store), 2);
    drop(other);
    // A pull that ended without end_bulk: the next open is FULL.
    assert!(store.begin_bulk().unwrap());
    drop(store);
    assert_eq!(synchronous(&Store::open(dir.path()).unwrap()), 2);
}

#[test]
fn a_store_left_in_bulk_mode_opens_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert!(store.begin_bulk().unwrap());
    install(&store, ["kept".to_owned()]);
    // The pull ends without end_bulk (an error, a kill between commits).
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.journal_mode().unwrap(), "wal");
    assert!(store.skill("kept").unwrap().is_some());
}

#[test]
fn another_connection_keeps_the_store_in_wal_mode_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let other = Store::open(dir.path()).unwrap();
    other.sequence().unwrap();
    let started = std::time::Instant::now();
    assert!(!store.begin_bulk().unwrap(), "another connection has the database open");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "it did not wait for the busy timeout");
    assert_eq!(store.journal_mode().unwrap(), "wal");
    install(&store, ["a".to_owned()]);
    assert!(other.skill("a").unwrap().is_some());
    drop(other);
    assert!(store.begin_bulk().unwrap(), "alone again");
}

#[test]
fn bulk_mode_applies_up_to_its_limit_of_skills_held_and_not_one_past() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    install(&store, (0..BULK_MAX_SKILLS).map(|i| format!("s-{i}")));
    assert!(store.begin_bulk().unwrap(), "at the limit");
    store.end_bulk().unwrap();
    install(&store, ["one-more".to_owned()]);
    assert!(!store.begin_bulk().unwrap(), "one past it");
    assert_eq!(store.journal_mode().unwrap(), "wal");
}

/// A `serve` starting while a pull fills the store: its open switches the
/// database back to WAL between two of the pull's transactions, and both
/// then read and write one database.
#[test]
fn a_second_store_opened_in_bulk_mode_switches_it_back_to_wal_and_both_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let pull = Store::open(dir.path()).unwrap();
    assert!(pull.begin_bulk().unwrap());
    install(&pull, ["before".to_owned()]);
    let serve = Store::open(dir.path()).unwrap();
    assert_eq!(serve.journal_mode().unwrap(), "wal");
    install(&pull, ["during".to_owned()]);
    assert_eq!(pull.journal_mode().unwrap(), "wal", "the pull's connection follows");
    install(&serve, ["served".to_owned()]);
    for name in ["before", "during", "served"] {
        assert!(pull.skill(name).unwrap().is_some(), "{name}");
        assert!(serve.skill(name).unwrap().is_some(), "{name}");
    }
    pull.end_bulk().unwrap();
    drop(pull);
    drop(serve);
    assert_eq!(count(&Store::open(dir.path()).unwrap()), 3);
}

/// A `serve` opening while a pull holds a write transaction in bulk mode
/// (longer than one attempt, shorter than the busy timeout would be
/// noticed): the open waits for it and switches to WAL, and the pull's
/// commit goes through.
#[test]
fn an_open_during_a_bulk_fill_waits_for_its_transaction_and_goes_on_in_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(DB_FILE);
    let pull = Store::open(dir.path()).unwrap();
    assert!(!filled_in_bulk(&db), "WAL mode");
    assert!(pull.begin_bulk().unwrap());
    assert!(filled_in_bulk(&db), "a rollback journal");
    let held = Duration::from_millis(1_500);
    std::thread::scope(|s| {
        let (began, begun) = std::sync::mpsc::channel();
        let pull = &pull;
        s.spawn(move || {
            let conn = pull.conn();
            conn.execute_batch("BEGIN IMMEDIATE; CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1);")
                .unwrap();
            began.send(()).unwrap();
            std::thread::sleep(held);
            conn.execute_batch("COMMIT").unwrap();
        });
        begun.recv().unwrap();
        let started = Instant::now();
        let serve = Store::open(dir.path()).unwrap();
        assert!(started.elapsed() >= held - Duration::from_millis(200), "{:?}", started.elapsed());
        assert_eq!(serve.journal_mode().unwrap(), "wal");
        let rows: i64 = serve.conn().query_row("SELECT count(*) FROM scratch", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1, "the pull's transaction committed");
    });
    assert!(!filled_in_bulk(&db));
    assert!(!filled_in_bulk(&dir.path().join("missing")));
}
