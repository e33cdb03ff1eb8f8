//! The deletion guard's receiving side: the withdrawals one sender sent in
//! one push, or in all the pages of one pull round, weighed together. Over
//! the guard ([`Guard::holds`] against what the node holds from that
//! sender) they are all held for the user; under it they are merged as
//! any update is. Either way the rest of the update was merged already
//! ([`super::Withdrawals::Defer`]), so one broken node cannot empty a mesh
//! and cannot stall it either.

use ecp_protocol::merge::result_line;
use ecp_protocol::{AcceptPolicy, KnowledgeUpdate, MergeResult, SkillPacket};

use super::merge::{Merged, Mode, OnExcess, Withdrawals, merge};
use super::review::IntakeMode;
use super::{Limits, Sender};
use crate::deletion_guard::Guard;
use crate::store::{OriginLimits, Received, Store, StoreError};

/// Weighs the withdrawals `packets` that `sender` sent in one push or
/// round: holds them all when `guard` says so (audited, a WARN naming the
/// sender and the count, a `held` line per packet), else merges them. A
/// withdrawal of a skill already held from this sender (a round that starts
/// again from 0 brings it again) stays in that held deletion.
pub fn settle(
    store: &Store,
    packets: Vec<SkillPacket>,
    sender: &Sender,
    guard: Guard,
    policy: &impl AcceptPolicy,
    limits: &Limits,
    intake: IntakeMode,
) -> Result<Merged, StoreError> {
    if packets.is_empty() {
        return Ok(Merged::default());
    }
    let source = sender.source();
    let decided = store.transaction(|tx| {
        let earlier = tx.held_names(&source)?;
        let (again, fresh): (Vec<_>, Vec<_>) =
            packets.into_iter().partition(|p| earlier.contains_key(&p.skill_name));
        let mut result = MergeResult::default();
        for p in &again {
            let reason = format!("deletion held: already held as deletion {}", earlier[&p.skill_name]);
            hold_line(&mut result, p, &reason);
        }
        let mut names: Vec<String> = fresh.iter().map(|p| p.skill_name.clone()).collect();
        names.sort();
        names.dedup();
        let total = tx.held_from(&source, &names)?;
        if names.is_empty() || !guard.holds(names.len(), total) {
            return Ok((result, Err(fresh)));
        }
        let received = Received {
            account: sender.account.clone(),
            trust: sender.trust,
            reshare: sender.reshare,
            packets: fresh,
        };
        let held = tx.hold_received(&source, &received)?;
        let reason = format!(
            "deletion held: {} of the {total} skills held from {source} withdrawn at once, over [limits] \
             max_bulk_delete ({}) and max_bulk_delete_fraction ({}); held as deletion {} until this node's user \
             accepts or rejects it",
            held.names.len(),
            guard.max,
            guard.fraction,
            held.id
        );
        for p in &received.packets {
            hold_line(&mut result, p, &reason);
        }
        Ok((result, Ok((held, total))))
    })?;
    match decided {
        (held_before, Err(fresh)) => {
            let mut merged = withdraw(store, fresh, sender, policy, limits, intake, Withdrawals::Apply)?;
            merged.result.absorb(held_before);
            Ok(merged)
        }
        (result, Ok((held, total))) => {
            tracing::warn!(
                sender = %source,
                via = %sender.account,
                count = held.names.len(),
                of = total,
                deletion = held.id,
                "withdrawals held: this sender would tombstone more of the skills received from it than \
                 [limits] max_bulk_delete and max_bulk_delete_fraction allow at once; nothing is withdrawn \
                 until `ecp-node deletions accept {}` (or reject)",
                held.id
            );
            Ok(Merged { result, ..Merged::default() })
        }
    }
}

/// Counts `packet` as held, with its line.
fn hold_line(result: &mut MergeResult, packet: &SkillPacket, reason: &str) {
    result.held_skills += 1;
    result.held.push(result_line(&packet.skill_name, reason));
}

/// Merges the withdrawals `packets` from `sender` as any update is — so a
/// newer version that arrived since wins — in slices the packet limit
/// allows, applying what `withdrawals` says ([`Withdrawals::Apply`] for
/// those the guard let pass, [`Withdrawals::Only`] for those the user
/// accepted). The origin limits do not apply: a withdrawal brings nothing
/// new, and the deletion guard has weighed it (or the user has accepted it).
pub fn withdraw(
    store: &Store,
    packets: Vec<SkillPacket>,
    sender: &Sender,
    policy: &impl AcceptPolicy,
    limits: &Limits,
    intake: IntakeMode,
    withdrawals: Withdrawals,
) -> Result<Merged, StoreError> {
    let limits = Limits { origin: OriginLimits::OFF, ..*limits };
    let mode = Mode { on_excess: OnExcess::HoldBack, withdrawals };
    let mut all = Merged::default();
    let mut packets = packets.into_iter().peekable();
    while packets.peek().is_some() {
        let skills: Vec<SkillPacket> = packets.by_ref().take(policy.max_packets().max(1)).collect();
        let update = KnowledgeUpdate { skills, ..KnowledgeUpdate::default() };
        let merged = merge(store, update, sender, policy, &limits, mode, intake)?;
        all.result.absorb(merged.result);
        all.changes.extend(merged.changes);
        all.held_back.extend(merged.held_back);
    }
    Ok(all)
}
