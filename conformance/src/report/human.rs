//! The text report: a header, one table per area (✔ pass, × fail, ! a
//! SHOULD or MAY not met, - skip, E error), a Failures section with the
//! requirement, the reason and the exchange, a section "Differences from
//! the reference implementation" for a Go node, the cleanup, then one
//! summary line.

use std::fmt::Write;

use super::Report;
use crate::check::{CheckResult, Level, Outcome, Profile};
use crate::cleanup::Cleanup;
use crate::reference;
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
            r.level.as_str(),
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
                r.level.as_str(),
                c.promise(report.profile),
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
    if let Some(why) = &report.reference {
        differences(&mut out, report, why);
    }
    if let Some(cleanup) = &report.cleanup {
        out.push('\n');
        out.push_str(&self::cleanup(cleanup));
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

/// The section for a target that identifies as a Go node: the reference's
/// known flaws this run saw, and the failures no known flaw explains.
fn differences(out: &mut String, report: &Report, why: &str) {
    let _ = writeln!(out, "\nDifferences from the reference implementation");
    let _ = writeln!(out, "  The target identifies as a Go reference node: {why}.");
    let seen = reference::seen(report);
    if seen.is_empty() {
        let _ = writeln!(out, "  No known flaw of the reference was seen in this run.");
    }
    for (flaw, ids) in seen {
        let _ = writeln!(out, "  - {} ({}): {}", flaw.what, flaw.source, ids.join(", "));
    }
    let other = reference::unexplained(report);
    if !other.is_empty() {
        let _ = writeln!(
            out,
            "  Failures no known flaw explains (a new flaw, or one of the target alone): {}",
            other.join(", ")
        );
    }
    if report.profile == Profile::Ecp11 {
        let _ = writeln!(out, "  More of its known flaws show under --profile ecp-1.2.");
    }
}

/// The cleanup section: what was withdrawn, what is left and why, and what
/// a client can never remove.
pub fn cleanup(c: &Cleanup) -> String {
    let mut out = String::from("Cleanup\n");
    if let Some(e) = &c.error {
        let _ = writeln!(out, "  not done: {e}");
    }
    let _ = writeln!(out, "  withdrawn by tombstone: {} skill(s) this run created", c.withdrawn.len());
    if !c.left.is_empty() {
        let _ = writeln!(out, "  still served as active: {}", c.left.len());
        for (name, why) in &c.left {
            let _ = writeln!(out, "    {name}: {}", cut(why, 120));
        }
    }
    let _ = writeln!(out, "  not removable by a client:");
    for item in crate::cleanup::NOT_REMOVABLE {
        let _ = writeln!(out, "    - {item}");
    }
    out
}

fn mark(report: &Report, r: &CheckResult) -> &'static str {
    match r.outcome {
        Outcome::Pass => "✔ pass ",
        Outcome::Skip => "- skip ",
        Outcome::Error => "E error",
        Outcome::Fail if report.counts_against(r) => "× FAIL ",
        Outcome::Fail if r.level == Level::May => "! info ",
        Outcome::Fail => "! warn ",
    }
}

/// The `--list` table: every check with its level, profile and section;
/// `[ecp-1.1: SHOULD]` marks the ecp-1.2 checks ECP/1.1 implies.
pub fn list(checks: &[&crate::check::Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let _ = writeln!(
            out,
            "{:<8} {:<6} {:<7} {:<24} {}{}",
            c.id,
            c.level.as_str(),
            c.profile.as_str(),
            c.spec,
            c.title,
            if c.level_under(Profile::Ecp11).is_some() && c.profile == Profile::Ecp12 {
                " [ecp-1.1: SHOULD]"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(out, "{} checks", checks.len());
    out
}
