//! The class filter of `lookalike` (#14's `5d59ba1`) at its bound, for the
//! session-27 sweep (#27): a look-alike whose character classes differ
//! from its popular name's by exactly `2 * max` (a substitution that
//! drops one class and brings another, for each edit allowed) is read,
//! and so is one whose counts differ by exactly that much. The tests of
//! session 25 reach the filter with deletions and swaps only, which move
//! neither figure to the bound.

use super::*;

fn like(e: Ecosystem, n: &str) -> Option<(&'static str, Likeness)> {
    lookalike(e, n).map(|l| (l.popular, l.likeness))
}

fn class_difference(a: &str, b: &str) -> usize {
    (classes(&counts(a)) ^ classes(&counts(b))).count_ones() as usize
}

#[test]
fn one_substitution_in_a_short_name_is_read_at_the_filters_bound() {
    // `numpx` (5, one edit allowed): `y` gone, `x` new, two classes and two
    // counts apart, `2 * 1`.
    assert_eq!(
        (class_difference("numpx", "numpy"), count_difference(&counts("numpx"), &counts("numpy"))),
        (2, 2)
    );
    assert_eq!(like(Ecosystem::PyPi, "numpx"), Some(("numpy", Likeness::Edits(1))));
}

#[test]
fn two_substitutions_in_a_long_name_are_read_at_the_filters_bound() {
    // `xeqyests` (8, two edits allowed): `r` and `u` gone, `x` and `y` new,
    // four classes and four counts apart, `2 * 2`.
    assert_eq!(
        (
            class_difference("xeqyests", "requests"),
            count_difference(&counts("xeqyests"), &counts("requests"))
        ),
        (4, 4)
    );
    assert_eq!(like(Ecosystem::PyPi, "xeqyests"), Some(("requests", Likeness::Edits(2))));
    // One class more apart (the last `s` for `z` as well, one `s` left):
    // three edits, none.
    assert_eq!(class_difference("xeqyestz", "requests"), 5);
    assert_eq!(like(Ecosystem::PyPi, "xeqyestz"), None);
}
