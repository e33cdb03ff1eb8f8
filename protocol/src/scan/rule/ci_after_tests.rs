//! [`contains_ci_after`] held to [`contains_ci`] of the whole needle, the
//! search it replaced (#14's speed, ninth pass).

use super::*;
use proptest::prelude::*;

#[test]
fn the_mark_is_found_up_to_the_haystacks_end_and_no_further() {
    assert!(contains_ci_after(b"\"ARGS\"", b'"', b"args\""));
    assert!(contains_ci_after(b"x \"args\"", b'"', b"args\""));
    // One byte short at the end, and the mark alone as the last byte.
    assert!(!contains_ci_after(b"x \"args", b'"', b"args\""));
    assert!(!contains_ci_after(b"x \"", b'"', b"args\""));
    // The first mark does not fit, the second does.
    assert!(contains_ci_after(b"\"arg \"Args\"", b'"', b"args\""));
    // `-` differs from `\r` in bit 0x20: no folding of the mark.
    assert!(!contains_ci_after(b"\rreplace", b'-', b"replace"));
    assert!(contains_ci_after(b"=>", b'=', b">"));
    assert!(!contains_ci_after(b"=", b'=', b">"));
    // An empty rest is the mark alone.
    assert!(contains_ci_after(b"a-", b'-', b""));
    assert!(!contains_ci_after(b"a", b'-', b""));
}

proptest! {
    #[test]
    fn it_agrees_with_a_search_of_the_whole_needle(
        hay in proptest::collection::vec(proptest::sample::select(b"aAgGsS\"-=>\r\x02 ".to_vec()), 0..70),
        mark in proptest::sample::select(b"\"-=".to_vec()),
        rest in proptest::collection::vec(proptest::sample::select(b"ags\">".to_vec()), 0..4),
    ) {
        let mut needle = vec![mark];
        needle.extend_from_slice(&rest);
        prop_assert_eq!(contains_ci_after(&hay, mark, &rest), contains_ci(&hay, &needle));
    }
}
