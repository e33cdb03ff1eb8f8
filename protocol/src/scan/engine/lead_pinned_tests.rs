//! The pinned answers against the analysis they stand for.

use std::path::Path;

use super::*;
use crate::scan::{Category, Scanner, Severity};

fn standard() -> impl Iterator<Item = &'static Rule> {
    Scanner::standard().engine.rules.iter().map(|c| &c.rule)
}

#[test]
fn leads_txt_is_the_analysis_of_the_standard_rules() {
    let now = render(standard());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scan/engine/leads.txt");
    if std::env::var_os("ECP_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        return;
    }
    // A stale line costs a node's start the analysis, never a wrong answer:
    // still, keep the file current (the bless command is in its header).
    assert!(
        PINNED == now,
        "{} is stale: ECP_BLESS=1 cargo test -p ecp-protocol --lib lead_pinned",
        path.display()
    );
}

#[test]
fn every_pinned_answer_read_is_the_analysis() {
    let mut read = 0;
    for rule in standard() {
        if let Some(leads) = pinned(rule) {
            assert_eq!(leads, lead::starts_on_trigger_line(rule), "{}", rule.id);
            read += 1;
        }
    }
    // Both answers occur among the standard rules.
    assert!(standard().any(|r| pinned(r) == Some(true)));
    assert!(standard().any(|r| pinned(r) == Some(false)));
    assert!(read > 50, "{read} rules pinned");
}

/// A copy of `rule` as [`Rule::new`] makes it, with what the analysis reads.
fn copy(rule: &Rule, triggers: &'static [&'static str], pattern: String, literal: bool) -> Rule {
    let mut copy = Rule::new(rule.id, rule.category, rule.severity, triggers, pattern);
    copy.literal = literal;
    copy
}

#[test]
fn a_changed_rule_is_not_read_from_the_file() {
    let rule = standard().find(|r| pinned(r) == Some(true) && !r.literal).expect("a pinned rule");
    let same = copy(rule, rule.triggers, rule.pattern.clone(), rule.literal);
    assert_eq!(pinned(&same), Some(true), "{}", rule.id);
    // A pattern changed so that a match may start before the trigger.
    let changed = copy(rule, rule.triggers, format!("x{}", rule.pattern), false);
    assert_eq!(pinned(&changed), None);
    assert!(!starts_on_trigger_line(&changed));
    let other = standard().find(|r| pinned(r).is_some() && r.triggers.len() > 1).expect("one");
    let fewer = copy(other, &other.triggers[1..], other.pattern.clone(), other.literal);
    assert_eq!(pinned(&fewer), None, "{}", other.id);
    let flipped = copy(other, other.triggers, other.pattern.clone(), !other.literal);
    assert_eq!(pinned(&flipped), None);
    // A rule the file does not name.
    let new = Rule::new("test.unnamed", Category::PromptInjection, Severity::High, &["send"], r"\bsend\b");
    assert_eq!(pinned(&new), None);
    assert!(starts_on_trigger_line(&new));
}
