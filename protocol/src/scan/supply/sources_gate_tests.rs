//! The word gate in front of the declared sources' set
//! (`DECLARED_WORDS`, #14's speed): it must let through every line a
//! pattern of the set matches, held to the set on lines built from the
//! patterns' own words and cases.

use super::*;
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "conda",
    "MAMBA",
    "micromamba",
    "install",
    "-c",
    "--channel",
    "channels:",
    "composer",
    "config",
    "repositories.x",
    "source",
    "Source:",
    "\"",
    "'",
    "bundle",
    "mirror.https://rubygems.org",
    "maven",
    "{",
    "url",
    "uri(",
    "(",
    "dotnet",
    "nuget",
    "add",
    "sources",
    "Register-PSRepository",
    "set-psrepository",
    "-SourceLocation",
    "-Uri",
    "brew",
    "tap",
    "acme/tools",
    "https://pkgs.example.com/simple",
    "http://10.0.0.5/x",
    "=",
    "git",
    "curl",
];

#[test]
fn each_pattern_s_own_example_passes_the_gate_and_a_plain_url_line_does_not() {
    for line in [
        "conda install -c https://conda.example.com/ch numpy",
        "composer config repositories.acme composer https://repo.example.com",
        "source \"https://gems.example.com\"",
        "bundle config mirror.https://rubygems.org https://gems.example.com",
        "maven { url \"https://repo.example.com/maven\" }",
        "dotnet nuget add source https://nuget.example.com/v3/index.json",
        "Register-PSRepository -Name x -SourceLocation https://ps.example.com/api",
        "Set-PSRepository -Name x -Uri https://ps.example.com/api",
        "brew tap acme/tools https://git.example.com/acme/homebrew-tools",
    ] {
        assert!(DECLARED_ANY.is_match(line.as_bytes()), "{line}");
        assert!(DECLARED_WORDS.any_in(line.as_bytes()), "{line}");
    }
    let plain = "curl -s http://localhost:8080/v1/orders | jq '.items | length'";
    assert!(!DECLARED_WORDS.any_in(plain.as_bytes()));
}

proptest! {
    #[test]
    fn the_gate_lets_through_every_line_the_set_matches(pieces in proptest::collection::vec(any::<usize>(), 0..8)) {
        let line = pieces.iter().map(|&k| PIECES[k % PIECES.len()]).collect::<Vec<_>>().join(" ");
        if DECLARED_ANY.is_match(line.as_bytes()) {
            prop_assert!(DECLARED_WORDS.any_in(line.as_bytes()), "{}", line);
        }
    }
}
