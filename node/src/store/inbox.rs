//! The inbox of review intake (`[policy] intake = "review"`): received
//! skills the store holds — and serves as usual — that wait for the user
//! before they reach the agent's skills folder, and the user's verdicts on
//! versions, by name and `integrityHash`.
//!
//! One pending entry per skill. Every change of a skill withdraws its entry
//! ([`withdraw`], called by each install): a newer version is offered again
//! under a new id (ids are never reused, so accepting an id accepts the very
//! content shown under it); a tombstone or a local skill of that name leaves
//! nothing to review. A version the user decided on is never offered again.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{Source, Store, StoreError, Tx, audit, now};

/// The user's verdict on a version of a received skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// It may reach the agent's folder.
    Accepted,
    /// It stays out of the agent's folder and is not offered again.
    Rejected,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
        }
    }
}

/// What became of a version offered to the inbox ([`Tx::offer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Waiting for the user under this entry id.
    Pending(i64),
    /// The user accepted this very version before: it may be shown.
    Accepted,
    /// The user rejected this very version before: it stays out.
    Rejected,
}

/// One pending entry, as `inbox list` and `GET /v1/inbox` show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxEntry {
    /// Entry id, for `inbox show|accept|reject ID`.
    pub id: i64,
    /// The skill's name.
    pub skill_name: String,
    /// `integrityHash` of the version waiting.
    pub integrity_hash: String,
    /// Who sent it.
    pub peer: Source,
    /// When it arrived.
    pub received_at: String,
    /// Its `originInstance`.
    pub origin: String,
    /// Its stored (lowered) confidence.
    pub confidence: f64,
    /// Its one-line description.
    pub description: String,
    /// Whether the user accepted an earlier version (so this one is an update).
    pub update: bool,
}

const ENTRY_SELECT: &str = "SELECT i.id, i.skill_name, i.integrity_hash, i.peer, i.received_at, s.origin, \
                            s.confidence, s.description,
                                   EXISTS (SELECT 1 FROM inbox_decisions d
                                           WHERE d.skill_name = i.skill_name AND d.decision = 'accepted')
                            FROM inbox i JOIN skills s ON s.name = i.skill_name";

fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<InboxEntry> {
    Ok(InboxEntry {
        id: row.get(0)?,
        skill_name: row.get(1)?,
        integrity_hash: row.get(2)?,
        peer: row.get(3)?,
        received_at: row.get(4)?,
        origin: row.get(5)?,
        confidence: row.get(6)?,
        description: row.get(7)?,
        update: row.get(8)?,
    })
}

fn entry(conn: &Connection, id: i64) -> Result<InboxEntry, StoreError> {
    conn.prepare_cached(&format!("{ENTRY_SELECT} WHERE i.id = ?1"))?
        .query_row(params![id], entry_from_row)
        .optional()?
        .ok_or(StoreError::NoSuchInboxEntry(id))
}

/// Withdraws the pending entry of `name`, if any, because `source` changed
/// the skill (to a tombstone when `deprecated`); audited. Every install
/// calls it: what the entry showed is no longer what the store holds.
pub(super) fn withdraw(
    conn: &Connection,
    name: &str,
    source: &Source,
    deprecated: bool,
) -> Result<(), StoreError> {
    let withdrawn: Option<i64> = conn
        .prepare_cached("DELETE FROM inbox WHERE skill_name = ?1 RETURNING id")?
        .query_row(params![name], |row| row.get(0))
        .optional()?;
    if let Some(id) = withdrawn {
        let why = if deprecated { "the skill was withdrawn (tombstone)" } else { "the skill changed" };
        audit::record(conn, source, name, "inbox-withdrawn", &format!("entry {id}: {why}"))?;
    }
    Ok(())
}

impl Tx<'_> {
    /// Offers the version `hash` of `name`, just installed from `source`,
    /// to the inbox — unless the user already decided on that very version.
    pub fn offer(&self, name: &str, hash: &str, source: &Source) -> Result<Offer, StoreError> {
        let decided: Option<String> = self
            .sql
            .prepare_cached(
                "SELECT decision FROM inbox_decisions WHERE skill_name = ?1 AND integrity_hash = ?2",
            )?
            .query_row(params![name, hash], |row| row.get(0))
            .optional()?;
        match decided.as_deref() {
            Some("accepted") => return Ok(Offer::Accepted),
            Some(_) => return Ok(Offer::Rejected),
            None => {}
        }
        let id = self
            .sql
            .prepare_cached(
                // The install just withdrew any older entry of the name.
                "INSERT INTO inbox (skill_name, integrity_hash, peer, received_at) VALUES (?1, ?2, ?3, ?4)
                 RETURNING id",
            )?
            .query_row(params![name, hash, source, now().to_string()], |row| row.get(0))?;
        Ok(Offer::Pending(id))
    }

    /// Records the user's `verdict` on pending entry `id` and removes the
    /// entry; audited. Returns the entry as it was.
    pub fn decide(&self, id: i64, verdict: Verdict) -> Result<InboxEntry, StoreError> {
        let entry = entry(self.sql, id)?;
        self.sql.prepare_cached("DELETE FROM inbox WHERE id = ?1")?.execute(params![id])?;
        self.record_verdict(&entry.skill_name, &entry.integrity_hash, verdict)?;
        let reason = format!(
            "entry {id} from {}, origin {:?}, integrityHash {}",
            entry.peer, entry.origin, entry.integrity_hash
        );
        self.audit(&Source::Operator, &entry.skill_name, &format!("inbox-{}", verdict.label()), &reason)?;
        Ok(entry)
    }

    /// Records `verdict` on version `hash` of `name` (an operator's approval
    /// from the quarantine is an acceptance too).
    pub fn record_verdict(&self, name: &str, hash: &str, verdict: Verdict) -> Result<(), StoreError> {
        self.sql
            .prepare_cached(
                "INSERT INTO inbox_decisions (skill_name, integrity_hash, decision, decided_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (skill_name, integrity_hash) DO UPDATE SET
                     decision = excluded.decision, decided_at = excluded.decided_at",
            )?
            .execute(params![name, hash, verdict.label(), now().to_string()])?;
        Ok(())
    }

    /// Every pending entry id, oldest first.
    pub fn inbox_ids(&self) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.sql.prepare_cached("SELECT id FROM inbox ORDER BY id")?;
        let ids = stmt.query_map([], |row| row.get(0))?.collect::<Result<Vec<_>, _>>()?;
        Ok(ids)
    }
}

impl Store {
    /// Pending entries, oldest first.
    pub fn inbox(&self) -> Result<Vec<InboxEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{ENTRY_SELECT} ORDER BY i.id"))?;
        let rows = stmt.query_map([], entry_from_row)?.collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// One pending entry ([`StoreError::NoSuchInboxEntry`] when there is none).
    pub fn inbox_entry(&self, id: i64) -> Result<InboxEntry, StoreError> {
        entry(&self.conn(), id)
    }

    /// The skills the folder must not show as the store holds them: those
    /// waiting in the inbox, and those whose current version was rejected.
    /// The projection leaves their files as they are.
    pub fn withheld_from_folder(&self) -> Result<HashSet<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT skill_name FROM inbox
             UNION
             SELECT d.skill_name FROM inbox_decisions d
             JOIN skills s ON s.name = d.skill_name AND s.integrity_hash = d.integrity_hash
             WHERE d.decision = 'rejected' AND s.deprecated = 0",
        )?;
        let names = stmt.query_map([], |row| row.get(0))?.collect::<Result<HashSet<_>, _>>()?;
        Ok(names)
    }
}
