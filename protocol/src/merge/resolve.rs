//! Stage 5 of the merge: what an admitted packet does to the store.
//!
//! Rules, in order (`SPEC.md` › Merge › Resolution):
//! - several admitted packets with one name in one update: the one with the
//!   latest `createdAt` wins, ties broken by the larger stored hash, then by
//!   the earlier position — so the winner does not depend on packet order
//!   except between identical packets; the others are refused as duplicates;
//! - not held: new (a tombstone for a skill not held changes nothing);
//! - held with the same hash and the same deprecated flag: unchanged;
//! - held as a local skill: conflict — a remote packet never replaces it;
//! - held from another origin: conflict — only the origin may replace it;
//! - held from the same origin: updated only when the packet is newer (or is
//!   the tombstone of the very version held); else conflict.

use std::collections::HashMap;

use super::checks::{Admitted, Checked};
use super::{Decision, MergeContext, PacketDecision, SkillKind, Stage, StoreView, receive};
use crate::scan::Finding;
use crate::wire::{SkillPacket, Timestamp};

pub(super) fn resolve(
    checked: Vec<Checked>,
    store: &impl StoreView,
    ctx: &MergeContext<'_>,
) -> Vec<PacketDecision> {
    let winners = pick_winners(&checked);
    // Deciding needs the store, which need not be shareable between threads;
    // building what an installed packet becomes does not, and allocates a
    // dozen strings per packet, so that runs in parallel.
    let decided: Vec<Decided> = checked
        .into_iter()
        .map(|Checked { index, packet, verdict, findings }| {
            let (decision, admitted) = match verdict {
                Err((stage, reason)) => (Decision::Rejected { stage, reason }, None),
                Ok(admitted) => match winners[index] {
                    Some(winner) if winner != index => {
                        let reason = format!(
                            "duplicate skill name in this update: packet #{winner} wins (latest createdAt, then larger hash, then first)"
                        );
                        (Decision::Rejected { stage: Stage::Duplicate, reason }, None)
                    }
                    _ => (against_store(&packet, &admitted, store), Some(admitted)),
                },
            };
            Decided { index, packet, decision, admitted, findings }
        })
        .collect();
    crate::par::map_indexed(decided, |_, Decided { index, packet, decision, admitted, findings }| {
        let packet = match admitted {
            Some(admitted) if decision.installs() => receive(stored_form(packet, admitted), ctx),
            _ => packet,
        };
        PacketDecision { index, packet, decision, findings }
    })
}

/// A packet whose decision is made; `admitted` is kept for the packets to install.
struct Decided {
    index: usize,
    packet: SkillPacket,
    decision: Decision,
    admitted: Option<Admitted>,
    findings: Vec<Finding>,
}

/// For each packet (by position): the index of the winning packet of its name,
/// when more than one admitted packet carries that name.
fn pick_winners(checked: &[Checked]) -> Vec<Option<usize>> {
    struct Best<'a> {
        key: (Timestamp, &'a str),
        index: usize,
        contested: bool,
    }
    // Each name is hashed once: the map gives a slot in `best`, and every
    // packet remembers its slot. Sized up front, so it never rehashes.
    let mut slots: HashMap<&str, usize> = HashMap::with_capacity(checked.len());
    let mut best: Vec<Best<'_>> = Vec::new();
    let mut slot_of: Vec<Option<usize>> = Vec::with_capacity(checked.len());
    for c in checked {
        let Ok(admitted) = &c.verdict else {
            slot_of.push(None);
            continue;
        };
        let key = (c.packet.created_at, admitted.stored_hash(&c.packet));
        let slot = *slots.entry(c.packet.skill_name.as_str()).or_insert_with(|| {
            best.push(Best { key, index: c.index, contested: false });
            best.len() - 1
        });
        let b = &mut best[slot];
        if b.index != c.index {
            b.contested = true;
            // Strictly greater: on a full tie the earlier packet keeps the name.
            if key > b.key {
                b.key = key;
                b.index = c.index;
            }
        }
        slot_of.push(Some(slot));
    }
    slot_of.iter().map(|s| s.map(|s| &best[s]).filter(|b| b.contested).map(|b| b.index)).collect()
}

fn against_store(packet: &SkillPacket, admitted: &Admitted, store: &impl StoreView) -> Decision {
    let conflict =
        |reason: String| Decision::Rejected { stage: Stage::Conflict, reason: format!("conflict: {reason}") };
    match store.lookup(&packet.skill_name) {
        None if packet.deprecated => Decision::Unchanged,
        None => Decision::New,
        Some(held)
            if held.integrity_hash == admitted.stored_hash(packet)
                && held.deprecated == packet.deprecated =>
        {
            Decision::Unchanged
        }
        Some(held) if held.kind == SkillKind::Local => {
            conflict("a locally authored skill has this name; a remote packet never replaces it".to_owned())
        }
        Some(held) if held.origin != packet.origin_instance => conflict(format!(
            "this node holds the skill from origin {:?}; only that origin may replace it",
            held.origin
        )),
        Some(held) => {
            let newer = packet.created_at > held.created_at;
            let withdraws_held =
                packet.created_at == held.created_at && packet.deprecated && !held.deprecated;
            if newer || withdraws_held {
                Decision::Updated { previous_hash: held.integrity_hash }
            } else {
                conflict(format!(
                    "createdAt {} is not newer than the held version's {}",
                    packet.created_at, held.created_at
                ))
            }
        }
    }
}

/// The packet with the body that will be stored (frontmatter rebuilt if needed).
fn stored_form(mut packet: SkillPacket, admitted: Admitted) -> SkillPacket {
    if let Some(rebuilt) = admitted.rebuilt {
        packet.skill_body = rebuilt.body;
        packet.integrity_hash = rebuilt.hash;
    }
    packet
}
