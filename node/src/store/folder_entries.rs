//! What the skills-folder import keeps of each skill folder across passes
//! ([`crate::import`]): the skill a folder named otherwise holds (so an
//! edit there still imports as that skill and its deletion tombstones it,
//! even while its file does not parse), why a folder's skill is not
//! shared, and the warnings of one that is. Only such folders have a row:
//! a shared skill in a folder of its own name needs none.
//!
//! Kept in the store rather than in the server's memory so that `skill
//! list` and `status` read the same answer with or without a running
//! server, and a restart does not forget which folder holds which skill.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// Something about a shared skill its author may want to fix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShareWarning {
    /// What kind: `long-description`, `name-differs-from-folder`.
    pub code: String,
    /// What it is and what to do.
    pub message: String,
}

/// One skill folder the import passed over, warned about, or found named
/// otherwise than its skill.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderEntry {
    /// The skills folder's number (1 for the first).
    pub folder: usize,
    /// The skill's folder inside it.
    pub entry: String,
    /// The skill it holds (its frontmatter name), when known.
    pub name: Option<String>,
    /// Why it is not imported (`invalid`, `over-limit`, `collision`,
    /// `duplicate`, `symlink`, `unreadable`, `store`); `None`: imported.
    pub code: Option<String>,
    /// What went wrong and what to do, with `code`.
    pub reason: Option<String>,
    /// The warnings of an imported skill.
    pub warnings: Vec<ShareWarning>,
}

impl Store {
    /// Every kept folder entry, by folder and entry.
    pub fn folder_entries(&self) -> Result<Vec<FolderEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT folder, entry, name, code, reason, warnings FROM folder_entries ORDER BY folder, entry",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows
            .into_iter()
            .map(|(folder, entry, name, code, reason, warnings)| FolderEntry {
                folder: usize::try_from(folder).unwrap_or_default(),
                entry,
                name,
                code,
                reason,
                // Written by this module only; a row that does not parse loses its warnings, nothing else.
                warnings: serde_json::from_str(&warnings).unwrap_or_default(),
            })
            .collect())
    }

    /// Replaces every kept folder entry with `entries`, in one transaction.
    pub fn replace_folder_entries(&self, entries: &[FolderEntry]) -> Result<(), StoreError> {
        self.write(|sql| {
            sql.execute("DELETE FROM folder_entries", [])?;
            let mut insert = sql.prepare_cached(
                "INSERT OR REPLACE INTO folder_entries (folder, entry, name, code, reason, warnings)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for e in entries {
                let warnings = serde_json::to_string(&e.warnings).expect("warnings serialise");
                insert.execute(params![e.folder as i64, e.entry, e.name, e.code, e.reason, warnings])?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_replaced_whole_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.folder_entries().unwrap().is_empty());
        let warned = FolderEntry {
            folder: 1,
            entry: "template".into(),
            name: Some("template-skill".into()),
            code: None,
            reason: None,
            warnings: vec![ShareWarning { code: "name-differs-from-folder".into(), message: "m".into() }],
        };
        let skipped = FolderEntry {
            folder: 2,
            entry: "broken".into(),
            name: None,
            code: Some("invalid".into()),
            reason: Some("no frontmatter".into()),
            warnings: Vec::new(),
        };
        store.replace_folder_entries(&[skipped.clone(), warned.clone()]).unwrap();
        assert_eq!(store.folder_entries().unwrap(), [warned.clone(), skipped]);
        store.replace_folder_entries(std::slice::from_ref(&warned)).unwrap();
        assert_eq!(store.folder_entries().unwrap(), [warned]);
    }
}
