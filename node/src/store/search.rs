//! Ranked full-text search over the skills held (#24 item 1): an SQLite
//! FTS5 index of each skill's name, description, tags and body, ranked
//! BM25-like with the name and description weighted above the body, and
//! boosted by the skill's evidence (its confidence).
//!
//! The index is contentless (`content=''`): it keeps the terms, not a
//! second copy of the text, which the store already holds packed; and it
//! keeps which fields hold each term, not where (`detail=column`, half the
//! size of positions). `contentless_delete=1` lets a row be deleted by its
//! id alone, so following a change does not need the old text.
//! `skill_search_docs` maps an index row to its skill's name, and holds
//! the little ranking reads beside the index (tags, confidence) and
//! whether search shows the skill ([`VISIBLE`], kept by triggers on the
//! tables deciding it, so hidden skills never take a candidate's place nor
//! have their text read); `skill_search_terms` (`fts5vocab`) counts the
//! skills holding a word, `skill_search_count` the skills indexed.
//!
//! A row's id orders the index by evidence ([`row_id`]: the confidence's
//! quarter first, then the change's sequence number — few evidence levels,
//! as each one a term's list crosses costs it bytes). FTS5 lists a term's
//! matches in id order, so a query ranks at most [`CANDIDATES`] of them,
//! the best-evidenced shown ones: the same
//! answer as ranking all of them for every
//! query matching fewer skills, and a bounded cost for a word that many
//! skills hold (such a word has nearly no weight anyway: it tells no skill
//! from another).
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
//! # Layout
//!
//! - `search.rs`: the index — its tables and triggers, following writes,
//!   the check and rebuild at open — what is shown, the counts of common
//!   words remembered between queries, and [`Store::search`].
//! - [`query`]: a user's query checked and rewritten into FTS5's syntax
//!   and the terms ranking weighs, words folded as the index folds them;
//!   the tags filter.
//! - `rank`: ranking the shown matches (IDF, field weights, phrases
//!   checked against the text, the evidence boost).
//! - `shown`: the view of the skills shown, which the triggers keeping
//!   `visible` read (migration 24).
//! - `columns`: the FTS5 auxiliary function telling ranking which fields
//!   of a match hold each word (FTS5's C API: the node's one `unsafe`),
//!   registered on the store's connection at open ([`register`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use ecp_protocol::SkillPacket;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::{Store, StoreError, from_json, packed};

mod columns;
pub mod query;
mod rank;
mod shown;

pub(crate) use shown::{shown_view, shown_view_triggers, shown_view_update};

pub(super) use columns::register;

pub use query::{MAX_QUERY_BYTES, MAX_TAG_BYTES, MAX_TAGS, MAX_TERMS, Query, QueryError};
pub use rank::WEIGHTS;

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 10;
/// Most hits one search returns.
pub const MAX_LIMIT: usize = 100;

/// The evidence boost: a hit's relevance is multiplied by
/// `1 + EVIDENCE_BOOST × confidence` (confidence clamped to 0..1), so a
/// skill held with confidence 1 ranks as if 1.5 times as relevant as the
/// same text held with confidence 0.
pub const EVIDENCE_BOOST: f64 = 0.5;

/// Most matches one query ranks: the best-evidenced ones (see the module
/// doc), so a query of common words costs about what a rare one does
/// (#24 bench: p99 ≤ 20 ms at 100,000 skills).
pub const CANDIDATES: usize = 1_000;

/// Up to this many indexed skills, opening the store runs FTS5's full
/// integrity check of the index; above, it costs too much for every open
/// (each CLI command opens the store) and a cheap check stands in, while
/// a search that finds the index corrupt rebuilds it ([`Store::search`]).
pub const FULL_CHECK_MAX: i64 = 10_000;

/// Bits of a row id below its evidence level, for the sequence number.
const SEQ_BITS: u32 = 40;

/// Evidence levels of the index's order: confidence in quarters.
const LEVELS: i64 = 4;

/// The index row id of a skill's version: `(3 − its confidence's quarter)
/// · 2^40 + seq`, so ascending ids go from the most confident quarter to
/// the least, the older first within one.
fn row_id(confidence: f64, seq: i64) -> i64 {
    let level = ((confidence.clamp(0.0, 1.0) * LEVELS as f64) as i64).min(LEVELS - 1);
    ((LEVELS - 1 - level) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1))
}

/// Which held skills a search shows: the one place that decides it.
/// Tombstones never reach the index (quarantined packets never reach the
/// skills table); a received skill waiting for review in the inbox, or
/// whose current version the user rejected, and a retired skill (#19), are
/// held but not shown, as the skills folder does not show them; nor is a
/// version its origin revoked (`SPEC.md` §14). `s` is the skill's row.
macro_rules! visible {
    () => {
        "s.deprecated = 0
    AND NOT EXISTS (SELECT 1 FROM skill_scores sc WHERE sc.name = s.name AND sc.retired_at IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.skill_name = s.name)
    AND NOT EXISTS (SELECT 1 FROM inbox_decisions r
                    WHERE r.skill_name = s.name AND r.integrity_hash = s.integrity_hash
                      AND r.decision = 'rejected')
    AND NOT EXISTS (SELECT 1 FROM revocations rv WHERE rv.name = s.name
                    AND rv.digest = CASE WHEN s.bundle_digest = '' THEN s.integrity_hash ELSE s.bundle_digest END)"
    };
}
pub(super) use visible;
const VISIBLE: &str = visible!();

/// The triggers keeping `skill_search_docs.visible` equal to [`VISIBLE`]
/// of its skill when a row of a table deciding it changes (`$table`, whose
/// `$column` names the skill; an update only of `$of`), so the candidates
/// ranked are shown ones, whatever the number of hidden skills matching.
macro_rules! shown_triggers {
    ($(($table:literal, $column:literal, $of:literal)),*) => {
        concat!($(
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_insert AFTER INSERT ON ", $table,
            " BEGIN ", $crate::store::search::shown_update!("NEW", $column), " END;\n",
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_delete AFTER DELETE ON ", $table,
            " BEGIN ", $crate::store::search::shown_update!("OLD", $column), " END;\n",
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_update AFTER UPDATE ", $of, " ON ", $table,
            " BEGIN ", $crate::store::search::shown_update!("OLD", $column),
            $crate::store::search::shown_update!("NEW", $column), " END;\n",
        )*)
    };
}
pub(super) use shown_triggers;

/// Sets `visible` of the skill named by `$row.$column` in a trigger.
macro_rules! shown_update {
    ($row:literal, $column:literal) => {
        concat!(
            "UPDATE skill_search_docs SET visible = EXISTS (SELECT 1 FROM skills s WHERE s.name = skill_search_docs.name AND ",
            $crate::store::search::visible!(),
            ") WHERE name = ", $row, ".", $column, ";"
        )
    };
}
pub(super) use shown_update;

/// The index's tables, without the triggers keeping `visible`: what
/// migrations 21 and 22 created and a rebuild makes again (after
/// [`drop_index`]).
macro_rules! index_only_tables {
    () => {
        r#"
        -- One row per indexed skill: the index's row id for its name
        -- (search.rs row_id: its evidence level and sequence number), and
        -- what ranking reads of it: a small row, where the skills table's
        -- rows (with their packets) cost a page read each. `visible`: the
        -- skill is one search shows (search.rs VISIBLE), kept by the
        -- triggers below, so hidden skills are never candidates.
        CREATE TABLE skill_search_docs (
            id          INTEGER PRIMARY KEY,
            name        TEXT NOT NULL UNIQUE,
            tags        TEXT NOT NULL,  -- JSON array
            confidence  REAL NOT NULL,
            visible     INTEGER NOT NULL
        ) STRICT;
        -- How many skills are indexed (one row): BM25's N, which counting
        -- skill_search_docs at each query took a millisecond to read.
        -- `writes`: changes of the index so far, which the counts of
        -- common words remembered between queries are valid for.
        CREATE TABLE skill_search_count (
            one     INTEGER PRIMARY KEY CHECK (one = 1),
            skills  INTEGER NOT NULL,
            writes  INTEGER NOT NULL
        ) STRICT;
        INSERT INTO skill_search_count (one, skills, writes) VALUES (1, 0, 0);
        -- Terms and the fields holding them, no positions (detail=column)
        -- and no text (contentless): the text is in skills.packet.
        CREATE VIRTUAL TABLE skill_search USING fts5(
            name, description, tags, body,
            content = '', contentless_delete = 1, detail = column,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        -- How many skills hold each term: the IDF of ranking.
        CREATE VIRTUAL TABLE skill_search_terms USING fts5vocab(skill_search, row);
        "#
    };
}
pub(super) use index_only_tables;

/// The index's tables and triggers as migrations 21 and 22 made them (the
/// triggers each spelling out [`VISIBLE`]): shipped, so never changed.
macro_rules! index_tables_22 {
    () => {
        concat!(
            $crate::store::search::index_only_tables!(),
            $crate::store::search::shown_index_triggers!(shown_triggers)
        )
    };
}
pub(super) use index_tables_22;

/// The index's tables and triggers as a rebuild makes them now: the
/// triggers read the view of the skills shown (migration 24, [`shown`]).
macro_rules! index_tables {
    () => {
        concat!(
            $crate::store::search::index_only_tables!(),
            $crate::store::search::shown_index_triggers!(shown_view_triggers)
        )
    };
}

/// `$make!` of the tables deciding what search shows ([`VISIBLE`]), each
/// with the column naming the skill and the update of it that matters:
/// the index's triggers ([`shown_triggers`]), or dropping them
/// ([`drop_shown_triggers`]: migration 23 rebuilds the skills table their
/// bodies read).
macro_rules! shown_index_triggers {
    ($make:ident) => {
        $crate::store::search::$make!(
            ("inbox", "skill_name", ""),
            ("inbox_decisions", "skill_name", ""),
            ("skill_scores", "name", "OF retired_at"),
            ("revocations", "name", "")
        )
    };
}
pub(super) use shown_index_triggers;

/// Drops the triggers [`shown_triggers`] makes for the same tables.
macro_rules! drop_shown_triggers {
    ($(($table:literal, $column:literal, $of:literal)),*) => {
        concat!($(
            "DROP TRIGGER IF EXISTS skill_search_shown_", $table, "_insert;\n",
            "DROP TRIGGER IF EXISTS skill_search_shown_", $table, "_delete;\n",
            "DROP TRIGGER IF EXISTS skill_search_shown_", $table, "_update;\n",
        )*)
    };
}
pub(super) use drop_shown_triggers;

/// Drops the index's tables, whichever are there (its triggers are kept:
/// they are made again only where missing, and [`rebuild`] drops them).
macro_rules! drop_index {
    () => {
        "DROP TABLE IF EXISTS skill_search_terms; DROP TABLE IF EXISTS skill_search;
         DROP TABLE IF EXISTS skill_search_docs; DROP TABLE IF EXISTS skill_search_count;"
    };
}
pub(super) use drop_index;

/// How many skills hold each common word or prefix (more than
/// [`CANDIDATES`]), remembered between queries for one state of the index:
/// FTS5 counts a word by walking its whole list (1.7 ms for a word in
/// every one of 100,000 skills, each time it is asked), and the words
/// people search for are few and often the same. Any write of the index
/// (`skill_search_count.writes`, by any process) makes them stale; at most
/// [`WordCounts::MAX`] are kept.
#[derive(Debug, Default)]
pub(crate) struct WordCounts {
    /// `skill_search_count.writes` the counts were taken at.
    writes: i64,
    counts: std::collections::HashMap<String, f64>,
}

impl WordCounts {
    /// Most words remembered: a query's words are the user's, so many
    /// different ones must not grow it without bound.
    const MAX: usize = 4_096;

    /// Forgets the counts if the index changed since they were taken.
    fn at(&mut self, writes: i64) {
        if writes != self.writes {
            self.counts.clear();
            self.writes = writes;
        }
    }

    fn get(&self, key: &str) -> Option<f64> {
        self.counts.get(key).copied()
    }

    /// Remembers the count of a common word (`key`: the word, or `prefix*`).
    fn keep(&mut self, key: &str, skills: f64) {
        if skills <= CANDIDATES as f64 {
            return;
        }
        if self.counts.len() >= Self::MAX {
            self.counts.clear();
        }
        self.counts.insert(key.to_owned(), skills);
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

/// Parses `text`, `limit` and `tags` as the user gave them (tags separated
/// by commas, `None` for no filter) and answers with `search`, the store's
/// own: one parser for the node's index and a hub's (`store::hub`).
pub fn answer<E>(
    text: &str,
    limit: Option<&str>,
    tags: Option<&str>,
    search: impl FnOnce(&Query, usize) -> Result<Vec<SearchHit>, E>,
) -> Result<Result<Answer, QueryError>, E> {
    // `?tags=` given empty filters nothing, as when it is not given.
    let tags: Vec<String> = tags
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let query = Query::parse(text).and_then(|q| q.tagged(tags));
    let (query, limit) = match (query, self::limit(limit)) {
        (Ok(query), Ok(limit)) => (query, limit),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    let results = search(&query, limit)?;
    Ok(Ok(Answer { query: text.to_owned(), limit, tags: query.tags.clone(), results }))
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
    /// Relevance (IDF times field weight, summed over the query's terms)
    /// times the evidence boost; higher is better.
    pub score: f64,
}

/// What `GET /v1/search` and `skill search --json` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The query as given.
    pub query: String,
    /// The most hits asked for.
    pub limit: usize,
    /// The tags every hit carries, as asked for (none: not filtered).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The hits, best first.
    pub results: Vec<SearchHit>,
}

impl Store {
    /// Parses `text`, `limit` and `tags` (as the user gave them: tags
    /// separated by commas, `None` or blank for no filter) and searches.
    pub fn search_text(
        &self,
        text: &str,
        limit: Option<&str>,
        tags: Option<&str>,
    ) -> Result<Result<Answer, QueryError>, StoreError> {
        answer(text, limit, tags, |query, limit| self.search(query, limit))
    }

    /// The visible skills matching `query`, best first, at most `limit`.
    /// An index found corrupt is rebuilt, with a log line, and asked again.
    pub fn search(&self, query: &Query, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let mut conn = self.conn();
        let mut counts = self.word_counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match rank::ranked(&conn, &mut counts, query, limit) {
            Err(StoreError::Sqlite(e)) if is_corrupt(&e) => {
                rebuilt(&mut conn, "is corrupt")?;
                rank::ranked(&conn, &mut counts, query, limit)
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

/// Makes the index follow a skill's new current version (the change
/// numbered `seq`): a tombstone leaves it, any other version replaces the
/// skill's row. Runs in the write's transaction; the row's terms reach
/// FTS5 at its end ([`flush_pending`]).
pub(super) fn follow(tx: &Connection, packet: &SkillPacket, seq: i64) -> Result<(), rusqlite::Error> {
    let old: Option<i64> = tx
        .prepare_cached("SELECT id FROM skill_search_docs WHERE name = ?1")?
        .query_row(params![packet.skill_name], |r| r.get(0))
        .optional()?;
    let mut indexed = 0;
    if let Some(old) = old {
        // A row this very transaction indexed is still pending: dropped
        // there, as FTS5 never had it.
        if !take_pending(old) {
            tx.prepare_cached("DELETE FROM skill_search WHERE rowid = ?1")?.execute(params![old])?;
        }
        tx.prepare_cached("DELETE FROM skill_search_docs WHERE id = ?1")?.execute(params![old])?;
        indexed -= 1;
    }
    if !packet.deprecated {
        let id = row_id(packet.confidence, seq);
        let sql = format!(
            "INSERT INTO skill_search_docs (id, name, tags, confidence, visible)
             VALUES (?1, ?2, ?3, ?4, EXISTS (SELECT 1 FROM skills s WHERE s.name = ?2 AND {VISIBLE}))"
        );
        tx.prepare_cached(&sql)?.execute(params![
            id,
            packet.skill_name,
            serde_json::to_string(&packet.tags).unwrap_or_else(|_| "[]".to_owned()),
            packet.confidence
        ])?;
        let row = Pending {
            name: packet.skill_name.clone(),
            description: packet.skill_description.clone(),
            tags: packet.tags.join(" "),
            body: packet.skill_body.clone(),
        };
        PENDING.with(|p| p.borrow_mut().insert(id, row));
        indexed += 1;
    }
    tx.prepare_cached(
        "UPDATE skill_search_count SET skills = skills + ?1, writes = writes + 1 WHERE one = 1",
    )?
    .execute(params![indexed])?;
    Ok(())
}

/// A row of the index waiting for the end of its write transaction.
struct Pending {
    name: String,
    description: String,
    tags: String,
    body: String,
}

thread_local! {
    /// The rows [`follow`] indexed in this thread's write transaction, given
    /// to FTS5 together at its end ([`flush_pending`]). FTS5 writes the
    /// terms it holds in memory out as a new segment at every statement
    /// savepoint, and most statements of a skill's write open one (any that
    /// may change several rows and abort): indexed row by row, a pull of
    /// 10,000 skills wrote one tiny segment per skill and spent a seventh
    /// of its CPU writing and merging them. A write transaction runs on one
    /// thread from its start to its commit, under the store's lock.
    static PENDING: RefCell<BTreeMap<i64, Pending>> = const { RefCell::new(BTreeMap::new()) };
}

/// Drops the pending row `id` of this transaction; whether there was one.
fn take_pending(id: i64) -> bool {
    PENDING.with(|p| p.borrow_mut().remove(&id).is_some())
}

/// Gives FTS5 the rows [`follow`] indexed in this transaction, in row id
/// order, one statement after the other (none opens a savepoint): call
/// before the commit.
pub(super) fn flush_pending(tx: &Connection) -> Result<(), rusqlite::Error> {
    let rows = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if rows.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO skill_search (rowid, name, description, tags, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (id, row) in rows {
        insert.execute(params![id, row.name, row.description, row.tags, row.body])?;
    }
    Ok(())
}

/// Forgets the pending rows of a transaction that did not commit (and of
/// one a panic left behind, at the start of the next).
pub(super) fn discard_pending() {
    PENDING.with(|p| p.borrow_mut().clear());
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
        "SELECT COUNT(*) FROM sqlite_master
         WHERE (type = 'table' AND name IN ('skill_search', 'skill_search_docs', 'skill_search_terms',
                                            'skill_search_count'))
            OR (type = 'trigger' AND name LIKE 'skill\\_search\\_shown\\_%' ESCAPE '\\')",
        [],
        |r| r.get(0),
    )?;
    if tables < 4 + index_tables!().matches("CREATE TRIGGER").count() as i64 {
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
    let counted: i64 = conn.query_row("SELECT skills FROM skill_search_count", [], |r| r.get(0))?;
    Ok((indexed != held || counted != indexed).then_some("does not match the skills held"))
}

/// Drops whatever is left of the index and indexes every held skill again,
/// in one transaction; how many it indexed.
fn rebuild(conn: &mut Connection) -> Result<usize, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    discard_pending();
    let triggers: Vec<String> = tx
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'skill\\_search\\_%' ESCAPE '\\'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for trigger in triggers {
        tx.execute_batch(&format!("DROP TRIGGER \"{trigger}\""))?;
    }
    // The count of writes goes on from the old index's, so that counts
    // remembered of it ([`WordCounts`]) are never taken for the new one's.
    let writes: i64 = tx.query_row("SELECT writes FROM skill_search_count", [], |r| r.get(0)).unwrap_or(0);
    tx.execute_batch(concat!(drop_index!(), index_tables!()))?;
    tx.execute("UPDATE skill_search_count SET writes = ?1", params![writes.saturating_add(1)])?;
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
    if let Err(e) = flush_pending(&tx) {
        discard_pending();
        return Err(e.into());
    }
    tx.commit()?;
    Ok(indexed)
}

#[cfg(test)]
mod tests;
