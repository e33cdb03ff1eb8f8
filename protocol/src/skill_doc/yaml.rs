//! The bounded YAML reader behind frontmatter parsing: YAML text in, a small
//! tree of scalars, sequences and mappings out. It knows nothing of skill keys.
//!
//! We do not use `yaml_rust2::YamlLoader`, for three reasons that all matter
//! on input from strangers:
//!
//! - it expands aliases, so ten lines of `&a`/`*a` can ask for gigabytes
//!   ("billion laughs");
//! - it recurses once per nesting level, and `- - - - …` buys a level for two
//!   bytes, so a 16 KiB block could exhaust the stack;
//! - it resolves `version: 1.0` to a float, which prints back as `1`.
//!
//! Instead we pull events from [`yaml_rust2::parser::Parser`] one at a time
//! and feed them to our own receiver, [`TreeBuilder`]. Pulling (rather than
//! `Parser::load`, which pushes events through the same recursion as the
//! loader) lets us stop at the first anchor, alias or level too deep, before
//! the parser reads any further. Scalars keep their source text.

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::frontmatter::{DocError, MAX_FRONTMATTER_DEPTH};

/// A YAML value, with the document line where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    /// A scalar, as written (no type resolution).
    Scalar {
        /// The scalar's text after YAML unquoting and folding.
        value: String,
        /// Whether it was written without quotes or block style; only plain
        /// scalars can mean null (`~`, `null`, empty).
        plain: bool,
        /// Document line (1-based).
        line: usize,
    },
    /// A sequence.
    Sequence {
        /// The items, in order.
        items: Vec<Node>,
        /// Document line (1-based).
        line: usize,
    },
    /// A mapping, in source order (duplicates kept: the caller decides).
    Mapping {
        /// Key/value pairs, in order.
        entries: Vec<(Node, Node)>,
        /// Document line (1-based).
        line: usize,
    },
}

impl Node {
    /// The document line where this value starts.
    pub(super) fn line(&self) -> usize {
        match self {
            Node::Scalar { line, .. } | Node::Sequence { line, .. } | Node::Mapping { line, .. } => *line,
        }
    }

    /// What kind of value this is, for error messages.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Node::Scalar { .. } => "a scalar",
            Node::Sequence { .. } => "a list",
            Node::Mapping { .. } => "a mapping",
        }
    }

    /// True for the plain scalars YAML reads as null: empty, `~`, `null`.
    pub(super) fn is_null(&self) -> bool {
        matches!(self, Node::Scalar { value, plain: true, .. } if is_null_text(value))
    }
}

/// True for the text of a plain scalar that YAML reads as null.
pub(super) fn is_null_text(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// Reads one YAML document into a [`Node`] tree. `Ok(None)` means the text
/// holds no document at all (empty, or only comments).
///
/// `first_line` is the document line of the YAML's first line, so errors
/// point into the `SKILL.md` and not into the frontmatter slice.
pub(super) fn read(yaml: &str, first_line: usize) -> Result<Option<Node>, DocError> {
    if let Some(node) = read_simple(yaml, first_line) {
        return Ok(Some(node));
    }
    let mut parser = Parser::new_from_str(yaml);
    let mut builder = TreeBuilder { first_line, stack: Vec::new(), root: None, documents: 0 };
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| DocError::InvalidYaml(format!("line {}: {}", builder.line(e.marker()), e.info())))?;
        if builder.accept(event, &mark)? == Flow::Done {
            return Ok(builder.root);
        }
    }
}

/// The tree of the frontmatter almost every skill has (see
/// [`read_simple_with`]). `None` for anything else, which then goes through
/// the YAML parser; where this answers, the parser gives the same tree (a test
/// checks it on generated input), several times slower.
fn read_simple(yaml: &str, first_line: usize) -> Option<Node> {
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
pub(super) enum SimpleValue<'a> {
    /// A plain scalar, as written.
    Scalar(&'a str),
    /// A flow list of words: the text between its brackets (see [`list_items`]).
    List(&'a str),
}

/// The words of a [`SimpleValue::List`].
pub(super) fn list_items(list: &str) -> impl Iterator<Item = &str> {
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
pub(super) fn read_simple_with<'a>(
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

/// Whether the event stream has ended.
#[derive(Debug, PartialEq)]
enum Flow {
    More,
    Done,
}

/// A collection whose end event has not arrived yet.
enum Open {
    Sequence { items: Vec<Node>, line: usize },
    Mapping { entries: Vec<(Node, Node)>, key: Option<Node>, line: usize },
}

/// Our event receiver: builds the tree, refusing what we do not accept.
///
/// The stack holds one entry per open collection, so its length is the
/// nesting depth; bounding it also bounds the recursion of `Node`'s `Drop`.
struct TreeBuilder {
    first_line: usize,
    stack: Vec<Open>,
    root: Option<Node>,
    documents: usize,
}

impl TreeBuilder {
    fn line(&self, mark: &Marker) -> usize {
        self.first_line + mark.line().saturating_sub(1)
    }

    fn accept(&mut self, event: Event, mark: &Marker) -> Result<Flow, DocError> {
        let line = self.line(mark);
        match event {
            Event::StreamEnd => return Ok(Flow::Done),
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(DocError::MultipleYamlDocuments { line });
                }
            }
            Event::Alias(_) => return Err(DocError::YamlAliasRefused { line }),
            Event::Scalar(value, style, anchor, _tag) => {
                refuse_anchor(anchor, line)?;
                let plain = style == TScalarStyle::Plain;
                self.attach(Node::Scalar { value, plain, line });
            }
            Event::SequenceStart(anchor, _tag) => {
                refuse_anchor(anchor, line)?;
                self.open(Open::Sequence { items: Vec::new(), line }, line)?;
            }
            Event::MappingStart(anchor, _tag) => {
                refuse_anchor(anchor, line)?;
                self.open(Open::Mapping { entries: Vec::new(), key: None, line }, line)?;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // The parser pairs start and end events, so the stack is never
                // empty here; if it were, ignoring the event is still safe.
                if let Some(open) = self.stack.pop() {
                    let node = match open {
                        Open::Sequence { items, line } => Node::Sequence { items, line },
                        Open::Mapping { entries, line, .. } => Node::Mapping { entries, line },
                    };
                    self.attach(node);
                }
            }
        }
        Ok(Flow::More)
    }

    fn open(&mut self, open: Open, line: usize) -> Result<(), DocError> {
        if self.stack.len() >= MAX_FRONTMATTER_DEPTH {
            return Err(DocError::NestingTooDeep { line, limit: MAX_FRONTMATTER_DEPTH });
        }
        self.stack.push(open);
        Ok(())
    }

    fn attach(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::Sequence { items, .. }) => items.push(node),
            Some(Open::Mapping { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
        }
    }
}

/// Anchors are refused as well as aliases: an anchor is only useful to an
/// alias, and refusing it reports the problem at its first sign.
fn refuse_anchor(anchor: usize, line: usize) -> Result<(), DocError> {
    if anchor == 0 { Ok(()) } else { Err(DocError::YamlAnchorRefused { line }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(value: &str, line: usize) -> Node {
        Node::Scalar { value: value.to_owned(), plain: true, line }
    }

    /// The YAML parser alone, without [`read_simple`].
    fn read_parsed(yaml: &str, first_line: usize) -> Result<Option<Node>, DocError> {
        let mut parser = Parser::new_from_str(yaml);
        let mut builder = TreeBuilder { first_line, stack: Vec::new(), root: None, documents: 0 };
        loop {
            let (event, mark) =
                parser.next_token().map_err(|e| DocError::InvalidYaml(e.info().to_owned()))?;
            if builder.accept(event, &mark)? == Flow::Done {
                return Ok(builder.root);
            }
        }
    }

    #[test]
    fn reads_simple_frontmatter_as_the_parser_does() {
        for yaml in [
            "name: orders-service-local-setup\ndescription: Run the orders service locally against Postgres.\n",
            "name: skill-00001\ndescription: Diagnose flaky tests with git, step 1\ntags: [debugging, git]\n",
            "name: x\ntags: []\nversion: 1.0\nconfidence: 0.75\nallowed-tools: Read, Grep, Bash(git log)\n",
            "name:   spaced  out  value\nname: duplicate\n",
            "tags: [a,b,  c.d, e_f-g]\ndescription: a - b = c+d (e/f)\n",
        ] {
            let simple = read_simple(yaml, 2);
            assert!(simple.is_some(), "{yaml:?}");
            assert_eq!(simple, read_parsed(yaml, 2).unwrap(), "{yaml:?}");
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
            assert_eq!(read_simple(yaml, 2), None, "{yaml:?}");
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
            if let Some(simple) = read_simple(&yaml, first_line) {
                proptest::prop_assert_eq!(Ok(Some(simple)), read_parsed(&yaml, first_line), "{:?}", yaml);
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
            if let Some(simple) = read_simple(&yaml, 2) {
                proptest::prop_assert_eq!(Ok(Some(simple)), read_parsed(&yaml, 2), "{:?}", yaml);
            }
        }
    }

    #[test]
    fn reads_nothing_from_comment_only_yaml() {
        assert_eq!(read("# only a comment\n", 2), Ok(None));
        assert_eq!(read("", 2), Ok(None));
    }

    #[test]
    fn keeps_scalar_source_text() {
        let node = read("version: 1.0\n", 2).unwrap().unwrap();
        assert_eq!(node, Node::Mapping { entries: vec![(scalar("version", 2), scalar("1.0", 2))], line: 2 });
    }

    #[test]
    fn reports_document_lines() {
        let node = read("a: b\nc:\n  - d\n", 5).unwrap().unwrap();
        let Node::Mapping { entries, .. } = node else { panic!("not a mapping") };
        assert_eq!(entries[1].1.line(), 7);
    }

    #[test]
    fn refuses_alias_before_expanding_it() {
        let yaml = "a: &x [1, 2]\nb: *x\n";
        assert_eq!(read(yaml, 2), Err(DocError::YamlAnchorRefused { line: 2 }));
    }

    #[test]
    fn refuses_alias_to_undefined_anchor() {
        // An alias without its anchor is a scan error in yaml-rust2; either
        // way it must not load.
        assert!(read("b: *x\n", 2).is_err());
    }

    #[test]
    fn refuses_deep_block_nesting() {
        let yaml = "- ".repeat(4000) + "x\n";
        assert_eq!(read(&yaml, 2), Err(DocError::NestingTooDeep { line: 2, limit: MAX_FRONTMATTER_DEPTH }));
    }

    #[test]
    fn refuses_deep_flow_nesting() {
        let yaml = "a: ".to_owned() + &"[".repeat(100);
        assert_eq!(read(&yaml, 2), Err(DocError::NestingTooDeep { line: 2, limit: MAX_FRONTMATTER_DEPTH }));
        // Deeper still, yaml-rust2's scanner gives up first, looking ahead
        // for a key; refused either way.
        let yaml = "a: ".to_owned() + &"[".repeat(4000);
        assert!(read(&yaml, 2).is_err());
    }

    #[test]
    fn accepts_nesting_up_to_the_limit() {
        let yaml = "- ".repeat(MAX_FRONTMATTER_DEPTH) + "x\n";
        assert!(read(&yaml, 2).is_ok());
        let yaml = "- ".repeat(MAX_FRONTMATTER_DEPTH + 1) + "x\n";
        assert!(read(&yaml, 2).is_err());
    }

    #[test]
    fn refuses_second_document() {
        assert_eq!(read("a: b\n--- \nc: d\n", 2), Err(DocError::MultipleYamlDocuments { line: 3 }));
    }

    #[test]
    fn reports_scan_errors_with_document_line() {
        let err = read("a: b\nc: \"unterminated\n", 10).unwrap_err();
        let DocError::InvalidYaml(message) = err else { panic!("wrong error: {err:?}") };
        // The quote opens on the YAML's second line, document line 11.
        assert_eq!(message, "line 11: while scanning a quoted scalar, found unexpected end of stream");
    }
}
