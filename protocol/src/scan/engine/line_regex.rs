//! The line rules' regexes, built for what the engine asks of them: a
//! search of one line (or a few) that the prefilter has already found a
//! trigger on.
//!
//! `regex::bytes::Regex` wraps `regex-automata`'s meta regex, and when it
//! is built it extracts the pattern's prefix, suffix and inner literals and
//! builds a searcher of them (memchr, Teddy, Aho-Corasick) to skip ahead
//! in long haystacks. That was about half of every node's start
//! (`Scanner::standard()`: 150 M of the rules' 300 M instructions), and
//! a haystack of tens of bytes has little to skip. These are the same meta
//! regex, configured as [`crate::scan::rule::compile`] configures it
//! through the regex crate (`bytes::RegexBuilder` with
//! `case_insensitive(true)`, `unicode(false)`), less the literal
//! prefilters: the same syntax, the same leftmost-first semantics, so the
//! same matches (`tests` holds every standard rule to the old build).

use regex_automata::MatchKind;
use regex_automata::meta::{Builder, Config, Regex};
use regex_automata::util::syntax;

/// Compiles a line rule's pattern; see the module doc.
pub(super) fn compile(pattern: &str) -> Regex {
    Builder::new()
        .configure(
            // The regex crate's defaults for a `bytes::Regex`
            // (`regex::builders::Builder::default`, `build_one_bytes`).
            Config::new()
                .nfa_size_limit(Some(10 * (1 << 20)))
                .hybrid_cache_capacity(2 * (1 << 20))
                .match_kind(MatchKind::LeftmostFirst)
                .utf8_empty(false)
                .auto_prefilter(false),
        )
        .syntax(syntax::Config::new().case_insensitive(true).unicode(false).utf8(false))
        .build(pattern)
        .unwrap_or_else(|e| panic!("scan rule pattern does not compile: {e}\n{pattern}"))
}

#[cfg(test)]
#[path = "line_regex_tests.rs"]
mod tests;
