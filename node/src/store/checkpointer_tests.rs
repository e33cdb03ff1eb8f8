//! The checkpointer: the commit only notes, the thread copies, the close
//! still deletes the WAL.

use super::*;

/// A WAL database in `dir` with the note installed, and its path.
fn database(dir: &std::path::Path) -> (Connection, PathBuf) {
    let path = dir.join("db.sqlite3");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "page_size", 4096).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    install(&conn);
    conn.execute_batch("CREATE TABLE t (b BLOB)").unwrap();
    (conn, path)
}

fn file_len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn the_wal_is_long_at_its_threshold_and_not_one_page_before() {
    WAL_LENGTH.with(|n| n.set(WAL_PAGES - 1));
    assert!(!wal_is_long());
    WAL_LENGTH.with(|n| n.set(WAL_PAGES));
    assert!(wal_is_long());
    assert!(!wal_is_long(), "the note is taken");
}

#[test]
fn a_commit_past_the_threshold_leaves_the_copy_to_the_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, path) = database(dir.path());
    let before = file_len(&path);
    // Past the threshold in one commit: 17 MB of overflow pages.
    conn.execute("INSERT INTO t VALUES (zeroblob(17000000))", []).unwrap();
    let noted = WAL_LENGTH.with(Cell::get);
    assert!(noted >= WAL_PAGES, "the hook noted {noted} pages");
    // SQLite's automatic checkpoint would have copied them inside the commit.
    assert_eq!(file_len(&path), before, "the commit copied nothing to the database file");
    let checkpointer = Checkpointer::new(path.clone());
    checkpointer.after_commit();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while file_len(&path) < 17_000_000 {
        assert!(std::time::Instant::now() < deadline, "the thread never copied the pages");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once the thread's checkpoint has ended, the next commit restarts the WAL.
    checkpointer.stop();
    conn.execute("INSERT INTO t VALUES (x'01')", []).unwrap();
    let after = WAL_LENGTH.with(Cell::get);
    assert!(after < 16, "the WAL restarted after the copy: {after} pages");
}

#[test]
fn a_commit_under_the_threshold_asks_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, path) = database(dir.path());
    conn.execute("INSERT INTO t VALUES (zeroblob(100000))", []).unwrap();
    let checkpointer = Checkpointer::new(path);
    checkpointer.after_commit();
    assert!(checkpointer.worker.lock().unwrap().is_none(), "no thread made");
}

#[test]
fn the_store_closes_its_wal_after_the_thread_has_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::store::Store::open(dir.path()).unwrap();
    store.checkpointer.request();
    assert!(store.checkpointer.worker.lock().unwrap().is_some());
    let wal = dir.path().join(format!("{}-wal", crate::store::DB_FILE));
    assert!(wal.exists());
    drop(store);
    // The thread's connection closed first: the store's was the last, and
    // its close checkpointed the rest and removed the WAL.
    assert!(!wal.exists(), "the WAL outlived the store");
}
