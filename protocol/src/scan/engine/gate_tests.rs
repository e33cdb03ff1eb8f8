//! The trigger table's per-state [`Gate`]: it must open wherever one of
//! the state's entries can pass its `ahead` test (the engine's property
//! tests against `naive.rs` hold the whole walk to that), and turn away
//! the common places it was built for.

use super::*;
use crate::scan::Scanner;

#[test]
fn every_entry_opens_its_states_gate_where_its_literal_goes_on() {
    let engine = &Scanner::standard().engine;
    let tt = &engine.table;
    let mut checked = 0;
    for state in 0..engine.prefilter.state_count() {
        let range = tt.by_state[state] as usize..tt.by_state[state + 1] as usize;
        for e in &tt.entries[range] {
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
                    assert!(tt.gates[state].opens(&text, at), "{:?} at {at}", String::from_utf8_lossy(&text));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > tt.entries.len(), "{checked} of {} entries", tt.entries.len());
}

#[test]
fn a_gate_turns_away_a_byte_none_of_its_entries_reads() {
    let mut gate = Gate::default();
    let entry = |ahead: &[u8], past_blanks: bool| Entry {
        ahead: pack_ahead(ahead),
        ahead_mask: pack_ahead(&vec![0xff; ahead.len()]),
        past_blanks,
        text: (0, 0),
        key: 0,
        plain_len: 0,
        verified: false,
        skip: 0,
        back: 0,
        word_start: false,
        word_end: false,
    };
    gate.admit(&entry(b"ro", true));
    gate.admit(&entry(b"x", false));
    assert!(gate.opens(b" \t role", 0));
    assert!(gate.opens(b"role", 0), "no blank skipped is a run of none");
    assert!(gate.opens(b"xy", 0));
    assert!(!gate.opens(b" \t cole", 0));
    assert!(!gate.opens(b"", 0));
    // An entry with nothing ahead opens every place.
    gate.admit(&entry(b"", false));
    assert!(gate.opens(b"", 0) && gate.opens(b"cole", 0));
}
