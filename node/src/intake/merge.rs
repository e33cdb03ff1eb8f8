//! An update from a peer: read the view, let the protocol decide, hold back
//! what the per-origin and per-sender limits do not admit, set withdrawals
//! aside for the deletion guard when asked to, apply the rest — installs,
//! quarantine, audit, the limits' counters, the keys of origins seen for the
//! first time — and bring the quarantine back under its caps, in one store transaction; then log each decision
//! ([`crate::decision_log`]).

use std::collections::HashMap;

use ecp_protocol::merge::{ScannedAhead, merge_knowledge_ahead};
use ecp_protocol::merge::{SenderKind, Stage, origin_verified, tally};
use ecp_protocol::scan::Severity;
use ecp_protocol::{
    AcceptPolicy, Decision, KnowledgeUpdate, MergeOutcome, MergeResult, PacketDecision, ShownConfidence,
    SkillKind, SkillPacket, StoreView, StoredSkill,
};

use super::hold_back::{admit, installs_by_origin, new_by_sender};
use super::review::{IntakeMode, settle};
use super::{Limits, Sender};
use crate::decision_log::{self, Decisions, Verdict};
use crate::store::identity::FIRST_USE;
use crate::store::origin_limits::{Per, unix_now};
use crate::store::{Change, OriginExcess, OriginLimited, Refusal, Source, Store, StoreError, Tx};

/// What a merge did: the wire answer and the changes to project.
#[derive(Debug, Default)]
pub struct Merged {
    /// The truthful MergeResult, counted from the applied decisions. With
    /// [`OnExcess::HoldBack`], packets held back are in no count (the result
    /// then totals fewer than the packets).
    pub result: MergeResult,
    /// Committed changes, for the skills folder.
    pub changes: Vec<Change>,
    /// The origins (and the sender) whose installs did not all fit under
    /// their limits ([`OnExcess::HoldBack`] only; a refused merge returns an
    /// error instead).
    pub held_back: Vec<OriginExcess>,
    /// With [`Withdrawals::Defer`], the tombstones that would have withdrawn
    /// an active skill, as received: neither applied nor counted.
    pub withdrawals: Vec<SkillPacket>,
    /// Packets that were laundered copies of skills held here
    /// ([`Decision::Echo`]): counted `unchanged` in the result, audited as
    /// `echo`, never quarantined.
    pub echoes: usize,
    /// The sequence number of the last revocation the update brought that
    /// was recorded (`SPEC.md` §14), if any: a change with no packet, that
    /// peers must still be told of.
    pub revocations_seq: Option<i64>,
}

/// What a merge does with what it does not apply straight away: installs
/// over the limits, and withdrawals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// Installs over an origin's or the sender's limits.
    pub on_excess: OnExcess,
    /// Withdrawals.
    pub withdrawals: Withdrawals,
}

impl Mode {
    /// `on_excess`, every withdrawal applied.
    pub fn applying(on_excess: OnExcess) -> Mode {
        Mode { on_excess, withdrawals: Withdrawals::Apply }
    }

    /// `on_excess`, withdrawals set aside for the deletion guard.
    /// (Accepted withdrawals go through [`super::withdraw`].)
    pub fn deferring(on_excess: OnExcess) -> Mode {
        Mode { on_excess, withdrawals: Withdrawals::Defer }
    }
}

/// What a merge does with *withdrawals*: decisions that tombstone a skill
/// the node holds active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withdrawals {
    /// Apply them like any other decision.
    Apply,
    /// Leave them out — not applied, in no count — and return them as
    /// received ([`Merged::withdrawals`]), for the deletion guard to weigh
    /// with the rest of the sender's round ([`super::settle`]).
    Defer,
    /// Apply only them: anything else (a tombstone that a newer version
    /// received since has superseded) is left out, in no count. For
    /// withdrawals the user accepted.
    Only,
}

/// What a merge does when installs of an origin (or of the sender) do not
/// fit under its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnExcess {
    /// Apply nothing: the merge fails with [`StoreError::OriginLimited`].
    /// For pushes, whose sender is told to retry.
    Refuse,
    /// Install what fits of that origin (the first new packets in update
    /// order), leave the rest out — not installed, not quarantined — and
    /// apply everything else. For pulls, which hold their cursor and fetch
    /// the rest again, so one flooding origin does not stop a peer's others.
    HoldBack,
}

/// An update, and its bodies already scanned (stage 3) off the merge, if any.
#[derive(Debug, Default)]
pub struct Arriving {
    /// The update as received.
    pub update: KnowledgeUpdate,
    /// Its bodies scanned ahead ([`ecp_protocol::merge::ScanAhead`]); the
    /// merge scans the others itself.
    pub ahead: ScannedAhead,
}

impl From<KnowledgeUpdate> for Arriving {
    fn from(update: KnowledgeUpdate) -> Arriving {
        Arriving { update, ahead: ScannedAhead::new() }
    }
}

/// Merges `update` from `sender` under `policy` and `limits`, applying
/// every decision (installs, quarantine, audit) in one transaction of
/// `store`. Installs over an origin's or the sender's limits, and
/// withdrawals, are handled as `mode` says; the quarantine is brought back
/// under its caps once, at the end. Under review `intake`, installs wait in
/// the inbox. Each decision is logged once committed ([`crate::decision_log`]).
pub fn merge(
    store: &Store,
    update: impl Into<Arriving>,
    sender: &Sender,
    policy: &impl AcceptPolicy,
    limits: &Limits,
    mode: Mode,
    intake: IntakeMode,
) -> Result<Merged, StoreError> {
    let Mode { on_excess, withdrawals } = mode;
    let Arriving { update, ahead } = update.into();
    let source = sender.source();
    let (merged, decisions) = store.transaction(|tx| {
        // First: a revoked version in this very update is then refused.
        let revoked = super::revoke::take(tx, &update.revocations, &source)?;
        let names: Vec<&str> = update.skills.iter().map(|p| p.skill_name.as_str()).collect();
        // Held bodies are read only when a packet's origin is unverified:
        // only such a packet can be an echo (§7.9.2 rule 3a).
        let ctx = sender.context(store.instance_id());
        let view = tx.view(&names, update.skills.iter().any(|p| !origin_verified(p, &ctx)))?;
        // The merge consumes the packets and changes what it admits: a
        // deferred withdrawal is kept as it came, to be merged again later.
        let mut tombstones: HashMap<usize, SkillPacket> = match withdrawals {
            Withdrawals::Apply | Withdrawals::Only => HashMap::new(),
            Withdrawals::Defer => update
                .skills
                .iter()
                .enumerate()
                .filter(|(_, p)| p.deprecated)
                .map(|(i, p)| (i, p.clone()))
                .collect(),
        };
        let received = super::bundles::as_received(&update);
        let carried = super::outcomes::carried(&update);
        let keyed = Keyed {
            keys: tx.origin_keys_of(signers(&update))?,
            skills: &view,
            revoked: tx.revocations_of(&names)?,
        };
        tracing::debug!(target: crate::TIMELINE, "merge: view read");
        let outcome = merge_knowledge_ahead(update, &keyed, policy, &ctx, &ahead);
        tracing::debug!(target: crate::TIMELINE, "merge: decided (scanned)");
        let (outcome, deferred) = set_aside_withdrawals(outcome, &view, withdrawals);
        let outcome = super::bundles::gate(tx, outcome, policy, received);
        let outcome = super::outcomes::weigh(
            tx,
            outcome,
            &carried,
            sender,
            store.instance_id(),
            policy.evidence_rule(),
        )?;
        let deferred = deferred.iter().filter_map(|d| tombstones.remove(&d.index)).collect();
        // The limits are checked against the decisions before any is applied.
        let at = unix_now();
        let mut excess =
            tx.origin_excess(Per::Origin, &limits.origin, &installs_by_origin(&outcome.decisions), at)?;
        let by_sender = new_by_sender(&outcome.decisions, &sender.account);
        excess.extend(tx.origin_excess(Per::Sender, &limits.sender, &by_sender, at)?);
        if !excess.is_empty() && on_excess == OnExcess::Refuse {
            // Nothing is applied: the refusal of the whole update is the decision.
            return Err(refused_whole(excess, sender).into());
        }
        let admitted = admit(outcome, &excess);
        let mut decisions = Decisions::default();
        let mut changes = revoked.changes;
        changes.extend(apply(
            tx,
            &admitted.decisions,
            &view,
            sender,
            &source,
            limits,
            intake,
            &mut decisions,
        )?);
        learn_first_keys(tx, &admitted.decisions)?;
        let echoes = admitted.decisions.iter().filter(|d| d.decision == Decision::Echo).count();
        for e in &excess {
            let reason = format!(
                "{} of {} installs held back by the {} limit ({e})",
                e.arriving - e.room,
                e.arriving,
                e.per
            );
            tx.audit(&source, "*", "origin-limit", &reason)?;
            decisions.push(over_limit(e, sender, Verdict::HeldBack, reason));
        }
        tx.count_new_installs(Per::Origin, &installs_by_origin(&admitted.decisions), at)?;
        tx.count_new_installs(Per::Sender, &new_by_sender(&admitted.decisions, &sender.account), at)?;
        tx.evict_quarantine_over(limits.quarantine, &source)?;
        tracing::debug!(target: crate::TIMELINE, "merge: applied");
        let merged = Merged {
            result: admitted.result,
            changes,
            held_back: excess,
            withdrawals: deferred,
            echoes,
            revocations_seq: revoked.seq,
        };
        Ok((merged, decisions))
    })?;
    tracing::debug!(target: crate::TIMELINE, "merge: committed");
    decisions.log();
    Ok(merged)
}

/// The store's view of the named skills, with the keys their packets'
/// origins are known by (`SPEC.md` §13.6).
pub(crate) struct Keyed<'a> {
    pub(crate) skills: &'a HashMap<String, StoredSkill>,
    pub(crate) keys: HashMap<String, String>,
    /// The revoked versions of the update's names, by (name, digest).
    pub(crate) revoked: HashMap<(String, String), String>,
}

impl StoreView for Keyed<'_> {
    fn lookup(&self, name: &str) -> Option<StoredSkill> {
        self.skills.lookup(name)
    }

    fn origin_key(&self, instance: &str) -> Option<String> {
        self.keys.get(instance).cloned()
    }

    fn revoked(&self, name: &str, digest: &str) -> Option<String> {
        self.revoked.get(&(name.to_owned(), digest.to_owned())).cloned()
    }
}

/// Every origin the packets of `update` claim: on the packet, and in its signature.
pub(crate) fn signers(update: &KnowledgeUpdate) -> impl Iterator<Item = &str> {
    update.skills.iter().flat_map(|p| {
        std::iter::once(p.origin_instance.as_str())
            .chain(p.origin_signature.as_ref().map(|s| s.instance.as_str()))
    })
}

/// Trust on first use: the key of each signed packet that was not refused
/// becomes the key its origin is known by, unless one is known already.
fn learn_first_keys(tx: &Tx<'_>, decisions: &[PacketDecision]) -> Result<(), StoreError> {
    for d in decisions.iter().filter(|d| !matches!(d.decision, Decision::Rejected { .. })) {
        if let Some(signature) = &d.packet.origin_signature {
            tx.learn_origin_key(&d.packet.origin_instance, &signature.key_id, FIRST_USE)?;
        }
    }
    Ok(())
}

/// The refusal of a whole update whose installs go over `excess`, logged.
pub(crate) fn refused_whole(excess: Vec<OriginExcess>, sender: &Sender) -> OriginLimited {
    let mut refused = Decisions::default();
    for e in &excess {
        refused.push(over_limit(e, sender, Verdict::Refused, format!("the whole update is refused: {e}")));
    }
    refused.log();
    OriginLimited { excess }
}

/// The decision about the installs of one origin (or of the sender) over its limits.
pub(crate) fn over_limit(
    e: &OriginExcess,
    sender: &Sender,
    verdict: Verdict,
    reason: String,
) -> decision_log::Decision {
    decision_log::Decision {
        skill: "*".to_owned(),
        origin: e.origin.clone(),
        sender: sender.instance.clone(),
        peer: sender.account.clone(),
        verdict,
        stage: if e.per == Per::Sender { "sender-limit" } else { "origin-limit" },
        reason,
        finding: None,
    }
}

/// The decision log's account of one applied decision.
pub(crate) fn logged(
    d: &PacketDecision,
    sender: &Sender,
    verdict: Verdict,
    stage: &'static str,
    reason: &str,
) -> decision_log::Decision {
    decision_log::Decision {
        skill: d.packet.skill_name.clone(),
        origin: d.packet.origin_instance.clone(),
        sender: sender.instance.clone(),
        peer: sender.account.clone(),
        verdict,
        stage,
        reason: reason.to_owned(),
        finding: None,
    }
}

/// Takes out of `outcome` what `withdrawals` leaves out — the withdrawals
/// ([`Withdrawals::Defer`]), or all but them ([`Withdrawals::Only`]) —
/// recounting the rest; returns both.
fn set_aside_withdrawals(
    outcome: MergeOutcome,
    view: &HashMap<String, StoredSkill>,
    withdrawals: Withdrawals,
) -> (MergeOutcome, Vec<PacketDecision>) {
    if withdrawals == Withdrawals::Apply {
        return (outcome, Vec::new());
    }
    let withdraws = |d: &PacketDecision| {
        matches!(d.decision, Decision::Updated { .. })
            && d.packet.deprecated
            && view.get(&d.packet.skill_name).is_some_and(|held| !held.deprecated)
    };
    let (taken, others): (Vec<_>, Vec<_>) = outcome.decisions.into_iter().partition(withdraws);
    let (kept, aside) = if withdrawals == Withdrawals::Only { (taken, others) } else { (others, taken) };
    if aside.is_empty() {
        return (MergeOutcome { result: outcome.result, decisions: kept }, aside);
    }
    (MergeOutcome { result: tally(&kept), decisions: kept }, aside)
}

/// Why an install happened, for the audit log: its confidence, and for the
/// same content held at a lower confidence, that it was raised and why.
pub(crate) fn install_reason(d: &PacketDecision, held: Option<&StoredSkill>, sender: &Sender) -> String {
    let raised_from = held
        .filter(|h| h.integrity_hash == d.packet.integrity_hash && h.deprecated == d.packet.deprecated)
        .and_then(|h| h.confidence);
    if let Some(replaced) = held.filter(|h| !h.origin_verified && h.kind == SkillKind::External) {
        let verified = d.packet.provenance.as_ref().is_none_or(|p| !p.origin_unverified);
        if verified {
            return format!(
                "confidence {}; replaces the copy held with an unverified origin ({:?}, received from an ECP/1.1 \
                 sender or under the Go default identity): {:?} is a verified origin, from {}",
                d.packet.confidence, replaced.origin, d.packet.origin_instance, sender.account
            );
        }
    }
    match raised_from {
        Some(before) => format!(
            "confidence raised from {} to {}: the same content (integrityHash {}) arrived from {} at trust {}, \
             a path of higher trust than the one that brought it first",
            ShownConfidence(before),
            ShownConfidence(d.packet.confidence),
            d.packet.integrity_hash,
            sender.account,
            ShownConfidence(sender.trust)
        ),
        None => format!("confidence {}", ShownConfidence(d.packet.confidence)),
    }
}

/// Installs, quarantines and audits each decision, in update order, and
/// adds it to the decisions to log (`log`).
#[allow(clippy::too_many_arguments)] // one merge's parts, each needed
fn apply(
    tx: &Tx<'_>,
    decisions: &[PacketDecision],
    view: &HashMap<String, StoredSkill>,
    sender: &Sender,
    source: &Source,
    limits: &Limits,
    intake: IntakeMode,
    log: &mut Decisions,
) -> Result<Vec<Change>, StoreError> {
    let mut changes = Vec::new();
    let (mut unchanged, mut echoes) = (0usize, 0usize);
    for d in decisions {
        let name = d.packet.skill_name.as_str();
        match &d.decision {
            Decision::New | Decision::Updated { .. } => {
                let mut change =
                    tx.install(&d.packet, SkillKind::External, sender.reshares(&d.packet), source)?;
                let label = if d.decision == Decision::New { "new" } else { "updated" };
                let reason = install_reason(d, view.get(name), sender);
                tx.audit(source, name, label, &reason)?;
                let verdict = match (&d.decision, d.packet.deprecated) {
                    (Decision::New, _) => Verdict::New,
                    (_, true) => Verdict::Withdrawn,
                    (_, false) => Verdict::Updated,
                };
                // Taken with warnings (a description over the guideline): the log says them too.
                let warned = d.warnings.iter().map(|w| format!("; warning: {w}")).collect::<String>();
                log.push(logged(d, sender, verdict, "merge", &format!("{reason}{warned}")));
                settle(tx, &mut change, source, intake)?;
                changes.push(change);
            }
            Decision::Unchanged => unchanged += 1,
            Decision::Echo => echoes += 1,
            Decision::Rejected { stage, reason } => {
                let refusal = Refusal {
                    peer: source,
                    sender: &sender.account,
                    stage: *stage,
                    reason,
                    findings: &d.findings,
                    trust: sender.trust,
                    legacy: sender.kind == SenderKind::Legacy,
                };
                tx.quarantine(&d.packet, &refusal, limits.quarantine.body)?;
                tx.audit(source, name, &format!("rejected:{}", stage.name()), reason)?;
                let mut refused = logged(d, sender, Verdict::Refused, stage.name(), reason);
                if *stage == Stage::Safety {
                    refused.finding = decision_log::top_finding(&d.findings, Severity::Info).cloned();
                }
                log.push(refused);
            }
        }
    }
    if unchanged > 0 {
        // One line, not one per packet: a full pull of an unchanged peer
        // would otherwise write its whole skill set every round.
        tx.audit(source, "*", "unchanged", &format!("{unchanged} packets"))?;
    }
    if echoes > 0 {
        // Laundered copies of what this node holds (SPEC.md §7.9.2 rule 3a):
        // a Go peer serves them back every round; nothing to refuse.
        tx.audit(source, "*", "echo", &format!("{echoes} packets"))?;
    }
    Ok(changes)
}
