//! Assertions and helpers shared by the rule families' unit tests.

use super::{Category, DEFAULT_THRESHOLD, Finding, Scanner, Severity};

/// The rules' findings as the rules made them: a rule's test asserts its
/// rule's severity, not what the refusal policy (`classifier::policy`)
/// makes of it beside the rest of a body; the policy has its own tests.
fn report(body: &str) -> Vec<Finding> {
    Scanner::standard().scan_unrefined(body).findings
}

/// The severities of `id`'s findings on 1-based `line`.
pub(crate) fn on_line(body: &str, id: &str, line: usize) -> Vec<Severity> {
    report(body).into_iter().filter(|f| f.rule_id == id && f.line == line).map(|f| f.severity).collect()
}

/// `code` as a skill's setup step: a bash block whose first line is the
/// body's line 4.
pub(crate) fn bash(code: &str) -> String {
    format!("# Setup\n\n```bash\n{code}\n```\n")
}

/// The body has a finding of `id` with this category, severity and
/// 1-based line; returns it.
#[track_caller]
pub(crate) fn assert_hit(
    body: &str,
    id: &str,
    category: Category,
    severity: Severity,
    line: usize,
) -> Finding {
    let all = report(body);
    match all.iter().find(|f| f.rule_id == id) {
        Some(f) => {
            assert_eq!(
                (f.category, f.severity, f.line),
                (category, severity, line),
                "{id} in {body:?}: {all:#?}"
            );
            f.clone()
        }
        None => panic!("no {id} in {body:?}; found {all:#?}"),
    }
}

/// The body's worst finding of `id` has this severity.
#[track_caller]
pub(crate) fn assert_severity(body: &str, id: &str, severity: Severity) {
    let all = report(body);
    let worst = all.iter().filter(|f| f.rule_id == id).map(|f| f.severity).max();
    assert_eq!(worst, Some(severity), "{id} in {body:?}: {all:#?}");
}

/// The body has no finding of `id`.
#[track_caller]
pub(crate) fn assert_absent(body: &str, id: &str) {
    let all = report(body);
    assert!(all.iter().all(|f| f.rule_id != id), "unexpected {id} in {body:?}: {all:#?}");
}

/// Nothing in the body reaches the default threshold.
#[track_caller]
pub(crate) fn assert_not_flagged(body: &str) {
    let all = report(body);
    assert!(all.iter().all(|f| f.severity < DEFAULT_THRESHOLD), "blocked {body:?}: {all:#?}");
    let scanned = Scanner::standard().scan(body);
    assert!(!scanned.is_blocked(DEFAULT_THRESHOLD), "blocked {body:?}: {:#?}", scanned.findings);
}
