//! Revocations on the hub (`SPEC.md` §14, hub migration 3): the ones a push
//! carries are taken as a node takes them ([`crate::intake::revoke`]) —
//! only when provably from the skill's origin: the signature holds (checked
//! before the push takes the sequence number's lock, [`verified`]), the
//! instance it names is the origin of the version the hub holds, and its key
//! is the key that origin is known by here (or the instance is the key's own
//! id). Taken, a revocation is kept in `hub_revocations` under a sequence
//! number of its own (served on by every replica), audited, and the hub goes
//! back from the revoked version: its newest kept version neither revoked
//! nor a tombstone is installed again, or the skill is withdrawn (a
//! tombstone not served) when there is none. Refused, it is audited
//! (`rejected:revocation`, with its reason) and changes nothing else.
//!
//! Each version's bundle digest as received is kept beside its hash
//! (`hub_versions.bundle_digest`; a hub before migration 4 kept a bundle as
//! its `SKILL.md` alone), so a revocation naming a bundle's digest finds
//! that version. A bundle installed again by a roll back lists its files
//! again (they are still held: the revoked version's refs kept them).

use std::collections::{HashMap, HashSet};

use ecp_protocol::SkillPacket;
use ecp_protocol::revocation::{self, MAX_REVOCATIONS_PER_UPDATE, Revocation};

use super::merge::Writer;
use super::packed;
use crate::intake::revoke::by_the_origin;
use crate::store::{StoreError, from_json, now, to_json};

/// A revocation a push carried, with what its own checks found: `Err` with
/// the reason it is refused whatever the hub holds.
pub(super) type Verified = (Revocation, Result<(), String>);

/// Checks the fields and signature of each of `revocations` (the CPU-bound
/// part, done before the push queues for the lock); those beyond
/// [`MAX_REVOCATIONS_PER_UPDATE`] are refused unchecked.
pub(super) fn verified(revocations: Vec<Revocation>) -> Vec<Verified> {
    revocations
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let checked = if i >= MAX_REVOCATIONS_PER_UPDATE {
                Err(format!("beyond the {MAX_REVOCATIONS_PER_UPDATE} revocations one update may carry"))
            } else {
                revocation::verify(&r).map(|_| ()).map_err(|e| format!("revocation refused: {e}"))
            };
            (r, checked)
        })
        .collect()
}

/// The revoked versions of `names` by (name, digest), each with its reason;
/// with, for each `(name, hash, bundle digest)` of a packet received as a
/// bundle whose bundle digest is revoked, its hash too — what the hub
/// keeps of that version.
pub(super) fn revoked_of(
    tx: &mut postgres::Transaction<'_>,
    names: &[String],
    bundles: &[(String, String, String)],
) -> Result<HashMap<(String, String), String>, StoreError> {
    let rows =
        tx.query("SELECT name, digest, reason FROM hub_revocations WHERE name = ANY($1)", &[&names])?;
    let mut revoked: HashMap<(String, String), String> =
        rows.into_iter().map(|r| ((r.get(0), r.get(1)), r.get(2))).collect();
    for (name, hash, bundle) in bundles {
        if let Some(reason) = revoked.get(&(name.clone(), bundle.clone())).cloned() {
            revoked.entry((name.clone(), hash.clone())).or_insert(reason);
        }
    }
    Ok(revoked)
}

impl Writer<'_, '_> {
    /// Takes each of `revocations` that is provably from its origin, in
    /// order; refuses (audits) the others. Runs under the sequence number's
    /// lock, before the packets of the same push are decided. What the
    /// checks look up is read in three queries, not per revocation: the
    /// lock is held, so only this loop changes it.
    pub(super) fn take_revocations(&mut self, revocations: &[Verified]) -> Result<(), StoreError> {
        if revocations.is_empty() {
            return Ok(());
        }
        // PostgreSQL's TEXT refuses NUL: such a name is never held (and the
        // checks refuse it); a signed instance is printable, checked.
        let names: Vec<&str> =
            revocations.iter().map(|(r, _)| r.skill_name.as_str()).filter(|n| !n.contains('\0')).collect();
        let instances: Vec<&str> = revocations
            .iter()
            .filter(|(_, checked)| checked.is_ok())
            .filter_map(|(r, _)| r.origin_signature.as_ref().map(|s| s.instance.as_str()))
            .collect();
        let pairs = |rows: Vec<postgres::Row>| -> Vec<(String, String)> {
            rows.into_iter().map(|row| (row.get(0), row.get(1))).collect()
        };
        let mut held: HashSet<(String, String)> =
            pairs(self.tx.query("SELECT name, digest FROM hub_revocations WHERE name = ANY($1)", &[&names])?)
                .into_iter()
                .collect();
        let origins: HashMap<String, String> =
            pairs(self.tx.query("SELECT name, origin FROM hub_skills WHERE name = ANY($1)", &[&names])?)
                .into_iter()
                .collect();
        let keys: HashMap<String, String> =
            pairs(self.tx.query(
                "SELECT instance, key_id FROM hub_origin_keys WHERE instance = ANY($1)",
                &[&instances],
            )?)
            .into_iter()
            .collect();
        for (i, (r, checked)) in revocations.iter().enumerate() {
            let key = (r.skill_name.clone(), r.digest.clone());
            if i < MAX_REVOCATIONS_PER_UPDATE && held.contains(&key) {
                // Held already (a relay's repeat): skipped unchecked (§14.5.2).
                continue;
            }
            let judged = checked.clone().and_then(|()| {
                let signature =
                    r.origin_signature.as_ref().ok_or_else(|| "revocation refused: unsigned".to_owned())?;
                let origin = origins.get(&r.skill_name).map(String::as_str);
                by_the_origin(
                    &r.skill_name,
                    signature,
                    origin,
                    keys.get(&signature.instance).map(String::as_str),
                )
            });
            match judged {
                Err(reason) => {
                    let name: String = r.skill_name.chars().take(128).collect();
                    tracing::warn!(skill = %name, sender = %self.source, %reason, "revocation refused");
                    self.audit(&name, "rejected:revocation", &reason)?;
                }
                Ok(()) => {
                    self.record(r)?;
                    held.insert(key);
                }
            }
        }
        Ok(())
    }

    /// Records `r` (provably from its origin) under the next sequence
    /// number, audits it, and goes back from the version it names.
    fn record(&mut self, r: &Revocation) -> Result<(), StoreError> {
        let Some(signature) = &r.origin_signature else { return Ok(()) };
        self.seq += 1;
        self.tx.execute(
            "INSERT INTO hub_revocations (name, digest, origin, key_id, reason, seq, recorded_at, revocation)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &r.skill_name,
                &r.digest,
                &signature.instance,
                &signature.key_id,
                &r.reason,
                &self.seq,
                &now().to_string(),
                &to_json(r),
            ],
        )?;
        let origin = signature.instance.as_str();
        self.audit(&r.skill_name, "revocation", &format!("version {} by {origin}: {}", r.digest, r.reason))?;
        tracing::warn!(skill = %r.skill_name, digest = %r.digest, %origin, reason = %r.reason, "a version was revoked by its origin");
        self.roll_back(&r.skill_name, &r.digest)
    }

    /// When the current version of `name` is `digest` (by its hash or its
    /// bundle digest as received): its newest kept version that is neither
    /// revoked nor a tombstone becomes current again (a new version number,
    /// the same packet), or, when there is none, the skill is withdrawn here
    /// (a tombstone, not served).
    fn roll_back(&mut self, name: &str, digest: &str) -> Result<(), StoreError> {
        let current = self.tx.query_opt(
            "SELECT s.version, s.integrity_hash, s.deprecated, s.shareable, s.packet, COALESCE(v.bundle_digest, '')
             FROM hub_skills s LEFT JOIN hub_versions v ON v.name = s.name AND v.version = s.version
             WHERE s.name = $1",
            &[&name],
        )?;
        let Some(current) = current else { return Ok(()) };
        let (version, hash, deprecated, shareable): (i64, String, bool, bool) =
            (current.get(0), current.get(1), current.get(2), current.get(3));
        let bundle: String = current.get(5);
        if deprecated || (hash != digest && bundle != digest) {
            return Ok(());
        }
        let revoked: HashSet<String> = self
            .tx
            .query("SELECT digest FROM hub_revocations WHERE name = $1", &[&name])?
            .into_iter()
            .map(|r| r.get(0))
            .collect();
        let kept = self.tx.query(
            "SELECT packet, integrity_hash, bundle_digest FROM hub_versions
             WHERE name = $1 AND version < $2 AND NOT deprecated AND packet IS NOT NULL ORDER BY version DESC",
            &[&name, &version],
        )?;
        let earlier = kept
            .iter()
            .find(|row| !revoked.contains(row.get::<_, &str>(1)) && !revoked.contains(row.get::<_, &str>(2)));
        let unpack = |frame: &[u8]| -> Result<SkillPacket, StoreError> {
            from_json(&packed::json(rusqlite::types::ValueRef::Blob(frame))?)
        };
        let what = match earlier {
            Some(row) => {
                let packet = unpack(row.get(0))?;
                self.install(&packet, shareable, row.get(2))?;
                "rolled back to the newest version not revoked"
            }
            None => {
                let mut tombstone = unpack(current.get(4))?;
                crate::store::blobs::make_tombstone(&mut tombstone);
                self.install(&tombstone, false, "")?;
                "removed: no kept version is not revoked"
            }
        };
        self.audit(name, "revoked", &format!("version {digest} {what}"))
    }
}

/// The revocations recorded after `since`, at most
/// [`MAX_REVOCATIONS_PER_UPDATE`] — the newest — in sequence order, each
/// with its sequence number and as the JSON it travels as.
pub(super) fn after(
    conn: &mut impl postgres::GenericClient,
    since: i64,
) -> Result<Vec<(i64, String)>, StoreError> {
    let rows = conn.query(
        "SELECT seq, revocation FROM hub_revocations WHERE seq > $1 ORDER BY seq DESC LIMIT $2",
        &[&since, &(MAX_REVOCATIONS_PER_UPDATE as i64)],
    )?;
    let mut out: Vec<(i64, String)> = rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
    out.reverse();
    Ok(out)
}
