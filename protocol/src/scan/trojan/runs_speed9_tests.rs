//! The ninth pass's cheaper gates of `runs` (#14's speed), held to the
//! searches they replaced: ` -m ` by its dashes, not `memmem::find`; the
//! single bytes of the forms' gates by `memchr`.

use super::*;
use proptest::prelude::*;

fn module_run_before(line: &str) -> bool {
    memchr::memmem::find(line.as_bytes(), b" -m ").is_some() && contains_ci(line.as_bytes(), b"py")
}

#[test]
fn a_module_flag_is_found_at_the_lines_edges() {
    assert!(mentions_module_run("python -m tools.x"));
    assert!(mentions_module_run("py -m "));
    // A dash first on the line has no blank before it; one byte short.
    assert!(!mentions_module_run("-m py"));
    assert!(!mentions_module_run("python -m"));
    assert!(!mentions_module_run("python -mx"));
    assert!(!mentions_module_run("python  m tools.x"));
}

proptest! {
    #[test]
    fn the_module_gate_agrees_with_the_search(line in "( |-|m|py|x|-m ){0,12}") {
        prop_assert_eq!(mentions_module_run(&line), module_run_before(&line));
    }

    #[test]
    fn the_byte_gates_agree_with_slice_contains(line in "[a-z /<=.]{0,30}") {
        let b = line.as_bytes();
        let feed = b.contains(&b'/')
            && (b.contains(&b'<')
                || [&b"cat "[..], b"type ", b"gc ", b"get-content", b"xargs"].iter().any(|w| contains_ci(b, w)));
        prop_assert_eq!(may_feed_shell(b), feed);
        let build = [&b"make"[..], b"just", b"task"].iter().any(|w| contains_ci(b, w))
            || (b.contains(&b'/') && [&b"pip"[..], b"npm", b"yarn", b"bun", b"gem"].iter().any(|w| contains_ci(b, w)));
        prop_assert_eq!(may_build_or_install(b), build);
    }
}
