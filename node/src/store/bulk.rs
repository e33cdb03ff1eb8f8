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
//! Crash safety is the rollback journal's, with `synchronous = FULL`: the
//! journal is synced before the database is written, and a journal left by
//! a crash (a "hot" journal) is rolled back by the next connection's first
//! read, before [`Store::open`] sets WAL mode again. A `serve` started
//! while the pull runs switches the database back to WAL as it opens (its
//! `journal_mode` waits for the pull's current transaction to end, up to
//! the store's busy timeout); the pull's connection then follows in WAL
//! mode. Nothing else in this process may open a second connection
//! meanwhile ([`Store::checkpoint_beside`] is not called in bulk mode).

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
            Ok(mode) => Ok(mode == BULK_JOURNAL),
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
        let mode = set_journal(&self.conn(), "wal")?;
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

/// Asks for journal `mode`; SQLite answers the mode it is in after.
fn set_journal(conn: &Connection, mode: &str) -> Result<String, rusqlite::Error> {
    let now: String = conn.pragma_update_and_check(None, "journal_mode", mode, |row| row.get(0))?;
    Ok(now.to_ascii_lowercase())
}

#[cfg(test)]
#[path = "bulk_tests.rs"]
mod tests;
