//! ECP/1.3 outcome evidence (`SPEC.md` §16): a packet may carry
//! [`OutcomeClaim`]s, each one instance's summary of how the skill fared
//! there. They are claims like `originInstance`, never signed: a receiver
//! keeps them apart from its own outcomes, holds the newest claim per
//! observer ([`combine`]), and weighs them by its trust in whoever
//! delivered them ([`weigh`]), so no sender counts for more than one
//! observer and no relay multiplies a claim.
//!
//! - [`check_claims`]: the limits of stage 2 (§16.3).
//! - [`combine`]: what a node holds after a packet's claims arrive.
//! - [`weigh`]: the [`Evidence`] a policy reads ([`EvidenceRule`]).

use std::collections::{BTreeMap, HashMap};

use thiserror::Error;

use crate::merge::check_instance_id;
use crate::policy::PolicyRefusal;
use crate::wire::{OutcomeClaim, Timestamp};

/// Most claims on one packet.
pub const MAX_CLAIMS: usize = 16;
/// Largest count (`uses`, `successes`, `failures`, `streak`) in a claim.
pub const MAX_COUNT: u64 = 1_000_000_000;

/// Why a packet's `outcomes` are refused (stage 2, `invalid packet: outcomes …`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ClaimError {
    /// Over [`MAX_CLAIMS`] claims.
    #[error("outcomes has {count} claims, over the limit of {MAX_CLAIMS}; send the newest")]
    TooMany {
        /// Claims on the packet.
        count: usize,
    },
    /// The observer is not a valid instance id.
    #[error("outcomes observer {problem}")]
    BadObserver {
        /// What is wrong with it (completes "observer …").
        problem: String,
    },
    /// Two claims name one observer.
    #[error("outcomes names observer {observer:?} twice; send one claim per observer")]
    RepeatedObserver {
        /// The observer.
        observer: String,
    },
    /// The counts do not add up, or one is over [`MAX_COUNT`].
    #[error(
        "outcomes of observer {observer:?}: {problem} (uses = successes + failures, streak <= successes, each at most {MAX_COUNT})"
    )]
    BadCounts {
        /// The observer.
        observer: String,
        /// Which rule the counts break.
        problem: &'static str,
    },
    /// `at` is missing, or further ahead of the receiver's clock than the policy's skew.
    #[error("outcomes of observer {observer:?}: at {at} is missing or lies in the future")]
    BadTime {
        /// The observer.
        observer: String,
        /// The claim's time.
        at: Timestamp,
    },
}

/// Checks a packet's claims (`SPEC.md` §16.3): at most [`MAX_CLAIMS`], one
/// per observer, each observer an instance id, counts that add up and stay
/// at most [`MAX_COUNT`], `at` set and at most `max_skew_secs` past `now`.
pub fn check_claims(claims: &[OutcomeClaim], now: Timestamp, max_skew_secs: i64) -> Result<(), ClaimError> {
    if claims.len() > MAX_CLAIMS {
        return Err(ClaimError::TooMany { count: claims.len() });
    }
    for (i, claim) in claims.iter().enumerate() {
        check_instance_id(&claim.observer).map_err(|problem| ClaimError::BadObserver { problem })?;
        if claims[..i].iter().any(|c| c.observer == claim.observer) {
            return Err(ClaimError::RepeatedObserver { observer: claim.observer.clone() });
        }
        let bad = |problem| ClaimError::BadCounts { observer: claim.observer.clone(), problem };
        if [claim.uses, claim.successes, claim.failures, claim.streak].iter().any(|&n| n > MAX_COUNT) {
            return Err(bad("a count is too large"));
        }
        if claim.successes + claim.failures != claim.uses {
            return Err(bad("uses is not successes + failures"));
        }
        if claim.streak > claim.successes {
            return Err(bad("streak is over successes"));
        }
        let ahead = claim.at.unix_seconds().saturating_sub(now.unix_seconds());
        if claim.at.is_go_zero() || ahead > max_skew_secs {
            return Err(ClaimError::BadTime { observer: claim.observer.clone(), at: claim.at });
        }
    }
    Ok(())
}

/// A claim as a node holds it: who delivered it, trusted how far.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldClaim {
    /// The claim as received.
    pub claim: OutcomeClaim,
    /// The instance that delivered it (the observer itself, or a relay).
    pub sender: String,
    /// The receiver's trust in `sender` when it arrived, 0..1.
    pub trust: f64,
}

impl HeldClaim {
    /// Whether this claim replaces `held`, a claim by the same observer:
    /// a later `at`, then more uses, then (the same claim by another path)
    /// a more trusted sender.
    fn replaces(&self, held: &HeldClaim) -> bool {
        let (a, b) = (&self.claim, &held.claim);
        (a.at, a.uses).cmp(&(b.at, b.uses)).then(self.trust.total_cmp(&held.trust)).is_gt()
    }
}

/// The claims a node holds about one skill after `incoming` arrived from
/// `sender` at `trust`: the newest claim per observer, by observer. A
/// claim by `local` (this node's own outcomes, relayed back) is not taken:
/// the node's own count is its store's, never a peer's word for it.
pub fn combine(
    held: Vec<HeldClaim>,
    incoming: &[OutcomeClaim],
    sender: &str,
    trust: f64,
    local: &str,
) -> Vec<HeldClaim> {
    let mut by_observer: BTreeMap<String, HeldClaim> =
        held.into_iter().map(|h| (h.claim.observer.clone(), h)).collect();
    let trust = if trust.is_finite() { trust.clamp(0.0, 1.0) } else { 0.0 };
    for claim in incoming.iter().filter(|c| c.observer != local) {
        let arriving = HeldClaim { claim: claim.clone(), sender: sender.to_owned(), trust };
        match by_observer.get(&claim.observer) {
            Some(kept) if !arriving.replaces(kept) => {}
            _ => {
                by_observer.insert(claim.observer.clone(), arriving);
            }
        }
    }
    by_observer.into_values().collect()
}

/// What peers' claims about a skill add up to, weighed (`SPEC.md` §16.5).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// Observers with a claim.
    pub observers: usize,
    /// Senders those claims came from.
    pub senders: usize,
    /// Uses, weighed.
    pub uses: f64,
    /// Failures, weighed.
    pub failures: f64,
}

impl Evidence {
    /// Failures over uses; `None` with no weighed use.
    pub fn failure_rate(&self) -> Option<f64> {
        (self.uses > 0.0).then(|| self.failures / self.uses)
    }
}

/// Weighs held claims: a claim counts at its sender's trust, shared
/// equally among the claims that sender delivered — so one sender, whatever
/// it claims for however many observers, weighs at most as one observer.
pub fn weigh(held: &[HeldClaim]) -> Evidence {
    let mut per_sender: HashMap<&str, f64> = HashMap::new();
    for h in held {
        *per_sender.entry(&h.sender).or_default() += 1.0;
    }
    let mut evidence = Evidence { observers: held.len(), senders: per_sender.len(), ..Evidence::default() };
    for h in held {
        let weight = h.trust.clamp(0.0, 1.0) / per_sender[h.sender.as_str()];
        evidence.uses += weight * h.claim.uses as f64;
        evidence.failures += weight * h.claim.failures as f64;
    }
    evidence
}

/// A policy on evidence (`[policy] max_reported_failure_rate`,
/// `min_reported_uses`): refuse a skill whose weighed failure rate is over
/// the line, once there are enough weighed uses to say so.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvidenceRule {
    /// The highest failure rate accepted (0 to 1; 1 never refuses).
    pub max_failure_rate: f64,
    /// Fewest weighed uses the rate is judged on.
    pub min_uses: f64,
}

impl EvidenceRule {
    /// The refusal `evidence` earns, if any.
    pub fn refusal(&self, evidence: &Evidence) -> Option<PolicyRefusal> {
        let rate = evidence.failure_rate()?;
        (evidence.uses + crate::policy::CONFIDENCE_EPSILON >= self.min_uses
            && rate > self.max_failure_rate + crate::policy::CONFIDENCE_EPSILON)
            .then_some(PolicyRefusal::ReportedFailures {
                failure_rate: rate,
                uses: evidence.uses,
                observers: evidence.observers,
                max: self.max_failure_rate,
            })
    }
}

#[cfg(test)]
mod tests;
