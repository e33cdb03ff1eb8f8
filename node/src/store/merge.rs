//! Applying a merge: read the view, decide with the protocol crate, check
//! the per-origin limits against the decisions, apply them in one transaction.

use std::collections::HashMap;

use ecp_protocol::{
    AcceptPolicy, Decision, KnowledgeUpdate, MergeContext, MergeResult, SkillKind, merge_knowledge,
};

use super::origin_limits::{self, OriginExcess, OriginLimited, OriginLimits, PerOrigin};
use super::quarantine::Refusal;
use super::{Change, Source, Store, StoreError, audit, now, quarantine, skills};

/// What a merge did: the wire answer and the changes to project.
#[derive(Debug)]
pub struct Merged {
    /// The truthful MergeResult. With [`OnExcess::HoldBack`], packets held
    /// back are in no count (the result then totals fewer than the packets).
    pub result: MergeResult,
    /// Committed changes, for the skills folder.
    pub changes: Vec<Change>,
    /// The origins whose new skills did not all fit under their limits
    /// ([`OnExcess::HoldBack`] only; a refused merge returns an error instead).
    pub held_back: Vec<OriginExcess>,
}

/// What a merge does when new skills of an origin do not fit under its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnExcess {
    /// Apply nothing: the merge fails with [`StoreError::OriginLimited`].
    /// For pushes, whose sender is told to retry.
    Refuse,
    /// Install what fits of that origin (the first new packets in update
    /// order), leave the rest out — not installed, not quarantined — and
    /// apply everything else. For pulls, which hold their cursor and fetch
    /// the rest again, so one flooding origin does not stop a peer's others.
    HoldBack,
}

/// Who sent an update and how far we trust them.
#[derive(Debug, Clone)]
pub struct Sender {
    /// The peer's instance id (configured, or the update's `peerInstance`).
    pub instance: String,
    /// Trust factor, 0..1.
    pub trust: f64,
    /// Whether external skills are re-served to other peers.
    pub reshare: bool,
}

impl Store {
    /// Merges `update` from `sender` under `policy` and the per-origin
    /// `limits`, applying every decision (installs, quarantine, audit) in one
    /// transaction. New skills over an origin's limits are handled as
    /// `on_excess` says.
    pub fn merge(
        &self,
        update: KnowledgeUpdate,
        sender: &Sender,
        policy: &impl AcceptPolicy,
        limits: &OriginLimits,
        on_excess: OnExcess,
    ) -> Result<Merged, StoreError> {
        let peer = Source::Peer(sender.instance.clone()).label();
        self.write(|tx| {
            let names: Vec<&str> = update.skills.iter().map(|p| p.skill_name.as_str()).collect();
            let view = skills::view(tx, &names)?;
            let ctx = MergeContext {
                local_instance: self.instance_id(),
                sender: &sender.instance,
                trust: sender.trust,
                now: now(),
            };
            let mut outcome = merge_knowledge(update, &view, policy, &ctx);
            // The limits are checked against the decisions before any is applied.
            let at = origin_limits::unix_now();
            let mut arriving = PerOrigin::default();
            for d in outcome.decisions.iter().filter(|d| d.decision == Decision::New) {
                arriving.add(&d.packet.origin_instance);
            }
            let held_back = origin_limits::assess(tx, limits, &arriving, at)?;
            if !held_back.is_empty() && on_excess == OnExcess::Refuse {
                return Err(OriginLimited { excess: held_back }.into());
            }
            let mut room: HashMap<&str, u64> =
                held_back.iter().map(|e| (e.origin.as_str(), e.room)).collect();
            let mut installed = PerOrigin::default();
            let mut changes = Vec::new();
            let mut unchanged = 0usize;
            for d in &outcome.decisions {
                let name = d.packet.skill_name.as_str();
                if d.decision == Decision::New {
                    if let Some(left) = room.get_mut(d.packet.origin_instance.as_str()) {
                        if *left == 0 {
                            outcome.result.new_skills -= 1;
                            continue;
                        }
                        *left -= 1;
                    }
                    installed.add(&d.packet.origin_instance);
                }
                match &d.decision {
                    Decision::New | Decision::Updated { .. } => {
                        let source = Source::Peer(sender.instance.clone());
                        // Re-served only when both the sender and our policy allow it.
                        let shareable = sender.reshare && d.packet.shareable;
                        changes.push(skills::upsert(tx, &d.packet, SkillKind::External, shareable, &source)?);
                        let label = if d.decision == Decision::New { "new" } else { "updated" };
                        audit::record(
                            tx,
                            &peer,
                            name,
                            label,
                            &format!("confidence {}", d.packet.confidence),
                        )?;
                    }
                    Decision::Unchanged => unchanged += 1,
                    Decision::Rejected { stage, reason } => {
                        let refusal = Refusal {
                            peer: &peer,
                            stage: *stage,
                            reason,
                            findings: &d.findings,
                            trust: sender.trust,
                        };
                        quarantine::hold(tx, &d.packet, &refusal)?;
                        let label = format!("rejected:{}", quarantine::stage_label(*stage));
                        audit::record(tx, &peer, name, &label, reason)?;
                    }
                }
            }
            if unchanged > 0 {
                // One line, not one per packet: a full pull of an unchanged
                // peer would otherwise write its whole skill set every round.
                audit::record(tx, &peer, "*", "unchanged", &format!("{unchanged} packets"))?;
            }
            for excess in &held_back {
                let reason = format!(
                    "{} of {} new skills held back by the origin limit ({excess})",
                    excess.arriving - excess.room,
                    excess.arriving
                );
                audit::record(tx, &peer, "*", "origin-limit", &reason)?;
            }
            origin_limits::record(tx, &installed, at)?;
            Ok(Merged { result: outcome.result, changes, held_back })
        })
    }

    /// Installs a held quarantine entry as an external skill, lowered by the
    /// trust its sender had when it was refused (`fallback_trust` for entries
    /// held before that was kept), with its provenance extended as if it had
    /// been accepted from its peer; re-served only if `reshare` allows;
    /// audited. The operator's decision: origin limits do not apply, and the
    /// install does not count against them.
    pub fn quarantine_approve(
        &self,
        id: i64,
        fallback_trust: f64,
        reshare: bool,
    ) -> Result<Change, StoreError> {
        self.write(|tx| {
            // Re-read under the write lock: the entry must still be held.
            let (entry, packet) = quarantine::held_entry(tx, id)?;
            let packet: ecp_protocol::SkillPacket = super::from_json(&packet)?;
            if let Err(e) = ecp_protocol::skill_doc::validate_name(&packet.skill_name) {
                return Err(StoreError::CannotApprove(format!("its name is invalid: {e}")));
            }
            if let Some((_, SkillKind::Local, _)) = skills::current(tx, &packet.skill_name)? {
                return Err(StoreError::CannotApprove(format!(
                    "a local skill is named {:?}; remove it first",
                    packet.skill_name
                )));
            }
            let sender = entry.peer.strip_prefix("peer:").unwrap_or(&entry.peer).to_owned();
            let trust = entry.trust.unwrap_or(fallback_trust);
            let ctx = MergeContext { local_instance: self.instance_id(), sender: &sender, trust, now: now() };
            let mut admitted = ecp_protocol::merge::receive(packet, &ctx);
            // The operator vouches for the skill as sent; hashes stay truthful.
            admitted.reseal();
            let change = skills::upsert(
                tx,
                &admitted,
                SkillKind::External,
                reshare && admitted.shareable,
                &Source::QuarantineApproval,
            )?;
            tx.execute("UPDATE quarantine SET status = 'approved' WHERE id = ?1", rusqlite::params![id])?;
            let reason = format!(
                "entry {id} from {}, refused at stage {}; installed from origin {:?} at confidence {} \
                 (trust {trust}); origin limits do not apply to approvals",
                entry.peer, entry.stage, admitted.origin_instance, admitted.confidence
            );
            audit::record(tx, "operator", &admitted.skill_name, "quarantine-approve", &reason)?;
            Ok(change)
        })
    }
}
