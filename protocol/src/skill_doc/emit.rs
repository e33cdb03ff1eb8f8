//! Rebuilding a `SKILL.md` from packet fields: [`with_frontmatter`].
//!
//! The Go reference serves bodies stripped of their frontmatter (`ECP.md` ›
//! Flaws, 3), so a node that wants a complete `SKILL.md` puts one back from
//! `skillName` and `skillDescription`, which come from the peer and may hold
//! anything. The output must be YAML that [`parse`](super::parse) reads back
//! to the same values, whatever the input.

use std::fmt::Write as _;

use super::frontmatter::MAX_FRONTMATTER_BYTES;

/// Bytes the emitted YAML spends around the two values:
/// `name: ` + LF + `description: ` + LF.
const OVERHEAD: usize = "name: \n".len() + "description: \n".len();

/// Room for the emitted name scalar. Valid names are at most 64 bytes; the
/// rest is headroom so an invalid name still comes back recognisable.
const NAME_BUDGET: usize = 1024;

/// Room for the emitted description scalar: what is left of the limit.
const DESCRIPTION_BUDGET: usize = MAX_FRONTMATTER_BYTES - OVERHEAD - NAME_BUDGET;

/// Builds a SKILL.md with frontmatter from a name, a description and a bare
/// body.
///
/// The two values are written as YAML scalars: plain (`name: my-skill`) when
/// that is unambiguous, so a typical skill comes out exactly as agents write
/// it, and double-quoted with escapes otherwise. Line breaks are first folded
/// to spaces with [`fold_line_breaks`], since a description is one line.
/// The body follows the closing `---` line unchanged.
///
/// `parse(&with_frontmatter(n, d, b))` gives back name `fold_line_breaks(n)`,
/// description `fold_line_breaks(d)` and body `b` exactly. The one exception
/// keeps the result parseable: a value whose emitted form would not fit in
/// [`MAX_FRONTMATTER_BYTES`] (over 1 KiB for the name, about 15 KiB for the
/// description) is cut at a character boundary to fit.
#[must_use]
pub fn with_frontmatter(name: &str, description: &str, body: &str) -> String {
    let mut out =
        String::with_capacity("---\n".len() * 2 + OVERHEAD + name.len() + description.len() + body.len() + 8);
    out.push_str("---\nname: ");
    push_scalar(&mut out, &fold_line_breaks(name), NAME_BUDGET);
    out.push_str("\ndescription: ");
    push_scalar(&mut out, &fold_line_breaks(description), DESCRIPTION_BUDGET);
    out.push_str("\n---\n");
    out.push_str(body);
    out
}

/// Replaces each line break (LF, CRLF, CR, and the Unicode breaks VT, FF,
/// NEL, LS, PS) with one space: what [`with_frontmatter`] does to a name or
/// description before writing it.
#[must_use]
pub fn fold_line_breaks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_line_break(c) {
            if c == '\r' {
                chars.next_if_eq(&'\n');
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Writes `value` as a YAML scalar of at most `budget` bytes.
fn push_scalar(out: &mut String, value: &str, budget: usize) {
    if value.len() <= budget && is_plain_safe(value) {
        out.push_str(value);
        return;
    }
    out.push('"');
    let mut used = 2; // the two quotes
    let mut escaped = String::new();
    for c in value.chars() {
        escaped.clear();
        push_escaped(&mut escaped, c);
        if used + escaped.len() > budget {
            break;
        }
        used += escaped.len();
        out.push_str(&escaped);
    }
    out.push('"');
}

/// Whether `value` reads back as the same string when written plain, both for
/// our parser and for YAML 1.1 loaders other agents use (which would turn
/// `yes` into a boolean and `1.0` into a number). Deliberately stricter than
/// YAML: anything doubtful is quoted, which is always correct.
fn is_plain_safe(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    let starts_badly = first.is_ascii_digit()
        || matches!(
            first,
            '-' | '?'
                | ':'
                | ','
                | '['
                | ']'
                | '{'
                | '}'
                | '#'
                | '&'
                | '*'
                | '!'
                | '|'
                | '>'
                | '\''
                | '"'
                | '%'
                | '@'
                | '`'
                | '+'
                | '.'
                | '~'
                | ' '
        );
    let reserved = matches!(
        value.to_ascii_lowercase().as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "inf" | "nan" | "infinity"
    );
    !starts_badly
        && !reserved
        && !value.ends_with([' ', ':'])
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.chars().any(needs_escape)
}

/// Characters that are not printable YAML, or that some readers take for a
/// line break or a byte-order mark.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}')
}

/// Writes `c` as it goes between double quotes.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\t' => out.push_str("\\t"),
        // Every such character is in the Basic Multilingual Plane, so four
        // hex digits suffice.
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{:04X}", u32::from(c));
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn round_trip(name: &str, description: &str, body: &str) {
        let text = with_frontmatter(name, description, body);
        let doc = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let fm = doc.frontmatter.unwrap();
        assert_eq!(fm.name.as_deref(), Some(fold_line_breaks(name).as_str()), "{text}");
        assert_eq!(fm.description.as_deref(), Some(fold_line_breaks(description).as_str()), "{text}");
        assert_eq!(doc.body, body);
    }

    #[test]
    fn writes_simple_values_plain() {
        assert_eq!(
            with_frontmatter("git-bisect", "Find a regression with git bisect", "# Body\n"),
            "---\nname: git-bisect\ndescription: Find a regression with git bisect\n---\n# Body\n"
        );
    }

    #[test]
    fn quotes_description_with_yaml_syntax() {
        let cases = [
            "Use: git",
            "- a list?",
            "# a comment?",
            "text # comment",
            "\"quoted\"",
            "'single'",
            "&anchor",
            "*alias",
            "!tag",
            "{a: b}",
            "[a, b]",
            "| block",
            "> folded",
            "%directive",
            "@at",
            "`tick",
            "ends with colon:",
            " leading space",
            "trailing space ",
            "",
            "null",
            "~",
            "yes",
            "1.0",
            "12 steps",
            "back\\slash and \"quote\" inside",
            "tab\there",
            "bell\u{7}",
            "bom\u{feff}",
            "del\u{7f}",
            "c1\u{9b}",
            "nonchar\u{ffff}",
        ];
        for case in cases {
            round_trip("x", case, "body");
        }
        assert!(with_frontmatter("x", "Use: git", "").contains("description: \"Use: git\"\n"));
    }

    #[test]
    fn folds_newlines_in_description() {
        let text = with_frontmatter("x", "line one\nline two\r\nthree\rfour\u{2028}five", "b");
        assert!(text.contains("description: line one line two three four five\n"), "{text}");
        round_trip("x", "a\n---\nname: evil\n", "b");
        round_trip("x", "\n\n", "b");
    }

    #[test]
    fn hostile_description_cannot_close_frontmatter() {
        let text = with_frontmatter("x", "d\n---\n# injected body", "real body");
        let doc = parse(&text).unwrap();
        assert_eq!(doc.body, "real body");
    }

    #[test]
    fn keeps_body_exactly() {
        for body in ["", "\n", "---\n", "...\nrest", "\r\n# CRLF\r\n", "no newline"] {
            round_trip("x", "d", body);
        }
    }

    #[test]
    fn keeps_unicode_description() {
        round_trip("x", "Ünïcødé — 日本語 🦀, with \u{200b} zero width", "b");
    }

    #[test]
    fn quotes_invalid_name() {
        round_trip("../etc: passwd", "d", "b");
        round_trip("", "d", "b");
    }

    #[test]
    fn cuts_description_too_large_for_frontmatter() {
        let description = "é".repeat(MAX_FRONTMATTER_BYTES);
        let text = with_frontmatter("x", &description, "body");
        let fm = parse(&text).unwrap().frontmatter.unwrap();
        let got = fm.description.unwrap();
        assert!(description.starts_with(&got));
        assert!(got.len() > MAX_FRONTMATTER_BYTES / 2);
    }

    #[test]
    fn cuts_escaped_description_within_budget() {
        let description = "\u{1}".repeat(MAX_FRONTMATTER_BYTES);
        let text = with_frontmatter(&"n".repeat(5000), &description, "body");
        assert!(parse(&text).is_ok());
    }

    #[test]
    fn fold_line_breaks_leaves_other_text() {
        assert_eq!(fold_line_breaks("a\r\n\nb\tc"), "a  b\tc");
    }
}
