//! Building the trigger table's lists: every trigger once, and the
//! prefilter's keys once, each in the order first met. Maps, not a search
//! of the list per item: the searches were a fifth of a node's start once
//! the rules' regexes were built lazily (`benches/README.md`, seventh pass).

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;

use super::{Analyzer, Trigger};
use crate::scan::rule::Rule;

/// Every rule's and analyzer's triggers, each once (by its text and
/// boundaries) in the order first written, with the rules and analyzers
/// it wakes.
pub(super) fn distinct_triggers<'a>(
    rules: impl IntoIterator<Item = &'a Rule>,
    analyzers: &[Analyzer],
) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    // Each trigger once, by its text and boundaries: found in a map, as
    // a search of the list per trigger cost a fifth of a node's start.
    let mut seen: HashMap<(Vec<u8>, bool, bool), usize> = HashMap::new();
    let mut add = |lit: &str, rule: u128, analyzer: u32| {
        let new = Trigger::parse(lit, rule, analyzer);
        match seen.entry((new.text.clone(), new.word_start, new.word_end)) {
            Slot::Occupied(at) => {
                let t = &mut triggers[*at.get()];
                t.rules |= rule;
                t.analyzers |= analyzer;
            }
            Slot::Vacant(at) => {
                at.insert(triggers.len());
                triggers.push(new);
            }
        }
    };
    for (i, r) in rules.into_iter().enumerate() {
        assert!(!r.triggers.is_empty(), "rule {} has no trigger", r.id);
        // `requires` is searched ignoring ASCII case, as lower-case text.
        assert!(
            r.requires.iter().all(|n| !n.is_empty() && !n.bytes().any(|b| b.is_ascii_uppercase())),
            "rule {} requires an empty or upper-case literal",
            r.id
        );
        for t in r.triggers {
            add(t, 1u128 << i, 0);
        }
    }
    for (i, a) in analyzers.iter().enumerate() {
        for t in a.triggers {
            add(t, 0, 1u32 << i);
        }
    }
    triggers
}

/// The prefilter's keys (each trigger's first `cap` bytes), each once in
/// the order first met, and the triggers under each.
pub(super) fn by_key(triggers: &[Trigger], cap: usize) -> (Vec<&[u8]>, Vec<Vec<u16>>) {
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut by_key: Vec<Vec<u16>> = Vec::new();
    // A map, not a search of `keys` per trigger: that was most of a node's
    // start once the rules' regexes were built lazily.
    let mut key_of: HashMap<&[u8], usize> = HashMap::new();
    for (i, t) in triggers.iter().enumerate() {
        let key = &t.text[..t.text.len().min(cap)];
        match key_of.entry(key) {
            Slot::Occupied(k) => by_key[*k.get()].push(i as u16),
            Slot::Vacant(k) => {
                k.insert(keys.len());
                keys.push(key);
                by_key.push(vec![i as u16]);
            }
        }
    }
    (keys, by_key)
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
