//! The ninth pass's cheaper tests in `declared` and `sources` (#14's
//! speed), each held to the one it replaced.

use super::*;
use proptest::prelude::*;

/// The replaced test: a lower-cased copy of the command's first six bytes.
fn sets_a_variable_before(line: &str) -> bool {
    let command = line.trim_start().trim_start_matches(['`', '$', '-', '*', ' ']);
    let command_start = command.get(..6).unwrap_or(command).to_ascii_lowercase();
    line.contains('=') && ["go", "export", "env ", "set "].iter().any(|p| command_start.starts_with(p))
}

#[test]
fn a_variable_is_set_by_a_command_word_to_its_last_byte() {
    assert!(sets_a_variable("EXPORT GOFLAGS=-insecure"));
    assert!(sets_a_variable("`go env -w GONOSUMDB=x`"));
    assert!(sets_a_variable("env X=1"));
    // `env` without its blank, one byte short of `export`, no `=`.
    assert!(!sets_a_variable("envy X=1"));
    assert!(!sets_a_variable("expor X=1"));
    assert!(!sets_a_variable("export GOFLAGS"));
    // A multi-byte character inside the first six bytes.
    assert!(sets_a_variable("go\u{e9}\u{e9} x=1"));
    assert!(!sets_a_variable("\u{e9}go x=1"));
    assert!(has_from(b"FROM x") && has_from(b"x FROM"));
    assert!(!has_from(b"FRO") && !has_from(b"from x") && !has_from(b"FFRO M"));
}

proptest! {
    #[test]
    fn the_variable_test_agrees_with_the_copy(line in "[ `$*=\\-]{0,3}(go|GO|Go|export|EXPORT|env |Env |set |SET |se|é|x){0,3}[=a-z é]{0,4}") {
        prop_assert_eq!(sets_a_variable(&line), sets_a_variable_before(&line));
    }

    #[test]
    fn from_is_found_as_before(line in "(F|R|O|M|FROM|FRO|x| ){0,8}") {
        prop_assert_eq!(has_from(line.as_bytes()), line.contains("FROM"));
    }

    #[test]
    fn the_sources_gates_agree_with_the_searches(line in "(:|/|//|=|>|=>|-|replace|REPLACE|-Replace|\"url\"|\"URL|x| ){0,8}") {
        let b = line.as_bytes();
        prop_assert_eq!(super::super::has_url(&line), line.contains("://"));
        prop_assert_eq!(
            crate::scan::rule::contains_ci_after(b, b'=', b">") || crate::scan::rule::contains_ci_after(b, b'-', b"replace"),
            line.contains("=>") || contains_ci(b, b"-replace")
        );
    }
}

proptest! {
    #[test]
    fn the_pypirc_gate_agrees_with_the_search(line in "(\\.|pypirc|PyPiRc|\\.pypi|x| ){0,6}") {
        let b = line.as_bytes();
        prop_assert_eq!(crate::scan::rule::contains_ci_after(b, b'.', b"pypirc"), contains_ci(b, b".pypirc"));
    }
}

/// The declared sources' word gate read before the last `://` only: the
/// word right before the address, and a word only after it.
#[test]
fn the_declared_words_are_read_up_to_the_last_address() {
    use super::super::sources::sources;
    let high = |line: &str| {
        sources(line, std::iter::empty()).iter().any(|o| o.severity == crate::scan::Severity::High)
    };
    assert!(high("brew tap me/x https://git.evil.example/tap"));
    assert!(high("bundle config mirror.https://rubygems.org https://gems.evil.example"));
    assert!(high("source \"https://gems.evil.example\""));
    // The word after the only address: no source declared, before or now.
    assert!(!high("https://gems.evil.example source"));
}
