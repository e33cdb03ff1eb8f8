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

/// Whether the run of `./a.sh` on the first line that is exactly that
/// run is shown by the rest of `text`.
fn shown_at_run(text: &str) -> bool {
    let body = crate::scan::engine::Body::new(text);
    let start = crate::scan::engine::LineRef { index: 0, start: 0, end: 0 };
    let (run, _) = body.lines_from(start).find(|(_, l)| *l == "./a.sh").expect("a run");
    super::Shown::new(text).shown(run, "./a.sh")
}

/// A block opening within two lines below a line naming the file shows
/// it; three lines below it is another block (session 29's sweep:
/// `block_below`'s start and step, `fence_starts`).
#[test]
fn a_block_two_lines_below_a_naming_shows_the_file_and_three_lines_below_not() {
    assert!(shown_at_run("Save a.sh:\n```\necho hi\n```\n\ntext\n\n./a.sh\n"));
    assert!(shown_at_run("Save a.sh:\n\n```\necho hi\n```\n\ntext\n\n./a.sh\n"));
    assert!(!shown_at_run("Save a.sh:\n\n\n```\necho hi\n```\n\ntext\n\n./a.sh\n"));
    // Shown further down the body than the run: shown all the same.
    assert!(shown_at_run("./a.sh\n\ntext\n\nSave a.sh:\n```\necho hi\n```\n"));
}

/// The block below a line naming the file that holds the run shows the
/// command, not the file, whatever lies between the line and its fence
/// (the fence's own start is what `holds` reads from).
#[test]
fn the_block_holding_the_run_below_a_naming_shows_nothing() {
    assert!(!shown_at_run("The list is kept in a.sh; run it:\n```\n./a.sh\n```\n"));
    assert!(!shown_at_run("The list is kept in a.sh; run it:\n\n```\n./a.sh\n```\n"));
    assert!(!shown_at_run("The list is kept in a.sh; run it:\nfirst:\n```\n./a.sh\n```\n"));
    // A block closed between the fence and the run does not hold it.
    assert!(shown_at_run("The list is kept in a.sh; run it:\n```\necho\n```\n\n./a.sh\n"));
}

/// A line inside a block opens nothing with the block's closing fence
/// below it; a line after a closed block is outside again.
#[test]
fn a_naming_inside_a_block_opens_nothing_and_after_the_block_it_does() {
    assert!(!shown_at_run("```sh\nchmod +x a.sh\n./a.sh\n```\n"));
    assert!(!shown_at_run("text\n\n```sh\necho one\nchmod +x a.sh\n./a.sh\n```\n"));
    assert!(shown_at_run("```\necho\n```\nsee a.sh:\n```\ncat a.sh\n```\n\n./a.sh\n"));
    // A comment naming the file as the block's first line is its title.
    assert!(shown_at_run("```sh\n# a.sh\necho hi\n```\n\n./a.sh\n"));
}

/// `holds` reads at most `MAX_BLOCK_BYTES` from the fence to the run:
/// at the bound the block holds it, one byte past it the block is read
/// as showing the file, as before blocks were told apart.
#[test]
fn a_block_holds_a_run_up_to_its_byte_bound_and_not_past_it() {
    let body = |filler: usize| {
        // `run - open` is the fence line's four bytes and the filler's.
        let filler = format!("{}\n", "#".repeat(filler - 1));
        format!("The list is kept in a.sh; run it:\n```\n{filler}./a.sh\n```\n")
    };
    assert!(!shown_at_run(&body(super::MAX_BLOCK_BYTES - 4)));
    assert!(shown_at_run(&body(super::MAX_BLOCK_BYTES - 3)));
    // Far into a body, the distance is what counts, not the offsets.
    let far = format!("{}\n{}", "x".repeat(2 * super::MAX_BLOCK_BYTES), body(super::MAX_BLOCK_BYTES - 4));
    assert!(!shown_at_run(&far));
    // A fence line never holds a run on itself (its info string).
    assert!(!super::holds("```sh ./a.sh\n", 0, 0));
    assert!(super::holds("```\n./a.sh\n", 0, 4));
}

/// A run of a folder (`Import-Module ./tools/`) is shown by the lines
/// naming the folder, not by every line: its last path component is
/// empty, and an empty name matched everywhere, so any line with a URL
/// or a `>` hid the run (found by session 29's sweep of `namings`'
/// `at < end`, which only an empty name could reach).
#[test]
fn a_folder_run_is_not_shown_by_an_unrelated_line() {
    use crate::scan::testutil::assert_hit;
    use crate::scan::{Category, Severity};
    let body = "Import-Module ./tools/\n\nSee https://example.com for docs.\n";
    assert_hit(body, "trojan.companion-script", Category::SupplyChain, Severity::High, 1);
    let run = crate::scan::engine::LineRef { index: 0, start: 0, end: 22 };
    assert!(!super::Shown::new(body).shown(run, "./tools/"));
    // The folder named and shown on a line of its own still shows it.
    let shown = "Import-Module ./tools/\n\nThe module: https://example.com/tools\n";
    assert!(super::Shown::new(shown).shown(run, "./tools/"));
    assert!(super::Shown::new(shown).shown(run, ".\\tools\\"));
}
