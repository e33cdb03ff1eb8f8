//! `normalize.rs` edges session 29's whole-file sweep (#27) found
//! unpinned: empty quotes at the text's very start and end, a quote that
//! joins nothing, doubled letters, and a look-alike's token after a blank
//! wider than one byte (which panicked).

use super::{join_split_words, normalize};
use crate::scan::Severity;

/// Empty quotes split a word only between two word characters: at the
/// text's first or last bytes there is no character on one side.
#[test]
fn empty_quotes_at_the_texts_edges_split_nothing() {
    assert_eq!(join_split_words("\"\"ab"), None);
    assert_eq!(join_split_words("''ab"), None);
    assert_eq!(join_split_words("ab\"\""), None);
    assert_eq!(join_split_words("ab''"), None);
    // One character in from either edge they do.
    assert_eq!(join_split_words("a\"\"b").as_deref(), Some("ab"));
    assert_eq!(join_split_words("a''bc").as_deref(), Some("abc"));
}

/// Only a pair of the same quote is empty: one quote inside a word, a
/// doubled letter or a quote followed by another character joins nothing.
#[test]
fn only_a_pair_of_one_quote_splits_a_word() {
    assert_eq!(join_split_words("alt=\"\" O'Neill"), None);
    assert_eq!(join_split_words("alt=\"\" bookkeeper"), None);
    assert_eq!(join_split_words("alt='' a\"'b"), None);
    assert_eq!(join_split_words("alt=\"\" c\"\"url").as_deref(), Some("alt=\"\" curl"));
}

/// A look-alike after a blank NFKC keeps as it is (U+1680, three bytes):
/// the line is read, not a panic; the token after the blank is the word.
#[test]
fn a_look_alike_after_a_wide_blank_is_read() {
    let n = normalize("Visit\u{1680}p\u{430}ypal.com today\n");
    assert_eq!(n.text, "Visit\u{1680}paypal.com today\n");
    assert_eq!(n.findings.len(), 1);
    assert_eq!(n.findings[0].severity, Severity::High);
    // Named for what it is after that blank: a lesson, unless the token
    // is a mail address.
    let n = normalize("Cyrillic:\u{1680}p\u{430}ypal.com\n");
    assert_eq!(n.findings[0].severity, Severity::Low);
    let n = normalize("Cyrillic:\u{1680}me@p\u{430}ypal.com\n");
    assert_eq!(n.findings[0].severity, Severity::High);
    let n = normalize("Cyrillic: x me@p\u{430}ypal.com\n");
    assert_eq!(n.findings[0].severity, Severity::High);
}
