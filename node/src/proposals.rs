//! Proposals (#20, `SPEC.md` §17): an agent's edit of a received skill
//! goes back to the skill's origin instead of forking it.
//!
//! Only the origin may replace a skill. When the agent changes a received
//! skill's file, the importer keeps the original and records the edit as a
//! *derived* version ([`derive`]): a packet of this node whose
//! `provenance.derivedFrom` names the origin, the name and the version
//! edited. The agent keeps its file; the node serves and pushes the
//! original, never the edit. The edit becomes an outgoing proposal, which
//! the outbox ([`outbox`]) sends to `POST /ecp/proposals` of the origin
//! when it is a peer, else of the peer the skill came from, which relays
//! it the same way; each hop checks it as a pushed packet ([`receive`]).
//! Answers travel back by polling: every node that sent a proposal asks its
//! next hop `GET /ecp/proposals/{id}` until the state is final, so a relay
//! mirrors what the origin said and the proposer mirrors its relay.
//!
//! On the origin the user reviews ([`review`]): accepting publishes a new
//! version under the origin crediting the proposer (`provenance.proposedBy`),
//! an ordinary update that travels the mesh; rejecting records a note the
//! proposer reads back. When the accepted version reaches the proposer, its
//! derived version is retired and the agent's file gives way to it
//! ([`retire_superseded`]). A proposal that no one answers can be published
//! under a new name instead ([`fork`]).
//!
//! # Layout
//!
//! - `proposals.rs`: [`ProposalsError`], the re-exports.
//! - `derive`: the agent's edit kept as a derived version; its retirement.
//! - `receive`: `POST /ecp/proposals` — the hop's checks, the route, the limit.
//! - `review`: list, show, accept, reject, fork — the CLI and `/v1/` share them.
//! - `outbox`: sending, relaying and polling, in the background.

mod derive;
pub mod outbox;
mod receive;
mod review;

pub use derive::{Derived, derive, retire_superseded, unstamp};
pub use receive::{answer, receive};
pub use review::{ProposalView, accept, fork, list, reject, show};

use ecp_protocol::proposal::{ProposalError, ProposalState};

use crate::store::StoreError;

/// Why a proposal action could not be done; each says what to do instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProposalsError {
    /// No proposal with this id.
    #[error("no proposal with id {0:?}; `ecp-node proposals list` shows them")]
    NoSuchProposal(String),
    /// The proposal is not one this node reviews.
    #[error("proposal {0} is not for a skill of this node: only the skill's origin accepts or rejects it")]
    NotIncoming(String),
    /// The proposal was already decided.
    #[error("proposal {id} is already {}; nothing to decide", .state.as_str())]
    Decided {
        /// The proposal.
        id: String,
        /// Its state.
        state: ProposalState,
    },
    /// The proposal fails a check every hop makes (`SPEC.md` §17.4).
    #[error(transparent)]
    Refused(#[from] ProposalError),
    /// The sender made too many proposals in the past hour.
    #[error(
        "this sender made {limit} proposals in the past hour, the limit ([proposals] per_hour); send it later"
    )]
    Limited {
        /// The limit.
        limit: u64,
    },
    /// This node is not on the way to the skill's origin.
    #[error(
        "this node holds no skill {name:?} from {origin}: send the proposal to its origin, or to the peer you \
         received the skill from"
    )]
    NotOnRoute {
        /// The skill.
        name: String,
        /// Its origin, as the proposal names it.
        origin: String,
    },
    /// No derived version to act on.
    #[error(
        "{0:?} has no derived version here: edit the received skill's file in the skills folder first \
         (`ecp-node proposals list` shows the edits)"
    )]
    NoDerived(String),
    /// The new name is taken or invalid.
    #[error("cannot publish under {name:?}: {reason}")]
    BadName {
        /// The name asked for.
        name: String,
        /// Why not.
        reason: String,
    },
    /// The edited text is not a skill this node can publish.
    #[error("the edited skill cannot be published: {0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ProposalsError {
    /// A short machine-readable code for the error's JSON.
    pub fn code(&self) -> &'static str {
        match self {
            ProposalsError::NoSuchProposal(_) => "no_such_proposal",
            ProposalsError::NotIncoming(_) => "not_the_origin",
            ProposalsError::Decided { .. } => "proposal_decided",
            ProposalsError::Refused(e) => e.code(),
            ProposalsError::Limited { .. } => "too_many_proposals",
            ProposalsError::NotOnRoute { .. } => "not_on_route",
            ProposalsError::NoDerived(_) => "no_derived_version",
            ProposalsError::BadName { .. } => "invalid_name",
            ProposalsError::Invalid(_) => "invalid_skill",
            ProposalsError::Store(_) => "internal",
        }
    }
}
