//! Ranked full-text search over the skills held (#24 item 1): an SQLite
//! FTS5 index of each skill's name, description, tags and body, ranked by
//! BM25 with the name and description weighted above the body, and boosted
//! by the skill's evidence (its confidence).
//!
//! The index is contentless (`content=''`): it keeps the terms and their
//! positions, not a second copy of the text, which the store already holds
//! packed. `contentless_delete=1` lets a row be deleted by its id alone, so
//! following a change does not need the old text. `skill_search_docs` maps
//! an index row to its skill's name. (`detail=column` would make it half as
//! big, but FTS5's BM25 then ranks every contentless row 0.)
//!
//! A row's id orders the index by evidence ([`row_id`]: confidence first,
//! then the change's sequence number), and carries the confidence the boost
//! needs, so ranking reads nothing but the index. FTS5 lists a term's
//! matches in id order, so a query ranks at most [`CANDIDATES`] of them, the
//! best-evidenced: the same answer as ranking all of them for every query
//! matching fewer skills, and a bounded cost for a word that many skills
//! hold (BM25's cost is per ranked match; a word in most skills has nearly
//! no weight anyway: it tells no skill from another).
//!
//! The index follows every write of a skill ([`follow`], called by the one
//! write path, `skills::upsert`): a tombstone leaves it, any other version
//! replaces the skill's row. It lives in the database, so a restart keeps
//! it; [`check`] runs at every open and rebuilds it, with a log line, when it
//! is missing, corrupt or does not count the skills it should. FTS5's full
//! integrity check runs at open up to [`FULL_CHECK_MAX`] skills (at
//! 100,000 it takes seconds, and every CLI command opens the store); above,
//! the open reads the index's structure, and a search that meets a corrupt
//! page rebuilds the index and asks again.
//!
//! Users' queries never reach FTS5's syntax ([`Query::parse`]): only words
//! (runs of letters and digits), a prefix star at a term's end and quoted
//! phrases pass, each word re-quoted, so `AND`, `NEAR`, `:` or `(` are
//! searched as text and cannot fail the query.

use std::fmt::Write as _;
use std::time::Instant;

use ecp_protocol::SkillPacket;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::{Store, StoreError, from_json, packed};

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 10;
/// Most hits one search returns.
pub const MAX_LIMIT: usize = 100;
/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 256;
/// Most words and phrases in one query.
pub const MAX_TERMS: usize = 16;

/// BM25 weights of the columns, in their order: name, description, tags,
/// body. A term in the name counts ten times one in the body.
const WEIGHTS: &str = "10.0, 5.0, 3.0, 1.0";

/// The evidence boost: a hit's BM25 relevance is multiplied by
/// `1 + EVIDENCE_BOOST × confidence` (confidence clamped to 0..1), so a
/// skill held with confidence 1 ranks as if 1.5 times as relevant as the
/// same text held with confidence 0.
pub const EVIDENCE_BOOST: f64 = 0.5;

/// Most matches one query ranks: the best-evidenced ones (see the module
/// doc). BM25 costs about as much per ranked match as the rest of the
/// query together, so this bounds a query of common words (#24 bench:
/// p99 ≤ 20 ms at 100,000 skills).
pub const CANDIDATES: usize = 1_000;

/// Up to this many indexed skills, opening the store runs FTS5's full
/// integrity check of the index; above, it costs too much for every open
/// (each CLI command opens the store) and a cheap check stands in, while
/// a search that finds the index corrupt rebuilds it ([`Store::search`]).
pub const FULL_CHECK_MAX: i64 = 10_000;

/// Bits of a row id below its evidence rank, for the sequence number.
const SEQ_BITS: u32 = 40;

/// The index row id of a skill's version: `(1000 − confidence in
/// thousandths) · 2^40 + seq`, so ascending ids go from the most confident
/// to the least, and the confidence is read back from the id.
fn row_id(confidence: f64, seq: i64) -> i64 {
    let milli = (confidence.clamp(0.0, 1.0) * 1000.0).round() as i64;
    ((1000 - milli) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1))
}

/// Which indexed skills a search shows: the one place that decides it.
/// Tombstones never reach the index (quarantined packets never reach the
/// skills table); a received skill waiting for review in the inbox, or
/// whose current version the user rejected, and a retired skill (#19), are
/// held but not shown, as the skills folder does not show them; nor is a
/// version its origin revoked (`SPEC.md` §14).
const VISIBLE: &str = "s.deprecated = 0
    AND NOT EXISTS (SELECT 1 FROM skill_scores sc WHERE sc.name = s.name AND sc.retired_at IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.skill_name = s.name)
    AND NOT EXISTS (SELECT 1 FROM inbox_decisions r
                    WHERE r.skill_name = s.name AND r.integrity_hash = s.integrity_hash
                      AND r.decision = 'rejected')
    AND NOT EXISTS (SELECT 1 FROM revocations rv WHERE rv.name = s.name
                    AND rv.digest = CASE WHEN s.bundle_digest = '' THEN s.integrity_hash ELSE s.bundle_digest END)";

/// The index's tables: what migration 14 creates and a rebuild makes again.
macro_rules! index_tables {
    () => {
        r#"
        -- One row per indexed skill: the index's row id for its name
        -- (search.rs row_id: its evidence rank and sequence number).
        CREATE TABLE skill_search_docs (
            id   INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        ) STRICT;
        -- Terms and positions only (contentless): the text is in skills.packet.
        CREATE VIRTUAL TABLE skill_search USING fts5(
            name, description, tags, body,
            content = '', contentless_delete = 1,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        "#
    };
}
pub(super) use index_tables;

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
    /// More than [`MAX_TERMS`] words and phrases.
    #[error("the query has {count} words and phrases; at most {MAX_TERMS} are allowed")]
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
    /// `limit` outside 1..=[`MAX_LIMIT`].
    #[error("limit must be a whole number from 1 to {MAX_LIMIT}, not {0}")]
    Limit(String),
}

/// A user's query, checked and rewritten into FTS5 syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    fts: String,
}

/// The words of `text` as the index's tokenizer takes them, near enough:
/// runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
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
        let mut terms: Vec<(&str, bool, bool)> = Vec::new();
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
            if term.chars().any(char::is_alphanumeric) {
                terms.push((term, prefix, quoted));
            }
        }
        if terms.is_empty() {
            return Err(QueryError::NoWords);
        }
        if terms.len() > MAX_TERMS {
            return Err(QueryError::TooManyTerms { count: terms.len() });
        }
        let mut fts = String::with_capacity(text.len() + 4 * terms.len());
        for (term, prefix, quoted) in terms {
            let words: Vec<&str> = words(term).collect();
            // Letters and digits alone, quoted: plain strings to FTS5, in
            // which no operator can be spelt. A quoted phrase stays one
            // string (its words in order); a word's parts are each a string.
            let strings =
                if quoted { vec![words.join(" ")] } else { words.iter().map(|w| (*w).to_owned()).collect() };
            let last = strings.len() - 1;
            for (i, string) in strings.iter().enumerate() {
                if !fts.is_empty() {
                    fts.push(' ');
                }
                let star = if prefix && i == last { "*" } else { "" };
                let _ = write!(fts, "\"{string}\"{star}");
            }
        }
        Ok(Query { fts })
    }
}

/// Checks a requested number of hits (`None`: [`DEFAULT_LIMIT`]).
pub fn limit(requested: Option<&str>) -> Result<usize, QueryError> {
    let Some(text) = requested else { return Ok(DEFAULT_LIMIT) };
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(QueryError::Limit(text.chars().take(40).collect())),
    }
}

/// One hit, best first.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Skill name.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// `local` or `external`.
    pub kind: &'static str,
    /// Origin instance.
    pub origin: String,
    /// Stored confidence.
    pub confidence: f64,
    /// Whether it stays on this node (a private local skill).
    pub private: bool,
    /// Relevance: BM25 (column-weighted) times the evidence boost; higher is better.
    pub score: f64,
}

/// What `GET /v1/search` and `skill search --json` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The query as given.
    pub query: String,
    /// The most hits asked for.
    pub limit: usize,
    /// The hits, best first.
    pub results: Vec<SearchHit>,
}

impl Store {
    /// Parses `text` and `limit` (as the user gave them) and searches.
    pub fn search_text(
        &self,
        text: &str,
        limit: Option<&str>,
    ) -> Result<Result<Answer, QueryError>, StoreError> {
        let (query, limit) = match (Query::parse(text), self::limit(limit)) {
            (Ok(query), Ok(limit)) => (query, limit),
            (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
        };
        let results = self.search(&query, limit)?;
        Ok(Ok(Answer { query: text.to_owned(), limit, results }))
    }

    /// The visible skills matching `query`, best first, at most `limit`.
    /// An index found corrupt is rebuilt, with a log line, and asked again.
    pub fn search(&self, query: &Query, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let mut conn = self.conn();
        match ranked(&conn, query, limit) {
            Err(StoreError::Sqlite(e)) if is_corrupt(&e) => {
                rebuilt(&mut conn, "is corrupt")?;
                ranked(&conn, query, limit)
            }
            answer => answer,
        }
    }

    /// Whether the skill `name` is one search shows ([`VISIBLE`]): the MCP
    /// server (#24 item 2) reads and lists only those.
    pub fn is_shown(&self, name: &str) -> Result<bool, StoreError> {
        let sql = format!("SELECT EXISTS (SELECT 1 FROM skills s WHERE s.name = ?1 AND {VISIBLE})");
        Ok(self.conn().prepare_cached(&sql)?.query_row(params![name], |r| r.get(0))?)
    }

    /// The names of at most `limit` skills search shows, in name order,
    /// after `after`: a page of the MCP server's listings.
    pub fn shown_after(&self, after: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        let sql =
            format!("SELECT s.name FROM skills s WHERE s.name > ?1 AND {VISIBLE} ORDER BY s.name LIMIT ?2");
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let names = stmt.query_map(params![after, limit as i64], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(names)
    }

    /// Bytes the search index takes in the database file (its tables and
    /// their indexes, from SQLite's `dbstat`): reported apart from the rest.
    pub fn search_index_bytes(&self) -> Result<u64, StoreError> {
        let bytes: i64 = self.conn().query_row(
            "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat
             WHERE name LIKE 'skill\\_search%' ESCAPE '\\'
                OR name LIKE 'sqlite\\_autoindex\\_skill\\_search%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }
}

/// Whether SQLite (or FTS5, which says `SQLITE_CORRUPT_VTAB`) found the database image malformed.
fn is_corrupt(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt)
}

/// The ranked query of [`Store::search`].
fn ranked(conn: &Connection, query: &Query, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
    // Ranked by the index alone; the skills table is read for the best
    // few, enough of them that the hidden ones cannot leave a gap.
    let hidden: i64 = conn
        .prepare_cached(
            "SELECT (SELECT COUNT(*) FROM inbox)
                      + (SELECT COUNT(*) FROM inbox_decisions WHERE decision = 'rejected')
                      + (SELECT COUNT(*) FROM skill_scores WHERE retired_at IS NOT NULL)",
        )?
        .query_row([], |r| r.get(0))?;
    let sql = format!(
        "WITH candidates AS (
                 SELECT rowid AS id,
                        bm25(skill_search, {WEIGHTS})
                          * (1.0 + ?3 * (1000 - (rowid >> {SEQ_BITS})) / 1000.0) AS rank
                 FROM skill_search WHERE skill_search MATCH ?1
                 ORDER BY rowid LIMIT {CANDIDATES}),
             best AS (SELECT id, rank FROM candidates ORDER BY rank, id LIMIT ?2)
             SELECT s.name, s.description, s.tags, s.kind, s.origin, s.confidence, s.private IS NOT NULL,
                    -best.rank
             FROM best
             JOIN skill_search_docs d ON d.id = best.id
             JOIN skills s ON s.name = d.name
             WHERE {VISIBLE}
             ORDER BY best.rank, best.id
             LIMIT ?4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let hits = stmt
        .query_map(params![query.fts, limit as i64 + hidden, EVIDENCE_BOOST, limit as i64], |row| {
            let tags: String = row.get(2)?;
            let kind: String = row.get(3)?;
            Ok(SearchHit {
                name: row.get(0)?,
                description: row.get(1)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                kind: if kind == "local" { "local" } else { "external" },
                origin: row.get(4)?,
                confidence: row.get(5)?,
                private: row.get(6)?,
                score: row.get(7)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(hits)
}

/// Makes the index follow a skill's new current version (the change
/// numbered `seq`): a tombstone leaves it, any other version replaces the
/// skill's row. Runs in the write's transaction.
pub(super) fn follow(tx: &Connection, packet: &SkillPacket, seq: i64) -> Result<(), rusqlite::Error> {
    let old: Option<i64> = tx
        .prepare_cached("SELECT id FROM skill_search_docs WHERE name = ?1")?
        .query_row(params![packet.skill_name], |r| r.get(0))
        .optional()?;
    if let Some(old) = old {
        tx.prepare_cached("DELETE FROM skill_search WHERE rowid = ?1")?.execute(params![old])?;
        tx.prepare_cached("DELETE FROM skill_search_docs WHERE id = ?1")?.execute(params![old])?;
    }
    if packet.deprecated {
        return Ok(());
    }
    let id = row_id(packet.confidence, seq);
    tx.prepare_cached("INSERT INTO skill_search_docs (id, name) VALUES (?1, ?2)")?
        .execute(params![id, packet.skill_name])?;
    tx.prepare_cached(
        "INSERT INTO skill_search (rowid, name, description, tags, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        id,
        packet.skill_name,
        packet.skill_description,
        packet.tags.join(" "),
        packet.skill_body
    ])?;
    Ok(())
}

/// Rebuilds the index when it is missing, corrupt or out of step with the
/// skills (a database from before migration 14 was indexed by nothing),
/// saying so in the log; an index in order is left as it is.
pub(super) fn check(conn: &mut Connection) -> Result<(), StoreError> {
    let why = match fault(conn) {
        Ok(None) => return Ok(()),
        Ok(Some(why)) => why.to_owned(),
        Err(e) => format!("cannot be read ({e})"),
    };
    rebuilt(conn, &why)
}

/// Rebuilds the index because it `why` (completing "the search index …"), saying so in the log.
fn rebuilt(conn: &mut Connection, why: &str) -> Result<(), StoreError> {
    let started = Instant::now();
    let skills = rebuild(conn)?;
    tracing::warn!(
        skills,
        took_ms = started.elapsed().as_millis() as u64,
        "the search index {why}: rebuilt it from the skills held"
    );
    Ok(())
}

/// What is wrong with the index, if anything.
fn fault(conn: &Connection) -> Result<Option<&'static str>, rusqlite::Error> {
    let tables: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('skill_search', 'skill_search_docs')",
        [],
        |r| r.get(0),
    )?;
    if tables < 2 {
        return Ok(Some("is missing"));
    }
    let indexed: i64 = conn.query_row("SELECT COUNT(*) FROM skill_search_docs", [], |r| r.get(0))?;
    // Checks the index's own structure (rank 0: a contentless table has no
    // text to compare it with) where that is cheap; a larger index has its
    // structure record read, and a corrupt page found by a search.
    let sound = if indexed <= FULL_CHECK_MAX {
        conn.execute("INSERT INTO skill_search (skill_search, rank) VALUES ('integrity-check', 0)", [])
            .is_ok()
    } else {
        conn.query_row("SELECT COUNT(*) FROM skill_search WHERE skill_search MATCH '\"ecp\"'", [], |_| Ok(()))
            .is_ok()
    };
    if !sound {
        return Ok(Some("is corrupt"));
    }
    let held: i64 = conn.query_row("SELECT COUNT(*) FROM skills WHERE deprecated = 0", [], |r| r.get(0))?;
    Ok((indexed != held).then_some("does not match the skills held"))
}

/// Drops whatever is left of the index and indexes every held skill again,
/// in one transaction; how many it indexed.
fn rebuild(conn: &mut Connection) -> Result<usize, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(concat!(
        "DROP TABLE IF EXISTS skill_search; DROP TABLE IF EXISTS skill_search_docs;",
        index_tables!()
    ))?;
    let mut indexed = 0;
    {
        let mut stmt = tx.prepare("SELECT packet, seq FROM skills WHERE deprecated = 0 ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let packet: SkillPacket = from_json(&packed::column(row, 0)?)?;
            follow(&tx, &packet, row.get(1)?)?;
            indexed += 1;
        }
    }
    tx.commit()?;
    Ok(indexed)
}

#[cfg(test)]
mod tests;
