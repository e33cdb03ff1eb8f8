//! Ranking a query's matches: BM25 with term-frequency saturation `k1 = 0`
//! — each term adds its IDF times the weight of the best field it is found
//! in — times the evidence boost.
//!
//! The index keeps which fields hold a term, not how often nor where
//! (`detail=column`: half the size of positions, and FTS5's `bm25()` ranks
//! every row of such a contentless table 0). So this module ranks:
//!
//! - IDF: BM25's `ln(1 + (N − n + 0.5) / (n + 0.5))`, `n` the skills
//!   holding the word, counted by FTS5 itself (`fts5vocab`) without
//!   reading the skills (a common word's count remembered until the index
//!   changes: [`WordCounts`]), `N` kept in `skill_search_count`; a prefix
//!   counts as the sum of its words' counts (at most [`PREFIX_WORDS`]
//!   words; a shorter prefix, matching more, as if in every skill); a
//!   phrase as its rarest word.
//! - The field: the name and tags are kept beside the index
//!   (`skill_search_docs`) as text, and FTS5 tells, in the same pass that
//!   finds the candidates, which fields of each hold each word
//!   ([`columns`](super::columns)), so the best field holding a term is
//!   found here without reading the skills table (a page read per skill);
//!   a word none of the head fields holds is in the body (FTS5 matched it). A phrase's words in order are
//!   checked in the fields' text (each tag apart), and in the body's
//!   (unpacked from the stored packet) when no head field holds it: a match
//!   without the phrase is dropped. Words are compared folded as the
//!   index's tokenizer folds them ([`fold`]).
//! - The candidates: the first [`CANDIDATES`] shown matches in the index's
//!   order, so a hidden skill's text is never read.
//!
//! Counting a term once per skill (`k1 = 0`) rather than per occurrence
//! also means a body repeating a word gains nothing by it.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;

use super::query::{Query, Term, fold, words};
use super::{CANDIDATES, EVIDENCE_BOOST, SearchHit, VISIBLE, WordCounts};
use crate::store::{StoreError, from_json, packed};

/// Weights of the fields a term is found in: name, description, tags, body.
pub const WEIGHTS: [f64; 4] = [10.0, 5.0, 3.0, 1.0];

/// Most index words a prefix's skill count adds up: a prefix of more
/// words counts as in every skill (IDF near 0), so that weighing a short
/// prefix never reads many words' lists.
const PREFIX_WORDS: usize = 64;

/// A match, as ranking reads it.
struct Candidate {
    name: String,
    /// Its tags as stored (a JSON array): read only where ranking needs them.
    tags: String,
    confidence: f64,
    /// For each word of the FTS5 expression, in order, the bits of the
    /// fields holding it ([`FIELD`]).
    columns: Vec<u8>,
}

/// The bit of each field in [`Candidate::columns`]: name, description, tags, body.
const FIELD: [u8; 4] = [1, 2, 4, 8];

impl Candidate {
    fn tags(&self) -> Vec<String> {
        serde_json::from_str(&self.tags).unwrap_or_default()
    }
}

/// The visible skills matching `query`, best first, at most `limit`.
pub(super) fn ranked(
    conn: &Connection,
    counts: &mut WordCounts,
    query: &Query,
    limit: usize,
) -> Result<Vec<SearchHit>, StoreError> {
    let candidates = candidates(conn, query)?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let (skills, writes): (i64, i64) = conn
        .prepare_cached("SELECT skills, writes FROM skill_search_count")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    counts.at(writes);
    let idf =
        query.terms.iter().map(|t| idf(conn, counts, t, skills as f64)).collect::<Result<Vec<_>, _>>()?;
    let mut scored = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        if !query.tags.is_empty() {
            let tags = candidate.tags();
            if !query.tags.iter().all(|tag| tags.iter().any(|t| t.eq_ignore_ascii_case(tag))) {
                continue;
            }
        }
        let Some(relevance) = relevance(conn, query, &idf, &candidate)? else { continue };
        let score = relevance * (1.0 + EVIDENCE_BOOST * candidate.confidence.clamp(0.0, 1.0));
        scored.push((score, candidate));
    }
    // Stable: equal scores keep the index's order (better evidenced, then older).
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let sql = format!(
        "SELECT s.kind, s.origin, s.private IS NOT NULL, s.description FROM skills s WHERE s.name = ?1 AND {VISIBLE}"
    );
    let mut shown = conn.prepare_cached(&sql)?;
    let mut hits = Vec::with_capacity(limit);
    for (score, c) in scored {
        if hits.len() == limit {
            break;
        }
        let row = shown
            .query_row(params![c.name], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        let Some((kind, origin, private, description)) = row else { continue };
        let tags = c.tags();
        hits.push(SearchHit {
            name: c.name,
            description,
            tags,
            kind: if kind == "local" { "local" } else { "external" },
            origin,
            confidence: c.confidence,
            private,
            score,
        });
    }
    Ok(hits)
}

/// The first [`CANDIDATES`] shown matches in the index's order (the best
/// evidenced first), with what ranking reads of them.
fn candidates(conn: &Connection, query: &Query) -> Result<Vec<Candidate>, StoreError> {
    // CROSS JOIN: FTS5 leads, in row id order, and each match's row is
    // looked up by id; hidden skills are passed over, not counted.
    // `ecp_columns`: see columns.rs.
    let mut stmt = conn.prepare_cached(
        "SELECT d.name, d.tags, d.confidence, ecp_columns(skill_search)
         FROM skill_search f CROSS JOIN skill_search_docs d ON d.id = f.rowid
         WHERE skill_search MATCH ?1 AND d.visible
         ORDER BY f.rowid LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![query.fts, CANDIDATES as i64], |row| {
        Ok(Candidate { name: row.get(0)?, tags: row.get(1)?, confidence: row.get(2)?, columns: row.get(3)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The fields (bits of [`FIELD`]) holding every word of the term whose
/// words are the FTS5 expression's from the `first`.
fn fields(c: &Candidate, first: usize, term: &Term) -> u8 {
    // A word FTS5 did not report holds nowhere: ranking then reads no field for it.
    (first..first + term.words.len()).fold(u8::MAX, |bits, i| bits & c.columns.get(i).copied().unwrap_or(0))
}

/// A term's IDF among `skills` indexed.
fn idf(conn: &Connection, counts: &mut WordCounts, term: &Term, skills: f64) -> Result<f64, StoreError> {
    let last = term.words.len() - 1;
    let mut holding = skills;
    for (i, word) in term.words.iter().enumerate() {
        let prefix = term.prefix && i == last;
        let key = if prefix { format!("{word}*") } else { word.clone() };
        let n = match counts.get(&key) {
            Some(n) => n,
            None => {
                let n = if prefix { prefix_count(conn, word, skills)? } else { count(conn, word)? };
                counts.keep(&key, n);
                n
            }
        };
        holding = holding.min(n);
    }
    Ok((1.0 + (skills - holding + 0.5) / (holding + 0.5)).ln())
}

/// How many skills hold `word`.
fn count(conn: &Connection, word: &str) -> Result<f64, StoreError> {
    let n: Option<i64> = conn
        .prepare_cached("SELECT doc FROM skill_search_terms WHERE term = ?1")?
        .query_row(params![word], |r| r.get(0))
        .optional()?;
    Ok(n.unwrap_or(0) as f64)
}

/// How many skills hold a word starting with `prefix`, at most: the sum of
/// its words' counts, or all `skills` past [`PREFIX_WORDS`] words.
fn prefix_count(conn: &Connection, prefix: &str, skills: f64) -> Result<f64, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT doc FROM skill_search_terms WHERE term >= ?1 AND term <= ?1 || char(1114111) LIMIT ?2",
    )?;
    let counts = stmt
        .query_map(params![prefix, PREFIX_WORDS as i64 + 1], |r| r.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    if counts.len() > PREFIX_WORDS {
        return Ok(skills);
    }
    Ok(counts.iter().sum::<i64>() as f64)
}

/// The candidate's relevance: each term's IDF times the weight of the best
/// field holding it; `None` when a phrase is in none of its text.
fn relevance(
    conn: &Connection,
    query: &Query,
    idf: &[f64],
    c: &Candidate,
) -> Result<Option<f64>, StoreError> {
    let name: Vec<&str> = words(&c.name).collect();
    let mut description: Option<String> = None;
    let mut body: Option<String> = None;
    let mut total = 0.0;
    // The terms' words are the expression's first, in order (query.rs).
    let mut first = 0;
    for (term, idf) in query.terms.iter().zip(idf) {
        let fields = fields(c, first, term);
        first += term.words.len();
        let weight = if holds(&name, term) {
            WEIGHTS[0]
        } else if fields & FIELD[1] != 0
            && (term.words.len() == 1
                || holds(
                    &words(text(&mut description, || self::description(conn, &c.name))?).collect::<Vec<_>>(),
                    term,
                ))
        {
            WEIGHTS[1]
        } else if fields & FIELD[2] != 0
            && c.tags().iter().any(|tag| holds(&words(tag).collect::<Vec<_>>(), term))
        {
            // Each tag apart: a phrase never spans two of them; the tags are
            // parsed only when FTS5 found the term's words among them.
            WEIGHTS[2]
        } else if term.words.len() == 1 {
            // FTS5 matched the word, so the body holds it.
            WEIGHTS[3]
        } else if holds(&words(text(&mut body, || body_text(conn, &c.name))?).collect::<Vec<_>>(), term) {
            WEIGHTS[3]
        } else {
            return Ok(None);
        };
        total += idf * weight;
    }
    Ok(Some(total))
}

/// The text in `slot`, read by `read` the first time.
fn text(
    slot: &mut Option<String>,
    read: impl FnOnce() -> Result<String, StoreError>,
) -> Result<&str, StoreError> {
    if slot.is_none() {
        *slot = Some(read()?);
    }
    Ok(slot.as_deref().unwrap_or_default())
}

/// A skill's description, from the skills table.
fn description(conn: &Connection, name: &str) -> Result<String, StoreError> {
    Ok(conn
        .prepare_cached("SELECT description FROM skills WHERE name = ?1")?
        .query_row(params![name], |r| r.get(0))?)
}

/// Whether the words of a field, in order, hold the term: its words one
/// after the other, the last one as a prefix for a prefix term.
fn holds(field: &[&str], term: &Term) -> bool {
    let n = term.words.len();
    field.windows(n).any(|window| {
        window.iter().zip(&term.words).enumerate().all(|(i, (word, wanted))| {
            let prefix = term.prefix && i + 1 == n;
            if word.is_ascii() {
                let word = word.as_bytes();
                let wanted = wanted.as_bytes();
                if prefix {
                    word.len() >= wanted.len() && word[..wanted.len()].eq_ignore_ascii_case(wanted)
                } else {
                    word.eq_ignore_ascii_case(wanted)
                }
            } else {
                let word = fold(word);
                if prefix { word.starts_with(wanted.as_str()) } else { word == *wanted }
            }
        })
    })
}

/// A skill's body, from its stored packet.
fn body_text(conn: &Connection, name: &str) -> Result<String, StoreError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Body {
        skill_body: String,
    }
    let json = conn
        .prepare_cached("SELECT packet FROM skills WHERE name = ?1")?
        .query_row(params![name], |r| packed::column(r, 0))?;
    Ok(from_json::<Body>(&json)?.skill_body)
}
