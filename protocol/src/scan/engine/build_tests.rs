//! Building the trigger table: the maps of `distinct_triggers` and `by_key`
//! against the searches of a list they replaced (#14, seventh pass), on
//! the standard rules and analyzers and on made-up triggers.

use proptest::prelude::*;

use super::super::MAX_KEY_BYTES;
use super::*;
use crate::scan::Scanner;

/// The search per trigger that `distinct_triggers` replaced: the oracle.
fn distinct_by_search(parsed: Vec<Trigger>) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    for new in parsed {
        let same = |t: &&mut Trigger| {
            t.text == new.text && (t.word_start, t.word_end) == (new.word_start, new.word_end)
        };
        match triggers.iter_mut().find(same) {
            Some(t) => {
                t.rules |= new.rules;
                t.analyzers |= new.analyzers;
            }
            None => triggers.push(new),
        }
    }
    triggers
}

/// The search per key that `by_key` replaced: the oracle.
fn by_key_by_search(triggers: &[Trigger], cap: usize) -> (Vec<&[u8]>, Vec<Vec<u16>>) {
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut by_key: Vec<Vec<u16>> = Vec::new();
    for (i, t) in triggers.iter().enumerate() {
        let key = &t.text[..t.text.len().min(cap)];
        match keys.iter().position(|k| *k == key) {
            Some(k) => by_key[k].push(i as u16),
            None => {
                keys.push(key);
                by_key.push(vec![i as u16]);
            }
        }
    }
    (keys, by_key)
}

type Plain = (Vec<u8>, bool, bool, u128, u32);

fn plain(triggers: &[Trigger]) -> Vec<Plain> {
    triggers.iter().map(|t| (t.text.clone(), t.word_start, t.word_end, t.rules, t.analyzers)).collect()
}

#[test]
fn the_standard_triggers_are_as_the_searches_made_them() {
    let engine = &Scanner::standard().engine;
    let rules = || engine.rules.iter().map(|c| &c.rule);
    let parsed: Vec<Trigger> = rules()
        .enumerate()
        .flat_map(|(i, r)| r.triggers.iter().map(move |t| Trigger::parse(t, 1u128 << i, 0)))
        .chain(
            engine
                .analyzers
                .iter()
                .enumerate()
                .flat_map(|(i, a)| a.triggers.iter().map(move |t| Trigger::parse(t, 0, 1u32 << i))),
        )
        .collect();
    let written = parsed.len();
    let triggers = distinct_triggers(rules(), &engine.analyzers);
    assert_eq!(plain(&triggers), plain(&distinct_by_search(parsed)));
    // Some triggers are written more than once, by rules or analyzers.
    assert!(triggers.len() < written, "{} of {written}", triggers.len());
    for cap in 1..=MAX_KEY_BYTES {
        let (keys, groups) = by_key(&triggers, cap);
        assert_eq!((keys, groups), by_key_by_search(&triggers, cap), "cap {cap}");
    }
    assert!(by_key(&triggers, 1).0.len() < by_key(&triggers, MAX_KEY_BYTES).0.len());
}

proptest! {
    #[test]
    fn made_up_triggers_are_as_the_searches_make_them(
        written in proptest::collection::vec(
            (proptest::sample::select(vec!["ab", "abc", "abc*", "*bc", "a b", "ab ", "b", "x-", "-x", "AB"]), 0u8..6),
            0..30,
        ),
        cap in 1..=MAX_KEY_BYTES,
    ) {
        let parsed: Vec<Trigger> = written.iter().map(|&(t, r)| Trigger::parse(t, 1u128 << r, 1u32 << (r / 2))).collect();
        let triggers = distinct_by_search(parsed);
        prop_assert_eq!(by_key(&triggers, cap), by_key_by_search(&triggers, cap));
    }
}
