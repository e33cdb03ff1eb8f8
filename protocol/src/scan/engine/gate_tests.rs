//! The trigger table's groups by the first byte ahead ([`StateRow`]): a
//! place must reach every entry that can pass its `ahead` test there, so
//! the grouped walk reports what the walk of every entry of the state did
//! (`TriggerTable::each_hit_linear`, the path it replaced), on the
//! standard triggers written out in every way a place can read them and on
//! random text made of their pieces. The engine's property tests against
//! `naive.rs` hold the whole walk to the rules besides.

use proptest::prelude::*;

use super::table::{Entry, ahead_at, ahead_past_blanks};
use super::*;
use crate::scan::Scanner;

/// A walk's hits: the place, the rules, the analyzers.
type Hits = Vec<(usize, u128, u32)>;

/// Every hit of both walks on `text`, the grouped one's first, each
/// sorted (one place's order is the table's).
fn both_walks(engine: &Engine, text: &[u8]) -> (Hits, Hits) {
    let mut ends = Vec::new();
    engine.prefilter.find(text, &mut ends);
    let (mut grouped, mut linear) = (Vec::new(), Vec::new());
    engine.table.each_hit(&engine.prefilter, text, &ends, |at, r, a| grouped.push((at, r, a)));
    engine.table.each_hit_linear(&engine.prefilter, text, &ends, |at, r, a| linear.push((at, r, a)));
    grouped.sort_unstable();
    linear.sort_unstable();
    (grouped, linear)
}

/// The standard triggers, as a rule writes them, without their `*`.
fn standard_literals() -> Vec<String> {
    let engine = &Scanner::standard().engine;
    let rules = engine.rules.iter().flat_map(|c| c.rule.triggers.iter());
    let analyzers = engine.analyzers.iter().flat_map(|a| a.triggers.iter());
    rules.chain(analyzers).map(|t| t.trim_start_matches('*').trim_end_matches('*').to_string()).collect()
}

#[test]
fn every_entry_is_in_the_group_its_literal_leads_to() {
    let engine = &Scanner::standard().engine;
    let tt = &engine.table;
    let mut checked = 0;
    for (state, row) in tt.states.iter().enumerate() {
        for e in &tt.entries[row.all.0 as usize..row.all.1 as usize] {
            let literal = &tt.bytes[e.text.0 as usize..e.text.1 as usize];
            let at = usize::from(e.skip) + usize::from(e.back);
            // The literal as written, and with its blanks widened to runs
            // (the key's last blank is the first of its run).
            let blank = |b: &u8| *b == b' ';
            let wide: Vec<u8> = literal
                .iter()
                .flat_map(|&b| if b == b' ' { vec![b' ', b'\t', b' '] } else { vec![b] })
                .collect();
            let wide_at = at + 2 * literal[..at.saturating_sub(1)].iter().filter(|b| blank(b)).count();
            for (text, at) in [(literal.to_vec(), at), (wide, wide_at)] {
                let ahead = if e.past_blanks { ahead_past_blanks(&text, at) } else { ahead_at(&text, at) };
                if ahead & e.ahead_mask == e.ahead {
                    let mut reached = Vec::new();
                    tt.each_entry_at(&text, at, row, |k| reached.push(k));
                    let k = e as *const Entry as usize - tt.entries.as_ptr() as usize;
                    let k = k / std::mem::size_of::<Entry>();
                    assert!(
                        reached.contains(&k),
                        "state {state}: {:?} at {at}",
                        String::from_utf8_lossy(&text)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > tt.entries.len(), "{checked} of {} entries", tt.entries.len());
}

#[test]
fn the_grouped_walk_reports_what_every_entry_read_reported() {
    let engine = &Scanner::standard().engine;
    let mut hits = 0;
    for literal in standard_literals() {
        for run in [" ", "  \t", "\n", " \r\n  "] {
            for text in [
                format!("x {} x\n", literal.replace(' ', run)),
                literal.replace(' ', run).to_uppercase(),
                format!("_{}_", literal.replace(' ', run)),
            ] {
                let (grouped, linear) = both_walks(engine, text.as_bytes());
                assert_eq!(grouped, linear, "{text:?}");
                hits += grouped.len();
            }
        }
    }
    assert!(hits > 4_000, "{hits}");
}

#[test]
fn the_grouped_walk_reports_what_every_entry_read_reported_on_the_typical_body() {
    let engine = &Scanner::standard().engine;
    let body = include_str!("../../../benches/typical_skill.md");
    let (grouped, linear) = both_walks(engine, body.as_bytes());
    assert_eq!(grouped, linear);
    assert!(grouped.len() > 10, "{}", grouped.len());
}

/// Pieces of random text: the standard triggers cut at every byte, blanks,
/// word bytes that glue or part them, and the bytes whose class a letter
/// shares modulo 64 (`!` and `a`, `@` and the text's end).
fn piece() -> impl Strategy<Value = String> {
    let literals = standard_literals();
    let cuts: Vec<String> = literals
        .iter()
        .flat_map(|l| (0..=l.len()).filter(|&k| l.is_char_boundary(k)).map(move |k| l[k..].to_string()))
        .collect();
    prop_oneof![
        4 => proptest::sample::select(literals),
        2 => proptest::sample::select(cuts),
        1 => proptest::sample::select(vec![" ", "  ", "\t", "\n", "\r\n", "x", "_", "-", "!", "@", "A", "é", "`"])
            .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500),
        ..ProptestConfig::default()
    })]

    #[test]
    fn grouped_and_linear_walks_agree_on_glued_triggers(
        pieces in proptest::collection::vec(piece(), 1..12),
        upper in proptest::collection::vec(any::<bool>(), 12),
    ) {
        let engine = &Scanner::standard().engine;
        let text: String = pieces
            .iter()
            .zip(&upper)
            .map(|(p, &u)| if u { p.to_uppercase() } else { p.clone() })
            .collect();
        let (grouped, linear) = both_walks(engine, text.as_bytes());
        prop_assert_eq!(grouped, linear);
    }
}
