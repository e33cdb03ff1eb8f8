//! String building folded (`code.folded-string`): code that assembles a
//! command or a URL at run time from pieces no rule reads — literals
//! joined with `+` or `.join`, char-code lists (`"".join(map(chr, […]))`,
//! `String.fromCharCode(…)`), `.replace(…)` chains on literals, a literal
//! reversed (`[::-1]`), defanged URLs (`hxxps://x[.]y`), `cmd` carets
//! (`p^o^w^e^r^s^h^e^l^l`), PowerShell's format operator on literals
//! (`"{1}{0}" -f 'x','ie'`) and commands it finds at run time rather than
//! naming them (`&(gal i?x)`, letters picked from `$env:ComSpec`) and
//! variables holding such literals — is
//! written out as the program would build it and scanned again.
//!
//! Python, JavaScript, PowerShell and other non-shell fenced blocks (shell
//! words are `shell_words`'); the block is scanned again as built (a
//! decoded value is then seen used where the block uses it), and only
//! the findings on lines folding changed are reported, so that an
//! unchanged line is never reported twice.

use std::sync::LazyLock;

use regex::bytes::{Captures, Regex};

use super::blocks::{Block, Lang};
use super::rescan;
use crate::scan::engine::{Body, LineRef};
use crate::scan::rule::{Lazy, compile, contains_ci};
use crate::scan::{Finding, Severity};

/// A URL in the block (`://`, which a defanged `hxxps://` keeps), a
/// char-code call or a decoder (pieces joined, then decoded: `b64decode(""
/// .join(parts))`) wakes the analysis: keys the prefilter table has, which
/// has no room for more; a slice reversing a literal (`[::-1]`) too. A
/// block holding only a reversed URL (`//:sptth`) and no other trigger is
/// not folded.
pub(super) const TRIGGERS: &[&str] = &[
    "://",
    "fromcharcode",
    "chr(",
    "b64decode",
    "b32decode",
    "atob",
    "frombase64string",
    "fromhex",
    "unhexlify",
    // Node's decoder of a joined array; a literal reversed by a slice.
    "buffer.from",
    "[::-1]",
];

/// Bytes of a line folded, at most.
const MAX_LINE: usize = 4096;
/// Lines of a block folded, at most.
const MAX_BLOCK_LINES: usize = 200;
/// Folding rounds per line, at most (each may join two literals).
const MAX_ROUNDS: usize = 64;
/// Literal variables remembered per block, at most.
const MAX_VARS: usize = 64;

/// Markers of string building, literals only so that the regex engine
/// searches them together in one pass: a block without any is not folded.
static MARKERS: Lazy = LazyLock::new(|| {
    compile(
        r#"'\+|' \+|"\+|" \+|chr\(|fromcharcode|\.join\(|-join|\.replace\(|\[::-1\]|\.reverse\(|hxxp|\[\.\]|\^|gal |gcm |get-alias|get-command|comspec\[|pshome\[|shellid\[|" -f|' -f|"-f|'-f"#,
    )
});

const LIT: &str = r#"(?:"[^"\\\n]*"|'[^'\\\n]*')"#;

static CHR_LIST: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:""|'')\s*\.\s*join\(\s*map\(\s*chr\s*,\s*[\[(]([\d\s,]+)[\])]\s*\)\s*\)|string\.fromcharcode\(\s*([\d\s,]+)\)"#,
    )
});
static ARRAY_JOIN: Lazy = LazyLock::new(|| {
    compile(&format!(
        r"\[((?:\s*{LIT}\s*,)*\s*{LIT}\s*,?\s*)\]\s*\.\s*join\(\s*({LIT})?\s*\)|(?:{LIT})\s*\.\s*join\(\s*\[((?:\s*{LIT}\s*,)*\s*{LIT}\s*,?\s*)\]\s*\)"
    ))
});
static CONCAT: Lazy = LazyLock::new(|| compile(&format!(r"({LIT})\s*\+\s*({LIT})")));
static REPLACE: Lazy =
    LazyLock::new(|| compile(&format!(r"({LIT})\s*\.\s*replace\(\s*({LIT})\s*,\s*({LIT})\s*\)")));
static REVERSED: Lazy = LazyLock::new(|| {
    compile(&format!(
        r#"({LIT})\s*\[\s*::\s*-1\s*\]|({LIT})\s*\.\s*split\(\s*(?:""|'')\s*\)\s*\.\s*reverse\(\s*\)\s*\.\s*join\(\s*(?:""|'')\s*\)"#
    ))
});
/// An array of literals, the value a variable may hold until it is joined.
static ARRAY: Lazy = LazyLock::new(|| compile(&format!(r"^\[(?:\s*{LIT}\s*,)*\s*{LIT}\s*,?\s*\]$")));
static LITERAL: Lazy = LazyLock::new(|| compile(LIT));
static ASSIGN: Lazy =
    LazyLock::new(|| compile(r"^\s*(?:(?:const|let|var|final)\s+)?(\$?[a-z_]\w*)\s*=\s*(.+?)\s*;?\s*$"));
/// A PowerShell program or member named by a literal: `& 'New-Object'`,
/// `.('DownloadString')`, `.'DownloadString'`.
static NAMED_BY_LITERAL: Lazy =
    LazyLock::new(|| compile(r#"(&\s*|\.\s*\(?\s*|\(\s*)["']([a-z][\w.-]*)["']\s*\)?"#));
/// PowerShell's format operator on literals: `("{1}{0}" -f 'x','ie')`.
/// Group 1 is the format, 2 the arguments.
static FORMAT: Lazy = LazyLock::new(|| compile(&format!(r"({LIT})\s*-f\s*((?:{LIT}\s*,\s*){{0,15}}{LIT})")));
static CARETS: Lazy = LazyLock::new(|| compile(r"[a-z0-9](?:\^[a-z0-9]){2,}"));

/// A PowerShell command found by a wildcard at run time, so that its name
/// is never written: `&(gal i?x)`, `.(gcm *ke-ex*)`. Group 1 is the
/// pattern.
static COMMAND_LOOKUP: Lazy = LazyLock::new(|| {
    compile(r#"\(\s*(?:gal|get-alias|gcm|get-command)\s+(?:-name\s+)?["']?([\w*?-]{1,40})["']?\s*\)"#)
});
/// The commands a lookup is resolved against, the ones worth hiding first.
const HIDDEN_COMMANDS: &[&str] = &[
    "iex",
    "invoke-expression",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "start-process",
    "invoke-command",
    "new-object",
];
/// Characters picked from a PowerShell variable whose value every
/// Windows machine shares: `$env:ComSpec[4,15,25]-join''` is `Iex`.
/// Group 1 is the variable, 2 the indexes.
static PICKED_CHARS: Lazy = LazyLock::new(|| {
    compile(
        r#"\$(env:comspec|pshome|shellid|verbosepreference)\s*\[\s*(\d{1,3}(?:\s*,\s*\d{1,3}){0,15})\s*\](?:\s*-join\s*(?:''|""))?"#,
    )
});
/// The values [`PICKED_CHARS`] picks from.
const KNOWN_VALUES: &[(&str, &str)] = &[
    ("env:comspec", "C:\\WINDOWS\\system32\\cmd.exe"),
    ("pshome", "C:\\Windows\\System32\\WindowsPowerShell\\v1.0"),
    ("shellid", "Microsoft.PowerShell"),
    ("verbosepreference", "SilentlyContinue"),
];

/// Whether PowerShell's wildcard `pattern` (`*` any run, `?` one
/// character, lower case) matches `name`: a table of prefixes matched,
/// so that a hostile pattern of many `*` costs its length times the
/// name's, never a search of every split.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    // `matched[j]`: the pattern read so far matches `name[..j]`.
    let mut matched = vec![false; name.len() + 1];
    matched[0] = true;
    for &p in pattern {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            next[j] = match p {
                b'*' => matched[j] || j > 0 && next[j - 1],
                b'?' => j > 0 && matched[j - 1],
                c => j > 0 && matched[j - 1] && name[j - 1] == c,
            };
        }
        matched = next;
    }
    matched[name.len()]
}

/// PowerShell commands named at run time written as literals: a wildcard
/// lookup as the first command it finds, characters picked from a known
/// variable as the text they spell; `NAMED_BY_LITERAL` then reads them as
/// the command.
fn resolve_hidden_names(s: &str) -> String {
    let b = s.as_bytes();
    let looked_up = |c: &Captures<'_>| {
        let pattern = c[1].to_ascii_lowercase();
        match HIDDEN_COMMANDS.iter().find(|n| wildcard(&pattern, n.as_bytes())) {
            Some(n) => format!("\"{n}\"").into_bytes(),
            None => c[0].to_vec(),
        }
    };
    let s = utf8(COMMAND_LOOKUP.replace_all(b, looked_up).into_owned());
    let picked = |c: &Captures<'_>| {
        let name = String::from_utf8_lossy(&c[1]).to_ascii_lowercase();
        let value = KNOWN_VALUES.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| v);
        let text: Option<String> = String::from_utf8_lossy(&c[2])
            .split(',')
            .map(|k| k.trim().parse::<usize>().ok().and_then(|k| value.chars().nth(k)))
            .collect();
        match text {
            Some(t) => quote(&t).into_bytes(),
            None => c[0].to_vec(),
        }
    };
    utf8(PICKED_CHARS.replace_all(s.as_bytes(), picked).into_owned())
}

/// Folds the non-shell blocks holding a triggered line.
pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut done: Option<usize> = None;
    let mut seen = rescan::ByLine::default();
    for &r in lines {
        let map = body.code_map();
        let Some(block) = map.block_at(r.index) else {
            continue;
        };
        if block.lang == Lang::Shell || done == Some(block.first) {
            continue;
        }
        done = Some(block.first);
        let first = body.line_before(r, r.index - block.first);
        fold_block(body, block, first, out, &mut seen);
    }
}

fn fold_block(
    body: &Body<'_>,
    block: &Block,
    first: LineRef,
    out: &mut Vec<Finding>,
    seen: &mut rescan::ByLine,
) {
    let text = &body.text[block.bytes.clone()];
    if !MARKERS.is_match(text.as_bytes()) {
        return;
    }
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut arrays: Vec<(String, String)> = Vec::new();
    // Every line of the block as the program builds it, and which changed.
    let mut all: Vec<(LineRef, String, bool)> = Vec::new();
    for (r, line) in body.lines_from(first).take(MAX_BLOCK_LINES.min(block.end - block.first)) {
        let folded = fold_line_with(line, &vars, &arrays, block.lang);
        if let Some(c) = ASSIGN.captures(folded.as_bytes()) {
            // A literal is remembered unquoted, an array of literals as
            // written (`[…]`), so that joining it later folds.
            let value = single_literal(&c[2]).map(|v| (v, false)).or_else(|| {
                let v = c[2].strip_suffix(b";").unwrap_or(&c[2]).trim_ascii();
                ARRAY.is_match(v).then(|| (String::from_utf8_lossy(v).into_owned(), true))
            });
            if let Some((v, array)) = value {
                let list = if array { &mut arrays } else { &mut vars };
                if list.len() >= MAX_VARS {
                    list.remove(0);
                }
                list.push((String::from_utf8_lossy(&c[1]).into_owned(), v));
            }
        }
        let changed = folded != line;
        all.push((r, folded, changed));
    }
    if !all.iter().any(|(_, _, changed)| *changed) {
        return;
    }
    let fence = match block.lang {
        Lang::Python => "python",
        Lang::JavaScript => "javascript",
        Lang::PowerShell => "powershell",
        _ => "",
    };
    // The whole block is scanned again, so that a decoded value is seen
    // used where the block uses it; only the changed lines are reported,
    // so that an unchanged line is never reported twice.
    let mut again = format!("```{fence}\n");
    for (_, l, _) in &all {
        again.push_str(l);
        again.push('\n');
    }
    again.push_str("```\n");
    let Some(inner) = rescan::scan(&again) else {
        return;
    };
    for (k, (r, line, _)) in all.iter().enumerate().filter(|(_, (_, _, changed))| *changed) {
        // Line 1 is the fence.
        let found: Vec<Finding> = inner.iter().filter(|f| f.line == k + 2).cloned().collect();
        let from = out.len();
        rescan::report("code.folded-string", &found, Severity::High, false, *r, out, seen);
        // A block shown under a warning is lowered as the plain code would
        // be (the whole line: `explained` cuts the range to the line as
        // written).
        for f in &mut out[from..] {
            f.severity = body.unless_explained(f.severity, *r, 0..line.len());
        }
    }
}

/// The value of `expr` when it is one string literal.
fn single_literal(expr: &[u8]) -> Option<String> {
    let m = LITERAL.find(expr)?;
    (m.start() == 0 && m.end() == expr.len()).then(|| unquote(m.as_bytes()))
}

fn unquote(lit: &[u8]) -> String {
    String::from_utf8_lossy(&lit[1..lit.len() - 1]).into_owned()
}

/// A literal for `s`, in the quotes it does not hold.
fn quote(s: &str) -> String {
    if s.contains('"') { format!("'{s}'") } else { format!("\"{s}\"") }
}

/// `line` with its string building done, as far as the text tells.
#[cfg(test)]
pub(super) fn fold_line(line: &str, vars: &[(String, String)], lang: Lang) -> String {
    fold_line_with(line, vars, &[], lang)
}

/// [`fold_line`] with variables that hold arrays of literals too (`[…]` as
/// written), so that joining one folds.
fn fold_line_with(line: &str, vars: &[(String, String)], arrays: &[(String, String)], lang: Lang) -> String {
    if line.len() > MAX_LINE {
        return line.to_string();
    }
    let mut s = line.to_string();
    // Variables first, so that `x + '…'` folds once `x` is known.
    for (name, value) in vars {
        s = substitute(&s, name, &quote(value));
    }
    for (name, value) in arrays {
        s = substitute(&s, name, value);
    }
    if lang == Lang::PowerShell || lang == Lang::Other {
        s = resolve_hidden_names(&s);
    }
    for _ in 0..MAX_ROUNDS {
        let next = replace_once(&CHR_LIST, &s, |c| {
            let digits = c.get(1).or_else(|| c.get(2)).map_or(&b""[..], |m| m.as_bytes());
            let text: String = String::from_utf8_lossy(digits)
                .split(',')
                .filter_map(|n| n.trim().parse::<u32>().ok())
                .filter_map(char::from_u32)
                .collect();
            Some(quote(&text))
        })
        .or_else(|| {
            replace_once(&ARRAY_JOIN, &s, |c| {
                let items = c.get(1).or_else(|| c.get(3))?.as_bytes();
                let sep = match (c.get(2), c.get(1)) {
                    (Some(sep), _) => unquote(sep.as_bytes()),
                    // `[…].join()` joins with commas in JavaScript.
                    (None, Some(_)) => ",".to_string(),
                    // `'sep'.join([…])` in Python: the separator leads.
                    (None, None) => {
                        let whole = c.get(0)?.as_bytes();
                        LITERAL.find(whole).map(|m| unquote(m.as_bytes()))?
                    }
                };
                let parts: Vec<String> = LITERAL.find_iter(items).map(|m| unquote(m.as_bytes())).collect();
                Some(quote(&parts.join(&sep)))
            })
        })
        .or_else(|| replace_once(&CONCAT, &s, |c| Some(quote(&(unquote(&c[1]) + &unquote(&c[2]))))))
        .or_else(|| {
            if lang != Lang::PowerShell && lang != Lang::Other {
                return None;
            }
            replace_once(&FORMAT, &s, |c| {
                let args: Vec<String> = LITERAL.find_iter(&c[2]).map(|m| unquote(m.as_bytes())).collect();
                let mut text = unquote(&c[1]);
                for (k, a) in args.iter().enumerate() {
                    text = text.replace(&format!("{{{k}}}"), a);
                }
                Some(quote(&text))
            })
        })
        .or_else(|| {
            replace_once(&REPLACE, &s, |c| {
                let (from, to) = (unquote(&c[2]), unquote(&c[3]));
                (!from.is_empty()).then(|| quote(&unquote(&c[1]).replace(&from, &to)))
            })
        })
        .or_else(|| {
            replace_once(&REVERSED, &s, |c| {
                let lit = c.get(1).or_else(|| c.get(2))?.as_bytes();
                Some(quote(&unquote(lit).chars().rev().collect::<String>()))
            })
        });
        match next {
            // A fold replaces syntax by a literal, so the text changes;
            // `n != s` only guards against a round that would not.
            Some(n) if n.len() <= MAX_LINE && n != s => s = n,
            _ => break,
        }
    }
    if contains_ci(s.as_bytes(), b"hxxp") || s.contains("[.]") {
        s = refang(&s);
    }
    if lang != Lang::Python && lang != Lang::JavaScript && s.contains('^') && CARETS.is_match(s.as_bytes()) {
        let caretless = |c: &Captures<'_>| c[0].iter().copied().filter(|&b| b != b'^').collect::<Vec<u8>>();
        s = utf8(CARETS.replace_all(s.as_bytes(), caretless).into_owned());
    }
    if lang == Lang::PowerShell || lang == Lang::Other {
        let named = |c: &Captures<'_>| {
            let mut o = c[1].iter().copied().filter(|b| !matches!(b, b'(' | b' ')).collect::<Vec<u8>>();
            if o.is_empty() {
                o.push(b' ');
            }
            o.extend_from_slice(&c[2]);
            o
        };
        s = utf8(NAMED_BY_LITERAL.replace_all(s.as_bytes(), named).into_owned());
    }
    s
}

/// The first match of `re` in `s` replaced by `f`'s text, if `f` gives one.
fn replace_once(re: &Regex, s: &str, f: impl Fn(&Captures<'_>) -> Option<String>) -> Option<String> {
    let c = re.captures(s.as_bytes())?;
    let m = c.get(0)?;
    let text = f(&c)?;
    Some(format!("{}{}{}", &s[..m.start()], text, &s[m.end()..]))
}

/// `name` (a whole word, or `$name`) outside the place it is assigned,
/// written as its value (code: a literal or an array). A `$name` after a
/// dot is PowerShell's member named by a variable (`$w.$f(…)`).
fn substitute(s: &str, name: &str, value: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while let Some(k) = s[i..].find(name) {
        let at = i + k;
        let end = at + name.len();
        let bounded = (at == 0
            || !word(b[at - 1])
                && (b[at - 1] != b'.' || name.starts_with('$'))
                && (name.starts_with('$') || b[at - 1] != b'$'))
            && (end == b.len() || !word(b[end]));
        let assigned = s[end..].trim_start().starts_with('=') && !s[end..].trim_start().starts_with("==");
        out.push_str(&s[i..at]);
        if bounded && !assigned {
            out.push_str(value);
        } else {
            out.push_str(name);
        }
        i = end;
    }
    out.push_str(&s[i..]);
    out
}

/// `hxxps://x[.]y` as `https://x.y`.
fn refang(s: &str) -> String {
    let mut o = s.replace("[.]", ".");
    for (from, to) in
        [("hxxp", "http"), ("hXXp", "http"), ("HXXP", "HTTP"), ("hXxp", "http"), ("hxXp", "http")]
    {
        o = o.replace(from, to);
    }
    o
}

/// Only ASCII bytes were removed or moved, so the text stays UTF-8.
fn utf8(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod sweep_tests;
