//! Whether every match of a line rule's regex holds one of its triggers
//! (tests only), decided from the pattern's syntax, without running it.
//!
//! The engine confirms a rule only on lines where the prefilter found one
//! of the rule's triggers. A regex alternative that holds none of them
//! (`exfil.dns-lookup` once took `ping` and `host`, its triggers only
//! `dig`, `nslookup`, `drill`) is a match the engine never reports and the
//! every-rule reference (`naive`) does: the random property test then
//! fails only when it happens to glue such a line. This check finds it on
//! every run: a rule's pattern is parsed, each part of it read for the
//! literals its matches spell (`Extractor`), and a part is covered when
//! every literal it can spell holds a trigger where the trigger's word
//! boundaries hold. What it cannot show is reported with the prefixes of
//! the alternative that holds no trigger.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Capture, Class, Hir, HirKind, Look, Repetition};

use super::lead::{Edge, bounded, branches};
use super::{Trigger, is_word_byte};
use crate::scan::literals::{canonical, spells};
use crate::scan::rule::Rule;

/// Literals extracted at most per part; past this a part is not read.
const MAX_LITERALS: usize = 1 << 12;
/// Bytes of a class the literals branch into at most.
const CLASS_LIMIT: usize = 16;

/// The parse the rules compile from (ASCII; case is `canonical`'s), with
/// every class of blanks written as one blank: a trigger's blank matches a
/// run of blanks, so `rm\s+-` holds the trigger `rm -` as `rm -` does.
fn parse(pattern: &str) -> Hir {
    let hir = ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("pattern {pattern:?} does not parse: {e}"));
    one_blank(&hir)
}

/// `hir` with each class of blanks, and each run of them, as one blank,
/// and each word or line boundary as a [`BOUNDARY`] byte, which literals
/// keep where the extractor would drop the assertion.
/// A line break in a class of blanks is taken as a blank too: a line rule's
/// haystack is one line, or lines a continuation joins with a blank
/// (a span rule's match across lines is the property test's to check).
fn one_blank(hir: &Hir) -> Hir {
    let blank = || Hir::literal(b" ".as_slice());
    match hir.kind() {
        HirKind::Look(look) if is_boundary(*look) => Hir::literal([BOUNDARY].as_slice()),
        HirKind::Class(_) if is_blanks(hir) => blank(),
        HirKind::Repetition(rep) if is_blanks(&rep.sub) => {
            if rep.min == 0 {
                Hir::alternation(vec![Hir::empty(), blank()])
            } else {
                blank()
            }
        }
        HirKind::Repetition(rep) => {
            Hir::repetition(Repetition { sub: Box::new(one_blank(&rep.sub)), ..rep.clone() })
        }
        HirKind::Capture(c) => Hir::capture(Capture { sub: Box::new(one_blank(&c.sub)), ..c.clone() }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(one_blank).collect()),
        HirKind::Alternation(alternatives) => Hir::alternation(alternatives.iter().map(one_blank).collect()),
        _ => hir.clone(),
    }
}

/// Stands for an asserted boundary in a literal: no pattern spells it.
const BOUNDARY: u8 = 0x02;

/// Whether `look` asserts that no word byte lies on one side of it.
fn is_boundary(look: Look) -> bool {
    use Look::*;
    matches!(
        look,
        Start
            | End
            | StartLF
            | EndLF
            | StartCRLF
            | EndCRLF
            | WordAscii
            | WordStartAscii
            | WordEndAscii
            | WordStartHalfAscii
            | WordEndHalfAscii
    )
}

/// Whether `hir` is a class of ASCII white space only.
fn is_blanks(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Class(Class::Bytes(class)) => {
            class.ranges().iter().all(|r| (r.start()..=r.end()).all(|b| b.is_ascii_whitespace() || b == 0x0b))
        }
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .all(|r| (r.start()..=r.end()).all(|c| c.is_ascii_whitespace() || c == '\u{b}')),
        _ => false,
    }
}

/// What a rule's pattern can match without one of its triggers: the
/// prefixes of each alternative not shown to hold a trigger. Empty for a
/// literal rule (its match is a trigger).
pub(super) fn untriggered(rule: &Rule) -> Vec<String> {
    if rule.literal {
        return Vec::new();
    }
    let triggers: Vec<Trigger> = rule.triggers.iter().map(|t| Trigger::parse(t, 0, 0)).collect();
    let hir = parse(&rule.pattern);
    let mut uncovered = Vec::new();
    for branch in branches(&hir) {
        let edges = (bounded(branch, Edge::Start), bounded(branch, Edge::End));
        if !covered(branch, edges, &triggers) {
            let prefixes = literals(branch, ExtractKind::Prefix).unwrap_or_default();
            let mut shown: Vec<String> = prefixes
                .iter()
                .filter(|(p, exact)| !holds_trigger(p, *exact, &triggers, edges))
                .map(|(p, _)| {
                    format!("{:?}", String::from_utf8_lossy(p).replace(char::from(BOUNDARY), "").trim())
                })
                .collect();
            shown.dedup();
            uncovered.push(if shown.is_empty() {
                format!("an alternative of {} bytes the check cannot read", branch.to_string().len())
            } else {
                shown.join(" | ")
            });
        }
    }
    uncovered
}

/// Whether every match of `hir` holds one of `triggers`, its word
/// boundaries kept. `edges`: a word or line boundary is asserted just
/// before and just after every match of `hir`.
fn covered(hir: &Hir, edges: (bool, bool), triggers: &[Trigger]) -> bool {
    match hir.kind() {
        HirKind::Literal(lit) => holds_trigger(&lit.0, true, triggers, edges),
        HirKind::Capture(capture) => covered(&capture.sub, edges, triggers),
        HirKind::Repetition(rep) => {
            // The first of several copies is followed by another copy.
            rep.min >= 1 && covered(&rep.sub, (edges.0, edges.1 && rep.max == Some(1)), triggers)
        }
        HirKind::Alternation(alternatives) => alternatives.iter().all(|a| covered(a, edges, triggers)),
        HirKind::Concat(parts) => (0..parts.len()).any(|i| {
            let before = ends_apart(&parts[..i], edges.0);
            let after = starts_apart(&parts[i + 1..], edges.1);
            covered(&parts[i], (before || bounded(&parts[i], Edge::Start), after), triggers)
                // The parts from `i` to `j` spell literals across parts
                // (`dig` `\s+` `-x`), and what follows `j` may bound them.
                || (i + 1..=parts.len()).any(|j| {
                    let run = Hir::concat(parts[i..j].to_vec());
                    let after = starts_apart(&parts[j..], edges.1);
                    literals(&run, ExtractKind::Prefix).is_some_and(|prefixes| {
                        let edges = (before || bounded(&run, Edge::Start), after);
                        !prefixes.is_empty() && prefixes.iter().all(|(p, exact)| holds_trigger(p, *exact, triggers, edges))
                    })
                })
        }),
        HirKind::Empty | HirKind::Look(_) | HirKind::Class(_) => false,
    }
}

/// The literals every match of `hir` starts with (`Prefix`), and whether
/// each is a whole match; `None` when they are too many.
fn literals(hir: &Hir, kind: ExtractKind) -> Option<Vec<(Vec<u8>, bool)>> {
    let mut extractor = Extractor::new();
    extractor.kind(kind).limit_class(CLASS_LIMIT).limit_total(MAX_LITERALS);
    let seq = extractor.extract(hir);
    Some(seq.literals()?.iter().map(|l| (l.as_bytes().to_vec(), l.is_exact())).collect())
}

/// Whether `lit` spells one of `triggers` where its word boundaries hold.
/// `exact`: `lit` is a whole match, so what follows it is the match's end.
/// A [`BOUNDARY`] in `lit` is where the pattern asserts one.
fn holds_trigger(lit: &[u8], exact: bool, triggers: &[Trigger], edges: (bool, bool)) -> bool {
    let mut text = Vec::with_capacity(lit.len());
    // `marked[k]`: a boundary is asserted just before byte `k` of `text`.
    let mut marked = vec![false];
    for &b in lit {
        if b == BOUNDARY {
            marked[text.len()] = true;
        } else {
            text.push(canonical(b));
            marked.push(false);
        }
    }
    let starts_word = |k: usize| marked[k] || if k == 0 { edges.0 } else { !is_word_byte(text[k - 1]) };
    let ends_word = |k: usize| marked[k] || text.get(k).map_or(exact && edges.1, |&b| !is_word_byte(b));
    (0..text.len()).any(|k| {
        triggers.iter().any(|t| {
            (!t.word_start || starts_word(k))
                && spells(&text, k, &t.text).is_some_and(|end| !t.word_end || ends_word(end))
        })
    })
}

/// Whether every match of the concatenated `parts` ends with a byte that
/// is no word byte or a boundary (`edge`, when they may all be empty).
fn ends_apart(parts: &[Hir], edge: bool) -> bool {
    match parts.split_last() {
        None => edge,
        Some((last, rest)) => {
            bounded(last, Edge::End) || apart(last, Edge::End) && (!nullable(last) || ends_apart(rest, edge))
        }
    }
}

/// Whether every match of the concatenated `parts` starts with a byte that
/// is no word byte or a boundary (`edge`, when they may all be empty).
fn starts_apart(parts: &[Hir], edge: bool) -> bool {
    match parts.split_first() {
        None => edge,
        Some((first, rest)) => {
            bounded(first, Edge::Start)
                || apart(first, Edge::Start) && (!nullable(first) || starts_apart(rest, edge))
        }
    }
}

/// Whether `hir` may match the empty string.
fn nullable(hir: &Hir) -> bool {
    hir.properties().minimum_len() == Some(0)
}

/// Whether the byte at `at` of every non-empty match of `hir` is no word
/// byte.
fn apart(hir: &Hir, at: Edge) -> bool {
    match hir.kind() {
        HirKind::Class(Class::Bytes(class)) => {
            class.ranges().iter().all(|r| (r.start()..=r.end()).all(|b| !is_word_byte(b)))
        }
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .all(|r| (r.start()..=r.end()).all(|c| !c.is_ascii_alphanumeric() && c != '_')),
        HirKind::Literal(lit) => {
            let edge = if at == Edge::Start { lit.0.first() } else { lit.0.last() };
            edge.is_some_and(|&b| !is_word_byte(b))
        }
        HirKind::Capture(capture) => apart(&capture.sub, at),
        HirKind::Repetition(rep) => apart(&rep.sub, at),
        HirKind::Alternation(alternatives) => alternatives.iter().all(|a| nullable(a) || apart(a, at)),
        HirKind::Concat(parts) => {
            if at == Edge::Start {
                starts_apart(parts, true)
            } else {
                ends_apart(parts, true)
            }
        }
        HirKind::Empty | HirKind::Look(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Category, Severity};

    fn rule(triggers: &'static [&'static str], pattern: &str) -> Rule {
        Rule::new("test.rule", Category::Exfiltration, Severity::High, triggers, pattern)
    }

    /// The property test's counterexample of stop 18, as a pattern: the
    /// alternatives without a trigger are named.
    #[test]
    fn names_the_alternatives_that_hold_no_trigger() {
        let before = rule(&["dig", "nslookup", "drill"], r"\b(?:dig|nslookup|drill|host|ping)\s+\S*\$\(");
        let found = untriggered(&before).join(" | ");
        assert!(found.contains("host") && found.contains("ping"), "{found}");
        assert!(!found.contains("dig") && !found.contains("drill"), "{found}");
        let after = rule(&["dig", "nslookup", "drill"], r"\b(?:dig|nslookup|drill)\s+\S*\$\(");
        assert_eq!(untriggered(&after), Vec::<String>::new());
    }

    #[test]
    fn a_trigger_may_sit_anywhere_in_the_match() {
        assert!(untriggered(&rule(&["| sh"], r"\bcurl\s[^\n]*\|\s+sh\b")).is_empty());
        assert!(untriggered(&rule(&["override"], r"\bnew\s+instructions\s+override\b")).is_empty());
        assert!(untriggered(&rule(&[".ssh/"], r"cat\s+~/\.ssh/id_\w+")).is_empty());
    }

    #[test]
    fn a_trigger_must_keep_its_word_boundaries() {
        // "xignore all" matches, and `ignore` does not start a word there.
        assert!(!untriggered(&rule(&["ignore"], r"ignore\s+all")).is_empty());
        assert!(untriggered(&rule(&["ignore"], r"\bignore\s+all")).is_empty());
        // "postgres" matches and `post` must end a word.
        assert!(!untriggered(&rule(&["post"], r"\bpost\w*")).is_empty());
        assert!(untriggered(&rule(&["post*"], r"\bpost\w*")).is_empty());
    }

    #[test]
    fn a_blank_in_a_trigger_needs_one_in_the_match() {
        // `curl x |sh` matches, and the trigger's blank is not there.
        assert!(!untriggered(&rule(&["| sh"], r"\bcurl\s[^\n]*\|\s*sh\b")).is_empty());
        assert!(untriggered(&rule(&["rm -"], r"\brm\s+-\w*r")).is_empty());
    }

    #[test]
    fn an_optional_or_wide_part_covers_nothing() {
        assert!(!untriggered(&rule(&["curl"], r"\b(?:curl\s+)?\w+ \| sh")).is_empty());
        assert!(!untriggered(&rule(&["curl"], r"\w+")).is_empty());
    }

    /// Rules this check does not hold to it, each with the reason. A rule
    /// leaves the list when its patterns are mended (the test below fails
    /// on an entry that passes).
    const OPEN: &[(&str, &str)] = &[
        // The control characters' canonical byte is the trigger; the class
        // is too wide for the extractor.
        ("unicode.control-char", "every control character is canonical 0x01, the trigger"),
        // The prose rules (`prompt.*`, `conceal.hide-from-user`) left in
        // #14 h14-lines: beside a trigger word their gap is `{WN}` (no `_`),
        // inside a trigger phrase blanks, and the word a phrase cannot do
        // without is the trigger (`mode`, `*system*`, `user must*`).
        // Words before the trigger of a wide alternative, not read yet. Open.
        ("control.tls-verify-off", "`verify_ssl:\"false\"`: a quote between key and value"),
        ("control.security-tool-removed", "a tool name after a package command, not read yet"),
        ("tamper.clear-logs", "`rm … consolehost_history`, not read yet"),
        // s25 t5: the memory noun (the trigger) ends the match, after the
        // verb of keeping this reading stops at. Open: a trigger per verb.
        ("instr.persistence-i18n", "the memory noun ends the match, past the verbs read here"),
    ];

    /// Every standard rule's every match holds one of its triggers.
    #[test]
    fn every_rule_match_holds_one_of_its_triggers() {
        let engine = &crate::scan::Scanner::standard().engine;
        let mut wrong = Vec::new();
        for c in &engine.rules {
            let found = untriggered(&c.rule);
            let open = OPEN.iter().any(|(id, _)| *id == c.rule.id);
            if open && found.is_empty() {
                wrong.push(format!("{} holds its triggers now: take it off OPEN", c.rule.id));
            } else if !open && !found.is_empty() {
                wrong.push(format!(
                    "{} (triggers {:?}) may match without a trigger: {}",
                    c.rule.id,
                    c.rule.triggers,
                    found.join("; ")
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
