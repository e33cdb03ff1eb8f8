//! Review intake: with `[policy] intake = "review"`, a skill a peer sends is
//! stored, served and federated as in `auto` mode, but kept out of the
//! agent's skills folder until the user accepts it (`ecp-node inbox`). Only
//! the folder is gated: what reaches the agent is the user's call, what the
//! node holds and re-serves is the policy's (`reshare_external`, origins).
//!
//! A tombstone is never held: withdrawing a skill cannot hurt the agent, so
//! the accepted version's file goes at once and a pending entry is dropped.

use std::str::FromStr;

use serde::Deserialize;

use crate::store::{Change, Offer, Source, StoreError, Tx};

/// `[policy] intake`: what happens to an accepted skill from a peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntakeMode {
    /// Written to the skills folder at once.
    #[default]
    Auto,
    /// Held in the inbox until the user accepts it.
    Review,
}

impl FromStr for IntakeMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(IntakeMode::Auto),
            "review" => Ok(IntakeMode::Review),
            other => Err(format!("{other:?} is not an intake mode; write \"auto\" or \"review\"")),
        }
    }
}

/// Offers the installed `change` from `source` to the inbox under `mode`,
/// marking it withheld from the folder unless the user accepted this very
/// version before.
pub(super) fn settle(
    tx: &Tx<'_>,
    change: &mut Change,
    source: &Source,
    mode: IntakeMode,
) -> Result<(), StoreError> {
    if mode == IntakeMode::Auto || change.packet.deprecated {
        return Ok(());
    }
    let packet = &change.packet;
    let offer = tx.offer(&packet.skill_name, &packet.integrity_hash, source)?;
    let (withheld, reason) = match offer {
        Offer::Pending(id) => (true, format!("entry {id}: waits for `ecp-node inbox accept {id}`")),
        Offer::Accepted => (false, "this version was accepted before".to_owned()),
        Offer::Rejected => (true, "this version was rejected before; not offered again".to_owned()),
    };
    // A retired skill's change stays withheld (#19).
    change.withheld |= withheld;
    let label = match offer {
        Offer::Pending(_) => "inbox-offered",
        Offer::Accepted => "inbox-known",
        Offer::Rejected => "inbox-rejected-before",
    };
    tx.audit(source, &packet.skill_name, label, &reason)
}
