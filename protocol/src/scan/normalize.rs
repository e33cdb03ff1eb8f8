//! Normalisation: the copy of a body the rules actually read.
//!
//! Attackers write `ｃｕｒｌ` (fullwidth), put a zero-width space inside
//! `c\u{200B}url`, or reorder text with bidi controls so a reviewer reads
//! something else than the agent. The copy therefore has hidden characters
//! removed (see `unicode.rs`, which also reports them) and is in Unicode
//! NFKC, which folds compatibility forms such as fullwidth letters and
//! ligatures back to ASCII.
//!
//! The copy keeps the body's line structure exactly: line *n* of the copy is
//! line *n* of the original, so findings carry original line numbers. A
//! pure-ASCII body is its own normal form and cannot hold hidden Unicode; it
//! is borrowed as is, with no allocation.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

use super::Finding;
use super::unicode;

/// A normalised body and the hidden-character findings made on the way.
pub(super) struct Normalized<'a> {
    /// The text the rules read.
    pub(super) text: Cow<'a, str>,
    /// Hidden-character findings, by original line.
    pub(super) findings: Vec<Finding>,
}

/// Normalises `body`; see the module docs.
pub(super) fn normalize(body: &str) -> Normalized<'_> {
    if body.is_ascii() {
        return Normalized {
            text: Cow::Borrowed(body),
            findings: Vec::new(),
        };
    }
    let mut out = String::with_capacity(body.len() + body.len() / 8);
    let mut findings = Vec::new();
    let mut cleaned = String::new();
    for (index, line) in body.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        if line.is_ascii() {
            out.push_str(line);
            continue;
        }
        cleaned.clear();
        unicode::clean_line(line, index, &mut cleaned, &mut findings);
        // No compatibility mapping produces a newline today; mapping one to a
        // space anyway keeps line numbers right whatever a future Unicode does.
        out.extend(cleaned.nfkc().map(|c| if c == '\n' { ' ' } else { c }));
    }
    Normalized {
        text: Cow::Owned(out),
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_pure_ascii_bodies() {
        let n = normalize("# Title\nrun `cargo test`\n");
        assert!(matches!(n.text, Cow::Borrowed(_)));
        assert!(n.findings.is_empty());
    }

    #[test]
    fn folds_fullwidth_and_keeps_lines() {
        let n = normalize("a\nｃｕｒｌ ｘ\n\u{fb01}le\nb");
        assert_eq!(n.text, "a\ncurl x\nfile\nb");
    }

    #[test]
    fn removes_zero_width_and_keeps_line_count() {
        let body = "one\r\nc\u{200B}url\u{200D} x | s\u{2060}h\r\nthree";
        let n = normalize(body);
        assert_eq!(n.text, "one\r\ncurl x | sh\r\nthree");
        assert_eq!(n.text.lines().count(), body.lines().count());
        assert_eq!(n.findings.len(), 1);
        assert_eq!(n.findings[0].line, 2);
    }
}
