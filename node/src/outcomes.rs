//! Outcomes (#19): agents report how a skill did after using it, the node
//! keeps score, its confidence in the skill follows the evidence, and a
//! skill that keeps failing is retired.
//!
//! - Reporting: `ecp-node skill outcome NAME success|failure` and `POST
//!   /v1/skills/{name}/outcomes` ([`report`]) — checked here (note, id,
//!   time), counted by the store ([`crate::store::Store::record_outcome`]),
//!   at most [`PER_MINUTE`] per skill per minute. A report with an `id`
//!   seen before is answered as before and not counted again.
//! - Score: uses, successes, failures, the success streak of the current
//!   version, last used — kept across versions; a new version (another
//!   `integrityHash`) keeps the counts, and its streak starts at 0.
//! - Confidence ([`confidence`]): a Beta update. The prior `p` (the
//!   frontmatter's confidence, or the confidence as received) counts as
//!   [`PRIOR_STRENGTH`] = k pseudo-observations, so with `s` successes and
//!   `f` failures the node's confidence is `(p·k + s) / (k + s + f)`. Ten
//!   failures take a 0.8 skill to 0.40, ten successes a 0.54 skill to 0.77.
//! - Retirement ([`crate::store::RetireRule`], `[outcomes]` in node.toml):
//!   when at least `retire_min_uses` of the last `retire_window` outcomes
//!   since the last restore are counted and the share of failures among them
//!   reaches `retire_failure_rate`, the skill is retired: its files leave
//!   the skills folder (the projection removes them; the import does not
//!   take that for the agent's deletion), it stays in the store with its
//!   versions and history, it is no longer served (a local one's peers get
//!   its withdrawal, a tombstone; an external one is withdrawn only here),
//!   and the retirement is logged and audited. [`restore`] brings it back.
//!   Nothing is deleted.
//! - Broadcast eligibility (`[sharing] eligible = "proven"`): a local skill
//!   is shared only once it has proven itself; each report decides again
//!   ([`crate::sharing`] rule 6).

use serde::{Deserialize, Serialize};

use crate::library::Library;
use crate::sharing::Eligible;
use crate::store::{Outcome, Report, RetireRule, Score, Source, StoreError};

/// Largest note in bytes.
pub const NOTE_MAX_BYTES: usize = 1024;
/// Largest report id in bytes.
pub const ID_MAX_BYTES: usize = 128;
/// Reports per skill per minute; more are refused (429).
pub const PER_MINUTE: u64 = 60;
/// The prior's weight, in pseudo-observations.
pub const PRIOR_STRENGTH: f64 = 10.0;
/// How far ahead of the node's clock `at` may be (clock skew).
const MAX_AHEAD: chrono::Duration = chrono::Duration::hours(1);

/// The node's confidence in a skill whose prior confidence is `prior`,
/// given its score: the mean of Beta(p·k + s, (1 − p)·k + f).
pub fn confidence(prior: f64, score: &Score) -> f64 {
    let prior = prior.clamp(0.0, 1.0);
    let (s, f) = (score.successes.max(0) as f64, score.failures.max(0) as f64);
    (prior * PRIOR_STRENGTH + s) / (PRIOR_STRENGTH + s + f)
}

/// The body of `POST /v1/skills/{name}/outcomes`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportBody {
    /// `"success"` or `"failure"`.
    pub outcome: String,
    /// What happened, at most [`NOTE_MAX_BYTES`].
    #[serde(default)]
    pub note: Option<String>,
    /// When the skill was used (RFC 3339); default now.
    #[serde(default)]
    pub at: Option<String>,
    /// The reporter's id for this report, so that sending it again counts once.
    #[serde(default)]
    pub id: Option<String>,
}

/// The expected shape, for error messages.
pub const BODY_SHAPE: &str =
    r#"{"outcome": "success"|"failure", "note": "<text>", "at": "<RFC 3339>", "id": "<your id>"}"#;

/// A report not counted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutcomeError {
    /// A field is wrong; `code` names which problem.
    #[error("{message}")]
    Invalid {
        /// A short stable word.
        code: &'static str,
        /// What is wrong and what to send instead.
        message: String,
    },
    /// The skill had [`PER_MINUTE`] reports in the last minute.
    #[error(
        "{name:?} had {count} outcome reports in the last minute, the most one skill takes ({PER_MINUTE}); \
         report each use once, and try again in a minute"
    )]
    TooMany {
        /// The skill.
        name: String,
        /// Reports in the last minute.
        count: u64,
    },
    /// The store failed, or the skill is not held.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn invalid(code: &'static str, message: String) -> OutcomeError {
    OutcomeError::Invalid { code, message }
}

/// What a report did (the answer of `POST /v1/skills/{name}/outcomes`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reported {
    /// The skill.
    pub skill: String,
    /// The outcome's number on this node.
    pub id: i64,
    /// The report's id was seen before: it was not counted again.
    pub duplicate: bool,
    /// The version it was counted for.
    pub version: i64,
    /// The skill's score now.
    pub score: Score,
    /// The node's confidence in the skill now.
    pub confidence: f64,
    /// This report retired the skill.
    pub retired: bool,
}

/// Checks a report's fields.
pub fn check(body: ReportBody) -> Result<Report, OutcomeError> {
    let outcome = match body.outcome.as_str() {
        "success" => Outcome::Success,
        "failure" => Outcome::Failure,
        other => {
            let shown: String = other.chars().take(40).flat_map(char::escape_default).collect();
            return Err(invalid(
                "invalid_outcome",
                format!("outcome must be \"success\" or \"failure\", not \"{shown}\""),
            ));
        }
    };
    let note = body.note.unwrap_or_default();
    if note.len() > NOTE_MAX_BYTES {
        return Err(invalid(
            "note_too_long",
            format!("the note is {} bytes; at most {NOTE_MAX_BYTES} are kept, shorten it", note.len()),
        ));
    }
    let now = chrono::Utc::now();
    let at = match body.at {
        None => now,
        Some(text) => chrono::DateTime::parse_from_rfc3339(&text)
            .map_err(|e| {
                invalid("invalid_time", format!("at must be an RFC 3339 time like 2026-01-02T03:04:05Z: {e}"))
            })?
            .with_timezone(&chrono::Utc),
    };
    if at > now + MAX_AHEAD {
        return Err(invalid(
            "invalid_time",
            "at is more than an hour ahead of this node's clock; send when the skill was used".to_owned(),
        ));
    }
    if let Some(id) = &body.id {
        let printable = id.bytes().all(|b| b.is_ascii_graphic());
        if id.is_empty() || id.len() > ID_MAX_BYTES || !printable {
            return Err(invalid(
                "invalid_id",
                format!("id must be 1 to {ID_MAX_BYTES} printable ASCII characters without spaces"),
            ));
        }
    }
    let at = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(Report { outcome, note, at, id: body.id })
}

/// Counts one report for the active skill `name` under `rule`, and
/// retires the skill when the report takes it over the line; blocking.
pub fn report(
    library: &Library,
    rule: RetireRule,
    name: &str,
    body: ReportBody,
) -> Result<Reported, OutcomeError> {
    let report = check(body)?;
    let now = crate::store::origin_limits::unix_now();
    let recorded = library
        .store()
        .record_outcome(name, &report, rule, PER_MINUTE, now)?
        .map_err(|too_many| OutcomeError::TooMany { name: name.to_owned(), count: too_many.count })?;
    if recorded.retired_now {
        retired(library, name)?;
    } else if !recorded.duplicate && library.sharing().settings().eligible != Eligible::Always {
        // A success may prove it, a failure un-prove it ([`crate::sharing`]).
        let local = library.store().skill(name)?.is_some_and(|(record, _, _)| record.kind == "local");
        if local {
            library.decide_again(name, Source::Outcomes)?;
        }
    }
    // The report changed what the skill's packet carries, and the stats (SPEC.md §16.2).
    library.announce(library.store().sequence()?);
    let prior = library.store().skill(name)?.map_or(0.0, |(record, _, _)| record.prior_confidence);
    let confidence = confidence(prior, &recorded.score);
    Ok(Reported {
        skill: name.to_owned(),
        id: recorded.id,
        duplicate: recorded.duplicate,
        version: recorded.version,
        confidence,
        retired: recorded.retired_now,
        score: recorded.score,
    })
}

/// What follows a retirement the store recorded: a local skill is kept
/// home (its withdrawal served when peers had it), and its files leave
/// the skills folder.
fn retired(library: &Library, name: &str) -> Result<(), StoreError> {
    let reason = library
        .store()
        .skill(name)?
        .and_then(|(record, _, _)| record.score.retired.map(|r| r.reason))
        .unwrap_or_default();
    tracing::warn!(skill = %name, %reason, "skill retired: removed from the skills folder and no longer shared");
    if library.store().skill(name)?.is_some_and(|(record, _, _)| record.kind == "local") {
        library.decide_again(name, Source::Outcomes)?;
    }
    if let Some(change) = library.store().retirement_change(name)? {
        library.committed(&[change]);
    }
    Ok(())
}

/// What `skill restore` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// The skill.
    pub skill: String,
    /// False when it was not retired (nothing changed).
    pub restored: bool,
}

/// `ecp-node skill restore NAME`: brings a retired skill back — into the
/// skills folder, and shared again as it was before (`reshare`: `[policy]
/// reshare_external`, for an external skill); blocking.
pub fn restore(library: &Library, reshare: bool, name: &str) -> Result<Restored, StoreError> {
    let Some(change) = library.store().restore(name, reshare)? else {
        if library.store().skill(name)?.is_none() {
            return Err(StoreError::NoSuchSkill(name.to_owned()));
        }
        return Ok(Restored { skill: name.to_owned(), restored: false });
    };
    let local = change.kind == ecp_protocol::SkillKind::Local;
    if local && !change.packet.deprecated {
        library.decide_again(name, Source::Operator)?;
    }
    if !change.packet.deprecated {
        library.committed(&[change]);
    }
    tracing::info!(skill = %name, "skill restored: back in the skills folder");
    Ok(Restored { skill: name.to_owned(), restored: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(successes: i64, failures: i64) -> Score {
        Score { uses: successes + failures, successes, failures, ..Score::default() }
    }

    #[test]
    fn confidence_follows_the_evidence_past_the_accept_threshold() {
        let threshold = ecp_protocol::policy::DEFAULT_MIN_CONFIDENCE;
        assert_eq!(confidence(0.8, &Score::default()), 0.8);
        let failed = confidence(0.8, &score(0, 10));
        assert!((failed - 0.4).abs() < 1e-9 && failed < threshold - 0.1, "{failed}");
        let proven = confidence(0.54, &score(10, 0));
        assert!((proven - 0.77).abs() < 1e-9 && proven > threshold, "{proven}");
        // One fewer: still below the threshold, so the tenth is what takes it over.
        assert!(confidence(0.54, &score(1, 0)) < threshold);
    }

    fn body(outcome: &str) -> ReportBody {
        ReportBody { outcome: outcome.into(), note: None, at: None, id: None }
    }

    #[test]
    fn bad_reports_are_refused_naming_the_problem() {
        let code = |b: ReportBody| match check(b) {
            Err(OutcomeError::Invalid { code, .. }) => code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code(body("maybe")), "invalid_outcome");
        let at_limit = ReportBody { note: Some("n".repeat(NOTE_MAX_BYTES)), ..body("success") };
        assert_eq!(check(at_limit).unwrap().note.len(), NOTE_MAX_BYTES);
        assert_eq!(
            code(ReportBody { note: Some("n".repeat(NOTE_MAX_BYTES + 1)), ..body("success") }),
            "note_too_long"
        );
        assert_eq!(code(ReportBody { at: Some("yesterday".into()), ..body("failure") }), "invalid_time");
        let ahead = (chrono::Utc::now() + chrono::Duration::hours(2)).to_rfc3339();
        assert_eq!(code(ReportBody { at: Some(ahead), ..body("failure") }), "invalid_time");
        assert!(check(ReportBody { id: Some("i".repeat(ID_MAX_BYTES)), ..body("success") }).is_ok());
        assert_eq!(
            code(ReportBody { id: Some("i".repeat(ID_MAX_BYTES + 1)), ..body("success") }),
            "invalid_id"
        );
        assert_eq!(code(ReportBody { id: Some("has space".into()), ..body("success") }), "invalid_id");
        assert_eq!(code(ReportBody { id: Some(String::new()), ..body("success") }), "invalid_id");
    }
}
