//! The query's rewriting and bounds, the ranking (field weights, IDF,
//! prefixes, phrases checked against the text, the evidence boost), the
//! tags filter, and the index following writes and rebuilt at open.

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
    // A phrase reaches FTS5 as its words (no positions in the index); ranking checks their order.
    assert_eq!(fts(r#""tag the release" git"#), r#""tag" "the" "release" "git""#);
    assert_eq!(fts(r#""tag-the  rel"*"#), r#""tag" "the" "rel"*"#);
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
    // Words joined by punctuation, and a phrase's words, count one by one.
    let dotted = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(".");
    assert!(Query::parse(&dotted(MAX_TERMS)).is_ok());
    assert_eq!(Query::parse(&dotted(MAX_TERMS + 1)), Err(QueryError::TooManyTerms { count: MAX_TERMS + 1 }));
    let phrase = format!("\"{}\"", words(MAX_TERMS + 1));
    assert_eq!(Query::parse(&phrase), Err(QueryError::TooManyTerms { count: MAX_TERMS + 1 }));
}

#[test]
fn words_split_where_the_index_tokenizer_splits_them() {
    // Vowel signs and other marks are separators to unicode61, though
    // `char::is_alphanumeric` counts them: a Devanagari or Thai word is
    // its letters' runs, never one quoted string FTS5 would take for a phrase.
    assert_eq!(query::words("काम").collect::<Vec<_>>(), ["क", "म"]);
    assert_eq!(query::words("aⒶb aͅb x1").collect::<Vec<_>>(), ["a", "b", "a", "b", "x1"]);
    assert_eq!(query::words("日本語 Straße").collect::<Vec<_>>(), ["日本語", "Straße"]);
    // Marks alone are no words.
    assert_eq!(Query::parse("\u{93e}"), Err(QueryError::NoWords));
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
fn queries_in_scripts_with_vowel_signs_and_marks_are_answered() {
    let (_dir, store) = store_with(&[
        packet("hindi", "काम करने का तरीका", "Body", 0.5),
        packet("thai", "สวัสดี ครับ", "Body", 0.5),
        packet("latin", "Plain words", "Body", 0.5),
    ]);
    // Each was an FTS5 error (a quoted word it splits is a phrase) before.
    for (query, hit) in [("काम", "hindi"), ("\"काम करने\"", "hindi"), ("สวัสดี", "thai")]
    {
        let found =
            store.search(&Query::parse(query).unwrap(), MAX_LIMIT).unwrap_or_else(|e| panic!("{query}: {e}"));
        let found: Vec<String> = found.into_iter().map(|h| h.name).collect();
        assert_eq!(found, [hit], "{query}");
    }
    assert!(store.search(&Query::parse("aⒶb aͅb").unwrap(), MAX_LIMIT).is_ok());
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
fn a_skill_indexed_and_replaced_in_one_transaction_is_indexed_once_with_its_last_text() {
    let (_dir, store) = store_with(&[]);
    store
        .transaction(|tx| {
            for (description, confidence) in [("Tag the release", 0.5), ("Write the changelog", 0.9)] {
                let p = packet("alpha", description, "Body", confidence);
                tx.install(&p, SkillKind::Local, true, &Source::Operator)?;
            }
            tx.install(
                &packet("beta", "Plan the sprint", "Body", 0.5),
                SkillKind::Local,
                true,
                &Source::Operator,
            )
        })
        .unwrap();
    assert!(names(&store, "release").is_empty(), "the replaced text never reached the index");
    assert_eq!(names(&store, "changelog"), ["alpha"]);
    assert_eq!(names(&store, "sprint"), ["beta"]);
    assert_eq!(fault(&store.conn()).unwrap(), None, "rows and counts agree");
}

#[test]
fn the_rows_of_a_transaction_that_failed_never_reach_the_index() {
    let (_dir, store) = store_with(&[]);
    let failed = store.transaction(|tx| {
        tx.install(
            &packet("alpha", "Tag the release", "Body", 0.5),
            SkillKind::Local,
            true,
            &Source::Operator,
        )?;
        Err::<(), _>(StoreError::NoSuchSkill("on purpose".into()))
    });
    assert!(failed.is_err());
    store
        .transaction(|tx| {
            tx.install(
                &packet("beta", "Plan the sprint", "Body", 0.5),
                SkillKind::Local,
                true,
                &Source::Operator,
            )
        })
        .unwrap();
    assert!(names(&store, "release").is_empty(), "nothing of the rolled-back install");
    assert_eq!(names(&store, "sprint"), ["beta"]);
    assert_eq!(fault(&store.conn()).unwrap(), None, "rows and counts agree");
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
    assert!(
        rank::ranked(&store.conn(), &mut WordCounts::default(), &Query::parse("release").unwrap(), 10)
            .is_err(),
        "the damage is met"
    );
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

#[test]
fn a_phrase_matches_its_words_in_order_within_one_field_only() {
    let (_dir, store) = store_with(&[
        packet("in-description", "Roll back a bad deploy", "Body", 0.5),
        packet("in-body", "Unrelated", "When a bad deploy ships, roll back.", 0.5),
        packet("apart", "A bad day", "Then deploy again.", 0.9),
        packet("across-fields", "Check the deploy", "Bad news first.", 0.9),
        packet("reversed", "Deploy bad code", "Body", 0.9),
        packet("accents", "Un déploiement raté", "Body", 0.5),
    ]);
    // The words alone match every skill holding both, in any order and field.
    assert_eq!(names(&store, "bad deploy").len(), 5);
    // The phrase: only where the words stand next to each other, in order, in one field.
    assert_eq!(names(&store, r#""bad deploy""#), ["in-description", "in-body"]);
    assert_eq!(names(&store, r#""BAD-Deploy""#), ["in-description", "in-body"], "case and punctuation");
    assert_eq!(
        names(&store, r#""a bad dep"*"#),
        ["in-description", "in-body"],
        "a phrase ending in a prefix"
    );
    assert!(names(&store, r#""bad deployment""#).is_empty(), "the last word is whole unless starred");
    assert!(names(&store, r#""deploy bad code again""#).is_empty());
    // Accents and case are folded as the index folds them.
    assert_eq!(names(&store, r#""deploiement rate""#), ["accents"]);
    assert_eq!(names(&store, r#""DÉPLOIEMENT raté""#), ["accents"]);
}

#[test]
fn a_prefix_matches_words_starting_with_it_and_weighs_like_a_word() {
    let (_dir, store) = store_with(&[
        packet("enroll-users", "Add users", "Body", 0.9),
        packet("rolling-restart", "Restart nodes", "Body", 0.5),
        packet("notes", "Unrelated", "How to roll back.", 0.9),
    ]);
    // The name's hit first, whatever the evidence; never a word merely containing it.
    assert_eq!(names(&store, "roll*"), ["rolling-restart", "notes"]);
    assert_eq!(names(&store, "rolling*"), ["rolling-restart"]);
    assert!(names(&store, "rollx*").is_empty());
}

#[test]
fn the_field_a_word_is_in_weighs_name_then_description_then_tags_then_body() {
    let filler = "Some words about other things entirely.";
    let body_heavy = format!("{filler} {}", "rotate ".repeat(50));
    let mut tagged = packet("tagged", "Unrelated", filler, 0.9);
    tagged.tags = vec!["rotate".into()];
    let (_dir, store) = store_with(&[
        packet("in-body", "Unrelated", &body_heavy, 1.0),
        tagged,
        packet("described", "How to rotate keys", filler, 0.6),
        packet("rotate-keys", "Unrelated", filler, 0.3),
    ]);
    // The boost (at most 1.5×) never lifts a hit over a better field, and
    // a word said fifty times in the body counts once.
    assert_eq!(names(&store, "rotate"), ["rotate-keys", "described", "tagged", "in-body"]);
    let hits = store.search(&Query::parse("rotate").unwrap(), 10).unwrap();
    let relevance = |h: &SearchHit| h.score / (1.0 + EVIDENCE_BOOST * h.confidence);
    let ratio = relevance(&hits[0]) / relevance(&hits[3]);
    assert!((ratio - WEIGHTS[0] / WEIGHTS[3]).abs() < 1e-9, "name : body = 10 : 1, got {ratio}");
}

#[test]
fn the_columns_function_tells_the_fields_of_each_word_in_the_expressions_order() {
    let mut p = packet("deploy-tool", "Ships builds", "ships the deploy code", 0.5);
    p.tags = vec!["deploy".into(), "infra".into()];
    let (dir, store) = store_with(&[p, packet("other", "Unrelated", "Unrelated", 0.5)]);
    let columns = |query: Query| -> Vec<Vec<u8>> {
        let conn = store.conn();
        let mut stmt = conn
            .prepare("SELECT ecp_columns(skill_search) FROM skill_search WHERE skill_search MATCH ?1")
            .unwrap();
        stmt.query_map([&query.fts], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    };
    // Bits: 1 name, 2 description, 4 tags, 8 body; the terms' words first, then the tags'.
    let tagged = Query::parse("deploy ships").unwrap().tagged(vec!["infra".into()]).unwrap();
    assert_eq!(columns(tagged), [vec![1 | 4 | 8, 2 | 8, 4]]);
    // A phrase's words one by one, and a prefix.
    assert_eq!(columns(Query::parse("\"the deploy\" build*").unwrap()), [vec![8, 1 | 4 | 8, 2]]);
    // The same function on every connection the store opens: a reopened store answers too.
    let reopened = Store::open(dir.path()).unwrap();
    let conn = reopened.conn();
    let n: Vec<u8> = conn
        .query_row(
            "SELECT ecp_columns(skill_search) FROM skill_search WHERE skill_search MATCH 'unrelated'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, [2 | 8]);
}

#[test]
fn a_rarer_word_weighs_more_than_a_common_one() {
    // "kettle" is in every skill, "teapot" in two: the skill naming the rare word comes first.
    let mut packets: Vec<SkillPacket> =
        (0..8).map(|i| packet(&format!("kettle-{i}"), "Boil water", "kettle", 0.5)).collect();
    packets.push(packet("kettle-brand", "A teapot", "kettle", 0.5));
    packets.push(packet("teapot-care", "A kettle", "kettle", 0.5));
    let (_dir, store) = store_with(&packets);
    assert_eq!(names(&store, "kettle teapot"), ["teapot-care", "kettle-brand"]);
}

#[test]
fn tags_narrow_every_match_not_only_the_best_ranked() {
    // 150 skills hold the word; the one tagged is the least relevant and
    // least confident of them, and beyond the candidates a query ranks.
    let mut packets: Vec<SkillPacket> =
        (0..150).map(|i| packet(&format!("ferry-{i:03}"), "Ferry crossing times", "Body", 0.9)).collect();
    let filler: Vec<SkillPacket> =
        (0..CANDIDATES).map(|i| packet(&format!("boat-{i:04}"), "A boat", "ferry", 0.8)).collect();
    packets.extend(filler);
    let mut tagged = packet("zz-last", "Unrelated", "The ferry, once.", 0.05);
    tagged.tags = vec!["Harbour".into(), "night".into()];
    packets.push(tagged);
    let (_dir, store) = store_with(&packets);
    assert!(!names(&store, "ferry").contains(&"zz-last".to_owned()), "not among the ranked untagged");
    let tagged = |tags: &[&str]| {
        let query =
            Query::parse("ferry").unwrap().tagged(tags.iter().map(|t| (*t).to_owned()).collect()).unwrap();
        store.search(&query, MAX_LIMIT).unwrap().into_iter().map(|h| h.name).collect::<Vec<_>>()
    };
    assert_eq!(tagged(&["harbour"]), ["zz-last"], "case does not matter");
    assert_eq!(tagged(&["harbour", "NIGHT"]), ["zz-last"], "every tag");
    assert!(tagged(&["harbour", "day"]).is_empty(), "a tag it lacks");
    assert!(tagged(&["harb"]).is_empty(), "a tag is whole, not a prefix");
    // Through the text interface too, tags separated by commas.
    let answer = store.search_text("ferry", None, Some("Harbour,night")).unwrap().unwrap();
    assert_eq!(answer.results.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["zz-last"]);
    assert_eq!(answer.tags, ["Harbour", "night"]);
}

#[test]
fn a_tag_made_of_punctuation_is_compared_exactly() {
    let mut plus = packet("cpp-build", "Build it", "Body", 0.5);
    plus.tags = vec!["c++".into()];
    let (_dir, store) = store_with(&[plus, packet("c-build", "Build it", "Body", 0.5)]);
    let query = Query::parse("build").unwrap().tagged(vec!["++".into()]).unwrap();
    assert!(store.search(&query, 10).unwrap().is_empty());
    let query = Query::parse("build").unwrap().tagged(vec!["C++".into()]).unwrap();
    assert_eq!(store.search(&query, 10).unwrap()[0].name, "cpp-build");
}

#[test]
fn the_tags_are_bounded_at_their_limits() {
    let query = || Query::parse("deploy").unwrap();
    assert!(query().tagged(vec!["ops".into(); MAX_TAGS]).is_ok());
    assert_eq!(
        query().tagged(vec!["ops".into(); MAX_TAGS + 1]),
        Err(QueryError::TooManyTags { count: MAX_TAGS + 1 })
    );
    assert!(query().tagged(vec!["t".repeat(MAX_TAG_BYTES)]).is_ok());
    let long = "t".repeat(MAX_TAG_BYTES + 1);
    assert!(matches!(query().tagged(vec![long]), Err(QueryError::Tag(_))));
    let message = query().tagged(vec![" ".into()]).unwrap_err().to_string();
    assert!(message.contains("empty"), "{message}");
}

#[test]
fn an_index_of_the_former_shape_is_replaced_and_rebuilt_at_open() {
    let (dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    drop(store);
    // The index as migration 14 made it (the check at open finds it
    // missing its tables; the newest migration, 24, is not one to run twice).
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.execute_batch(
        "DROP TABLE skill_search_terms; DROP TABLE skill_search; DROP TABLE skill_search_docs;
         CREATE TABLE skill_search_docs (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT;
         CREATE VIRTUAL TABLE skill_search USING fts5(name, description, tags, body,
             content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(names(&store, r#""the release""#), ["alpha"]);
    let sql: String = store
        .conn()
        .query_row("SELECT sql FROM sqlite_master WHERE name = 'skill_search'", [], |r| r.get(0))
        .unwrap();
    assert!(sql.contains("detail = column"), "{sql}");
    assert_eq!(fault(&store.conn()).unwrap(), None);
}

#[test]
fn row_ids_order_the_index_by_evidence_level_then_age() {
    assert!(row_id(0.9, 500) < row_id(0.5, 1), "more confident first");
    assert!(row_id(0.8, 1) < row_id(0.9, 2), "within a quarter, older first");
    assert!(row_id(1.0, 7) < row_id(0.74, 1));
    assert_eq!(row_id(7.0, 3), row_id(1.0, 3), "confidence clamped");
    assert!(row_id(-1.0, 3) > row_id(0.25, 3));
}

/// Hides `name` from search the way a received skill waiting for review is hidden.
fn hide(store: &Store, name: &str) {
    store
        .conn()
        .execute(
            "INSERT INTO inbox (skill_name, integrity_hash, peer, received_at)
             SELECT name, integrity_hash, 'peer', 'now' FROM skills WHERE name = ?1",
            [name],
        )
        .unwrap();
}

fn visible_flag(store: &Store, name: &str) -> bool {
    store
        .conn()
        .query_row("SELECT visible FROM skill_search_docs WHERE name = ?1", [name], |r| r.get(0))
        .unwrap()
}

#[test]
fn hidden_skills_never_crowd_shown_ones_out_of_the_candidates() {
    // One more hidden skill than the candidates ranked, all better
    // evidenced (first in the index's order) than the one shown skill.
    let mut packets: Vec<SkillPacket> =
        (0..=CANDIDATES).map(|i| packet(&format!("held-{i:04}"), "A crowded word", "Body", 0.95)).collect();
    packets.push(packet("shown", "A crowded word", "Body", 0.1));
    let (_dir, store) = store_with(&packets);
    for i in 0..=CANDIDATES {
        hide(&store, &format!("held-{i:04}"));
    }
    assert_eq!(names(&store, "crowded"), ["shown"]);
    assert_eq!(names(&store, r#""a crowded word""#), ["shown"], "a phrase too");
}

#[test]
fn a_phrase_never_reads_a_hidden_skills_body() {
    // The hidden skill holds the words, in its body only, and its stored
    // packet cannot be read: a search that read it would fail.
    let (_dir, store) = store_with(&[
        packet("held", "Unrelated", "the words kettle and teapot, apart", 0.9),
        packet("shown", "Unrelated", "a kettle teapot set", 0.5),
    ]);
    hide(&store, "held");
    store.conn().execute("UPDATE skills SET packet = x'00' WHERE name = 'held'", []).unwrap();
    assert_eq!(names(&store, r#""kettle teapot""#), ["shown"]);
}

#[test]
fn the_index_knows_which_skills_are_shown_as_each_deciding_table_changes() {
    let (_dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    assert!(visible_flag(&store, "alpha"));
    let steps: [(&str, &str); 4] = [
        (
            "INSERT INTO inbox (skill_name, integrity_hash, peer, received_at)
             SELECT name, integrity_hash, 'peer', 'now' FROM skills WHERE name = 'alpha'",
            "DELETE FROM inbox WHERE skill_name = 'alpha'",
        ),
        (
            "INSERT INTO inbox_decisions (skill_name, integrity_hash, decision, decided_at)
             SELECT name, integrity_hash, 'rejected', 'now' FROM skills WHERE name = 'alpha'",
            "UPDATE inbox_decisions SET decision = 'accepted' WHERE skill_name = 'alpha'",
        ),
        (
            "INSERT INTO skill_scores (name, uses, successes, failures, streak, streak_hash, last_used,
                                       recent_after, retired_at)
             VALUES ('alpha', 1, 0, 1, 0, '', 'now', 0, 'now')",
            "UPDATE skill_scores SET retired_at = NULL WHERE name = 'alpha'",
        ),
        (
            "INSERT INTO revocations (name, digest, origin, key_id, reason, seq, recorded_at, revocation)
             SELECT name, integrity_hash, origin, 'k', 'bad', 1, 'now', '{}' FROM skills WHERE name = 'alpha'",
            "DELETE FROM revocations WHERE name = 'alpha'",
        ),
    ];
    for (hiding, showing) in steps {
        store.conn().execute(hiding, []).unwrap();
        assert!(!visible_flag(&store, "alpha"), "{hiding}");
        assert!(names(&store, "release").is_empty(), "{hiding}");
        store.conn().execute(showing, []).unwrap();
        assert!(visible_flag(&store, "alpha"), "{showing}");
        assert_eq!(names(&store, "release"), ["alpha"], "{showing}");
    }
    // A new version of a retired skill stays hidden: the row is made again with the flag.
    store.conn().execute("UPDATE skill_scores SET retired_at = 'now' WHERE name = 'alpha'", []).unwrap();
    store
        .transaction(|tx| {
            tx.install(
                &packet("alpha", "Tag the release", "New", 0.5),
                SkillKind::Local,
                true,
                &Source::Operator,
            )
        })
        .unwrap();
    assert!(!visible_flag(&store, "alpha"));
}

#[test]
fn the_skill_count_follows_writes_and_a_wrong_one_is_rebuilt_at_open() {
    let (dir, store) = store_with(&[
        packet("alpha", "Tag the release", "Body", 0.5),
        packet("bravo", "Tag the release", "Body", 0.5),
    ]);
    let counted = |store: &Store| -> i64 {
        store.conn().query_row("SELECT skills FROM skill_search_count", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(counted(&store), 2);
    store
        .transaction(|tx| {
            tx.install(&packet("alpha", "Tag it", "New", 0.5), SkillKind::Local, true, &Source::Operator)
        })
        .unwrap();
    assert_eq!(counted(&store), 2, "an update replaces the row");
    store.tombstone("alpha", Source::Operator).unwrap();
    assert_eq!(counted(&store), 1, "a tombstone leaves");
    store.conn().execute("UPDATE skill_search_count SET skills = 7", []).unwrap();
    assert_eq!(fault(&store.conn()).unwrap(), Some("does not match the skills held"));
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(counted(&store), 1);
}

#[test]
fn blank_tags_filter_nothing() {
    let (_dir, store) = store_with(&[packet("alpha", "Tag the release", "Body", 0.5)]);
    for blank in ["", " "] {
        let answer = store.search_text("release", None, Some(blank)).unwrap().unwrap();
        assert_eq!(answer.results.len(), 1, "{blank:?}");
        assert!(answer.tags.is_empty());
    }
    // An empty tag among others is still refused.
    assert!(matches!(store.search_text("release", None, Some("a,,b")).unwrap(), Err(QueryError::Tag(_))));
}

#[test]
fn a_phrase_never_spans_two_tags() {
    let mut two = packet("two-tags", "Unrelated", "Body", 0.5);
    two.tags = vec!["blue".into(), "green".into()];
    let mut one = packet("one-tag", "Unrelated", "Body", 0.5);
    one.tags = vec!["blue green".into()];
    let (_dir, store) = store_with(&[two, one]);
    assert_eq!(names(&store, "blue green").len(), 2);
    assert_eq!(names(&store, r#""blue green""#), ["one-tag"]);
}

#[test]
fn ranking_folds_words_exactly_as_the_index_does() {
    // Each word is in one skill's name and in a better-evidenced one's
    // body: the name weighs 10 to the body's 1 only if ranking folds the
    // query's word as the index folded the name's (ł, ø and ß kept as they
    // are, ς and µ taken for σ and μ, Greek accents kept).
    for (word, query) in [
        ("łódź", "ŁÓDŹ"),
        ("ørsted", "ØRSTED"),
        ("straße", "STRAẞE"),
        ("οδηγός", "ΟΔΗΓΌΣ"),
        ("µwave", "μwave"),
        ("한국어", "한국어"),
    ] {
        let (_dir, store) = store_with(&[
            packet("in-body", "Unrelated", &format!("Words then {word} here"), 1.0),
            packet(&format!("{word}-guide"), "Unrelated", "Body", 0.1),
        ]);
        assert_eq!(names(&store, query), [format!("{word}-guide"), "in-body".to_owned()], "{query}");
        assert_eq!(names(&store, &format!("\"{query} guide\"")), [format!("{word}-guide")], "{query}");
    }
    assert_eq!(query::fold("ΟΔΗΓΌΣ"), query::fold("οδηγός"));
    assert_eq!(query::fold("한국어"), "한국어", "Hangul syllables stay whole");
    assert_eq!(query::fold("Ærø"), "ærø");
}
