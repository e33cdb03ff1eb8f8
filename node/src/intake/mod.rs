//! Intake: what peers send becomes decisions, and the decisions become one
//! store transaction.
//!
//! The protocol crate decides each packet ([`ecp_protocol::merge_knowledge`]);
//! this module adds the node's own decisions — the per-origin and per-sender
//! limits on new skills, the quarantine's caps, the operator's approval of a quarantined packet — and hands the
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
//! - `outcomes`: the outcome claims packets carry, taken into the evidence
//!   held per observer, and the policy's evidence rule on installs.
//! - `bundles`: a bundle is installed only with every file held and
//!   checked; otherwise its decision becomes `pending` or `invalid bundle`.
//! - `approve`: [`approve()`] — an operator installs a quarantined packet as if
//!   it had been accepted from its peer.
//! - `review`: [`IntakeMode`] — with review intake, installs from peers wait
//!   in the inbox before they reach the skills folder.
//! - `revoke`: the revocations an update carries (`SPEC.md` §14): checked
//!   against the key the origin is known by, recorded, applied, or refused
//!   and audited — before the packets, in the same transaction.
//! - `withdraw`: [`settle()`] — the deletion guard's receiving side: the
//!   withdrawals of one push or pull round ([`Withdrawals::Defer`]) weighed
//!   per sender, held for the user or merged ([`withdraw()`]).
//!
//! [`Store::transaction`]: crate::store::Store::transaction

mod approve;
mod bundles;
pub(crate) mod hold_back;
pub(crate) mod merge;
pub(crate) mod outcomes;
mod review;
pub(crate) mod revoke;
mod withdraw;

use ecp_protocol::SkillPacket;
use ecp_protocol::merge::{MergeContext, SenderKind};

use crate::store::{BlobLimits, DEFAULT_HISTORY_DEPTH, OriginLimits, QuarantineCaps, Source, now};

pub(crate) use approve::{approval_reason, approving_sender, signer_as_sent};
pub use approve::{approve, needs_force};
pub use merge::{Arriving, Merged, Mode, OnExcess, Withdrawals, merge};
pub use outcomes::take_echoed;
pub use review::IntakeMode;
pub use withdraw::{settle, withdraw};

/// The account of a configured peer (see [`Sender::account`]).
pub fn peer_account(url: &str) -> String {
    format!("peer:{url}")
}

/// The account of a client that signed with the key `key_id` (ECP/1.2)
/// and is no configured peer (see [`Sender::account`]).
pub fn key_account(key_id: &str) -> String {
    format!("key:{key_id}")
}

/// The account of a client address: IPv4 whole, IPv6 by its /64, the block
/// one host usually holds (see [`Sender::account`]).
pub fn address_account(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => format!("addr:{v4}"),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("addr:{v4}"),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                format!("addr:{}/64", std::net::Ipv6Addr::from(prefix))
            }
        },
    }
}

/// The node's limits on what merges may bring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// New skills per `originInstance` (`[limits] origin_limit_hour`, `_day`).
    pub origin: OriginLimits,
    /// New skills per verified sender ([`Sender::account`]), whatever
    /// origins they claim (`[limits] sender_limit_hour`, `_day`).
    pub sender: OriginLimits,
    /// The quarantine's caps on entries and bytes, shared between senders.
    pub quarantine: QuarantineCaps,
    /// Superseded versions kept per skill (`[limits] history_depth`).
    pub history_depth: u64,
    /// The blob store's quota per sender, cap and grace period (bundles).
    pub blobs: BlobLimits,
}

/// Default: new skills per sender per rolling hour.
pub const DEFAULT_SENDER_PER_HOUR: u64 = 2_000;
/// Default: new skills per sender per rolling day.
pub const DEFAULT_SENDER_PER_DAY: u64 = 10_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            origin: OriginLimits::default(),
            sender: OriginLimits { per_hour: DEFAULT_SENDER_PER_HOUR, per_day: DEFAULT_SENDER_PER_DAY },
            quarantine: QuarantineCaps::default(),
            history_depth: DEFAULT_HISTORY_DEPTH,
            blobs: BlobLimits::DEFAULT,
        }
    }
}

impl Limits {
    /// No limits on new skills (the quarantine keeps its default caps).
    pub const NO_RATE_LIMITS: Limits = Limits {
        origin: OriginLimits::OFF,
        sender: OriginLimits::OFF,
        quarantine: QuarantineCaps::DEFAULT,
        history_depth: DEFAULT_HISTORY_DEPTH,
        blobs: BlobLimits::DEFAULT,
    };
}

/// Who sent an update and how far we trust them.
#[derive(Debug, Clone)]
pub struct Sender {
    /// The peer's instance id (configured, or the update's `peerInstance`).
    pub instance: String,
    /// Who the node verified sent it, never taken from the update: `peer:<url>`
    /// for a configured peer (pulled from, or pushing signed with its own
    /// key), `key:<key id>` for a push signed (ECP/1.2) with one of the
    /// node's keys, `addr:<ip>` (IPv6: its /64) for any other push. The
    /// per-sender limit and the quarantine's shares are counted per this.
    pub account: String,
    /// Trust factor, 0..1.
    pub trust: f64,
    /// Whether external skills are re-served to other peers.
    pub reshare: bool,
    /// Whether the sender keeps origins, or is an ECP/1.1 node whose
    /// origins are unverified (`SPEC.md` §6.6.1): a peer configured
    /// `legacy = true`, one whose manifest names the Go default identity,
    /// or a push authenticated by `X-ECP-HMAC` alone.
    pub kind: SenderKind,
}

impl Sender {
    /// The protocol's view of this sender, for a node `local_instance`
    /// receiving now: what the merge checks loops against and lowers
    /// confidence by.
    pub(crate) fn context<'a>(&'a self, local_instance: &'a str) -> MergeContext<'a> {
        MergeContext {
            local_instance,
            sender: &self.instance,
            trust: self.trust,
            now: now(),
            sender_kind: self.kind,
        }
    }

    /// Whether an accepted `packet` is re-served: only when both the sender
    /// and our policy allow it.
    pub(crate) fn reshares(&self, packet: &SkillPacket) -> bool {
        self.reshare && packet.shareable
    }

    /// The sender as the store records it (`peer:<instance>`).
    pub fn source(&self) -> Source {
        Source::Peer(self.instance.clone())
    }
}

#[cfg(test)]
mod tests;
