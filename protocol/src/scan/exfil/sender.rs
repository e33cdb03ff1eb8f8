//! The senders (`exfil.secret-file`, `exfil.env-dump`,
//! `exfil.secret-variable` and `exfil.dns-lookup` from analyzers): every
//! command that talks to the network, looked at for a secret payload — a
//! secret file, the whole environment, a secret variable outside an auth
//! header, or a variable or file filled from a secret earlier in the
//! skill — and every name looked up whose first label carries one.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{
    ANY_SECRET, ENV_DUMP, ENV_DUMP_PATTERN, LESSER_PATHS, SECRET, SECRET_PATHS, SECRET_VAR_PATTERN,
    TOOL_SECRET_FILES,
};
use crate::scan::engine::{Analyzer, Body, LineRef, finding};
use crate::scan::rule::{AnyCi, Lazy, compile, contains_ci};
use crate::scan::{Category, Finding, Severity};

const SENDER_TRIGGERS: &[&str] = &[
    "curl",
    "wget",
    "nc ",
    "ncat",
    "netcat",
    "socat",
    "scp",
    "rsync",
    "sftp",
    "rclone",
    "ftp",
    "tftp",
    "telnet",
    "xh ",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    "sendmail",
    "mutt",
    "requests.post",
    "requests.put",
    "requests.patch",
    "requests.get",
    "urllib",
    "urlopen",
    "*tpx.",
    "fetch(",
    "fetch (",
    "axios.",
    "net.webclient",
    ".upload*",
    "/dev/tcp/",
];

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![
        Analyzer { triggers: SENDER_TRIGGERS, run: secret_to_network },
        Analyzer {
            triggers: &["host ", "dig ", "nslookup", "drill ", "ping ", "getent", "resolve-dnsname"],
            run: dns_label,
        },
        Analyzer {
            triggers: &["process.env", "os.environ", "tojson(secrets", "tojson( secrets"],
            run: environment_near_network,
        },
    ]
}

/// Network calls in code, for [`environment_near_network`]. `fetch(` stands
/// outside the group: a `\b` after its `(` would miss `fetch("…")`.
static NETWORK_CODE: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:https?\.(?:request|get|post)|axios|requests\.(?:post|put|patch|get)|urllib|urlopen|httpx|net\.webclient|invoke-(?:webrequest|restmethod)|curl|wget|xmlhttprequest|sendbeacon|websocket|smtplib|sendmail)\b|\bfetch\s*\(|\bsocket\.(?:connect|send)",
    )
});

/// How many lines around a dump of the environment are searched for the
/// network call that ships it.
pub(super) const ENVIRONMENT_WINDOW_LINES: usize = 15;

/// Code that serialises the whole environment (`JSON.stringify(process.env)`)
/// next to code that talks to the network: the request and the payload are
/// often a few lines apart, so a single line never shows both.
fn environment_near_network(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let Some(m) = ENV_DUMP.find(line.as_bytes()) else {
            continue;
        };
        let first = body.line_before(l, ENVIRONMENT_WINDOW_LINES);
        let near = body
            .lines_from(first)
            .take(2 * ENVIRONMENT_WINDOW_LINES + 1)
            .any(|(_, other)| NETWORK_CODE.is_match(other.as_bytes()));
        if near {
            out.push(finding(
                "exfil.env-dump",
                Category::Exfiltration,
                Severity::Critical,
                l,
                line,
                m.start(),
            ));
        }
    }
}

/// A variable whose name says it holds a secret.
static SECRET_VAR: Lazy = LazyLock::new(|| compile(SECRET_VAR_PATTERN));

/// Arguments that authenticate the request rather than carry its payload;
/// the common `-H`/`-u` forms are removed by [`strip_auth_args`] first.
static AUTH_ARGS: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:-H|--header|-u|--user|--oauth2-bearer)\s*=?\s*(?:"[^"]*"|'[^']*'|\S+)|\s-i\s+\S+|--(?:netrc-file|config)[= ]\S+|--(?:cert|key|cacert)[= ]\S+|\s-e\s+(?:"ssh[^"]*"|'ssh[^']*')|\b(?:headers|auth)\s*=\s*(?:\{[^}]*\}|\([^)]*\))"#,
    )
});

/// `history` (or `fc -l`) piped on: the commands typed in the shell.
static HISTORY_PIPED: Lazy =
    LazyLock::new(|| compile(r"(?:^|[\s(;&`])(?:history|fc\s+-l\w*)(?:\s+-?\w+)*\s*\|"));

/// Anything a sender could leak: one test before the detailed ones.
static PAYLOAD: Lazy = LazyLock::new(|| {
    compile(&format!(
        "{SECRET_PATHS}|{LESSER_PATHS}|{TOOL_SECRET_FILES}|{ENV_DUMP_PATTERN}|{SECRET_VAR_PATTERN}"
    ))
});
/// A secret or the environment, read on an earlier line.
static SOURCE: Lazy = LazyLock::new(|| {
    compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}|{TOOL_SECRET_FILES}|{ENV_DUMP_PATTERN}|{STORE_READ}"))
});

/// Commands that print a secret from a store rather than a file: a
/// keychain, a CLI's login token (a registry's login password, the
/// header a CI checkout authenticates with), a password manager, a
/// cluster's secrets, the clipboard; or
/// a search for key files by name (`find ~ -name "id_*"`). Put
/// in a variable that a later command sends, they are the payload.
const STORE_READ: &str = r#"\baws\s+(?:ecr|ecr-public)\s+get-login-password\b|\baws\s+codeartifact\s+get-authorization-token\b|\b(?:gh|glab)\s+auth\s+status\b[^\n|;&]*(?:--show-token|\s-t\b)|\bgit\s+config\b[^\n|;&]*\bextraheader\b|\bnpm\s+config\s+get\s+\S*_auth(?:token)?\b|\bkubectl\s+(?:-\S+\s+)*create\s+token\b|\bpass\s+show\b|\bvault\s+read\b|\bfind-(?:generic|internet)-password\b[^\n|;&]*\s-w|\bdump-keychain\b|\bsecret-tool\s+lookup\b|\bgh\s+auth\s+token\b|\bgcloud\s+auth\s+(?:application-default\s+)?print-access-token\b|\baz\s+account\s+get-access-token\b|\baws\s+configure\s+get\s+\S*secret|\bop\s+read\b|\bvault\s+kv\s+get\b|\bpbpaste\b|\bwl-paste\b|\bxclip\b[^\n|;]*\s-o\b|\bkubectl\s+(?:-\S+\s+)*get\s+secrets?\b[^\n|;&]*\s-o\s*=?\s*(?:json|yaml|jsonpath|go-template)|\bkubectl\s+config\s+view\b[^\n|;&]*--raw\b|\baws\s+secretsmanager\s+get-secret-value\b|\baws\s+ssm\s+get-parameters?\b[^\n|;&]*--with-decryption\b|\bgcloud\s+secrets\s+versions\s+access\b|\baz\s+keyvault\s+secret\s+show\b|\bdocker-credential-\w+\s+get\b|\bfind\b[^\n|;&]*-i?name\s+["']?(?:id_\*|\*\.(?:pem|key|p12|pfx|kdbx|ppk|ovpn|jks|keystore))|\bgit\s+credential\s+fill\b|\baws\s+configure\s+export-credentials\b|\bgpg\b[^\n|;&]*--export-secret-(?:sub)?keys\b|\bheroku\s+auth:token\b|\bgcloud\s+auth\s+print-identity-token\b|\b(?:bw\s+get\s+(?:password|item)|lpass\s+show|gopass\s+show)\b"#;

/// A store read in the command itself: its output piped into the sender
/// (`gh auth status --show-token 2>&1 | nc …`) or substituted into it.
static STORE: Lazy = LazyLock::new(|| compile(STORE_READ));

/// What a command refers to that an earlier line may have filled: `$NAME`,
/// `${NAME}`, files after `@`, `<`, `=`, `-T`, and the first file a copy
/// to another machine takes (`scp`, `rsync`, `rclone copy`).
static REFERENCE: Lazy = LazyLock::new(|| {
    compile(
        r#"\$\{?([a-z_][a-z0-9_]*)\}?|(?:@|<\s*|--post-file=|--upload-file\s+|-T\s+)["']?([^\s"'|;&)]{4,})|\b(?:scp|rsync|rclone\s+(?:copy|copyto|sync|move))\s+(?:-\S+\s+)*["']?([^\s"'|;&)]{4,})"#,
    )
});

const MAX_JOINED: usize = 12;
/// How far back a variable or file may have been filled with a secret.
pub(super) const TAINT_LOOKBACK_LINES: usize = 100;

/// The command starting on `l`, with `\`-continued lines joined, and the
/// lines it covers.
fn logical(body: &Body<'_>, l: LineRef) -> (String, Vec<(LineRef, usize)>) {
    let mut text = String::new();
    let mut parts = Vec::new();
    for (r, line) in body.lines_from(l).take(MAX_JOINED) {
        parts.push((r, text.len()));
        match line.strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                text.push(' ');
            }
            None => {
                text.push_str(line);
                break;
            }
        }
    }
    (text, parts)
}

/// The first line of the command `l` is part of: the lines above it
/// that end with `\` continue onto it.
fn command_start(body: &Body<'_>, l: LineRef) -> LineRef {
    let mut start = l;
    for _ in 0..MAX_JOINED {
        if start.index == 0 {
            break;
        }
        let previous = body.line_before(start, 1);
        if !body.line(previous).ends_with('\\') {
            break;
        }
        start = previous;
    }
    start
}

/// The line of `parts` holding byte `at` of the joined command.
fn line_at(parts: &[(LineRef, usize)], at: usize) -> LineRef {
    parts.iter().rev().find(|(_, off)| *off <= at).map_or(parts[0].0, |(r, _)| *r)
}

/// Without these a command cannot carry a payload to the network: a file
/// argument, a variable, a redirection, an environment object, or a pipe
/// into the command (`cat x | curl …`; a pipe after it only carries the
/// response away). Header and credential arguments are not looked at:
/// `payload` is the command after [`strip_auth_args`].
fn may_carry_payload(payload: &[u8]) -> bool {
    // A `|` before the first sender word. No sender word holds a `|`, so
    // that is: the text before the first `|` holds no sender word.
    let piped_in = memchr::memchr(b'|', payload).is_some_and(|pipe| {
        let head = &payload[..pipe];
        !SENDER_WORDS.iter().any(|w| contains_ci(head, w.as_bytes()))
    });
    piped_in
        || memchr::memchr3(b'@', b'<', b'$', payload).is_some()
        || memchr::memchr(b'`', payload).is_some()
        // Grouped by a part they share, so that a command holding none of
        // them (the common case) costs four searches rather than six.
        || contains_ci(payload, b"env")
            && (contains_ci(payload, b"environ") || contains_ci(payload, b"process.env"))
        || contains_ci(payload, b"-file")
            && (contains_ci(payload, b"--post-file") || contains_ci(payload, b"upload-file"))
        || COPIERS.any_in(payload)
        || memchr::memchr(b'(', payload).is_some() && contains_ci(payload, b"open(")
}

/// The words of senders that a pipe may feed.
const SENDER_WORDS: &[&str] =
    &["curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "sendmail", "mutt", "http"];

/// curl's `-T` (a file uploaded) and commands that copy files to another host.
static COPIERS: AnyCi = AnyCi::new(&["-t ", "scp ", "rsync ", "rclone "]);

/// `cmd` without `-H`/`--header`/`-u`/`--user` arguments, by hand: the
/// common case (a token in an `Authorization` header) needs no regex.
/// A short flag's value may be attached (`-uadmin:$TOKEN`), as curl's
/// getopt-style parser reads it; a long flag's follows a blank or `=`.
pub(super) fn strip_auth_args(cmd: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const FLAGS: &[&[u8]] = &[b"-H", b"--header", b"-u", b"--user", b"--oauth2-bearer"];
    let flag_at = |i: usize| {
        let after_blank = i == 0 || cmd[i - 1].is_ascii_whitespace();
        FLAGS
            .iter()
            .find(|f| {
                let short = f.len() == 2;
                after_blank
                    && cmd[i..].starts_with(f)
                    && cmd.get(i + f.len()).is_some_and(|b| short || b.is_ascii_whitespace() || *b == b'=')
            })
            .map(|f| f.len())
    };
    let mut out: Option<Vec<u8>> = None;
    // `cmd[..done]` is copied to `out` or skipped.
    let mut done = 0;
    for i in memchr::memchr_iter(b'-', cmd) {
        if i < done {
            continue;
        }
        let Some(len) = flag_at(i) else {
            continue;
        };
        let kept = out.get_or_insert_with(|| Vec::with_capacity(cmd.len()));
        kept.extend_from_slice(&cmd[done..i]);
        let mut j = i + len;
        while cmd.get(j).is_some_and(|b| b.is_ascii_whitespace() || *b == b'=') {
            j += 1;
        }
        // Skip one shell word, quoted or bare.
        match cmd.get(j) {
            Some(&q @ (b'"' | b'\'')) => {
                j += 1;
                // To the closing quote, stepping over escaped characters.
                while let Some(k) = cmd.get(j..).and_then(|rest| memchr::memchr2(q, b'\\', rest)) {
                    j += k;
                    if cmd[j] == q {
                        break;
                    }
                    j += 2;
                }
                j = if j < cmd.len() && cmd[j] == q { j + 1 } else { cmd.len() + 1 };
            }
            _ => {
                while cmd.get(j).is_some_and(|b| !b.is_ascii_whitespace()) {
                    j += 1;
                }
            }
        }
        kept.push(b' ');
        done = j.min(cmd.len());
    }
    match out {
        None => std::borrow::Cow::Borrowed(cmd),
        Some(mut kept) => {
            kept.extend_from_slice(&cmd[done..]);
            std::borrow::Cow::Owned(kept)
        }
    }
}

/// A variable or file of `payload` that an earlier line filled from a
/// secret (`K=$(cat ~/.ssh/id_rsa)`, `tar czf /tmp/k.tgz ~/.ssh`).
fn tainted_reference(body: &Body<'_>, before: LineRef, payload: &[u8]) -> Option<String> {
    filled_from(body, before, payload, &SOURCE)
}

/// What `payload` refers to that an earlier line filled from `source`.
fn filled_from(body: &Body<'_>, before: LineRef, payload: &[u8], source: &Regex) -> Option<String> {
    let refs: Vec<(bool, String)> = REFERENCE
        .captures_iter(payload)
        .filter_map(|c| {
            c.get(1).map(|v| (true, String::from_utf8_lossy(v.as_bytes()).into_owned())).or_else(|| {
                c.get(2)
                    .or_else(|| c.get(3))
                    .map(|p| (false, String::from_utf8_lossy(p.as_bytes()).into_owned()))
            })
        })
        .collect();
    if refs.is_empty() {
        return None;
    }
    // What to look for on earlier lines: `NAME=` for a variable, the path
    // for a file; a substring search first, the tokenising check after.
    let needles: Vec<(bool, &str, String)> = refs
        .iter()
        .map(|(is_var, name)| {
            (*is_var, name.as_str(), if *is_var { format!("{name}=") } else { name.clone() })
        })
        .collect();
    let first = body.line_before(before, TAINT_LOOKBACK_LINES);
    for (_, line) in body.lines_from(first).take(before.index - first.index) {
        for (is_var, name, needle) in &needles {
            // A loop's variable takes each word of its list in turn:
            // `for k in ~/.ssh/id_*; do … @$k`.
            let looped = *is_var && loops_over(line, name);
            if !looped && !line.contains(needle.as_str()) {
                continue;
            }
            let found = !*is_var
                || looped
                || line
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '='))
                    .any(|w| w.strip_prefix(name).is_some_and(|rest| rest.starts_with('=')));
            // A public key (`id_*.pub`) is no secret.
            let b = line.as_bytes();
            if found && source.find_iter(b).any(|m| !is_public_key(&b[m.start()..]))
                || found && !*is_var && loop_filled(body, before, line, source)
            {
                return Some(if *is_var { format!("${name}") } else { name.to_string() });
            }
        }
    }
    None
}

/// Lines of a loop or a group looked back over from its end, at most.
const MAX_LOOP_LINES: usize = 20;

/// Whether `line`, the end of a loop or a group whose output goes to a
/// file (`done > /tmp/.d`, `} > out`), ends one whose lines read `source`:
/// what each command in it prints fills the file.
fn loop_filled(body: &Body<'_>, before: LineRef, line: &str, source: &Regex) -> bool {
    let t = line.trim_start();
    if !(t.starts_with("done") || t.starts_with('}')) || !t.contains('>') {
        return false;
    }
    let first = body.line_before(before, TAINT_LOOKBACK_LINES);
    let lines: Vec<&str> = body.lines_from(first).take(before.index - first.index).map(|(_, l)| l).collect();
    let Some(end) = lines.iter().rposition(|l| std::ptr::eq(*l, line)) else { return false };
    let opener = |l: &str| {
        let l = l.trim_start();
        ["for ", "while ", "until ", "{"].iter().any(|w| l.starts_with(w))
    };
    let from = end.saturating_sub(MAX_LOOP_LINES);
    lines[from..end].iter().rposition(|l| opener(l)).is_some_and(|k| {
        lines[from + k..end]
            .iter()
            .any(|l| source.find_iter(l.as_bytes()).any(|m| !is_public_key(&l.as_bytes()[m.start()..])))
    })
}

/// Whether `line` is a shell loop over a list into the variable `name`
/// (`for name in …`).
fn loops_over(line: &str, name: &str) -> bool {
    // Substring searches first: most lines hold no loop.
    memchr::memmem::find_iter(line.as_bytes(), b"for ").any(|at| {
        let mut words = line[at + 4..].split_whitespace();
        words.next() == Some(name) && words.next() == Some("in")
    })
}

fn secret_to_network(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut last_covered: Option<usize> = None;
    for &l in lines {
        if last_covered.is_some_and(|c| l.index <= c) {
            continue;
        }
        // A pipeline continued with `\` may start lines above the sender:
        // `kubectl get secrets -o json \` then `| curl --data-binary @- …`.
        let l = command_start(body, l);
        let (cmd, parts) = logical(body, l);
        last_covered = parts.last().map(|(r, _)| r.index);
        let c = cmd.as_bytes();
        let mut payload = strip_auth_args(c);
        if !may_carry_payload(&payload) {
            continue;
        }
        let rare_auth =
            [&b" -i "[..], b"--netrc", b"--cert", b"--key", b" -e ", b"--config", b"headers", b"auth"];
        if memchr::memchr(b'-', &payload).is_some() && rare_auth.iter().any(|m| contains_ci(&payload, m))
            || rare_auth[6..].iter().any(|m| contains_ci(&payload, m))
        {
            payload = std::borrow::Cow::Owned(AUTH_ARGS.replace_all(&payload, &b" "[..]).into_owned());
        }
        let p = &*payload;
        // The excerpt is taken from the line of the command holding the
        // offending text.
        let report = |id: &str, severity: Severity, needle: &[u8], out: &mut Vec<Finding>| {
            let at = find_bytes(c, needle).unwrap_or(0);
            let r = line_at(&parts, at);
            let text = body.line(r);
            let col = find_bytes(text.as_bytes(), needle).unwrap_or(0);
            // Shown as text under a warning, a sender is explained, not asked.
            let severity = body.unless_explained(severity, r, col..col + needle.len());
            out.push(finding(id, Category::Exfiltration, severity, r, text, col));
        };
        // The shell's history piped into the sender: every command typed,
        // with whatever secret was typed on it.
        if contains_ci(p, b"history")
            && let Some(m) = HISTORY_PIPED.find(p)
        {
            report("exfil.secret-file", Severity::High, m.as_bytes().trim_ascii(), out);
            continue;
        }
        if PAYLOAD.is_match(p) {
            if let Some(m) = ANY_SECRET.find(p).filter(|m| !is_public_key(&p[m.start()..])) {
                let only_passwd = !SECRET.is_match(p) && m.as_bytes().ends_with(b"/etc/passwd");
                let sev = if only_passwd { Severity::High } else { Severity::Critical };
                report("exfil.secret-file", sev, m.as_bytes(), out);
                continue;
            }
            if let Some(m) = ENV_DUMP.find(p) {
                report("exfil.env-dump", Severity::Critical, m.as_bytes().trim_ascii(), out);
                continue;
            }
        }
        if let Some(m) = STORE.find(p) {
            report("exfil.secret-file", Severity::Critical, m.as_bytes(), out);
            continue;
        }
        if let Some(t) = tainted_reference(body, l, p) {
            report("exfil.secret-file", Severity::Critical, t.as_bytes(), out);
        } else if let Some(m) = SECRET_VAR.find(p) {
            report("exfil.secret-variable", Severity::High, m.as_bytes(), out);
        }
    }
}

/// A variable as the first label of a name looked up (`host
/// "$t.x.example"`, `dig "${label:0:60}.x.example"`): a DNS query carries
/// whatever the variable holds to the name's server, wherever outbound
/// HTTP is blocked.
static LABEL_VAR: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:host|dig|nslookup|drill|ping|getent\s+hosts|resolve-dnsname)\s+(?:[-+]\S+\s+(?:\d+\s+)?)*["']?\$\{?([a-z_][a-z0-9_]*)(?::\d+(?::\d+)?)?\}?\.[a-z0-9-]+\.[a-z]"#,
    )
});
/// What fills a label that carries a secret: a credential file, the
/// environment, a store, or a variable whose name says it is a secret.
static LABEL_SOURCE: Lazy = LazyLock::new(|| {
    compile(&format!(
        "{SECRET_PATHS}|{LESSER_PATHS}|{TOOL_SECRET_FILES}|{ENV_DUMP_PATTERN}|{STORE_READ}|{SECRET_VAR_PATTERN}"
    ))
});

/// `exfil.dns-lookup` for a name whose first label is a variable filled
/// from a secret a few lines above: `Critical`.
fn dns_label(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let Some(c) = LABEL_VAR.captures(line.as_bytes()) else { continue };
        let (Some(all), Some(name)) = (c.get(0), c.get(1)) else { continue };
        let reference = format!("${}", String::from_utf8_lossy(name.as_bytes()));
        if filled_from(body, l, reference.as_bytes(), &LABEL_SOURCE).is_none() {
            continue;
        }
        let severity = body.unless_explained(Severity::Critical, l, all.start()..all.end());
        out.push(finding("exfil.dns-lookup", Category::Exfiltration, severity, l, line, all.start()));
    }
}

pub(super) fn is_public_key(at: &[u8]) -> bool {
    // A glob (`id_*.pub`) names public keys too.
    let end =
        at.iter().position(|b| !(b.is_ascii_alphanumeric() || b"._-/~*".contains(b))).unwrap_or(at.len());
    at[..end].ends_with(b".pub")
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod sweep_tests;

#[cfg(test)]
#[path = "strip_edge_tests.rs"]
mod strip_edge_tests;
