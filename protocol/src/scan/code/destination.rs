//! Where a secret goes in a network call (a header, the URL, the body)
//! and whether the call's hosts are ones the skill documents: what
//! `flow` grades a secret environment variable sent over the network by.

use std::sync::LazyLock;

use super::blocks::{self, CodeMap};
use super::sinks;
use crate::scan::engine::Body;
use crate::scan::rule::{Lazy, compile, contains_ci};

/// Hosts remembered as named in the prose or not, at most.
const MAX_HOSTS: usize = 64;

/// What the flow knows of hosts: variables assigned a literal URL with
/// its host, hosts already looked up in the prose, and the body's blocks.
pub(super) struct Known<'a> {
    pub(super) hosts: &'a [(String, String)],
    pub(super) named: &'a mut Vec<(String, bool)>,
    pub(super) map: &'a CodeMap,
}

/// Whether `view` uses the variable `name`; see [`occurrences`].
pub(super) fn mentions(view: &str, name: &str) -> bool {
    !name.is_empty() && !occurrences(view, name).is_empty()
}

/// A URL, and its host.
pub(super) static URL: Lazy = LazyLock::new(|| compile(r"https?://([a-z0-9.-]+)"));
/// Arguments that authenticate a request or a client rather than carry a
/// payload: `headers=`, `auth=`, `api_key=`, `apiKey:`, `-Headers`, and
/// the calls that set a request's credentials (`req.basic_auth(…)`,
/// `req.SetBasicAuth(…)`, `.bearer_auth(…)`: their whole argument list).
pub(super) static HEADER: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:headers|auth|api_?key|apikey|token|access_?token|auth_?token|password|credentials?|bearer)\s*[=:]\s*|-headers\s+@?|-credential\s+|\bauthorization["']?\s*[:=]\s*|\.(?:basic_auth|bearer_auth|set_?basic_?auth|with_basic_auth)\s*"#,
    )
});
/// Fields of an object or dict literal that authenticate the request it
/// is for: its headers.
pub(super) static HEADER_FIELD: Lazy = LazyLock::new(|| {
    compile(r#"\b(?:headers|auth)["']?\s*[=:]\s*|\bauthorization["']?\s*[:=]\s*|-headers\s+@?"#)
});
/// Arguments that are the URL or its query.
static QUERY: Lazy = LazyLock::new(|| compile(r"\bparams\s*=\s*|-uri\s+|\burl\s*[=:]\s*"));

/// The byte ranges of `view` after `re`'s matches, to the end of the
/// bracketed or bare argument there.
pub(super) fn regions(view: &str, re: &regex::bytes::Regex) -> Vec<std::ops::Range<usize>> {
    let b = view.as_bytes();
    re.find_iter(b)
        .map(|m| {
            let start = m.end();
            let mut depth = 0i32;
            let mut end = b.len();
            for (k, &c) in b.iter().enumerate().skip(start) {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => {
                        depth -= 1;
                        if depth <= 0 {
                            end = k + usize::from(depth == 0);
                            break;
                        }
                    }
                    b',' if depth == 0 => {
                        end = k;
                        break;
                    }
                    b' ' if depth == 0 && b.get(k + 1) == Some(&b'-') => {
                        end = k;
                        break;
                    }
                    _ => {}
                }
            }
            start..end
        })
        .collect()
}

/// Where in the call each reached variable is mentioned.
#[derive(Debug, PartialEq)]
pub(super) enum Position {
    /// Only in headers or `auth`.
    Header,
    /// In the URL or the query parameters.
    Url,
    /// In the body, or anywhere else.
    Body,
}

/// Where the secret goes in the call `view`: by the occurrences of
/// `names`, and the offset `read_at` where a source is read inside it.
pub(super) fn position(view: &str, names: &[&str], read_at: Option<usize>) -> Position {
    let headers = regions(view, &HEADER);
    let mut urls = regions(view, &QUERY);
    // The first argument of the network call is its URL.
    if let Some(call) = sinks::network(view) {
        let b = view.as_bytes();
        // Some calls' patterns take their `(` with them (`fetch(`).
        let open = if b[..call.end].ends_with(b"(") {
            Some(call.end - 1)
        } else {
            b[call.end..].iter().position(|&c| c == b'(').filter(|&k| k <= 2).map(|k| call.end + k)
        };
        if let Some(open) = open {
            let start = open + 1;
            let mut depth = 0i32;
            let mut end = b.len();
            for (k, &c) in b.iter().enumerate().skip(start) {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' if depth == 0 => {
                        end = k;
                        break;
                    }
                    b')' | b']' | b'}' => depth -= 1,
                    b',' if depth == 0 => {
                        end = k;
                        break;
                    }
                    _ => {}
                }
            }
            urls.push(start..end);
        }
    }
    let mut all_headers = true;
    let occurrences = names
        .iter()
        .flat_map(|name| occurrences(view, name).into_iter().map(move |at| (at, header_name(name))))
        .chain(read_at.map(|at| (at, false)));
    for (at, header) in occurrences {
        if urls.iter().any(|r| r.contains(&at)) {
            return Position::Url;
        }
        all_headers &= header || headers.iter().any(|r| r.contains(&at));
    }
    if all_headers { Position::Header } else { Position::Body }
}

/// Whether a variable's name says it holds a request's headers or
/// credentials (`fetch(u, { headers })`): passed whole, it authenticates.
fn header_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["headers", "header", "auth", "authorization"].contains(&n.as_str())
}

/// Where `view` uses the variable `name`: a whole word that is not a
/// keyword argument's name (`headers=` of `headers=headers`).
pub(super) fn occurrences(view: &str, name: &str) -> Vec<usize> {
    let b = view.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&b[from..], name.as_bytes()) {
        let at = from + k;
        let end = at + name.len();
        let rest = view[end..].trim_start().as_bytes();
        let keyword = rest.first() == Some(&b'=') && rest.get(1) != Some(&b'=');
        if (at == 0 || !word(b[at - 1])) && b.get(end).is_none_or(|&c| !word(c)) && !keyword {
            found.push(at);
        }
        from = at + 1;
    }
    found
}

/// Query parameters that carry a request's credential: how APIs that
/// take their key in the URL (`?appid=`, `&api_key=`) are called.
const AUTH_PARAMS: &[&str] = &[
    "appid",
    "app_id",
    "apikey",
    "api_key",
    "api-key",
    "key",
    "token",
    "api_token",
    "apitoken",
    "access_token",
    "auth",
    "auth_token",
];

/// Bytes between a query parameter's `=` and the value a string builds
/// into it: `${` of a template, `{` of an f-string, `" + ` of a
/// concatenation.
const VALUE_OPENERS: &[u8] = b"${+\"'` ";

/// Whether the value at `at` of the call's raw text is an
/// [`AUTH_PARAMS`] parameter's (`?appid=${key}`, `"&key=" + k`,
/// `{"api_key": k}`).
fn after_auth_param(raw: &[u8], at: usize) -> bool {
    let mut i = at.min(raw.len());
    let opened = raw[..i].iter().rev().take(8).take_while(|c| VALUE_OPENERS.contains(c)).count();
    i -= opened;
    if i == 0 || !matches!(raw[i - 1], b'=' | b':') {
        return false;
    }
    i -= 1;
    i -= raw[..i].iter().rev().take_while(|c| matches!(c, b' ' | b'"' | b'\'')).count();
    let name =
        raw[..i].iter().rev().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')).count();
    let before = raw[..i - name].last();
    name > 0
        && AUTH_PARAMS.iter().any(|p| p.as_bytes().eq_ignore_ascii_case(&raw[i - name..i]))
        && before.is_none_or(|c| matches!(c, b'?' | b'&' | b'"' | b'\'' | b'{' | b',' | b'(' | b' '))
}

/// Whether every place the call `view` (its raw text `raw`, offset for
/// offset) uses `names`, or reads a source at `read_at`, is the value of
/// a query parameter that authenticates the request: the key an API
/// takes in its URL, as others take it in a header.
pub(super) fn query_authenticates(view: &str, raw: &str, names: &[&str], read_at: Option<usize>) -> bool {
    let mut at = names.iter().flat_map(|name| occurrences(view, name)).chain(read_at).peekable();
    at.peek().is_some() && at.all(|at| after_auth_param(raw.as_bytes(), at))
}

/// Whether every host the call goes to is one the skill documents: named
/// in its prose, or by the environment variables the secret came from.
pub(super) fn documented(
    body: &Body<'_>,
    known: &mut Known<'_>,
    call_view: &str,
    call_raw: &str,
    env: &[String],
) -> bool {
    documented_by(body, known, call_view, call_raw, env, true)
}

/// [`documented`], by the environment variables' names alone (and
/// `localhost`) when `prose` is false: a stranger's host may be named in
/// the prose as easily as any.
pub(super) fn documented_by(
    body: &Body<'_>,
    known: &mut Known<'_>,
    call_view: &str,
    call_raw: &str,
    env: &[String],
    prose: bool,
) -> bool {
    let mut hosts: Vec<String> = URL
        .captures_iter(call_raw.as_bytes())
        .filter_map(|c| c.get(1))
        .map(|m| String::from_utf8_lossy(m.as_bytes()).to_ascii_lowercase())
        .collect();
    for (name, host) in known.hosts {
        if mentions(call_view, name) {
            hosts.push(host.clone());
        }
    }
    if hosts.is_empty() {
        return false;
    }
    hosts.iter().all(|host| {
        let local = host == "localhost" || host.starts_with("127.");
        let named = prose
            && match known.named.iter().find(|(h, _)| h == host) {
                Some(&(_, named)) => named,
                None => {
                    let named = named_in_prose(body.text, known.map, host);
                    if known.named.len() >= MAX_HOSTS {
                        known.named.remove(0);
                    }
                    known.named.push((host.clone(), named));
                    named
                }
            };
        let labels: Vec<&str> =
            host.split('.').filter(|l| l.len() >= 3 && !GENERIC_LABELS.contains(l)).collect();
        let owned = env.iter().any(|e| {
            e.to_ascii_lowercase()
                .split('_')
                .filter(|w| w.len() >= 3 && !GENERIC_LABELS.contains(w))
                .any(|w| labels.iter().any(|l| l.contains(w)))
        });
        local || owned || named
    })
}

/// Host labels and name parts that say nothing about whose API it is.
const GENERIC_LABELS: &[&str] = &[
    "www",
    "api",
    "com",
    "org",
    "net",
    "dev",
    "app",
    "example",
    "test",
    "cloud",
    "token",
    "secret",
    "key",
    "access",
    "password",
    "auth",
    "private",
    "session",
    "cookie",
    "credential",
    "credentials",
];

/// Whether `host` is named in the prose of `text`: outside fenced blocks
/// and inline code, where a skill says which service it talks to.
fn named_in_prose(text: &str, map: &CodeMap, host: &str) -> bool {
    // Most hosts of a flow appear in its code only: one search says so.
    if !contains_ci(text.as_bytes(), host.as_bytes()) {
        return false;
    }
    text.split('\n').enumerate().any(|(i, line)| {
        if map.is_code(i) || !contains_ci(line.as_bytes(), host.as_bytes()) {
            return false;
        }
        let mut prose = line.to_string();
        for span in blocks::inline_spans(line) {
            prose = prose.replacen(span, "", 1);
        }
        contains_ci(prose.as_bytes(), host.as_bytes())
    })
}

#[cfg(test)]
#[path = "destination_tests.rs"]
mod sweep_tests;
