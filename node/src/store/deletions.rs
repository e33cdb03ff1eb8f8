//! What the deletion guard keeps: the skills folders this node has marked
//! (so a folder that lost its marker is told apart from a new one), and bulk
//! deletions held until the user accepts or rejects them — the skills
//! folder's, and withdrawals received from a peer ([`Received`]).
//!
//! Deciding is the caller's ([`crate::import`], [`crate::library`],
//! [`crate::intake`]); this module only records and counts. Every hold and
//! every verdict is audited.

use std::collections::HashMap;
use std::path::Path;

use ecp_protocol::SkillPacket;
use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::{Source, Store, StoreError, Tx, audit, from_json, now, to_json};

/// One held deletion, as `deletions list` and `GET /v1/deletions` show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HeldDeletion {
    /// Its id, for `deletions accept|reject ID`.
    pub id: i64,
    /// When it was held.
    pub held_at: String,
    /// Whose deletion it is (`skills-dir`: files gone from the skills
    /// folders; `peer:<instance>`: withdrawals that peer sent).
    pub source: Source,
    /// The skills it would tombstone, sorted.
    pub names: Vec<String>,
    /// For received withdrawals, who the node verified sent them
    /// (`peer:<url>`, or `addr:<ip>` for a push); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// Withdrawals received from a peer and held: what accepting them needs to
/// merge them again as they came (the sender as the merge saw it, and the
/// tombstones as received).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Received {
    /// Who the node verified sent them ([`crate::intake::Sender::account`]).
    pub account: String,
    /// The trust the sender had.
    pub trust: f64,
    /// Whether the sender's skills were re-served.
    pub reshare: bool,
    /// The tombstones, as received.
    pub packets: Vec<SkillPacket>,
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
        self.write(|sql| insert_held(sql, source, names, None))
    }

    /// The withdrawals `source` sent that are held ([`Received`]), when
    /// deletion `id` is one; `None` for the skills folder's.
    pub fn received_deletion(&self, id: i64) -> Result<Option<Received>, StoreError> {
        let received: Option<Option<String>> = self
            .conn()
            .prepare_cached("SELECT received FROM held_deletions WHERE id = ?1")?
            .query_row(params![id], |row| row.get(0))
            .optional()?;
        received.ok_or(StoreError::NoSuchDeletion(id))?.map(|text| from_json(&text)).transpose()
    }

    /// The held deletions, oldest first.
    pub fn held_deletions(&self) -> Result<Vec<HeldDeletion>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, held_at, source, names, json_extract(received, '$.account') FROM held_deletions ORDER BY id",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get(1)?,
                row.get::<_, Source>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, Option<String>>(4)?,
            ))
        })?;
        rows.map(|row| {
            let (id, held_at, source, names, via) = row?;
            Ok(HeldDeletion { id, held_at, source, names: from_json(&names)?, via })
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

impl Tx<'_> {
    /// How many skills a withdrawal of `names` by `source` weighs against:
    /// the active skills whose current version `source` brought, and those
    /// of `names` held from anyone else (so the share is at most 1).
    pub fn held_from(&self, source: &Source, names: &[String]) -> Result<usize, StoreError> {
        let count: i64 = self
            .sql
            .prepare_cached(
                "SELECT COUNT(*) FROM skills s JOIN skill_versions v ON v.name = s.name AND v.version = s.version
                 WHERE s.deprecated = 0
                   AND (v.actor = (SELECT id FROM actors WHERE name = ?1)
                        OR s.name IN (SELECT value FROM json_each(?2)))",
            )?
            .query_row(params![source, to_json(&names)], |row| row.get(0))?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The skills of the deletions held from `source`, each with its deletion's id.
    pub fn held_names(&self, source: &Source) -> Result<HashMap<String, i64>, StoreError> {
        let mut stmt = self.sql.prepare_cached("SELECT id, names FROM held_deletions WHERE source = ?1")?;
        let rows =
            stmt.query_map(params![source], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?;
        let mut held = HashMap::new();
        for row in rows {
            let (id, names) = row?;
            for name in from_json::<Vec<String>>(&names)? {
                held.insert(name, id);
            }
        }
        Ok(held)
    }

    /// Holds the withdrawals `received` from `source`; returns the deletion.
    pub fn hold_received(&self, source: &Source, received: &Received) -> Result<HeldDeletion, StoreError> {
        let names: Vec<String> = received.packets.iter().map(|p| p.skill_name.clone()).collect();
        let mut held = insert_held(self.sql, source, &names, Some(received))?;
        held.via = Some(received.account.clone());
        Ok(held)
    }
}

/// Records a held deletion and audits it.
fn insert_held(
    sql: &Transaction<'_>,
    source: &Source,
    names: &[String],
    received: Option<&Received>,
) -> Result<HeldDeletion, StoreError> {
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    let held_at = now().to_string();
    sql.prepare_cached(
        "INSERT INTO held_deletions (held_at, source, names, received) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![held_at, source, to_json(&names), received.map(to_json)])?;
    let id = sql.last_insert_rowid();
    let reason = format!("deletion {id} of {} skill(s) held: {}", names.len(), names.join(", "));
    audit::record(sql, source, "*", "deletion-held", &reason)?;
    Ok(HeldDeletion { id, held_at, source: source.clone(), names, via: None })
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
    fn a_peers_held_withdrawals_keep_their_sender_and_tombstones_the_folders_have_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let local = store.hold_deletion(&Source::SkillsDir, &["a".to_owned()]).unwrap();
        let origin = ecp_protocol::Origin::new("a", "someone", "linux/amd64", "1.0");
        let mut tomb = SkillPacket::new(&origin, "gone", "d", "# Gone\n", 0.9, now());
        tomb.deprecated = true;
        let received =
            Received { account: "peer:http://a".into(), trust: 0.8, reshare: false, packets: vec![tomb] };
        let source = Source::Peer("a".into());
        let peer = store.transaction(|tx| tx.hold_received(&source, &received)).unwrap();
        assert_eq!(
            (peer.names.as_slice(), peer.via.as_deref()),
            (&["gone".to_owned()][..], Some("peer:http://a"))
        );
        assert_eq!(store.received_deletion(local.id).unwrap(), None);
        assert_eq!(store.received_deletion(peer.id).unwrap(), Some(received));
        assert!(matches!(store.received_deletion(peer.id + 1), Err(StoreError::NoSuchDeletion(_))));
        assert_eq!(store.held_deletions().unwrap(), vec![local, peer.clone()]);
        let held = store.transaction(|tx| tx.held_names(&source)).unwrap();
        assert_eq!(held.get("gone"), Some(&peer.id));
        assert!(!held.contains_key("a"), "the folder's deletion is not this peer's");
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
