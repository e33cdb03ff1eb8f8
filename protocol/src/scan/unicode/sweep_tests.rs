//! `unicode.rs` edges session 29's whole-file sweep (#27) found unpinned:
//! which hidden kinds a line reports (only its own), what a finding's
//! excerpt shows, the byte-order mark's one place, a joiner's two
//! neighbours, the C1 controls and `is_invisible`.

use super::{clean_line, is_invisible};
use crate::scan::{Finding, Severity};

/// The findings `clean_line` makes on `line` as the body's line `index`.
fn findings(line: &str, index: usize) -> Vec<Finding> {
    let mut out = String::new();
    let mut found = Vec::new();
    clean_line(line, index, &mut out, &mut found);
    found
}

fn ids(line: &str) -> Vec<(String, Severity)> {
    findings(line, 0).into_iter().map(|f| (f.rule_id, f.severity)).collect()
}

/// A line reports the kinds it holds and no other: each kind has its own
/// bit, and a line with no hyphenation point reports none at `Low`.
#[test]
fn a_line_reports_only_the_kinds_it_holds() {
    assert_eq!(ids("a\u{200F}b"), [("unicode.bidi-mark".to_string(), Severity::High)]);
    assert_eq!(ids("a\u{202E}b"), [("unicode.bidi-control".to_string(), Severity::Critical)]);
    assert_eq!(ids("c\u{200B}url"), [("unicode.zero-width".to_string(), Severity::High)]);
    assert_eq!(
        ids("a\u{200F}b c\u{200B}d"),
        [
            ("unicode.zero-width".to_string(), Severity::High),
            ("unicode.bidi-mark".to_string(), Severity::High)
        ]
    );
    // Visible non-ASCII text alone: nothing, not even at `Low`.
    assert_eq!(ids("Café, naïve, \u{4E00}"), []);
}

/// A C1 control character (U+0080–U+009F: `CSI` starts a terminal escape
/// sequence as ESC `[` does) is reported as an ASCII control is.
#[test]
fn a_c1_control_is_reported_like_an_ascii_control() {
    assert_eq!(ids("looks fine\u{9B}8m hidden"), [("unicode.control-char".to_string(), Severity::High)]);
    assert_eq!(ids("x\u{80}y"), [("unicode.control-char".to_string(), Severity::High)]);
    assert_eq!(ids("x\u{9F}y"), [("unicode.control-char".to_string(), Severity::High)]);
    // Just past the range: a visible character.
    assert_eq!(ids("x\u{A0}y \u{7F}"), []);
}

/// A finding's excerpt spells the hidden character out where it is, on a
/// long line too: the excerpt is taken around it.
#[test]
fn an_excerpt_spells_the_hidden_character_out_around_it() {
    let f = findings("c\u{200B}url", 0);
    assert_eq!(f[0].excerpt, "c<U+200B>url");
    let long = format!("run c\u{200B}url {}", "x".repeat(200));
    let f = findings(&long, 0);
    assert!(f[0].excerpt.contains("c<U+200B>url"), "{}", f[0].excerpt);
    // A joiner and a selector are spelled out as well.
    assert_eq!(findings("a\u{200D}b", 0)[0].excerpt, "a<U+200D>b");
    assert_eq!(findings("c\u{FE0F}url", 0)[0].excerpt, "c<U+FE0F>url");
}

/// Tag characters that decode to no printable ASCII (a language tag's
/// opener and the cancel tag) are spelled out, not shown as empty hidden
/// text; and decoded tag text is the tag finding's excerpt only.
#[test]
fn tag_characters_decoding_to_nothing_are_spelled_out() {
    let f = findings("a\u{E0001}b\u{E007F}", 0);
    assert_eq!(f.len(), 1);
    assert!(f[0].excerpt.contains("<U+E0001>"), "{}", f[0].excerpt);
    let hi: String = "hi there".chars().map(|c| char::from_u32(0xE0000 + c as u32).unwrap()).collect();
    let f = findings(&format!("c\u{200B}url {hi}"), 0);
    let zw = f.iter().find(|f| f.rule_id == "unicode.zero-width").expect("zero-width");
    assert!(zw.excerpt.contains("c<U+200B>url"), "{}", zw.excerpt);
    let tag = f.iter().find(|f| f.rule_id == "unicode.tag-characters").expect("tags");
    assert_eq!(tag.excerpt, "hidden text: hi there");
}

/// A byte-order mark is spared at the very start of the body only: inside
/// the first line, or at the start of another line, it is hidden.
#[test]
fn a_byte_order_mark_is_spared_at_the_very_start_only() {
    assert_eq!(ids("\u{FEFF}# Notes"), []);
    assert_eq!(ids("a\u{FEFF}b"), [("unicode.zero-width".to_string(), Severity::High)]);
    let later: Vec<_> = findings("\u{FEFF}curl", 1).into_iter().map(|f| (f.rule_id, f.line)).collect();
    assert_eq!(later, [("unicode.zero-width".to_string(), 2)]);
    // Another zero-width character at the very start is no mark.
    assert_eq!(ids("\u{200B}curl"), [("unicode.zero-width".to_string(), Severity::High)]);
}

/// A joiner is kept only between two visible non-ASCII characters: one
/// such neighbour is not enough, and a non-ASCII blank is none.
#[test]
fn a_joiner_needs_a_visible_non_ascii_character_on_both_sides() {
    assert_eq!(ids("\u{1F468}\u{200D}\u{1F4BB}"), []);
    assert_eq!(ids("\u{1F468}\u{200D}x"), [("unicode.zero-width".to_string(), Severity::High)]);
    assert_eq!(ids("x\u{200D}\u{1F468}"), [("unicode.zero-width".to_string(), Severity::High)]);
    assert_eq!(ids("\u{4E00}\u{3000}\u{200C}\u{4E01}"), [("unicode.zero-width".to_string(), Severity::High)]);
}

/// A hyphenation point is reported at `Low` on its own line's number.
#[test]
fn a_hyphenation_point_is_reported_on_its_line() {
    let f: Vec<_> =
        findings("Daten\u{AD}schutz", 2).into_iter().map(|f| (f.rule_id, f.severity, f.line)).collect();
    assert_eq!(f, [("unicode.zero-width".to_string(), Severity::Low, 3)]);
}

/// Names and instance ids refuse what this module hides, the joiners and
/// line separators included, and control characters; visible text passes.
#[test]
fn is_invisible_covers_controls_joiners_and_separators() {
    for c in
        ['\u{7}', '\u{1B}', '\u{200D}', '\u{200C}', '\u{2028}', '\u{2029}', '\u{FE0F}', '\u{200B}', '\u{85}']
    {
        assert!(is_invisible(c), "{c:?}");
    }
    for c in ['a', 'é', ' ', '\u{4E00}', '\u{3000}', '\u{1F468}'] {
        assert!(!is_invisible(c), "{c:?}");
    }
}
