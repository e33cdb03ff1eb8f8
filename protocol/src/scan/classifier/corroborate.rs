//! A rule's finding corroborated by the second stage: the one place where
//! the classifier's score takes part in a refusal, and then only beside a
//! rule's finding, never in place of one.
//!
//! A finding below the refusing threshold says the rules saw something
//! suspicious but not enough to refuse (a consent waived in passing, a
//! companion script run unseen, a credential read in a setup step, a
//! `sudo`); the classifier says how much the whole text reads like the
//! malicious skills it was trained on. Either alone is wrong too often to
//! refuse a skill; both together are not: a skill whose rules found
//! something at [`CORROBORATES_BESIDE`] or worse (and nothing that refuses
//! it already) and whose score is at or above [`CORROBORATES_AT`] gets
//! `classifier.corroborated`, at [`SEVERITY`], on the line of the first of
//! its worst findings, which stays in the report beside it and which the
//! refusal names — when the score read at least [`MIN_WORDS`] word
//! features (session 29: a shorter body's score swings from one training
//! to the next, and no skill trained on is that short). A score alone still adds only `classifier.suspicious`,
//! at `Low`; a finding alone keeps its severity.
//!
//! The policy (the least severity and the score) is chosen by the
//! training (`train_scan_model`) on the TRAIN split's out-of-fold scores:
//! per least severity, the lowest score that refuses at most 1 % of its
//! benign skills; then the severity whose row refuses the most malicious
//! skills with their refusing findings taken away, within 3 % of the
//! TRAIN half's benign skills refused in all (out of fold; until session
//! 27 every benign skill, by the final model). [`beside`] is what both
//! the scanner and the training ask.
//!
//! Measured 2026-11-27 (session 27, seven writers, the purpose read; the
//! corpus test's splits, `findings.txt`, HELD left out), beside `Low` at
//! 685: a corroboration refuses 42 malicious skills of TRAIN (34 beside a
//! `Medium` finding, 8 beside a `Low` one; in sample, as the model was
//! trained on them; none of `x-*` or `older`) and no benign skill of the
//! TRAIN half. Of every benign skill, it refuses 6 beyond the rules' 93
//! (99 of 1678, 5.9 %), all of the other half, which the model never
//! read. The honest figures, which the policy is chosen on: out of fold,
//! 7 of the TRAIN half's 799 benign skills corroborated; leave one writer
//! out, 21 of the seven writers' 591 malicious skills refused beyond the
//! rules, and 3 of their 480 benign (session 25's paragraph: 27 of TRAIN,
//! one benign kiosk setup, at 661/685 before the writers of sessions 25
//! and 26 joined).

use super::{CORROBORATES_AT, CORROBORATES_BESIDE, MIN_WORDS};
use crate::scan::rule::EXCERPT_CHARS;
use crate::scan::{Finding, Severity};

/// Severity of `classifier.corroborated`: what a node refuses at by
/// default (`DEFAULT_CORROBORATES_AT`).
pub(crate) const SEVERITY: Severity = Severity::High;

/// The rule's finding a score of `score` corroborates under the policy
/// "`at` or above, beside a finding of `least` or worse": the first of the
/// worst severity the rules found, when that is at least `least` and
/// below [`SEVERITY`] (a skill refused already needs nothing more), and
/// `None` otherwise. The training measures every policy with it.
#[doc(hidden)]
pub fn beside(score: u16, findings: &[Finding], at: u16, least: Severity) -> Option<&Finding> {
    if score < at || findings.iter().any(|f| f.severity >= SEVERITY) {
        return None;
    }
    let mut rules = findings.iter().filter(|f| !f.rule_id.starts_with("classifier."));
    let worst = rules.clone().map(|f| f.severity).max().filter(|&s| s >= least)?;
    rules.find(|f| f.severity == worst)
}

/// The finding that refuses a skill whose rules found something at
/// [`CORROBORATES_BESIDE`] or worse, nothing at [`SEVERITY`] or above, and
/// whose `score` is at or above [`CORROBORATES_AT`]; `None` otherwise.
/// `findings` are the rules' findings.
pub(crate) fn corroborated(score: u16, findings: &[Finding]) -> Option<Finding> {
    let rule = beside(score, findings, CORROBORATES_AT, CORROBORATES_BESIDE)?;
    let severity = format!("{:?}", rule.severity).to_lowercase();
    Some(Finding {
        rule_id: "classifier.corroborated".to_string(),
        category: rule.category,
        severity: SEVERITY,
        line: rule.line,
        // The finding's own line is the rule's: the excerpt names the rule
        // only, cut to an excerpt's length as every other is.
        excerpt: format!("score {score}/1000 (corroborates at {CORROBORATES_AT}) beside {}", rule.rule_id)
            .chars()
            .take(EXCERPT_CHARS)
            .collect(),
        message: format!(
            "corroborated: the rules found {} ({severity}) and the second stage scores the skill as reading like \
             the malicious skills it was trained on; together they refuse it, as neither would alone",
            rule.rule_id
        ),
        file: rule.file.clone(),
    })
}

/// [`corroborated`] for a score that read `words` word features: `None`
/// below [`MIN_WORDS`], however high the score, as a short body's score
/// swings from one training to the next.
pub(crate) fn corroborated_read(score: u16, words: usize, findings: &[Finding]) -> Option<Finding> {
    if words < MIN_WORDS {
        return None;
    }
    corroborated(score, findings)
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
    fn a_finding_at_the_policy_is_corroborated_at_the_threshold_and_not_one_below() {
        let findings = [finding("conceal.x", Severity::Info, 2), finding("prompt.y", CORROBORATES_BESIDE, 7)];
        assert!(corroborated(CORROBORATES_AT - 1, &findings).is_none());
        let f = corroborated(CORROBORATES_AT, &findings).expect("corroborated at the threshold");
        assert_eq!((f.rule_id.as_str(), f.severity, f.line), ("classifier.corroborated", Severity::High, 7));
        let named = format!("prompt.y ({})", format!("{CORROBORATES_BESIDE:?}").to_lowercase());
        assert!(f.excerpt.contains("prompt.y") && f.message.contains(&named), "{f:?}");
        assert_eq!(f.category, Category::PromptInjection);
    }

    #[test]
    fn the_excerpt_stays_an_excerpts_length_whatever_the_rule_it_stands_beside() {
        // `supply.skill-name-lookalike` made it 81 characters long with its line.
        let named =
            corroborated(999, &[finding("supply.skill-name-lookalike", Severity::Medium, 2)]).unwrap();
        assert_eq!(
            named.excerpt,
            format!("score 999/1000 (corroborates at {CORROBORATES_AT}) beside supply.skill-name-lookalike")
        );
        let id = "r".repeat(EXCERPT_CHARS);
        let long = corroborated(999, &[finding(&id, Severity::Medium, 2)]).unwrap();
        assert_eq!(long.excerpt.chars().count(), EXCERPT_CHARS, "{long:?}");
        let fits = "r".repeat(
            EXCERPT_CHARS - format!("score 999/1000 (corroborates at {CORROBORATES_AT}) beside ").len(),
        );
        let whole = corroborated(999, &[finding(&fits, Severity::Medium, 2)]).unwrap();
        assert!(whole.excerpt.ends_with(&fits), "a rule id that fits is kept whole: {whole:?}");
    }

    #[test]
    fn the_policy_is_a_low_finding_and_one_below_it_is_never_corroborated() {
        assert_eq!(CORROBORATES_BESIDE, Severity::Low);
        let low = [finding("priv.sudo", Severity::Low, 3)];
        assert!(corroborated(CORROBORATES_AT, &low).is_some());
        assert!(corroborated(1000, &[finding("perm.hooks", Severity::Info, 2)]).is_none());
    }

    #[test]
    fn beside_takes_the_worst_finding_at_least_the_policy() {
        let findings = [
            finding("priv.sudo", Severity::Low, 2),
            finding("trojan.a", Severity::Medium, 5),
            finding("trojan.b", Severity::Medium, 9),
        ];
        let f = beside(500, &findings, 500, Severity::Low).expect("at the score");
        assert_eq!(f.rule_id, "trojan.a", "the first of the worst");
        assert!(beside(499, &findings, 500, Severity::Low).is_none(), "one below the score");
        assert_eq!(beside(500, &findings, 500, Severity::Medium).map(|f| f.line), Some(5));
        // The worst is one below the least severity asked: nothing.
        let low = [finding("priv.sudo", Severity::Low, 2)];
        assert!(beside(1000, &low, 500, Severity::Medium).is_none());
        assert!(beside(1000, &low, 500, Severity::Low).is_some());
        let info = [finding("perm.hooks", Severity::Info, 1)];
        assert!(beside(1000, &info, 500, Severity::Low).is_none());
        assert!(beside(1000, &info, 500, Severity::Info).is_some());
    }

    #[test]
    fn a_score_corroborates_from_min_words_read_and_not_one_below() {
        let findings = [finding("priv.sudo", CORROBORATES_BESIDE, 3)];
        assert!(corroborated_read(1000, MIN_WORDS - 1, &findings).is_none());
        assert!(corroborated_read(1000, 0, &findings).is_none());
        let f = corroborated_read(CORROBORATES_AT, MIN_WORDS, &findings).expect("at the floor");
        assert_eq!(f, corroborated(CORROBORATES_AT, &findings).unwrap());
        assert!(corroborated_read(CORROBORATES_AT - 1, MIN_WORDS, &findings).is_none());
    }

    #[test]
    fn a_score_alone_or_its_own_finding_is_never_corroborated() {
        assert!(corroborated(1000, &[]).is_none());
        assert!(corroborated(1000, &[finding("classifier.suspicious", Severity::Medium, 1)]).is_none());
        assert!(
            beside(1000, &[finding("classifier.suspicious", Severity::Low, 1)], 0, Severity::Info).is_none()
        );
    }

    #[test]
    fn a_skill_refused_already_gets_nothing_more() {
        let findings = [finding("prompt.y", Severity::Medium, 3), finding("exec.z", Severity::High, 9)];
        assert!(corroborated(1000, &findings).is_none());
        let critical = [finding("prompt.y", Severity::Medium, 3), finding("exec.z", Severity::Critical, 9)];
        assert!(corroborated(1000, &critical).is_none());
    }

    #[test]
    fn the_first_worst_finding_is_named_and_a_bundle_file_kept() {
        let mut second = finding("trojan.b", Severity::Medium, 9);
        second.file = Some("scripts/b.sh".into());
        let mut first = finding("trojan.a", Severity::Medium, 4);
        first.file = Some("scripts/a.sh".into());
        let f = corroborated(CORROBORATES_AT, &[finding("priv.sudo", Severity::Low, 1), first, second])
            .expect("corroborated");
        assert_eq!((f.line, f.file.as_deref()), (4, Some("scripts/a.sh")));
    }
}
