//! The audit log: every merge decision and every operator action, appended.
//!
//! Written inside the transactions that decide; after each commit the store
//! tells its observer ([`Store::observe_audit`]) what was appended, so that
//! metrics and the live event stream see exactly what was committed, once.
//! [`AuditReader`] reads it without a [`Store`]: read-only, beside a running
//! server or without one (`ecp-node audit`).

use std::path::Path;
use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{DB_FILE, Source, Store, StoreError, Tx, now};

/// One audit line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Row id, increasing.
    pub id: i64,
    /// When.
    pub at: String,
    /// Who: `peer:<id>`, `operator`, `skills-dir`, …
    pub peer: String,
    /// Which skill (`*` for a summary line).
    pub skill_name: String,
    /// What: `new`, `updated`, `rejected:<stage>`, `unchanged`, `tombstone`, …
    pub decision: String,
    /// Why, or a count for a summary line.
    pub reason: String,
}

/// Told of the audit entries each commit appended, in order; runs while the
/// store's connection is held, so it must not block or use the store.
pub type AuditObserver = Box<dyn Fn(&[AuditEntry]) + Send + Sync>;

/// Where a store keeps its observer (one, set once).
#[derive(Default)]
pub(super) struct ObserverSlot(OnceLock<AuditObserver>);

impl std::fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "ObserverSlot(set)" } else { "ObserverSlot(empty)" })
    }
}

/// Which audit entries to read.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    /// Only entries after this id (0: from the first).
    pub after: i64,
    /// Only entries at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only entries about this skill.
    pub skill: Option<String>,
    /// Only entries by this actor, as stored (`peer:<instance>`, `operator`, …).
    pub actor: Option<String>,
}

/// The most entries one read returns; callers page on with [`AuditFilter::after`].
pub const AUDIT_PAGE: usize = 1_000;

pub(super) fn record(
    conn: &Connection,
    actor: &Source,
    skill_name: &str,
    decision: &str,
    reason: &str,
) -> Result<(), StoreError> {
    let actor = super::source::actor_id(conn, actor)?;
    conn.prepare_cached(
        "INSERT INTO audit (at_time, actor, skill_name, decision, reason) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![super::compact::time(now()), actor, skill_name, decision, reason])?;
    Ok(())
}

/// An audit line's time as the wire's text (compact.rs), from its `au` row.
macro_rules! at_text {
    () => {
        super::compact::time_text!("au.at_time")
    };
}

fn entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        id: row.get(0)?,
        at: row.get(1)?,
        peer: row.get(2)?,
        skill_name: row.get(3)?,
        decision: row.get(4)?,
        reason: row.get(5)?,
    })
}

/// Up to `limit` entries matching `filter`, oldest first.
fn read(conn: &Connection, filter: &AuditFilter, limit: usize) -> Result<Vec<AuditEntry>, StoreError> {
    // Times are kept as integer nanoseconds (migration 23), compared as
    // they are; the odd one kept as text (a time before 1970, or text that
    // does not display as its instant) is read as a time by SQLite, to the
    // millisecond, as all of them were before.
    let since_ns = filter.since.and_then(|t| t.timestamp_nanos_opt());
    let since_text = filter.since.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let mut stmt = conn.prepare_cached(
        concat!(
            "SELECT au.id, ",
            at_text!(),
            ", a.name, au.skill_name, au.decision, au.reason FROM audit au JOIN actors a ON a.id = au.actor
             WHERE au.id > ?1 AND (?2 IS NULL OR au.skill_name = ?2)
               AND (?3 IS NULL OR au.actor = (SELECT id FROM actors WHERE name = ?3))
               AND (?4 IS NULL OR CASE WHEN typeof(au.at_time) = 'integer' AND ?6 IS NOT NULL THEN au.at_time >= ?6
                                       ELSE julianday(",
            at_text!(),
            ") >= julianday(?4) END)
             ORDER BY au.id LIMIT ?5"
        ),
    )?;
    let rows = stmt.query_map(
        params![filter.after, filter.skill, filter.actor, since_text, limit as i64, since_ns],
        entry,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Tx<'_> {
    /// Appends an audit line: `actor` decided `decision` about `skill_name`
    /// (`*` for a summary line) because of `reason`.
    pub fn audit(
        &self,
        actor: &Source,
        skill_name: &str,
        decision: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        record(self.sql, actor, skill_name, decision, reason)
    }
}

impl Store {
    /// The newest `limit` audit entries, newest first.
    pub fn audit(&self, limit: usize) -> Result<Vec<AuditEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(concat!(
            "SELECT au.id, ",
            at_text!(),
            ", a.name, au.skill_name, au.decision, au.reason
                 FROM audit au JOIN actors a ON a.id = au.actor ORDER BY au.id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map(params![limit as i64], entry)?.collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Tells `observer` of every audit entry appended from now on, after
    /// the commit that appended it (entries other processes appended
    /// meanwhile come with this process's next commit). One observer per
    /// store: a second call is ignored.
    pub fn observe_audit(&self, observer: AuditObserver) -> Result<(), StoreError> {
        let conn = self.conn();
        let newest: i64 = conn.query_row("SELECT COALESCE(MAX(id), 0) FROM audit", [], |r| r.get(0))?;
        self.observed.store(newest, std::sync::atomic::Ordering::SeqCst);
        let _ = self.observer.0.set(observer);
        Ok(())
    }

    /// After a commit, with its connection still held (so observers see
    /// entries in order): tells the observer what was appended. The commit
    /// stands whatever happens here.
    pub(super) fn tell_observer(&self, conn: &Connection) {
        let Some(observer) = self.observer.0.get() else { return };
        let after = self.observed.load(std::sync::atomic::Ordering::SeqCst);
        let filter = AuditFilter { after, ..AuditFilter::default() };
        // Unbounded on purpose: a merge of N packets appends up to N lines,
        // all of which the observer must see; N is bounded by the update size.
        match read(conn, &filter, usize::MAX >> 1) {
            Ok(entries) => {
                if let Some(last) = entries.last() {
                    self.observed.store(last.id, std::sync::atomic::Ordering::SeqCst);
                    observer(&entries);
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the audit entries just committed; metrics and events miss them")
            }
        }
    }
}

/// Read-only access to a data folder's audit log, with or without a server
/// running on it: never creates, migrates or writes anything.
#[derive(Debug)]
pub struct AuditReader {
    conn: Connection,
}

impl AuditReader {
    /// Opens the audit log of the data folder `dir`; fails when it holds no
    /// ecp-node database.
    pub fn open(dir: &Path) -> Result<AuditReader, StoreError> {
        let path = dir.join(DB_FILE);
        if !path.is_file() {
            return Err(StoreError::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "no {DB_FILE} in the data folder: it holds no ecp-node data (pass the node's --data)"
                ),
            )));
        }
        let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.busy_timeout(super::BUSY_TIMEOUT)?;
        Ok(AuditReader { conn })
    }

    /// Up to [`AUDIT_PAGE`] entries matching `filter`, oldest first.
    pub fn read(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        read(&self.conn, filter, AUDIT_PAGE)
    }

    /// The actor label of the peer at `url` (`peer:<instance>`), if the node
    /// has contacted it.
    pub fn peer_actor(&self, url: &str) -> Result<Option<String>, StoreError> {
        let url = url.trim_end_matches('/');
        let instance: Option<String> = self
            .conn
            .query_row("SELECT instance FROM peers WHERE url = ?1 AND instance != ''", params![url], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(instance.map(|i| Source::Peer(i).to_string()))
    }
}
