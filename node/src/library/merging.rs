//! What peers send, merged into the library: a push, a pull round's
//! pages (installing only what fits under each origin's limits), the
//! withdrawals of a push or round weighed together by the deletion guard,
//! and the bundles that waited in the quarantine for their files. Every
//! merge goes through [`intake`] with the node's grant policy applied, and
//! its changes are committed, projected and announced as every other.

use ecp_protocol::merge::SenderKind;
use ecp_protocol::{KnowledgeUpdate, MergeResult, SkillPacket, StandardPolicy};

use super::Library;
use crate::intake::{self, Arriving, Merged, Mode, OnExcess, Sender, Withdrawals};
use crate::permissions::RefuseGrants;
use crate::store::{Source, StoreError};

impl Library {
    /// Merges an update from `sender` (a push); blocking. An update that
    /// would take an origin over its limits is refused whole
    /// ([`StoreError::OriginLimited`]) and changes nothing. Its withdrawals
    /// are weighed together by the deletion guard ([`Library::settle_withdrawals`]).
    pub fn merge(
        &self,
        update: KnowledgeUpdate,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<MergeResult, StoreError> {
        let merged = self.merge_deferring(update, sender, policy, OnExcess::Refuse)?;
        let mut result = merged.result;
        result.absorb(self.settle_withdrawals(merged.withdrawals, sender, policy)?);
        Ok(result)
    }

    /// Merges an update from `sender` (a page of a pull round), installing
    /// of each origin only the new skills that fit under its limits;
    /// blocking. Its changes are committed and projected; the result counts
    /// neither the packets held back (in `held_back`) nor the withdrawals,
    /// which are returned (in `withdrawals`) for the round to weigh
    /// together ([`Library::settle_withdrawals`]). Its bodies scanned
    /// ahead, if any ([`Arriving`]), are not scanned again.
    pub fn merge_what_fits(
        &self,
        update: impl Into<Arriving>,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<Merged, StoreError> {
        self.merge_deferring(update, sender, policy, OnExcess::HoldBack)
    }

    /// Merges an update, setting its withdrawals aside for the deletion
    /// guard; its changes are committed and projected.
    fn merge_deferring(
        &self,
        update: impl Into<Arriving>,
        sender: &Sender,
        policy: &StandardPolicy,
        on_excess: OnExcess,
    ) -> Result<Merged, StoreError> {
        let merged = intake::merge(
            &self.store,
            update,
            sender,
            &self.with_grant_policy(policy),
            &self.limits,
            Mode::deferring(on_excess),
            self.intake,
        )?;
        self.committed(&merged.changes);
        if let Some(seq) = merged.revocations_seq {
            self.announce(seq);
        }
        // Evidence taken without an install changed what a packet carries.
        self.announce(self.store.sequence()?);
        Ok(merged)
    }

    /// Merges again the bundles waiting in the quarantine for blob `sha256`
    /// (`SPEC.md` §12.9.2) whose every file is now held: each as its sender
    /// sent it, with the trust it was refused under (`fallback_trust` for
    /// entries without one), re-served if `reshare`; the entry of one that
    /// installs is dropped and audited. Blocking. Returns how many installed.
    pub fn retry_pending_bundles(
        &self,
        sha256: &str,
        policy: &StandardPolicy,
        fallback_trust: f64,
        reshare: bool,
    ) -> Result<usize, StoreError> {
        let mut installed = 0;
        for (id, account) in self.store.pending_on_blob(sha256)? {
            let (entry, packet) = self.store.transaction(|tx| tx.held_quarantine_entry(id))?;
            let Source::Peer(instance) = &entry.peer else { continue };
            let held = |blob: &str| self.store.holds_blob(blob).unwrap_or(false);
            let complete = ecp_protocol::bundle::BundleManifest::from_packet(&packet, &policy.bundle)
                .ok()
                .flatten()
                .is_some_and(|m| m.pending_decision(held).is_none());
            if !complete {
                continue;
            }
            let sender = Sender {
                instance: instance.clone(),
                account,
                trust: entry.trust.unwrap_or(fallback_trust),
                reshare,
                // As it was sent: a legacy sender's bundle stays of unverified origin.
                kind: if entry.legacy_sender { SenderKind::Legacy } else { SenderKind::Current },
            };
            let update = KnowledgeUpdate { skills: vec![packet], ..KnowledgeUpdate::default() };
            let result = self.merge(update, &sender, policy)?;
            if result.new_skills + result.updated_skills == 0 {
                continue;
            }
            installed += 1;
            let reason = format!("entry {id}: installed once every file its bundle lists was held");
            self.store.transaction(|tx| {
                tx.set_quarantine_status(id, crate::store::QuarantineStatus::Dropped)?;
                tx.audit(&entry.peer, &entry.skill_name, "bundle-complete", &reason)
            })?;
        }
        Ok(installed)
    }

    /// Weighs the withdrawals `sender` sent in one push or pull round
    /// against the deletion guard: holds them all for the user, or merges
    /// them ([`intake::settle`]); blocking.
    pub fn settle_withdrawals(
        &self,
        withdrawals: Vec<SkillPacket>,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<MergeResult, StoreError> {
        let policy = &self.with_grant_policy(policy);
        let merged =
            intake::settle(&self.store, withdrawals, sender, self.guard, policy, &self.limits, self.intake)?;
        self.committed(&merged.changes);
        Ok(merged.result)
    }

    /// Merges withdrawals the user accepted, as `sender` sent them; returns
    /// the skills tombstoned. A newer version that arrived since wins, and
    /// its superseded tombstone is dropped, not quarantined.
    pub(crate) fn withdraw(
        &self,
        withdrawals: Vec<SkillPacket>,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<Vec<String>, StoreError> {
        let policy = &self.with_grant_policy(policy);
        let merged = intake::withdraw(
            &self.store,
            withdrawals,
            sender,
            policy,
            &self.limits,
            self.intake,
            Withdrawals::Only,
        )?;
        self.committed(&merged.changes);
        Ok(merged
            .changes
            .iter()
            .filter(|c| c.packet.deprecated)
            .map(|c| c.packet.skill_name.clone())
            .collect())
    }

    /// `policy` with `[policy] received_permissions = "refuse"` applied.
    fn with_grant_policy<'a>(&self, policy: &'a StandardPolicy) -> RefuseGrants<'a, StandardPolicy> {
        RefuseGrants { inner: policy, policy: self.projection.permissions().clone() }
    }
}
