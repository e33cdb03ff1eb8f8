//! MergeKnowledge (`ECP.md` › Merge): decide, for every packet of an update,
//! what happens to it — as a pure function the caller then applies.
//!
//! Stages, in this order, for each packet (`SPEC.md` › Merge):
//! 1. **integrity** — SHA-256(skillBody) must equal integrityHash;
//!    **signature** (1a, `SPEC.md` §13) — an `originSignature` must hold
//!    (and then names the origin), an unsigned packet must not be required
//!    to be signed; the key an origin is known by is checked in stage 5;
//! 2. **name and structure** — the name rule, field sizes, confidence in
//!    [0, 1], frontmatter (rebuilt from skillName/skillDescription when the
//!    body has none), body length and size limits, a bundle's listing
//!    ([`check_packet`](crate::bundle::check_packet));
//! 3. **safety** — the [`Scanner`](crate::scan::Scanner) at the policy's threshold
//!    (a bundle's other files are scanned once held, after the merge:
//!    [`PacketDecision::apply_bundle_scan`]);
//! 4. **accept policy** — [`AcceptPolicy::accept`], then the loop check (our
//!    own instance on the packet's path) and the frontmatter name check;
//! 5. **resolution** — against the store view and the other packets of the
//!    update.
//!
//! Counts are truthful: new + updated + unchanged + rejected = packets in
//! the update, and each rejected packet has exactly one conflicts line.
//!
//! # Layout
//!
//! - `mod.rs`: the types of a merge and [`merge_knowledge`], which tallies
//!   the decisions into the wire [`MergeResult`]; its two halves
//!   [`check_update`] (stages 1–4) and [`resolve_update`] (stage 5), for a
//!   store that locks only around stage 5.
//! - `checks.rs`: stages 1–4, which look at one packet alone.
//! - `resolve.rs`: stage 5, which needs the store.
//! - `receive.rs`: [`receive`], what an accepted packet is stored as
//!   (lowered confidence, extended provenance).
//! - `origin.rs`: [`SenderKind`], whether a packet's origin is verified,
//!   and the [`content_key`] that recognises a laundered copy.
//! - `refusal.rs`: the reason prefixes of `SPEC.md` › 7.11 and their stages,
//!   the one place a refusal reason is opened.
//! - `warning.rs`: [`PacketWarning`], what a packet that passes is told
//!   (a description over the guideline).
//! - `memory.rs`: a `HashMap` by name as an in-memory store
//!   ([`MergeOutcome::apply_to`]).
//! - `ahead.rs`: stage 3's scan run ahead, off the merge
//!   ([`merge_knowledge_ahead`]).

mod ahead;
mod checks;
mod memory;
mod origin;
mod receive;
mod refusal;
mod resolve;
mod warning;

pub use ahead::{ScanAhead, ScannedAhead, merge_knowledge_ahead};
pub use checks::{
    MAX_INSTANCE_BYTES, MAX_LIST_ITEM_BYTES, MAX_LIST_ITEMS, MAX_PATH_HOPS, check_description,
    check_instance_id,
};
pub use origin::{GO_DEFAULT_INSTANCE, SenderKind, content_key, origin_verified};
pub use receive::{DEFAULT_TRUST, receive};
pub(crate) use refusal::{pending, scan_failed};

/// The decision refusing a packet for `reason` at stage 4, its reason
/// opened as every policy refusal is (`rejected by policy: `): for a
/// node's rules that need more than the packet, such as its evidence rule
/// (`SPEC.md` §16.6).
pub fn refused_by_policy(reason: &crate::policy::PolicyRefusal) -> Decision {
    refusal::Refusal::new(refusal::Prefix::Policy, reason).into()
}

/// The safety refusal of a bundle's findings at `threshold`, if any
/// ([`safety_refusal`](checks::safety_refusal)), as a decision.
pub(crate) fn safety_decision(findings: &[Finding], threshold: crate::scan::Severity) -> Option<Decision> {
    checks::safety_refusal(findings, threshold).map(Decision::from)
}
pub use warning::{DESCRIPTION_GUIDELINE_CHARS, PacketWarning};

use crate::policy::AcceptPolicy;
use crate::scan::Finding;
use crate::wire::{KnowledgeUpdate, MergeResult, SkillPacket, Timestamp};

/// Whether a held skill was written here or received from a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillKind {
    /// Authored on this instance (by its agent or its operator). A remote
    /// packet never replaces it.
    Local,
    /// Received from a peer; replaceable only by its origin.
    External,
}

/// What the merge needs to know about a skill the node holds.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSkill {
    /// Local or external.
    pub kind: SkillKind,
    /// `originInstance` of the held version.
    pub origin: String,
    /// `integrityHash` of the held body.
    pub integrity_hash: String,
    /// `createdAt` of the held version.
    pub created_at: Timestamp,
    /// Whether the held version is a tombstone.
    pub deprecated: bool,
    /// The confidence the skill is held at, when known: the same content
    /// arriving at a higher confidence (after trust) raises it (`SPEC.md`
    /// §7.9.2.4). `None` never is.
    pub confidence: Option<f64>,
    /// `bundleDigest` of the held version; empty for a plain skill. A
    /// bundle is the same version only with the same body and files.
    pub bundle_digest: String,
    /// Whether the held version's origin is verified (`SPEC.md` §6.6): a
    /// local skill, or one received with a verified origin. An unverified
    /// one gives way to a verified packet (§7.9.2 rule 4a).
    pub origin_verified: bool,
    /// The [`content_key`] of the held body, when the view read it (for
    /// legacy senders): a legacy packet with the same key is an echo
    /// (§7.9.2 rule 3a). `None` never is.
    pub content_key: Option<String>,
    /// The key id that signed the held version (`SPEC.md` §13.8): only a
    /// packet signed by it replaces it. `None`: held unsigned.
    pub origin_key: Option<String>,
}

/// A read-only view of the node's skills by name. A `HashMap` by name is
/// one (see [`MergeOutcome::apply_to`]).
pub trait StoreView {
    /// The held skill named `name`, if any (tombstones included).
    fn lookup(&self, name: &str) -> Option<StoredSkill>;

    /// The key id the origin `instance` is known by (`SPEC.md` §13.6:
    /// pinned, from its manifest, or first seen), if any. A packet claiming
    /// that origin must be signed by that key.
    fn origin_key(&self, instance: &str) -> Option<String> {
        let _ = instance;
        None
    }

    /// The reason the origin gave when it revoked the version of `name`
    /// whose digest ([`version_digest`](crate::revocation::version_digest))
    /// is `digest` (`SPEC.md` §14.6), if it did: such a packet is refused
    /// from anyone.
    fn revoked(&self, name: &str, digest: &str) -> Option<String> {
        let _ = (name, digest);
        None
    }
}

/// Who is merging what from whom, and when.
#[derive(Debug, Clone, Copy)]
pub struct MergeContext<'a> {
    /// Our own instance id: a packet that has passed through it is a loop.
    pub local_instance: &'a str,
    /// The instance we received the update from (the configured peer, or the
    /// update's `peerInstance` for an unconfigured pusher).
    pub sender: &'a str,
    /// Our trust in the sender, 0..1: received confidence is multiplied by it.
    pub trust: f64,
    /// Whether the sender keeps origins ([`SenderKind::Current`]) or is an
    /// ECP/1.1 node whose origins are unverified (`SPEC.md` §6.6).
    pub sender_kind: SenderKind,
    /// The current time: `receivedAt`, and the future-time check.
    pub now: Timestamp,
}

/// The stage that refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Beyond the policy's packet limit for one update.
    Limit,
    /// Stage 1.
    Integrity,
    /// Stage 1a (`SPEC.md` §13.5): the origin signature does not hold,
    /// is not by the key the origin is known by, or is missing where one is
    /// required (a downgrade, or `require_origin_signature`).
    Signature,
    /// Stage 2: the name rule.
    Name,
    /// Stage 2: fields, frontmatter, body.
    Structure,
    /// Stage 2: the files of a bundle (`SPEC.md` §12); also a bundle
    /// whose held files fail their check after the merge.
    Bundle,
    /// Stage 3.
    Safety,
    /// Stage 4: the accept policy, loop and frontmatter name checks.
    Policy,
    /// Stage 5: another packet of the same update won.
    Duplicate,
    /// Stage 5: the store holds a version this packet may not replace.
    Conflict,
    /// Stage 5 (`SPEC.md` §14.6): the origin revoked this very version.
    Revoked,
}

impl Stage {
    /// The stage's name as `SPEC.md` §7.11 and quarantine records write it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Limit => "limit",
            Stage::Integrity => "integrity",
            Stage::Signature => "signature",
            Stage::Name => "name",
            Stage::Structure => "structure",
            Stage::Bundle => "bundle",
            Stage::Safety => "safety",
            Stage::Policy => "policy",
            Stage::Duplicate => "duplicate",
            Stage::Conflict => "conflict",
            Stage::Revoked => "revoked",
        }
    }
}

/// What to do with one packet.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Install under a name not held before.
    New,
    /// Replace the held version (also: withdraw it, when the packet is a tombstone).
    Updated {
        /// `integrityHash` of the version being replaced.
        previous_hash: String,
    },
    /// Identical to what is held (or a tombstone for a skill not held): nothing to do.
    Unchanged,
    /// A copy of a held skill that a legacy sender re-served as its own
    /// (`SPEC.md` §7.9.2 rule 3a): nothing to do, nothing to quarantine.
    /// Counted as `unchanged` on the wire.
    Echo,
    /// Refused. Record it with its reason (quarantine); never drop it silently.
    Rejected {
        /// Which stage refused it.
        stage: Stage,
        /// One line, no file paths.
        reason: String,
    },
}

impl Decision {
    /// Whether the caller must write the packet to its store.
    pub fn installs(&self) -> bool {
        matches!(self, Decision::New | Decision::Updated { .. })
    }
}

/// The decision about one packet, with the packet itself.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketDecision {
    /// Position of the packet in the update.
    pub index: usize,
    /// For `New`/`Updated`: the packet to store — lowered confidence,
    /// extended provenance, frontmatter rebuilt if it had none, hashes and id
    /// recomputed. Otherwise: the packet as received.
    pub packet: SkillPacket,
    /// What to do.
    pub decision: Decision,
    /// Every scanner finding (also those below the threshold), for the audit.
    pub findings: Vec<Finding>,
    /// What is worth telling the sender and the operator about a packet
    /// that was not refused for it (`SPEC.md` §7.10.5).
    pub warnings: Vec<PacketWarning>,
}

impl PacketDecision {
    /// Folds the scan of the bundle's held files ([`scan_bundle`](crate::bundle::scan_bundle))
    /// into an installing decision (`SPEC.md` §12.9.4): its findings join
    /// the audit, and its refusal, if any, replaces the decision. Other
    /// decisions install nothing and stay as they are. Count the outcome
    /// with [`tally`] afterwards.
    pub fn apply_bundle_scan(&mut self, scan: crate::bundle::BundleScan) {
        if !self.decision.installs() {
            return;
        }
        self.findings.extend(scan.report.findings);
        if let Some(refusal) = scan.refusal {
            self.decision = refusal;
        }
    }
}

/// Everything a merge decided.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOutcome {
    /// The wire answer.
    pub result: MergeResult,
    /// One decision per packet, in update order.
    pub decisions: Vec<PacketDecision>,
}

/// Merges `update` into a node whose skills `store` shows, under `policy`.
///
/// Pure: reads nothing but its arguments and changes nothing; the caller
/// applies the [`PacketDecision`]s (ideally in one transaction). Takes the
/// update by value so that packets move into the decisions without copies.
pub fn merge_knowledge(
    update: KnowledgeUpdate,
    store: &impl StoreView,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
) -> MergeOutcome {
    resolve_update(check_update(update, store, policy, ctx), store, ctx)
}

/// An update after stages 1–4 ([`check_update`]), waiting for stage 5
/// ([`resolve_update`]).
#[derive(Debug)]
pub struct CheckedUpdate(Vec<Vec<checks::Checked>>);

/// Stages 1–4 of [`merge_knowledge`]: everything that looks at each packet
/// alone (integrity, signature, structure, the scan, the policy) — most of
/// a merge's work. `store` only spares the scan of content it holds as
/// received (`SPEC.md` §7.7.9). A store shared by writers can run this
/// before it locks anything, then [`resolve_update`] against what it holds
/// under its lock: the same decisions as [`merge_knowledge`] on that view.
pub fn check_update(
    update: KnowledgeUpdate,
    store: &impl StoreView,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
) -> CheckedUpdate {
    check_update_with(update, store, policy, ctx, &ScannedAhead::new())
}

/// [`check_update`], its scans taken from `ahead` where it holds the body.
fn check_update_with(
    update: KnowledgeUpdate,
    store: &impl StoreView,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
    ahead: &ScannedAhead,
) -> CheckedUpdate {
    let held: Vec<bool> = update.skills.iter().map(|p| holds_as_received(store, p)).collect();
    let names = std::hash::RandomState::new();
    CheckedUpdate(checks::check_all(update.skills, &held, policy, ctx, &names, ahead))
}

/// Stage 5 of [`merge_knowledge`]: the packets `checked` admitted, against
/// `store`, and the tally.
pub fn resolve_update(
    checked: CheckedUpdate,
    store: &impl StoreView,
    ctx: &MergeContext<'_>,
) -> MergeOutcome {
    let decisions = resolve::resolve(checked.0, store, ctx);
    let result = tally(&decisions);
    MergeOutcome { result, decisions }
}

/// Whether the store holds, as received from a peer, the content `packet`
/// claims: the same `integrityHash`, bundle digest and state. Only a claim
/// until stage 1 has checked the body against the hash. A local skill never
/// counts: a copy of it is judged as any packet is.
fn holds_as_received(store: &impl StoreView, packet: &SkillPacket) -> bool {
    store.lookup(&packet.skill_name).is_some_and(|held| {
        held.kind == SkillKind::External
            && held.integrity_hash == packet.integrity_hash
            && held.bundle_digest == packet.bundle_digest
            && held.deprecated == packet.deprecated
    })
}

/// The wire answer for `decisions`: one count per decision, one conflicts
/// line per rejected packet. [`merge_knowledge`] answers with it; a caller
/// that leaves some decisions out (a node holding packets back) counts what
/// it applies with it instead of editing the counts.
pub fn tally(decisions: &[PacketDecision]) -> MergeResult {
    let mut result = MergeResult::default();
    for d in decisions {
        if !matches!(d.decision, Decision::Rejected { .. }) {
            let name = display_name(&d.packet.skill_name);
            result.warnings.extend(d.warnings.iter().map(|w| format!("{name}: {w}")));
        }
        match &d.decision {
            Decision::New => result.new_skills += 1,
            Decision::Updated { .. } => result.updated_skills += 1,
            Decision::Unchanged | Decision::Echo => result.unchanged += 1,
            Decision::Rejected { reason, .. } => {
                result.rejected_skills += 1;
                result.conflicts.push(result_line(&d.packet.skill_name, reason));
            }
        }
    }
    result
}

/// A line of a MergeResult's `conflicts` (or `held`): `"<skillName>:
/// <reason>"`, the name displayed (§7.10.3) and the reason on one line.
pub fn result_line(name: &str, reason: &str) -> String {
    format!("{}: {}", display_name(name), one_line(reason))
}

/// A reason as it may appear in a conflicts line: one line, at most 300
/// characters (a custom policy's reason or a parser message may echo input).
fn one_line(reason: &str) -> String {
    const MAX: usize = 300;
    let mut shown: String = reason.chars().take(MAX).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if reason.chars().nth(MAX).is_some() {
        shown.push('…');
    }
    shown
}

/// A skill name as it may appear in a conflicts line: control characters
/// escaped (a hostile name cannot forge extra lines), at most 64 characters.
fn display_name(name: &str) -> String {
    const MAX: usize = 64;
    if name.is_empty() {
        return "(unnamed)".to_owned();
    }
    let mut shown: String = name.chars().take(MAX).flat_map(char::escape_default).collect();
    if name.chars().nth(MAX).is_some() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests;
