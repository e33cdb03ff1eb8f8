//! The class-set filter in front of `count_difference` (#14's scan speed,
//! seventh pass): it turns a name away only where the counts would.

use proptest::prelude::*;

use super::*;

/// Names of the bytes the classes tell apart, and one of the catch-all.
fn name() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(b"abcdexyz019-_./@+".to_vec()), 0..40)
        .prop_map(|b| String::from_utf8(b).expect("ascii"))
}

#[test]
fn the_classes_are_the_counts_present() {
    assert_eq!(classes(&counts("")), 0);
    assert_eq!(classes(&counts("aab")), 0b11);
    assert_eq!(classes(&counts("+z@")), 1 << 41 | 1 << 40 | 1 << 25);
    // One edit: the counts differ by two, the classes by two at most.
    let (a, b) = (counts("requests"), counts("reqeusts"));
    assert_eq!((classes(&a) ^ classes(&b)).count_ones(), 0);
    let (a, b) = (counts("numpy"), counts("numpx"));
    assert_eq!((classes(&a) ^ classes(&b)).count_ones(), 2);
    assert_eq!(count_difference(&a, &b), 2);
}

proptest! {
    #[test]
    fn the_classes_never_differ_more_than_the_counts(a in name(), b in name()) {
        let (ca, cb) = (counts(&a), counts(&b));
        prop_assert!((classes(&ca) ^ classes(&cb)).count_ones() as usize <= count_difference(&ca, &cb));
    }
}
