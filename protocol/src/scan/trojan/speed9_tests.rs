//! The ninth pass's cheaper tests in `companions` (#14's speed), each held
//! to the one it replaced: the `./` gate before the `sudo` searches, and
//! the program list's brackets found by one search.

use super::*;
use proptest::prelude::*;

/// The replaced `sudo` gate: both words searched on every line.
fn sudo_before(b: &[u8]) -> bool {
    contains_ci(b, b"sudo") || contains_ci(b, b"doas")
}

#[test]
fn a_local_run_as_root_needs_its_dot_slash() {
    assert!(has_dot_slash(b"./"));
    assert!(has_dot_slash(b"sudo ./tools/x"));
    assert!(has_dot_slash(b"a. ./"));
    // A dot as the last byte, a slash before its dot.
    assert!(!has_dot_slash(b"sudo tools/x."));
    assert!(!has_dot_slash(b"/."));
    assert!(!has_dot_slash(b""));
    let b = b"sudo ./tools/bootstrap --yes";
    assert!(SUDO_LOCAL.is_match(b) && has_dot_slash(b));
}

proptest! {
    #[test]
    fn the_dot_slash_gate_keeps_every_local_run_as_root(
        line in "(sudo|SUDO|doas| |-E|\\./|tools/|x|\\.|/|;|`){0,10}",
    ) {
        let b = line.as_bytes();
        let before =
            sudo_before(b).then(|| SUDO_LOCAL.captures(b)).flatten().and_then(|c| c.get(1)).map(|m| m.range());
        let after = (has_dot_slash(b) && sudo_before(b))
            .then(|| SUDO_LOCAL.captures(b))
            .flatten()
            .and_then(|c| c.get(1))
            .map(|m| m.range());
        prop_assert_eq!(before, after);
        prop_assert_eq!(has_dot_slash(b), line.contains("./"));
    }

    #[test]
    fn a_program_list_is_found_as_before(line in "[a-z \\[\\](),\"']{0,20}") {
        let b = line.as_bytes();
        let listed = b.contains(&b'[') || b.contains(&b'(');
        prop_assert_eq!(as_command(&line), listed.then(|| line.replace(['[', ']', '(', ')', ',', '"', '\''], " ")));
    }
}
