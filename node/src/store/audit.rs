//! The audit log: every merge decision and every operator action, appended.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::{Source, Store, StoreError, Tx, now};

/// One audit line.
#[derive(Debug, Clone, Serialize)]
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

pub(super) fn record(
    conn: &Connection,
    actor: &Source,
    skill_name: &str,
    decision: &str,
    reason: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO audit (at, peer, skill_name, decision, reason) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![now().to_string(), actor, skill_name, decision, reason])?;
    Ok(())
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
        let mut stmt = conn.prepare_cached(
            "SELECT id, at, peer, skill_name, decision, reason FROM audit ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = stmt
            .query_map(params![limit as i64], |row| {
                Ok(AuditEntry {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    peer: row.get(2)?,
                    skill_name: row.get(3)?,
                    decision: row.get(4)?,
                    reason: row.get(5)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}
