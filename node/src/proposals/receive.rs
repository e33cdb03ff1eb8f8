//! `POST /ecp/proposals` (`SPEC.md` §17.4): the checks every hop makes,
//! whether this node is the origin or a relay on the way, the per-sender
//! limit, and copies folded into the proposal held.

use ecp_protocol::StandardPolicy;
use ecp_protocol::proposal::{self, Proposal, ProposalAnswer, ProposalState};

use super::ProposalsError;
use crate::intake::Sender;
use crate::library::Library;
use crate::store::{NewProposal, ProposalRecorded, Role, Source};

/// Takes `proposal` from `sender`; blocking. The origin holds it for its
/// user's review; a relay holds it for the outbox to pass on. `per_hour`
/// limits the new proposals of one sender (0: no limit). Returns the
/// answer, and whether the proposal is new here (a copy folds into the
/// one held and is answered with its state).
///
/// # Errors
///
/// The first check it fails, the limit, or a node off its route.
pub fn receive(
    library: &Library,
    proposal: &Proposal,
    sender: &Sender,
    policy: &StandardPolicy,
    per_hour: u64,
) -> Result<(ProposalAnswer, bool), ProposalsError> {
    let store = library.store();
    let instance = store.instance_id().to_owned();
    proposal::check(proposal, policy, &sender.context(&instance)).inspect_err(|e| {
        // The proposer records the refusal with its reason; the log says it here.
        tracing::info!(skill = %proposal.derived_from.name, sender = %sender.account, reason = %e, "proposal refused");
    })?;
    let from = &proposal.derived_from;
    let held = store.skill(&from.name)?.filter(|(record, _, _)| !record.deprecated);
    let role = match held {
        Some((record, _, _)) if from.origin == instance && record.kind == "local" => Role::Incoming,
        Some((record, _, _)) if from.origin != instance && record.origin == from.origin => Role::Relayed,
        _ => return Err(ProposalsError::NotOnRoute { name: from.name.clone(), origin: from.origin.clone() }),
    };
    let state = if role == Role::Incoming { ProposalState::Pending } else { ProposalState::Relayed };
    let packet = &proposal.packet;
    let id = proposal::proposal_id(from, &packet.integrity_hash);
    let new = NewProposal { id: &id, role, derived_from: from, packet, sender: &sender.account, state };
    let fresh = match store.record_proposal(&new, per_hour)? {
        ProposalRecorded::Limited { limit } => return Err(ProposalsError::Limited { limit }),
        ProposalRecorded::Folded => false,
        ProposalRecorded::New => {
            let what =
                if role == Role::Incoming { "waits for review" } else { "is relayed toward its origin" };
            let reason = format!("proposal {id} from {} {what}", packet.origin_instance);
            store.transaction(|tx| {
                tx.audit(&Source::Peer(sender.instance.clone()), &from.name, "proposal", &reason)
            })?;
            tracing::info!(skill = %from.name, proposal = %id, proposer = %packet.origin_instance, "proposal received: {what}");
            if role == Role::Relayed {
                library.proposals_waiting().notify_one();
            }
            true
        }
    };
    let held = store.proposal(&id)?.ok_or_else(|| ProposalsError::NoSuchProposal(id.clone()))?;
    Ok((answer(&held), fresh))
}

/// What `GET /ecp/proposals/{id}` answers for a proposal held.
pub fn answer(record: &crate::store::ProposalRecord) -> ProposalAnswer {
    ProposalAnswer {
        id: record.id.clone(),
        state: record.state,
        note: record.note.clone(),
        published_hash: record.published_hash.clone(),
    }
}
