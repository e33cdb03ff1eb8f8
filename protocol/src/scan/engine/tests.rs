//! Tests of the engine's machinery: the prefilter keys' length, newline
//! counting, the line cursor and backslash continuations.

use super::text::{LineCursor, count_newlines, newline_before, newline_from, previous_line, span};
use super::walk::MAX_KEPT_ENTRIES;
use super::*;

/// One more trigger prefix can push the automaton past its 16-bit
/// table; the keys then shrink to 3 bytes and every scan gets about
/// twice as slow, with no test failing. This one does: share a prefix
/// with an existing trigger, or drop a rare one.
#[test]
fn the_standard_rules_keep_the_longest_prefilter_keys() {
    let engine = &crate::scan::Scanner::standard().engine;
    assert_eq!(engine.key_bytes, MAX_KEY_BYTES, "{engine:?}");
}

#[test]
fn counts_newlines_across_chunks() {
    for n in [0, 1, 254, 255, 256, 1000] {
        let text: String = (0..n).map(|i| if i % 3 == 0 { '\n' } else { 'x' }).collect();
        assert_eq!(count_newlines(text.as_bytes()), text.matches('\n').count(), "{n}");
    }
    assert_eq!(count_newlines(&[b'\n'; 600]), 600);
}

#[test]
fn line_cursor_counts_lines_across_jumps() {
    let text = "a\nbb\n\nccc curl\nd curl e curl\n";
    let mut c = LineCursor::default();
    let l = c.locate(text, 0);
    assert_eq!((l.index, l.start, l.end), (0, 0, 1));
    let p = text.find("curl").unwrap();
    let l = c.locate(text, p);
    assert_eq!(l.index, 3);
    assert_eq!(&text[l.start..l.end], "ccc curl");
    let p2 = text.len() - 2;
    let l = c.locate(text, p2);
    assert_eq!(l.index, 4);
    assert_eq!(&text[l.start..l.end], "d curl e curl");
}

#[test]
fn joins_backslash_continuations() {
    let text = "curl -s https://x.example \\\n  | sh\nnext";
    let j = join_continuation(text, LineRef { index: 0, start: 0, end: 26 }).unwrap();
    assert_eq!(j, "curl -s https://x.example    | sh");
}

/// One finding per rule and line, the worst first: a repeat of a rule on
/// its line goes, another rule on that line and the same rule on the next
/// line stay, and an empty message is filled in. The reference comparison
/// (`naive`) reports through this function too, so only this test reads it.
#[test]
fn the_report_keeps_one_finding_per_rule_and_line() {
    let f = |line, rule: &str, severity| Finding {
        rule_id: rule.to_string(),
        category: Category::DestructiveShell,
        severity,
        line,
        excerpt: String::new(),
        message: String::new(),
        file: None,
    };
    let report = sorted(vec![
        f(2, "a", Severity::High),
        f(1, "b", Severity::Medium),
        f(1, "a", Severity::High),
        f(1, "a", Severity::High),
    ]);
    let kept: Vec<_> = report.findings.iter().map(|f| (f.line, f.rule_id.as_str(), f.severity)).collect();
    assert_eq!(kept, [(1, "a", Severity::High), (1, "b", Severity::Medium), (2, "a", Severity::High)]);
    assert!(report.findings.iter().all(|f| f.message == crate::scan::message(&f.rule_id, f.category)));
    // Another rule's severity between two of the same rule's: still one, its worst.
    let report =
        sorted(vec![f(3, "a", Severity::Low), f(3, "b", Severity::Medium), f(3, "a", Severity::High)]);
    let kept: Vec<_> = report.findings.iter().map(|f| (f.line, f.rule_id.as_str(), f.severity)).collect();
    assert_eq!(kept, [(3, "a", Severity::High), (3, "b", Severity::Medium)]);
}

/// A scratch buffer of `MAX_KEPT_ENTRIES` entries is kept for the next
/// scan; one entry more is dropped, so that a huge body does not pin its
/// buffers in the thread that scanned it.
#[test]
fn a_scratch_keeps_buffers_at_the_bound_and_drops_them_one_past_it() {
    let capacities = |s: &Scratch| {
        [
            s.ends.capacity(),
            s.walk.analyzer_lines.capacity(),
            s.lines.capacity(),
            s.walk.secret_lines.capacity(),
            s.walk.lower.text.capacity(),
            s.spill[0].capacity(),
            s.spill[2].capacity(),
        ]
    };
    for (entries, after) in [(MAX_KEPT_ENTRIES, MAX_KEPT_ENTRIES), (MAX_KEPT_ENTRIES + 1, 0)] {
        let mut s = Scratch::default();
        s.ends.reserve_exact(entries);
        s.walk.analyzer_lines.reserve_exact(entries);
        s.lines.reserve_exact(entries);
        s.walk.secret_lines.reserve_exact(entries);
        s.walk.lower.text.reserve_exact(entries);
        s.spill.iter_mut().for_each(|lane| lane.reserve_exact(entries));
        assert_eq!(capacities(&s), [entries; 7]);
        s.trim();
        assert_eq!(capacities(&s), [after; 7], "{entries} entries");
    }
}

/// Every trigger of the standard rules and analyzers is found where it is
/// spelled, its blanks written as runs of blanks and line breaks too: the
/// trigger table's quick test of the bytes after a key (`Entry::ahead`,
/// read past a run of blanks for phrases) never turns a real hit away.
#[test]
fn every_trigger_is_hit_where_it_is_spelled_its_blanks_any_run() {
    let engine = &crate::scan::Scanner::standard().engine;
    let rules = engine
        .rules
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.rule.triggers.iter().map(move |t| (t, 1u128 << i, 0)));
    let analyzers = engine
        .analyzers
        .iter()
        .enumerate()
        .flat_map(|(i, a)| a.triggers.iter().map(move |t| (t, 0, 1u32 << i)));
    let mut checked = 0;
    for (trigger, rule, analyzer) in rules.chain(analyzers) {
        let literal = trigger.trim_start_matches('*').trim_end_matches('*');
        for run in [" ", "  \t", "\n", " \r\n  "] {
            let text = format!("x {} x\n", literal.replace(' ', run));
            let mut ends = Vec::new();
            engine.prefilter.find(text.as_bytes(), &mut ends);
            let (mut rules, mut analyzers) = (0, 0);
            engine.each_hit(text.as_bytes(), &ends, |_, r, a| {
                rules |= r;
                analyzers |= a;
            });
            assert!(rules & rule == rule && analyzers & analyzer == analyzer, "{trigger:?} in {text:?}");
            checked += 1;
        }
    }
    assert!(checked > 4_000, "{checked}");
}

proptest::proptest! {
    /// The line searches by the memchr crate say what the standard
    /// library's `find` / `rfind` of `'\n'` said, and the haystacks built
    /// from them are those the old code built.
    #[test]
    fn newline_searches_say_what_str_find_said(
        text in proptest::collection::vec(proptest::sample::select(vec!["a", "\n", "\r", " ", "é", "\\"]), 0..60),
        at in proptest::prelude::any::<proptest::sample::Index>(),
        lines in 0u8..4,
    ) {
        let text: String = text.concat();
        let nl: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
        let from = nl.get(at.index(nl.len().max(1))).map_or(0, |&i| i + 1);
        proptest::prop_assert_eq!(newline_from(&text, from), text[from..].find('\n').map_or(text.len(), |i| from + i));
        proptest::prop_assert_eq!(newline_before(&text, from), text[..from].rfind('\n'));
        let end = newline_from(&text, from);
        let index = text[..from].matches('\n').count();
        let line = LineRef { index, start: from, end };
        let before = if from == 0 { "" } else {
            let b = &text[..from - 1];
            b.rsplit('\n').next().unwrap_or(b).trim_end_matches('\r')
        };
        proptest::prop_assert_eq!(previous_line(&text, line), before);
        let mut old_end = line.end;
        for _ in 0..lines {
            if old_end >= text.len() {
                break;
            }
            old_end = text[old_end + 1..].find('\n').map_or(text.len(), |i| old_end + 1 + i);
        }
        proptest::prop_assert_eq!(span(&text, line, lines), &text[line.start..old_end]);
        if from > 0 {
            let b = Body::new(&text).line_before(line, 1);
            let start = text[..from - 1].rfind('\n').map_or(0, |i| i + 1);
            proptest::prop_assert_eq!((b.index, b.start, b.end), (index - 1, start, from - 1));
        }
    }
}
