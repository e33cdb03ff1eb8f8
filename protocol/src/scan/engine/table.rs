//! The trigger table: every trigger under the prefilter state that reports
//! its key, laid out for the hot loop, and that loop ([`TriggerTable::each_hit`]):
//! from the places where the prefilter's keys end to the places where a
//! whole trigger is spelled, with its rules and analyzers.
//!
//! A state's entries are grouped by the first byte their literal goes on
//! with after the key (their `ahead`), so that a place reads only the
//! entries that byte can lead to: a busy key (`your` leads to forty
//! phrases, `syst` to twenty) once sent every place to all of them, to be
//! turned away one `ahead` test each (#14's throughput, eighth pass).

use super::{Trigger, is_word_byte};
use crate::scan::literals::{End, Literals, canonical, is_blank, spells};

/// Bytes after a key that [`Entry::ahead`] holds.
pub(super) const AHEAD_BYTES: usize = 4;

/// The triggers, laid out for the hot loop: the entries of every key a
/// prefilter state reports sit together under that state, grouped by the
/// first byte they read ahead, so a reported place costs a lookup of its
/// group, and the tables stay small enough to be found in cache after the
/// body has streamed through.
pub(super) struct TriggerTable {
    /// Per prefilter state, its entries and their groups.
    pub(super) states: Vec<StateRow>,
    /// Group `g` is `entries[bounds[g]..bounds[g + 1]]`; a state's groups
    /// are consecutive, its direct groups first.
    bounds: Vec<u32>,
    pub(super) entries: Vec<Entry>,
    /// Per entry, what a hit sets off: rule and analyzer bits. Apart from
    /// the entries, which most places turn away before a hit.
    targets: Vec<(u128, u32)>,
    /// The triggers' canonical literals, one after the other.
    pub(super) bytes: Vec<u8>,
}

/// One state's entries, `entries[all.0..all.1]`, in three parts: those
/// with no `ahead` byte (`any`, read at every place), then the groups of
/// those that read the byte at the place (`direct`), then the groups of
/// those that read it after a run of blanks (`past`, see
/// [`Entry::past_blanks`]). A group holds the entries whose first `ahead`
/// byte is one class, `canonical byte % 64`; `direct` and `past` are the
/// sets of classes that have a group, in class order, so a class's group
/// is found by counting the classes below it. A byte whose class is in
/// neither set fails every entry's `ahead` test, so the place reads only
/// `any`, most often nothing.
#[derive(Clone, Copy, Default)]
pub(super) struct StateRow {
    pub(super) all: (u32, u32),
    any_end: u32,
    direct: u64,
    past: u64,
    /// The state's first group in `bounds`, and its first `past` group.
    first_group: u32,
    past_group: u32,
}

/// One trigger under one prefilter key, as the hot loop reads it.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    /// Up to [`AHEAD_BYTES`] canonical bytes the literal continues with
    /// after its key ([`pack_ahead`]), and which of them count: one test
    /// against the text after the key (or after the blanks there: see
    /// `past_blanks`) turns most entries of a group away before any
    /// byte-wise comparison.
    pub(super) ahead: u32,
    pub(super) ahead_mask: u32,
    /// Whether `ahead` is what follows the run of blanks at the key's end:
    /// the key ends in a blank (`the `), or the literal goes on with one
    /// after it (`your role` under `your`).
    pub(super) past_blanks: bool,
    /// The whole canonical literal: `bytes[text.0..text.1]`.
    pub(super) text: (u32, u32),
    /// The prefilter key it is found under.
    key: u16,
    /// The key's length when it holds no blank, so that it starts that many
    /// bytes before its end; 0 when a blank in it may have matched a run of
    /// blanks (then `Literals::start` finds the start).
    plain_len: u8,
    /// Whether the prefilter has verified the key's bytes (an exact key, see
    /// `Literals::is_exact`). Then only `bytes[text.0 + skip..text.1]` is
    /// compared, from `back` bytes before the key's end: 1 when the key ends
    /// in a blank (the rest compares the run of blanks), else 0.
    verified: bool,
    pub(super) skip: u8,
    pub(super) back: u8,
    /// Whether it must start a word.
    word_start: bool,
    /// Whether it must end one.
    word_end: bool,
}

impl Entry {
    /// The class of its first `ahead` byte, if it has one.
    fn class(&self) -> Option<u32> {
        (self.ahead_mask & 0xff != 0).then_some(self.ahead & 63)
    }
}

/// Canonical bytes as one little-endian word. No canonical byte is 0, so
/// the 0 a text pads its end with never matches a literal's byte.
pub(super) fn pack_ahead(bytes: &[u8]) -> u32 {
    bytes.iter().take(AHEAD_BYTES).enumerate().fold(0, |v, (k, &b)| v | u32::from(b) << (8 * k))
}

/// The [`AHEAD_BYTES`] canonical bytes of `text` from `at`, packed as
/// [`pack_ahead`] packs a literal's. Inlined always: read at every place
/// the prefilter reports, and a build that changed the engine's size once
/// called it out of line, 2,500 instructions a typical body more (#14's
/// throughput, tenth pass).
#[inline(always)]
pub(super) fn ahead_at(text: &[u8], at: usize) -> u32 {
    match text.get(at..at + AHEAD_BYTES) {
        // Most places have four bytes after them: no test per byte.
        Some(&[a, b, c, d]) => u32::from_le_bytes([canonical(a), canonical(b), canonical(c), canonical(d)]),
        _ => pack_ahead(&std::array::from_fn::<u8, AHEAD_BYTES, _>(|k| {
            text.get(at + k).map_or(0, |&b| canonical(b))
        })),
    }
}

/// [`ahead_at`] the first byte after the run of blanks at `at` (if any):
/// where the rest of a literal with a blank after its key goes on, since
/// that blank matches the whole run. Most keys of this kind are a common
/// word (`the `, `your`) under which many phrases wait; this turns them
/// away before a byte-wise comparison. Skipping no blank where the
/// literal wants one only lets an entry through to `spells`, which
/// settles it.
pub(super) fn ahead_past_blanks(text: &[u8], mut at: usize) -> u32 {
    while text.get(at).is_some_and(|&b| is_blank(b)) {
        at += 1;
    }
    ahead_at(text, at)
}

/// The bits of `set` below bit `class`.
#[inline(always)]
fn below(set: u64, class: u32) -> u32 {
    (set & ((1u64 << class) - 1)).count_ones()
}

impl TriggerTable {
    /// The table of `triggers`, found under the keys of `prefilter`
    /// (`by_key[k]`: the triggers of key `k`, whose length is at most `cap`).
    pub(super) fn new(
        prefilter: &Literals,
        by_key: &[Vec<u16>],
        triggers: &[Trigger],
        cap: usize,
    ) -> TriggerTable {
        let mut bytes = Vec::new();
        let entries_of_key: Vec<Vec<(Entry, (u128, u32))>> = by_key
            .iter()
            .enumerate()
            .map(|(key, ids)| {
                let id = key as u16;
                let key_text = &triggers[usize::from(ids[0])].text;
                let key_len = key_text.len().min(cap);
                let key_bytes = &key_text[..key_len];
                let ends_blank = key_bytes.last() == Some(&b' ');
                let plain_len = if key_bytes.contains(&b' ') { 0 } else { key_len as u8 };
                ids.iter()
                    .map(|&i| {
                        let t = &triggers[usize::from(i)];
                        let start = bytes.len() as u32;
                        bytes.extend_from_slice(&t.text);
                        let back = u8::from(ends_blank);
                        // After a key ending in a blank the text may hold more
                        // blanks: the hot loop then reads `ahead` after them
                        // (`ahead_past_blanks`). Inside the rest, a blank
                        // matches a run: compare only up to it.
                        let rest = &t.text[key_len..];
                        let past_blanks = ends_blank || rest.first() == Some(&b' ');
                        let rest = if past_blanks { rest.trim_ascii_start() } else { rest };
                        let ahead: Vec<u8> =
                            rest.iter().copied().take(AHEAD_BYTES).take_while(|&b| b != b' ').collect();
                        let entry = Entry {
                            past_blanks,
                            ahead: pack_ahead(&ahead),
                            ahead_mask: pack_ahead(&vec![0xff; ahead.len()]),
                            text: (start, bytes.len() as u32),
                            key: id,
                            plain_len,
                            verified: prefilter.is_exact(id),
                            skip: key_len as u8 - back,
                            back,
                            word_start: t.word_start,
                            word_end: t.word_end,
                        };
                        (entry, (t.rules, t.analyzers))
                    })
                    .collect()
            })
            .collect();
        let mut table = TriggerTable {
            states: Vec::new(),
            bounds: Vec::new(),
            entries: Vec::new(),
            targets: Vec::new(),
            bytes,
        };
        for state in 0..prefilter.state_count() {
            let of_state: Vec<&(Entry, (u128, u32))> =
                prefilter.keys_of(state).iter().flat_map(|&key| &entries_of_key[usize::from(key)]).collect();
            let mut row = StateRow { all: (table.entries.len() as u32, 0), ..StateRow::default() };
            let push = |table: &mut TriggerTable, (entry, target): &(Entry, (u128, u32))| {
                table.entries.push(*entry);
                table.targets.push(*target);
            };
            for e in of_state.iter().filter(|(e, _)| e.class().is_none()) {
                push(&mut table, e);
            }
            row.any_end = table.entries.len() as u32;
            row.first_group = table.bounds.len() as u32;
            for past_blanks in [false, true] {
                for class in 0..64 {
                    let group: Vec<_> = of_state
                        .iter()
                        .filter(|(e, _)| e.past_blanks == past_blanks && e.class() == Some(class))
                        .collect();
                    if group.is_empty() {
                        continue;
                    }
                    if past_blanks && row.past == 0 {
                        row.past_group = table.bounds.len() as u32;
                    }
                    let set = if past_blanks { &mut row.past } else { &mut row.direct };
                    *set |= 1 << class;
                    table.bounds.push(table.entries.len() as u32);
                    for e in group {
                        push(&mut table, e);
                    }
                }
            }
            // The end of the state's last group.
            table.bounds.push(table.entries.len() as u32);
            row.all.1 = table.entries.len() as u32;
            table.states.push(row);
        }
        table
    }

    /// Calls `hit` with the last byte of each trigger's key where the text
    /// (`bytes`) spells the whole trigger, at the places `prefilter` found
    /// keys ending (`ends`), and the trigger's rules and analyzers. At one
    /// place the order of the calls is the table's, which no caller reads:
    /// they all fall on one line.
    #[inline(always)]
    pub(super) fn each_hit(
        &self,
        prefilter: &Literals,
        bytes: &[u8],
        ends: &[End],
        mut hit: impl FnMut(usize, u128, u32),
    ) {
        for &e in ends {
            let row = &self.states[prefilter.state_of(e)];
            self.each_entry_at(bytes, e.at, row, |k| {
                if self.spelled(prefilter, bytes, e.at, &self.entries[k]) {
                    let (rules, analyzers) = self.targets[k];
                    hit(e.at - 1, rules, analyzers);
                }
            });
        }
    }

    /// Calls `reach` with each entry of `row` (an index into `entries`)
    /// that passes its `ahead` test at the place ending at `at`, and each
    /// with no byte ahead to test: the entries of the groups the bytes
    /// after the place lead to.
    #[inline(always)]
    pub(super) fn each_entry_at(
        &self,
        bytes: &[u8],
        at: usize,
        row: &StateRow,
        mut reach: impl FnMut(usize),
    ) {
        // Entries with no byte ahead to test: rare, a key that is the whole
        // literal.
        for k in row.all.0..row.any_end {
            reach(k as usize);
        }
        let mut group = |first: u32, set: u64, ahead: u32| {
            let class = ahead & 63;
            if set >> class & 1 == 1 {
                let g = (first + below(set, class)) as usize;
                for k in self.bounds[g]..self.bounds[g + 1] {
                    let t = &self.entries[k as usize];
                    if ahead & t.ahead_mask == t.ahead {
                        reach(k as usize);
                    }
                }
            }
        };
        if row.direct != 0 {
            group(row.first_group, row.direct, ahead_at(bytes, at));
        }
        if row.past != 0 {
            group(row.past_group, row.past, ahead_past_blanks(bytes, at));
        }
    }

    /// Whether the text spells entry `t`'s whole literal at the place
    /// ending at `at` where its key was found, its word boundaries kept
    /// (its `ahead` test passed or, with no byte ahead, not needed).
    #[inline(always)]
    fn spelled(&self, prefilter: &Literals, bytes: &[u8], at: usize, t: &Entry) -> bool {
        let start = match t.plain_len {
            0 => prefilter.start(bytes, t.key, at),
            n => at - usize::from(n),
        };
        if t.word_start && start > 0 && is_word_byte(bytes[start - 1]) {
            return false;
        }
        let literal = &self.bytes[t.text.0 as usize..t.text.1 as usize];
        let end = if t.verified {
            // The prefilter has matched the key: compare the rest.
            let end = spells(bytes, at - usize::from(t.back), &literal[usize::from(t.skip)..]);
            debug_assert_eq!(end, spells(bytes, start, literal));
            end
        } else {
            spells(bytes, start, literal)
        };
        end.is_some_and(|end| !(t.word_end && bytes.get(end).is_some_and(|&b| is_word_byte(b))))
    }

    /// [`each_hit`](Self::each_hit) as it was before the groups (tests):
    /// every entry of the state read, each with its own `ahead` test.
    #[cfg(test)]
    pub(super) fn each_hit_linear(
        &self,
        prefilter: &Literals,
        bytes: &[u8],
        ends: &[End],
        mut hit: impl FnMut(usize, u128, u32),
    ) {
        for &e in ends {
            let row = &self.states[prefilter.state_of(e)];
            for k in row.all.0 as usize..row.all.1 as usize {
                let t = &self.entries[k];
                let ahead =
                    if t.past_blanks { ahead_past_blanks(bytes, e.at) } else { ahead_at(bytes, e.at) };
                if ahead & t.ahead_mask == t.ahead && self.spelled(prefilter, bytes, e.at, t) {
                    let (rules, analyzers) = self.targets[k];
                    hit(e.at - 1, rules, analyzers);
                }
            }
        }
    }
}
