//! The decision log: one line for every packet the node accepts or refuses —
//! pushed to it, pulled from a peer, or imported from the agent's skills
//! folder — in one format, so an operator reads what the node decided and
//! why without opening the audit log.
//!
//! Every line has the fields `skill`, `origin`, `sender` (the instance the
//! update names; `skills-folder` for the agent's folder), `peer` (who the
//! node verified sent it: `peer:<url>` or `addr:<ip>`; `local` for the
//! folder), `decision` (`new`, `updated`, `withdrawn`, `refused`,
//! `held-back`), `stage` (the merge stage that refused the packet, `merge`
//! or `import` for what was accepted, `origin-limit` or `sender-limit` for
//! what a limit held back) and `reason` (for an accepted packet, its
//! warnings too: `; warning: …`). Refusals by the safety scan, and
//! imports the scan flags, are WARN lines with the top finding (`rule`,
//! `severity`, `line`); the others are INFO.
//!
//! Decisions are collected while they are made ([`Decisions::push`]) and
//! logged once they are committed ([`Decisions::log`]): a transaction that
//! rolls back logs nothing. Of one update, the first [`LINES_PER_UPDATE`]
//! are logged one by one and the rest in one summary line with their
//! counts per decision and stage, so a flood does not drown the log.
//!
//! What comes from peers is quoted: control characters are escaped and
//! long texts cut, so a hostile skill name cannot forge log lines. No line
//! holds a secret (a finding's excerpt is not logged) or a local path.

use std::collections::BTreeMap;
use std::fmt;

use ecp_protocol::scan::{Finding, Severity};

/// Decisions of one update logged one by one; the rest are summarised.
pub const LINES_PER_UPDATE: usize = 100;

/// Longest text of a peer's logged as it is (characters); longer is cut.
const MAX_FIELD_CHARS: usize = 400;

/// What was decided about a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Installed under a name not held before.
    New,
    /// Replaced the version held.
    Updated,
    /// A tombstone that withdrew the skill held.
    Withdrawn,
    /// Refused (and quarantined).
    Refused,
    /// Not installed now: over a limit, fetched again later.
    HeldBack,
}

impl Verdict {
    /// The word the log's `decision` field holds.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::New => "new",
            Verdict::Updated => "updated",
            Verdict::Withdrawn => "withdrawn",
            Verdict::Refused => "refused",
            Verdict::HeldBack => "held-back",
        }
    }
}

/// One decision about one packet, as the log says it.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The skill's name (`*` for a line about several packets).
    pub skill: String,
    /// Its `originInstance`.
    pub origin: String,
    /// The instance the update names (`skills-folder` for the agent's folder).
    pub sender: String,
    /// Who the node verified sent it (`peer:<url>`, `addr:<ip>`, `local`).
    pub peer: String,
    /// What was decided.
    pub verdict: Verdict,
    /// Where: the refusing stage, `merge`, `import`, or the limit.
    pub stage: &'static str,
    /// Why, in one line.
    pub reason: String,
    /// The scan's top finding, for a refusal by the scan or a flagged import.
    pub finding: Option<Finding>,
}

impl Decision {
    /// Logs this decision: one WARN line when the scan found something
    /// worth refusing for, one INFO line otherwise. The one function every
    /// decision line goes through.
    pub fn log(&self) {
        let (skill, origin, sender, peer, reason) = (
            quote(&self.skill),
            quote(&self.origin),
            quote(&self.sender),
            quote(&self.peer),
            quote(&self.reason),
        );
        let (decision, stage) = (self.verdict.name(), self.stage);
        match &self.finding {
            Some(f) => tracing::warn!(
                %skill, %origin, %sender, %peer, %decision, %stage, %reason,
                rule = %f.rule_id, severity = %format!("{:?}", f.severity).to_ascii_lowercase(), line = f.line,
                "{}", self.message()
            ),
            None => {
                tracing::info!(%skill, %origin, %sender, %peer, %decision, %stage, %reason, "{}", self.message())
            }
        }
    }

    fn message(&self) -> &'static str {
        match (self.verdict, self.stage) {
            (Verdict::Refused, _) => "skill refused",
            (Verdict::HeldBack, _) => "skills held back",
            (_, "import") if self.finding.is_some() => {
                "skill imported from the skills folder, but the safety scan flags it: peers will refuse it \
                 (see `ecp-node skill scan`)"
            }
            (_, "import") => "skill imported from the skills folder",
            _ => "skill accepted",
        }
    }
}

/// The finding that stands for a scan's result: the first of the most
/// severe at or above `threshold`; none below it.
pub fn top_finding(findings: &[Finding], threshold: Severity) -> Option<&Finding> {
    let worst = findings.iter().filter(|f| f.severity >= threshold).map(|f| f.severity).max()?;
    findings.iter().find(|f| f.severity == worst)
}

/// The decisions of one update (or one import run), logged once committed.
#[derive(Debug, Default)]
pub struct Decisions {
    made: Vec<Decision>,
}

impl Decisions {
    /// Adds a decision, to be logged by [`Decisions::log`].
    pub fn push(&mut self, decision: Decision) {
        self.made.push(decision);
    }

    /// Logs the decisions: the first [`LINES_PER_UPDATE`] one by one, then
    /// one summary line counting the rest per decision and stage (WARN when
    /// the scan refused any of them). Every decision the node makes about a
    /// packet passes through here once, after it is committed.
    pub fn log(self) {
        let mut rest: BTreeMap<(Verdict, &'static str), u64> = BTreeMap::new();
        let mut flagged = false;
        for (i, decision) in self.made.iter().enumerate() {
            if i < LINES_PER_UPDATE {
                decision.log();
            } else {
                *rest.entry((decision.verdict, decision.stage)).or_default() += 1;
                flagged |= decision.finding.is_some();
            }
        }
        if rest.is_empty() {
            return;
        }
        let total: u64 = rest.values().sum();
        let counts: Vec<String> =
            rest.iter().map(|((verdict, stage), n)| format!("{} at {stage}: {n}", verdict.name())).collect();
        let counts = counts.join(", ");
        let message = "more decisions of the same update, counted not listed (`ecp-node quarantine list` and the \
                       audit log have each)";
        if flagged {
            tracing::warn!(more = total, %counts, "{message}");
        } else {
            tracing::info!(more = total, %counts, "{message}");
        }
    }
}

/// `text` safe to log: control characters escaped, at most
/// [`MAX_FIELD_CHARS`] characters.
fn quote(text: &str) -> Quoted<'_> {
    Quoted(text)
}

struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(MAX_FIELD_CHARS) {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        if chars.next().is_some() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(quote("a\nb\u{1b}[31m").to_string(), "a\\nb\\u{1b}[31m");
        let long = "x".repeat(MAX_FIELD_CHARS + 1);
        assert_eq!(quote(&long).to_string(), format!("{}…", "x".repeat(MAX_FIELD_CHARS)));
        let exact = "x".repeat(MAX_FIELD_CHARS);
        assert_eq!(quote(&exact).to_string(), exact);
    }
}
