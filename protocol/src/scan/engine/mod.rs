//! The matching engine: one prefilter pass, then per-line confirmation.
//!
//! Every rule names trigger literals. All triggers of all rules go into a
//! single automaton (`literals.rs`, ASCII case-insensitive) that walks the
//! normalised body once. A trigger hit marks its rules as candidates for the
//! hit's line; when the walk leaves that line, only the candidate rules run
//! their regex on it, and on the lines before it that a match may start on
//! (a phrase rule's span, a command continued with `\`) when the rule's
//! matches do not always start on a trigger's line. A benign body
//! therefore costs one linear pass plus a few short regex runs on the lines
//! that mention something interesting.
//!
//! A finding's excerpt is cut from its line with every credential masked
//! (`secret::mask`); only lines a `secret` trigger hit can hold one, so
//! only those are masked.
//!
//! A finding of an explainable rule (see `Rule::explainable`) whose match
//! is shown rather than asked for, under a heading, lead-in or list that
//! explains it, is lowered to `Low` (`context.rs`); a runnable block or a
//! step never is.
//!
//! Analyzers are the rules that need more than one line (a download on one
//! line executed on another, a secret read into a variable that a later
//! `curl` sends). They are triggered the same way and receive the lines on
//! which their triggers hit.
//!
//! # Adding an analyzer
//!
//! An [`Analyzer`] is its triggers and a `run` function; its family's
//! `analyzers()` returns it and `Scanner::build` lists the family (which
//! names it `family#k` for the bench). What keeps the scanner fast:
//!
//! - Triggers: words without which the analyzer can report nothing on a
//!   line, as specific as that allows. Prefer a prefix of a key already in
//!   the prefilter (`cargo test -p ecp-protocol --lib longest_prefilter_keys` fails
//!   when the automaton outgrows 4-byte keys, which halves the speed of
//!   every scan). A trigger hit on most bodies (`---`, `://`, `install`)
//!   makes `run` part of nearly every scan.
//! - Gate: `run` starts with the cheapest test that turns a line away (a
//!   byte search, a word list checked in one pass) before tokenising or any
//!   regex; whatever the body needs once (its fences, its code blocks) is
//!   found lazily, the first time a line gets past the gate. Searchers
//!   (`memmem::Finder`) are built once in a static, never per call: building
//!   one costs more than searching a body.
//! - Bounds: a hostile body reaches every analyzer on every line, so work
//!   per line is bounded (bytes, lines looked back, findings), and nothing
//!   recounts from the start of the body per line.
//! - Cost: `cargo bench -p ecp-protocol --bench scan parts` prints each
//!   analyzer's share of a typical scan; a new one should not show above a
//!   few percent there.
//!
//! # Layout
//!
//! This file is the engine; [`Parts`] lets the scan bench run one part of
//! a scan alone (`Scanner::scan_part`). `text` holds the lines and
//! haystacks it and the analyzers read ([`Body`], [`LineRef`]); `walk` the
//! state of one walk over the hits and the buffers kept per thread. `lead` finds, when the engine is built, the
//! rules whose matches start on a trigger's line, which need no look back.
//! `naive` (tests only) is its reference: every rule on every line, without
//! prefilter or automaton, and the property test that holds the two
//! together (`PROPTEST_CASES` sets its count, 500 by default).
//! `triggered` (tests only) checks from each rule's pattern, without
//! running it, that every match holds one of the rule's triggers: a match
//! without one is what the engine never reports and the reference does.

use std::sync::OnceLock;

use super::context::Outline;
use super::literals::{End, Literals, canonical, spells};
use super::normalize::normalize;
use super::rule::{self, Hit, Rule};
use super::secret;
use super::{Category, Finding, ScanReport, Severity};

/// A rule that looks across lines.
pub(super) struct Analyzer {
    /// Trigger literals, as for [`Rule::triggers`].
    pub(super) triggers: &'static [&'static str],
    /// Runs on the body with the lines where a trigger hit (in order, each once).
    pub(super) run: fn(&Body<'_>, &[LineRef], &mut Vec<Finding>),
}

/// Which rules and analyzers a scan runs: all of them, but for the bench
/// of each part's share (`Scanner::scan_part`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Parts {
    pub(super) rules: u128,
    pub(super) analyzers: u32,
}

impl Parts {
    pub(super) const ALL: Parts = Parts { rules: u128::MAX, analyzers: u32::MAX };
}

/// Builds a finding on a line, with an excerpt around byte offset `at`.
pub(super) fn finding(
    rule_id: &str,
    category: Category,
    severity: Severity,
    line: LineRef,
    text: &str,
    at: usize,
) -> Finding {
    Finding {
        rule_id: rule_id.to_string(),
        category,
        severity,
        line: line.index + 1,
        excerpt: rule::excerpt(text, at),
        file: None,
        message: String::new(),
    }
}

struct Compiled {
    rule: Rule,
    /// Compiled at the rule's first confirmation (`line_regex`): a node
    /// that never meets a line a rule needs to read never builds it.
    re: OnceLock<regex_automata::meta::Regex>,

    /// A literal rule's triggers, canonical.
    literals: Vec<Vec<u8>>,
    /// [`Rule::requires`], its searchers built once.
    requires: Requires,
}

impl Compiled {
    /// The rule's regex (not a literal rule's), built on first use.
    fn regex(&self) -> &regex_automata::meta::Regex {
        self.re.get_or_init(|| line_regex::compile(&self.rule.pattern))
    }
}

/// One trigger literal and what it points at.
struct Trigger {
    /// The literal, canonical (see `literals::canonical`).
    text: Vec<u8>,
    /// Whether it must start a word (it starts with a letter or digit).
    word_start: bool,
    /// Whether it must end one (it ends with one and is not a `*` prefix).
    word_end: bool,
    rules: u128,
    analyzers: u32,
}

impl Trigger {
    /// A trigger as a rule writes it (see [`Rule::triggers`]), pointing at
    /// `rules` and `analyzers`.
    fn parse(lit: &str, rules: u128, analyzers: u32) -> Trigger {
        let (lit, prefix) = lit.strip_suffix('*').map_or((lit, false), |l| (l, true));
        let (lit, infix) = lit.strip_prefix('*').map_or((lit, false), |l| (l, true));
        let text: Vec<u8> = lit.bytes().map(canonical).collect();
        let word_start = !infix && text.first().is_some_and(|b| b.is_ascii_alphanumeric());
        let word_end = !prefix && text.last().is_some_and(|b| b.is_ascii_alphanumeric());
        Trigger { text, word_start, word_end, rules, analyzers }
    }
}

/// The compiled rule set.
pub(super) struct Engine {
    /// Finds the first bytes (the key) of every trigger.
    prefilter: Literals,
    /// The triggers, flattened so the hot loop does not chase pointers.
    table: TriggerTable,
    rules: Vec<Compiled>,
    /// The rules whose match may start on a line before the line of their
    /// trigger, in a span or a continued command (see `lead.rs`).
    look_back: u128,
    /// `reach[j - 1]`: the rules of `look_back` whose match may start `j`
    /// lines before the line of their trigger ([`Rule::span`] at least `j`).
    reach: Vec<u128>,
    analyzers: Vec<Analyzer>,
    /// The prefilter's key length: [`MAX_KEY_BYTES`] unless the triggers
    /// grew too many for its table.
    key_bytes: usize,
    /// The rules of the `secret` family: only a line where one of their
    /// triggers hit can hold a credential, so only such a line is masked
    /// before an excerpt is cut from it.
    secret_rules: u128,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("rules", &self.rules.len())
            .field("analyzers", &self.analyzers.len())
            .field("triggers", &self.table.entries.len())
            .field("key_bytes", &self.key_bytes)
            .finish()
    }
}

/// Longest prefilter key: the first bytes of a trigger. Keys get shorter
/// until the automaton fits 16-bit transitions (a table of at most 64 KB).
const MAX_KEY_BYTES: usize = 4;
/// Continuation lines (`\` at the end) joined into one command, at most.
const MAX_CONTINUATION_LINES: usize = 12;
/// Bytes of a joined command, at most; keeps pathological input linear.
const MAX_CONTINUATION_BYTES: usize = 4096;

impl Engine {
    /// Compiles rules and analyzers. Panics on a bad built-in pattern (at the
    /// rule's first confirmation: `line_regex`'s tests build every one).
    pub(super) fn new(rules: Vec<Rule>, analyzers: Vec<Analyzer>) -> Engine {
        assert!(rules.len() <= 128, "rule bitset holds 128 rules");
        assert!(analyzers.len() <= 32, "analyzer bitset holds 32 analyzers");
        let triggers = distinct_triggers(&rules, &analyzers);
        // Longer keys spare checks, shorter keys keep the automaton in L1.
        let (prefilter, by_key, cap) = (1..=MAX_KEY_BYTES)
            .rev()
            .find_map(|cap| {
                let (keys, by_key) = by_key(&triggers, cap);
                Literals::new(&keys).map(|l| (l, by_key, cap))
            })
            .expect("one-byte keys always fit");
        let table = TriggerTable::new(&prefilter, &by_key, &triggers, cap);
        let rules: Vec<Compiled> = rules
            .into_iter()
            .map(|rule| Compiled {
                re: OnceLock::new(),

                literals: if rule.literal {
                    rule.triggers
                        .iter()
                        .map(|t| t.trim_end_matches('*').bytes().map(canonical).collect())
                        .collect()
                } else {
                    Vec::new()
                },
                requires: Requires::new(rule.requires),
                rule,
            })
            .collect();
        let set = |keep: &dyn Fn(&Compiled) -> bool| {
            rules.iter().enumerate().filter(|(_, c)| keep(c)).fold(0, |set, (i, _)| set | 1u128 << i)
        };
        let look_back = set(&|c| !lead_pinned::starts_on_trigger_line(&c.rule));
        let longest = rules.iter().map(|c| usize::from(c.rule.span)).max().unwrap_or(0);
        let reach = (1..=longest).map(|j| look_back & set(&|c| usize::from(c.rule.span) >= j)).collect();
        let secret_rules = set(&|c| c.rule.category == Category::Secret);
        Engine { prefilter, table, rules, look_back, reach, analyzers, key_bytes: cap, secret_rules }
    }

    /// Scans one body, doing the `parts` of the work asked for.
    pub(super) fn scan(&self, body: &str, parts: Parts) -> ScanReport {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                let report = self.scan_with(body, &mut scratch, parts);
                scratch.trim();
                report
            }
            // Only reachable if a scan ever ran inside another on one thread.
            Err(_) => self.scan_with(body, &mut Scratch::default(), parts),
        })
    }

    fn scan_with(&self, body: &str, scratch: &mut Scratch, parts: Parts) -> ScanReport {
        let Scratch { ends, spill, walk, lines } = scratch;
        ends.clear();
        walk.reset();
        let norm = normalize(body);
        let text: &str = &norm.text;
        let mut findings = norm.findings;
        let bytes = text.as_bytes();

        self.prefilter.find_with(bytes, ends, spill);
        self.each_hit(bytes, ends, |at, rules, analyzers| {
            self.hit(text, at, rules & parts.rules, analyzers & parts.analyzers, walk, &mut findings);
        });
        self.leave(text, walk, &mut findings);

        // The outline the line rules built, if any, serves the analyzers too.
        let outline = walk.outline.take();
        self.run_analyzers(text, &walk.analyzer_lines, lines, outline, &mut findings);
        sorted(findings)
    }

    /// Calls `hit` with the last byte of each trigger's key where the text
    /// (`bytes`) spells the whole trigger, at the places the prefilter
    /// found keys ending (`ends`), and the trigger's rules and analyzers.
    #[inline(always)]
    fn each_hit(&self, bytes: &[u8], ends: &[End], hit: impl FnMut(usize, u128, u32)) {
        self.table.each_hit(&self.prefilter, bytes, ends, hit);
    }

    /// Runs each analyzer on the lines it was triggered on (`analyzer_lines`,
    /// tagged by analyzer index), gathering them in `lines`; `outline`: the
    /// body's, if a line rule has built it.
    fn run_analyzers(
        &self,
        text: &str,
        analyzer_lines: &[(u32, LineRef)],
        lines: &mut Vec<LineRef>,
        outline: Option<Outline>,
        findings: &mut Vec<Finding>,
    ) {
        if analyzer_lines.is_empty() {
            return;
        }
        let view = Body::with_outline(text, outline.map(std::cell::OnceCell::from).unwrap_or_default());
        // Only the analyzers woken, in their order: a typical body wakes a
        // third of them.
        let mut woken = analyzer_lines.iter().fold(0u32, |w, (k, _)| w | 1 << k);
        while woken != 0 {
            let i = woken.trailing_zeros();
            woken &= woken - 1;
            lines.clear();
            lines.extend(analyzer_lines.iter().filter(|(k, _)| *k == i).map(|(_, l)| *l));
            (self.analyzers[i as usize].run)(&view, lines, findings);
        }
    }

    /// Records a trigger found at byte `at`: its rules become candidates for
    /// its line, its analyzers get the line. Leaving a line confirms it.
    fn hit(
        &self,
        text: &str,
        at: usize,
        rules: u128,
        analyzers: u32,
        walk: &mut Walk,
        findings: &mut Vec<Finding>,
    ) {
        let line = walk.cursor.locate(text, at);
        if walk.current != Some(line) {
            self.leave(text, walk, findings);
            walk.current = Some(line);
            walk.candidates = 0;
        }
        walk.candidates |= rules;
        if rules & self.secret_rules != 0 && walk.secret_lines.last() != Some(&line.start) {
            walk.secret_lines.push(line.start);
        }
        let mut a = analyzers;
        while a != 0 {
            let i = a.trailing_zeros() as usize;
            a &= a - 1;
            if walk.analyzer_last[i] != Some(line.index) {
                walk.analyzer_last[i] = Some(line.index);
                walk.analyzer_lines.push((i as u32, line));
            }
        }
    }

    /// Confirms the line the walk leaves, and the lines before it whose
    /// haystack reaches into it: a match may start up to [`Rule::span`]
    /// lines before its trigger, and a command continued with `\` on an
    /// earlier line; only for the rules whose match may start before a
    /// trigger's line. An extra confirmation costs time, never correctness:
    /// it finds what a scan of every rule on every line finds there.
    fn leave(&self, text: &str, walk: &mut Walk, findings: &mut Vec<Finding>) {
        let Some(line) = walk.current else {
            return;
        };
        self.confirm_once(text, line, walk.candidates, walk, findings);
        let candidates = walk.candidates & self.look_back;
        if candidates == 0 {
            return;
        }
        let mut earlier = line;
        let mut continued = true;
        for back in 1..MAX_CONTINUATION_LINES {
            if earlier.start == 0 {
                break;
            }
            continued &= text[..earlier.start - 1].trim_end_matches('\r').ends_with('\\');
            let reached =
                if continued { candidates } else { self.reach.get(back - 1).map_or(0, |r| r & candidates) };
            if reached == 0 {
                break;
            }
            earlier = Body::new(text).line_before(earlier, 1);
            self.confirm_once(text, earlier, reached, walk, findings);
        }
    }

    /// [`confirm`](Self::confirm), less the rules recently confirmed on
    /// the same line.
    fn confirm_once(
        &self,
        text: &str,
        line: LineRef,
        rules: u128,
        walk: &mut Walk,
        findings: &mut Vec<Finding>,
    ) {
        let done = walk.recent.iter().filter(|(start, _)| *start == line.start).fold(0, |d, (_, r)| d | r);
        let rules = rules & !done;
        if rules == 0 {
            return;
        }
        walk.recent[walk.next_recent % RECENT_LINES] = (line.start, rules);
        walk.next_recent += 1;
        let may_hold_secret = walk.secret_lines.binary_search(&line.start).is_ok();
        self.confirm(text, line, rules, may_hold_secret, &mut walk.lower, &mut walk.outline, findings);
    }

    /// Runs the candidate rules on one line. `may_hold_secret`: a trigger
    /// of the `secret` family is on it, so its excerpts are cut masked.
    /// `outline`: the body's structure, built the first time a blocking
    /// match asks whether its context explains it.
    #[allow(clippy::too_many_arguments)]
    fn confirm(
        &self,
        text: &str,
        line: LineRef,
        mut candidates: u128,
        may_hold_secret: bool,
        lower: &mut Lowered,
        outline: &mut Option<Outline>,
        out: &mut Vec<Finding>,
    ) {
        let own = text[line.start..line.end].trim_end_matches('\r');
        let joined = if own.ends_with('\\') { join_continuation(text, line) } else { None };
        // The copy is of a haystack of an earlier line (or of a joined
        // command that no longer exists): forget it, keep its buffer.
        lower.of = None;
        let mut previous: Option<&str> = None;
        // Masked once per line, and only when a finding needs an excerpt.
        let mut masked: Option<std::borrow::Cow<'_, str>> = None;
        while candidates != 0 {
            let i = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let c = &self.rules[i];
            let (hay, line_len): (&str, usize) = match &joined {
                Some(j) => (j.as_str(), own.len() - 1),
                None if c.rule.span > 0 => (span(text, line, c.rule.span), own.len()),
                None => (own, own.len()),
            };
            if !c.rule.requires.is_empty() {
                let lowered = lower.of(hay);
                if !c.requires.any_in(lowered.as_bytes()) {
                    continue;
                }
            }
            if c.rule.gate.is_some_and(|g| !g(hay)) {
                continue;
            }
            let mut best: Option<(Severity, std::ops::Range<usize>)> = None;
            let literal_match;
            let matches: &mut dyn Iterator<Item = std::ops::Range<usize>> = if c.rule.literal {
                literal_match = first_trigger(hay, &c.literals);
                &mut literal_match.into_iter()
            } else {
                &mut c.regex().find_iter(hay.as_bytes()).map(|m| m.range())
            };
            for m in matches {
                if m.start >= line_len.max(1) {
                    break;
                }
                let hit = Hit { hay, line_len, m: m.clone(), base: c.rule.severity };
                let Some(mut severity) = c.rule.assess.map_or(Some(c.rule.severity), |f| f(&hit)) else {
                    continue;
                };
                if c.rule.warnable
                    && severity > Severity::Low
                    && (rule::warned_against(hit.before())
                        || rule::warned_across_lines(
                            previous.get_or_insert_with(|| previous_line(text, line)),
                            hit.before(),
                        ))
                {
                    severity = Severity::Low;
                }
                if c.rule.explainable
                    && severity >= Severity::High
                    && outline.get_or_insert_with(|| Outline::new(text)).explained(
                        text,
                        line.index,
                        m.clone(),
                        c.rule.warnable,
                    )
                {
                    severity = Severity::Low;
                }
                if best.as_ref().is_none_or(|(s, _)| severity > *s) {
                    best = Some((severity, m));
                }
            }
            if let Some((severity, m)) = best {
                let excerpt = match c.rule.describe {
                    Some(describe) => describe(&Hit { hay, line_len, m, base: c.rule.severity }),
                    None => rule::excerpt_of_masked(
                        masked.get_or_insert_with(|| {
                            if may_hold_secret { secret::mask(own) } else { std::borrow::Cow::Borrowed(own) }
                        }),
                        m.start.min(own.len()),
                    ),
                };
                out.push(Finding {
                    rule_id: c.rule.id.to_string(),
                    category: c.rule.category,
                    severity,
                    line: line.index + 1,
                    excerpt,
                    file: None,
                    message: String::new(),
                });
            }
        }
    }
}

/// The report of a scan's findings: by line, the worst first, one per rule
/// and line — its worst (the stable sort keeps the first of equals). A
/// rule's findings on one line need not be neighbours once sorted (another
/// rule's severity can fall between theirs), so each is checked against
/// the whole line kept so far.
fn sorted(mut findings: Vec<Finding>) -> ScanReport {
    findings.sort_by(|a, b| {
        (a.line, std::cmp::Reverse(a.severity), &a.rule_id).cmp(&(
            b.line,
            std::cmp::Reverse(b.severity),
            &b.rule_id,
        ))
    });
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        let again = kept.iter().rev().take_while(|k| k.line == f.line).any(|k| k.rule_id == f.rule_id);
        if !again {
            kept.push(f);
        }
    }
    let mut findings = kept;
    for f in &mut findings {
        if f.message.is_empty() {
            f.message = crate::scan::message(&f.rule_id, f.category);
        }
    }
    ScanReport { findings, classifier: None }
}

/// The first place on `hay` where one of `triggers` is spelled out, as the
/// match of a literal rule (word-start rules as the prefilter applies them).
fn first_trigger(hay: &str, literals: &[Vec<u8>]) -> Option<std::ops::Range<usize>> {
    let b = hay.as_bytes();
    (0..b.len()).find_map(|i| {
        let here = canonical(b[i]);
        literals.iter().find_map(|lit| {
            if lit.first() != Some(&here) || lit[0].is_ascii_alphanumeric() && i > 0 && is_word_byte(b[i - 1])
            {
                return None;
            }
            spells(b, i, lit)
                .filter(|&end| {
                    !(lit[lit.len() - 1].is_ascii_alphanumeric()
                        && b.get(end).is_some_and(|&c| is_word_byte(c)))
                })
                .map(|end| i..end)
        })
    })
}

mod distinct;
mod lead;
mod lead_pinned;
mod line_regex;
mod requires;
mod table;
mod text;
mod walk;

use distinct::{by_key, distinct_triggers};
use requires::Requires;
use table::TriggerTable;
pub(super) use text::{Body, LineRef, count_newlines};
use text::{Lowered, is_word_byte, join_continuation, previous_line, span};
use walk::{RECENT_LINES, SCRATCH, Scratch, Walk};
#[cfg(test)]
mod cursor_tests;
#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod naive;
#[cfg(test)]
mod triggered;

#[cfg(test)]
mod tests;
