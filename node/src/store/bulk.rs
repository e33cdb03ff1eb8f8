//! A bulk pull's journal (#18 item 2): while `ecp-node pull` fills an empty
//! store, SQLite keeps a rollback journal instead of the WAL; the store
//! goes back to WAL when the pull ends, and at every open.
//!
//! Why: in WAL mode every page a commit dirties is written twice, as a frame
//! and then by a checkpoint into the database. With a rollback journal a
//! commit writes the pages it changed into the database once, and journals
//! the old copies of those that existed when its transaction began — pages
//! appended past the database's end are not journaled. Into an empty store
//! most pages of a pull are new, so it writes each of them once.
//!
//! When: the store holds at most [`BULK_MAX_SKILLS`] skills, and no other
//! connection has the database open. SQLite tells the second: leaving WAL
//! mode needs the database's exclusive lock, which a connection of another
//! process in WAL mode (a `serve`, another command) keeps from us while it
//! is open; asked without waiting, the switch fails and the pull stays in
//! WAL mode.
//!
//! Crash safety is the rollback journal's: the journal is synced before
//! the database is written, and a journal left by a crash (a "hot"
//! journal) is rolled back by the next connection's first read, before
//! [`Store::open`] sets WAL mode again. In bulk mode the connection runs
//! with `synchronous = NORMAL`: a commit syncs the journal once (its old
//! pages, its header counting them by the file's length) and the database
//! once, where FULL also syncs the journal's header after writing its
//! count and the journal's truncation (#18 item 1, tenth pass). A pull's
//! commits acknowledge nothing to anyone; what a power loss can then
//! cost is the last commit (a truncation not yet on disk leaves the
//! journal hot, and the next open rolls that commit back), never the
//! store's consistency: it opens as of the commit before, and the pull's
//! cursor, saved after the slices of its page, brings the page again.
//! [`Store::end_bulk`] and every [`Store::open`] set FULL again.
//!
//! A `serve` (or any command) started while the pull runs switches the
//! database back to WAL as it opens, in a pause between two of the pull's
//! transactions; the pull's connection then follows in WAL mode. The
//! pauses are short, so the open says that it waits for the pull and
//! waits ([`wal_at_open`]) rather than fail "database is locked" when its
//! busy timeout runs out. Nothing else in this process may open a second
//! connection meanwhile ([`Store::checkpoint_beside`] is not called in
//! bulk mode).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::{BUSY_TIMEOUT, Store, StoreError};

/// A store holding more skills than this is not filled in bulk mode: its
/// pages exist already, and a rollback journal would copy each one a
/// commit changes as the WAL does, with two more syncs per commit.
pub const BULK_MAX_SKILLS: i64 = 1_000;

/// The rollback journal kept in bulk mode: truncated at each commit rather
/// than deleted (a file made and removed per commit is two more changes
/// to the data folder's directory).
const BULK_JOURNAL: &str = "truncate";

impl Store {
    /// Switches the store to a rollback journal for a bulk fill when it
    /// holds at most [`BULK_MAX_SKILLS`] skills and no other connection
    /// has it open; `true` when it did. Never waits for another process.
    /// [`Store::end_bulk`] switches back.
    pub fn begin_bulk(&self) -> Result<bool, StoreError> {
        let conn = self.conn();
        let held: i64 = conn.query_row(
            "SELECT count(*) FROM (SELECT 1 FROM skills LIMIT ?1)",
            [BULK_MAX_SKILLS + 1],
            |r| r.get(0),
        )?;
        if held > BULK_MAX_SKILLS {
            return Ok(false);
        }
        conn.busy_timeout(std::time::Duration::ZERO)?;
        let switched = set_journal(&conn, BULK_JOURNAL);
        conn.busy_timeout(BUSY_TIMEOUT)?;
        match switched {
            Ok(mode) if mode == BULK_JOURNAL => {
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                Ok(true)
            }
            Ok(_) => Ok(false),
            // Another connection holds the database: stay in WAL mode.
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DatabaseBusy => {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Switches the store back to WAL mode (a no-op when it is in it),
    /// waiting for another connection's transaction as any write does.
    pub fn end_bulk(&self) -> Result<(), StoreError> {
        let conn = self.conn();
        let mode = set_journal(&conn, "wal")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        if mode != "wal" {
            return Err(StoreError::Corrupt(format!("the journal stayed {mode:?}, not WAL")));
        }
        Ok(())
    }

    /// The journal mode the store's connection is in (`wal`, or `truncate`
    /// in bulk mode).
    pub fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(self.conn().pragma_query_value(None, "journal_mode", |row| row.get(0))?)
    }
}

/// Most time an open waits for another process's bulk fill to end
/// ([`wal_at_open`]) before it gives up and says why.
const BULK_WAIT: Duration = Duration::from_secs(300);

/// How long one attempt of [`wal_at_open`] waits for the database.
const ATTEMPT: Duration = Duration::from_millis(100);

/// Puts `conn` (an opening store's, on the database file `db`) in WAL mode.
/// While another process fills the store in bulk mode (`ecp-node pull`),
/// the switch needs the database to itself, and the pull's transactions
/// follow each other within milliseconds: a busy timeout may run out
/// before a pause comes, and the open failed "database is locked". So it
/// asks in short attempts; while the database file says a bulk fill is on,
/// it says once that it waits for the pull, and waits at most
/// [`BULK_WAIT`] (then fails naming the pull); otherwise it waits for the
/// store's busy timeout, as any statement does.
pub(super) fn wal_at_open(conn: &Connection, db: &Path) -> Result<(), StoreError> {
    conn.busy_timeout(ATTEMPT)?;
    let switched = switch_to_wal(conn, db);
    conn.busy_timeout(BUSY_TIMEOUT)?;
    switched
}

fn switch_to_wal(conn: &Connection, db: &Path) -> Result<(), StoreError> {
    let started = Instant::now();
    let mut told = false;
    loop {
        let busy = match set_journal(conn, "wal") {
            Ok(_) => return Ok(()),
            Err(e @ rusqlite::Error::SqliteFailure(ffi, _))
                if ffi.code == rusqlite::ErrorCode::DatabaseBusy =>
            {
                e
            }
            Err(e) => return Err(e.into()),
        };
        let waited = started.elapsed();
        if filled_in_bulk(db) {
            if waited >= BULK_WAIT {
                return Err(StoreError::BulkFill(BULK_WAIT.as_secs()));
            }
            if !told {
                tracing::warn!(
                    "another process (`ecp-node pull` into an empty store) is filling this store with a \
                     rollback journal; waiting for a pause between its transactions, or its end"
                );
                told = true;
            }
        } else if waited >= BUSY_TIMEOUT {
            // As the statement would have failed with the store's own timeout.
            return Err(busy.into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the database file says it is in a rollback journal mode (its
/// header's write version, byte 18: 1 legacy, 2 WAL): a store in WAL mode
/// between two runs is never left so but by a bulk fill, running or killed.
fn filled_in_bulk(db: &Path) -> bool {
    use std::os::unix::fs::FileExt as _;
    let mut version = [0u8; 1];
    std::fs::File::open(db).and_then(|f| f.read_exact_at(&mut version, 18)).is_ok_and(|()| version[0] == 1)
}

/// Asks for journal `mode`; SQLite answers the mode it is in after.
fn set_journal(conn: &Connection, mode: &str) -> Result<String, rusqlite::Error> {
    let now: String = conn.pragma_update_and_check(None, "journal_mode", mode, |row| row.get(0))?;
    Ok(now.to_ascii_lowercase())
}

#[cfg(test)]
#[path = "bulk_tests.rs"]
mod tests;
