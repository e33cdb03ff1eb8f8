//! Edges of `names.rs` that the session-25 whole-file sweep (#27) found
//! unpinned: the edit distance against a plain reference at every length
//! up to its bound and one past it; which popular name wins when a name is
//! near several; the length bounds of the search (four characters, two
//! edits from a name of seven); PyPI's separator runs; npm scopes.

use super::*;

fn like(e: Ecosystem, n: &str) -> Option<(&'static str, Likeness)> {
    lookalike(e, n).map(|l| (l.popular, l.likeness))
}

/// Optimal string alignment distance, the whole table: the reference.
fn osa(a: &[u8], b: &[u8]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[test]
fn the_distance_is_the_references_within_its_bound() {
    // Short words over three letters hold every kind of edit, swaps of
    // neighbours among them; a fixed generator keeps the run repeatable.
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let word = |next: &mut dyn FnMut() -> u32| -> String {
        let len = (next() % 9) as usize;
        (0..len).map(|_| [b'a', b'b', b'c'][(next() % 3) as usize] as char).collect()
    };
    for _ in 0..4000 {
        let a = word(&mut next);
        let b = if next() % 2 == 0 {
            // A few edits of `a`, so that small distances are common.
            let mut b = a.clone().into_bytes();
            for _ in 0..=next() % 3 {
                let at = if b.is_empty() { 0 } else { (next() as usize) % b.len() };
                match next() % 4 {
                    0 if !b.is_empty() => {
                        b.remove(at);
                    }
                    1 => b.insert(at, b'c'),
                    2 if at + 1 < b.len() => b.swap(at, at + 1),
                    _ if !b.is_empty() => b[at] = b'a',
                    _ => {}
                }
            }
            String::from_utf8(b).expect("ASCII")
        } else {
            word(&mut next)
        };
        let d = osa(a.as_bytes(), b.as_bytes());
        for max in 0..=3 {
            assert_eq!(distance(&a, &b, max), (d <= max).then_some(d), "{a:?} {b:?} within {max}");
        }
    }
}

#[test]
fn the_distance_reads_names_up_to_its_bound_and_none_past_it() {
    let long = "abcdefghij".repeat(7);
    let at = |n: usize| &long[..n];
    // Both at the bound: read, whichever is the longer.
    assert_eq!(distance(at(MAX_LEN), at(MAX_LEN), 0), Some(0));
    assert_eq!(distance(at(MAX_LEN), at(MAX_LEN - 1), 2), Some(1));
    assert_eq!(distance(at(MAX_LEN - 1), at(MAX_LEN), 2), Some(1));
    // One past it, on either side: none.
    assert_eq!(distance(at(MAX_LEN + 1), at(MAX_LEN), 2), None);
    assert_eq!(distance(at(MAX_LEN), at(MAX_LEN + 1), 2), None);
    assert_eq!(distance(at(MAX_LEN + 1), at(MAX_LEN + 1), 2), None);
}

#[test]
fn the_nearest_popular_name_wins_and_the_first_of_equals() {
    // Two edits from `beautifulsoup` before one from `beautifulsoup4`.
    assert_eq!(like(Ecosystem::PyPi, "eautifulsoup4"), Some(("beautifulsoup4", Likeness::Edits(1))));
    // One edit from `beautifulsoup` before two from `beautifulsoup4`.
    assert_eq!(like(Ecosystem::PyPi, "beatifulsoup"), Some(("beautifulsoup", Likeness::Edits(1))));
    // One edit from both: the first in the list.
    assert_eq!(like(Ecosystem::PyPi, "cransformers"), Some(("transformers", Likeness::Edits(1))));
}

#[test]
fn names_of_four_characters_are_read_and_of_three_are_not() {
    assert_eq!(like(Ecosystem::PyPi, "1xml"), Some(("lxml", Likeness::Homoglyph)));
    assert_eq!(like(Ecosystem::Npm, "axio"), Some(("axios", Likeness::Edits(1))));
    // `joi` is popular, but a name of three characters has too many real
    // neighbours.
    assert_eq!(like(Ecosystem::Npm, "j0i"), None);
}

#[test]
fn two_edits_count_from_a_name_of_seven_characters_and_a_popular_one_of_eight() {
    // `rqeusts` (7) is two edits from `requests` (8): a swap and a deletion.
    assert_eq!(like(Ecosystem::PyPi, "rqeusts"), Some(("requests", Likeness::Edits(2))));
    // `colrma` (6) is two deletions from `colorama` (8): too short for two
    // edits.
    assert_eq!(like(Ecosystem::PyPi, "colrma"), None);
    assert_eq!(like(Ecosystem::PyPi, "colrama"), Some(("colorama", Likeness::Edits(1))));
    // `pandas` (6) is too short for two edits, however long the name.
    assert_eq!(like(Ecosystem::PyPi, "pxndasx"), None);
}

#[test]
fn a_run_of_pypi_separators_is_one() {
    assert_eq!(like(Ecosystem::PyPi, "python__dateutil"), None);
    assert_eq!(like(Ecosystem::PyPi, "python-_.dateutil"), None);
    // A leading separator is kept (and read without a panic).
    assert_eq!(like(Ecosystem::PyPi, "_requests"), Some(("requests", Likeness::Edits(1))));
}

#[test]
fn an_npm_scope_one_edit_from_a_popular_one_is_its_lookalike() {
    assert_eq!(
        like(Ecosystem::Npm, "@antropic-ai/totally-other"),
        Some(("@anthropic-ai", Likeness::Edits(1)))
    );
    // The popular scope itself, and a scope near none.
    assert_eq!(like(Ecosystem::Npm, "@anthropic-ai/totally-other"), None);
    assert_eq!(like(Ecosystem::Npm, "@qqqqqqqq/qqqqqq"), None);
}
