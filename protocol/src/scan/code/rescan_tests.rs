//! `report`'s check of the findings a line has already, read through the
//! per-line index kept beside them (`ByLine`, session 25): it must see
//! exactly what a search of every finding saw, whoever pushed them and
//! when.

use super::*;
use crate::scan::Category;

const ID: &str = "code.normalized-command";

fn finding(rule_id: &str, line: usize, excerpt: &str) -> Finding {
    Finding {
        rule_id: rule_id.to_string(),
        category: Category::CodeInjection,
        severity: Severity::High,
        line,
        excerpt: excerpt.to_string(),
        file: None,
        message: String::new(),
    }
}

/// Line `line` (1-based) as a `LineRef`.
fn at(line: usize) -> LineRef {
    LineRef { index: line - 1, start: 0, end: 0 }
}

fn rules_on(out: &[Finding], line: usize) -> Vec<(&str, &str)> {
    out.iter().filter(|f| f.line == line).map(|f| (f.rule_id.as_str(), f.excerpt.as_str())).collect()
}

#[test]
fn a_rule_the_line_has_is_not_reported_again_and_another_lines_does_not_count() {
    let mut out = vec![finding("shell.pipe-to-shell", 3, "curl x | sh"), finding("exec.remote", 4, "x")];
    let mut seen = ByLine::default();
    let inner = [finding("shell.pipe-to-shell", 1, "curl x | sh"), finding("exec.remote", 1, "curl x")];
    report(ID, &inner, Severity::High, false, at(3), &mut out, &mut seen);
    // Line 3 had the pipe already; line 4's `exec.remote` is not line 3's.
    assert_eq!(out.len(), 3);
    assert_eq!(rules_on(&out, 3), [("shell.pipe-to-shell", "curl x | sh"), (ID, "exec.remote: curl x")]);
}

#[test]
fn an_outer_finding_naming_the_rule_counts_as_the_rule() {
    let mut out = vec![finding(ID, 2, "exec.remote: curl y")];
    let mut seen = ByLine::default();
    report(ID, &[finding("exec.remote", 1, "curl x")], Severity::High, false, at(2), &mut out, &mut seen);
    assert_eq!(out.len(), 1);
    // Under another analysis's id it does not.
    report(
        "code.decoded-payload",
        &[finding("exec.remote", 1, "z")],
        Severity::High,
        false,
        at(2),
        &mut out,
        &mut seen,
    );
    assert_eq!(out.len(), 2);
}

#[test]
fn findings_pushed_after_the_index_looked_are_seen() {
    let mut out = Vec::new();
    let mut seen = ByLine::default();
    let inner = [finding("exec.remote", 1, "curl x")];
    report(ID, &inner, Severity::High, false, at(5), &mut out, &mut seen);
    assert_eq!(out.len(), 1);
    // Another analysis pushes a finding between two reports.
    out.push(finding("shell.pipe-to-shell", 6, "curl x | sh"));
    let inner = [finding("shell.pipe-to-shell", 1, "curl x | sh")];
    report(ID, &inner, Severity::High, false, at(6), &mut out, &mut seen);
    assert_eq!(out.len(), 2, "{out:?}");
    // And what the report itself pushed counts within the same call.
    let twice = [finding("exec.remote", 1, "a"), finding("exec.remote", 2, "b")];
    report(ID, &twice, Severity::High, false, at(7), &mut out, &mut seen);
    assert_eq!(rules_on(&out, 7), [(ID, "exec.remote: a")]);
}

#[test]
fn findings_taken_away_are_forgotten() {
    let mut out = vec![finding("exec.remote", 1, "x"), finding("exec.remote", 2, "y")];
    let mut seen = ByLine::default();
    assert_eq!(seen.on(&out, 2).count(), 1);
    out.truncate(1);
    assert_eq!(seen.on(&out, 2).count(), 0);
    out.push(finding("shell.pipe-to-shell", 3, "z"));
    assert_eq!(seen.on(&out, 1).map(|f| f.excerpt.as_str()).collect::<Vec<_>>(), ["x"]);
    assert_eq!(seen.on(&out, 3).map(|f| f.excerpt.as_str()).collect::<Vec<_>>(), ["z"]);
}

#[test]
fn findings_below_the_floor_are_not_reported_and_a_warned_line_lowers_them() {
    let mut out = Vec::new();
    let mut seen = ByLine::default();
    let mut low = finding("exec.remote", 1, "x");
    low.severity = Severity::Medium;
    report(ID, &[low.clone()], Severity::High, false, at(1), &mut out, &mut seen);
    assert!(out.is_empty());
    // At the floor it is reported; warned against, as Low.
    report(ID, &[low], Severity::Medium, true, at(1), &mut out, &mut seen);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].severity, Severity::Low);
}
