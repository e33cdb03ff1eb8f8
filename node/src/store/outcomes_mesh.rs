//! Outcome evidence across the mesh (#19 item 5, `SPEC.md` §16): the
//! claims peers' packets carried about a skill, kept apart from this
//! node's own outcomes ([`super::outcomes`]) — the newest claim per skill
//! and observer, with who delivered it and the trust it came at — and the
//! claims this node serves on its packets: its own count first, then the
//! newest it holds from others, at most [`MAX_CLAIMS`].
//!
//! A change of what a skill's packet would carry (a report counted here,
//! a newer claim received) gives the skill a new sequence number, so
//! incremental pulls, pushes and the cached listing carry it on.

use std::collections::HashMap;

use ecp_protocol::outcomes::{self, Evidence, HeldClaim, MAX_CLAIMS};
use ecp_protocol::{OutcomeClaim, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{Store, StoreError, Tx, next_seq, now, outcomes::scores};

/// One claim held about a skill, as `skill show --mesh` and `/v1/` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MeshClaim {
    /// The claim.
    #[serde(flatten)]
    pub claim: OutcomeClaim,
    /// Who delivered it.
    pub sender: String,
    /// The trust it came at.
    pub trust: f64,
    /// When it arrived (RFC 3339).
    pub received: String,
}

/// How a skill fares across the mesh: peers' claims and their weight.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mesh {
    /// The claims, by observer.
    pub claims: Vec<MeshClaim>,
    /// Observers counted.
    pub observers: usize,
    /// Senders they came from.
    pub senders: usize,
    /// Uses, weighed by trust (a sender weighs as one observer at most).
    pub weighed_uses: f64,
    /// Failures, weighed the same.
    pub weighed_failures: f64,
    /// `weighedFailures / weighedUses`; `null` with no use.
    pub failure_rate: Option<f64>,
}

impl Mesh {
    fn of(claims: Vec<MeshClaim>) -> Mesh {
        let held: Vec<HeldClaim> = claims.iter().map(held).collect();
        let Evidence { observers, senders, uses, failures } = outcomes::weigh(&held);
        let failure_rate = (uses > 0.0).then(|| failures / uses);
        Mesh { claims, observers, senders, weighed_uses: uses, weighed_failures: failures, failure_rate }
    }
}

fn held(m: &MeshClaim) -> HeldClaim {
    HeldClaim { claim: m.claim.clone(), sender: m.sender.clone(), trust: m.trust }
}

/// Every claim held about `name`, by observer.
fn mesh_claims(conn: &Connection, name: &str) -> Result<Vec<MeshClaim>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT observer, uses, successes, failures, streak, at, sender, trust, received
         FROM outcome_claims WHERE name = ?1 ORDER BY observer",
    )?;
    let rows = stmt.query_map(params![name], |r| {
        let count = |i: usize| r.get::<_, i64>(i).map(|n| u64::try_from(n).unwrap_or(0));
        let at: String = r.get(5)?;
        Ok(MeshClaim {
            claim: OutcomeClaim {
                observer: r.get(0)?,
                uses: count(1)?,
                successes: count(2)?,
                failures: count(3)?,
                streak: count(4)?,
                at: Timestamp::parse(&at).unwrap_or_default(),
            },
            sender: r.get(6)?,
            trust: r.get(7)?,
            received: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Whether the held skill `name`, if any, has `origin` for its origin:
/// claims about another origin's skill of the same name are not taken.
fn same_skill(conn: &Connection, name: &str, origin: &str) -> Result<bool, StoreError> {
    let held: Option<String> = conn
        .prepare_cached("SELECT origin FROM skills WHERE name = ?1")?
        .query_row(params![name], |r| r.get(0))
        .optional()?;
    Ok(held.is_none_or(|held| held == origin))
}

impl Tx<'_> {
    /// Takes the `claims` a packet of `origin`'s skill `name` carried,
    /// delivered by `sender` at `trust`, into the claims held
    /// ([`outcomes::combine`]: the newest per observer; `local`'s own never).
    /// Returns what is held about the skill afterwards; nothing is taken
    /// (and nothing returned) when the node holds another origin's `name`.
    pub fn take_claims(
        &self,
        name: &str,
        origin: &str,
        claims: &[OutcomeClaim],
        sender: &str,
        trust: f64,
        local: &str,
    ) -> Result<Vec<HeldClaim>, StoreError> {
        if !same_skill(self.sql, name, origin)? {
            return Ok(Vec::new());
        }
        let before = mesh_claims(self.sql, name)?;
        let held: Vec<HeldClaim> = before.iter().map(held).collect();
        let after = outcomes::combine(held.clone(), claims, sender, trust, local);
        let received = now().to_string();
        let mut carried_changed = false;
        for h in after.iter().filter(|h| !held.contains(h)) {
            let c = &h.claim;
            let was = before.iter().find(|m| m.claim.observer == c.observer);
            // A claim that only came by a more trusted path weighs more
            // here, but what the packet carries on is the same.
            carried_changed |= was.is_none_or(|m| m.claim != *c);
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            self.sql
                .prepare_cached(
                    "INSERT INTO outcome_claims
                         (name, observer, uses, successes, failures, streak, at, sender, trust, received)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                     ON CONFLICT (name, observer) DO UPDATE SET
                         uses = excluded.uses, successes = excluded.successes, failures = excluded.failures,
                         streak = excluded.streak, at = excluded.at, sender = excluded.sender,
                         trust = excluded.trust, received = excluded.received",
                )?
                .execute(params![
                    name,
                    c.observer,
                    count(c.uses),
                    count(c.successes),
                    count(c.failures),
                    count(c.streak),
                    c.at.to_string(),
                    h.sender,
                    h.trust,
                    received
                ])?;
        }
        if carried_changed {
            carried_on(self.sql, name)?;
        }
        Ok(after)
    }
}

/// Gives the held skill `name` a new sequence number: what its packet
/// carries changed, so listings, caches and incremental pulls see it.
pub(super) fn carried_on(tx: &rusqlite::Transaction<'_>, name: &str) -> Result<(), StoreError> {
    if tx.prepare_cached("SELECT 1 FROM skills WHERE name = ?1")?.exists(params![name])? {
        let seq = next_seq(tx)?;
        tx.prepare_cached("UPDATE skills SET seq = ?2 WHERE name = ?1")?.execute(params![name, seq])?;
    }
    Ok(())
}

impl Store {
    /// How the skill `name` fares across the mesh: the claims peers' packets
    /// carried about it, and their weight.
    pub fn mesh(&self, name: &str) -> Result<Mesh, StoreError> {
        Ok(Mesh::of(mesh_claims(&self.conn(), name)?))
    }

    /// The claims each skill's served packet carries (`SPEC.md` §16.2):
    /// this node's own count when its agents reported a use, then the
    /// newest claims held from others, at most [`MAX_CLAIMS`]. Skills
    /// with none are absent.
    pub fn served_claims(&self) -> Result<HashMap<String, Vec<OutcomeClaim>>, StoreError> {
        let conn = self.conn();
        let mut served: HashMap<String, Vec<OutcomeClaim>> = HashMap::new();
        for (name, score) in scores(&conn)? {
            let at = score.last_used.as_deref().and_then(|t| Timestamp::parse(t).ok());
            let (Some(at), true) = (at, score.uses > 0) else { continue };
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            let own = OutcomeClaim {
                observer: self.instance_id().to_owned(),
                uses: count(score.uses),
                successes: count(score.successes),
                failures: count(score.failures),
                streak: count(score.streak),
                at,
            };
            served.entry(name).or_default().push(own);
        }
        let mut stmt = conn.prepare_cached("SELECT DISTINCT name FROM outcome_claims")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        for name in names {
            let mut others: Vec<OutcomeClaim> =
                mesh_claims(&conn, &name)?.into_iter().map(|m| m.claim).collect();
            others.sort_by_key(|c| std::cmp::Reverse((c.at, c.uses)));
            let claims = served.entry(name).or_default();
            let room = MAX_CLAIMS - claims.len();
            claims.extend(others.into_iter().take(room));
        }
        Ok(served)
    }
}

/// Adds `claims` to a packet's JSON (an object, as the store keeps it,
/// which never holds `outcomes`): `{…}` becomes `{…,"outcomes":[…]}`.
pub fn add_claims(json: &mut Vec<u8>, claims: &[OutcomeClaim]) {
    if claims.is_empty() || json.last() != Some(&b'}') {
        return;
    }
    json.pop();
    if json.last() != Some(&b'{') {
        json.push(b',');
    }
    json.extend_from_slice(b"\"outcomes\":");
    serde_json::to_writer(&mut *json, claims).expect("claims serialise to JSON");
    json.push(b'}');
}

#[cfg(test)]
mod tests {
    use ecp_protocol::SkillPacket;

    use super::*;

    #[test]
    fn a_packet_with_claims_added_reads_back_with_them() {
        let packet = SkillPacket { skill_name: "s".into(), ..SkillPacket::default() };
        let mut json = serde_json::to_vec(&packet).unwrap();
        let claim = OutcomeClaim {
            observer: "o".into(),
            uses: 2,
            successes: 1,
            failures: 1,
            streak: 0,
            at: Timestamp::parse("2026-11-26T10:00:00Z").unwrap(),
        };
        add_claims(&mut json, std::slice::from_ref(&claim));
        let back: SkillPacket = serde_json::from_slice(&json).unwrap();
        assert_eq!(back.outcomes, vec![claim]);
        assert_eq!(SkillPacket { outcomes: Vec::new(), ..back }, packet);
        let mut empty = b"{}".to_vec();
        add_claims(&mut empty, &[]);
        assert_eq!(empty, b"{}");
    }
}
