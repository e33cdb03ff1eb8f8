//! What stays home: the stored side of a local skill's privacy.
//!
//! A private local skill is stored and projected like any other, but the
//! `served` view (schema migration 5) — the only thing the manifest, every
//! `GET /ecp/skills` answer and every push read — leaves it out. One that was
//! served before it became private is withdrawn instead: the view serves its
//! *withdrawal*, a tombstone of the packet peers last received (never of the
//! private content), under the change's new sequence number. Shared again, it
//! is served again with a fresh sequence number and a `createdAt` newer than
//! the withdrawal, so it wins at every peer that took the tombstone.
//!
//! Whether a skill is private is decided by [`crate::sharing`]; this module
//! stores the decision ([`Private`]) in the same transaction as the content
//! it is about, and keeps what the operator said (`skill private`, `skill
//! share --allow-secrets`) as [`Mark`]s.

use std::collections::HashMap;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::{SkillKind, SkillPacket, Timestamp};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::skills::{kind_from_label, upsert};
use super::{Change, Source, Store, StoreError, from_json, now, packed, to_json};

/// The [`Private::code`] of a skill held back because a secret scan found
/// credentials in it (counted apart in `status`).
pub const SECRET_CODE: &str = "secret";

/// Why a local skill stays on this node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Private {
    /// A short stable word: `frontmatter`, `ecpignore`, `unlisted`,
    /// `operator`, `folder`, `secret`, `retired`, `unproven`, `scan-failed`.
    pub code: String,
    /// What to tell the user: why, and what to do to share it.
    pub reason: String,
}

/// What the operator said about one skill.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mark {
    /// `ecp-node skill private NAME`.
    pub private: bool,
    /// The `integrityHash` whose secret findings `skill share
    /// --allow-secrets` let go: an edit gets scanned and held again.
    pub allow_secrets: Option<String>,
}

/// A local skill as the sharing decision needs it.
#[derive(Debug, Clone)]
pub struct LocalSkill {
    /// Its current packet.
    pub packet: SkillPacket,
    /// Its stored decision.
    pub private: Option<Private>,
}

/// The stored row a privacy change starts from.
struct Row {
    packet: SkillPacket,
    kind: SkillKind,
    shareable: bool,
    private: Option<Private>,
    withdrawal: Option<SkillPacket>,
}

fn row(conn: &Connection, name: &str) -> Result<Option<Row>, StoreError> {
    let raw = conn
        .prepare_cached(
            "SELECT packet, kind, shareable, private, private_reason, withdrawal FROM skills WHERE name = ?1",
        )?
        .query_row(params![name], |r| {
            Ok((
                packed::column(r, 0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .optional()?;
    let Some((packet, kind, shareable, code, reason, withdrawal)) = raw else { return Ok(None) };
    Ok(Some(Row {
        packet: from_json(&packet)?,
        kind: kind_from_label(&kind),
        shareable,
        private: code.map(|code| Private { code, reason: reason.unwrap_or_default() }),
        withdrawal: withdrawal.map(|w| from_json(&w)).transpose()?,
    }))
}

impl Row {
    /// Whether peers are served this row's packet as a live skill now.
    fn served_live(&self) -> bool {
        self.kind == SkillKind::Local && self.shareable && self.private.is_none() && !self.packet.deprecated
    }
}

/// One millisecond after `t`: a packet dated so wins over one dated `t`.
fn after(t: Timestamp) -> Timestamp {
    Timestamp::from_datetime(t.as_datetime() + chrono::Duration::milliseconds(1))
}

/// Writes a local skill's new content (`packet`) and/or its new decision,
/// in one transaction; `None` when neither changes.
pub(super) fn write_local(
    tx: &Transaction<'_>,
    packet: Option<&SkillPacket>,
    name: &str,
    private: Option<&Private>,
    source: &Source,
    (depth, key): (u64, &NodeKey),
) -> Result<Option<Change>, StoreError> {
    let old = row(tx, name)?;
    let same_content = match (&old, packet) {
        (Some(old), Some(new)) => {
            old.kind == SkillKind::Local
                && old.packet.integrity_hash == new.integrity_hash
                && old.packet.bundle_digest == new.bundle_digest
                && !old.packet.deprecated
        }
        (Some(old), None) if old.kind == SkillKind::External => {
            return Err(StoreError::NotLocal(name.to_owned()));
        }
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => return Err(StoreError::NoSuchSkill(name.to_owned())),
    };
    let same_decision = old.as_ref().is_some_and(|o| o.private.as_ref() == private);
    if same_content && same_decision {
        return Ok(None);
    }
    let mut next = match (packet, &old) {
        (Some(new), _) if !same_content => new.clone(),
        (_, Some(old)) => old.packet.clone(),
        (Some(new), None) => new.clone(),
        (None, None) => return Err(StoreError::NoSuchSkill(name.to_owned())),
    };
    if next.deprecated {
        // A removed skill keeps serving what it served (its tombstone, or
        // its withdrawal, or nothing): a tombstone holds the removed
        // content, which must not leave because a mark changed.
        return Ok(None);
    }
    let withdrawal = match (private, &old) {
        (None, _) => None,
        (Some(_), Some(old)) if old.withdrawal.is_some() => old.withdrawal.clone(),
        (Some(_), Some(old)) if old.served_live() => {
            // What peers hold, withdrawn: never the new (private) content.
            let mut tombstone = old.packet.clone();
            super::blobs::make_tombstone(&mut tombstone);
            tombstone.created_at = now().max(after(tombstone.created_at));
            super::identity::sign(&mut tombstone, key);
            Some(tombstone)
        }
        (Some(_), _) => None,
    };
    if same_content && private.is_some() && withdrawal == old.as_ref().and_then(|o| o.withdrawal.clone()) {
        // Never served, or already withdrawn: only the reason changes, and
        // nothing peers see does.
        set_columns(tx, name, private, withdrawal.as_ref())?;
        super::audit::record(
            tx,
            source,
            name,
            "private",
            &private.map(|p| p.reason.clone()).unwrap_or_default(),
        )?;
        return Ok(None);
    }
    if private.is_none() && old.as_ref().is_some_and(|o| o.private.is_some()) {
        // Served again: newer than the withdrawal peers took, if any.
        let floor = old.as_ref().and_then(|o| o.withdrawal.as_ref()).map(|w| after(w.created_at));
        next.created_at = now().max(next.created_at).max(floor.unwrap_or_default());
    }
    let change = upsert(tx, &next, SkillKind::Local, true, source, (depth, key))?;
    set_columns(tx, name, private, withdrawal.as_ref())?;
    if !same_decision && (old.is_some() || private.is_some()) {
        let (decision, reason) = match private {
            Some(p) => ("private", p.reason.as_str()),
            None => ("shared", ""),
        };
        super::audit::record(tx, source, name, decision, reason)?;
    }
    if !same_content {
        super::audit::record(tx, source, name, "local-install", "")?;
    }
    Ok(Some(change))
}

fn set_columns(
    tx: &Transaction<'_>,
    name: &str,
    private: Option<&Private>,
    withdrawal: Option<&SkillPacket>,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "UPDATE skills SET private = ?2, private_reason = ?3, withdrawal = ?4 WHERE name = ?1",
    )?
    .execute(params![
        name,
        private.map(|p| p.code.as_str()),
        private.map(|p| p.reason.as_str()),
        withdrawal.map(to_json),
    ])?;
    Ok(())
}

impl Store {
    /// Installs or replaces a locally authored skill with its sharing
    /// decision (`None`: shared). Returns `None` when content and decision
    /// are what the store holds.
    pub fn put_local(
        &self,
        packet: &SkillPacket,
        private: Option<&Private>,
        source: Source,
    ) -> Result<Option<Change>, StoreError> {
        self.write(|tx| {
            write_local(
                tx,
                Some(packet),
                &packet.skill_name,
                private,
                &source,
                (self.history_depth(), &self.key),
            )
        })
    }

    /// Records a new sharing decision for a held local skill. `None` when
    /// nothing peers see changes (the reason alone may have).
    pub fn set_private(
        &self,
        name: &str,
        private: Option<&Private>,
        source: Source,
    ) -> Result<Option<Change>, StoreError> {
        self.write(|tx| write_local(tx, None, name, private, &source, (self.history_depth(), &self.key)))
    }

    /// Every active local skill with its stored decision.
    pub fn local_skills(&self) -> Result<Vec<LocalSkill>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT packet, private, private_reason FROM skills
             WHERE kind = 'local' AND deprecated = 0 ORDER BY name",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((packed::column(r, 0)?, r.get::<_, Option<String>>(1)?, r.get::<_, Option<String>>(2)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(packet, code, reason)| {
                Ok(LocalSkill {
                    packet: from_json(&packet)?,
                    private: code.map(|code| Private { code, reason: reason.unwrap_or_default() }),
                })
            })
            .collect()
    }

    /// What the operator said about every skill it said something about.
    pub fn sharing_marks(&self) -> Result<HashMap<String, Mark>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT name, private, allow_secrets FROM sharing_marks")?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, Mark { private: r.get(1)?, allow_secrets: r.get(2)? }))
            })?
            .collect::<Result<HashMap<_, _>, _>>()?;
        Ok(rows)
    }

    /// Sets what the operator said about `name` (audited); a default mark is removed.
    pub fn set_sharing_mark(&self, name: &str, mark: &Mark) -> Result<(), StoreError> {
        self.write(|tx| {
            if *mark == Mark::default() {
                tx.prepare_cached("DELETE FROM sharing_marks WHERE name = ?1")?.execute(params![name])?;
            } else {
                tx.prepare_cached(
                    "INSERT INTO sharing_marks (name, private, allow_secrets) VALUES (?1, ?2, ?3)
                     ON CONFLICT (name) DO UPDATE SET private = excluded.private,
                                                      allow_secrets = excluded.allow_secrets",
                )?
                .execute(params![name, mark.private, mark.allow_secrets])?;
            }
            let what = match (mark.private, &mark.allow_secrets) {
                (true, _) => "mark-private".to_owned(),
                (false, Some(hash)) => format!("allow-secrets {}", hash.chars().take(16).collect::<String>()),
                (false, None) => "mark-cleared".to_owned(),
            };
            super::audit::record(tx, &Source::Operator, name, "sharing-mark", &what)
        })
    }
}

#[cfg(test)]
mod tests {
    use ecp_protocol::packet::Origin;

    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path()).unwrap();
        (tmp, store)
    }

    fn local(name: &str, step: &str) -> SkillPacket {
        let body = format!("---\nname: {name}\ndescription: d\n---\n# {name}\n\n{step}\n");
        SkillPacket::new(&Origin::new("me", "me", "linux/amd64", "1"), name, "d", &body, 0.8, now())
    }

    fn private(code: &str) -> Private {
        Private { code: code.into(), reason: format!("because {code}") }
    }

    /// What `?since=0` serves: (name, deprecated, body).
    fn served(store: &Store) -> Vec<(String, bool, String)> {
        store
            .served_packets(Some(0))
            .unwrap()
            .packets
            .iter()
            .map(|json| {
                let p: SkillPacket = serde_json::from_str(json).unwrap();
                (p.skill_name, p.deprecated, p.skill_body)
            })
            .collect()
    }

    #[test]
    fn a_private_skill_is_never_served_and_deleting_it_serves_nothing() {
        let (_tmp, store) = store();
        store
            .put_local(&local("home", "Private steps."), Some(&private("frontmatter")), Source::SkillsDir)
            .unwrap();
        assert!(served(&store).is_empty());
        assert!(store.summary().unwrap().skill_names.is_empty());
        assert_eq!(store.summary().unwrap().private_skills, 1);
        store.tombstone("home", Source::SkillsDir).unwrap();
        assert!(served(&store).is_empty(), "its tombstone would carry the private body");
    }

    #[test]
    fn a_shared_skill_made_private_is_withdrawn_with_what_peers_had_and_returns_newer() {
        let (_tmp, store) = store();
        let shared = local("s", "Shared steps.");
        store.put_local(&shared, None, Source::SkillsDir).unwrap();
        let before = store.sequence().unwrap();
        let change = store.set_private("s", Some(&private("operator")), Source::Operator).unwrap();
        assert!(change.expect("a change peers see").seq > before);
        assert_eq!(served(&store), [("s".to_owned(), true, shared.skill_body.clone())]);
        // Edited while private: the withdrawal still carries the shared body.
        store
            .put_local(&local("s", "New private steps."), Some(&private("operator")), Source::SkillsDir)
            .unwrap();
        assert_eq!(served(&store), [("s".to_owned(), true, shared.skill_body.clone())]);
        let withdrawal: SkillPacket =
            serde_json::from_str(&store.served_packets(Some(0)).unwrap().packets[0]).unwrap();
        assert!(withdrawal.created_at > shared.created_at);
        // Only the reason changing is no change peers see.
        assert!(store.set_private("s", Some(&private("ecpignore")), Source::SkillsDir).unwrap().is_none());
        // Shared again: the current content, dated after the withdrawal.
        store.set_private("s", None, Source::Operator).unwrap().expect("served again");
        let again: SkillPacket =
            serde_json::from_str(&store.served_packets(None).unwrap().packets[0]).unwrap();
        assert_eq!((again.deprecated, again.skill_body.contains("New private steps.")), (false, true));
        assert!(again.created_at > withdrawal.created_at);
        // Private again, edited, deleted: the withdrawal is kept, never the private body.
        store.set_private("s", Some(&private("operator")), Source::Operator).unwrap();
        store.put_local(&local("s", "Third steps."), Some(&private("operator")), Source::SkillsDir).unwrap();
        store.tombstone("s", Source::SkillsDir).unwrap();
        let after: Vec<_> = served(&store);
        assert_eq!(after.len(), 1);
        assert!(after.iter().all(|(_, dead, body)| *dead && !body.contains("Third")), "{after:?}");
    }

    #[test]
    fn sharing_external_skills_is_refused_and_an_external_install_clears_a_local_decision() {
        let (_tmp, store) = store();
        store.put_local(&local("n", "Steps."), Some(&private("operator")), Source::SkillsDir).unwrap();
        store.tombstone("n", Source::SkillsDir).unwrap();
        let mut remote = local("n", "Remote steps.");
        remote.origin_instance = "peer".into();
        store
            .transaction(|tx| tx.install(&remote, SkillKind::External, true, &Source::Peer("peer".into())))
            .unwrap();
        assert_eq!(served(&store).len(), 1, "served as the policy says, not as the old local decision");
        assert!(matches!(
            store.set_private("n", Some(&private("operator")), Source::Operator),
            Err(StoreError::NotLocal(_))
        ));
        assert!(matches!(
            store.set_private("nobody", None, Source::Operator),
            Err(StoreError::NoSuchSkill(_))
        ));
    }
}
