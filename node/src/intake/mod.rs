//! Intake: what peers send becomes decisions, and the decisions become one
//! store transaction.
//!
//! The protocol crate decides each packet ([`ecp_protocol::merge_knowledge`]);
//! this module adds the node's own decisions — the per-origin limits on new
//! skills, the operator's approval of a quarantined packet — and hands the
//! result to the store as primitives of one [`Store::transaction`]. The store
//! decides nothing; the MergeResult a peer receives is counted from the
//! decisions that are applied.
//!
//! # Layout
//!
//! - `mod.rs`: [`Sender`], who sent an update and how far we trust them.
//! - `merge`: [`merge()`] — an update from a peer: decide, hold back over the
//!   origin limits, apply (installs, quarantine, audit) in one transaction.
//! - `hold_back`: the per-origin limits as decisions — which new packets wait.
//! - `approve`: [`approve()`] — an operator installs a quarantined packet as if
//!   it had been accepted from its peer.
//!
//! [`Store::transaction`]: crate::store::Store::transaction

mod approve;
mod hold_back;
mod merge;

use ecp_protocol::{MergeContext, SkillPacket};

use crate::store::{Source, now};

pub use approve::approve;
pub use merge::{Merged, OnExcess, merge};

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

impl Sender {
    /// The protocol's view of this sender, for a node `local_instance`
    /// receiving now: what the merge checks loops against and lowers
    /// confidence by.
    fn context<'a>(&'a self, local_instance: &'a str) -> MergeContext<'a> {
        MergeContext { local_instance, sender: &self.instance, trust: self.trust, now: now() }
    }

    /// Whether an accepted `packet` is re-served: only when both the sender
    /// and our policy allow it.
    fn reshares(&self, packet: &SkillPacket) -> bool {
        self.reshare && packet.shareable
    }

    /// The sender as the store records it.
    fn source(&self) -> Source {
        Source::Peer(self.instance.clone())
    }
}

#[cfg(test)]
mod tests;
