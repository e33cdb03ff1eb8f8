//! The query's rewriting and bounds, the ranking, and the index following
//! writes and rebuilt at open.

use ecp_protocol::{Origin, SkillKind, SkillPacket};
use rusqlite::Connection;

use super::*;
use crate::store::{DB_FILE, Source, now};

fn fts(text: &str) -> String {
    Query::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}")).fts
}

#[test]
fn words_prefixes_and_phrases_pass_quoted() {
    assert_eq!(fts("deploy"), r#""deploy""#);
    assert_eq!(fts("  deploy   kube*  "), r#""deploy" "kube"*"#);
    assert_eq!(fts(r#""tag the release" git"#), r#""tag the release" "git""#);
    assert_eq!(fts(r#""tag-the  rel"*"#), r#""tag the rel"*"#);
    assert_eq!(fts("kube**"), r#""kube"*"#);
    assert_eq!(fts("k8s-dep*"), r#""k8s" "dep"*"#);
}

#[test]
fn fts5_operators_are_searched_as_text() {
    assert_eq!(fts("a AND b OR NOT c"), r#""a" "AND" "b" "OR" "NOT" "c""#);
    assert_eq!(fts("NEAR(a b) name:x ^y"), r#""NEAR" "a" "b" "name" "x" "y""#);
    // Punctuation alone is left out; inside a word it separates words.
    assert_eq!(fts("c++ - && x"), r#""c" "x""#);
}

#[test]
fn bad_queries_are_refused_with_the_reason() {
    assert_eq!(Query::parse(""), Err(QueryError::Empty));
    assert_eq!(Query::parse(" \t\n"), Err(QueryError::Empty));
    assert_eq!(Query::parse(r#"deploy "the rel"#), Err(QueryError::UnclosedQuote));
    assert_eq!(Query::parse(r#"- ( ) "" * :"#), Err(QueryError::NoWords));
    let message = QueryError::UnclosedQuote.to_string();
    assert!(message.contains("close it"), "{message}");
}

#[test]
fn the_query_length_is_bounded_at_its_limit() {
    let at = "a".repeat(MAX_QUERY_BYTES);
    assert!(Query::parse(&at).is_ok());
    let over = "a".repeat(MAX_QUERY_BYTES + 1);
    assert_eq!(Query::parse(&over), Err(QueryError::TooLong { len: MAX_QUERY_BYTES + 1 }));
}

#[test]
fn the_terms_are_bounded_at_their_limit() {
    let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    assert!(Query::parse(&words(MAX_TERMS)).is_ok());
    assert_eq!(Query::parse(&words(MAX_TERMS + 1)), Err(QueryError::TooManyTerms { count: MAX_TERMS + 1 }));
}

#[test]
fn the_limit_is_bounded_at_its_limit() {
    assert_eq!(limit(None), Ok(DEFAULT_LIMIT));
    assert_eq!(limit(Some("1")), Ok(1));
    assert_eq!(limit(Some(&MAX_LIMIT.to_string())), Ok(MAX_LIMIT));
    for bad in ["0", "101", "-1", "ten", ""] {
        assert!(matches!(limit(Some(bad)), Err(QueryError::Limit(_))), "{bad}");
    }
}

fn packet(name: &str, description: &str, body: &str, confidence: f64) -> SkillPacket {
    let origin = Origin::new("tester", "u", "linux/amd64", "1");
    SkillPacket::new(&origin, name, description, body, confidence, now())
}

fn store_with(packets: &[SkillPacket]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store
        .transaction(|tx| {
            for p in packets {
                tx.install(p, SkillKind::Local, true, &Source::Operator)?;
            }
            Ok(())
        })
        .unwrap();
    (dir, store)
}

fn names(store: &Store, query: &str) -> Vec<String> {
    store.search(&Query::parse(query).unwrap(), MAX_LIMIT).unwrap().into_iter().map(|h| h.name).collect()
}

#[test]
fn name_and_description_rank_above_the_body() {
    let filler = "Some words about other things entirely. ".repeat(3);
    let (_dir, store) = store_with(&[
        packet("in-body", "Unrelated", &format!("{filler} rollback the deploy"), 0.5),
        packet("rollback", "Unrelated", &filler, 0.5),
        packet("other", "How to rollback safely", &filler, 0.5),
    ]);
    let found = names(&store, "rollback");
    assert_eq!(found, ["rollback", "other", "in-body"]);
}

#[test]
fn phrases_keep_their_words_in_order() {
    let (_dir, store) = store_with(&[
        packet("ordered", "Roll back a bad deploy", "Body", 0.5),
        packet("reversed", "Deploy bad code", "Body", 0.9),
    ]);
    assert_eq!(names(&store, "bad deploy"), ["reversed", "ordered"], "words in any order");
    assert_eq!(names(&store, r#""bad deploy""#), ["ordered"]);
    assert_eq!(names(&store, r#""bad dep"*"#), ["ordered"]);
    assert!(names(&store, r#""code bad deploy""#).is_empty());
}

#[test]
fn confidence_boosts_equal_text() {
    let (_dir, store) = store_with(&[
        packet("alpha", "Tag the release", "Body", 0.2),
        packet("bravo", "Tag the release", "Body", 0.9),
    ]);
    let hits = store.search(&Query::parse("release").unwrap(), 10).unwrap();
    assert_eq!(hits.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["bravo", "alpha"]);
    let ratio = hits[0].score / hits[1].score;
    let expected = (1.0 + EVIDENCE_BOOST * 0.9) / (1.0 + EVIDENCE_BOOST * 0.2);
    assert!((ratio - expected).abs() < 1e-9, "{ratio} vs {expected}");
}

#[test]
fn the_index_follows_updates_and_tombstones() {
    let (_dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    assert_eq!(names(&store, "release"), ["alpha"]);
    store
        .transaction(|tx| {
            tx.install(
                &packet("alpha", "Write the changelog", "Body", 0.5),
                SkillKind::Local,
                true,
                &Source::Operator,
            )
        })
        .unwrap();
    assert!(names(&store, "release").is_empty(), "the old text left the index");
    assert!(store.search_index_bytes().unwrap() > 0, "the index's pages are counted");
    assert_eq!(names(&store, "changelog"), ["alpha"]);
    store.tombstone("alpha", Source::Operator).unwrap();
    assert!(names(&store, "changelog").is_empty(), "a tombstone leaves the index");
}

#[test]
fn a_dropped_or_corrupt_index_is_rebuilt_at_open() {
    let (dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    drop(store);
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.execute_batch("DROP TABLE skill_search").unwrap();
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(names(&store, "release"), ["alpha"], "rebuilt after a drop");
    drop(store);

    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.execute_batch("UPDATE skill_search_data SET block = x'0102030405' WHERE id > 10").unwrap();
    assert!(fault(&conn).unwrap().is_some(), "the damage is seen");
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(names(&store, "release"), ["alpha"], "rebuilt after corruption");
    assert_eq!(fault(&store.conn()).unwrap(), None);
}

#[test]
fn a_search_that_meets_a_corrupt_index_rebuilds_it_and_answers() {
    let (_dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    // Damaged while the store is open (what a large index's open does not read).
    store.conn().execute_batch("UPDATE skill_search_data SET block = x'0102030405' WHERE id > 10").unwrap();
    assert!(ranked(&store.conn(), &Query::parse("release").unwrap(), 10).is_err(), "the damage is met");
    assert_eq!(names(&store, "release"), ["alpha"], "rebuilt, then answered");
    assert_eq!(fault(&store.conn()).unwrap(), None);
}

#[test]
fn a_query_ranks_the_best_evidenced_candidates_when_more_match() {
    // One past the bound, the least confident: its text is the most
    // relevant, but it is not among the matches ranked.
    let mut packets: Vec<SkillPacket> = (0..CANDIDATES)
        .map(|i| packet(&format!("s{i}"), "common words", "Body", 0.9 - i as f64 / (2.0 * CANDIDATES as f64)))
        .collect();
    let least = format!("s{CANDIDATES}");
    packets.push(packet(&least, "common common common", "Body unique", 0.1));
    let (_dir, store) = store_with(&packets);
    let all = store.search(&Query::parse("common").unwrap(), MAX_LIMIT).unwrap();
    assert_eq!(all.len(), MAX_LIMIT);
    assert_eq!(all[0].name, "s0", "equal text: the most confident first");
    assert!(!all.iter().any(|h| h.name == least));
    // Fewer matches: all ranked, and it comes first. The bound is on ranking, not on matching.
    assert_eq!(names(&store, "common unique"), std::slice::from_ref(&least));
    assert_eq!(names(&store, "common body unique"), [least]);
}
