//! [`Report`]: the results of one run, and its three renderings —
//! [`human`] (a table read at a glance, then the failures in detail),
//! [`json`] (one object, for CI) and [`junit`] (one testsuite per area).

use std::time::Duration;

use crate::check::{CheckResult, Level, Outcome, Profile};
use crate::cleanup::Cleanup;

pub mod human;
pub mod json;
pub mod junit;

/// The results of one run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target URL.
    pub target: String,
    /// The profile checked.
    pub profile: Profile,
    /// This run's random id (in every name the suite wrote).
    pub run_id: String,
    /// Whether SHOULD failures count for the exit code.
    pub strict: bool,
    /// One result per selected check, in run order.
    pub results: Vec<CheckResult>,
    /// How long the checks took.
    pub duration: Duration,
    /// Why the target was taken for a Go reference node, if it was
    /// ([`crate::reference::identify`]): the text report then has a section
    /// "Differences from the reference implementation".
    pub reference: Option<String>,
    /// What `--cleanup` did (`None` under `--no-cleanup`).
    pub cleanup: Option<Cleanup>,
}

/// Counts of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// Failed, errors included (the JSON report's `fail`).
    pub fail: usize,
    /// Skipped.
    pub skip: usize,
    /// Of the failures, those where the suite could not run the check.
    pub error: usize,
    /// Failed MUST checks (errors included).
    pub must_fail: usize,
    /// Failed SHOULD checks (errors included).
    pub should_fail: usize,
    /// MUST checks that ran (not skipped).
    pub must_run: usize,
}

impl Report {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            match r.outcome {
                Outcome::Pass => s.pass += 1,
                Outcome::Skip => s.skip += 1,
                Outcome::Fail | Outcome::Error => {
                    s.fail += 1;
                    if r.outcome == Outcome::Error {
                        s.error += 1;
                    }
                    match r.level {
                        Level::Must => s.must_fail += 1,
                        Level::Should => s.should_fail += 1,
                        Level::May => {}
                    }
                }
            }
            if r.level == Level::Must && r.outcome != Outcome::Skip {
                s.must_run += 1;
            }
        }
        s
    }

    /// Whether a result counts against conformance: a failed MUST, or a
    /// failed SHOULD under `--strict`. MAY checks never do.
    pub fn counts_against(&self, r: &CheckResult) -> bool {
        matches!(r.outcome, Outcome::Fail | Outcome::Error)
            && (r.level == Level::Must || (self.strict && r.level == Level::Should))
    }

    /// 0 when every MUST passed (and every SHOULD, under `--strict`), else 1.
    pub fn exit_code(&self) -> u8 {
        if self.results.iter().any(|r| self.counts_against(r)) { 1 } else { 0 }
    }
}
