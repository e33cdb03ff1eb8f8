//! Bundles at intake (`SPEC.md` §12.9): an installing decision for a bundle
//! stands only when every file it lists is held and checks out; otherwise
//! it becomes the refusal the store records instead — `pending: …` while a
//! blob is missing (the packet waits in the quarantine with its reason
//! until it is sent again with its blobs), `invalid bundle: …` when a held
//! file fails its entry, `rejected by safety scan: …` when a file (or an
//! archive's member) carries a finding at the policy's threshold. Nothing of such a bundle is installed, not even
//! its `SKILL.md`. A tombstone lists no files: a withdrawal needs none.

use std::collections::HashMap;

use ecp_protocol::merge::tally;
use ecp_protocol::{AcceptPolicy, Decision, KnowledgeUpdate, MergeOutcome, SkillPacket};

use crate::store::{Tx, make_tombstone};

/// The bundles of `update` as received, by position: a refused decision
/// carries the packet as received (the store keeps it so, and a later
/// merge or approval lowers it once), an installing one the lowered packet.
pub(super) fn as_received(update: &KnowledgeUpdate) -> HashMap<usize, SkillPacket> {
    update
        .skills
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.files.is_empty())
        .map(|(i, p)| (i, p.clone()))
        .collect()
}

/// `outcome` with each installing decision for a bundle whose files are not
/// all held, fail their checks or carry a finding at the policy's threshold
/// (`SPEC.md` §12.9.4: every file scanned by its language, archives walked)
/// turned into its refusal, carrying the packet as it was `received`;
/// recounted. The files' findings join the decision's either way.
pub(super) fn gate(
    tx: &Tx<'_>,
    mut outcome: MergeOutcome,
    policy: &(impl AcceptPolicy + ?Sized),
    mut received: HashMap<usize, SkillPacket>,
) -> MergeOutcome {
    let mut changed = false;
    for d in &mut outcome.decisions {
        if !matches!(d.decision, Decision::New | Decision::Updated { .. }) {
            continue;
        }
        if d.packet.deprecated {
            make_tombstone(&mut d.packet);
        } else if let Some(scan) = tx.bundle_scan(&d.packet, policy) {
            if scan.refusal.is_some() {
                if let Some(packet) = received.remove(&d.index) {
                    d.packet = packet;
                }
                changed = true;
            }
            d.apply_bundle_scan(scan);
        }
    }
    if changed {
        outcome.result = tally(&outcome.decisions);
    }
    outcome
}
