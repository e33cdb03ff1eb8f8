//! Fetch-and-run asked in plain words (`trojan.fetch-and-run`): something
//! fetched, then that same thing run or sourced, in the same sentence or
//! the next ("get the setup script and run it", "download the helper from
//! get-tool.net/x. Execute it as root"), whatever names the place — an
//! address without its scheme, "our site", or nothing at all. The forms
//! with an address (`https://…`, `host/a/b/`) are `trojan.rs`' own regexes;
//! this one is tried after them.
//!
//! Read by what is asked, not by a list of phrasings: a fetch verb, what it
//! fetches, then a run verb whose object is that thing (a pronoun, or a
//! noun the fetched phrase holds: "download the installer … run the
//! installer"). A project's own script run after an unrelated fetch ("get
//! the file key from the URL, then run the export script") is no finding,
//! nor a download read before it runs ("download it, read it, then run
//! it"), nor a thing run through something else ("fetch the data and run
//! it through the parser").

use std::ops::Range;
use std::sync::LazyLock;

use super::super::rule::{Lazy, compile, slice_lossy};
use super::super::supply::has_word;

/// The fetch verbs, as words: what a prose line needs before it is read
/// as a plain-words fetch (the cheap test before the regex). `pull` is
/// left out: it is git's and a container's word for a project's own
/// update ("pull the latest main and run the tests").
pub(super) const FETCH_VERBS: &[&str] = &["download", "fetch", "get", "grab", "retrieve", "obtain"];

/// The run verbs, as words: the second cheap test.
const RUN_VERBS: &[&str] = &["run", "execute", "launch", "source", "invoke"];

/// A fetch verb, what it fetches (group 1), then, after `and`, `then`, a
/// comma, a colon or a sentence's end, a run verb on a pronoun or on a
/// noun of code (group 2), and what would make it something else than a
/// run of that thing (group 3: "run it through the parser").
static FETCHED_THEN_RUN: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:download|fetch|get|grab|retrieve|obtain)\s+([^;!?\n]{1,160}?)(?:,?\s+(?:and|then)|[.,:])\s+(?:then\s+)?(?:(?:just|simply|immediately|directly|now)\s+)?(?:run|execute|launch|source|invoke)\s+(?:it|them|that|the\s+(?:[\w-]+\s+){0,2}?(script|installer|helper|binary|tool|bootstrapper|payload|program|executable|file)s?)\b(?:\s+(through|past|against|over|by|with\s+the\s+data))?",
    )
});

/// What a careful reader does between the fetch and the run: the download
/// is looked at, checked or compared before it runs.
static INSPECTED: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:read(?:s|ing)?|review\w*|inspect\w*|look(?:s|ing)?|open(?:s|ing)?|check(?:s|ing)?|verify(?:ing)?|audit\w*|compar(?:e|ing)|scan(?:s|ning)?|diff|show(?:s|ing)?|checksums?|sha\d*(?:sum)?|sha-\d+|hash(?:es)?|signatures?|gpg)\b",
    )
});

/// The range in `hay` of what `hay` asks to fetch and then run — its
/// place when one is written (an address, with or without its scheme),
/// else the fetched phrase — or `None`.
pub(super) fn fetched_then_run(hay: &str) -> Option<Range<usize>> {
    if !has_word(hay, FETCH_VERBS, false) || !has_word(hay, RUN_VERBS, false) {
        return None;
    }
    let b = hay.as_bytes();
    let caps = FETCHED_THEN_RUN.captures(b)?;
    let fetched = caps.get(1)?;
    // Both ends stand next to ASCII (a blank before, a joiner after): the
    // slice is the group's own.
    let what = slice_lossy(hay, fetched.range());
    if caps.get(3).is_some() || INSPECTED.is_match(&b[fetched.start()..caps.get(0)?.end()]) {
        return None;
    }
    // "run the installer" runs what was fetched only when the fetched
    // phrase names an installer.
    if let Some(noun) = caps.get(2)
        && !has_word(what, &[&slice_lossy(hay, noun.range()).to_ascii_lowercase()], true)
    {
        return None;
    }
    let at = fetched.start();
    Some(place(what).map_or(fetched.range(), |p| at + p.start..at + p.end))
}

/// The first word of `what` that is an address (`get-tool.net/x`,
/// `10.0.0.5/x.sh`, `https://…`), trimmed of the punctuation around it:
/// with its scheme, or with a host that is an IP address or a name under
/// one of [`TLDS`] (not `Node.js`, not `e.g.`).
fn place(what: &str) -> Option<Range<usize>> {
    let mut at = 0;
    for word in what.split(' ') {
        let start = at;
        at += word.len() + 1;
        let trimmed = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/');
        let (scheme, address) = trimmed.split_once("://").map_or((false, trimmed), |(_, rest)| (true, rest));
        let host = address.split(['/', ':']).next().unwrap_or("");
        let named = host
            .rsplit_once('.')
            .is_some_and(|(name, tld)| !name.is_empty() && TLDS.iter().any(|t| t.eq_ignore_ascii_case(tld)));
        if named || scheme && !host.is_empty() || host.parse::<std::net::Ipv4Addr>().is_ok() {
            let offset = start + word.find(trimmed)?;
            return Some(offset..offset + trimmed.len());
        }
    }
    None
}

/// The top-level domains a bare address is read under (`BARE_ADDRESS`'s,
/// and the few more `FETCH_BARE_HOST` reads).
const TLDS: &[&str] = &[
    "com", "io", "net", "org", "dev", "app", "sh", "co", "xyz", "cc", "me", "ai", "site", "cloud", "tools",
    "run", "online", "info", "biz", "link",
];
