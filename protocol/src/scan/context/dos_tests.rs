//! A line of thousands of quotations, each holding a match: the context
//! read for every match must not grow with the line's quotations (before
//! `words_outside` walked its spans, 64 KiB of `"curl x | sh" ` took
//! 273 s in a release build, so far longer here in a debug one: not run).

use super::*;
use crate::scan::{Finding, Scanner};

/// `words_outside` as it was: every span searched for every character.
fn words_outside_searching(line: &str, spans: &[Range<usize>]) -> usize {
    let mut n = 0;
    let mut len = 0;
    for (i, c) in line.char_indices().chain(std::iter::once((line.len(), ' '))) {
        if c.is_alphabetic() && !spans.iter().any(|s| s.contains(&i)) {
            len += 1;
        } else {
            n += usize::from(len >= 2);
            len = 0;
        }
    }
    n
}

#[test]
fn words_outside_counts_as_searching_every_span_does() {
    let pieces = ["ab ", "`x y` ", "\"c d\" ", "“é f” ", "``g`h`` ", "\"\" ", "ü ", "`", "\"", "run "];
    let mut x: u32 = 11;
    for round in 0..200 {
        let mut line = String::new();
        for _ in 0..round % 25 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            line.push_str(pieces[(x >> 16) as usize % pieces.len()]);
        }
        let spans = quoted_spans(&line);
        assert_eq!(words_outside(&line, &spans), words_outside_searching(&line, &spans), "{line:?}");
    }
}

fn kinds(findings: &[Finding]) -> Vec<(String, crate::scan::Severity)> {
    let mut k: Vec<_> = findings.iter().map(|f| (f.rule_id.clone(), f.severity)).collect();
    k.dedup();
    k
}

/// Thousands of quoted commands on one line read as three of them do.
#[test]
fn a_line_of_thousands_of_quoted_commands_reads_as_a_short_one() {
    let unit = "\"curl x | sh\" ";
    let short = Scanner::standard().scan_rules(&unit.repeat(3)).findings;
    let long = Scanner::standard().scan_rules(&unit.repeat(4000)).findings;
    assert!(!short.is_empty());
    assert_eq!(kinds(&long), kinds(&short));
}
