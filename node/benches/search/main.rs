//! Search benchmark (#24 item 1): 100,000 generated skills over a
//! vocabulary with Zipf-distributed word frequencies, searched with 1,000
//! one-word and 1,000 three-word queries, limit 10.
//!
//! Run with `cargo bench -p ecp-node --bench search` (another size as an
//! argument: `cargo bench -p ecp-node --bench search -- 20000`).
//!
//! The skills are installed into a fresh store (`ECP_BENCH_DIR`, default the
//! system temp folder) through [`Store::transaction`], 1,000 per
//! transaction: the same write path as a pull, so the index is built as it
//! is in use. Words are drawn from a vocabulary of 20,000 made-up words
//! with P(rank r) ∝ 1/r; each skill has a name of three words and its
//! number, a description of ten words, three tags and a body of 200 words.
//! The queries take their words by frequency rank, log-uniformly from rank
//! 1 (the commonest word, in nearly every skill) to the rarest, so about a
//! third of the one-word queries are words found in more than half of the
//! skills. Each query is timed through [`Store::search`] (parse, FTS5 match,
//! rank, evidence boost, visibility filter), not over HTTP.
//!
//! Then, not a goal of #24, 200 two-word phrases taken from the bodies
//! (the index keeps no positions: a phrase is checked against the text)
//! and 200 prefixes (a word's first two syllables and `*`).
//!
//! Printed: p50, p99 and max per kind of query (goal p99 ≤ 20 ms), its
//! five slowest queries each timed once more (slow again: the query's
//! work; fast again: the moment's — a cold cache, the scheduler), the
//! share of queries with words in more than half of the skills, the index's
//! bytes on disk (SQLite's `dbstat`) against the bodies' bytes (goal ≤ 0.5×),
//! apart from the rest of the database, and the time a reopen's index check
//! takes. Goals are printed as met or missed; the bench never fails on
//! them. Without `--bench` (`cargo test --benches`) it is a smoke test:
//! 2,000 skills, 100 queries of each kind.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ecp_node::store::search::Query;
use ecp_node::store::{DB_FILE, Source, Store, now};
use ecp_protocol::{Origin, SkillKind, SkillPacket};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const VOCABULARY: usize = 20_000;
const BODY_WORDS: usize = 200;
const P99_GOAL: Duration = Duration::from_millis(20);
const INDEX_GOAL: f64 = 0.5;

fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let size = std::env::args().skip(1).find_map(|a| a.parse().ok());
    let (skills, queries) = if bench { (size.unwrap_or(100_000), 1_000) } else { (2_000, 100) };
    match run(skills, queries) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("search bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The vocabulary and its Zipf sampler.
struct Words {
    words: Vec<String>,
    /// Cumulative weights, for sampling by inverse CDF.
    cumulative: Vec<f64>,
}

impl Words {
    fn new() -> Words {
        const SYLLABLES: [&str; 16] =
            ["ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "va", "ze", "bo", "du", "fe", "gi", "hu", "jo"];
        let words = (0..VOCABULARY)
            .map(|mut i| {
                // Three or four syllables from the rank: every word distinct.
                let mut word = String::new();
                for _ in 0..3 {
                    word.push_str(SYLLABLES[i % 16]);
                    i /= 16;
                }
                if i > 0 {
                    word.push_str(SYLLABLES[i % 16]);
                }
                word
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Words { words, cumulative }
    }

    fn draw(&self, rng: &mut StdRng) -> &str {
        let x = rng.random_range(0.0..*self.cumulative.last().expect("a vocabulary"));
        let rank = self.cumulative.partition_point(|&c| c < x).min(VOCABULARY - 1);
        &self.words[rank]
    }

    fn phrase(&self, rng: &mut StdRng, n: usize, sep: &str) -> String {
        (0..n).map(|_| self.draw(rng)).collect::<Vec<_>>().join(sep)
    }

    /// A word by frequency rank, log-uniformly over the ranks (0-based).
    fn by_rank(&self, rng: &mut StdRng) -> (usize, &str) {
        let rank = ((VOCABULARY as f64).powf(rng.random_range(0.0..1.0)) as usize).saturating_sub(1);
        (rank, &self.words[rank])
    }
}

fn run(skills: usize, queries: usize) -> anyhow::Result<()> {
    let base = std::env::var_os("ECP_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::tempdir_in(base)?;
    let words = Words::new();
    let mut rng = StdRng::seed_from_u64(24);
    let origin = Origin::new("bench", "u", "linux/amd64", "1");
    let store = Store::open(dir.path())?;

    let started = Instant::now();
    let mut body_bytes = 0u64;
    // In how many skills each word (by rank) is.
    let mut skills_with = vec![0usize; VOCABULARY];
    let rank_of: std::collections::HashMap<&str, usize> =
        words.words.iter().enumerate().map(|(rank, w)| (w.as_str(), rank)).collect();
    // Two words side by side in some body: the phrase queries.
    let mut phrases: Vec<String> = Vec::with_capacity(queries);
    let mut done = 0;
    while done < skills {
        let batch: Vec<SkillPacket> = (done..skills.min(done + 1_000))
            .map(|i| {
                let name = format!("{}-{i}", words.phrase(&mut rng, 3, "-"));
                let description = words.phrase(&mut rng, 10, " ");
                let body = words.phrase(&mut rng, BODY_WORDS, " ");
                let confidence = rng.random_range(0.3..1.0);
                let tags: Vec<String> = (0..3).map(|_| words.draw(&mut rng).to_owned()).collect();
                SkillPacket::new(&origin, &name, &description, &body, confidence, now()).with_tags(tags)
            })
            .collect();
        body_bytes += batch.iter().map(|p| p.skill_body.len() as u64).sum::<u64>();
        // As many phrases as queries, spread over the load.
        for p in batch.iter().step_by((skills / queries).max(1)).take(queries - phrases.len().min(queries)) {
            let words: Vec<&str> = p.skill_body.split(' ').collect();
            let at = rng.random_range(0..words.len() - 1);
            phrases.push(format!("\"{} {}\"", words[at], words[at + 1]));
        }
        for p in &batch {
            let mut held = std::collections::HashSet::new();
            let fields = [&p.skill_name, &p.skill_description, &p.skill_body].into_iter().chain(&p.tags);
            for word in fields.flat_map(|f| f.split([' ', '-'])) {
                if let Some(&rank) = rank_of.get(word) {
                    held.insert(rank);
                }
            }
            for rank in held {
                skills_with[rank] += 1;
            }
        }
        store.transaction(|tx| {
            for p in &batch {
                tx.install(p, SkillKind::External, true, &Source::Peer("bench".into()))?;
            }
            Ok(())
        })?;
        done += batch.len();
    }
    println!("loaded {skills} skills in {:.1} s", started.elapsed().as_secs_f64());

    // The commonest words are the ones in more than half of the skills.
    let common = skills_with.iter().take_while(|&&n| n * 2 > skills).count();
    println!("words in more than half of the skills: the {common} commonest");

    for (label, n) in [("one-word", 1usize), ("three-word", 3)] {
        let mut texts = Vec::with_capacity(queries);
        let mut with_common = 0;
        for _ in 0..queries {
            let picked: Vec<(usize, &str)> = (0..n).map(|_| words.by_rank(&mut rng)).collect();
            if picked.iter().any(|(rank, _)| *rank < common) {
                with_common += 1;
            }
            texts.push(picked.iter().map(|(_, w)| *w).collect::<Vec<_>>().join(" "));
        }
        let p99 =
            timed(&store, label, &texts, &format!("{with_common} with a word in > half of the skills"))?;
        println!(
            "{:>12} goal p99 ≤ {} ms: {}",
            "",
            P99_GOAL.as_millis(),
            if p99 <= P99_GOAL { "met" } else { "MISSED" }
        );
    }
    // Not a goal of #24: phrases (checked against the text) and a prefix of each one-word query.
    // A fifth as many: they are slower, and not what the goal is about.
    timed(&store, "phrase", &phrases[..phrases.len() / 5], "two words side by side in a body")?;
    let prefixes: Vec<String> =
        (0..queries / 5).map(|_| format!("{}*", &words.by_rank(&mut rng).1[..4])).collect();
    timed(&store, "prefix", &prefixes, "a word's first two syllables")?;

    let index = store.search_index_bytes()?;
    drop(store);
    let db = ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(dir.path().join(format!("{DB_FILE}{suffix}"))).ok())
        .map(|m| m.len())
        .sum::<u64>();
    let ratio = index as f64 / body_bytes as f64;
    println!(
        "index: {} on disk for {} of bodies = {ratio:.2}× — goal ≤ {INDEX_GOAL}×: {}; the rest of the database: {}",
        mb(index),
        mb(body_bytes),
        if ratio <= INDEX_GOAL { "met" } else { "MISSED" },
        mb(db.saturating_sub(index)),
    );
    let t = Instant::now();
    drop(Store::open(dir.path())?);
    println!("reopening the store (the index's check included): {:.0} ms", ms(t.elapsed()));
    Ok(())
}

/// Runs `texts` as queries (limit 10), prints their times and returns the p99.
/// The five slowest are named with their place in the run and timed once
/// more: a query slow again is slow by its work, one fast the second time
/// lost its time to the moment (a cold cache, the scheduler).
fn timed(store: &Store, label: &str, texts: &[String], about: &str) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(texts.len());
    let mut hits = 0;
    for (place, text) in texts.iter().enumerate() {
        let t = Instant::now();
        hits += store.search(&Query::parse(text)?, 10)?.len();
        times.push((t.elapsed(), place));
    }
    times.sort();
    let p = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)].0;
    println!(
        "{label:>10} queries: {}, {about}, {:.1} hits on average; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        texts.len(),
        hits as f64 / texts.len() as f64,
        ms(p(0.5)),
        ms(p(0.99)),
        ms(times.last().expect("queries").0),
    );
    let mut slowest = Vec::new();
    for &(took, place) in times.iter().rev().take(5) {
        let t = Instant::now();
        store.search(&Query::parse(&texts[place])?, 10)?;
        slowest.push(format!("#{place} {:?} {:.1} (again {:.1})", texts[place], ms(took), ms(t.elapsed())));
    }
    println!("{:>12} slowest, ms: {}", "", slowest.join(", "));
    Ok(p(0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
