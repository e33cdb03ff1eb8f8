//! What the user does with proposals: on the origin, list, read, accept
//! (a new version under the origin, crediting the proposer) and reject
//! (with a note the proposer reads back); on the proposer, publish its edit
//! under a new name ([`fork`]). The CLI calls these on the store when no
//! server runs on its data folder; the `/v1/` endpoints call them inside it.

use ecp_protocol::proposal::{ProposalState, ProposedBy};
use ecp_protocol::{Provenance, SkillKind, SkillPacket};
use serde::Serialize;

use super::ProposalsError;
use crate::import::{local_origin, local_packet};
use crate::library::Library;
use crate::store::{ProposalRecord, Role, Source};

/// A proposal with the text it proposes and the text it edits.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    /// The proposal.
    pub proposal: ProposalRecord,
    /// The derived version's `SKILL.md`.
    pub body: String,
    /// The version it derives from, when this node still keeps it.
    pub base_body: Option<String>,
}

/// Every proposal this node sent, holds for review or relays, newest first.
pub fn list(library: &Library) -> Result<Vec<ProposalRecord>, ProposalsError> {
    Ok(library.store().proposals(None)?)
}

/// The proposal `id` with both texts.
pub fn show(library: &Library, id: &str) -> Result<ProposalView, ProposalsError> {
    let proposal = held(library, id)?;
    let from = &proposal.derived_from;
    let base_body =
        crate::versions::servable(library, &from.name, &from.integrity_hash)?.map(|p| p.skill_body);
    Ok(ProposalView { body: proposal.packet.skill_body.clone(), base_body, proposal })
}

fn held(library: &Library, id: &str) -> Result<ProposalRecord, ProposalsError> {
    library.store().proposal(id)?.ok_or_else(|| ProposalsError::NoSuchProposal(id.to_owned()))
}

/// The incoming proposal `id`, waiting for review.
fn pending(library: &Library, id: &str) -> Result<ProposalRecord, ProposalsError> {
    let proposal = held(library, id)?;
    if proposal.role != Role::Incoming {
        return Err(ProposalsError::NotIncoming(id.to_owned()));
    }
    if proposal.state != ProposalState::Pending {
        return Err(ProposalsError::Decided { id: id.to_owned(), state: proposal.state });
    }
    Ok(proposal)
}

/// Accepts the proposal `id`: its text becomes the skill's new version,
/// published by this node (the origin) with `provenance.proposedBy`
/// crediting the proposer; blocking. Returns the proposal as it now stands.
pub fn accept(library: &Library, id: &str, note: &str) -> Result<ProposalRecord, ProposalsError> {
    let proposal = pending(library, id)?;
    let store = library.store();
    let origin = local_origin(store.instance_id());
    let (mut packet, _) = local_packet(
        &proposal.packet.skill_body,
        None,
        &origin,
        library.structure_limits(),
        crate::store::now(),
    )
    .map_err(|e| ProposalsError::Invalid(e.to_string()))?;
    packet.provenance = Some(Provenance {
        proposed_by: Some(ProposedBy {
            instance: proposal.proposer.clone(),
            proposal: id.to_owned(),
            integrity_hash: proposal.hash.clone(),
        }),
        ..Provenance::default()
    });
    library.put_local(&packet, Source::Operator)?;
    decide(library, &proposal, ProposalState::Accepted, note, &packet)
}

/// Rejects the proposal `id` with `note`, which its proposer reads back;
/// blocking. Returns the proposal as it now stands.
pub fn reject(library: &Library, id: &str, note: &str) -> Result<ProposalRecord, ProposalsError> {
    let proposal = pending(library, id)?;
    decide(library, &proposal, ProposalState::Rejected, note, &SkillPacket::default())
}

fn decide(
    library: &Library,
    proposal: &ProposalRecord,
    state: ProposalState,
    note: &str,
    published: &SkillPacket,
) -> Result<ProposalRecord, ProposalsError> {
    let store = library.store();
    let id = &proposal.id;
    store.set_proposal_state(id, state, note, &published.integrity_hash, None)?;
    let reason = match note {
        "" => format!("proposal {id} from {}", proposal.proposer),
        note => format!("proposal {id} from {}: {note}", proposal.proposer),
    };
    store.transaction(|tx| {
        tx.audit(&Source::Operator, &proposal.name, &format!("proposal-{}", state.as_str()), &reason)
    })?;
    held(library, id)
}

/// Publishes this node's derived version of `name` as the local skill
/// `new_name`, like any other of its skills; the agent's file of `name`
/// goes back to the origin's version. Blocking. Returns the new skill.
pub fn fork(library: &Library, name: &str, new_name: &str) -> Result<SkillPacket, ProposalsError> {
    let bad = |reason: String| ProposalsError::BadName { name: new_name.to_owned(), reason };
    ecp_protocol::skill_doc::validate_name(new_name).map_err(|e| bad(e.to_string()))?;
    let store = library.store();
    if store.skill(new_name)?.is_some_and(|(record, _, _)| !record.deprecated) {
        return Err(bad("a skill of that name exists; pick another".into()));
    }
    let derived = store.derived(name)?.ok_or_else(|| ProposalsError::NoDerived(name.to_owned()))?;
    let body = renamed(&derived.packet.skill_body, new_name)
        .ok_or_else(|| ProposalsError::Invalid("its frontmatter has no `name:` line to rename".to_owned()))?;
    let origin = local_origin(store.instance_id());
    let (mut packet, _) = local_packet(&body, None, &origin, library.structure_limits(), crate::store::now())
        .map_err(|e| ProposalsError::Invalid(e.to_string()))?;
    packet.provenance =
        Some(Provenance { derived_from: Some(derived.derived_from.clone()), ..Provenance::default() });
    library.put_local(&packet, Source::Operator)?;
    if derived.state == "active" {
        super::derive::give_way(library, name, "forked", &format!("the edit is published as {new_name:?}"));
        if let Some((_, original, _)) = store.skill(name)?
            && let Err(e) = library.projection().write(&original, SkillKind::External)
        {
            tracing::warn!(error = %e, skill = %name, "cannot write the origin's version back");
        }
    }
    Ok(packet)
}

/// `body` with its frontmatter's `name:` set to `name`.
fn renamed(body: &str, name: &str) -> Option<String> {
    let (lines, close) = crate::stamp::frontmatter_lines(body)?;
    let at = lines[1..close].iter().position(|l| l.starts_with("name:"))? + 1;
    let eol = if lines[at].ends_with("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(body.len() + name.len());
    for (i, line) in lines.iter().enumerate() {
        if i == at {
            out.push_str(&format!("name: {name}{eol}"));
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn renamed_sets_the_frontmatter_name_only() {
        let body = "---\nname: tidy\ndescription: name: tidy\n---\nname: tidy\n";
        assert_eq!(
            super::renamed(body, "tidy-2").unwrap(),
            "---\nname: tidy-2\ndescription: name: tidy\n---\nname: tidy\n"
        );
        assert_eq!(super::renamed("no frontmatter", "x"), None);
    }
}
