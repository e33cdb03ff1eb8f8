//! An operator's approval of a quarantined packet: it is installed as an
//! external skill exactly as if it had been accepted from the peer that
//! sent it — the protocol's [`receive`] lowers its confidence by the trust
//! that peer had when the packet was refused and extends its provenance.
//! The operator's decision: origin limits do not apply, and the install does
//! not count against them. An entry the safety scan refused, or with any
//! scan finding, is installed only with `force`: the operator must have seen
//! the findings. The approved version counts as accepted for review intake.
//! A validly signed packet teaches its key on first use, as an accepting
//! merge would (`SPEC.md` §13.6.1).

use ecp_protocol::bundle::BundleLimits;
use ecp_protocol::merge::receive;
use ecp_protocol::merge::{SenderKind, Stage};
use ecp_protocol::{Decision, ShownConfidence, SkillKind, SkillPacket};

use super::Sender;
use crate::store::identity::FIRST_USE;
use crate::store::{Change, QuarantineEntry, QuarantineStatus, Source, Store, StoreError, Verdict};

/// Installs held quarantine entry `id`, lowered by the trust its sender had
/// when it was refused (`fallback_trust` for entries held before that was
/// kept); re-served only if `reshare` allows; audited. Without `force`, an
/// entry refused at the safety stage or with scan findings is refused
/// ([`StoreError::NeedsForce`]).
pub fn approve(
    store: &Store,
    id: i64,
    fallback_trust: f64,
    reshare: bool,
    force: bool,
) -> Result<Change, StoreError> {
    store.transaction(|tx| {
        // Read under the write lock: the entry must still be held.
        let (entry, packet) = tx.held_quarantine_entry(id)?;
        if !force && needs_force(&entry) {
            return Err(StoreError::NeedsForce { id, stage: entry.stage, findings: entry.findings.len() });
        }
        if let Err(e) = ecp_protocol::skill_doc::validate_name(&packet.skill_name) {
            return Err(StoreError::CannotApprove(format!("its name is invalid: {e}")));
        }
        if tx.kind_of(&packet.skill_name)? == Some(SkillKind::Local) {
            return Err(StoreError::CannotApprove(format!(
                "a local skill is named {:?}; remove it first",
                packet.skill_name
            )));
        }
        let sender = approving_sender(&entry, fallback_trust, reshare)?;
        let signer = signer_as_sent(&packet);
        let mut admitted = receive(packet, &sender.context(store.instance_id()));
        // The operator vouches for the skill as sent; hashes stay truthful.
        admitted.reseal();
        // A bundle still needs every file held and checked (`SPEC.md` §12.9):
        // the operator vouches for what was sent, not for files never seen.
        if admitted.deprecated {
            crate::store::make_tombstone(&mut admitted);
        } else if let Some(Decision::Rejected { reason, .. }) =
            tx.bundle_decision(&admitted, &BundleLimits::default())
        {
            return Err(StoreError::CannotApprove(reason));
        }
        let change = tx.install(
            &admitted,
            SkillKind::External,
            sender.reshares(&admitted),
            &Source::QuarantineApproval,
        )?;
        if let Some((origin, key_id)) = &signer {
            tx.learn_origin_key(origin, key_id, FIRST_USE)?;
        }
        tx.set_quarantine_status(id, QuarantineStatus::Approved)?;
        tx.record_verdict(&admitted.skill_name, &admitted.integrity_hash, Verdict::Accepted)?;
        let reason = approval_reason(id, &entry, &admitted, &sender);
        tx.audit(&Source::Operator, &admitted.skill_name, "quarantine-approve", &reason)?;
        Ok(change)
    })
}

/// The audit line of an approval: which entry, where it was refused, and
/// what was installed at which confidence. A node's and a hub's share it.
pub(crate) fn approval_reason(
    id: i64,
    entry: &QuarantineEntry,
    admitted: &SkillPacket,
    sender: &Sender,
) -> String {
    let forced = if needs_force(entry) {
        format!("; forced past {} scan finding(s)", entry.findings.len())
    } else {
        String::new()
    };
    format!(
        "entry {id} from {}, refused at stage {}; installed from origin {:?} at confidence {} (trust {}); \
         origin limits do not apply to approvals{forced}",
        entry.peer,
        entry.stage,
        admitted.origin_instance,
        ShownConfidence(admitted.confidence),
        ShownConfidence(sender.trust)
    )
}

/// The sender an approved entry is received from: the peer that sent it,
/// at the trust it had when it was refused (`fallback_trust` for entries
/// held before that was kept), for the operator. A node's approval and a
/// hub's share it.
pub(crate) fn approving_sender(
    entry: &QuarantineEntry,
    fallback_trust: f64,
    reshare: bool,
) -> Result<Sender, StoreError> {
    let Source::Peer(instance) = &entry.peer else {
        return Err(StoreError::CannotApprove(format!("it was not sent by a peer but by {}", entry.peer)));
    };
    Ok(Sender {
        instance: instance.clone(),
        account: Source::Operator.to_string(),
        trust: entry.trust.unwrap_or(fallback_trust),
        reshare,
        // The operator vouches for the content, not for its origin: a
        // legacy sender's stays unverified, as the packet's own marks do.
        kind: if entry.legacy_sender { SenderKind::Legacy } else { SenderKind::Current },
    })
}

/// The origin and key that validly signed `packet`, checked as sent: the
/// signature covers the packet before its confidence is lowered.
pub(crate) fn signer_as_sent(packet: &SkillPacket) -> Option<(String, String)> {
    ecp_protocol::identity::verify(packet).ok().flatten().map(|s| (s.instance.clone(), s.key_id.clone()))
}

/// Whether approving `entry` needs the operator's force: the safety scan
/// refused it, or the scan found anything at all in it.
pub fn needs_force(entry: &QuarantineEntry) -> bool {
    entry.stage == Stage::Safety.name() || !entry.findings.is_empty()
}
