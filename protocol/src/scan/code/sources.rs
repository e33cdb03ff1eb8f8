//! Sources: code that reads a secret. A secret-bearing environment
//! variable (by its name), the whole environment, a credential file, a
//! keychain or credential store, the clipboard, a browser's cookie or
//! password store, a page's whole storage (not one item it keeps), a CLI
//! run to print its login token or a store of keys (`gh auth token`,
//! `aws configure export-credentials`, `kubectl config view --raw`) — in
//! Python, JavaScript, PowerShell, and the environment reads of Go, Ruby,
//! Rust, Java, Swift and PHP; in SQL, a database's table of its users'
//! password hashes.

use std::sync::LazyLock;

use super::blocks::Lang;
use crate::scan::exfil::{SECRET_PATHS, TOOL_SECRET_FILES};
use crate::scan::rule::{Lazy, compile};

/// What a source reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// One variable whose name says it holds a secret (`GITHUB_TOKEN`),
    /// or one named entry of a keyring (`keyring.get_password("cli",
    /// "me")`): a program's own token, which it sends to its API.
    EnvVar,
    /// The whole environment.
    Environment,
    /// A credential file (`~/.aws/credentials`, `~/.ssh/id_rsa`).
    File,
    /// A keychain or credential store (a database's table of password
    /// hashes too: `pg_shadow`, `mysql.user`).
    Keychain,
    Clipboard,
    /// A browser's cookies or saved passwords.
    Browser,
}

/// What wakes the flow analyzer: sources, and the network calls most
/// exfiltration goes through (a source without a literal of its own, such
/// as `$env:` or the clipboard, is found when its call is). All of them are
/// triggers of other families already: the prefilter's table is nearly
/// full, and a trigger that shares a key costs it nothing (`keyring` is
/// the one exception: a key one byte longer than `key`'s).
pub(super) const TRIGGERS: &[&str] = &[
    "os.environ",
    "process.env",
    "find-generic-password",
    "find-internet-password",
    "dump-keychain",
    "keychain*",
    "keyring",
    ".ssh",
    "id_rsa",
    "id_ed25519",
    ".aws/",
    ".git-credentials",
    ".netrc",
    ".kube/config",
    ".docker/config",
    ".npmrc",
    ".pypirc",
    "gh/hosts",
    "google-chrome",
    "chrome/",
    "/environ",
    "wallet.dat",
    "requests.post",
    "requests.put",
    "requests.patch",
    "requests.get",
    "urllib",
    "urlopen",
    "*tpx.",
    "fetch(",
    "axios.",
    "net.webclient",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    // Stores and whole-environment reads whose call has a literal of its own.
    "clipboard*",
    "pyperclip",
    "pbpaste",
    "xclip",
    "xsel",
    "wl-paste",
    "getenv",
    "dotenv_values",
    // Other languages' environment: Ruby's `ENV[…]`, Rust's `env::var`,
    // Swift's `environment[…]`, PHP's `$_ENV`, Go's `os.Environ()`.
    "env[",
    "env.fetch",
    "env.to_h",
    "env.to_a",
    "env.select",
    "env.filter_map",
    "env.each",
    "env::var",
    "environment[",
    "$_env",
    "$_server",
    "environ()",
    "deno.env",
    "cmdkey",
    "credread",
    "win32cred",
    "passwordvault",
    "secret-tool",
    "get-storedcredential",
    "local state",
    "web data",
    "signons.sqlite",
    "key3.db",
    "key4.db",
    "logins.json",
    "cookies.sqlite",
    // A page's own stores, sent by script.
    "localstorage",
    "sessionstorage",
    "document.cookie",
    // A database's own credential store: its users' password hashes.
    "pg_shadow",
    "pg_authid",
    "mysql.user",
    "authentication_string",
    "sql_logins",
    // Credentials a CLI prints, run from code; and a registry's login file
    // named in parts (`Path.home() / ".docker" / "config.json"`).
    "auth token",
    "\"auth\"",
    "credential fill",
    "config view",
    "export-credentials",
    "print-access-token",
    "get-access-token",
    "docker-credential-*",
    "export-secret-*",
    "get-secret-value",
    ".docker",
];

/// A name that says its variable holds a secret.
/// Connection strings carry their password (`DATABASE_URL`, a `DSN`).
const SECRET_NAME: &str = r"[a-z0-9_]*(?:token|secret|passw|pwd|api_?key|apikey|access_?key|private_?key|credential|session|cookie|database_url|db_url|dsn|connection_?string|mongo(?:db)?_uri|redis_url)[a-z0-9_]*|aws_[a-z0-9_]+|[a-z0-9_]*_(?:key|pat)";

/// A CLI that prints its own login token (`gh auth token`, or in code
/// `exec.Command("gh", "auth", "token")`: words apart by anything but a
/// word character): a program's own token, as a secret variable is, which
/// it sends to its API.
const CLI_TOKEN: &str = r#"\bgh\W+auth\W+token\b|\b(?:gh|glab)\W+auth\W+status\b[^\n]*show-token\b|\becr(?:-public)?\W+get-login-password\b|\bcodeartifact\W+get-authorization-token\b|\bkubectl\W+create\W+token\b|["']auth["']\s*,\s*["']token["']|\bgcloud\W+auth\W+(?:application-default\W+)?print-(?:access|identity)-token\b|\baz\W+account\W+get-access-token\b|\bheroku\W+auth:token\b|\bgit\W+credential\W+fill\b"#;

/// A CLI that prints a store of credentials: every key of a cloud
/// account (`aws configure export-credentials`, the `aws` often on the
/// line before in code), a kubeconfig with its keys inlined, a registry
/// login, secret keys, a secrets manager's or password manager's entry.
/// No API takes these as its input.
const CLI_STORE: &str = r#"\bconfigure\W+export-credentials\b|\bconfigure\W+get\W+\w*secret|\bconfig\W+view\b[^\n]*--raw\b|\bdocker-credential-\w+\W+get\b|\bgpg\b[^\n]*--export-secret-(?:sub)?keys\b|\bsecretsmanager\W+get-secret-value\b|\bvault\W+kv\W+get\b|\bop\W+read\W+op://|\b(?:bw\W+get\W+(?:password|item)|lpass\W+show|gopass\W+show)\b"#;

static SOURCE: Lazy = LazyLock::new(|| {
    compile(
        &r#"(?P<env>\bos\.environ(?:\.get)?\s*[\[(]\s*["'](?P<n1>{n})["']|\bgetenv\s*\(\s*["'](?P<n2>{n})["']|\bprocess\.env(?:\.(?P<n3>{n})\b|\[\s*["'`](?P<n4>{n})["'`])|\$env:(?P<n5>{n})\b|getenvironmentvariable\s*\(\s*["'](?P<n6>{n})["']|\benv\.get\s*\(\s*["'](?P<n7>{n})["']|\benv\s*\[\s*["':](?P<n8>{n})["']?\s*\]|\benv\.fetch\s*\(\s*["':](?P<n9>{n})["']?|\benv::var(?:_os)?\s*\(\s*["'](?P<n10>{n})["']|\benvironment\s*\[\s*["'](?P<n11>{n})["']|\$_(?:env|server)\s*\[\s*["'](?P<n12>{n})["']|\bkeyring\.get_password\b|\bkeytar\.(?:getpassword|findpassword)\b|{cli_token})|(?P<all>\bdict\(\s*os\.environ\s*\)|\bos\.environ\.(?:copy\(\)|items\(\))|\*\*os\.environ\b|json\.dumps\(\s*os\.environ|\bos\.environ\s*[,)}\]]|=\s*os\.environ\s*$|json\.stringify\(\s*process\.env\b|\bprocess\.env\s*[,)}\]]|\.\.\.process\.env\b|object\.(?:entries|keys|values)\(\s*process\.env\b|=\s*process\.env\s*;?\s*$|\b(?:get-childitem|gci|dir|ls)\s+env:|getenvironmentvariables\s*\(|\bdotenv_values\s*\(|\bos\.environ\b\s*\.\s*items|\bfor\s+\w+(?:\s*,\s*\w+)?\s+in\s+os\.environ\b|\bos\.environ\s*\(\s*\)|\benv::vars(?:_os)?\s*\(\s*\)|\bsystem\.getenv\s*\(\s*\)|\benv\.(?:to_h|to_hash|to_a|each|each_pair|select|filter_map)\b|\bdeno\.env\.toobject\s*\(|\bprocessinfo\.environment\s*[,)}\]]|\$_env\b\s*[,)}\]])|(?P<key>\.get_(?:frozen_)?credentials\s*\(|\bfromnodeproviderchain\s*\(|\bcredentials\.retrieve\s*\(|\bfind-(?:generic|internet)-password\b|\bdump-keychain\b|\bkeyring\.get_credential\b|\bkeytar\.findcredentials\b|\bget-storedcredential\b|\bcryptunprotectdata\b|\bsecret-tool\s+lookup\b|\bvaultcmd\b|\bcmdkey\s+/list\b|\bcredread\w*\b|\bwin32cred\.\w+|\bpasswordvault\b[^\n]*\.(?:retrieve\w*|findallby\w+)\b|\bpg_(?:shadow|authid)\b|\bmysql\.user\b|\bauthentication_string\b|\bsys\.sql_logins\b|\bdba_users\b[^\n]*\bpassword|{cli_store})|(?P<clip>\bget-clipboard\b|\bpyperclip\.paste\b|\bclipboard\.(?:readtext|read)\w*\b|\bclipboardy\.read|\bpbpaste\b|\bxclip\b[^\n|;]*\s-o\b|\bxsel\b[^\n|;]*\s-[a-z]*o|\bwl-paste\b|\.clipboard_get\s*\(|\bgetclipboarddata\b)|(?P<browser>\blogin\s+data\b|\blogins\.json\b|\bkey[34]\.db\b|\bcookies\.sqlite\b|\bsignons\.sqlite\b|\blocal\s+state\b|\bweb\s+data\b|\bbrowser_cookie3?\b|\bnetwork/cookies\b|\bdocument\.cookie\b|\b(?:local|session)storage\s*(?:[,)}\];]|$))"#
            .replace("{n}", SECRET_NAME)
            .replace("{cli_token}", CLI_TOKEN)
            .replace("{cli_store}", CLI_STORE),
    )
});

/// Reading a file, in any of the languages.
static READ: Lazy = LazyLock::new(|| {
    compile(
        r#"\bopen\s*\(|\.read(?:_text|_bytes|lines)?\s*\(|\breadfile(?:sync)?\b|\bget-content\b|\bgc\s|\bcat\s|\btype\s|\bcopyfile|\bsqlite3\.connect\b|\bpath\s*\(|\$\(\s*<|\bfs\.promises\b|\[io\.file\]::read|\bfile_get_contents\s*\(|\bfopen\s*\(|\breadall(?:text|bytes|lines)\b|\bfiles\.read\w*\s*\(|\bread_to_string\b|\bfs::read\b"#,
    )
});

static SECRET_FILE: Lazy = LazyLock::new(|| compile(&format!("{SECRET_PATHS}|{TOOL_SECRET_FILES}")));

/// Reading a whole file's text, rather than loading settings from it.
static WHOLE_READ: Lazy = LazyLock::new(|| {
    compile(
        r#"\bopen\s*\([^)]*\)\s*\.\s*read\s*\(\s*\)|\.read_text\s*\(|\breadfilesync\s*\(|\bget-content\b[^\n|]*-raw\b|\bfs\.promises\.readfile\b|\[io\.file\]::readalltext\b"#,
    )
});

/// A credential path built from parts: `Path.home() / ".aws" / "credentials"`,
/// `os.path.join(home, ".ssh", "id_rsa")`, `Join-Path $HOME .ssh id_rsa`.
static JOINED_PATH: Lazy = LazyLock::new(|| {
    compile(
        r#"["']?\.(?:ssh|aws|kube|docker|gnupg)["']?\s*[/,+]?\s*["']?(?:id_[a-z0-9_]+|credentials|config|config\.json)\b"#,
    )
});

/// A project's `.env` file, read whole: its secrets are what it is for.
static DOTENV: Lazy = LazyLock::new(|| {
    compile(r#"(?:^|[\s"'=(/`])\.env(?:\.(?:local|prod|production|staging))?(?:$|[\s"'`),;])"#)
});

/// A string literal, for [`built_path`].
static LITERAL: Lazy = LazyLock::new(|| compile(r#""[^"\n]*"|'[^'\n]*'"#));

/// A path built from literals (`Path.home() / ".config" / "gcloud" / "x.json"`,
/// `os.path.join(home, ".config", "gcloud", …)`, `"~/.config" + "/gcloud"`):
/// consecutive literals separated by `/`, `,` or `+`, joined with `/`, and
/// where the first starts. Only lines with two literals or more are built.
fn built_path(b: &[u8]) -> Option<(String, usize)> {
    let mut parts: Vec<(usize, usize)> = LITERAL.find_iter(b).map(|m| (m.start(), m.end())).collect();
    if parts.len() < 2 {
        return None;
    }
    parts.truncate(32);
    let mut out = None;
    let mut run: Option<(usize, String)> = None;
    let mut prev_end = 0;
    for (start, end) in parts {
        let part = String::from_utf8_lossy(&b[start + 1..end - 1]).into_owned();
        let joined_to_previous = run.is_some()
            && b[prev_end..start].iter().all(|c| matches!(c, b' ' | b'\t' | b'/' | b',' | b'+'));
        run = match run.take() {
            Some((first, path)) if joined_to_previous => Some((first, format!("{path}/{part}"))),
            done => {
                if let Some((first, path)) = done.filter(|(_, p)| p.contains('/')) {
                    out.get_or_insert((path, first));
                }
                Some((start, part))
            }
        };
        prev_end = end;
    }
    if let Some((first, path)) = run.filter(|(_, p)| p.contains('/')) {
        out.get_or_insert((path, first));
    }
    out
}

/// `for name in` just before: iterating, not testing membership.
static FOR_IN: Lazy = LazyLock::new(|| compile(r"\bfor\s+\w+(?:\s*,\s*\w+)?\s+in$"));

/// Where a credential file's path starts on a line: written whole (also
/// with Windows backslashes) or built from parts.
pub(super) fn secret_path(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let slashed;
    let b = if b.contains(&b'\\') {
        slashed = line.replace('\\', "/");
        slashed.as_bytes()
    } else {
        b
    };
    SECRET_FILE
        .find(b)
        .or_else(|| JOINED_PATH.find(b))
        .map(|m| m.start())
        .or_else(|| built_path(b).and_then(|(path, at)| SECRET_FILE.is_match(path.as_bytes()).then_some(at)))
}

/// Shell and PowerShell: `$GITHUB_TOKEN`, `${NPM_TOKEN}`, upper-case as
/// environment variables are written.
static SHELL_ENV: Lazy = LazyLock::new(|| {
    compile(
        r"\$\{?(?-i:[A-Z0-9_]*(?:TOKEN|SECRET|PASSW|PWD|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|COOKIE)[A-Z0-9_]*|AWS_[A-Z0-9_]+)\}?",
    )
});

static CLI: Lazy = LazyLock::new(|| compile(&format!("{CLI_TOKEN}|{CLI_STORE}")));

/// Whether the line runs a CLI that prints a token or a store: a source
/// read by running it, not a command the secret reaches.
pub(super) fn printed_by_cli(code: &str) -> bool {
    CLI.is_match(code.as_bytes())
}

/// The first source on a line of code in `lang`, and where it starts.
pub(super) fn find(line: &str, lang: Lang) -> Option<(Kind, usize)> {
    let b = line.as_bytes();
    // `name in os.environ` asks whether a variable is set; it reads nothing.
    let membership = |at: usize| {
        let before = line[..at].trim_end();
        before.ends_with(" in") && !FOR_IN.is_match(before.as_bytes())
    };
    if let Some(c) = SOURCE.captures_iter(b).find(|c| c.get(0).is_some_and(|m| !membership(m.start()))) {
        let kind = if c.name("env").is_some() {
            Kind::EnvVar
        } else if c.name("all").is_some() {
            Kind::Environment
        } else if c.name("key").is_some() {
            Kind::Keychain
        } else if c.name("clip").is_some() {
            Kind::Clipboard
        } else {
            Kind::Browser
        };
        return Some((kind, c.get(0).map_or(0, |m| m.start())));
    }
    if let Some(at) = secret_path(line)
        && READ.is_match(b)
    {
        return Some((Kind::File, at));
    }
    if let Some(m) = DOTENV.find(line.replace('\\', "/").as_bytes())
        && WHOLE_READ.is_match(b)
    {
        return Some((Kind::File, m.start()));
    }
    if matches!(lang, Lang::Shell | Lang::PowerShell)
        && let Some(m) = SHELL_ENV.find(b)
    {
        return Some((Kind::EnvVar, m.start()));
    }
    None
}

/// The names of secret environment variables the line reads
/// (`GITHUB_TOKEN` of `os.environ["GITHUB_TOKEN"]`), as written: where
/// the line uses them, and what an API host is recognised by.
pub(super) fn env_names(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for c in SOURCE.captures_iter(line.as_bytes()) {
        for g in ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11", "n12"] {
            if let Some(m) = c.name(g) {
                out.push(String::from_utf8_lossy(m.as_bytes()).into_owned());
            }
        }
    }
    for m in SHELL_ENV.find_iter(line.as_bytes()) {
        out.push(String::from_utf8_lossy(m.as_bytes()).trim_matches(['$', '{', '}']).to_string());
    }
    out
}

/// Where in `text` a source may start: every match of the source patterns,
/// in order, as byte offsets. [`find`] confirms a line's.
pub(super) fn candidates(text: &str) -> Vec<usize> {
    let slashed;
    let b = if text.as_bytes().contains(&b'\\') {
        // Windows paths; the copy keeps every offset.
        slashed = text.replace('\\', "/");
        slashed.as_bytes()
    } else {
        text.as_bytes()
    };
    let mut at: Vec<usize> = SOURCE
        .find_iter(b)
        .chain(SECRET_FILE.find_iter(b))
        .chain(JOINED_PATH.find_iter(b))
        .chain(SHELL_ENV.find_iter(b))
        .chain(DOTENV.find_iter(b))
        .map(|m| m.start())
        .collect();
    // Paths built from literals: the line's first literal, for `find` to judge.
    for line in text.split_inclusive('\n') {
        let offset = line.as_ptr() as usize - text.as_ptr() as usize;
        if line.contains(['"', '\''])
            && (line.contains('/') || line.contains(','))
            && let Some((_, first)) =
                built_path(line.as_bytes()).filter(|(p, _)| SECRET_FILE.is_match(p.as_bytes()))
        {
            at.push(offset + first);
        }
    }
    at.sort_unstable();
    at
}

#[cfg(test)]
#[path = "sources_tests.rs"]
mod sweep_tests;
