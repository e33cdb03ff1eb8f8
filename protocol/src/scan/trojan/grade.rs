//! The grade of each run on one line of a body: what grades them all
//! alike, found once for the line.

use super::UNATTENDED;
use crate::scan::{Finding, Severity};

/// What grades every run of one line alike, found once for the line, and
/// where its flags are: a line of thousands of runs must not read itself
/// once per run (it cost 5 s for a 64 KiB line before).
#[derive(Default)]
pub(super) struct LineGrade {
    /// Privileged, handed secrets, hidden, vouched for or detached.
    pub(super) whole: Option<bool>,
    /// Whether a run's files are fetched from an unknown host above.
    pub(super) fetched: Option<bool>,
    /// No [`UNATTENDED`] flag starts at or after this byte.
    no_flags_from: Option<usize>,
    /// One starts here.
    flag_at: Option<usize>,
    /// The most severe companion finding pushed for the line:
    /// `engine::sorted` keeps only the first of the most severe, so a run
    /// that cannot be more severe is not judged.
    pushed: Option<Severity>,
}

impl LineGrade {
    /// Whether an [`UNATTENDED`] flag follows byte `at` of `line`: a flag
    /// found stands for every run before it, its absence for every run
    /// after, so that runs read in order search the line about once.
    pub(super) fn flags_after(&mut self, line: &str, at: usize) -> bool {
        if self.no_flags_from.is_some_and(|from| at >= from) {
            return false;
        }
        if self.flag_at.is_some_and(|flag| at <= flag) {
            return true;
        }
        let b = &line.as_bytes()[at..];
        // The pattern starts with a blank and has no look-behind: a match
        // in the rest of the line is one of the line.
        match memchr::memchr2(b'-', b'/', b).and_then(|_| UNATTENDED.find(b)) {
            Some(m) => {
                self.flag_at = Some(at + m.start());
                true
            }
            None => {
                self.no_flags_from = Some(at);
                false
            }
        }
    }

    /// Whether a finding of `severity` would be kept beside those pushed.
    pub(super) fn keeps(&self, severity: Severity) -> bool {
        self.pushed.is_none_or(|p| severity > p)
    }

    pub(super) fn push(&mut self, f: Finding, out: &mut Vec<Finding>) {
        self.pushed = Some(self.pushed.map_or(f.severity, |p| p.max(f.severity)));
        out.push(f);
    }
}
