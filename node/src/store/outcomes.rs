//! Outcomes: what agents report after using a skill, each skill's score
//! (uses, successes, failures, success streak, last used) and whether it
//! is retired — the stored side of [`crate::outcomes`].
//!
//! The score belongs to the skill's name, so it is kept across versions:
//! a new version (another `integrityHash`) keeps the counts, but its
//! success streak starts at 0. The outcomes themselves are kept as a
//! bounded log per skill ([`KEPT_PER_SKILL`]): the counts are the
//! score's, the log holds the recent ones retirement looks at and the ids
//! that make a report sent again count once.
//!
//! A retired skill stays in the store with its versions and history: the
//! projection leaves it out of the skills folder (its changes are
//! withheld, [`super::Change::withheld`]), an external one is no longer
//! served (`shareable` 0), a local one is kept home by the sharing
//! decision ([`crate::sharing`]), which serves its withdrawal when peers
//! had it.

use std::collections::{HashMap, HashSet};

use ecp_protocol::SkillKind;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::skills::current;
use super::{Change, Source, Store, StoreError, next_seq, now};

/// Outcomes kept per skill (the newest); older ones are dropped, their
/// counts stay in the score. An id is remembered as long as its outcome is kept.
pub const KEPT_PER_SKILL: i64 = 1000;

/// How a use of a skill went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The skill did what it says.
    Success,
    /// It did not.
    Failure,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }
}

/// One report, checked ([`crate::outcomes`] checks the text).
#[derive(Debug, Clone)]
pub struct Report {
    /// How it went.
    pub outcome: Outcome,
    /// The agent's note (may be empty).
    pub note: String,
    /// When the skill was used (RFC 3339).
    pub at: String,
    /// The reporter's id: the same id again is the same report.
    pub id: Option<String>,
}

/// When a skill is retired: its recent failure rate reaches `failure_rate`
/// over at least `min_uses` of its last `window` outcomes (since its last restore).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetireRule {
    /// The line (0 to 1).
    pub failure_rate: f64,
    /// Fewest recent outcomes the rate is taken over; 0: never retire.
    pub min_uses: u64,
    /// Recent outcomes looked at.
    pub window: u64,
}

/// Why and since when a skill is retired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retired {
    /// When (RFC 3339).
    pub at: String,
    /// Why, in words.
    pub reason: String,
}

/// A skill's score: what agents reported about it, all versions together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// Uses reported.
    pub uses: i64,
    /// Of those, successes.
    pub successes: i64,
    /// Of those, failures.
    pub failures: i64,
    /// Successes in a row of the current version (0 after a failure or a new version).
    pub streak: i64,
    /// When it was last used (RFC 3339); `null`: never reported.
    pub last_used: Option<String>,
    /// Set when the skill is retired.
    pub retired: Option<Retired>,
}

/// What [`Store::record_outcome`] did.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The outcome's id.
    pub id: i64,
    /// The report's id was seen before: nothing was counted again.
    pub duplicate: bool,
    /// The skill's version it was counted for.
    pub version: i64,
    /// The score now.
    pub score: Score,
    /// This report retired the skill.
    pub retired_now: bool,
}

/// A report refused because the skill had too many in the last minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany {
    /// Reports of the skill in the last minute.
    pub count: u64,
}

/// The scores of every skill that has one, by name; the streak already 0
/// where the skill's current content is not the one it counts for.
pub(super) fn scores(conn: &Connection) -> Result<HashMap<String, Score>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.name, c.uses, c.successes, c.failures,
                CASE WHEN c.streak_hash = s.integrity_hash THEN c.streak ELSE 0 END,
                c.last_used, c.retired_at, c.retired_reason
         FROM skill_scores c LEFT JOIN skills s ON s.name = c.name",
    )?;
    let rows = stmt
        .query_map([], |r| {
            let retired_at: Option<String> = r.get(6)?;
            let reason: Option<String> = r.get(7)?;
            Ok((
                r.get::<_, String>(0)?,
                Score {
                    uses: r.get(1)?,
                    successes: r.get(2)?,
                    failures: r.get(3)?,
                    streak: r.get(4)?,
                    last_used: Some(r.get(5)?),
                    retired: retired_at.map(|at| Retired { at, reason: reason.unwrap_or_default() }),
                },
            ))
        })?
        .collect::<Result<HashMap<_, _>, _>>()?;
    Ok(rows)
}

fn score_of(conn: &Connection, name: &str) -> Result<Score, StoreError> {
    // One skill: the same query, filtered (scores are few next to skills).
    Ok(scores(conn)?.remove(name).unwrap_or_default())
}

/// Whether `name` is retired.
pub(super) fn is_retired(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM skill_scores WHERE name = ?1 AND retired_at IS NOT NULL")?
        .query_row(params![name], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Retires `name` if its recent outcomes cross `rule`'s line; the reason when it did.
fn retire_if_failing(
    tx: &Transaction<'_>,
    name: &str,
    rule: RetireRule,
) -> Result<Option<String>, StoreError> {
    if rule.min_uses == 0 || is_retired(tx, name)? {
        return Ok(None);
    }
    let (recent, failed): (i64, i64) = tx
        .prepare_cached(
            "SELECT COUNT(*), COALESCE(SUM(outcome = 'failure'), 0) FROM (
                 SELECT o.outcome FROM outcomes o JOIN skill_scores c ON c.name = o.name
                 WHERE o.name = ?1 AND o.id > c.recent_after ORDER BY o.id DESC LIMIT ?2)",
        )?
        .query_row(params![name, i64::try_from(rule.window).unwrap_or(i64::MAX)], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let recent_u = u64::try_from(recent).unwrap_or(0);
    if recent_u < rule.min_uses || (failed as f64) < rule.failure_rate * recent as f64 {
        return Ok(None);
    }
    let reason = format!(
        "{failed} of its last {recent} uses failed (the line is {:.0}% over at least {} uses: [outcomes] \
         retire_failure_rate, retire_min_uses); `ecp-node skill restore {name}` brings it back",
        rule.failure_rate * 100.0,
        rule.min_uses
    );
    let at = now().to_string();
    tx.prepare_cached("UPDATE skill_scores SET retired_at = ?2, retired_reason = ?3 WHERE name = ?1")?
        .execute(params![name, at, reason])?;
    withdraw_external(tx, name, false)?;
    super::audit::record(tx, &Source::Outcomes, name, "retired", &reason)?;
    Ok(Some(reason))
}

/// An external skill is served again (`shareable`) or no more; a new
/// sequence number either way, so every listing and cache sees the change.
/// Local skills are kept home by the sharing decision instead.
fn withdraw_external(tx: &Transaction<'_>, name: &str, shareable: bool) -> Result<(), StoreError> {
    let external: bool = tx
        .prepare_cached("SELECT kind = 'external' FROM skills WHERE name = ?1")?
        .query_row(params![name], |r| r.get(0))
        .optional()?
        .unwrap_or(false);
    if external {
        let seq = next_seq(tx)?;
        tx.prepare_cached("UPDATE skills SET shareable = ?2, seq = ?3 WHERE name = ?1")?
            .execute(params![name, shareable, seq])?;
    }
    Ok(())
}

impl Store {
    /// Counts one report for the active skill `name` and retires it when
    /// its recent outcomes cross `rule`'s line, in one transaction. A
    /// report whose id was seen before changes nothing (`duplicate`).
    /// `Ok(Err(_))`: the skill had `per_minute` reports in the last minute.
    pub fn record_outcome(
        &self,
        name: &str,
        report: &Report,
        rule: RetireRule,
        per_minute: u64,
        unix_now: i64,
    ) -> Result<Result<Recorded, TooMany>, StoreError> {
        self.write(|tx| {
            let Some((packet, _, _)) = current(tx, name)?.filter(|(p, _, _)| !p.deprecated) else {
                return Err(StoreError::NoSuchSkill(name.to_owned()));
            };
            let version: i64 =
                tx.query_row("SELECT version FROM skills WHERE name = ?1", params![name], |r| r.get(0))?;
            if let Some(id) = &report.id {
                let seen = tx
                    .prepare_cached("SELECT id, version FROM outcomes WHERE name = ?1 AND client_id = ?2")?
                    .query_row(params![name, id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
                    .optional()?;
                if let Some((id, version)) = seen {
                    let score = score_of(tx, name)?;
                    return Ok(Ok(Recorded { id, duplicate: true, version, score, retired_now: false }));
                }
            }
            let count: i64 = tx
                .prepare_cached("SELECT COUNT(*) FROM outcomes WHERE name = ?1 AND recorded_at > ?2")?
                .query_row(params![name, unix_now - 60], |r| r.get(0))?;
            let count = u64::try_from(count).unwrap_or(0);
            if count >= per_minute {
                return Ok(Err(TooMany { count }));
            }
            tx.prepare_cached(
                "INSERT INTO outcomes (name, version, outcome, note, at, recorded_at, client_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![name, version, report.outcome.label(), report.note, report.at, unix_now, report.id])?;
            let id = tx.last_insert_rowid();
            let success = report.outcome == Outcome::Success;
            tx.prepare_cached(
                "INSERT INTO skill_scores (name, uses, successes, failures, streak, streak_hash, last_used, recent_after)
                 VALUES (?1, 1, ?2, ?3, ?2, ?4, ?5, 0)
                 ON CONFLICT (name) DO UPDATE SET
                     uses = uses + 1,
                     successes = successes + ?2,
                     failures = failures + ?3,
                     streak = CASE WHEN ?2 = 0 THEN 0
                                   WHEN streak_hash = ?4 THEN streak + 1 ELSE 1 END,
                     streak_hash = ?4,
                     last_used = MAX(last_used, ?5)",
            )?
            .execute(params![name, i64::from(success), i64::from(!success), packet.integrity_hash, report.at])?;
            tx.prepare_cached(
                "DELETE FROM outcomes WHERE name = ?1 AND id <= (
                     SELECT id FROM outcomes WHERE name = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
            )?
            .execute(params![name, KEPT_PER_SKILL])?;
            // The packet now carries another count of this node's (SPEC.md §16.2).
            super::outcomes_mesh::carried_on(tx, name)?;
            let retired_now = retire_if_failing(tx, name, rule)?.is_some();
            let score = score_of(tx, name)?;
            Ok(Ok(Recorded { id, duplicate: false, version, score, retired_now }))
        })
    }

    /// Brings a retired skill back (audited); the recent outcomes start
    /// afresh, the counts stay. `reshare` is whether an external skill is
    /// served again (`[policy] reshare_external`). The change that writes
    /// it back to the skills folder; `None` when it was not retired.
    pub fn restore(&self, name: &str, reshare: bool) -> Result<Option<Change>, StoreError> {
        self.write(|tx| {
            let Some((packet, kind, _)) = current(tx, name)? else {
                return Err(StoreError::NoSuchSkill(name.to_owned()));
            };
            if !is_retired(tx, name)? {
                return Ok(None);
            }
            tx.prepare_cached(
                "UPDATE skill_scores SET retired_at = NULL, retired_reason = NULL,
                     recent_after = (SELECT COALESCE(MAX(id), 0) FROM outcomes)
                 WHERE name = ?1",
            )?
            .execute(params![name])?;
            // Served again only as the merge would serve it: re-sharing on,
            // and the packet itself shareable (its origin may have said no).
            withdraw_external(tx, name, reshare && packet.shareable && kind == SkillKind::External)?;
            super::audit::record(tx, &Source::Operator, name, "restored", "")?;
            let seq = super::current_seq(tx)?;
            Ok(Some(Change { seq, packet, kind, withheld: false }))
        })
    }

    /// The names of the retired skills.
    pub fn retired_names(&self) -> Result<HashSet<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT name FROM skill_scores WHERE retired_at IS NOT NULL")?;
        let names = stmt.query_map([], |r| r.get(0))?.collect::<Result<HashSet<_>, _>>()?;
        Ok(names)
    }

    /// The change that takes a retired skill's files out of the skills
    /// folder: its current packet, shown to the projection as removed
    /// (nothing is stored). `None` when it is not held.
    pub fn retirement_change(&self, name: &str) -> Result<Option<Change>, StoreError> {
        let conn = self.conn();
        let Some((mut packet, kind, _)) = current(&conn, name)? else { return Ok(None) };
        packet.deprecated = true;
        Ok(Some(Change { seq: super::current_seq(&conn)?, packet, kind, withheld: false }))
    }

    /// Every skill's score, by name (skills never reported have none).
    pub fn scores(&self) -> Result<HashMap<String, Score>, StoreError> {
        scores(&self.conn())
    }

    /// Total uses and successes over every skill (the update's `stats`).
    pub fn outcome_totals(&self) -> Result<(i64, i64), StoreError> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(SUM(uses), 0), COALESCE(SUM(successes), 0) FROM skill_scores",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use ecp_protocol::SkillPacket;
    use ecp_protocol::packet::Origin;

    use super::*;

    fn store_with(name: &str) -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path()).unwrap();
        let body = format!("---\nname: {name}\ndescription: d\n---\n# {name}\n\nSteps.\n");
        let packet =
            SkillPacket::new(&Origin::new("me", "me", "linux/amd64", "1"), name, "d", &body, 0.8, now());
        store.put_local(&packet, None, Source::SkillsDir).unwrap();
        (tmp, store)
    }

    fn report(outcome: Outcome) -> Report {
        Report { outcome, note: String::new(), at: now().to_string(), id: None }
    }

    const RULE: RetireRule = RetireRule { failure_rate: 0.5, min_uses: 4, window: 6 };

    #[test]
    fn retirement_waits_for_min_uses_and_looks_at_the_window_only() {
        let (_tmp, store) = store_with("s");
        let record = |o| store.record_outcome("s", &report(o), RULE, 1000, 0).unwrap().unwrap();
        // Six successes fill the window; three failures are half of it at the ninth use.
        for _ in 0..6 {
            assert!(!record(Outcome::Success).retired_now);
        }
        assert!(!record(Outcome::Failure).retired_now, "1 of 6");
        assert!(!record(Outcome::Failure).retired_now, "2 of 6");
        let third = record(Outcome::Failure);
        assert!(third.retired_now, "3 of the last 6 failed: the line");
        assert_eq!((third.score.uses, third.score.failures), (9, 3));
        // Restored: the window starts afresh, so min_uses counts again.
        store.restore("s", true).unwrap().expect("it was retired");
        let record = |o| store.record_outcome("s", &report(o), RULE, 1000, 0).unwrap().unwrap();
        for n in 1..4 {
            assert!(!record(Outcome::Failure).retired_now, "{n} uses since the restore: under min_uses");
        }
        assert!(record(Outcome::Failure).retired_now, "4 uses since the restore, all failed");
    }

    #[test]
    fn the_log_keeps_the_newest_outcomes_per_skill_and_the_counts_stay() {
        let (_tmp, store) = store_with("s");
        let off = RetireRule { min_uses: 0, ..RULE };
        for i in 0..=KEPT_PER_SKILL {
            let r = Report { id: Some(format!("r{i}")), ..report(Outcome::Success) };
            store.record_outcome("s", &r, off, u64::MAX, 0).unwrap().unwrap();
        }
        let kept: i64 = store.conn().query_row("SELECT COUNT(*) FROM outcomes", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, KEPT_PER_SKILL, "one past the limit: the oldest dropped");
        assert_eq!(store.scores().unwrap()["s"].uses, KEPT_PER_SKILL + 1);
        // A kept id is still known; the dropped one is not.
        let again = |id: &str| {
            let r = Report { id: Some(id.to_owned()), ..report(Outcome::Success) };
            store.record_outcome("s", &r, off, u64::MAX, 0).unwrap().unwrap().duplicate
        };
        assert!(again("r1"));
        assert!(!again("r0"));
    }

    #[test]
    fn the_per_minute_limit_counts_the_last_sixty_seconds() {
        let (_tmp, store) = store_with("s");
        let off = RetireRule { min_uses: 0, ..RULE };
        let at = |t: i64| store.record_outcome("s", &report(Outcome::Success), off, 2, t).unwrap();
        assert!(at(100).is_ok() && at(130).is_ok());
        assert_eq!(at(159).err(), Some(TooMany { count: 2 }));
        assert!(at(161).is_ok(), "the first has left the minute");
    }
}
