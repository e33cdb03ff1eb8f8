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

/// Whether the run of `./a.sh` on the last line of `text` is shown.
fn shown_to_last(text: &str) -> bool {
    let body = crate::scan::engine::Body::new(text);
    let start = crate::scan::engine::LineRef { index: 0, start: 0, end: 0 };
    let (run, line) = body.lines_from(start).filter(|(_, l)| !l.is_empty()).last().expect("a run");
    assert_eq!(line, "./a.sh");
    super::Shown::new(text).shown(run, "./a.sh")
}

/// Each clause that shows a file does so alone: the oracle comparison's
/// bodies mix many showing lines, and one clause joined to the next by
/// `&&` was missed there (the session-28 run: three survivors).
#[test]
fn each_way_a_line_shows_the_file_shows_it_alone() {
    for naming in ["x <<EOF a.sh", "get https://x.example/a.sh", "echo hi > a.sh", "echo hi | tee a.sh"] {
        assert!(shown_to_last(&format!("{naming}\n\ntext\n\n./a.sh\n")), "{naming}");
    }
    assert!(!shown_to_last("see a.sh\n\ntext\n\n./a.sh\n"));
}

/// A block's first line naming the file in inline code is its title:
/// the fence above it is read as the line before, up to its newline.
#[test]
fn an_inline_code_title_under_a_backtick_fence_shows_the_file() {
    assert!(shown_to_last("```\n`a.sh`\necho hi\n```\n\ntext\n\n./a.sh\n"));
}
