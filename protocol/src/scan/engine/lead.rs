//! Which rules a match can only start on a line that holds one of their
//! triggers: those never need the engine to look back.
//!
//! A match of a span rule or of a `\`-continued command may start on a line
//! before the line of its trigger, so the engine confirms such lines too
//! when it leaves a trigger's line. That costs a second confirmation of the
//! line before a triggered one. But when every match starts with (or, within its first
//! line, reaches) a trigger, the line a match starts on is a trigger's line
//! of its own, and is confirmed for the rule anyway. This module finds those
//! rules when the rule set is built, from the prefix literals of their
//! patterns: the look back is kept for the others only.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind, Look};

use super::{Trigger, is_word_byte};
use crate::scan::literals::{canonical, spells};
use crate::scan::rule::Rule;

/// Prefix literals extracted at most; past this the rule keeps its look back.
const MAX_PREFIXES: usize = 1 << 12;
/// Bytes of a class the prefixes branch into at most, tried in turn: 16 is
/// enough for `\s` and the blank classes after a trigger word and ends the
/// prefix at a wide class (a name) before the set swells; 256 takes `\W`.
const CLASS_LIMITS: [usize; 2] = [16, 256];

/// Whether every match of `rule` starts on a line the prefilter finds one
/// of its triggers on: the text from the match's start to the end of some
/// trigger in it holds no newline and no blank (a continuation joins lines
/// with a blank), and that trigger's word boundaries hold there.
pub(super) fn starts_on_trigger_line(rule: &Rule) -> bool {
    let triggers: Vec<Trigger> = rule.triggers.iter().map(|t| Trigger::parse(t, 0, 0)).collect();
    if rule.literal {
        // The match is the first trigger on the haystack (`first_trigger`).
        return triggers.iter().all(|t| !t.text.contains(&b' '));
    }
    // Parsed case-sensitive: the rules compile ignoring ASCII case, so their
    // matches are case variants of this parse's, which `canonical` makes
    // equal; the variants would only swell the set of prefixes.
    let parsed = ParserBuilder::new().unicode(false).utf8(false).build().parse(&rule.pattern);
    let Ok(hir) = parsed else {
        return false;
    };
    branches(&hir).iter().all(|branch| leads(branch, &triggers))
}

/// The alternatives of `hir`, each on its own: a boundary asserted at the
/// ends of one alternative says nothing of the others.
pub(super) fn branches(hir: &Hir) -> Vec<&Hir> {
    match hir.kind() {
        HirKind::Alternation(alternatives) => alternatives.iter().flat_map(branches).collect(),
        _ => vec![hir],
    }
}

/// Whether every match of `hir` reaches one of `triggers` on its first
/// line, as [`leads_to_trigger`] reads its prefixes. Narrow classes show
/// the byte after a trigger word, wide ones swell the prefixes: either
/// extraction is a true set of prefixes, so one that shows it is enough.
fn leads(hir: &Hir, triggers: &[Trigger]) -> bool {
    let bounded = (bounded(hir, Edge::Start), bounded(hir, Edge::End));
    CLASS_LIMITS.iter().any(|&limit| {
        let mut extractor = Extractor::new();
        extractor.kind(ExtractKind::Prefix).limit_class(limit).limit_total(MAX_PREFIXES);
        let prefixes = extractor.extract(hir);
        prefixes.literals().is_some_and(|prefixes| {
            !prefixes.is_empty()
                && prefixes.iter().all(|p| leads_to_trigger(p.as_bytes(), p.is_exact(), triggers, bounded))
        })
    })
}

/// Whether a match starting with `prefix` spells one of `triggers` before
/// any blank or newline, as the prefilter finds it. `exact`: the prefix is
/// a whole match. `bounded`: the pattern asserts a word or line boundary
/// where every match starts, and where every match ends.
fn leads_to_trigger(prefix: &[u8], exact: bool, triggers: &[Trigger], bounded: (bool, bool)) -> bool {
    let prefix: Vec<u8> = prefix.iter().map(|&b| canonical(b)).collect();
    let first_line = prefix.iter().position(|&b| matches!(b, b' ' | b'\n' | b'\r')).unwrap_or(prefix.len());
    (0..first_line).any(|k| {
        triggers.iter().any(|t| {
            let starts_word = if k == 0 { bounded.0 } else { !is_word_byte(prefix[k - 1]) };
            if t.word_start && !starts_word || t.text.contains(&b' ') {
                return false;
            }
            // A trigger ending the prefix might go on with word bytes in
            // the text, unless a byte after it or the match's end says not.
            spells(&prefix, k, &t.text).is_some_and(|end| {
                let ends_word = prefix.get(end).map_or(exact && bounded.1, |&b| !is_word_byte(b));
                end <= first_line && (!t.word_end || ends_word)
            })
        })
    })
}

/// An end of a match.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Edge {
    Start,
    End,
}

/// Whether every match of `hir` has a word or line boundary asserted at
/// its `at` end, so that no word byte lies just outside it there.
pub(super) fn bounded(hir: &Hir, at: Edge) -> bool {
    match hir.kind() {
        HirKind::Look(look) => match at {
            Edge::Start => matches!(
                look,
                Look::Start
                    | Look::StartLF
                    | Look::StartCRLF
                    | Look::WordAscii
                    | Look::WordStartAscii
                    | Look::WordStartHalfAscii
            ),
            Edge::End => matches!(
                look,
                Look::End
                    | Look::EndLF
                    | Look::EndCRLF
                    | Look::WordAscii
                    | Look::WordEndAscii
                    | Look::WordEndHalfAscii
            ),
        },
        HirKind::Concat(parts) => {
            let outer = if at == Edge::Start { parts.first() } else { parts.last() };
            outer.is_some_and(|h| bounded(h, at))
        }
        HirKind::Alternation(branches) => branches.iter().all(|h| bounded(h, at)),
        HirKind::Capture(capture) => bounded(&capture.sub, at),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Category, Severity};

    fn rule(triggers: &'static [&'static str], pattern: &str) -> Rule {
        Rule::new("test.rule", Category::PromptInjection, Severity::High, triggers, pattern)
    }

    #[test]
    fn a_pattern_led_by_a_bounded_trigger_starts_on_its_line() {
        assert!(starts_on_trigger_line(&rule(&["ignore", "forget"], r"\b(?:ignore|forget)[\s>]+all\b")));
        assert!(starts_on_trigger_line(&rule(&["deletemany"], r"\.deletemany\(\s*\)")));
        assert!(starts_on_trigger_line(&rule(&["send"], r"\bsend\b")));
    }

    #[test]
    fn a_match_that_may_start_before_its_trigger_keeps_the_look_back() {
        // The trigger comes after a word that may end the line before.
        assert!(!starts_on_trigger_line(&rule(&["override"], r"\bnew\s+instructions\s+override")));
        // No boundary: "xignore" matches, and the trigger does not start a word.
        assert!(!starts_on_trigger_line(&rule(&["ignore"], r"ignore\s+all")));
        // The trigger may go on with word bytes the pattern does not show.
        assert!(!starts_on_trigger_line(&rule(&["ignore"], r"\bignore")));
        // A blank in the trigger may be where a continuation joins lines.
        assert!(!starts_on_trigger_line(&rule(&["come first"], r"\bcome\s+first\b\s")));
    }

    #[test]
    fn phrase_rules_led_by_their_trigger_skip_the_look_back() {
        let engine = &crate::scan::Scanner::standard().engine;
        let looks_back = |id: &str| {
            let i = engine.rules.iter().position(|c| c.rule.id == id).expect(id);
            engine.look_back & 1u128 << i != 0
        };
        let led =
            ["cred.ask-for-secret", "exfil.instruction", "sql.delete-all", "prompt.ignore-instructions"];
        for id in led.into_iter().chain(["prompt.hidden-comment", "conceal.covert-action"]) {
            assert!(!looks_back(id), "{id}");
        }
        for id in ["prompt.instruction-override", "conceal.skip-consent", "conceal.hide-from-user"] {
            assert!(looks_back(id), "{id}");
        }
    }
}
