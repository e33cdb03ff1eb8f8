//! Bundles at intake (`SPEC.md` §12.9): an installing decision for a bundle
//! stands only when every file it lists is held and checks out; otherwise
//! it becomes the refusal the store records instead — `pending: …` while a
//! blob is missing (the packet waits in the quarantine with its reason
//! until it is sent again with its blobs), `invalid bundle: …` when a held
//! file fails its entry. Nothing of such a bundle is installed, not even
//! its `SKILL.md`. A tombstone lists no files: a withdrawal needs none.

use ecp_protocol::bundle::BundleLimits;
use ecp_protocol::merge::tally;
use ecp_protocol::{Decision, MergeOutcome};

use crate::store::{Tx, make_tombstone};

/// `outcome` with each installing decision for a bundle whose files are not
/// all held (or fail their checks) turned into its refusal, recounted.
pub(super) fn gate(tx: &Tx<'_>, mut outcome: MergeOutcome, limits: &BundleLimits) -> MergeOutcome {
    let mut changed = false;
    for d in &mut outcome.decisions {
        if !matches!(d.decision, Decision::New | Decision::Updated { .. }) {
            continue;
        }
        if d.packet.deprecated {
            make_tombstone(&mut d.packet);
        } else if let Some(refusal) = tx.bundle_decision(&d.packet, limits) {
            d.decision = refusal;
            changed = true;
        }
    }
    if changed {
        outcome.result = tally(&outcome.decisions);
    }
    outcome
}
