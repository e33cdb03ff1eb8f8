//! `shown.rs` edges the session-28 reading of its mutants (#27) found
//! unpinned: "create" and "write" start a word, not any part of one.

use super::starts_word;

#[test]
fn create_or_write_starts_a_word_anywhere_on_the_line() {
    assert!(starts_word(b"Then create `a.sh` with", b"create"));
    assert!(starts_word(b"create `a.sh` with", b"create"));
    assert!(starts_word(b"and (write `a.sh`)", b"write"));
    // Inside a word: a devcontainer's hook, a rewrite.
    assert!(!starts_word(b"\"postCreateCommand\": \"bash a.sh\"", b"create"));
    assert!(!starts_word(b"rewrite a.sh", b"write"));
}
