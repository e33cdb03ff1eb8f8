//! ECP/1.3 proposals (`SPEC.md` §17): an edit of a received skill offered
//! back to the skill's origin instead of forking it.
//!
//! Only the origin may replace a skill (§7.9.2). A node whose agent changed
//! a received skill keeps the edit as a *derived* version — a packet of its
//! own whose `provenance.derivedFrom` names the version it derives from —
//! and sends it, as a [`Proposal`], to `POST /ecp/proposals` of the origin,
//! or of the peer it received the skill from, which relays it hop by hop.
//! Every hop checks it with [`check`]: stages 1–4 of the merge, exactly as
//! a pushed packet (the same function, [`crate::merge_knowledge`], against
//! an empty store), plus the proposal's own fields. The origin's answer
//! ([`ProposalAnswer`]) is read back with `GET /ecp/proposals/{id}`; an
//! accepted proposal comes back as an ordinary update of the origin whose
//! `provenance.proposedBy` credits the proposer ([`ProposedBy`]).
//!
//! Pure like the rest of the crate: no I/O, the caller passes the policy,
//! the context and the time.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::merge::{Decision, MergeContext, StoredSkill, check_instance_id};
use crate::policy::AcceptPolicy;
use crate::wire::{KnowledgeUpdate, SkillPacket, null_as_default};
use crate::{Stage, integrity, skill_doc};

/// The path of the endpoint; `GET {PROPOSALS_PATH}/{id}` reads an answer.
pub const PROPOSALS_PATH: &str = "/ecp/proposals";

/// Which version of which skill a derived version derives from
/// (`provenance.derivedFrom`, and a proposal's `derivedFrom`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DerivedFrom {
    /// The skill's origin: the one instance that may publish its versions.
    #[serde(deserialize_with = "null_as_default")]
    pub origin: String,
    /// The skill's name.
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// `integrityHash` of the version the edit started from.
    #[serde(deserialize_with = "null_as_default")]
    pub integrity_hash: String,
}

/// Who a version published by accepting a proposal credits
/// (`provenance.proposedBy`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProposedBy {
    /// The proposer's instance (the derived packet's origin).
    #[serde(deserialize_with = "null_as_default")]
    pub instance: String,
    /// The proposal's id ([`proposal_id`]).
    #[serde(deserialize_with = "null_as_default")]
    pub proposal: String,
    /// `integrityHash` of the derived version accepted.
    #[serde(deserialize_with = "null_as_default")]
    pub integrity_hash: String,
}

/// The body of `POST /ecp/proposals`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Proposal {
    /// The sending instance (the proposer, or a relay).
    #[serde(deserialize_with = "null_as_default")]
    pub peer_instance: String,
    /// What the packet derives from.
    pub derived_from: DerivedFrom,
    /// The derived version: a packet authored (and signed) by the proposer.
    pub packet: SkillPacket,
}

/// Where a proposal stands, as `GET /ecp/proposals/{id}` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProposalState {
    /// Held by the origin for its user's review.
    Pending,
    /// Taken by a relay, on its way to the origin (or not sent yet).
    Relayed,
    /// The origin published a version from it.
    Accepted,
    /// The origin's user declined it (with a note, maybe).
    Rejected,
    /// A hop refused it (its checks, §17.4, or its limits); the note says why.
    Refused,
    /// The origin (or a hop) does not take proposals (a Go node answers 404).
    Unsupported,
    /// No hop on the way knows a route toward the origin.
    Undeliverable,
}

impl ProposalState {
    /// The state as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalState::Pending => "pending",
            ProposalState::Relayed => "relayed",
            ProposalState::Accepted => "accepted",
            ProposalState::Rejected => "rejected",
            ProposalState::Refused => "refused",
            ProposalState::Unsupported => "unsupported",
            ProposalState::Undeliverable => "undeliverable",
        }
    }

    /// Whether the state is final: nothing more will be learnt. A proposal
    /// no hop could route yet is tried again, so it is not.
    pub fn is_final(self) -> bool {
        !matches!(self, ProposalState::Pending | ProposalState::Relayed | ProposalState::Undeliverable)
    }
}

impl std::str::FromStr for ProposalState {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        [
            ProposalState::Pending,
            ProposalState::Relayed,
            ProposalState::Accepted,
            ProposalState::Rejected,
            ProposalState::Refused,
            ProposalState::Unsupported,
            ProposalState::Undeliverable,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
        .ok_or_else(|| format!("unknown proposal state {text:?}"))
    }
}

/// The answer to `POST /ecp/proposals` and `GET /ecp/proposals/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalAnswer {
    /// The proposal's id ([`proposal_id`]).
    pub id: String,
    /// Where it stands.
    pub state: ProposalState,
    /// The origin's note on its decision; empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// For an accepted proposal: `integrityHash` of the version published.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub published_hash: String,
}

/// A proposal's id: the first 16 hex digits of the SHA-256 of
/// `ecp-proposal-v1\n<origin>\n<name>\n<base integrityHash>\n<derived integrityHash>\n`.
/// The same edit of the same version is the same proposal, whoever relays
/// it and however often: duplicates fold into one.
pub fn proposal_id(derived_from: &DerivedFrom, derived_hash: &str) -> String {
    let text = format!(
        "ecp-proposal-v1\n{}\n{}\n{}\n{derived_hash}\n",
        derived_from.origin, derived_from.name, derived_from.integrity_hash
    );
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

/// Whether `id` has the form of a proposal id: 16 lowercase hex digits.
pub fn is_proposal_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a proposal is refused (`SPEC.md` §17.4); each message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProposalError {
    /// The body is not a proposal.
    #[error("the body is not a proposal: {0}; send {{\"peerInstance\", \"derivedFrom\", \"packet\"}}")]
    Decode(String),
    /// A field of `derivedFrom` or the envelope is malformed.
    #[error("{field} {problem}")]
    Field {
        /// The field, as the wire names it.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The packet is the version it claims to derive from.
    #[error(
        "the packet is the version it derives from (same integrityHash); a proposal must change the skill"
    )]
    Unchanged,
    /// The packet fails a check every pushed packet must pass.
    #[error("{reason}")]
    Refused {
        /// The stage of the merge that refused it.
        stage: Stage,
        /// Its reason, with the stage's prefix (`SPEC.md` §7.11).
        reason: String,
    },
}

impl ProposalError {
    /// A short machine-readable code for the error's JSON.
    pub fn code(&self) -> &'static str {
        match self {
            ProposalError::Decode(_) => "invalid_proposal",
            ProposalError::Field { .. } => "invalid_proposal_field",
            ProposalError::Unchanged => "unchanged_proposal",
            ProposalError::Refused { stage, .. } => match stage {
                Stage::Safety => "proposal_unsafe",
                Stage::Integrity | Stage::Signature => "proposal_integrity",
                Stage::Name | Stage::Structure | Stage::Bundle | Stage::Limit => "proposal_structure",
                _ => "proposal_refused",
            },
        }
    }
}

/// Decodes the body of `POST /ecp/proposals`.
///
/// # Errors
///
/// [`ProposalError::Decode`] for anything that is not a proposal object.
pub fn decode(bytes: &[u8]) -> Result<Proposal, ProposalError> {
    serde_json::from_slice(bytes).map_err(|e| ProposalError::Decode(e.to_string()))
}

/// Checks a proposal as every hop must (`SPEC.md` §17.4): its envelope and
/// `derivedFrom`, then its packet through stages 1–4 of the merge under
/// `policy` in `ctx` — the checks a pushed packet passes, by the same code.
/// A bundle is refused: proposals carry `SKILL.md` alone.
///
/// # Errors
///
/// The first problem found.
pub fn check(
    proposal: &Proposal,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
) -> Result<(), ProposalError> {
    let field = |field, problem: String| ProposalError::Field { field, problem };
    check_instance_id(proposal.peer_instance.trim()).map_err(|p| field("peerInstance", p))?;
    let from = &proposal.derived_from;
    check_instance_id(&from.origin).map_err(|p| field("derivedFrom.origin", p))?;
    skill_doc::validate_name(&from.name).map_err(|e| field("derivedFrom.name", e.to_string()))?;
    if !integrity::is_hash(&from.integrity_hash) {
        return Err(field("derivedFrom.integrityHash", "is not 64 lowercase hex digits".into()));
    }
    let packet = &proposal.packet;
    if packet.skill_name != from.name {
        return Err(field(
            "packet.skillName",
            format!("is {:?}, not the name derivedFrom names ({:?})", packet.skill_name, from.name),
        ));
    }
    if packet.integrity_hash == from.integrity_hash {
        return Err(ProposalError::Unchanged);
    }
    if !packet.files.is_empty() || !packet.bundle_digest.is_empty() {
        return Err(field("packet.files", "lists files; a proposal carries SKILL.md alone".into()));
    }
    if packet.deprecated {
        return Err(field(
            "packet.deprecated",
            "is true; a proposal carries content, not a tombstone".into(),
        ));
    }
    let update = KnowledgeUpdate { skills: vec![packet.clone()], ..KnowledgeUpdate::default() };
    let nothing: HashMap<String, StoredSkill> = HashMap::new();
    let outcome = crate::merge_knowledge(update, &nothing, policy, ctx);
    match outcome.decisions.into_iter().next().map(|d| d.decision) {
        Some(Decision::Rejected { stage, reason }) => Err(ProposalError::Refused { stage, reason }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
