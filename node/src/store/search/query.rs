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

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

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
    /// What FTS5 matches: every word of every term, in order, then every
    /// tag's words in the tags column — the order ranking reads the
    /// fields of each word in (`columns.rs`).
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

/// A word as the index keeps it: lower case, accents removed, exactly as
/// `unicode61 remove_diacritics 2` does (ASCII, and [`folds`] for the rest)
/// — which is not Unicode's lower case and decomposition: it folds `ς`
/// and `µ` to `σ` and `μ`, keeps the accents of Greek and Cyrillic
/// letters, and leaves Hangul syllables whole.
pub(crate) fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let folds = folds();
    word.chars()
        .map(|c| if c.is_ascii() { c.to_ascii_lowercase() } else { folds.get(&c).copied().unwrap_or(c) })
        .collect()
}

/// What the index's tokenizer makes of each non-ASCII word character it
/// changes, learnt once from the tokenizer itself (the SQLite this node
/// links), so that ranking's comparisons never disagree with its matches:
/// every such character is indexed, after an ASCII letter, as one word of
/// an in-memory FTS5 table, and read back with its position.
fn folds() -> &'static HashMap<char, char> {
    static FOLDS: OnceLock<HashMap<char, char>> = OnceLock::new();
    FOLDS.get_or_init(|| {
        let probed: Vec<char> = ('\u{80}'..=char::MAX).filter(|&c| word_char(c) && !private_use(c)).collect();
        learnt(&probed).unwrap_or_else(|e| {
            // Only if SQLite cannot run in memory: ranking then compares words unfolded.
            tracing::warn!("cannot learn how the search index folds words ({e}); comparing them as written");
            HashMap::new()
        })
    })
}

fn learnt(probed: &[char]) -> Result<HashMap<char, char>, rusqlite::Error> {
    let conn = rusqlite::Connection::open_in_memory()?;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE probed USING fts5vocab(probe, instance);",
    )?;
    let mut text = String::with_capacity(probed.len() * 6);
    for c in probed {
        text.push('x');
        text.push(*c);
        text.push(' ');
    }
    conn.execute("INSERT INTO probe (x) VALUES (?1)", [&text])?;
    let mut stmt = conn.prepare("SELECT term, offset FROM probed")?;
    let mut rows = stmt.query([])?;
    let mut folds = HashMap::new();
    while let Some(row) = rows.next()? {
        let term: String = row.get(0)?;
        let at: i64 = row.get(1)?;
        let mut chars = term.chars().skip(1);
        if let (Some(&c), Some(folded), None) =
            (usize::try_from(at).ok().and_then(|at| probed.get(at)), chars.next(), chars.next())
            && folded != c
        {
            folds.insert(c, folded);
        }
    }
    Ok(folds)
}

fn private_use(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    get_general_category(c) == GeneralCategory::PrivateUse
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
