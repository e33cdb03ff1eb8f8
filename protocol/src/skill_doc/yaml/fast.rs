//! The fast YAML reader: the plain `key: value` frontmatter almost every
//! skill has, one line after the other, read in one pass over the bytes.
//!
//! Contract: [`read`] answers `None` = use the reference path (the event
//! reader, `yaml::parse`); `Some` = the identical tree the reference gives
//! (the tests below hold the two together on generated input). The parser
//! is several times slower on this common shape.
//!
//! [`read_simple_with`] is the same reading for callers that want the
//! entries without building a tree (the frontmatter's own fast path).

use super::Node;

/// The tree of the frontmatter almost every skill has (see
/// [`read_simple_with`]); `None` for anything else.
pub(super) fn read(yaml: &str, first_line: usize) -> Option<Node> {
    let mut entries = Vec::new();
    read_simple_with(yaml, first_line, |key, value, line| {
        let scalar = |value: &str| Node::Scalar { value: value.to_owned(), plain: true, line };
        let node = match value {
            SimpleValue::Scalar(text) => scalar(text),
            SimpleValue::List(list) => Node::Sequence { items: list_items(list).map(scalar).collect(), line },
        };
        entries.push((scalar(key), node));
        Some(())
    })?;
    Some(Node::Mapping { entries, line: first_line })
}

/// The value of one line of the simple form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::skill_doc) enum SimpleValue<'a> {
    /// A plain scalar, as written.
    Scalar(&'a str),
    /// A flow list of words: the text between its brackets (see [`list_items`]).
    List(&'a str),
}

/// The words of a [`SimpleValue::List`].
pub(in crate::skill_doc) fn list_items(list: &str) -> impl Iterator<Item = &str> {
    let items = (!list.is_empty()).then(|| split_at(list, b',').map(|item| item.trim_start_matches(' ')));
    items.into_iter().flatten()
}

/// Calls `entry(key, value, line)` for each line of the frontmatter almost
/// every skill has: one `key: value` line after the other, each value a plain
/// word-like scalar or a flow list of such words (`tags: [git, debugging]`).
/// `None` when the text is not all of that form (whatever `entry` was called
/// with is then to be dropped) or when `entry` answers `None`.
///
/// Accepted, per line: a key (a letter, then letters, digits, `_`, `-`), `:`,
/// one or more spaces, and a value that is either a letter or digit followed
/// by letters, digits, spaces and `.,_/()+=-` (not ending in a space), or
/// `[` words separated by `,` and spaces `]` (a word: a letter or digit,
/// then letters, digits, `.`, `_`, `-`). Every line ends with `\n`; no tabs,
/// carriage returns, comments, quotes or other indicators.
pub(in crate::skill_doc) fn read_simple_with<'a>(
    yaml: &'a str,
    first_line: usize,
    mut entry: impl FnMut(&'a str, SimpleValue<'a>, usize) -> Option<()>,
) -> Option<()> {
    yaml.strip_suffix('\n')?;
    // One pass over the bytes; past the end reads as 0, which no rule accepts.
    let bytes = yaml.as_bytes();
    let byte = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut pos = 0;
    let mut line = first_line;
    loop {
        let key_start = pos;
        if !byte(pos).is_ascii_alphabetic() {
            return None;
        }
        pos += 1;
        while byte(pos).is_ascii_alphanumeric() || matches!(byte(pos), b'_' | b'-') {
            pos += 1;
        }
        let key = &yaml[key_start..pos];
        if byte(pos) != b':' || byte(pos + 1) != b' ' {
            return None;
        }
        pos += 2;
        while byte(pos) == b' ' {
            pos += 1;
        }
        let value = if byte(pos) == b'[' {
            pos += 1;
            let list_start = pos;
            if byte(pos) != b']' {
                loop {
                    if !byte(pos).is_ascii_alphanumeric() {
                        return None;
                    }
                    pos += 1;
                    while byte(pos).is_ascii_alphanumeric() || matches!(byte(pos), b'.' | b'_' | b'-') {
                        pos += 1;
                    }
                    match byte(pos) {
                        b']' => break,
                        b',' => pos += 1,
                        _ => return None,
                    }
                    while byte(pos) == b' ' {
                        pos += 1;
                    }
                }
            }
            let list = &yaml[list_start..pos];
            pos += 1;
            SimpleValue::List(list)
        } else {
            let start = pos;
            if !byte(pos).is_ascii_alphanumeric() {
                return None;
            }
            pos += 1;
            while byte(pos).is_ascii_alphanumeric()
                || matches!(byte(pos), b' ' | b'.' | b',' | b'_' | b'/' | b'(' | b')' | b'+' | b'=' | b'-')
            {
                pos += 1;
            }
            let text = &yaml[start..pos];
            if text.ends_with(' ') {
                return None;
            }
            SimpleValue::Scalar(text)
        };
        if byte(pos) != b'\n' {
            return None;
        }
        pos += 1;
        entry(key, value, line)?;
        if pos == bytes.len() {
            return Some(());
        }
        line += 1;
    }
}

/// `text.split(sep as char)` for an ASCII `sep`, by a plain byte loop:
/// `str::split` sets up a memchr search per piece, which costs more than
/// these short lists.
fn split_at(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.bytes().position(|b| b == sep) {
            Some(end) => {
                rest = Some(&text[end + 1..]);
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill_doc::yaml::parse;

    #[test]
    fn reads_simple_frontmatter_as_the_parser_does() {
        for yaml in [
            "name: orders-service-local-setup\ndescription: Run the orders service locally against Postgres.\n",
            "name: skill-00001\ndescription: Diagnose flaky tests with git, step 1\ntags: [debugging, git]\n",
            "name: x\ntags: []\nversion: 1.0\nconfidence: 0.75\nallowed-tools: Read, Grep, Bash(git log)\n",
            "name:   spaced  out  value\nname: duplicate\n",
            "tags: [a,b,  c.d, e_f-g]\ndescription: a - b = c+d (e/f)\n",
        ] {
            let simple = read(yaml, 2);
            assert!(simple.is_some(), "{yaml:?}");
            assert_eq!(simple, parse(yaml, 2).unwrap(), "{yaml:?}");
        }
        for yaml in [
            "",
            "name: x",
            "name: x\r\n",
            "name: x # comment\n",
            "name: 'x'\n",
            "name: x\n\n",
            "name:\n",
            "name: x \n",
            "name: a: b\n",
            "- x\n",
            "tags: [a, [b]]\n",
            "tags: [a,]\n",
            "tags: [ a]\n",
            "name: x\n  y\n",
        ] {
            assert_eq!(read(yaml, 2), None, "{yaml:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2000,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Wherever the fast path answers, the YAML parser gives the same tree.
        #[test]
        fn simple_reading_agrees_with_the_parser(
            lines in proptest::collection::vec(
                ("[a-zA-Z_-][a-zA-Z0-9_ -]{0,6}", "(:|: |:  |::|: \\[)", "[a-zA-Z0-9 .,_/()+=\\[\\]:#'\"*&!|>%@`-]{0,12}"),
                1..6,
            ),
            first_line in 1usize..5,
        ) {
            let yaml: String = lines.iter().map(|(k, sep, v)| format!("{k}{sep}{v}\n")).collect();
            if let Some(simple) = read(&yaml, first_line) {
                proptest::prop_assert_eq!(Ok(Some(simple)), parse(&yaml, first_line), "{:?}", yaml);
            }
        }

        /// The same, on input mostly of the accepted shape.
        #[test]
        fn simple_reading_agrees_with_the_parser_on_likely_input(
            lines in proptest::collection::vec(
                (
                    "[a-zA-Z][a-zA-Z0-9_-]{0,8}",
                    "(: |:  )",
                    "([a-zA-Z0-9][a-zA-Z0-9 .,_/()+=-]{0,24}|\\[([a-z0-9][a-z0-9._-]{0,4}(, ?| ,)?){0,4}\\])",
                ),
                1..8,
            ),
        ) {
            let yaml: String = lines.iter().map(|(k, sep, v)| format!("{k}{sep}{v}\n")).collect();
            if let Some(simple) = read(&yaml, 2) {
                proptest::prop_assert_eq!(Ok(Some(simple)), parse(&yaml, 2), "{:?}", yaml);
            }
        }
    }
}
