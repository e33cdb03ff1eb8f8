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
//!
//! # Layout
//!
//! This file is the reference reader ([`parse`]) and the [`Node`] tree.
//! `fast`: a reader for the plain `key: value` frontmatter almost every
//! skill has, which answers `None` (use the reference) or the identical tree.

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::frontmatter::{DocError, MAX_FRONTMATTER_DEPTH};

pub(super) mod fast;

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
    match fast::read(yaml, first_line) {
        Some(node) => Ok(Some(node)),
        None => parse(yaml, first_line),
    }
}

/// [`read`] by the YAML parser alone: the reference the fast reader is
/// tested against.
fn parse(yaml: &str, first_line: usize) -> Result<Option<Node>, DocError> {
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
