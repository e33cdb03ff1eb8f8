//! The classifier's walk over a body's bytes: tokens found and hashed in
//! one pass, each bucket reported once. It owns only the speed of that
//! walk; what a token is and how it hashes are `mod.rs`'s (`CLASS`, `word`,
//! `symbol`, `pair`), and the tests hold this walk to the byte-at-a-time one
//! it replaced (#14's throughput: the walk was a fifth of a typical scan).

use super::place::{front_end, in_front};
use super::{CLASS, FRONT, MAX_BYTES, MIX, SYMBOL, WORD, WORD_BUCKETS, finish, pair, symbol, word};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `v` (little-endian: byte 0 lowest) set
/// where that byte is a word byte (`CLASS` says `WORD`: ASCII letters,
/// digits, `_`), eight at a time. Every sum below stays within its byte
/// (seven-bit values plus at most 0x80), so no carry reaches a neighbour.
fn word_bytes(v: u64) -> u64 {
    let x = v & !HIGH;
    let alpha = in_range(x | (ONES * 0x20), b'a', b'z');
    let digit = in_range(x, b'0', b'9');
    let under = !((x ^ (ONES * u64::from(b'_'))) + ONES * 0x7f) & HIGH;
    (alpha | digit | under) & !v & HIGH
}

/// The high bit of each byte of `v` set where that byte is an ASCII
/// letter or digit (`word_bytes` without `_`: the words of a purpose).
pub(super) fn alnum_bytes(v: u64) -> u64 {
    let x = v & !HIGH;
    (in_range(x | (ONES * 0x20), b'a', b'z') | in_range(x, b'0', b'9')) & !v & HIGH
}

/// The high bit of each seven-bit byte of `x` within `lo..=hi`.
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    let at_least_lo = x + ONES * u64::from(0x80 - lo);
    let above_hi = x + ONES * u64::from(0x7f - hi);
    at_least_lo & !above_hi & HIGH
}

/// `word` of a word of `n` (1..8) bytes whose eight bytes from its start
/// are `v`: the same hash, from the bytes already loaded.
pub(super) fn short_word(v: u64, n: usize) -> u64 {
    let used = (1u64 << (8 * n)) - 1;
    finish(((n as u64) ^ ((v | 0x2020_2020_2020_2020) & used)).wrapping_mul(MIX).rotate_left(29))
}

/// Every symbol byte's hash, computed when compiled.
const SYMBOLS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = symbol(c as u8);
        c += 1;
    }
    t
};

pub(super) fn eight_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|e| u64::from_le_bytes(e.try_into().expect("eight bytes")))
}

/// The end of the word that runs on at `at` (every byte before `at` from
/// its start is a word byte).
fn word_end(b: &[u8], mut at: usize) -> usize {
    while let Some(v) = eight_at(b, at) {
        let not_word = !word_bytes(v) & HIGH;
        if not_word != 0 {
            return at + (not_word.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < b.len() && CLASS[usize::from(b[at])] == WORD {
        at += 1;
    }
    at
}

/// Whether a token that starts with `c` pairs with its neighbours: a
/// symbol of code, not Markdown's backtick (`` `curl `` is a word set
/// in code, no shape of it).
fn pairs(c: u8) -> bool {
    CLASS[usize::from(c)] == SYMBOL && c != b'`'
}

/// Calls `each` once per bucket present in `body`, in the order first
/// seen: the features the model and its training both read: every token,
/// the same token again when it is in the frontmatter (`place`), and
/// every pair of neighbouring tokens one of which is a
/// symbol (`| sh`, `$ (`, `~ /`: the shapes of code; two words side by side
/// are topic, and learned who wrote a skill more than what it does). One pass, a
/// bitset of the buckets seen, no allocation. A word is measured and hashed
/// from one eight-byte load when it is shorter than eight bytes and the
/// body has eight bytes from its start (most words).
#[inline(always)]
pub(super) fn for_each_feature(body: &str, mut each: impl FnMut(u32)) {
    let b = &body.as_bytes()[..body.len().min(MAX_BYTES)];
    let mut seen = [0u64; WORD_BUCKETS / 64];
    let mut add = |h: u64| {
        // The top bits: the finalizer spreads every input bit over them.
        let k = (h >> (64 - WORD_BUCKETS.trailing_zeros())) as usize;
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        if seen[word] & bit == 0 {
            seen[word] |= bit;
            each(k as u32);
        }
    };
    let mut previous: Option<(u64, bool)> = None;
    let front = if FRONT { front_end(b) } else { 0 };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at = i;
        let token = match CLASS[usize::from(c)] {
            WORD => {
                let start = i;
                match eight_at(b, i) {
                    Some(v) => {
                        // Byte 0 is a word byte, so a non-word byte, if
                        // any, is at 1..8.
                        let not_word = !word_bytes(v) & HIGH;
                        if not_word != 0 {
                            let n = (not_word.trailing_zeros() / 8) as usize;
                            // A blank after the word, the usual end, is a
                            // separator: stepped over here, not by the loop.
                            i += n + usize::from((v >> (8 * n)) as u8 == b' ');
                            short_word(v, n)
                        } else {
                            i = word_end(b, i + 8);
                            word(b, start, i)
                        }
                    }
                    None => {
                        i = word_end(b, i + 1);
                        word(b, start, i)
                    }
                }
            }
            SYMBOL => {
                i += 1;
                SYMBOLS[usize::from(c)]
            }
            _ => {
                i += 1;
                continue;
            }
        };
        add(token);
        if at < front {
            add(in_front(token));
        }
        let symbolic = pairs(c);
        if let Some((p, p_symbolic)) = previous
            && (symbolic || p_symbolic)
        {
            add(pair(p, token));
        }
        previous = Some((token, symbolic));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The walk this one replaced, a byte at a time: the oracle.
    fn bytewise(body: &str, mut each: impl FnMut(u32)) {
        let b = &body.as_bytes()[..body.len().min(MAX_BYTES)];
        let mut seen = [0u64; WORD_BUCKETS / 64];
        let mut add = |h: u64| {
            let k = (h >> (64 - WORD_BUCKETS.trailing_zeros())) as usize;
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                each(k as u32);
            }
        };
        let mut previous: Option<(u64, bool)> = None;
        let front = if FRONT { front_end(b) } else { 0 };
        let mut i = 0;
        while i < b.len() {
            let start_of_token = i;
            let token = match CLASS[usize::from(b[i])] {
                WORD => {
                    let start = i;
                    while i < b.len() && CLASS[usize::from(b[i])] == WORD {
                        i += 1;
                    }
                    word(b, start, i)
                }
                SYMBOL => {
                    i += 1;
                    symbol(b[i - 1])
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
            add(token);
            if start_of_token < front {
                add(in_front(token));
            }
            let symbolic = pairs(b[start_of_token]);
            if let Some((p, p_symbolic)) = previous
                && (symbolic || p_symbolic)
            {
                add(pair(p, token));
            }
            previous = Some((token, symbolic));
        }
    }

    fn both(body: &str) -> (Vec<u32>, Vec<u32>) {
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for_each_feature(body, |k| fast.push(k));
        bytewise(body, |k| slow.push(k));
        (fast, slow)
    }

    #[test]
    fn every_byte_in_every_place_is_told_as_class_tells_it() {
        for c in 0..=255u8 {
            for place in 0..8 {
                for filler in [0u8, b'a', b'_', 0x7f, 0x80, 0xff, b' ', b'9'] {
                    let mut bytes = [filler; 8];
                    bytes[place] = c;
                    let got = word_bytes(u64::from_le_bytes(bytes));
                    for (j, &byte) in bytes.iter().enumerate() {
                        let want = CLASS[usize::from(byte)] == WORD;
                        assert_eq!(got >> (8 * j + 7) & 1 == 1, want, "byte {byte:#x} at {j} in {bytes:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn words_of_every_length_at_and_past_eight_bytes_and_at_the_end() {
        for n in 1..=20 {
            let w = "Ab_9".repeat(5)[..n].to_string();
            for body in [w.clone(), format!("{w} x"), format!("{w}|and more text after"), format!("x {w}")] {
                let (fast, slow) = both(&body);
                assert_eq!(fast, slow, "{body:?}");
            }
        }
        // The frontmatter's tokens, the long and the short, twice.
        for body in ["---\nname: credentials_file_reader\n---\nbody $X", "---\na|b\n---"] {
            let (fast, slow) = both(body);
            assert_eq!(fast, slow, "{body:?}");
        }
        // Non-ASCII ends a word, as `CLASS` says.
        let (fast, slow) = both("naïve café_au_lait résumé Straße");
        assert_eq!(fast, slow);
        let (fast, slow) = both(&("word ".repeat(MAX_BYTES / 5) + "tail_beyond"));
        assert_eq!(fast, slow);
    }

    proptest! {
        #[test]
        fn the_walk_reports_what_the_bytewise_walk_does(
            body in proptest::collection::vec(
                prop_oneof![
                    4 => proptest::sample::select(b"abcXYZ019_".to_vec()),
                    2 => proptest::sample::select(b" \n\t-.,'\"".to_vec()),
                    2 => proptest::sample::select(b"|;&$<>(){}[]/\\:=@!`~%+*".to_vec()),
                    1 => any::<u8>(),
                ],
                0..80,
            )
        ) {
            let body = String::from_utf8_lossy(&body).into_owned();
            let (fast, slow) = both(&body);
            prop_assert_eq!(fast, slow);
        }

        #[test]
        fn any_text_walks_alike(body in "\\PC{0,60}") {
            let (fast, slow) = both(&body);
            prop_assert_eq!(fast, slow);
        }
    }
}
