//! What the deletion guard keeps: the skills folders this node has marked
//! (so a folder that lost its marker is told apart from a new one), and bulk
//! deletions held until the user accepts or rejects them.
//!
//! Deciding is the caller's ([`crate::import`], [`crate::library`]); this
//! module only records. Every hold and every verdict is audited.

use std::path::Path;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Source, Store, StoreError, audit, from_json, now, to_json};

/// One held deletion, as `deletions list` and `GET /v1/deletions` show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HeldDeletion {
    /// Its id, for `deletions accept|reject ID`.
    pub id: i64,
    /// When it was held.
    pub held_at: String,
    /// Whose deletion it is (`skills-dir`: files gone from the skills folders).
    pub source: Source,
    /// The skills it would tombstone, sorted.
    pub names: Vec<String>,
}

impl Store {
    /// Whether the node has written a marker into the folder at `dir`.
    pub fn folder_marked(&self, dir: &Path) -> Result<bool, StoreError> {
        let key = dir.to_string_lossy();
        Ok(self
            .conn()
            .prepare_cached("SELECT 1 FROM folder_markers WHERE path = ?1")?
            .query_row(params![key], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Records that the node has written a marker into the folder at `dir`.
    pub fn mark_folder(&self, dir: &Path) -> Result<(), StoreError> {
        let key = dir.to_string_lossy();
        self.write(|sql| {
            sql.prepare_cached("INSERT OR IGNORE INTO folder_markers (path, marked_at) VALUES (?1, ?2)")?
                .execute(params![key, now().to_string()])?;
            Ok(())
        })
    }

    /// Holds a deletion of `names` (sorted here) by `source`; returns it.
    pub fn hold_deletion(&self, source: &Source, names: &[String]) -> Result<HeldDeletion, StoreError> {
        let mut names = names.to_vec();
        names.sort();
        let held_at = now().to_string();
        self.write(|sql| {
            sql.prepare_cached("INSERT INTO held_deletions (held_at, source, names) VALUES (?1, ?2, ?3)")?
                .execute(params![held_at, source, to_json(&names)])?;
            let id = sql.last_insert_rowid();
            let reason = format!("deletion {id} of {} skill(s) held: {}", names.len(), names.join(", "));
            audit::record(sql, source, "*", "deletion-held", &reason)?;
            Ok(HeldDeletion { id, held_at, source: source.clone(), names })
        })
    }

    /// The held deletions, oldest first.
    pub fn held_deletions(&self) -> Result<Vec<HeldDeletion>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT id, held_at, source, names FROM held_deletions ORDER BY id")?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get(1)?, row.get::<_, Source>(2)?, row.get::<_, String>(3)?))
        })?;
        rows.map(|row| {
            let (id, held_at, source, names) = row?;
            Ok(HeldDeletion { id, held_at, source, names: from_json(&names)? })
        })
        .collect()
    }

    /// Removes held deletion `id` and audits why (`decision`: what became of
    /// it); returns what it held.
    pub fn release_deletion(
        &self,
        id: i64,
        decision: &str,
        actor: &Source,
    ) -> Result<HeldDeletion, StoreError> {
        let held =
            self.held_deletions()?.into_iter().find(|d| d.id == id).ok_or(StoreError::NoSuchDeletion(id))?;
        self.write(|sql| {
            let removed =
                sql.prepare_cached("DELETE FROM held_deletions WHERE id = ?1")?.execute(params![id])?;
            if removed == 0 {
                return Err(StoreError::NoSuchDeletion(id));
            }
            let reason = format!("deletion {id} of {} skill(s): {}", held.names.len(), held.names.join(", "));
            audit::record(sql, actor, "*", decision, &reason)?;
            Ok(())
        })?;
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_deletion_is_listed_until_released_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let held = store.hold_deletion(&Source::SkillsDir, &["b".to_owned(), "a".to_owned()]).unwrap();
        assert_eq!(held.names, ["a", "b"]);
        assert_eq!(store.held_deletions().unwrap(), vec![held.clone()]);
        assert_eq!(store.release_deletion(held.id, "deletion-accepted", &Source::Operator).unwrap(), held);
        assert!(store.held_deletions().unwrap().is_empty());
        assert!(matches!(
            store.release_deletion(held.id, "deletion-accepted", &Source::Operator),
            Err(StoreError::NoSuchDeletion(id)) if id == held.id
        ));
    }

    #[test]
    fn a_folder_is_marked_once_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let folder = dir.path().join("skills");
        assert!(!store.folder_marked(&folder).unwrap());
        store.mark_folder(&folder).unwrap();
        store.mark_folder(&folder).unwrap();
        assert!(store.folder_marked(&folder).unwrap());
        assert!(!store.folder_marked(&dir.path().join("other")).unwrap());
    }
}
