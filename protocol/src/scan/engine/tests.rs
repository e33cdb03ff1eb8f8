//! Tests of the engine's machinery: the prefilter keys' length, newline
//! counting, the line cursor and backslash continuations.

use super::text::{LineCursor, count_newlines};
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
        ]
    };
    for (entries, after) in [(MAX_KEPT_ENTRIES, MAX_KEPT_ENTRIES), (MAX_KEPT_ENTRIES + 1, 0)] {
        let mut s = Scratch::default();
        s.ends.reserve_exact(entries);
        s.walk.analyzer_lines.reserve_exact(entries);
        s.lines.reserve_exact(entries);
        s.walk.secret_lines.reserve_exact(entries);
        s.walk.lower.text.reserve_exact(entries);
        assert_eq!(capacities(&s), [entries; 5]);
        s.trim();
        assert_eq!(capacities(&s), [after; 5], "{entries} entries");
    }
}
