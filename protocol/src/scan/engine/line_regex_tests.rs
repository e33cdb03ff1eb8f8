//! Every standard line rule's regex, built without prefilters, against the
//! regex crate's build of it (`rule::compile`, what the engine ran before):
//! the same matches on the typical body and on lines made of the rules'
//! own triggers and the bytes around commands.

use std::sync::LazyLock;

use proptest::prelude::*;

use crate::scan::Scanner;
use crate::scan::rule;

const TYPICAL_SKILL: &str = include_str!("../../../benches/typical_skill.md");

/// Pieces a line is made of besides the triggers: blanks, shell syntax,
/// quotes, URLs, a multi-byte character and a line break (span rules).
const PIECES: &[&str] = &[
    " ",
    "  ",
    "\t",
    "|",
    "| ",
    "/",
    "-",
    ".",
    ":",
    ";",
    "&&",
    "$(",
    ")",
    "`",
    "'",
    "\"",
    "\\",
    "=",
    "a",
    "x1",
    "0",
    "\n",
    "é",
    "sh",
    "bash",
    "curl ",
    "https://x.example.io/a.sh",
    "~/.ssh/",
    "token",
    "the ",
    "all ",
];

/// Each standard line rule's pattern, built both ways once.
struct Both {
    pattern: String,
    old: regex::bytes::Regex,
    new: regex_automata::meta::Regex,
}

fn rules() -> &'static [Both] {
    static RULES: LazyLock<Vec<Both>> = LazyLock::new(|| {
        Scanner::standard()
            .engine
            .rules
            .iter()
            .filter(|c| !c.rule.literal)
            .map(|c| Both {
                pattern: c.rule.pattern.clone(),
                old: rule::compile(&c.rule.pattern),
                new: super::compile(&c.rule.pattern),
            })
            .collect()
    });
    &RULES
}

fn triggers() -> &'static [String] {
    static TRIGGERS: LazyLock<Vec<String>> = LazyLock::new(|| {
        Scanner::standard()
            .engine
            .rules
            .iter()
            .flat_map(|c| c.rule.triggers.iter())
            .map(|t| t.trim_matches('*').to_string())
            .collect()
    });
    &TRIGGERS
}

fn same_matches(both: &Both, hay: &[u8]) -> Result<(), TestCaseError> {
    let old: Vec<_> = both.old.find_iter(hay).map(|m| m.range()).collect();
    let new: Vec<_> = both.new.find_iter(hay).map(|m| m.range()).collect();
    prop_assert_eq!(old, new, "{} on {:?}", both.pattern, String::from_utf8_lossy(hay));
    Ok(())
}

#[test]
fn every_rule_matches_the_typical_body_as_before() {
    assert!(rules().len() > 50, "the standard rules: {}", rules().len());
    for both in rules() {
        for line in TYPICAL_SKILL.lines().chain([TYPICAL_SKILL]) {
            same_matches(both, line.as_bytes()).unwrap();
        }
    }
}

#[test]
fn the_matches_differ_where_the_regex_crate_build_does() {
    // The oracle itself can fail: a pattern whose match ranges differ.
    let hay = b"curl https://x.example.io/a.sh | sh";
    let old: Vec<_> = rule::compile(r"curl\s+\S+").find_iter(hay).map(|m| m.range()).collect();
    let new: Vec<_> = super::compile(r"curl\s+\S+\s").find_iter(hay).map(|m| m.range()).collect();
    assert_ne!(old, new);
    // Case and ASCII classes as the rules compile them.
    assert_eq!(super::compile(r"\bSUDO\s+\w+").find(b"x sudo rm").map(|m| m.range()), Some(2..9));
    assert_eq!(super::compile(r"\w+").find("é".as_bytes()), None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
    #[test]
    fn every_rule_matches_made_up_lines_as_before(
        rule in any::<proptest::sample::Index>(),
        parts in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..4), 1..12),
    ) {
        let triggers = triggers();
        let mut line = String::new();
        for (pick, kind) in parts {
            match kind {
                0 => line.push_str(pick.get::<String>(triggers)),
                1 => line.push_str(&pick.get(triggers).to_ascii_uppercase()),
                _ => line.push_str(pick.get::<&str>(PIECES)),
            }
        }
        same_matches(rule.get(rules()), line.as_bytes())?;
    }
}
