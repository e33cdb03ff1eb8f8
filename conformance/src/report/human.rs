//! The text report: a header, one table per area (✔ pass, × fail, ! a
//! SHOULD or MAY not met, - skip, E error), a Failures section with the
//! requirement, the reason and the exchange, then one summary line.

use std::fmt::Write;

use super::Report;
use crate::check::{CheckResult, Level, Outcome};
use crate::target::cut;

/// Renders `report` as text.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ecp-conformance {} · target {} · profile {} · run {} (writes skills named ecpconf-{}-*)",
        crate::SUITE_VERSION,
        report.target,
        report.profile.as_str(),
        report.run_id,
        report.run_id
    );
    let mut area = "";
    for r in &report.results {
        if r.check.area() != area {
            area = r.check.area();
            let _ = writeln!(out, "\n{area}");
        }
        let _ = writeln!(
            out,
            "  {} {:<8} {:<6} {:<60} {}",
            mark(report, r),
            r.check.id,
            r.check.level.as_str(),
            cut(r.check.title, 60),
            cut(&r.reason, 70)
        );
    }
    let failures: Vec<&CheckResult> =
        report.results.iter().filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error)).collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "\nFailures");
        for r in failures {
            let c = r.check;
            let _ = writeln!(
                out,
                "\n  {} {} {} {} — {}",
                c.id,
                c.level.as_str(),
                c.profile.as_str(),
                c.spec,
                c.title
            );
            let _ = writeln!(out, "    requirement: {}", c.requirement);
            let label = if r.outcome == Outcome::Error { "error" } else { "reason" };
            let _ = writeln!(out, "    {label}: {}", r.reason);
            for line in &r.evidence {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    let s = report.summary();
    let _ = writeln!(
        out,
        "\n{} checks, {} passed, {} failed ({} MUST, {} SHOULD, {} errors), {} skipped; MUST {}/{} passed; {:.1} s; exit {}",
        report.results.len(),
        s.pass,
        s.fail,
        s.must_fail,
        s.should_fail,
        s.error,
        s.skip,
        s.must_run - s.must_fail,
        s.must_run,
        report.duration.as_secs_f64(),
        report.exit_code()
    );
    out
}

fn mark(report: &Report, r: &CheckResult) -> &'static str {
    match r.outcome {
        Outcome::Pass => "✔ pass ",
        Outcome::Skip => "- skip ",
        Outcome::Error => "E error",
        Outcome::Fail if report.counts_against(r) => "× FAIL ",
        Outcome::Fail if r.check.level == Level::May => "! info ",
        Outcome::Fail => "! warn ",
    }
}

/// The `--list` table: every check with its level, profile and section.
pub fn list(checks: &[&crate::check::Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let _ = writeln!(
            out,
            "{:<8} {:<6} {:<7} {:<24} {}",
            c.id,
            c.level.as_str(),
            c.profile.as_str(),
            c.spec,
            c.title
        );
    }
    let _ = writeln!(out, "{} checks", checks.len());
    out
}
