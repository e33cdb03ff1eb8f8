//! Full-text search on a hub (#24 item 1): PostgreSQL's full-text search
//! over the skills the hub serves, answering `GET /v1/search` as the node's
//! own index does ([`crate::store::search`]) — the same query parser
//! ([`Query`]), the same ranking rule and evidence boost, the same answer.
//!
//! Each skill's `search` column is a `tsvector` the merge writes
//! ([`indexed`]): its words split and folded by the node's own tokenizer
//! (`query::words`, `query::fold`) rather than a text search configuration,
//! so that a word is a word on a hub exactly when it is one in the node's
//! FTS5 index; weighted A name, B description, C tags, D body; with
//! positions, a position left empty between fields so that a phrase stays
//! in one field. A GIN index serves `@@`. A query's terms become `tsquery`
//! terms: a word `'w'`, a prefix `'w':*`, a phrase `'a' <-> 'b'`; a term's
//! best field is the first of its weight-restricted forms (`'w':A`, `:B`,
//! `:C`) that matches, else the body.
//!
//! Ranking, as the node's (`search/rank.rs`): each term adds its IDF
//! (`ln(1 + (N − n + 0.5) / (n + 0.5))`, a phrase as its rarest word) times
//! the weight of its best field (10, 5, 3, 1), times `1 + 0.5 × confidence`;
//! ties go to the better-evidenced quarter of confidence, then the older.
//! Only served skills are indexed (not tombstones, not skills kept from
//! resharing): a quarantined packet never reaches `hub_skills`.
//!
//! Where it differs from the node's index (`README.md` › Searching skills):
//! - a prefix's IDF counts the skills holding a word with that prefix, each
//!   once (the node adds up its words' counts);
//! - the database scores every match and keeps the 1,000 best-scored (the
//!   node ranks the 1,000 best-evidenced);
//! - PostgreSQL's `tsvector` bounds: a word over [`MAX_WORD_BYTES`] is not
//!   indexed, a position past [`MAX_POSITION`] counts as that one and a word
//!   keeps its first [`MAX_POSITIONS`] (a phrase deep in a long body may not
//!   be found), and words past [`MAX_WORDS_BYTES`] of distinct words are not
//!   indexed;
//! - folding: both sides fold with `query::fold` (accents removed by
//!   decomposition, lower case); SQLite's `remove_diacritics 2` also maps a
//!   few letters without a decomposition (ł, ø, đ) to their base letter.

use std::collections::HashMap;
use std::fmt::Write as _;

use ecp_protocol::SkillPacket;
use postgres::Transaction;
use postgres::types::ToSql;

use super::merge::text;
use super::{HubStore, REPEATABLE, packed};
use crate::store::search::query::{Term, fold, words};
use crate::store::search::{CANDIDATES, EVIDENCE_BOOST, Query, SearchHit, WEIGHTS};
use crate::store::{StoreError, from_json};

/// Longest word a `tsvector` keeps, in bytes (PostgreSQL's `MAXSTRLEN`).
pub(super) const MAX_WORD_BYTES: usize = 2_047;
/// Highest position in a `tsvector` (`MAXENTRYPOS − 1`).
pub(super) const MAX_POSITION: u32 = 16_383;
/// Most positions a word keeps (`MAXNUMPOS − 1`).
pub(super) const MAX_POSITIONS: usize = 255;
/// Bytes of distinct words one `tsvector` holds: under PostgreSQL's 1 MiB
/// (`MAXSTRPOS`), past which the whole merge would fail.
pub(super) const MAX_WORDS_BYTES: usize = 1_000_000;

/// Rows indexed per statement when a database from before search is filled.
const BACKFILL_BATCH: i64 = 500;

/// The weight letters of the fields, in `tsvector` order: name, description,
/// tags, body (D, the default, written as none).
const FIELD_WEIGHTS: [&str; 4] = ["A", "B", "C", ""];

/// The `search` column of a skill's current version: its words when the
/// hub serves it (`served`), none otherwise (a tombstone, a skill not to be
/// reshared), as a `tsvector` literal.
pub(super) fn indexed(packet: &SkillPacket, served: bool) -> String {
    if served { document(packet) } else { String::new() }
}

/// `packet`'s words as a `tsvector` literal: `'word':1A,7D 'other':2A …`.
fn document(packet: &SkillPacket) -> String {
    let tags = packet.tags.join(" ");
    let fields = [packet.skill_name.as_str(), &packet.skill_description, &tags, &packet.skill_body];
    // Each word with its positions, in the order first seen.
    let mut lexemes: Vec<(String, Vec<(u32, usize)>)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let (mut bytes, mut position) = (0usize, 1u32);
    for (field, text) in fields.iter().enumerate() {
        for word in words(text) {
            let at = position.min(MAX_POSITION);
            position = position.saturating_add(1);
            let lexeme = fold(word);
            if lexeme.is_empty() || lexeme.len() > MAX_WORD_BYTES {
                continue;
            }
            let slot = match seen.get(&lexeme) {
                Some(&slot) => slot,
                None if bytes + lexeme.len() > MAX_WORDS_BYTES => continue,
                None => {
                    bytes += lexeme.len();
                    seen.insert(lexeme.clone(), lexemes.len());
                    lexemes.push((lexeme, Vec::new()));
                    lexemes.len() - 1
                }
            };
            let positions = &mut lexemes[slot].1;
            if positions.len() < MAX_POSITIONS && positions.last().is_none_or(|&(last, _)| last < at) {
                positions.push((at, field));
            }
        }
        // An empty position between fields: no phrase spans two.
        position = position.saturating_add(1);
    }
    let mut literal = String::with_capacity(bytes + 8 * lexemes.len());
    for (lexeme, positions) in &lexemes {
        // Letters and digits only (the tokenizer's words): nothing to escape.
        let _ = write!(literal, "'{lexeme}':");
        for (i, (at, field)) in positions.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(literal, "{comma}{at}{}", FIELD_WEIGHTS[*field]);
        }
        literal.push(' ');
    }
    literal
}

/// `term` as a `tsquery`: its words side by side, the last a prefix if
/// asked, each restricted to the field of `weight` (`"A"`…), or to none (`""`).
fn tsquery(term: &Term, weight: &str) -> String {
    let last = term.words.len() - 1;
    let mut query = String::from("(");
    for (i, word) in term.words.iter().enumerate() {
        if i > 0 {
            query.push_str(" <-> ");
        }
        let star = if term.prefix && i == last { "*" } else { "" };
        let colon = if star.is_empty() && weight.is_empty() { "" } else { ":" };
        let _ = write!(query, "'{word}'{colon}{star}{weight}");
    }
    query.push(')');
    query
}

/// What every hit matches: every term, and every word of each tag in the tags.
fn matching(query: &Query) -> String {
    let mut all: Vec<String> = query.terms.iter().map(|t| tsquery(t, "")).collect();
    for tag in query.tags() {
        all.extend(words(tag).map(|w| format!("'{}':C", fold(w))));
    }
    all.join(" & ")
}

impl HubStore {
    /// The served skills matching `query`, best first, at most `limit`.
    pub fn search(&self, query: &Query, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let mut conn = self.pool.get()?;
        let mut tx = conn.build_transaction().read_only(true).isolation_level(REPEATABLE).start()?;
        let skills: i64 =
            tx.query_one("SELECT COUNT(*) FROM hub_skills WHERE shareable AND NOT deprecated", &[])?.get(0);
        let mut params: Vec<Box<dyn ToSql + Sync>> = vec![Box::new(matching(query))];
        let mut relevance = Vec::with_capacity(query.terms.len());
        for term in &query.terms {
            let n = params.len();
            relevance.push(format!(
                "CASE WHEN search @@ ${}::text::tsquery THEN {:?} WHEN search @@ ${}::text::tsquery THEN {:?}
                      WHEN search @@ ${}::text::tsquery THEN {:?} ELSE {:?} END * ${}::float8",
                n + 1,
                WEIGHTS[0],
                n + 2,
                WEIGHTS[1],
                n + 3,
                WEIGHTS[2],
                WEIGHTS[3],
                n + 4
            ));
            params.extend(
                FIELD_WEIGHTS[..3].iter().map(|w| Box::new(tsquery(term, w)) as Box<dyn ToSql + Sync>),
            );
            params.push(Box::new(idf(&mut tx, term, skills as f64)?));
        }
        let sql = format!(
            "SELECT name, description, tags, origin, confidence,
                    ({}) * (1 + {EVIDENCE_BOOST:?} * GREATEST(LEAST(confidence, 1), 0)) AS score
             FROM hub_skills WHERE search @@ $1::text::tsquery
             ORDER BY score DESC, LEAST(FLOOR(GREATEST(LEAST(confidence, 1), 0) * 4), 3) DESC, seq
             LIMIT {CANDIDATES}",
            relevance.join(" + ")
        );
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        let rows = tx.query(&sql, &params)?;
        tx.commit()?;
        let mut hits = Vec::with_capacity(limit);
        for row in rows {
            let tags: Vec<String> = serde_json::from_str(row.get(2)).unwrap_or_default();
            // The tags' words matched; a tag itself is compared whole, as the node does.
            if !query.tags().iter().all(|tag| tags.iter().any(|t| t.eq_ignore_ascii_case(tag))) {
                continue;
            }
            hits.push(SearchHit {
                name: row.get(0),
                description: row.get(1),
                tags,
                kind: "external",
                origin: row.get(3),
                confidence: row.get(4),
                private: false,
                score: row.get(5),
            });
            if hits.len() == limit {
                break;
            }
        }
        Ok(hits)
    }
}

/// A term's IDF among `skills` served: by the skills holding its rarest word.
fn idf(tx: &mut Transaction<'_>, term: &Term, skills: f64) -> Result<f64, StoreError> {
    let last = term.words.len() - 1;
    let mut holding = skills;
    for (i, word) in term.words.iter().enumerate() {
        let one = Term { words: vec![word.clone()], prefix: term.prefix && i == last };
        let n: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM hub_skills WHERE search @@ $1::text::tsquery",
                &[&tsquery(&one, "")],
            )?
            .get(0);
        holding = holding.min(n as f64);
    }
    Ok((1.0 + (skills - holding + 0.5) / (holding + 0.5)).ln())
}

/// Fills the search columns of the skills written before there were any
/// (schema 2), in `tx`; how many it filled.
pub(super) fn backfill(tx: &mut Transaction<'_>) -> Result<u64, StoreError> {
    let mut filled = 0;
    loop {
        let rows = tx.query(
            "SELECT name, packet, shareable AND NOT deprecated FROM hub_skills WHERE search IS NULL LIMIT $1",
            &[&BACKFILL_BATCH],
        )?;
        if rows.is_empty() {
            return Ok(filled);
        }
        for row in rows {
            let packet: SkillPacket = from_json(&packed::json(rusqlite::types::ValueRef::Blob(row.get(1)))?)?;
            tx.execute(
                "UPDATE hub_skills SET description = $2, search = $3::text::tsvector WHERE name = $1",
                &[
                    &row.get::<_, &str>(0),
                    &text(&packet.skill_description).as_ref(),
                    &indexed(&packet, row.get(2)),
                ],
            )?;
            filled += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecp_protocol::{Origin, Timestamp};

    fn packet(name: &str, description: &str, body: &str) -> SkillPacket {
        let origin = Origin::new("alice", "test", "linux/amd64", "5.0.0");
        let at = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
        SkillPacket::new(&origin, name, description, body, 0.9, at).with_tags(["ops", "Déploy"])
    }

    #[test]
    fn words_are_split_and_folded_as_the_node_does_with_a_gap_between_fields() {
        let p = packet("roll-back", "Undo a Café release", "Roll back.");
        assert_eq!(
            document(&p),
            "'roll':1A,12 'back':2A,13 'undo':4B 'a':5B 'cafe':6B 'release':7B 'ops':9C 'deploy':10C "
        );
        assert_eq!(indexed(&p, false), "", "a skill not served is not indexed");
    }

    #[test]
    fn positions_words_and_distinct_bytes_stop_at_postgresqls_bounds() {
        // One word at the bound is kept, one past it is not.
        let at = "a".repeat(MAX_WORD_BYTES);
        let past = "b".repeat(MAX_WORD_BYTES + 1);
        let doc = document(&packet("n", "d", &format!("{at} {past}")));
        assert!(doc.contains(&format!("'{at}':")), "a word of {MAX_WORD_BYTES} bytes is kept");
        assert!(!doc.contains("'bbb"), "a longer one is not");
        // A word keeps its first MAX_POSITIONS positions; none past MAX_POSITION.
        let doc = document(&packet("n", "d", &"w ".repeat(MAX_POSITION as usize + 10)));
        let w = doc.split(' ').find(|l| l.starts_with("'w':")).unwrap();
        assert_eq!(w.split(',').count(), MAX_POSITIONS);
        let doc = document(&packet("n", "d", &format!("{} last", "x ".repeat(MAX_POSITION as usize + 10))));
        assert!(doc.contains(&format!("'last':{MAX_POSITION}")), "a late word at the last position");
        // Distinct words up to MAX_WORDS_BYTES, none past: n, d, ops and
        // deploy take 11 bytes, then 8 bytes a word.
        let word = |i: usize| format!("w{i:07}");
        let last = (MAX_WORDS_BYTES - 11) / 8 - 1;
        let body: Vec<String> = (0..=last + 1).map(word).collect();
        let doc = document(&packet("n", "d", &body.join(" ")));
        assert!(doc.contains(&format!("'{}'", word(last))), "the last word that fits");
        assert!(!doc.contains(&format!("'{}'", word(last + 1))), "one past the bound");
    }

    #[test]
    fn terms_become_tsquery_terms_restricted_to_a_field() {
        let query = Query::parse("Roll* \"bad deploy\" ops").unwrap().tagged(vec!["x-y".into()]).unwrap();
        let terms: Vec<String> = query.terms.iter().map(|t| tsquery(t, "A")).collect();
        assert_eq!(terms, ["('roll':*A)", "('bad':A <-> 'deploy':A)", "('ops':A)"]);
        assert_eq!(matching(&query), "('roll':*) & ('bad' <-> 'deploy') & ('ops') & 'x':C & 'y':C");
    }
}
