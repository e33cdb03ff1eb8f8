//! Outcome evidence on intake (#19 item 5, `SPEC.md` §16.4–16.6): the
//! claims a packet carried are taken into the claims held about its skill
//! (kept apart from the node's own outcomes, the newest per observer,
//! weighed by the trust in their sender), and the evidence rule of the
//! policy refuses an install whose weighed failure rate is over the line.
//! A pull's echoes (this node's own skills served back) bring their claims
//! too ([`take_echoed`]).

use std::collections::HashMap;

use ecp_protocol::merge::{Stage, refused_by_policy, tally};
use ecp_protocol::outcomes::{self, EvidenceRule, HeldClaim};
use ecp_protocol::policy::DEFAULT_MAX_CLOCK_SKEW_SECS;
use ecp_protocol::{Decision, KnowledgeUpdate, MergeOutcome, OutcomeClaim, SkillPacket};

use super::Sender;
use crate::store::{Store, StoreError, Tx, now};

/// The claims each packet of `update` carries, by its index: taken before
/// the merge, which stores packets without them.
pub(crate) fn carried(update: &KnowledgeUpdate) -> HashMap<usize, Vec<OutcomeClaim>> {
    update
        .skills
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.outcomes.is_empty())
        .map(|(i, p)| (i, p.outcomes.clone()))
        .collect()
}

/// Takes the claims of every packet that passed the checks of the packet
/// itself (a refusal by policy, a loop, a conflict or a duplicate says
/// nothing against its evidence), and turns an install whose evidence the
/// `rule` refuses into that refusal, recounting the result.
pub(super) fn weigh(
    tx: &Tx<'_>,
    outcome: MergeOutcome,
    carried: &HashMap<usize, Vec<OutcomeClaim>>,
    sender: &Sender,
    local: &str,
    rule: Option<EvidenceRule>,
) -> Result<MergeOutcome, StoreError> {
    weigh_with(outcome, carried, rule, |name, origin, claims| {
        tx.take_claims(name, origin, claims, &sender.instance, sender.trust, local)
    })
}

/// [`weigh`] over any store: `take(name, origin, claims)` takes `claims`
/// about `origin`'s skill `name` (from the round's sender, at its trust)
/// and returns what is held about it afterwards — a node's SQLite store
/// or a hub's database.
pub(crate) fn weigh_with<E>(
    mut outcome: MergeOutcome,
    carried: &HashMap<usize, Vec<OutcomeClaim>>,
    rule: Option<EvidenceRule>,
    mut take: impl FnMut(&str, &str, &[OutcomeClaim]) -> Result<Vec<HeldClaim>, E>,
) -> Result<MergeOutcome, E> {
    let mut refused = false;
    for d in &mut outcome.decisions {
        let sound = match &d.decision {
            Decision::Rejected { stage, .. } => {
                matches!(stage, Stage::Policy | Stage::Duplicate | Stage::Conflict)
            }
            _ => true,
        };
        let judged = rule.filter(|_| d.decision.installs() && !d.packet.deprecated);
        let claims = carried.get(&d.index).filter(|_| sound);
        if claims.is_none() && judged.is_none() {
            continue;
        }
        let (name, origin) = (&d.packet.skill_name, &d.packet.origin_instance);
        let held = take(name, origin, claims.map_or(&[][..], Vec::as_slice))?;
        if let Some(refusal) = judged.and_then(|rule| rule.refusal(&outcomes::weigh(&held))) {
            d.decision = refused_by_policy(&refusal);
            refused = true;
        }
    }
    if refused {
        outcome.result = tally(&outcome.decisions);
    }
    Ok(outcome)
}

/// Takes the claims of `echoes` — packets of this node's own skills (or
/// of skills it relayed) that `sender` serves back, which a pull sets
/// aside unmerged: the way an origin learns how its skills fare across
/// the mesh. Claims that break the limits of `SPEC.md` §16.3 are left out,
/// as the merge would have refused them.
pub fn take_echoed(store: &Store, echoes: &[SkillPacket], sender: &Sender) -> Result<(), StoreError> {
    let carrying: Vec<&SkillPacket> = echoes
        .iter()
        .filter(|p| !p.outcomes.is_empty())
        .filter(|p| outcomes::check_claims(&p.outcomes, now(), DEFAULT_MAX_CLOCK_SKEW_SECS).is_ok())
        .collect();
    if carrying.is_empty() {
        return Ok(());
    }
    store.transaction(|tx| {
        for p in carrying {
            let (name, origin) = (&p.skill_name, &p.origin_instance);
            tx.take_claims(name, origin, &p.outcomes, &sender.instance, sender.trust, store.instance_id())?;
        }
        Ok(())
    })
}
