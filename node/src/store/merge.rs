//! Applying a merge: read the view, decide with the protocol crate, apply
//! every decision in one transaction.

use ecp_protocol::{
    AcceptPolicy, Decision, KnowledgeUpdate, MergeContext, MergeResult, SkillKind, merge_knowledge,
};
use rusqlite::OptionalExtension;

use super::{Change, Source, Store, StoreError, audit, now, quarantine, skills};

/// What a merge did: the wire answer and the changes to project.
#[derive(Debug)]
pub struct Merged {
    /// The truthful MergeResult.
    pub result: MergeResult,
    /// Committed changes, for the skills folder.
    pub changes: Vec<Change>,
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
    /// Merges `update` from `sender` under `policy`, applying every decision
    /// (installs, quarantine, audit) in one transaction.
    pub fn merge(
        &self,
        update: KnowledgeUpdate,
        sender: &Sender,
        policy: &impl AcceptPolicy,
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
            let outcome = merge_knowledge(update, &view, policy, &ctx);
            let mut changes = Vec::new();
            let mut unchanged = 0usize;
            for d in &outcome.decisions {
                let name = d.packet.skill_name.as_str();
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
                        quarantine::hold(tx, &peer, &d.packet, *stage, reason, &d.findings)?;
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
            Ok(Merged { result: outcome.result, changes })
        })
    }

    /// Installs a held quarantine entry as an external skill, lowered as if
    /// it had been accepted from its peer; audited.
    pub fn quarantine_approve(&self, id: i64, trust: f64) -> Result<Change, StoreError> {
        self.write(|tx| {
            let (entry, packet) = {
                // Re-read under the write lock: the entry must still be held.
                let row: Option<(String, String)> = tx
                    .query_row(
                        "SELECT peer, packet FROM quarantine WHERE id = ?1 AND status = 'held'",
                        rusqlite::params![id],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                row.ok_or(StoreError::NoSuchQuarantineEntry(id))?
            };
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
            let sender = entry.strip_prefix("peer:").unwrap_or(&entry).to_owned();
            let ctx = MergeContext { local_instance: self.instance_id(), sender: &sender, trust, now: now() };
            let mut admitted = ecp_protocol::merge::receive(packet, &ctx);
            // The operator vouches for the skill as sent; hashes stay truthful.
            admitted.reseal();
            let change = skills::upsert(
                tx,
                &admitted,
                SkillKind::External,
                admitted.shareable,
                &Source::QuarantineApproval,
            )?;
            tx.execute("UPDATE quarantine SET status = 'approved' WHERE id = ?1", rusqlite::params![id])?;
            audit::record(
                tx,
                "operator",
                &admitted.skill_name,
                "quarantine-approve",
                &format!("entry {id}"),
            )?;
            Ok(change)
        })
    }
}
