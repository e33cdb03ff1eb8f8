//! A user's query, checked and rewritten: the FTS5 expression every match
//! satisfies, and the terms ranking weighs ([`super::rank`]).
//!
//! Users' queries never reach FTS5's syntax: only words (runs of letters
//! and digits), a prefix star at a term's end and quoted phrases pass,
//! each word re-quoted, so `AND`, `NEAR`, `:` or `(` are searched as text
//! and cannot fail the query. The index keeps no positions (`detail=column`,
//! half the size), so a phrase reaches FTS5 as its words, all of which must
//! match, and ranking checks their order against the text.
//!
//! A hub's search (`store::hub::search`) takes the same [`Query`], its
//! terms and tags: one parser for both stores.

use std::fmt::Write as _;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 256;
/// Most words in one query (a phrase counts each of its words, `a.b` two).
pub const MAX_TERMS: usize = 16;
/// Most tags a search filters by.
pub const MAX_TAGS: usize = 16;
/// Longest tag a search filters by, in bytes.
pub const MAX_TAG_BYTES: usize = 64;

/// Why a query was refused: the user's words, not the node's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// Nothing to search for.
    #[error("the query is empty; give words to search for, e.g. q=deploy")]
    Empty,
    /// Longer than [`MAX_QUERY_BYTES`].
    #[error("the query is {len} bytes; at most {MAX_QUERY_BYTES} are allowed")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// More than [`MAX_TERMS`] words.
    #[error(
        "the query has {count} words (a phrase counts each of its words); at most {MAX_TERMS} are allowed: \
         search with fewer"
    )]
    TooManyTerms {
        /// How many.
        count: usize,
    },
    /// A `"` without its closing `"`.
    #[error("the query opens a phrase with \" and never closes it; close it or remove the quote")]
    UnclosedQuote,
    /// Only punctuation.
    #[error("the query has no words, only punctuation; give words to search for")]
    NoWords,
    /// `limit` outside 1..=[`MAX_LIMIT`](super::MAX_LIMIT).
    #[error("limit must be a whole number from 1 to {max}, not {0}", max = super::MAX_LIMIT)]
    Limit(String),
    /// More than [`MAX_TAGS`] tags to filter by.
    #[error("tags: {count} given; at most {MAX_TAGS} are allowed")]
    TooManyTags {
        /// How many.
        count: usize,
    },
    /// An empty tag, or one longer than [`MAX_TAG_BYTES`] (shown cut).
    #[error(
        "tags: {0:?} is empty or longer than {MAX_TAG_BYTES} bytes; give tags as search results show them"
    )]
    Tag(String),
}

/// One word or phrase of a query, its words folded as the index folds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    /// One word, or a phrase's words in order.
    pub(crate) words: Vec<String>,
    /// Whether the last word is a prefix (`word*`).
    pub(crate) prefix: bool,
}

/// A user's query, checked and rewritten into FTS5 syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// What FTS5 matches: every word of every term (and every tag's words
    /// in the tags column).
    pub(super) fts: String,
    /// What ranking weighs, in the order given (the hub's search too).
    pub(crate) terms: Vec<Term>,
    /// Tags a hit must carry, each of them (ASCII case ignored).
    pub(super) tags: Vec<String>,
}

/// The words of `text` as the index's tokenizer takes them: runs of the
/// characters `unicode61` counts as a word's — letters, numbers and private
/// use (general categories L*, N*, Co); everything else separates. Not
/// `char::is_alphanumeric`, which also counts vowel signs and other marks
/// (Devanagari, Thai): a word FTS5 splits in two is a phrase, which an index
/// without positions refuses.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !word_char(c)).filter(|w| !w.is_empty())
}

fn word_char(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
            | G::PrivateUse
    )
}

/// A word as the index keeps it (`unicode61 remove_diacritics 2`, near
/// enough): lower case, accents removed.
pub(crate) fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfd().filter(|c| !is_combining_mark(*c)).flat_map(char::to_lowercase).collect()
}

impl Query {
    /// Checks `text`: words (a trailing `*` makes a word a prefix) and
    /// `"quoted phrases"`, all of which must match (AND). A word of
    /// punctuation alone is left out; a word with punctuation inside
    /// (`k8s-deploy`) is its parts, each of which must match.
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(QueryError::Empty);
        }
        if text.len() > MAX_QUERY_BYTES {
            return Err(QueryError::TooLong { len: text.len() });
        }
        let mut given: Vec<(&str, bool, bool)> = Vec::new();
        let mut rest = text;
        loop {
            rest = rest.trim_start();
            let Some(first) = rest.chars().next() else { break };
            let quoted = first == '"';
            let (term, after) = if quoted {
                let inner = &rest[1..];
                let end = inner.find('"').ok_or(QueryError::UnclosedQuote)?;
                (&inner[..end], &inner[end + 1..])
            } else {
                let end = rest.find(|c: char| c.is_whitespace() || c == '"').unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            };
            // A star right after the term makes its last word a prefix.
            let stars = after.len() - after.trim_start_matches('*').len();
            let (term, prefix) = match term.trim_end_matches('*') {
                trimmed if trimmed.len() < term.len() => (trimmed, true),
                _ => (term, stars > 0),
            };
            rest = &after[stars..];
            if words(term).next().is_some() {
                given.push((term, prefix, quoted));
            }
        }
        if given.is_empty() {
            return Err(QueryError::NoWords);
        }
        // Counted as FTS5 gets them: `a.b.c` is three words, each a lookup.
        let count: usize = given.iter().map(|(term, _, _)| words(term).count()).sum();
        if count > MAX_TERMS {
            return Err(QueryError::TooManyTerms { count });
        }
        let mut terms = Vec::with_capacity(given.len());
        // FTS5 is given the words as written (its tokenizer folds them
        // itself); ranking compares them folded.
        let mut fts = String::with_capacity(text.len() + 8 * given.len());
        for (term, prefix, quoted) in given {
            let parts: Vec<&str> = words(term).collect();
            push_words(&mut fts, &parts, prefix);
            if quoted {
                terms.push(Term { words: parts.into_iter().map(fold).collect(), prefix });
            } else {
                // A word's parts are each a word of their own.
                let last = parts.len() - 1;
                terms.extend(
                    parts
                        .into_iter()
                        .enumerate()
                        .map(|(i, w)| Term { words: vec![fold(w)], prefix: prefix && i == last }),
                );
            }
        }
        Ok(Query { fts, terms, tags: Vec::new() })
    }

    /// This query, its hits narrowed to the skills carrying every one of
    /// `tags` (ASCII case ignored) — among all the matches, not only the
    /// best-ranked: each tag's words join the FTS5 expression, in the tags
    /// column, and a hit's tags are compared exactly.
    pub fn tagged(mut self, tags: Vec<String>) -> Result<Query, QueryError> {
        if tags.len() > MAX_TAGS {
            return Err(QueryError::TooManyTags { count: tags.len() });
        }
        if let Some(bad) = tags.iter().find(|t| t.trim().is_empty() || t.len() > MAX_TAG_BYTES) {
            return Err(QueryError::Tag(bad.chars().take(80).collect()));
        }
        for tag in &tags {
            let parts: Vec<&str> = words(tag).collect();
            // A tag of punctuation alone has no words: only the exact comparison holds it.
            if !parts.is_empty() {
                self.fts.push_str(" AND tags : (");
                push_words(&mut self.fts, &parts, false);
                self.fts.push(')');
            }
        }
        self.tags = tags.into_iter().map(|t| t.trim().to_owned()).collect();
        Ok(self)
    }

    /// The tags every hit carries ([`Query::tagged`]).
    pub fn tags(&self) -> &[String] {
        &self.tags
    }
}

/// Appends `words` to an FTS5 expression, each a quoted string (letters and
/// digits alone: no operator can be spelt in one), the last a prefix if asked.
pub(super) fn push_words(fts: &mut String, words: &[&str], prefix: bool) {
    for (i, word) in words.iter().enumerate() {
        if !fts.is_empty() && !fts.ends_with('(') {
            fts.push(' ');
        }
        let star = if prefix && i + 1 == words.len() { "*" } else { "" };
        let _ = write!(fts, "\"{word}\"{star}");
    }
}
