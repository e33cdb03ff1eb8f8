//! `runs.rs` edges the session-29 reading of its mutant list (#27) found
//! unpinned, each the only test of a mutant the run showed: where command
//! position starts (an assignment, a list number, a `;` that ends a word)
//! and where it does not (a flag, a word with a dot, `chmod`, a lone
//! backtick); a runner's first argument ends its options, and `-e`'s
//! argument is code; the offset of a quoted path and module; a home,
//! temporary or parent path is not the skill's; and the forms' gates,
//! which lacked three words their forms need.

use super::{is_companion_path, runs};

fn paths(line: &str) -> Vec<&str> {
    runs(line).into_iter().map(|(p, _)| p).collect()
}

#[test]
fn a_runners_first_argument_ends_its_options() {
    // `server` is what `node` runs: the path after it is its argument.
    assert!(paths("node server tools/config").is_empty());
    // Options and their values stand before the file.
    assert_eq!(paths("node --port 3000 tools/serve"), ["tools/serve"]);
}

#[test]
fn the_code_after_dash_e_is_no_file() {
    // `node -e` evaluates its argument: `tools/x` there is an expression,
    // not a file the runner is handed.
    assert!(paths("node -e tools/x").is_empty());
    assert!(paths("ruby -e tools/x.rb").is_empty());
}

#[test]
fn a_word_ending_in_a_semicolon_is_read_and_ends_the_command() {
    assert_eq!(paths("bash tools/x.sh; echo done"), ["tools/x.sh"]);
    assert_eq!(paths("cd tools; ./setup.sh"), ["./setup.sh"]);
}

#[test]
fn a_quoted_path_is_found_at_its_first_byte() {
    assert_eq!(runs("bash tools/x.sh"), [("tools/x.sh", 5)]);
    assert_eq!(runs("bash 'tools/x.sh'"), [("tools/x.sh", 6)]);
    assert_eq!(runs("python3 -m \"tools.setup\""), [("tools.setup", 12)]);
}

#[test]
fn command_position_after_a_word_that_is_no_command() {
    // An assignment and a list's number keep it.
    assert_eq!(paths("DEBUG=1 ./tools/setup.sh"), ["./tools/setup.sh"]);
    assert_eq!(paths("2. ./tools/setup.sh"), ["./tools/setup.sh"]);
    // A word ending in a dot that is no number, a command's argument and
    // a flag opening the line (a wrapped command's: `curl … \` then
    // `-o ./x`) do not.
    assert!(paths("Note. ./tools/setup.sh").is_empty());
    assert!(paths("chmod +x ./tools/setup.sh").is_empty());
    assert!(paths("  -o ./tools/install.sh").is_empty());
    // A lone backtick may close a span (`make `): the path after it is
    // prose; a word ending in one (`` `make` ``) closes the span and
    // what follows is a new command, as after `;`.
    assert!(paths("Run `make ` ./tools/setup.sh to see").is_empty());
}

#[test]
fn every_preload_flag_and_get_content_opens_the_gates_of_their_forms() {
    use super::super::formed_runs;
    // Each was found by its form's regex but shut out by a gate before it
    // (the forms' gate had no `--import`, `--loader` or `Get-Content`;
    // the preload gate no `--experimental-loader`).
    for (line, at) in [
        ("node --import ./x/reg.mjs app.js", 14),
        ("node --loader ./x/reg.mjs app.js", 14),
        ("node --experimental-loader ./x/reg.mjs app.js", 27),
    ] {
        assert_eq!(formed_runs(line), [("./x/reg.mjs", at, true)], "{line}");
    }
    assert_eq!(formed_runs("Get-Content tools/steps.txt | iex"), [("tools/steps.txt", 12, true)]);
    assert_eq!(formed_runs("get-content ./tools/steps | bash"), [("./tools/steps", 12, true)]);
}

#[test]
fn a_home_temporary_or_parent_path_is_not_the_skills() {
    // Each clause alone makes a path someone else's.
    for path in ["../x.sh", "$HOME/x.sh", "${HOME}/x.sh", "$TMP/x.sh", "/opt/x.sh", "~/x.sh"] {
        assert!(!is_companion_path(path), "{path}");
    }
    assert!(is_companion_path("tools/x.sh") && is_companion_path("$SKILL_DIR/x.sh"));
}
