//! A push to the hub: the protocol's stages 1–4 on each packet alone
//! ([`check_update`]: integrity, structure, the scan), the acceptance
//! check and scan of each bundle's files (`blobs::prescan`) and the
//! signatures of its revocations, then, in one PostgreSQL transaction, its
//! revocations (`revoke`), stage 5 on the view read under the lock
//! ([`resolve_update`]), the bundles' gate (every blob still held, else
//! `pending: …`), the outcome claims (`evidence`), the per-origin and per-sender limits, and the
//! installs, quarantine (with the reason) and audit — the same decisions,
//! limits and log lines as the SQLite node's merge
//! ([`crate::intake::merge()`]), whose parts it uses.
//!
//! Writers of every replica queue on the row of the sequence number
//! (`FOR UPDATE`), taken once stages 1–4 are done (review H2: a scan never
//! holds it): the view stage 5 decides on cannot change under it, the
//! limits cannot be squeezed under twice, and sequence numbers commit in
//! order. Pushes run on connections of their own ([`super::PUSH_POOL`]), so
//! that pushes waiting for the lock never take the connections reads and
//! `/readyz` need. The commit is announced with `NOTIFY`.

use std::cell::RefCell;
use std::collections::HashMap;

use ecp_protocol::merge::{Stage, check_update, content_key, origin_verified, resolve_update};
use ecp_protocol::scan::Severity;
use ecp_protocol::{
    AcceptPolicy, Decision, KnowledgeUpdate, MergeResult, PacketDecision, SkillKind, SkillPacket,
    StandardPolicy, StoredSkill, Timestamp,
};
use postgres::Transaction;

use super::{CHANNEL, HubStore, blobs, packed, quarantine, revoke};
use crate::decision_log::{self, Decisions, Verdict};
use crate::intake::Sender;
use crate::intake::hold_back::{admit, installs_by_origin, new_by_sender};
use crate::intake::merge::{Keyed, install_reason, logged, refused_whole, signers};
use crate::store::origin_limits::{Counts, Per, assess, record, unix_now};
use crate::store::{StoreError, from_json, now, to_json};

impl HubStore {
    /// Merges a pushed `update` from `sender` under `policy`, applying every
    /// decision in one transaction; blocking. An update that would take an
    /// origin or the sender over its limits is refused whole
    /// ([`StoreError::OriginLimited`]) and changes nothing. Withdrawals are
    /// applied as they come (a hub has no deletion guard: no folder to clear).
    pub fn merge(
        &self,
        mut update: KnowledgeUpdate,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<MergeResult, StoreError> {
        // The bundle digest each packet was received with, for revocations
        // naming it (a tombstone is installed without it).
        let received_bundles: Vec<(String, String, String)> = update
            .skills
            .iter()
            .filter(|p| !p.bundle_digest.is_empty())
            .map(|p| (p.skill_name.clone(), p.integrity_hash.clone(), p.bundle_digest.clone()))
            .collect();
        // Signatures are checked before the lock: only the lookups wait for it.
        let revocations = revoke::verified(std::mem::take(&mut update.revocations));
        let carried = crate::intake::outcomes::carried(&update);
        let source = sender.source().to_string();
        let ctx = sender.context(&self.instance_id);
        // A name holding NUL is never held (and PostgreSQL's TEXT refuses
        // it): not looked up; the merge refuses it at the name stage.
        let names: Vec<String> =
            update.skills.iter().map(|p| p.skill_name.clone()).filter(|n| !n.contains('\0')).collect();
        let content = update.skills.iter().any(|p| !origin_verified(p, &ctx));
        let signers: Vec<String> = signers(&update).map(str::to_owned).collect();
        // A push connection: pushes queue for these, never for the
        // connections reads and /readyz use (review H2).
        let mut conn = self.pushes.get()?;
        // Stages 1–4 (integrity, structure, the scan: most of a merge)
        // before any lock, so that writers queue only for the writes. The
        // view read here only spares the scan of copies already held.
        // A pending bundle is kept as received, to be merged again as sent.
        let received: HashMap<usize, SkillPacket> = update
            .skills
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.files.is_empty())
            .map(|(i, p)| (i, p.clone()))
            .collect();
        let held = view(&mut *conn, &names, false)?;
        // The bundles' checks and scans too (§12.9): the blobs they read
        // cannot change, only go, which the gate sees under the lock.
        let scans = blobs::prescan(&mut conn, &update.skills, &held, policy);
        let checked = check_update(update, &held, policy, &ctx);
        drop(held);
        let mut tx = conn.transaction()?;
        let row = tx.query_one("SELECT value FROM hub_meta WHERE key = 'sequence' FOR UPDATE", &[])?;
        let first_seq: i64 = row
            .get::<_, String>(0)
            .parse()
            .map_err(|_| StoreError::Corrupt("the hub's sequence number".into()))?;
        let limits = &self.limits;
        let mut writer = Writer { tx, seq: first_seq, source: &source, depth: limits.history_depth };
        // First the revocations (SPEC §14.5.4): a revoked version in this
        // very update is then refused.
        writer.take_revocations(&revocations)?;
        // Stage 5 on what is held now, under the lock.
        let view = view(&mut writer.tx, &names, content)?;
        let revoked = revoke::revoked_of(&mut writer.tx, &names, &received_bundles)?;
        let keyed = Keyed { skills: &view, keys: origin_keys(&mut writer.tx, &signers)?, revoked };
        let outcome = resolve_update(checked, &keyed, &ctx);
        let outcome = blobs::gate(&mut writer.tx, outcome, policy, scans)?;
        let outcome = writer.weigh(outcome, &carried, sender, &self.instance_id, policy.evidence_rule())?;
        let at = unix_now();
        let (by_origin, by_sender) =
            (installs_by_origin(&outcome.decisions), new_by_sender(&outcome.decisions, &sender.account));
        let excess = {
            let counts = PgCounts(RefCell::new(&mut writer.tx));
            let mut excess = assess(&counts, Per::Origin, &limits.origin, &by_origin, at)?;
            excess.extend(assess(&counts, Per::Sender, &limits.sender, &by_sender, at)?);
            excess
        };
        if !excess.is_empty() {
            return Err(refused_whole(excess, sender).into());
        }
        let admitted = admit(outcome, &[]);
        let mut log = Decisions::default();
        writer.apply(&admitted.decisions, &view, sender, limits.quarantine, &received, &mut log)?;
        let Writer { mut tx, seq, .. } = writer;
        for d in admitted.decisions.iter().filter(|d| !matches!(d.decision, Decision::Rejected { .. })) {
            if let Some(signature) = &d.packet.origin_signature {
                tx.execute(
                    "INSERT INTO hub_origin_keys (instance, key_id, recorded_at) VALUES ($1, $2, $3)
                     ON CONFLICT (instance) DO NOTHING",
                    &[&d.packet.origin_instance, &signature.key_id, &now().to_string()],
                )?;
            }
        }
        {
            let counts = PgCounts(RefCell::new(&mut tx));
            record(&counts, Per::Origin, &by_origin, at)?;
            record(&counts, Per::Sender, &by_sender, at)?;
        }
        quarantine::evict(&mut tx, limits.quarantine, &source)?;
        if seq > first_seq {
            tx.execute("UPDATE hub_meta SET value = $1 WHERE key = 'sequence'", &[&seq.to_string()])?;
            // Delivered to every listening replica when (and only if) this commits.
            tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &seq.to_string()])?;
        }
        tx.commit()?;
        if seq > first_seq {
            super::listen::raise(&self.sequence, seq);
        }
        log.log();
        Ok(admitted.result)
    }
}

/// The merge's view of the named skills (tombstones included); with
/// `content`, each with its body's content key (echoes, `SPEC.md` §6.6.4).
fn view(
    tx: &mut impl postgres::GenericClient,
    names: &[String],
    content: bool,
) -> Result<HashMap<String, StoredSkill>, StoreError> {
    let mut view = HashMap::with_capacity(names.len());
    let rows = tx.query(
        "SELECT name, kind, origin, integrity_hash, created_at, deprecated, confidence, origin_verified,
                CASE WHEN $2 THEN packet END, origin_key, bundle_digest
         FROM hub_skills WHERE name = ANY($1)",
        &[&names, &content],
    )?;
    for row in rows {
        let content_key = match row.get::<_, Option<&[u8]>>(8) {
            Some(frame) => {
                let packet: SkillPacket = from_json(&packed::json(rusqlite::types::ValueRef::Blob(frame))?)?;
                Some(content_key(&packet.skill_body))
            }
            None => None,
        };
        let kind = if row.get::<_, &str>(1) == "local" { SkillKind::Local } else { SkillKind::External };
        view.insert(
            row.get(0),
            StoredSkill {
                kind,
                origin: row.get(2),
                integrity_hash: row.get(3),
                created_at: Timestamp::parse(row.get(4)).unwrap_or_default(),
                deprecated: row.get(5),
                confidence: Some(row.get(6)),
                bundle_digest: row.get(10),
                origin_verified: row.get(7),
                content_key,
                origin_key: row.get(9),
            },
        );
    }
    Ok(view)
}

/// The keys the named origins are known by.
fn origin_keys(
    tx: &mut Transaction<'_>,
    instances: &[String],
) -> Result<HashMap<String, String>, StoreError> {
    let rows =
        tx.query("SELECT instance, key_id FROM hub_origin_keys WHERE instance = ANY($1)", &[&instances])?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The writes of one merge, each change taking the next sequence number.
pub(super) struct Writer<'a, 't> {
    pub(super) tx: Transaction<'t>,
    /// The sequence number of the last change written.
    pub(super) seq: i64,
    pub(super) source: &'a str,
    /// Superseded versions kept per skill.
    pub(super) depth: u64,
}

impl Writer<'_, '_> {
    /// Installs, quarantines and audits each decision, in update order, and
    /// adds it to the decisions to log.
    fn apply(
        &mut self,
        decisions: &[PacketDecision],
        view: &HashMap<String, StoredSkill>,
        sender: &Sender,
        caps: crate::store::QuarantineCaps,
        received: &HashMap<usize, SkillPacket>,
        log: &mut Decisions,
    ) -> Result<(), StoreError> {
        let (mut unchanged, mut echoes) = (0usize, 0usize);
        for d in decisions {
            let name = d.packet.skill_name.as_str();
            match &d.decision {
                Decision::New | Decision::Updated { .. } => {
                    self.install(&d.packet, sender.reshares(&d.packet), &d.packet.bundle_digest)?;
                    let label = if d.decision == Decision::New { "new" } else { "updated" };
                    let reason = install_reason(d, view.get(name), sender);
                    self.audit(name, label, &reason)?;
                    let verdict = match (&d.decision, d.packet.deprecated) {
                        (Decision::New, _) => Verdict::New,
                        (_, true) => Verdict::Withdrawn,
                        (_, false) => Verdict::Updated,
                    };
                    let warned = d.warnings.iter().map(|w| format!("; warning: {w}")).collect::<String>();
                    log.push(logged(d, sender, verdict, "merge", &format!("{reason}{warned}")));
                }
                Decision::Unchanged => unchanged += 1,
                Decision::Echo => echoes += 1,
                Decision::Rejected { stage, reason } => {
                    self.hold(d, sender, *stage, reason, caps.body)?;
                    if *stage == Stage::Bundle && reason.starts_with("pending:") {
                        self.pend(received.get(&d.index).unwrap_or(&d.packet), sender, caps)?;
                    }
                    self.audit(name, &format!("rejected:{}", stage.name()), reason)?;
                    let mut refused = logged(d, sender, Verdict::Refused, stage.name(), reason);
                    if *stage == Stage::Safety {
                        refused.finding = decision_log::top_finding(&d.findings, Severity::Info).cloned();
                    }
                    log.push(refused);
                }
            }
        }
        if unchanged > 0 {
            self.audit("*", "unchanged", &format!("{unchanged} packets"))?;
        }
        if echoes > 0 {
            self.audit("*", "echo", &format!("{echoes} packets"))?;
        }
        Ok(())
    }

    /// Writes `packet` as the new current version of its skill (received
    /// as a bundle of digest `bundle`, or `""`), keeping `depth` superseded
    /// versions.
    pub(super) fn install(
        &mut self,
        packet: &SkillPacket,
        shareable: bool,
        bundle: &str,
    ) -> Result<(), StoreError> {
        self.seq += 1;
        let recorded = now().to_string();
        let frame = packed::pack(&to_json(packet));
        let version: i64 = self
            .tx
            .query_opt("SELECT version FROM hub_skills WHERE name = $1", &[&packet.skill_name])?
            .map_or(0, |r| r.get(0))
            + 1;
        if version > 1 {
            // The version superseded keeps its own copy from now on: until
            // now it was the one in hub_skills (one stored copy per version).
            self.tx.execute(
                "UPDATE hub_versions SET packet = (SELECT packet FROM hub_skills WHERE name = $1)
                 WHERE name = $1 AND version = $2",
                &[&packet.skill_name, &(version - 1)],
            )?;
        }
        let verified = packet.origin_signature.is_some()
            || !packet.provenance.as_ref().is_some_and(|p| p.origin_unverified);
        let origin_key = packet.origin_signature.as_ref().map(|s| s.key_id.as_str());
        let description = text(&packet.skill_description).into_owned();
        self.tx.execute(
            "INSERT INTO hub_skills (name, kind, origin, version, integrity_hash, created_at, updated_at, deprecated,
                                     shareable, confidence, tags, seq, packet, origin_verified, origin_key,
                                     description, search, bundle_digest)
             VALUES ($1, 'external', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                     $16::text::tsvector, $17)
             ON CONFLICT (name) DO UPDATE SET
                 kind = excluded.kind, origin = excluded.origin, version = excluded.version,
                 integrity_hash = excluded.integrity_hash, created_at = excluded.created_at,
                 updated_at = excluded.updated_at, deprecated = excluded.deprecated,
                 shareable = excluded.shareable, confidence = excluded.confidence, tags = excluded.tags,
                 seq = excluded.seq, packet = excluded.packet, origin_verified = excluded.origin_verified,
                 origin_key = excluded.origin_key, description = excluded.description,
                 search = excluded.search, bundle_digest = excluded.bundle_digest",
            &[
                &packet.skill_name,
                &packet.origin_instance,
                &version,
                &packet.integrity_hash,
                &packet.created_at.to_string(),
                &recorded,
                &packet.deprecated,
                &shareable,
                &packet.confidence,
                &to_json(&packet.tags),
                &self.seq,
                &frame,
                &verified,
                &origin_key,
                &description,
                &super::search::indexed(packet, shareable && !packet.deprecated),
                &packet.bundle_digest,
            ],
        )?;
        self.tx.execute(
            "INSERT INTO hub_versions (name, version, seq, integrity_hash, deprecated, recorded_at, source,
                                       bundle_digest)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &packet.skill_name,
                &version,
                &self.seq,
                &packet.integrity_hash,
                &packet.deprecated,
                &recorded,
                &self.source,
                &bundle,
            ],
        )?;
        self.add_refs(packet, version)?;
        let oldest_kept = version - i64::try_from(self.depth).unwrap_or(i64::MAX).min(version);
        self.tx.execute(
            "DELETE FROM hub_versions WHERE name = $1 AND version < $2",
            &[&packet.skill_name, &oldest_kept],
        )?;
        Ok(())
    }

    pub(super) fn audit(&mut self, skill: &str, action: &str, reason: &str) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO hub_audit (at, source, skill, action, reason) VALUES ($1, $2, $3, $4, $5)",
            &[&now().to_string(), &self.source, &text(skill), &action, &text(reason)],
        )?;
        Ok(())
    }
}

/// `s` as a PostgreSQL `TEXT` value: that type refuses NUL, which a refused
/// packet's name (or a reason quoting it), or any packet's description, may hold — written as U+FFFD, so
/// that the refusal is kept rather than failing the whole update.
pub(super) fn text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{fffd}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The install counts in the hub's table, through the merge's transaction.
struct PgCounts<'a, 't>(RefCell<&'a mut Transaction<'t>>);

impl Counts for PgCounts<'_, '_> {
    fn installs_after(&self, per: Per, origin: &str, after: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        let rows = self.0.borrow_mut().query(
            "SELECT at, installs FROM hub_installs WHERE per = $1 AND key = $2 AND at > $3 ORDER BY at",
            &[&per.to_string(), &origin, &after],
        )?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn add_installs(&self, per: Per, origin: &str, now: i64, n: u64) -> Result<(), StoreError> {
        self.0.borrow_mut().execute(
            "INSERT INTO hub_installs (per, key, at, installs) VALUES ($1, $2, $3, $4)
             ON CONFLICT (per, key, at) DO UPDATE SET installs = hub_installs.installs + excluded.installs",
            &[&per.to_string(), &origin, &now, &i64::try_from(n).unwrap_or(i64::MAX)],
        )?;
        Ok(())
    }

    fn forget_installs(&self, per: Per, before: i64) -> Result<(), StoreError> {
        self.0
            .borrow_mut()
            .execute("DELETE FROM hub_installs WHERE per = $1 AND at <= $2", &[&per.to_string(), &before])?;
        Ok(())
    }
}
