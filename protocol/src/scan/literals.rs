//! The trigger prefilter: every occurrence of a set of short ASCII keys,
//! case-insensitively, in one pass.
//!
//! It is an Aho-Corasick automaton compiled to a dense DFA over byte
//! classes, kept small enough for the L1 cache: every letter and the
//! punctuation common in skills have a class of their own, digits share
//! one and the rare punctuation of keys another (which may report a key
//! where there is none, never the reverse), all other bytes
//! share one, and each 16-bit transition carries a "this state ends a key"
//! bit, so the hot loop needs one load and one test per byte. That bit is
//! the high bit of the state's own number: the states that end a key are
//! numbered in the table's upper half, the others in its lower half, so
//! each half holds `32,768 / classes` states.
//! The text is cut into four equal lanes walked in lockstep: a DFA walk is
//! bound by the latency of its table lookups, and four independent walks
//! keep the CPU busy while each lookup is in flight. A lane starts a key's
//! length before its cut, so a key across the cut is found whole, and it
//! reports only what ends after the cut, so nothing is found twice. A space
//! in a key matches any run of blanks: spaces, tabs and line breaks, so
//! that a phrase Markdown wraps over two lines ("next\n   time") is found
//! as it is found on one (the engine reports it on the line its key ends
//! on, and a rule's span or an analyzer's paragraph reads on from there).
//!
//! Callers use keys as prefixes of longer triggers and check the whole
//! trigger at each reported place (see `engine`).
//!
//! Build or buy: kept, because it beats the `aho-corasick` crate on this job.
//! Measured 2026-11-25 (2 cores shared with other builds; `cargo bench -p
//! ecp-protocol --bench build_or_buy`, `literals` group: the standard rule
//! set's 250 keys, every place a key ends, ASCII case-insensitive), this
//! automaton vs aho-corasick's DFA vs its default, two runs: benign corpus
//! (61 KB) 57 vs 228 vs 655 µs and 39 vs 150 vs 414 µs; malicious corpus
//! 57 vs 250 vs 681 µs and 40 vs 150 vs 453 µs; 2,000 skill bodies (2.7 MB)
//! 2.9 vs 8.3 vs 13.2 ms and 2.0 vs 5.4 vs 8.3 ms: 2.7 to 4.4 times faster.

/// Set on a transition whose target state ends at least one key: those
/// states' rows fill the table's upper half, the others' its lower half.
const MATCH: u16 = 1 << 15;
/// Entries of the transition table: any `u16` state plus any class is
/// below it, so the hot loop indexes it without a bounds check or a mask.
const TABLE: usize = 2 * MATCH as usize + 256;
/// Walks shorter than this run as a single lane.
const MIN_LANE_BYTES: usize = 64;
/// What a lane that has ended reads while the others go on: a byte that
/// is never in UTF-8 text and in no key (class [`OTHER`]), which takes
/// every state back to the start state without reporting a key.
static PAD: [u8; 256] = [0xff; 256];
const LANES: usize = 4;
/// Bytes no key contains.
const OTHER: u8 = 0;
/// Space, tab, newline and carriage return ([`is_blank`]). A state reached
/// by a space stays put on further blanks, so a run of blanks in the text
/// matches one space in a key.
const SPACE: u8 = 1;
/// Where the letters' classes start.
const FIRST_LETTER: u8 = 2;
/// The class of all digits.
const DIGIT: u8 = FIRST_LETTER + 26;
/// At most this many classes; further punctuation shares the last one.
/// Each class widens every state's row, and the table holds 32,768
/// transitions: fewer classes leave room for more keys (34 classes: about
/// 960 states).
const MAX_CLASSES: u8 = 36;
/// Punctuation by how often it appears in skills, most often first: the
/// first gets a class of its own when the classes run out.
const COMMON_PUNCTUATION: &[u8] = b"./-_:\"'()=$<>|@[]%\\!";

/// A compiled set of keys.
pub(super) struct Literals {
    /// Byte → class.
    class: [u8; 256],
    /// `(premultiplied state * recip) >> 22` is the state number: a
    /// multiplication instead of a division on every reported place.
    recip: u32,
    /// The number of the first state of the table's upper half (the states
    /// that end a key).
    upper: usize,
    /// `trans[state * stride + class]` = `next * stride`, plus [`MATCH`];
    /// padded to [`TABLE`] entries.
    trans: Box<[u16; TABLE]>,
    /// Key ids ending at each state: `ids[starts[s]..starts[s + 1]]`.
    starts: Vec<u32>,
    ids: Vec<u16>,
    /// The keys, in canonical form.
    keys: Vec<Vec<u8>>,
    /// The longest key's length.
    max_key_len: usize,
    /// Per key: every byte of it has a class of its own, so the automaton
    /// reports it only where the text spells it.
    exact: Vec<bool>,
}

/// One place where keys end: byte offset just past them, and the state
/// whose [`Literals::ending`] lists them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct End {
    pub(super) at: usize,
    state: u16,
}

struct Node {
    /// Class of the byte that leads here.
    last: u8,
    next: Vec<(u8, u32)>,
    fail: u32,
    out: Vec<u16>,
}

/// The byte a key byte stands for: letters ignore case, tab is a space,
/// and every control character (other than tab, newline, carriage return
/// and form feed) is one byte, so a single key `"\x01"` finds them all.
pub(super) fn canonical(b: u8) -> u8 {
    CANONICAL[usize::from(b)]
}

/// [`canonical`] as a table: the check of every trigger hit goes through it.
static CANONICAL: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = match b {
            b'\t' => b' ',
            0x00..=0x08 | 0x0b | 0x0e..=0x1f | 0x7f => 0x01,
            _ => b.to_ascii_lowercase(),
        };
        i += 1;
    }
    t
};

impl Literals {
    /// Compiles `keys` (non-empty ASCII without newlines, not starting with
    /// a blank). `None` when the automaton does not fit 16-bit transitions;
    /// use shorter keys.
    pub(super) fn new(keys: &[&[u8]]) -> Option<Literals> {
        assert!(keys.len() < usize::from(u16::MAX));
        let keys: Vec<Vec<u8>> = keys.iter().map(|l| l.iter().map(|&b| canonical(b)).collect()).collect();
        let mut by_canon = [OTHER; 256];
        for b in BLANKS {
            by_canon[usize::from(canonical(b))] = SPACE;
        }
        for b in b'a'..=b'z' {
            by_canon[usize::from(b)] = FIRST_LETTER + (b - b'a');
        }
        for b in b'0'..=b'9' {
            by_canon[usize::from(b)] = DIGIT;
        }
        let mut next_class = DIGIT + 1;
        let mut punctuation: Vec<u8> = Vec::new();
        for key in &keys {
            assert!(
                key.first().is_some_and(|&b| b != b' ') && key.is_ascii() && !key.contains(&b'\n'),
                "bad trigger key {key:?}"
            );
            punctuation.extend(key.iter().filter(|&&b| by_canon[usize::from(b)] == OTHER));
        }
        // The punctuation common in text gets classes of its own; the rare
        // rest shares the last class, which costs a few false reports where
        // a key's place in the text holds another rare byte.
        let rank =
            |b: u8| COMMON_PUNCTUATION.iter().position(|&c| c == b).unwrap_or(COMMON_PUNCTUATION.len());
        punctuation.sort_by_key(|&b| (rank(b), b));
        punctuation.dedup();
        for b in punctuation {
            by_canon[usize::from(b)] = next_class.min(MAX_CLASSES - 1);
            next_class = next_class.saturating_add(1);
        }
        let stride = usize::from(next_class.min(MAX_CLASSES));
        let class: [u8; 256] = std::array::from_fn(|b| by_canon[usize::from(canonical(b as u8))]);
        // Canonical bytes per class (canonical bytes are those `canonical` keeps).
        let mut members = [0u16; 256];
        for b in 0..=255u8 {
            if canonical(b) == b {
                members[usize::from(by_canon[usize::from(b)])] += 1;
            }
        }
        // `spells` reads every blank alike: a blank's class is its own.
        members[usize::from(SPACE)] = 1;
        let exact = keys
            .iter()
            .map(|k| k.iter().all(|&b| members[usize::from(by_canon[usize::from(b)])] == 1))
            .collect();

        let mut nodes = vec![Node { last: OTHER, next: Vec::new(), fail: 0, out: Vec::new() }];
        for (id, key) in keys.iter().enumerate() {
            let mut s = 0usize;
            for &b in key {
                let c = class[usize::from(b)];
                s = match nodes[s].next.iter().find(|(k, _)| *k == c) {
                    Some(&(_, n)) => n as usize,
                    None => {
                        nodes.push(Node { last: c, next: Vec::new(), fail: 0, out: Vec::new() });
                        let n = nodes.len() - 1;
                        nodes[s].next.push((c, n as u32));
                        n
                    }
                };
            }
            nodes[s].out.push(id as u16);
        }

        // Breadth-first, so a state's failure target is complete before it.
        let mut trans = vec![0u16; nodes.len() * stride];
        let mut order = Vec::with_capacity(nodes.len());
        order.push(0u32);
        let mut head = 0;
        while head < order.len() {
            let s = order[head] as usize;
            head += 1;
            let fail = nodes[s].fail as usize;
            if s != 0 {
                let inherited = nodes[fail].out.clone();
                for id in inherited {
                    if !nodes[s].out.contains(&id) {
                        nodes[s].out.push(id);
                    }
                }
            }
            for c in 0..stride {
                let child = nodes[s].next.iter().find(|(k, _)| usize::from(*k) == c).map(|&(_, n)| n);
                let target = match child {
                    Some(n) => {
                        nodes[n as usize].fail =
                            if s == 0 { 0 } else { u32::from(trans[fail * stride + c]) / stride as u32 };
                        order.push(n);
                        n as usize
                    }
                    None if s == 0 => 0,
                    None => usize::from(trans[fail * stride + c]) / stride,
                };
                trans[s * stride + c] = (target * stride) as u16;
            }
        }
        // States that end a key live in the upper half of the table and the
        // others in the lower half, so the high bit of a transition says
        // "this state ends a key" without a mirrored copy of the table, and
        // each half holds up to `MATCH / stride` states. A state whose key
        // prefix ends in a blank ignores further blanks without reporting
        // its keys again: an ending state reached by a blank gets a twin in
        // the lower half, with its transitions, that further blanks lead to.
        let ends_key = |n: usize| !nodes[n].out.is_empty();
        let twin_of: Vec<bool> = (0..nodes.len()).map(|n| ends_key(n) && nodes[n].last == SPACE).collect();
        let lower_count =
            (0..nodes.len()).filter(|&n| !ends_key(n)).count() + twin_of.iter().filter(|&&t| t).count();
        let upper_count = nodes.len() - (0..nodes.len()).filter(|&n| !ends_key(n)).count();
        if lower_count.max(upper_count) * stride > usize::from(MATCH) {
            return None;
        }
        // New numbers: the lower half's states first (the start state stays
        // 0), then the upper half's. `base` is a state's premultiplied
        // number as a transition holds it, `MATCH` set in the upper half.
        let mut number = vec![0usize; nodes.len()];
        let mut twin = vec![usize::MAX; nodes.len()];
        let mut order: Vec<(usize, bool)> = Vec::with_capacity(lower_count + upper_count);
        for n in (0..nodes.len()).filter(|&n| !ends_key(n)) {
            number[n] = order.len();
            order.push((n, false));
        }
        for n in (0..nodes.len()).filter(|&n| twin_of[n]) {
            twin[n] = order.len();
            order.push((n, true));
        }
        for n in (0..nodes.len()).filter(|&n| ends_key(n)) {
            number[n] = order.len();
            order.push((n, false));
        }
        let base = |k: usize| -> u16 {
            if k < lower_count { (k * stride) as u16 } else { ((k - lower_count) * stride) as u16 | MATCH }
        };
        let mut table = vec![0u16; TABLE];
        for (k, &(n, is_twin)) in order.iter().enumerate() {
            let row = usize::from(base(k));
            for c in 0..stride {
                let target = usize::from(trans[n * stride + c]) / stride;
                table[row + c] = base(number[target]);
            }
            if nodes[n].last == SPACE {
                let stay = if is_twin || !twin_of[n] { k } else { twin[n] };
                table[row + usize::from(SPACE)] = base(stay);
            }
        }
        // What lets a finished lane read `PAD`: no key holds a byte of class
        // OTHER, so every state goes back to the start on one, reporting nothing.
        debug_assert!((0..order.len()).all(|k| table[usize::from(base(k)) + usize::from(OTHER)] == 0));
        debug_assert_eq!(class[usize::from(PAD[0])], OTHER);
        let trans: Box<[u16; TABLE]> = table.into_boxed_slice().try_into().expect("TABLE entries");
        let mut starts = Vec::with_capacity(order.len() + 1);
        let mut ids = Vec::new();
        for &(n, is_twin) in &order {
            starts.push(ids.len() as u32);
            if !is_twin {
                ids.extend_from_slice(&nodes[n].out);
            }
        }
        starts.push(ids.len() as u32);
        let recip = (1u32 << 22).div_ceil(stride as u32);
        debug_assert!(
            (0..lower_count.max(upper_count) as u32).all(|k| (k * stride as u32 * recip) >> 22 == k)
        );
        let max_key_len = keys.iter().map(Vec::len).max().unwrap_or(0);
        let upper = lower_count;
        Some(Literals { class, recip, upper, trans, starts, ids, keys, max_key_len, exact })
    }

    /// The keys (ids) that end at `end`.
    #[cfg(test)]
    pub(super) fn ending(&self, end: End) -> &[u16] {
        self.keys_of(self.state_of(end))
    }

    /// The automaton state (`0..state_count()`) a place was reported in.
    pub(super) fn state_of(&self, end: End) -> usize {
        // Every reported place is in the upper half; `state` lacks `MATCH`.
        self.upper + ((u32::from(end.state) * self.recip) >> 22) as usize
    }

    /// How many states the automaton has.
    pub(super) fn state_count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The keys (ids) that end in state `s`.
    pub(super) fn keys_of(&self, s: usize) -> &[u16] {
        &self.ids[self.starts[s] as usize..self.starts[s + 1] as usize]
    }

    /// Whether key `id` is reported only where the text spells it (as
    /// [`spells`] reads it): no byte of it shares its class with another.
    /// Digits share one class, so a key with a digit is not exact.
    pub(super) fn is_exact(&self, id: u16) -> bool {
        self.exact[usize::from(id)]
    }

    /// Where key `id`, ending just before `end`, starts in `text`.
    pub(super) fn start(&self, text: &[u8], id: u16, end: usize) -> usize {
        let mut at = end;
        for &b in self.keys[usize::from(id)].iter().rev() {
            at = at.saturating_sub(1);
            if b == b' ' {
                while at > 0 && is_blank(text[at - 1]) {
                    at -= 1;
                }
            }
        }
        at
    }

    /// Appends every place in `text` where keys end, in text order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) fn find(&self, text: &[u8], out: &mut Vec<End>) {
        self.find_with(text, out, &mut Default::default());
    }

    /// [`find`](Self::find), with buffers for the places a lane finds past
    /// the room it keeps on the stack, which the caller keeps between
    /// calls: a typical skill body has 25 or so per lane, and allocating
    /// them on every scan cost more than the places' checks.
    pub(super) fn find_with(&self, text: &[u8], out: &mut Vec<End>, spill: &mut [Vec<End>; LANES - 1]) {
        let Some((starts, cuts)) = lanes(text, self.max_key_len.saturating_sub(1)) else {
            self.walk(text, 0, 0, out);
            return;
        };
        // Lanes 1 to 3 collect apart so that appending them keeps text order.
        let [s1, s2, s3] = spill;
        let mut later = [Pending::new(s1), Pending::new(s2), Pending::new(s3)];
        let trans: &[u16; TABLE] = &self.trans;
        let class = &self.class;
        let mut pos: [usize; LANES] = starts;
        let ends: [usize; LANES] = [cuts[1], cuts[2], cuts[3], cuts[4]];
        let mut states = [0u16; LANES];
        let mut stops = Stops { at: [0; STOPS], states: [[0; LANES]; STOPS], len: 0 };
        // Lanes end at different places. Rather than finishing the longer ones
        // one at a time (each byte then waits for the previous lookup), a
        // lane that has ended reads newlines, which no key holds: its state
        // falls back to the start state and reports nothing.
        loop {
            let live: [bool; LANES] = std::array::from_fn(|k| pos[k] < ends[k]);
            let Some(len) = (0..LANES).filter(|&k| live[k]).map(|k| ends[k] - pos[k]).min() else {
                break;
            };
            let len = if live.iter().all(|&l| l) { len } else { len.min(PAD.len()) };
            let lanes: [&[u8]; LANES] =
                std::array::from_fn(|k| if live[k] { &text[pos[k]..pos[k] + len] } else { &PAD[..len] });
            let mut j = 0;
            while j < len {
                (j, states) = lockstep(trans, class, lanes, states, j, &mut stops);
                for k in 0..stops.len {
                    record(stops.at[k] - 1, stops.states[k], &pos, &cuts, out, &mut later);
                }
                stops.len = 0;
            }
            for k in 0..LANES {
                if live[k] {
                    pos[k] += len;
                }
            }
        }
        for p in &mut later {
            p.drain_into(out);
        }
    }

    fn walk(&self, text: &[u8], base: usize, mut s: u16, out: &mut Vec<End>) {
        let trans: &[u16; TABLE] = &self.trans;
        for (j, &b) in text.iter().enumerate() {
            s = step(trans, &self.class, s, b);
            if s & MATCH != 0 {
                out.push(End { at: base + j + 1, state: s & !MATCH });
            }
        }
    }
}

/// Steps on which some lane ended a key, as [`lockstep`] gathers them:
/// the position after the step and the four states.
struct Stops {
    at: [usize; STOPS],
    states: [[u16; LANES]; STOPS],
    len: usize,
}

/// Steps [`Stops`] holds: a typical body has a hundred or so, and each
/// return from [`lockstep`] costs more than the step itself.
const STOPS: usize = 32;

/// Walks four equally long lanes in lockstep from `j`, noting in `stops`
/// (empty on entry) every step on which some lane ends a key, until
/// `stops` is full or to the end; returns the position it stopped at and
/// the states. Kept apart and free of calls so that the states, the lanes
/// and the tables all stay in registers. States keep their [`MATCH`] bit,
/// which is part of their number ([`step`]).
#[inline(never)]
fn lockstep(
    trans: &[u16; TABLE],
    class: &[u8; 256],
    lanes: [&[u8]; LANES],
    states: [u16; LANES],
    mut j: usize,
    stops: &mut Stops,
) -> (usize, [u16; LANES]) {
    let [l0, l1, l2, l3] = lanes;
    let n = l0.len().min(l1.len()).min(l2.len()).min(l3.len());
    // Widened once, so the loop does not zero-extend on every step.
    let [mut s0, mut s1, mut s2, mut s3] = states.map(usize::from);
    let next = |s: usize, b: u8| usize::from(trans[s + usize::from(class[usize::from(b)])]);
    while j < n {
        s0 = next(s0, l0[j]);
        s1 = next(s1, l1[j]);
        s2 = next(s2, l2[j]);
        s3 = next(s3, l3[j]);
        j += 1;
        if (s0 | s1 | s2 | s3) & usize::from(MATCH) != 0 {
            let k = stops.len;
            stops.at[k] = j;
            stops.states[k] = [s0, s1, s2, s3].map(|s| s as u16);
            stops.len = k + 1;
            if k + 1 == STOPS {
                break;
            }
        }
    }
    (j, [s0, s1, s2, s3].map(|s| s as u16))
}

/// One transition. `s` may carry [`MATCH`]: its row is in the upper half.
#[inline(always)]
fn step(trans: &[u16; TABLE], class: &[u8; 256], s: u16, b: u8) -> u16 {
    trans[usize::from(s) + usize::from(class[usize::from(b)])]
}

/// The bytes a blank in a key matches a run of: a line break is one, so
/// that a wrapped sentence reads as one line.
const BLANKS: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];

/// Whether `b` is one of [`BLANKS`].
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether `text` at `at` spells `literal` (canonical, as [`canonical`]
/// makes it), a space in the literal matching a run of blanks, line breaks
/// included. Returns the offset just past the match.
pub(super) fn spells(text: &[u8], mut at: usize, literal: &[u8]) -> Option<usize> {
    for &b in literal {
        let &t = text.get(at)?;
        if b == b' ' {
            if !is_blank(t) {
                return None;
            }
            while text.get(at).is_some_and(|&c| is_blank(c)) {
                at += 1;
            }
        } else if canonical(t) == b {
            at += 1;
        } else {
            return None;
        }
    }
    Some(at)
}

/// Records the places where lanes matched at step `j` of a run whose lanes
/// started at `base`; a lane keeps only places after its cut (`cuts[k]`),
/// the lane before it reports the others.
fn record(
    j: usize,
    t: [u16; LANES],
    base: &[usize; LANES],
    cuts: &[usize; LANES + 1],
    out: &mut Vec<End>,
    later: &mut [Pending<'_>; 3],
) {
    if t[0] & MATCH != 0 {
        out.push(End { at: base[0] + j + 1, state: t[0] & !MATCH });
    }
    for k in 1..LANES {
        let at = base[k] + j + 1;
        if t[k] & MATCH != 0 && at > cuts[k] {
            later[k - 1].push(End { at, state: t[k] & !MATCH });
        }
    }
}

/// Places found by one lane, kept until they are appended in text order:
/// the first on the stack, the rest in a buffer the caller keeps.
struct Pending<'a> {
    inline: [End; 16],
    len: usize,
    spill: &'a mut Vec<End>,
}

impl<'a> Pending<'a> {
    fn new(spill: &'a mut Vec<End>) -> Pending<'a> {
        spill.clear();
        Pending { inline: [End::default(); 16], len: 0, spill }
    }

    fn push(&mut self, e: End) {
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                *slot = e;
                self.len += 1;
            }
            None => self.spill.push(e),
        }
    }

    fn drain_into(&mut self, out: &mut Vec<End>) {
        out.extend_from_slice(&self.inline[..self.len]);
        out.append(self.spill);
    }
}

/// Where the lanes start and where they are cut: lane `k` reports the keys
/// that end in `cuts[k]..cuts[k + 1]` (just after a key's last byte), and
/// starts `overlap` key bytes before its cut, a run of blanks counting as
/// one byte (a blank in a key matches a run), so that it sees every such
/// key from its first byte. `None` when the text is too short for lanes.
fn lanes(text: &[u8], overlap: usize) -> Option<([usize; LANES], [usize; LANES + 1])> {
    let n = text.len();
    if n < MIN_LANE_BYTES * LANES {
        return None;
    }
    let cuts: [usize; LANES + 1] = std::array::from_fn(|k| n * k / LANES);
    let starts = std::array::from_fn(|k| match k {
        0 => 0,
        _ => back_over_key_bytes(text, cuts[k], overlap).max(cuts[k - 1]),
    });
    Some((starts, cuts))
}

/// The place `count` key bytes before `at`, a run of blanks being one.
fn back_over_key_bytes(text: &[u8], mut at: usize, count: usize) -> usize {
    let blank = is_blank;
    for _ in 0..count {
        match at.checked_sub(1).map(|i| text[i]) {
            None => break,
            Some(b) if blank(b) => {
                while at > 0 && blank(text[at - 1]) {
                    at -= 1;
                }
            }
            Some(_) => at -= 1,
        }
    }
    at
}

// A path of its own: the `build_or_buy` bench includes this file by path.
#[cfg(test)]
#[path = "literals/tests.rs"]
mod tests;
