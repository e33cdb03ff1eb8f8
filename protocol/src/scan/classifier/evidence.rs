//! What the rules saw but did not refuse, as features of the second stage.
//!
//! Words say how a skill is phrased; the rules' findings say what it does,
//! in terms that carry over from one phrasing to the next (a credential
//! file read, a consent waived, a companion script run unseen). Every
//! finding below [`DEFAULT_THRESHOLD`] adds up to five features: its rule
//! id, with and without its severity, its family (the id's prefix) and its
//! category, each with its severity; and the body adds one more, the worst
//! severity found below the threshold (or none). A finding at or above the
//! threshold refuses the skill whatever the score says, so it is left out:
//! the model learns from what the rules only half saw, which is all it
//! has to go on when the rules refuse nothing. The classifier's own
//! findings are never features.
//!
//! The features are buckets in `0..EVIDENCE_BUCKETS`, weighted `1` each
//! (not `1/√n` as words are: one finding is one piece of evidence however
//! long the body is), and pure: the same findings give the same buckets.

use super::{MIX, finish, word};
use crate::scan::{DEFAULT_THRESHOLD, Finding, Severity};

/// Buckets of the evidence features, after the words' in the weights.
pub const EVIDENCE_BUCKETS: usize = 1 << 10;

/// Whether `f` is evidence: a rule's finding the threshold does not refuse.
pub(super) fn counts(f: &Finding) -> bool {
    f.severity < DEFAULT_THRESHOLD && !f.rule_id.starts_with("classifier.")
}

/// Kinds of evidence feature: apart from each other whatever the text.
const RULE: u64 = 1;
const RULE_AT: u64 = 2;
const FAMILY_AT: u64 = 3;
const CATEGORY_AT: u64 = 4;
const WORST: u64 = 5;

fn severity_code(s: Option<Severity>) -> u64 {
    match s {
        None => 0,
        Some(Severity::Info) => 1,
        Some(Severity::Low) => 2,
        Some(Severity::Medium) => 3,
        Some(Severity::High) => 4,
        Some(Severity::Critical) => 5,
    }
}

/// The bucket of a feature of kind `kind` over the hash `h`.
fn bucket(kind: u64, h: u64, severity: Option<Severity>) -> u32 {
    let mixed = finish(h ^ (kind << 56) ^ (severity_code(severity) << 48).wrapping_mul(MIX));
    (mixed >> (64 - EVIDENCE_BUCKETS.trailing_zeros())) as u32
}

/// Calls `each` once per evidence bucket of `findings`, in the order first
/// seen.
#[inline(never)]
pub(super) fn for_each(findings: &[Finding], mut each: impl FnMut(u32)) {
    let mut seen = [0u64; EVIDENCE_BUCKETS / 64];
    let mut add = |k: u32| {
        let (w, bit) = (k as usize / 64, 1u64 << (k % 64));
        if seen[w] & bit == 0 {
            seen[w] |= bit;
            each(k);
        }
    };
    let mut worst = None;
    for f in findings.iter().filter(|f| counts(f)) {
        let id = f.rule_id.as_bytes();
        let family = f.rule_id.split_once('.').map_or(id, |(family, _)| family.as_bytes());
        let (rule, family) = (word(id, 0, id.len()), word(family, 0, family.len()));
        let sev = Some(f.severity);
        add(bucket(RULE, rule, None));
        add(bucket(RULE_AT, rule, sev));
        add(bucket(FAMILY_AT, family, sev));
        add(bucket(CATEGORY_AT, f.category as u64, sev));
        worst = worst.max(sev);
    }
    add(bucket(WORST, 0, worst));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Category;

    fn finding(rule_id: &str, category: Category, severity: Severity) -> Finding {
        Finding {
            rule_id: rule_id.to_string(),
            category,
            severity,
            line: 1,
            excerpt: String::new(),
            message: String::new(),
            file: None,
        }
    }

    fn buckets(findings: &[Finding]) -> Vec<u32> {
        let mut out = Vec::new();
        for_each(findings, |k| out.push(k));
        out
    }

    #[test]
    fn a_finding_below_the_threshold_is_five_features_and_none_is_one() {
        assert_eq!(buckets(&[]).len(), 1, "the worst severity: none");
        let low = finding("priv.sudo", Category::PrivilegeEscalation, Severity::Low);
        let b = buckets(std::slice::from_ref(&low));
        assert_eq!(b.len(), 5, "{b:?}");
        assert!(b.iter().all(|&k| (k as usize) < EVIDENCE_BUCKETS));
        // Pure: the same findings, the same buckets.
        assert_eq!(buckets(std::slice::from_ref(&low)), b);
        // The same finding twice adds nothing.
        assert_eq!(buckets(&[low.clone(), low.clone()]), b);
    }

    #[test]
    fn the_severity_and_the_rule_tell_features_apart() {
        let low = buckets(&[finding("priv.sudo", Category::PrivilegeEscalation, Severity::Low)]);
        let medium = buckets(&[finding("priv.sudo", Category::PrivilegeEscalation, Severity::Medium)]);
        // The bare rule id is shared; the four with a severity are not.
        assert_eq!(low.iter().filter(|k| medium.contains(k)).count(), 1, "{low:?} {medium:?}");
        let other = buckets(&[finding("priv.sudoers", Category::PrivilegeEscalation, Severity::Low)]);
        // Another rule of the family: its family, category and worst
        // severity are shared, its rule is not.
        assert_eq!(low.iter().filter(|k| other.contains(k)).count(), 3, "{low:?} {other:?}");
    }

    #[test]
    fn findings_at_the_threshold_and_the_classifiers_own_are_not_evidence() {
        let none = buckets(&[]);
        // Medium is one below the threshold: evidence.
        let medium = finding("trojan.companion-script", Category::SupplyChain, Severity::Medium);
        assert!(counts(&medium));
        assert_eq!(buckets(&[medium]).len(), 5);
        // High is the threshold: refused already, not evidence.
        let high = finding("trojan.companion-script", Category::SupplyChain, Severity::High);
        assert!(!counts(&high));
        assert_eq!(buckets(&[high]), none);
        let own = finding("classifier.suspicious", Category::PromptInjection, Severity::Low);
        assert!(!counts(&own));
        assert_eq!(buckets(&[own]), none);
    }
}
