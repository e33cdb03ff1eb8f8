//! The case-insensitive searches of ASCII words that every analyzer's
//! gates and many rules ask on each line they are woken on: one word
//! ([`contains_ci`]) or any of several ([`AnyCi`]), both vectorisable.

/// Whether `hay` contains `needle` (lower-case ASCII), ignoring ASCII case.
pub(in crate::scan) fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    let n = needle.len();
    if n == 0 {
        return true;
    }
    if hay.len() < n {
        return false;
    }
    // `b | fold == x` compares `b` with `x` ignoring case when `x` is a
    // lower-case letter (fold 0x20), and exactly otherwise (fold 0).
    let fold = |x: u8| if x.is_ascii_lowercase() { 0x20 } else { 0 };
    let (first, last) = (needle[0], needle[n - 1]);
    let (first_fold, last_fold) = (fold(first), fold(last));
    let found_at = |i: usize| hay[i..i + n].eq_ignore_ascii_case(needle);
    let starts = hay.len() - n + 1;
    // Places where both the first and the last byte fit, 16 at a time (the
    // fixed-size loop compiles to a few vector instructions and a bit mask),
    // then a closer look only there: on prose, a common first letter alone
    // would send most places to the comparison.
    let fits = |head: u8, tail: u8| ((head | first_fold) == first) & ((tail | last_fold) == last);
    let chunk_at = |i: usize| {
        let heads = &hay[i..i + 16];
        let tails = &hay[i + n - 1..i + n + 15];
        heads.iter().zip(tails).fold(0u8, |any, (&h, &t)| any | u8::from(fits(h, t))) != 0
            && (i..i + 16).any(|j| fits(hay[j], hay[j + n - 1]) && found_at(j))
    };
    if starts < 16 {
        return (0..starts).any(|i| fits(hay[i], hay[i + n - 1]) && found_at(i));
    }
    let mut i = 0;
    loop {
        if chunk_at(i) {
            return true;
        }
        if i == starts - 16 {
            return false;
        }
        // The last chunk overlaps the one before rather than leaving a tail.
        i = (i + 16).min(starts - 16);
    }
}

/// Whether `hay` holds the byte `mark` followed by `rest` (lower-case
/// ASCII), ignoring ASCII case: `contains_ci(hay, "{mark}{rest}")` when
/// `mark` is no letter, found by `mark`'s places. A needle that opens
/// with a quote or a dash (`"args"`, `-replace`) is rare on the lines it
/// is asked of, where [`contains_ci`] reads every byte (#14's speed,
/// ninth pass).
pub(in crate::scan) fn contains_ci_after(hay: &[u8], mark: u8, rest: &[u8]) -> bool {
    debug_assert!(!mark.is_ascii_alphabetic(), "a letter's case is not one byte");
    memchr::memchr_iter(mark, hay)
        .any(|i| hay.len() - i > rest.len() && hay[i + 1..i + 1 + rest.len()].eq_ignore_ascii_case(rest))
}

/// Words looked for at once, ignoring ASCII case: whether a haystack
/// holds any of them, as `words.iter().any(|w| contains_ci(hay, w))`
/// says, in one pass over it. The gates of the analyzers ask for one of
/// several words on every line they are woken on; a search per word cost
/// more than the rest of the gate (`benches/README.md`, fourth pass).
/// Built in a `static` at compile time.
pub(in crate::scan) struct AnyCi {
    /// By byte, the words (bits) that start with it, in either case.
    first: [u32; 256],
    /// By byte, the words whose second byte it is, in either case, and
    /// every word of one byte: a place is looked at closer only where both
    /// of its first two bytes fit a word (on prose a common first letter
    /// alone sent most places to the comparison: #14's throughput, sixth
    /// pass).
    second: [u32; 256],
    /// The words of one byte: all that can start at a haystack's last byte.
    short: u32,
    words: &'static [&'static str],
}

impl AnyCi {
    /// At most 32 words, each non-empty lower-case ASCII.
    pub(in crate::scan) const fn new(words: &'static [&'static str]) -> AnyCi {
        assert!(words.len() <= 32, "AnyCi holds 32 words");
        let mut first = [0u32; 256];
        let mut second = [0u32; 256];
        let mut short = 0u32;
        let mut k = 0;
        while k < words.len() {
            let w = words[k].as_bytes();
            assert!(!w.is_empty() && w.is_ascii(), "AnyCi words are non-empty ASCII");
            let b = w[0];
            assert!(!b.is_ascii_uppercase(), "AnyCi words are lower case");
            first[b as usize] |= 1 << k;
            if b.is_ascii_lowercase() {
                first[b.to_ascii_uppercase() as usize] |= 1 << k;
            }
            if w.len() == 1 {
                short |= 1 << k;
                let mut c = 0;
                while c < 256 {
                    second[c] |= 1 << k;
                    c += 1;
                }
            } else {
                let c = w[1];
                assert!(!c.is_ascii_uppercase(), "AnyCi words are lower case");
                second[c as usize] |= 1 << k;
                if c.is_ascii_lowercase() {
                    second[c.to_ascii_uppercase() as usize] |= 1 << k;
                }
            }
            k += 1;
        }
        AnyCi { first, second, short, words }
    }

    /// Whether `hay` holds one of the words, ignoring ASCII case.
    pub(in crate::scan) fn any_in(&self, hay: &[u8]) -> bool {
        hay.iter().enumerate().any(|(i, &b)| {
            let mut starting = self.first[usize::from(b)];
            if starting == 0 {
                return false;
            }
            starting &= hay.get(i + 1).map_or(self.short, |&c| self.second[usize::from(c)]);
            while starting != 0 {
                let w = self.words[starting.trailing_zeros() as usize].as_bytes();
                starting &= starting - 1;
                if hay.len() - i >= w.len() && hay[i..i + w.len()].eq_ignore_ascii_case(w) {
                    return true;
                }
            }
            false
        })
    }
}

#[cfg(test)]
#[path = "ci_after_tests.rs"]
mod after_tests;
