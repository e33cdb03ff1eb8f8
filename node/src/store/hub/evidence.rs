//! Outcome evidence on the hub (`SPEC.md` §16, hub migration 3): the
//! claims pushed packets carry are taken as a node takes them
//! ([`crate::intake::outcomes`]) — the newest per skill and observer
//! ([`protocol_outcomes::combine`]), with who delivered it and the trust it came at,
//! in `hub_outcome_claims`, shared by every replica — the policy's evidence
//! rule refuses an install whose weighed failure rate is over its line, and
//! every replica serves the claims held on the skill's packets, newest
//! first, at most [`MAX_CLAIMS`] ([`served`]). A change of what a packet
//! carries gives the skill a new sequence number.
//!
//! A hub has no outcomes of its own: its agents report to a node's local
//! `/v1/` API, which a hub does not serve, so its `stats` count no use
//! (`totalUses` 0) and it never serves a claim as its own observer.

use std::collections::HashMap;

use ecp_protocol::outcomes::{self as protocol_outcomes, EvidenceRule, HeldClaim, MAX_CLAIMS};
use ecp_protocol::{MergeOutcome, OutcomeClaim, Timestamp};

use super::merge::Writer;
use crate::intake::{Sender, outcomes};
use crate::store::{StoreError, now};

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn claim_of(row: &postgres::Row, first: usize) -> OutcomeClaim {
    let n = |i: usize| u64::try_from(row.get::<_, i64>(first + i)).unwrap_or(0);
    OutcomeClaim {
        observer: row.get(first),
        uses: n(1),
        successes: n(2),
        failures: n(3),
        streak: n(4),
        at: Timestamp::parse(row.get(first + 5)).unwrap_or_default(),
    }
}

impl Writer<'_, '_> {
    /// Takes the claims of every packet that passed the checks of the
    /// packet itself (a refusal by policy, a duplicate or a conflict says
    /// nothing against its evidence), and turns an install whose evidence
    /// `rule` refuses into that refusal, recounting the result — as the
    /// node's merge does (`intake::outcomes::weigh`).
    pub(super) fn weigh(
        &mut self,
        outcome: MergeOutcome,
        carried: &HashMap<usize, Vec<OutcomeClaim>>,
        sender: &Sender,
        local: &str,
        rule: Option<EvidenceRule>,
    ) -> Result<MergeOutcome, StoreError> {
        outcomes::weigh_with(outcome, carried, rule, |name, origin, claims| {
            self.take_claims(name, origin, claims, &sender.instance, sender.trust, local)
        })
    }

    /// Takes `claims` about `origin`'s skill `name` from `sender` at
    /// `trust`; returns what is held about it afterwards — nothing when the
    /// hub holds another origin's `name` (its claims are not taken).
    fn take_claims(
        &mut self,
        name: &str,
        origin: &str,
        claims: &[OutcomeClaim],
        sender: &str,
        trust: f64,
        local: &str,
    ) -> Result<Vec<HeldClaim>, StoreError> {
        let held_origin = self.tx.query_opt("SELECT origin FROM hub_skills WHERE name = $1", &[&name])?;
        if held_origin.is_some_and(|row| row.get::<_, &str>(0) != origin) {
            return Ok(Vec::new());
        }
        let before: Vec<HeldClaim> = self
            .tx
            .query(
                "SELECT observer, uses, successes, failures, streak, at, sender, trust
                 FROM hub_outcome_claims WHERE name = $1 ORDER BY observer",
                &[&name],
            )?
            .iter()
            .map(|row| HeldClaim { claim: claim_of(row, 0), sender: row.get(6), trust: row.get(7) })
            .collect();
        let after = protocol_outcomes::combine(before.clone(), claims, sender, trust, local);
        let received = now().to_string();
        let mut carried_changed = false;
        for h in after.iter().filter(|h| !before.contains(h)) {
            let c = &h.claim;
            // The same claim by a more trusted path weighs more here, but
            // what the packet carries on is the same.
            carried_changed |=
                before.iter().find(|b| b.claim.observer == c.observer).is_none_or(|b| b.claim != *c);
            self.tx.execute(
                "INSERT INTO hub_outcome_claims
                     (name, observer, uses, successes, failures, streak, at, sender, trust, received)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (name, observer) DO UPDATE SET
                     uses = excluded.uses, successes = excluded.successes, failures = excluded.failures,
                     streak = excluded.streak, at = excluded.at, sender = excluded.sender,
                     trust = excluded.trust, received = excluded.received",
                &[
                    &name,
                    &c.observer,
                    &count(c.uses),
                    &count(c.successes),
                    &count(c.failures),
                    &count(c.streak),
                    &c.at.to_string(),
                    &h.sender,
                    &h.trust,
                    &received,
                ],
            )?;
        }
        if carried_changed {
            // What the skill's packet carries changed: a new sequence number,
            // so incremental pulls and every replica's cached listing see it.
            let next = self.seq + 1;
            if self.tx.execute("UPDATE hub_skills SET seq = $2 WHERE name = $1", &[&name, &next])? > 0 {
                self.seq = next;
            }
        }
        Ok(after)
    }
}

/// The claims each skill's served packet carries (`SPEC.md` §16.2.2): the
/// newest held (then most uses), at most [`MAX_CLAIMS`]; skills with none
/// are absent. Read in the caller's snapshot.
pub(super) fn served(
    tx: &mut postgres::Transaction<'_>,
) -> Result<HashMap<String, Vec<OutcomeClaim>>, StoreError> {
    let rows = tx.query(
        "SELECT name, observer, uses, successes, failures, streak, at FROM hub_outcome_claims
         ORDER BY name, observer",
        &[],
    )?;
    let mut served: HashMap<String, Vec<OutcomeClaim>> = HashMap::new();
    for row in &rows {
        served.entry(row.get(0)).or_default().push(claim_of(row, 1));
    }
    for claims in served.values_mut() {
        claims.sort_by_key(|c| std::cmp::Reverse((c.at, c.uses)));
        claims.truncate(MAX_CLAIMS);
    }
    Ok(served)
}
