//! The frontmatter block of a `SKILL.md`: finding the `---` fences, reading
//! the YAML between them into a [`Frontmatter`], and the errors of doing so.
//!
//! The accepted format is documented on [`parse`].

use thiserror::Error;

use super::SkillDocument;
use super::yaml::fast::{self as fast_yaml, SimpleValue};
use super::yaml::{self, Node};

/// Largest frontmatter block accepted, in bytes of YAML between the fences.
///
/// Real frontmatter is a few hundred bytes; the bound caps the YAML parser's
/// work on hostile input, and lets [`parse`] stop looking for the closing
/// fence early instead of reading a whole 100 KB body.
pub const MAX_FRONTMATTER_BYTES: usize = 16 * 1024;

/// Deepest nesting of YAML lists and mappings accepted in a frontmatter (the
/// top-level mapping counts as one). The keys ECP reads need two.
pub const MAX_FRONTMATTER_DEPTH: usize = 16;

/// The keys of a SKILL.md frontmatter block that ECP reads. Other keys are
/// ignored, so a skill written for another agent framework still parses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// `name`; the skill's identifier, expected to equal the packet's
    /// `skillName` (see [`frontmatter_mismatch`](super::frontmatter_mismatch)).
    pub name: Option<String>,
    /// `description`; one line in practice, but kept as written here.
    pub description: Option<String>,
    /// `tags`: a YAML list, or a comma- or space-separated string.
    pub tags: Vec<String>,
    /// `version`, as written (`1.0` stays `"1.0"`).
    pub version: Option<String>,
    /// `allowed-tools` (also spelled `allowed_tools`): a YAML list, or a
    /// comma- or space-separated string such as `Read, Grep, Bash(git:*)`.
    /// Entries are kept whole, arguments included.
    pub allowed_tools: Vec<String>,
    /// `confidence` (0..=1), which a local agent may set on skills it wrote.
    pub confidence: Option<f64>,
    /// `shareable`: `false` keeps the skill on the node that holds it
    /// (it is stored and shown to the agent, never served to peers).
    pub shareable: Option<bool>,
}

/// Why a document could not be parsed. Lines are lines of the whole
/// `SKILL.md`, counted from 1 (the opening `---` is line 1).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DocError {
    /// The frontmatter is not valid YAML. The message starts with the line.
    #[error("frontmatter is not valid YAML: {0}; fix the YAML between the `---` lines")]
    InvalidYaml(String),
    /// The text opens a frontmatter with `---` but no `---` or `...` line
    /// closes it.
    #[error(
        "frontmatter opened with `---` on line 1 is never closed; \
         end it with a line holding only `---`"
    )]
    FrontmatterNotClosed,
    /// No closing fence within [`MAX_FRONTMATTER_BYTES`].
    #[error(
        "frontmatter runs past {limit} bytes without a closing `---` line; \
         keep the YAML block short and close it"
    )]
    FrontmatterTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
    /// The YAML is a list or a scalar, not `key: value` lines.
    #[error("frontmatter on line {line} is {found}, not a mapping; write `key: value` lines")]
    FrontmatterNotAMapping {
        /// What the YAML held instead.
        found: &'static str,
        /// Where it starts.
        line: usize,
    },
    /// The YAML uses an alias (`*name`). Refused, never expanded, so a
    /// "billion laughs" document costs nothing.
    #[error("frontmatter uses a YAML alias on line {line}; write the value out instead")]
    YamlAliasRefused {
        /// Where the alias is.
        line: usize,
    },
    /// The YAML defines an anchor (`&name`), which only an alias could use.
    #[error("frontmatter defines a YAML anchor on line {line}; remove it and write values out")]
    YamlAnchorRefused {
        /// Where the anchor is.
        line: usize,
    },
    /// Lists and mappings nest deeper than [`MAX_FRONTMATTER_DEPTH`].
    #[error("frontmatter nests deeper than {limit} levels on line {line}; flatten it")]
    NestingTooDeep {
        /// Where the level that went too deep opens.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// The YAML holds a second document (`--- ` with content after it).
    #[error("frontmatter holds a second YAML document on line {line}; keep one block")]
    MultipleYamlDocuments {
        /// Where the second document starts.
        line: usize,
    },
    /// A key ECP reads appears twice. Parsers disagree on which one wins, so
    /// a duplicate could show a reviewer one name and an agent another.
    #[error("frontmatter key `{key}` appears twice (again on line {line}); keep one")]
    DuplicateKey {
        /// The key, as written.
        key: String,
        /// Where the second occurrence is.
        line: usize,
    },
    /// A key ECP reads holds the wrong kind of value, e.g. `name: [a, b]`.
    #[error("frontmatter key `{key}` on line {line} is {found}; it must be {expected}")]
    WrongValueType {
        /// The key, as written.
        key: String,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: &'static str,
        /// Where the value is.
        line: usize,
    },
    /// `confidence` is not a number.
    #[error("frontmatter `confidence` on line {line} is {value:?}, not a number; use 0 to 1")]
    ConfidenceNotANumber {
        /// The value, as written.
        value: String,
        /// Where it is.
        line: usize,
    },
    /// `confidence` is a number outside 0..=1 (or not finite).
    #[error("frontmatter `confidence` on line {line} is {value}, outside 0 to 1")]
    ConfidenceOutOfRange {
        /// The value, as written.
        value: String,
        /// Where it is.
        line: usize,
    },
}

/// Parses a SKILL.md text into its frontmatter and body.
///
/// The format, as agent frameworks write it (ECP itself only says "YAML
/// frontmatter holding `name` and `description`", `ECP.md` › intro):
///
/// ```text
/// ---                      first line of the text (after an optional UTF-8 BOM)
/// name: git-bisect-regression
/// description: Find the commit that introduced a regression
/// allowed-tools: Read, Grep, Bash(git:*)
/// ---                      or `...`; the body starts on the next line
/// # Markdown body
/// ```
///
/// Lines may end in LF or CRLF; fence lines may carry trailing spaces or
/// tabs. The YAML between the fences may hold at most
/// [`MAX_FRONTMATTER_BYTES`], nest at most [`MAX_FRONTMATTER_DEPTH`] levels,
/// and use no anchors or aliases.
///
/// A text whose first line is not `---` has no frontmatter: the result is
/// `frontmatter: None` and the whole text, unchanged (BOM included), as
/// body. Otherwise the body is everything after the line that closes the
/// frontmatter, byte for byte.
///
/// # Errors
///
/// [`DocError`] when the frontmatter is unclosed, too large, not YAML, uses
/// anchors or aliases, nests too deep, or a key ECP reads is duplicated or
/// has a value of the wrong type. Unknown keys are never an error.
pub fn parse(text: &str) -> Result<SkillDocument<'_>, DocError> {
    parse_keeping(text, Keep::All)
}

/// [`parse`], keeping only the frontmatter's `name` (the other keys are
/// checked all the same, so it fails where [`parse`] fails). For the merge,
/// which reads nothing else and would copy the rest only to drop it.
pub(crate) fn parse_name(text: &str) -> Result<SkillDocument<'_>, DocError> {
    parse_keeping(text, Keep::Name)
}

/// The keys, in order, of a frontmatter's YAML (the text between its
/// fences) when it is all of the plain form almost every skill has: one
/// `key: value` line after the other, each value a plain word-like scalar or
/// a flow list of such words, every line ending in `\n` (the form
/// `yaml::fast` reads; its tests hold it to the parser's tree). `None` for
/// anything else. For a caller that edits such a frontmatter and must know
/// what YAML it holds without parsing it (the node's stamp of received
/// skills' files).
pub fn plain_keys(yaml: &str) -> Option<Vec<&str>> {
    let mut keys = Vec::new();
    fast_yaml::read_simple_with(yaml, YAML_FIRST_LINE, |key, _, _| {
        keys.push(key);
        Some(())
    })?;
    Some(keys)
}

/// What [`read_plain`] copies out of the YAML.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    All,
    Name,
}

fn parse_keeping(text: &str, keep: Keep) -> Result<SkillDocument<'_>, DocError> {
    let Some(block) = split(text)? else {
        return Ok(SkillDocument { frontmatter: None, body: text });
    };
    let frontmatter = match read_plain(block.yaml, keep) {
        Some(frontmatter) => frontmatter,
        None => interpret(yaml::read(block.yaml, YAML_FIRST_LINE)?, keep)?,
    };
    Ok(SkillDocument { frontmatter: Some(frontmatter), body: block.body })
}

/// The YAML starts on line 2, after the opening fence.
const YAML_FIRST_LINE: usize = 2;

/// A text cut at its fences.
struct Block<'a> {
    yaml: &'a str,
    body: &'a str,
}

/// Finds the frontmatter fences. `Ok(None)`: the text has no frontmatter.
fn split(text: &str) -> Result<Option<Block<'_>>, DocError> {
    let rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, after_open) = next_line(rest);
    if !is_fence(first, "---") {
        return Ok(None);
    }
    let mut remaining = after_open;
    let mut yaml_len = 0;
    while !remaining.is_empty() {
        let (line, next) = next_line(remaining);
        if is_fence(line, "---") || is_fence(line, "...") {
            return Ok(Some(Block { yaml: &after_open[..yaml_len], body: next }));
        }
        yaml_len += remaining.len() - next.len();
        if yaml_len > MAX_FRONTMATTER_BYTES {
            return Err(DocError::FrontmatterTooLarge { limit: MAX_FRONTMATTER_BYTES });
        }
        remaining = next;
    }
    Err(DocError::FrontmatterNotClosed)
}

/// Splits off the first line: its content (a CR before the LF is left on it)
/// and the text after its LF.
fn next_line(text: &str) -> (&str, &str) {
    // A byte loop: `str::find` costs more than these short lines.
    match text.bytes().position(|b| b == b'\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

fn is_fence(line: &str, marker: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == marker
}

/// The keys ECP reads, so duplicates can be spotted across spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Name,
    Description,
    Tags,
    Version,
    AllowedTools,
    Confidence,
    Shareable,
}

impl Key {
    fn from_yaml(key: &str) -> Option<Key> {
        Some(match key {
            "name" => Key::Name,
            "description" => Key::Description,
            "tags" => Key::Tags,
            "version" => Key::Version,
            "allowed-tools" | "allowed_tools" => Key::AllowedTools,
            "confidence" => Key::Confidence,
            "shareable" => Key::Shareable,
            _ => return None,
        })
    }
}

/// The frontmatter of plain `key: value` lines ([`fast_yaml::read_simple_with`]),
/// read straight into a [`Frontmatter`]: no YAML tree, and no string
/// allocated but the values kept. `None` when the YAML is not of that form,
/// or holds something [`interpret`] refuses (a repeated key, a list where a
/// string belongs, a bad confidence): the full path then reads it and says
/// why. Where this answers, the full path gives the same (a test checks it).
fn read_plain(yaml: &str, keep: Keep) -> Option<Frontmatter> {
    let mut frontmatter = Frontmatter::default();
    let mut seen = 0u8;
    let all = keep == Keep::All;
    fast_yaml::read_simple_with(yaml, YAML_FIRST_LINE, |key, value, _| {
        let Some(field) = Key::from_yaml(key) else {
            return Some(());
        };
        let bit = 1u8 << (field as u8);
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        // A plain scalar or list is always a valid string or list: only a
        // list where a scalar belongs, and the confidence, can be refused.
        match (field, value) {
            (Key::Name, SimpleValue::Scalar(text)) => frontmatter.name = plain_string(text),
            (Key::Description, SimpleValue::Scalar(text)) if all => {
                frontmatter.description = plain_string(text);
            }
            (Key::Version, SimpleValue::Scalar(text)) if all => frontmatter.version = plain_string(text),
            (Key::Tags, value) if all => frontmatter.tags = plain_list(value),
            (Key::AllowedTools, value) if all => frontmatter.allowed_tools = plain_list(value),
            (Key::Description | Key::Version, SimpleValue::Scalar(_))
            | (Key::Tags | Key::AllowedTools, _) => {}
            (Key::Confidence, SimpleValue::Scalar(text)) => frontmatter.confidence = plain_confidence(text)?,
            (Key::Shareable, SimpleValue::Scalar(text)) if all => frontmatter.shareable = plain_bool(text)?,
            (Key::Shareable, _) if !all => {}
            _ => return None,
        }
        Some(())
    })?;
    Some(frontmatter)
}

/// [`string`] of a plain scalar.
fn plain_string(text: &str) -> Option<String> {
    (!yaml::is_null_text(text)).then(|| text.to_owned())
}

/// [`list`] of a plain scalar or a flow list of words.
fn plain_list(value: SimpleValue<'_>) -> Vec<String> {
    match value {
        SimpleValue::Scalar(text) if yaml::is_null_text(text) => Vec::new(),
        SimpleValue::Scalar(text) => split_list(text),
        SimpleValue::List(list) => fast_yaml::list_items(list)
            .filter(|item| !yaml::is_null_text(item))
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect(),
    }
}

/// [`confidence`] of a plain scalar; `None` where that is an error.
fn plain_confidence(text: &str) -> Option<Option<f64>> {
    if yaml::is_null_text(text) {
        return Some(None);
    }
    let number = text.trim().parse::<f64>().ok()?;
    (number.is_finite() && (0.0..=1.0).contains(&number)).then_some(Some(number))
}

/// [`boolean`] of a plain scalar; `None` where that is an error.
fn plain_bool(text: &str) -> Option<Option<bool>> {
    if yaml::is_null_text(text) {
        return Some(None);
    }
    bool_text(text).map(Some)
}

/// YAML 1.2's core booleans.
fn bool_text(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn interpret(root: Option<Node>, keep: Keep) -> Result<Frontmatter, DocError> {
    let all = keep == Keep::All;
    let mut frontmatter = Frontmatter::default();
    let entries = match root {
        None => return Ok(frontmatter),
        Some(node) if node.is_null() => return Ok(frontmatter),
        Some(Node::Mapping { entries, .. }) => entries,
        Some(other) => {
            return Err(DocError::FrontmatterNotAMapping { found: other.kind(), line: other.line() });
        }
    };
    // One bit per key ECP reads: seven keys need no hash set.
    let mut seen = 0u8;
    for (key, value) in entries {
        // A list or mapping used as a key (`? [a]: b`) cannot name a field we read.
        let Node::Scalar { value: key, line, .. } = key else {
            continue;
        };
        let Some(field) = Key::from_yaml(&key) else {
            continue;
        };
        let bit = 1u8 << (field as u8);
        if seen & bit != 0 {
            return Err(DocError::DuplicateKey { key, line });
        }
        seen |= bit;
        match field {
            Key::Name => frontmatter.name = string(&key, value)?,
            Key::Description => frontmatter.description = string(&key, value)?,
            Key::Version => frontmatter.version = string(&key, value)?,
            Key::Tags => frontmatter.tags = list(&key, value)?,
            Key::AllowedTools => frontmatter.allowed_tools = list(&key, value)?,
            Key::Confidence => frontmatter.confidence = confidence(value)?,
            // The merge reads the name only: another node's own sharing
            // mark is no reason to refuse its skill.
            Key::Shareable if !all => {}
            Key::Shareable => frontmatter.shareable = boolean(&key, value)?,
        }
    }
    Ok(frontmatter)
}

fn string(key: &str, value: Node) -> Result<Option<String>, DocError> {
    if value.is_null() {
        return Ok(None);
    }
    match value {
        Node::Scalar { value, .. } => Ok(Some(value)),
        other => Err(wrong_type(key, "a string", &other)),
    }
}

const LIST: &str = "a list of strings or a comma-separated string";

fn list(key: &str, value: Node) -> Result<Vec<String>, DocError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    match value {
        Node::Scalar { value, .. } => Ok(split_list(&value)),
        Node::Sequence { items, .. } => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if item.is_null() {
                    continue;
                }
                let Node::Scalar { value, .. } = item else {
                    return Err(wrong_type(key, LIST, &item));
                };
                let value = value.trim();
                if !value.is_empty() {
                    out.push(value.to_owned());
                }
            }
            Ok(out)
        }
        other => Err(wrong_type(key, LIST, &other)),
    }
}

/// Splits `Read, Grep, Bash(git log:*)` into its entries.
///
/// If the string has a comma outside parentheses, commas separate entries
/// (so `machine learning, ops` is two tags); otherwise whitespace does. Either
/// way a separator inside parentheses belongs to the entry, as in Claude
/// Code's `Bash(git log:*)`.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    let by_comma = top_level(text).any(|(_, c)| c == ',');
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in top_level(text) {
        let separates = if by_comma { c == ',' } else { c.is_whitespace() };
        if separates {
            push_trimmed(&mut out, &text[start..i]);
            start = i + c.len_utf8();
        }
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

/// The characters of `text` that sit outside parentheses, with byte offsets.
fn top_level(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut depth = 0usize;
    text.char_indices().filter(move |&(_, c)| match c {
        '(' => {
            depth += 1;
            false
        }
        ')' => {
            depth = depth.saturating_sub(1);
            false
        }
        _ => depth == 0,
    })
}

fn push_trimmed(out: &mut Vec<String>, entry: &str) {
    let entry = entry.trim();
    if !entry.is_empty() {
        out.push(entry.to_owned());
    }
}

fn boolean(key: &str, value: Node) -> Result<Option<bool>, DocError> {
    if value.is_null() {
        return Ok(None);
    }
    match &value {
        Node::Scalar { value: text, .. } => match bool_text(text) {
            Some(b) => Ok(Some(b)),
            None => Err(wrong_type(key, "true or false", &value)),
        },
        _ => Err(wrong_type(key, "true or false", &value)),
    }
}

fn confidence(value: Node) -> Result<Option<f64>, DocError> {
    if value.is_null() {
        return Ok(None);
    }
    let Node::Scalar { value, line, .. } = value else {
        return Err(wrong_type("confidence", "a number from 0 to 1", &value));
    };
    let Ok(number) = value.trim().parse::<f64>() else {
        return Err(DocError::ConfidenceNotANumber { value, line });
    };
    if number.is_finite() && (0.0..=1.0).contains(&number) {
        Ok(Some(number))
    } else {
        Err(DocError::ConfidenceOutOfRange { value, line })
    }
}

fn wrong_type(key: &str, expected: &'static str, found: &Node) -> DocError {
    DocError::WrongValueType { key: key.to_owned(), expected, found: found.kind(), line: found.line() }
}

#[cfg(test)]
mod tests;
