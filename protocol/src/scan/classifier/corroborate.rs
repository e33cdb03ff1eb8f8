//! A rule's `Medium` finding corroborated by the second stage: the one
//! place where the classifier's score takes part in a refusal, and then
//! only beside a rule's finding, never in place of one.
//!
//! A `Medium` finding says the rules saw something suspicious but not
//! enough to refuse (a consent waived in passing, a companion script run
//! unseen, a credential read in a setup step); the classifier says how
//! much the whole text reads like the malicious skills it was trained on.
//! Either alone is wrong too often to refuse a skill; both together are
//! not: a skill whose rules found something `Medium` (and nothing that
//! refuses it already) and whose score is at or above [`CORROBORATES_AT`] gets
//! `classifier.corroborated`, at [`SEVERITY`], on the line of its first
//! `Medium` finding, which stays in the report beside it. A score alone
//! still adds only `classifier.suspicious`, at `Low`; a `Medium` finding
//! alone stays `Medium`.
//!
//! [`CORROBORATES_AT`] is chosen by the training (`train_scan_model`) on
//! the TRAIN split's out-of-fold scores, for at most 1 % of its benign
//! skills; `classifier.suspicious`'s threshold allows 3 %.

use super::CORROBORATES_AT;
use crate::scan::{Finding, Severity};

/// Severity of `classifier.corroborated`: what a node refuses at by
/// default (`DEFAULT_CORROBORATES_AT`).
pub(crate) const SEVERITY: Severity = Severity::High;

/// The finding that refuses a skill whose rules found something `Medium`,
/// nothing at [`SEVERITY`] or above, and whose `score` is at or above
/// [`CORROBORATES_AT`]; `None` otherwise. `findings` are the rules' findings.
pub(crate) fn corroborated(score: u16, findings: &[Finding]) -> Option<Finding> {
    if score < CORROBORATES_AT || findings.iter().any(|f| f.severity >= SEVERITY) {
        return None;
    }
    let medium =
        findings.iter().find(|f| f.severity == Severity::Medium && !f.rule_id.starts_with("classifier."))?;
    Some(Finding {
        rule_id: "classifier.corroborated".to_string(),
        category: medium.category,
        severity: SEVERITY,
        line: medium.line,
        excerpt: format!(
            "score {score}/1000 (corroborates at {CORROBORATES_AT}) beside {} on line {}",
            medium.rule_id, medium.line
        ),
        message: format!(
            "corroborated: the rules found {} (medium) and the second stage scores the skill as reading like \
             the malicious skills it was trained on; together they refuse it, as neither would alone",
            medium.rule_id
        ),
        file: medium.file.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Category;

    fn finding(rule_id: &str, severity: Severity, line: usize) -> Finding {
        Finding {
            rule_id: rule_id.to_string(),
            category: Category::PromptInjection,
            severity,
            line,
            excerpt: String::new(),
            message: String::new(),
            file: None,
        }
    }

    #[test]
    fn a_medium_finding_is_corroborated_at_the_threshold_and_not_one_below() {
        let findings = [finding("conceal.x", Severity::Low, 2), finding("prompt.y", Severity::Medium, 7)];
        assert!(corroborated(CORROBORATES_AT - 1, &findings).is_none());
        let f = corroborated(CORROBORATES_AT, &findings).expect("corroborated at the threshold");
        assert_eq!((f.rule_id.as_str(), f.severity, f.line), ("classifier.corroborated", Severity::High, 7));
        assert!(f.excerpt.contains("prompt.y") && f.message.contains("prompt.y (medium)"), "{f:?}");
        assert_eq!(f.category, Category::PromptInjection);
    }

    #[test]
    fn a_score_alone_a_low_finding_or_its_own_finding_is_never_corroborated() {
        assert!(corroborated(1000, &[]).is_none());
        assert!(corroborated(1000, &[finding("conceal.x", Severity::Low, 2)]).is_none());
        assert!(corroborated(1000, &[finding("classifier.suspicious", Severity::Medium, 1)]).is_none());
    }

    #[test]
    fn a_skill_refused_already_gets_nothing_more() {
        let findings = [finding("prompt.y", Severity::Medium, 3), finding("exec.z", Severity::High, 9)];
        assert!(corroborated(1000, &findings).is_none());
        let critical = [finding("prompt.y", Severity::Medium, 3), finding("exec.z", Severity::Critical, 9)];
        assert!(corroborated(1000, &critical).is_none());
    }

    #[test]
    fn the_first_medium_finding_is_named_and_a_bundle_file_kept() {
        let mut second = finding("trojan.b", Severity::Medium, 9);
        second.file = Some("scripts/b.sh".into());
        let mut first = finding("trojan.a", Severity::Medium, 4);
        first.file = Some("scripts/a.sh".into());
        let f = corroborated(CORROBORATES_AT, &[first, second]).expect("corroborated");
        assert_eq!((f.line, f.file.as_deref()), (4, Some("scripts/a.sh")));
    }
}
