//! The byte gates in front of the family's searches (#14's speed): each
//! turns away only lines its searches could not match, held to the
//! searches alone on lines built from the forms' own words.

use super::*;
use proptest::prelude::*;

/// Words of every form, with and without the bytes the gates look for.
const WORDS: &[&str] = &[
    "java",
    "-javaagent:",
    "agent.jar",
    "-javaagent:agent.jar",
    "node",
    "-r",
    "--require",
    "./x.cjs",
    "x.cjs",
    "ld_preload=",
    "ld_preload",
    "./lib.so",
    "core.hookspath",
    "${skill_dir}",
    "{basedir}",
    "/hooks",
    "hooks",
    "include",
    "$(skill_dir)/x.mk",
    "iex",
    "(get-content",
    ".\\x.ps1",
    "x.ps1",
    "import-module",
    "alias",
    "git=./x",
    "git=x",
    "sh",
    "<",
    "tools/steps.txt",
    "steps.txt",
    "cat",
    "|",
    "bash",
    "-c",
    "\"$(cat",
    "xargs",
    "-a",
    "list",
    "pip",
    "install",
    "-e",
    "./labkit",
    "labkit",
    "make",
    "-f",
    "tools/Makefile",
    "Makefile",
    "```bash",
    "~~~",
    "github.com/acme/tool/",
    "github.com",
    "\\",
    ":",
    "=",
];

fn line_of(words: &[usize]) -> String {
    words.iter().map(|&k| WORDS[k % WORDS.len()]).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_java_agent_without_a_slash_is_still_found_and_a_fence_is_not_searched() {
    let line = "java -javaagent:agent.jar -jar app.jar";
    assert_eq!(formed_runs(line), searched_runs(line));
    assert_eq!(formed_runs(line).len(), 1, "{:?}", formed_runs(line));
    // The same without the colon: no form, and the gate says so first.
    assert!(formed_runs("java -javaagent agent.jar").is_empty());
    assert!(formed_runs("   ```bash").is_empty());
    let line = r"iex (Get-Content .\tools\x.ps1 -Raw)";
    assert_eq!(formed_runs(line), searched_runs(line));
    assert!(!formed_runs(line).is_empty());
}

proptest! {
    #[test]
    fn the_gate_keeps_every_form_the_searches_find(words in proptest::collection::vec(any::<usize>(), 0..7)) {
        let line = line_of(&words);
        prop_assert_eq!(formed_runs(&line), searched_runs(&line));
    }

    #[test]
    fn a_bare_address_has_a_slash(words in proptest::collection::vec(any::<usize>(), 0..7)) {
        let line = line_of(&words).replace('/', " ");
        prop_assert!(!BARE_ADDRESS.is_match(line.as_bytes()));
    }

    #[test]
    fn no_text_without_the_gates_bytes_holds_a_form(line in "[a-z0-9 ._<>|=$(){}\"'-]{0,40}") {
        prop_assert!(searched_runs(&line).is_empty());
    }
}
