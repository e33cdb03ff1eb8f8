//! The hub's quarantine (hub migration 5): refused packets kept with their
//! reasons and findings until an operator approves or drops them at any
//! replica (`/v1/quarantine`, behind the API token) — the node's
//! quarantine (`store::quarantine`, `store::quarantine_evict`,
//! `intake::approve`) on the shared database, with the same rules:
//!
//! - the same refused packet from the same sender's instance is kept once
//!   per stage (`timesSeen`), also once reviewed; a packet larger than the
//!   body cap is kept as an excerpt with its size and SHA-256, which cannot
//!   be approved;
//! - the caps on held entries and bytes are enforced once per merge from
//!   the per-sender counts a trigger keeps (`hub_quarantine_held`): over a
//!   cap each sender keeps its share ([`shares`]) and loses its oldest
//!   entries beyond, audited one line per sender;
//! - an approval is installed as the node installs one — lowered by the
//!   trust its sender had, `force` needed past the scan, a bundle only
//!   with every file held and matching its listing, a version its origin
//!   revoked never — under the sequence number's lock, announced with
//!   `NOTIFY`, so every replica serves it on the next request.
//!
//! Every review write takes the sequence number's row first, as a push
//! does: reviews and merges of every replica apply one at a time, so an
//! entry approved at one replica cannot be dropped or evicted at another
//! meanwhile. A reviewed entry keeps its row (a re-sent packet counts as
//! seen again on it) but not its packet, which nothing reads any more.

use std::time::Duration;

use ecp_protocol::bundle::{BundleLimits, BundleManifest, SKILL_MD};
use ecp_protocol::merge::{SenderKind, Stage, receive};
use ecp_protocol::{Decision, PacketDecision, SkillPacket};
use postgres::Transaction;
use sha2::{Digest, Sha256};

use super::merge::{Writer, text};
use super::{CHANNEL, HubStore, blobs, listen};
use crate::intake::{Sender, approval_reason, approving_sender, needs_force, signer_as_sent};
use crate::store::quarantine::{EXCERPT_BYTES, drop_cutoff, excerpt, old_enough};
use crate::store::quarantine_evict::{Cap, HeldPerSender, bring_under, quarantine_why};
use crate::store::{
    QuarantineCaps, QuarantineEntry, QuarantineStatus, Source, StoreError, Truncated, from_json, now, to_json,
};

const ENTRY_COLUMNS: &str = "id, received_at, last_seen_at, times_seen, source, name, integrity_hash, stage, \
                             reason, findings, status, packet, trust, body_size, body_sha256, legacy";

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    n.max(0).unsigned_abs()
}

/// An entry and its packet's JSON (or excerpt) from a row of [`ENTRY_COLUMNS`].
fn entry_of(row: &postgres::Row) -> Result<(QuarantineEntry, String), StoreError> {
    let source: String = row.get(4);
    let peer = Source::from_label(&source)
        .ok_or_else(|| StoreError::Corrupt(format!("the source {source:?} of a quarantine entry")))?;
    let size: Option<i64> = row.get(13);
    let entry = QuarantineEntry {
        id: row.get(0),
        received_at: row.get(1),
        last_seen_at: row.get(2),
        times_seen: row.get(3),
        peer,
        skill_name: row.get(5),
        integrity_hash: row.get(6),
        stage: row.get(7),
        reason: row.get(8),
        findings: serde_json::from_str(row.get(9)).unwrap_or_default(),
        status: QuarantineStatus::from_label(row.get(10)),
        trust: row.get(12),
        legacy_sender: row.get(15),
        truncated: size
            .map(|size| Truncated { size, sha256: row.get::<_, Option<String>>(14).unwrap_or_default() }),
    };
    Ok((entry, row.get(11)))
}

/// Held entry `id` and its packet's JSON, its row locked by `tx`:
/// `NoSuchQuarantineEntry` when there is none (never, or evicted),
/// `QuarantineEntryNotHeld` when it was approved or dropped.
fn held_entry(
    tx: &mut impl postgres::GenericClient,
    id: i64,
    lock: bool,
) -> Result<(QuarantineEntry, String), StoreError> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    let row =
        tx.query_opt(&format!("SELECT {ENTRY_COLUMNS} FROM hub_quarantine WHERE id = $1{lock}"), &[&id])?;
    let Some(row) = row else { return Err(StoreError::NoSuchQuarantineEntry(id)) };
    let (entry, packet) = entry_of(&row)?;
    if entry.status != QuarantineStatus::Held {
        return Err(StoreError::QuarantineEntryNotHeld { id, status: entry.status });
    }
    Ok((entry, packet))
}

/// Marks entry `id` reviewed, letting go of its packet.
fn set_status(tx: &mut Transaction<'_>, id: i64, status: QuarantineStatus) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE hub_quarantine SET status = $1, packet = '' WHERE id = $2",
        &[&status.to_string(), &id],
    )?;
    Ok(())
}

fn audit(
    tx: &mut Transaction<'_>,
    source: &str,
    skill: &str,
    action: &str,
    reason: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO hub_audit (at, source, skill, action, reason) VALUES ($1, $2, $3, $4, $5)",
        &[&now().to_string(), &source, &text(skill), &action, &text(reason)],
    )?;
    Ok(())
}

/// Takes the sequence number's row (as a push does); its value.
fn lock_sequence(tx: &mut Transaction<'_>) -> Result<i64, StoreError> {
    let row = tx.query_one("SELECT value FROM hub_meta WHERE key = 'sequence' FOR UPDATE", &[])?;
    row.get::<_, String>(0).parse().map_err(|_| StoreError::Corrupt("the hub's sequence number".into()))
}

/// Drops held entry `id`; audited.
fn drop_held(tx: &mut Transaction<'_>, id: i64) -> Result<QuarantineEntry, StoreError> {
    let (entry, _) = held_entry(tx, id, true)?;
    set_status(tx, id, QuarantineStatus::Dropped)?;
    let reason = format!("entry {id} from {}, refused at stage {}", entry.peer, entry.stage);
    audit(tx, &Source::Operator.to_string(), &entry.skill_name, "quarantine-drop", &reason)?;
    Ok(entry)
}

impl Writer<'_, '_> {
    /// Keeps a packet refused at `stage`, once per sender's instance, name,
    /// hash and stage: a packet already held, approved or dropped counts as
    /// seen again on its entry. One whose JSON is over `body_cap` bytes is
    /// kept as an excerpt with its size and SHA-256. The caps are enforced
    /// once, at the end of the merge ([`evict`]).
    pub(super) fn hold(
        &mut self,
        d: &PacketDecision,
        sender: &Sender,
        stage: Stage,
        reason: &str,
        body_cap: u64,
    ) -> Result<(), StoreError> {
        let at = now().to_string();
        let (name, hash, reason) = (text(&d.packet.skill_name), text(&d.packet.integrity_hash), text(reason));
        let legacy = sender.kind == SenderKind::Legacy;
        let existing = self.tx.query_opt(
            "SELECT id FROM hub_quarantine WHERE source = $1 AND name = $2 AND integrity_hash = $3 AND stage = $4
             ORDER BY status = 'held' DESC, id DESC LIMIT 1",
            &[&self.source, &name, &hash, &stage.name()],
        )?;
        if let Some(row) = existing {
            self.tx.execute(
                "UPDATE hub_quarantine SET last_seen_at = $1, times_seen = times_seen + 1, reason = $2, trust = $3,
                                           legacy = $4
                 WHERE id = $5",
                &[&at, &reason, &sender.trust, &legacy, &row.get::<_, i64>(0)],
            )?;
            return Ok(());
        }
        let whole = to_json(&d.packet);
        let (body, truncated) = if whole.len() as u64 > body_cap {
            let kept = excerpt(&whole, EXCERPT_BYTES.min(usize::try_from(body_cap).unwrap_or(usize::MAX)));
            (kept, Some((to_i64(whole.len() as u64), hex::encode(Sha256::digest(whole.as_bytes())))))
        } else {
            (whole.as_str(), None)
        };
        let findings = to_json(&d.findings);
        // What the entry weighs against the byte cap: all it stores.
        let bytes = to_i64((body.len() + findings.len() + reason.len()) as u64);
        self.tx.execute(
            "INSERT INTO hub_quarantine (name, stage, reason, source, sender, packet, bytes, received_at,
                                         last_seen_at, integrity_hash, findings, trust, status, times_seen,
                                         legacy, body_size, body_sha256)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, 'held', 1, $12, $13, $14)",
            &[
                &name,
                &stage.name(),
                &reason,
                &self.source,
                &sender.account,
                &body,
                &bytes,
                &at,
                &hash,
                &findings,
                &sender.trust,
                &legacy,
                &truncated.as_ref().map(|t| t.0),
                &truncated.as_ref().map(|t| t.1.as_str()),
            ],
        )?;
        Ok(())
    }
}

/// The hub's quarantine in one transaction, evicted as done by `actor`.
struct Held<'a, 't> {
    tx: &'a mut Transaction<'t>,
    actor: &'a str,
}

impl HeldPerSender for Held<'_, '_> {
    fn per_sender(&mut self) -> Result<Vec<(String, u64, u64)>, StoreError> {
        let rows =
            self.tx.query("SELECT sender, entries, bytes FROM hub_quarantine_held ORDER BY sender", &[])?;
        Ok(rows.iter().map(|r| (r.get(0), to_u64(r.get(1)), to_u64(r.get(2)))).collect())
    }

    fn oldest_weighing(&mut self, sender: &str, free: u64) -> Result<u64, StoreError> {
        let row = self.tx.query_one(
            "SELECT COUNT(*) FROM (
                 SELECT COALESCE(SUM(bytes) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                 0)::BIGINT AS before
                 FROM hub_quarantine WHERE status = 'held' AND sender = $1) oldest
             WHERE before < $2::BIGINT",
            &[&sender, &to_i64(free)],
        )?;
        Ok(to_u64(row.get(0)))
    }

    fn let_go_oldest(&mut self, sender: &str, count: u64, why: &str) -> Result<(), StoreError> {
        let row = self.tx.query_one(
            "WITH gone AS (
                 DELETE FROM hub_quarantine WHERE id IN (
                     SELECT id FROM hub_quarantine WHERE status = 'held' AND sender = $1 ORDER BY id LIMIT $2)
                 RETURNING id)
             SELECT COUNT(*), MIN(id), MAX(id) FROM gone",
            &[&sender, &to_i64(count)],
        )?;
        let (deleted, first, last): (i64, Option<i64>, Option<i64>) = (row.get(0), row.get(1), row.get(2));
        let (Some(first), Some(last)) = (first, last) else { return Ok(()) };
        let reason =
            format!("{deleted} held entries of {sender} (ids {first}..={last}, oldest first): {why}");
        audit(self.tx, self.actor, "*", "quarantine-evicted", &reason)
    }

    fn why(&self, cap: Cap, max: u64) -> String {
        quarantine_why(cap, max)
    }
}

/// Brings the quarantine under `caps`, each sender down to its share, as
/// done by `actor` (whose update brought it over); read from the counts
/// the trigger keeps, so a merge under the caps pays one small query.
pub(super) fn evict(tx: &mut Transaction<'_>, caps: QuarantineCaps, actor: &str) -> Result<(), StoreError> {
    bring_under(&mut Held { tx, actor }, caps)
}

/// Why bundle `packet` cannot be installed now (`SPEC.md` §12.9): a file
/// it lists not held, or not as listed. `None` for a plain skill.
fn bundle_refusal(tx: &mut Transaction<'_>, packet: &SkillPacket) -> Result<Option<String>, StoreError> {
    let reason = |decision: Decision| match decision {
        Decision::Rejected { reason, .. } => reason,
        other => format!("{other:?}"),
    };
    let manifest = match BundleManifest::from_packet(packet, &BundleLimits::default()) {
        Ok(Some(manifest)) => manifest,
        Ok(None) => return Ok(None),
        Err(e) => return Ok(Some(reason(e.into()))),
    };
    let listed: Vec<String> = manifest.blob_ids().into_iter().map(str::to_owned).collect();
    let held = blobs::held_of(tx, &listed)?;
    if let Some(pending) = manifest.pending_decision(|sha256| held.contains(sha256)) {
        return Ok(Some(reason(pending)));
    }
    for file in manifest.files().iter().filter(|f| f.path != SKILL_MD) {
        let Some(bytes) = blobs::read_blob(tx, &file.sha256)? else {
            return Ok(manifest.pending_decision(|sha256| sha256 != file.sha256).map(reason));
        };
        if let Err(e) = manifest.verify_blob(&file.path, &bytes) {
            return Ok(Some(reason(e.into())));
        }
    }
    Ok(None)
}

impl HubStore {
    /// Held entries, oldest first.
    pub fn quarantine(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        let rows = self.pool.get()?.query(
            &format!("SELECT {ENTRY_COLUMNS} FROM hub_quarantine WHERE status = 'held' ORDER BY id"),
            &[],
        )?;
        rows.iter().map(|row| entry_of(row).map(|(entry, _)| entry)).collect()
    }

    /// A held entry and its packet as received (`None` when only an excerpt
    /// was kept, see [`QuarantineEntry::truncated`]).
    pub fn quarantined(&self, id: i64) -> Result<(QuarantineEntry, Option<SkillPacket>), StoreError> {
        let (entry, packet) = held_entry(&mut *self.pool.get()?, id, false)?;
        let packet = match entry.truncated {
            Some(_) => None,
            None => Some(from_json(&packet)?),
        };
        Ok((entry, packet))
    }

    /// What the quarantine holds for review: (entries, bytes).
    pub fn quarantine_held(&self) -> Result<(u64, u64), StoreError> {
        let row = self.pool.get()?.query_one(
            "SELECT COALESCE(SUM(entries), 0)::BIGINT, COALESCE(SUM(bytes), 0)::BIGINT FROM hub_quarantine_held",
            &[],
        )?;
        Ok((to_u64(row.get(0)), to_u64(row.get(1))))
    }

    /// Runs review `write` in a transaction of its own holding the
    /// sequence number's row, as pushes do; commits what it did.
    fn review<T>(
        &self,
        write: impl FnOnce(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.pushes.get()?;
        let mut tx = conn.transaction()?;
        lock_sequence(&mut tx)?;
        let done = write(&mut tx)?;
        tx.commit()?;
        Ok(done)
    }

    /// Lets go of the held entries of bundle `name` at `hash` that `account`
    /// sent before its files (`pending: …`), once a retry installed it — as
    /// a node does (SPEC §12.9.2): nothing is left to review; audited.
    pub(super) fn pending_installed(&self, name: &str, hash: &str, account: &str) -> Result<(), StoreError> {
        self.review(|tx| {
            let settled = tx.query(
                "UPDATE hub_quarantine SET status = 'dropped', packet = ''
                 WHERE status = 'held' AND stage = 'bundle' AND reason LIKE 'pending:%'
                   AND name = $1 AND integrity_hash = $2 AND sender = $3
                 RETURNING id, source",
                &[&text(name), &text(hash), &account],
            )?;
            for row in settled {
                let (id, source): (i64, String) = (row.get(0), row.get(1));
                let reason = format!("entry {id}: installed once every file its bundle lists was held");
                audit(tx, &source, name, "bundle-complete", &reason)?;
            }
            Ok(())
        })
    }

    /// Marks held entry `id` dropped; audited. Returns the entry as it was.
    pub fn quarantine_drop(&self, id: i64) -> Result<QuarantineEntry, StoreError> {
        self.review(|tx| drop_held(tx, id))
    }

    /// Marks dropped every held entry first received longer than `age` ago
    /// (every one when `None`), each audited, in one transaction. Returns them.
    pub fn quarantine_drop_older_than(
        &self,
        age: Option<Duration>,
    ) -> Result<Vec<QuarantineEntry>, StoreError> {
        let cutoff = age.map(drop_cutoff);
        self.review(|tx| {
            let held: Vec<(i64, String)> = tx
                .query("SELECT id, received_at FROM hub_quarantine WHERE status = 'held' ORDER BY id", &[])?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            held.into_iter()
                .filter(|(_, received)| old_enough(received, cutoff))
                .map(|(id, _)| drop_held(tx, id))
                .collect()
        })
    }

    /// Installs held entry `id` as the node's approval does
    /// ([`crate::intake::approve()`]): lowered by the trust its sender had
    /// (`fallback_trust` for entries held before that was kept), re-served
    /// only if `reshare` allows, `force` needed for an entry the scan
    /// refused or flagged ([`StoreError::NeedsForce`]); origin limits do not
    /// apply. A bundle needs every file held and matching its listing, and
    /// a version its origin revoked is never installed
    /// ([`StoreError::CannotApprove`]). Under the sequence number's lock,
    /// announced to every replica; audited. Returns the skill installed.
    pub fn approve(
        &self,
        id: i64,
        fallback_trust: f64,
        reshare: bool,
        force: bool,
    ) -> Result<SkillPacket, StoreError> {
        let mut conn = self.pushes.get()?;
        let mut tx = conn.transaction()?;
        let first_seq = lock_sequence(&mut tx)?;
        let (entry, packet) = held_entry(&mut tx, id, true)?;
        if let Some(Truncated { size, sha256 }) = &entry.truncated {
            return Err(StoreError::CannotApprove(format!(
                "the packet was {size} bytes, over the quarantine's body limit ([limits] quarantine_body_bytes), so \
                 only an excerpt was kept (SHA-256 {sha256}); drop the entry, and if you want the skill, have the \
                 sender send it again once the hub accepts it (a larger max_skill_bytes or another policy)"
            )));
        }
        let packet: SkillPacket = from_json(&packet)?;
        if !force && needs_force(&entry) {
            return Err(StoreError::NeedsForce { id, stage: entry.stage, findings: entry.findings.len() });
        }
        if let Err(e) = ecp_protocol::skill_doc::validate_name(&packet.skill_name) {
            return Err(StoreError::CannotApprove(format!("its name is invalid: {e}")));
        }
        let sender = approving_sender(&entry, fallback_trust, reshare)?;
        let signer = signer_as_sent(&packet);
        let mut admitted = receive(packet, &sender.context(&self.instance_id));
        admitted.reseal();
        let revoked = tx.query_opt(
            "SELECT reason FROM hub_revocations WHERE name = $1 AND digest IN ($2, $3)",
            &[&admitted.skill_name, &admitted.integrity_hash, &admitted.bundle_digest],
        )?;
        if let Some(row) = revoked {
            return Err(StoreError::CannotApprove(format!(
                "its origin revoked this version ({}); the hub serves it no more",
                row.get::<_, String>(0)
            )));
        }
        if admitted.deprecated {
            crate::store::make_tombstone(&mut admitted);
        } else if let Some(reason) = bundle_refusal(&mut tx, &admitted)? {
            return Err(StoreError::CannotApprove(reason));
        }
        let source = Source::QuarantineApproval.to_string();
        let mut writer = Writer { tx, seq: first_seq, source: &source, depth: self.limits.history_depth };
        let bundle = admitted.bundle_digest.clone();
        writer.install(&admitted, sender.reshares(&admitted), &bundle)?;
        let Writer { mut tx, seq, .. } = writer;
        if let Some((origin, key_id)) = &signer {
            tx.execute(
                "INSERT INTO hub_origin_keys (instance, key_id, recorded_at) VALUES ($1, $2, $3)
                 ON CONFLICT (instance) DO NOTHING",
                &[origin, key_id, &now().to_string()],
            )?;
        }
        set_status(&mut tx, id, QuarantineStatus::Approved)?;
        let reason = approval_reason(id, &entry, &admitted, &sender);
        audit(&mut tx, &Source::Operator.to_string(), &admitted.skill_name, "quarantine-approve", &reason)?;
        tx.execute("UPDATE hub_meta SET value = $1 WHERE key = 'sequence'", &[&seq.to_string()])?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &seq.to_string()])?;
        tx.commit()?;
        listen::raise(&self.sequence, seq);
        Ok(admitted)
    }
}
