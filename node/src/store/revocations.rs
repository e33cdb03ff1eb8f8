//! Revocations (`SPEC.md` §14, migration 18): the versions their origins
//! revoked, as this node holds them — to refuse those versions from anyone,
//! never to serve or show them, and to send the revocations on to peers
//! (each recorded under a sequence number of its own, so that incremental
//! answers and pushes carry those after their cursor).
//!
//! Whether a revocation holds is decided before it gets here
//! ([`crate::intake`] for received ones, [`crate::versions::revoke`] for
//! this node's own); here it is recorded, and a received skill whose
//! current version it names goes back to its newest version that is not
//! revoked (or is withdrawn here when there is none).

use std::collections::HashMap;

use ecp_protocol::revocation::{MAX_REVOCATIONS_PER_UPDATE, Revocation};
use ecp_protocol::{SkillKind, SkillPacket};
use rusqlite::{Connection, params};

use super::{Source, Store, StoreError, Tx, digest_of, next_seq, now, to_json};

/// What going back from a revoked version did.
#[derive(Debug, Clone)]
pub struct RolledBack {
    /// The change to project: the version now current (a tombstone when no
    /// earlier version could be taken).
    pub change: super::Change,
    /// The skill was pinned to the revoked version: the pin is gone.
    pub unpinned: bool,
}

/// The revoked digests of `name`, each with its reason.
pub(super) fn revoked_of(conn: &Connection, name: &str) -> Result<HashMap<String, String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT digest, reason FROM revocations WHERE name = ?1")?;
    let rows = stmt.query_map(params![name], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    Ok(rows)
}

impl Tx<'_> {
    /// Whether the version of `name` with `digest` is revoked here already.
    pub fn is_revoked(&self, name: &str, digest: &str) -> Result<bool, StoreError> {
        Ok(revoked_of(self.sql, name)?.contains_key(digest))
    }

    /// The revoked versions of the named skills, by (name, digest), with their reasons.
    pub fn revocations_of(&self, names: &[&str]) -> Result<HashMap<(String, String), String>, StoreError> {
        let mut out = HashMap::new();
        for &name in names {
            for (digest, reason) in revoked_of(self.sql, name)? {
                out.insert((name.to_owned(), digest), reason);
            }
        }
        Ok(out)
    }

    /// Records a revocation whose signature and signer were checked, under
    /// the next sequence number; its sequence number, or `None` when it was
    /// held already.
    pub fn record_revocation(&self, revocation: &Revocation) -> Result<Option<i64>, StoreError> {
        let Some(signature) = &revocation.origin_signature else { return Ok(None) };
        if self.is_revoked(&revocation.skill_name, &revocation.digest)? {
            return Ok(None);
        }
        let seq = next_seq(self.sql)?;
        self.sql
            .prepare_cached(
                "INSERT INTO revocations (name, digest, origin, key_id, reason, seq, recorded_at, revocation)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                revocation.skill_name,
                revocation.digest,
                signature.instance,
                signature.key_id,
                revocation.reason,
                seq,
                now().to_string(),
                to_json(revocation),
            ])?;
        Ok(Some(seq))
    }

    /// A received skill whose current version is `digest`, revoked: its
    /// newest kept version that is neither revoked nor a tombstone becomes
    /// current again (a new version number, the same packet), or, when
    /// there is none, the skill is withdrawn here (a tombstone not served).
    /// A pin on the revoked version is removed. `None` when the skill is not
    /// held, is this node's own, or its current version is another.
    pub fn roll_back_revoked(
        &self,
        name: &str,
        digest: &str,
        source: &Source,
    ) -> Result<Option<RolledBack>, StoreError> {
        let Some((packet, kind, shareable)) = super::skills::current(self.sql, name)? else {
            return Ok(None);
        };
        let pinned = super::versions::pin_of(self.sql, name)?.filter(|h| h.digest == digest);
        let unpinned = pinned.is_some() && super::versions::drop_pin(self.sql, name)?;
        if unpinned {
            let why = format!("the pinned version {digest} was revoked by its origin; the skill is unpinned");
            self.audit(source, name, "unpin", &why)?;
        }
        if kind == SkillKind::Local || packet.deprecated || digest_of(&packet) != digest {
            // Unpinned from a revoked version, the file shows the current one again.
            let seq: i64 = self
                .sql
                .prepare_cached("SELECT seq FROM skills WHERE name = ?1")?
                .query_row(params![name], |r| r.get(0))?;
            return Ok(unpinned.then_some(RolledBack {
                change: super::Change { seq, packet, kind, withheld: false },
                unpinned,
            }));
        }
        let revoked = revoked_of(self.sql, name)?;
        let earlier = super::versions::kept(self.sql, name)?
            .into_iter()
            .rev()
            .map(|(_, _, _, p)| p)
            .find(|p: &SkillPacket| !p.deprecated && !revoked.contains_key(digest_of(p)));
        let (next, shareable, what) = match earlier {
            Some(earlier) => (earlier, shareable, "rolled back to the newest version not revoked"),
            None => {
                let mut tombstone = packet;
                super::blobs::make_tombstone(&mut tombstone);
                (tombstone, false, "removed: no kept version is not revoked")
            }
        };
        let change = self.install(&next, kind, shareable, source)?;
        self.audit(source, name, "revoked", &format!("version {digest} {what}"))?;
        Ok(Some(RolledBack { change, unpinned }))
    }
}

impl Store {
    /// The revoked digests of `name`, each with its reason.
    pub fn revoked_digests(&self, name: &str) -> Result<HashMap<String, String>, StoreError> {
        revoked_of(&self.conn(), name)
    }

    /// The revocations recorded after sequence number `since` (every one for
    /// 0), at most [`MAX_REVOCATIONS_PER_UPDATE`] — the newest — in
    /// sequence order, each with its sequence number and as the JSON it
    /// travels as.
    pub fn revocations_after(&self, since: i64) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, revocation FROM revocations WHERE seq > ?1 ORDER BY seq DESC LIMIT ?2",
        )?;
        let mut rows = stmt
            .query_map(params![since, MAX_REVOCATIONS_PER_UPDATE as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<(i64, String)>, _>>()?;
        rows.reverse();
        Ok(rows)
    }

    /// `revocation` signed with this node's key as spoken by its instance.
    pub fn sign_revocation(&self, revocation: &mut Revocation) {
        revocation.origin_signature = None;
        revocation.origin_signature = Some(self.key.sign_revocation(revocation, self.instance_id()));
    }
}
