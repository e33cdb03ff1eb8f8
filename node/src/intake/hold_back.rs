//! The per-origin and per-sender limits as decisions: of an origin (or a
//! sender) over its limits, only the installs that fit (the first, in
//! update order, that fit both) are made; the others are held back — not
//! installed, not quarantined, in no count — and come again with the peer's
//! next round. An origin's limit counts every install, new skill or update
//! (each update keeps a version); a sender's counts new skills.

use std::collections::HashMap;

use ecp_protocol::merge::tally;
use ecp_protocol::{Decision, MergeOutcome, MergeResult, PacketDecision};

use crate::store::origin_limits::Per;
use crate::store::{OriginExcess, PerOrigin};

/// The decisions a merge applies, and the answer counted from them.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// Every decision of the merge but the held-back packets, in update order.
    pub(crate) decisions: Vec<PacketDecision>,
    /// The counts of `decisions`: held-back packets are in none.
    pub(crate) result: MergeResult,
}

/// Installs (new skills and updates) by origin, in order of first appearance.
pub(crate) fn installs_by_origin(decisions: &[PacketDecision]) -> PerOrigin {
    decisions.iter().filter(|d| d.decision.installs()).map(|d| d.packet.origin_instance.as_str()).collect()
}

/// The new skills of an update, all under the one `account` that sent it.
pub(crate) fn new_by_sender(decisions: &[PacketDecision], account: &str) -> PerOrigin {
    decisions.iter().filter(|d| d.decision == Decision::New).map(|_| account).collect()
}

/// Leaves out the installs beyond the room of their origin, and the new
/// packets beyond the room of the sender, in `excess` (the update has one
/// sender: a sender excess applies to all its new packets).
pub(crate) fn admit(outcome: MergeOutcome, excess: &[OriginExcess]) -> Admitted {
    if excess.is_empty() {
        // Nothing left out: the protocol's answer counts these very decisions.
        return Admitted { decisions: outcome.decisions, result: outcome.result };
    }
    let mut origin_room: HashMap<&str, u64> =
        excess.iter().filter(|e| e.per == Per::Origin).map(|e| (e.origin.as_str(), e.room)).collect();
    let mut sender_room: Option<u64> = excess.iter().filter(|e| e.per == Per::Sender).map(|e| e.room).min();
    let decisions: Vec<PacketDecision> = outcome
        .decisions
        .into_iter()
        .filter(|d| {
            if !d.decision.installs() {
                return true;
            }
            let new = d.decision == Decision::New;
            let origin = origin_room.get_mut(d.packet.origin_instance.as_str());
            if origin.as_deref() == Some(&0) || (new && sender_room == Some(0)) {
                return false;
            }
            if let Some(left) = origin {
                *left -= 1;
            }
            if let Some(left) = sender_room.as_mut().filter(|_| new) {
                *left -= 1;
            }
            true
        })
        .collect();
    let result = tally(&decisions);
    Admitted { decisions, result }
}

#[cfg(test)]
mod tests {
    use ecp_protocol::merge::Stage;
    use ecp_protocol::{Origin, SkillPacket};

    use super::*;
    use crate::store::origin_limits::Window;

    fn decision(origin: &str, name: &str, decision: Decision) -> PacketDecision {
        let origin = Origin::new(origin, "someone", "linux/amd64", "1.0");
        let packet = SkillPacket::new(&origin, name, "d", "# Body\n", 0.9, crate::store::now());
        PacketDecision { index: 0, packet, decision, findings: Vec::new(), warnings: Vec::new() }
    }

    fn excess(origin: &str, arriving: u64, room: u64) -> OriginExcess {
        OriginExcess {
            per: Per::Origin,
            origin: origin.into(),
            window: Window::Hour,
            limit: room,
            installed: 0,
            arriving,
            room,
            retry_after: 3_600,
        }
    }

    fn outcome(decisions: Vec<PacketDecision>) -> MergeOutcome {
        MergeOutcome { result: tally(&decisions), decisions }
    }

    #[test]
    fn the_first_installs_that_fit_are_kept_and_the_counts_come_from_what_is_kept() {
        let rejected = Decision::Rejected { stage: Stage::Policy, reason: "policy: no".into() };
        let decisions = vec![
            decision("a", "a-1", Decision::New),
            decision("b", "b-1", Decision::New),
            decision("a", "a-2", Decision::Updated { previous_hash: "h".into() }),
            decision("a", "a-3", Decision::New),
            decision("a", "a-4", Decision::New),
            decision("a", "a-5", rejected),
            decision("b", "b-2", Decision::Unchanged),
        ];
        let admitted = admit(outcome(decisions), &[excess("a", 4, 3)]);
        let names: Vec<&str> = admitted.decisions.iter().map(|d| d.packet.skill_name.as_str()).collect();
        assert_eq!(names, ["a-1", "b-1", "a-2", "a-3", "a-5", "b-2"], "a-4 is held back: the update counted");
        let r = &admitted.result;
        assert_eq!((r.new_skills, r.updated_skills, r.unchanged, r.rejected_skills), (3, 1, 1, 1));
        assert_eq!(r.conflicts, ["a-5: policy: no"]);
        assert_eq!(admitted.result, tally(&admitted.decisions));
    }

    #[test]
    fn an_origin_without_room_installs_nothing_a_sender_without_room_only_updates() {
        let decisions = vec![
            decision("a", "a-1", Decision::New),
            decision("a", "a-2", Decision::Updated { previous_hash: "h".into() }),
            decision("a", "a-3", Decision::New),
            decision("a", "a-4", Decision::Unchanged),
        ];
        let full = admit(outcome(decisions.clone()), &[excess("a", 3, 0)]);
        assert_eq!(full.decisions.len(), 1, "only the unchanged packet");
        assert_eq!((full.result.new_skills, full.result.updated_skills, full.result.unchanged), (0, 0, 1));
        let sender = OriginExcess { per: Per::Sender, ..excess("peer:x", 2, 0) };
        let sender_full = admit(outcome(decisions.clone()), &[sender]);
        assert_eq!((sender_full.result.new_skills, sender_full.result.updated_skills), (0, 1));
        let free = admit(outcome(decisions.clone()), &[]);
        assert_eq!(free.decisions, decisions);
        assert_eq!(free.result.new_skills, 2);
    }
}
