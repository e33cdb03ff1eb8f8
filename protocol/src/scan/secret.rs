//! Credentials written into a skill (category `Secret`): keys and tokens of
//! a recognisable format (AWS, GitHub, GitLab, Slack, Stripe, Google,
//! OpenAI, Anthropic, package registries), private key blocks, JWTs,
//! passwords in URLs, and high-entropy values assigned to names like
//! `API_KEY`, `*_SECRET`, `*_TOKEN` or `PASSWORD` (in shell, env files,
//! YAML, JSON and code).
//!
//! A skill holding a live credential hands it to everyone the skill is
//! shared with, so a node holds such a skill back from sharing
//! ([`ScanReport::secrets`](super::ScanReport::secrets)). Coverage is
//! anchored on gitleaks' default rule set (the formats a skill is likely to
//! carry), and so are the ideas against false positives: a Shannon-entropy
//! and length floor for values of the generic rules, and an allowlist of
//! documented examples and placeholders.
//!
//! # Severity
//!
//! - Medium: looks like a live credential. Below the default refusal
//!   threshold on purpose: a received skill holding someone's key is that
//!   sender's leak, not an attack on the receiver, so intake is unchanged.
//! - Low: looks like a documented example (`AKIAIOSFODNN7EXAMPLE`, the
//!   jwt.io token), a placeholder (`xxxx`, `<your-token>`, `changeme`,
//!   `dummy`, all-same or sequential characters), a test-mode key, or a
//!   default password for a local database.
//! - Info: a secret-named variable set from somewhere else (`$TOKEN`,
//!   `${VAR}`, `os.environ[...]`): worth knowing, holds nothing.
//!
//! # Never the value
//!
//! A finding's text names what was found, the fixed prefix of its format
//! (`ghp_`, `AKIA`) and its length, never the value; and every excerpt, of
//! any rule, is cut from the line with its credentials masked ([`mask`]),
//! so a `curl` finding on a line with a token does not carry the token.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::rule::{EXCERPT_CHARS, Hit, Rule, compile, contains_ci};
use super::{Category, Severity};

/// How a format's match is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A token whose fixed prefix says what it is: the whole match is the
    /// value, and the prefix is shown.
    Prefixed,
    /// A Stripe key: `_test_` keys are Low.
    Stripe,
    /// An AWS secret access key next to its name.
    AwsSecret,
    /// `-----BEGIN … PRIVATE KEY-----`, live when key material follows.
    PrivateKey,
    /// A JSON Web Token, whose header must decode to one.
    Jwt,
    /// `scheme://user:password@host`.
    UrlPassword,
    /// A value assigned to a secret-looking name.
    Assignment,
    /// `Authorization: Bearer …`.
    AuthHeader,
}

/// One credential format: one rule.
struct Format {
    id: &'static str,
    /// What the finding's text calls it.
    what: &'static str,
    kind: Kind,
    /// Prefixes of the value that say nothing secret, longest first; the
    /// finding shows the one the value starts with.
    prefixes: &'static [&'static str],
    triggers: &'static [&'static str],
    /// Compiled as every rule is (ASCII, case-insensitive: `(?-i:…)` where
    /// case matters). A group `v`, when present, is the value inside the
    /// match; other named groups are read by the kind's check.
    pattern: &'static str,
}

/// The formats, one rule each, in this order (see [`rules`]).
const FORMATS: &[Format] = &[
    Format {
        id: "secret.aws-access-key",
        what: "AWS access key id",
        kind: Kind::Prefixed,
        prefixes: &["AKIA", "ASIA"],
        triggers: &["akia*", "asia*"],
        pattern: r"\b(?-i:(?:AKIA|ASIA)[A-Z2-7]{16})\b",
    },
    Format {
        id: "secret.aws-secret-key",
        what: "AWS secret access key",
        kind: Kind::AwsSecret,
        prefixes: &[],
        triggers: &["*secret*"],
        pattern: r#"(?:secret_?access_?key|secret-access-key|aws_secret(?:_key)?)["'\]]{0,2}\s*(?::=|=>|=|:)\s*["'`]?(?P<v>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
    },
    Format {
        id: "secret.github-token",
        what: "GitHub token",
        kind: Kind::Prefixed,
        prefixes: &["github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        triggers: &["ghp_*", "gho_*", "ghu_*", "ghs_*", "ghr_*", "github_pat_*"],
        pattern: r"\b(?-i:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
    },
    Format {
        id: "secret.gitlab-token",
        what: "GitLab token",
        kind: Kind::Prefixed,
        prefixes: &["glpat-"],
        triggers: &["glpat-*"],
        pattern: r"\b(?-i:glpat-[A-Za-z0-9_-]{20,})",
    },
    Format {
        id: "secret.slack-token",
        what: "Slack token",
        kind: Kind::Prefixed,
        prefixes: &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"],
        triggers: &["xox*"],
        pattern: r"\b(?-i:xox[abeprs]-[A-Za-z0-9-]{10,})",
    },
    Format {
        id: "secret.slack-webhook",
        what: "Slack webhook URL",
        kind: Kind::Prefixed,
        prefixes: &[],
        triggers: &["hooks.slack.com"],
        pattern: r"\bhooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9+/_-]{20,})",
    },
    Format {
        id: "secret.stripe-key",
        what: "Stripe secret key",
        kind: Kind::Stripe,
        prefixes: &["sk_live_", "rk_live_", "sk_prod_", "rk_prod_", "sk_test_", "rk_test_"],
        triggers: &["sk_*", "rk_*"],
        pattern: r"\b(?-i:[sr]k_(?:live|prod|test)_[A-Za-z0-9]{10,})\b",
    },
    Format {
        id: "secret.google-api-key",
        what: "Google API key",
        kind: Kind::Prefixed,
        prefixes: &["AIza"],
        triggers: &["aiza*"],
        pattern: r"\b(?P<v>(?-i:AIza)[A-Za-z0-9_-]{35})(?:[^A-Za-z0-9_-]|$)",
    },
    Format {
        id: "secret.openai-key",
        what: "OpenAI API key",
        kind: Kind::Prefixed,
        prefixes: &["sk-svcacct-", "sk-admin-", "sk-proj-", "sk-"],
        triggers: &["sk-*"],
        pattern: r"\b(?-i:sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{32,}))",
    },
    Format {
        id: "secret.anthropic-key",
        what: "Anthropic API key",
        kind: Kind::Prefixed,
        prefixes: &["sk-ant-admin01-", "sk-ant-api03-", "sk-ant-"],
        triggers: &["sk-ant-*"],
        pattern: r"\b(?-i:sk-ant-[A-Za-z0-9_-]{20,})",
    },
    Format {
        id: "secret.package-token",
        what: "package registry or service token",
        kind: Kind::Prefixed,
        prefixes: &[
            "pypi-AgEIcHlwaS5vcmc",
            "dop_v1_",
            "shpat_",
            "shpss_",
            "shpca_",
            "shppa_",
            "npm_",
            "hf_",
            "SG.",
        ],
        triggers: &["npm_*", "pypi-*", "hf_*", "sg.*", "dop_v1_*", "shp*"],
        pattern: r"\b(?-i:npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z]{34}|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b",
    },
    Format {
        id: "secret.private-key",
        what: "private key block",
        kind: Kind::PrivateKey,
        prefixes: &[],
        triggers: &["-----begin*"],
        pattern: r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?:\\[nr])*(?P<v>[A-Za-z0-9+/=\\]*)",
    },
    Format {
        id: "secret.jwt",
        what: "JSON Web Token",
        kind: Kind::Jwt,
        prefixes: &["eyJ"],
        triggers: &["eyj*"],
        pattern: r"\b(?-i:eyJ)[A-Za-z0-9_-]{8,}\.(?-i:eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    },
    Format {
        id: "secret.url-password",
        what: "password in a URL",
        kind: Kind::UrlPassword,
        prefixes: &[],
        triggers: &["://"],
        pattern: r#"\b(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<user>[^\s:/?#@"'`<>]*):(?P<v>[^\s/?#@"'`<>]+)@(?P<host>[a-z0-9._-]+|\[[0-9a-f:]+\])"#,
    },
    Format {
        id: "secret.assignment",
        what: "secret value",
        kind: Kind::Assignment,
        prefixes: &[],
        triggers: &[
            "*key",
            "*secret",
            "*token",
            "*password",
            "*passwd",
            "*pwd",
            "*pass",
            "*passphrase",
            "*credential",
            "*credentials",
            "*auth",
            "*pat",
        ],
        pattern: r#"(?P<name>[A-Za-z0-9_.-]*(?:key|secret|token|passw(?:or)?d|pwd|pass|passphrase|credentials?|auth|pat))["'\]]{0,2}(?:\s*:\s*[A-Za-z_][A-Za-z0-9_.\[\]|]*\s*(?:=|:=))?\s*(?::=|=>|=|:)\s*(?P<v>"[^"\n]+"|'[^'\n]+'|`[^`\n]+`|[^\s"'`,;)\]}]+)"#,
    },
    Format {
        id: "secret.auth-header",
        what: "credential in an Authorization header",
        kind: Kind::AuthHeader,
        prefixes: &[],
        triggers: &["authorization"],
        pattern: r#"\bauthorization["']?\s*:\s*["'`]?(?:bearer|basic|token)\s+(?P<v>[^\s"'`,;\\]+)"#,
    },
];

/// The line rules of this family, one per format.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        rule::<0>(),
        rule::<1>(),
        rule::<2>(),
        rule::<3>(),
        rule::<4>(),
        rule::<5>(),
        rule::<6>(),
        rule::<7>(),
        rule::<8>(),
        rule::<9>(),
        rule::<10>(),
        rule::<11>(),
        rule::<12>(),
        rule::<13>(),
        rule::<14>(),
        rule::<15>(),
    ]
}

/// The rule of format `F`: its checks are functions of the format, which a
/// plain `fn` pointer can only name through a constant.
fn rule<const F: usize>() -> Rule {
    let f = &FORMATS[F];
    let rule = Rule::new(f.id, Category::Secret, Severity::Medium, f.triggers, f.pattern)
        .assess(assess::<F>)
        .describe(describe::<F>);
    match f.kind {
        // The key material is on the next line.
        Kind::PrivateKey => rule.span(1),
        // Its trigger, `secret`, is on many lines; its name is on few.
        Kind::AwsSecret => rule.requires(&["access", "aws_secret"]),
        Kind::Assignment => rule.gate(assigns_to_a_secret_name),
        Kind::UrlPassword => rule.requires(&["@"]),
        Kind::AuthHeader => rule.requires(&["bearer", "basic", "token"]).gate(sends_a_literal_credential),
        _ => rule,
    }
}

fn assess<const F: usize>(h: &Hit<'_>) -> Option<Severity> {
    judge(F, h.hay, h.m.clone()).map(|found| found.note.severity())
}

fn describe<const F: usize>(h: &Hit<'_>) -> String {
    match judge(F, h.hay, h.m.clone()) {
        Some(found) => found.describe(&FORMATS[F], h.hay),
        None => FORMATS[F].what.to_string(),
    }
}

/// What a secret's name ends with, as the assignment rule's pattern has it.
const NAME_ENDINGS: &[&str] = &[
    "key",
    "secret",
    "token",
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "credential",
    "credentials",
    "auth",
    "pat",
];

/// Gate of the assignment rule: some `=` or `:` follows, past quotes,
/// brackets and blanks, a word ending like a secret's name. Most lines
/// that name a key or a token do so in prose, and the regex need not run.
fn assigns_to_a_secret_name(line: &str) -> bool {
    let b = line.as_bytes();
    memchr::memchr2_iter(b'=', b':', b).any(|i| {
        let mut j = i;
        while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'"' | b'\'' | b']') {
            j -= 1;
        }
        NAME_ENDINGS.iter().any(|e| j >= e.len() && b[j - e.len()..j].eq_ignore_ascii_case(e.as_bytes()))
    })
}

/// Gate of the header rule: a scheme word (`Bearer`, `Basic`, `token`)
/// followed by a value that is not a variable (`$TOKEN`, `${…}`, `<…>`):
/// most headers in skills send a variable.
fn sends_a_literal_credential(line: &str) -> bool {
    let b = line.as_bytes();
    memchr::memchr2_iter(b' ', b'\t', b).any(|i| {
        let scheme = ["bearer", "basic", "token"]
            .iter()
            .any(|s| i >= s.len() && b[i - s.len()..i].eq_ignore_ascii_case(s.as_bytes()));
        let value = b[i..].iter().find(|c| !matches!(c, b' ' | b'\t'));
        scheme && value.is_some_and(|c| !matches!(c, b'$' | b'{' | b'<' | b'%' | b'"' | b'\''))
    })
}

/// The formats' patterns, compiled once more for their groups.
static COMPILED: LazyLock<Vec<Regex>> =
    LazyLock::new(|| FORMATS.iter().map(|f| compile(f.pattern)).collect());

/// What a match turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    Live,
    Example,
    Placeholder,
    TestMode,
    LocalDefault,
    NoKeyMaterial,
    Reference,
}

impl Note {
    fn severity(self) -> Severity {
        match self {
            Note::Live => Severity::Medium,
            Note::Reference => Severity::Info,
            _ => Severity::Low,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Note::Live => "",
            Note::Example => ", looks like a documented example",
            Note::Placeholder => ", looks like a placeholder",
            Note::TestMode => ", a test-mode key",
            Note::LocalDefault => ", a default password for a local service",
            Note::NoKeyMaterial => ", no key material follows",
            Note::Reference => ", read from another variable, not a value",
        }
    }
}

/// A credential found in a haystack.
struct Found {
    /// The value (byte offsets in the haystack).
    value: Range<usize>,
    /// Bytes at the start of the value that may be shown: its format's prefix.
    shown: usize,
    note: Note,
    /// Extra words for the text: the variable's name, the URL's scheme or
    /// the key block's type, none of them secret.
    label: Option<Range<usize>>,
}

impl Found {
    /// The finding's text: what, a masked hint and the length, never the value.
    fn describe(&self, f: &Format, hay: &str) -> String {
        let value = &hay[self.value.clone()];
        // A reference's length is that of a variable's name.
        let chars = if self.note == Note::Reference {
            String::new()
        } else {
            format!(" ({} chars)", value.chars().count())
        };
        let label = self.label.clone().map(|r| clip(&hay[r], 32));
        let text = match (f.kind, label) {
            (Kind::PrivateKey, Some(kind)) => format!("{kind} block{}", self.note.text()),
            (Kind::UrlPassword, Some(scheme)) => {
                format!("password in a {scheme}:// URL{chars}{}", self.note.text())
            }
            (Kind::Assignment, Some(name)) => {
                format!("{} for {name}{chars}{}", f.what, self.note.text())
            }
            _ if self.shown > 0 => {
                format!("{} {}…{chars}{}", f.what, &value[..self.shown], self.note.text())
            }
            _ => format!("{}{chars}{}", f.what, self.note.text()),
        };
        clip(&text, EXCERPT_CHARS)
    }
}

/// At most `n` characters of `s`.
fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The longest value the rules other than JWTs and key blocks read.
const MAX_VALUE_BYTES: usize = 512;

/// Reads match `m` of format `i` on `hay`; `None` when it is not a
/// credential after all.
fn judge(i: usize, hay: &str, m: Range<usize>) -> Option<Found> {
    let f = &FORMATS[i];
    let caps = COMPILED[i]
        .captures_at(hay.as_bytes(), m.start)
        .filter(|c| c.get(0).is_some_and(|g| g.start() == m.start))?;
    let group = |name: &str| caps.name(name).map(|g| g.range());
    let value = group("v").unwrap_or(m.clone());
    let v = hay.get(value.clone())?;
    // Longer is data, not a credential a person pasted (and the finding
    // text stays short).
    if v.len() > MAX_VALUE_BYTES && !matches!(f.kind, Kind::Jwt | Kind::PrivateKey) {
        return None;
    }
    let found = |note: Note, shown: usize, label: Option<Range<usize>>| {
        Some(Found { value: value.clone(), shown, note, label })
    };
    match f.kind {
        Kind::Prefixed | Kind::Stripe => {
            let shown = f.prefixes.iter().find(|p| v.starts_with(*p)).map_or(0, |p| p.len());
            let body = &v[shown..];
            let note = if is_documented_example(v) {
                Note::Example
            } else if is_placeholder(body) {
                Note::Placeholder
            } else if f.kind == Kind::Stripe && v[2..].starts_with("_test_") {
                Note::TestMode
            } else {
                Note::Live
            };
            found(note, shown, None)
        }
        Kind::AwsSecret => {
            let note = if is_documented_example(v) {
                Note::Example
            } else if is_placeholder(v) {
                Note::Placeholder
            } else {
                Note::Live
            };
            found(note, 0, None)
        }
        Kind::Jwt => {
            let mut parts = v.split('.');
            let header = base64url(parts.next()?.as_bytes());
            let payload = base64url(parts.next()?.as_bytes());
            if !contains_ci(&header, b"\"alg\"") && !contains_ci(&header, b"\"typ\"") {
                return None;
            }
            let note = if JWT_EXAMPLES.iter().any(|w| contains_ci(&payload, w.as_bytes())) {
                Note::Example
            } else {
                Note::Live
            };
            found(note, 3, None)
        }
        Kind::PrivateKey => {
            let header = m.start + 5..hay[m.start + 5..].find("-----").map_or(m.end, |e| m.start + 5 + e);
            let label = Some(header.start + "BEGIN ".len().min(header.len())..header.end);
            let note =
                if v.len() >= 40 && !is_placeholder(v) { Note::Live } else { key_material_after(hay, m.end) };
            found(note, 0, label)
        }
        Kind::UrlPassword => {
            let user = hay.get(group("user")?)?;
            let host = hay.get(group("host")?)?.to_ascii_lowercase();
            let note = if is_reference(v) {
                Note::Reference
            } else if is_placeholder(v) || v.eq_ignore_ascii_case(user) || is_default_password(v) {
                if is_local(&host) { Note::LocalDefault } else { Note::Placeholder }
            } else if host.ends_with("example.com")
                || host.ends_with("example.org")
                || host.ends_with(".example")
            {
                Note::Example
            } else if is_local(&host) {
                Note::LocalDefault
            } else {
                Note::Live
            };
            found(note, 0, group("scheme"))
        }
        Kind::Assignment => {
            let name_range = group("name")?;
            let name = &hay[name_range.clone()];
            // A command's output (`` `cat token` ``) is read at run time.
            let command = v.starts_with('`');
            let (value, v, quoted) = unquote(value, v);
            let class = secret_name(name)?;
            if claimed_by_a_format(v)
                || AWS_SECRET
                    .is_some_and(|i| COMPILED[i].is_match(&hay.as_bytes()[name_range.start..value.end]))
                || is_literal_keyword(v)
            {
                return None;
            }
            let decoded = base64_text(v);
            let note = if command || is_reference(v) {
                // `key: cargo-${{ hashFiles(…) }}` is a cache key.
                if class == NameClass::Bare {
                    return None;
                }
                Note::Reference
            } else if !quoted && is_code(v, name) || looks_like_a_path_or_url(v) {
                return None;
            } else if [v, decoded.as_deref().unwrap_or("")].iter().any(|v| is_placeholder_value(v)) {
                // `key: password` names a key of a map, it holds none.
                if class == NameClass::Bare {
                    return None;
                }
                Note::Placeholder
            } else if strong_enough(v, class) {
                Note::Live
            } else {
                return None;
            };
            Some(Found { value, shown: 0, note, label: Some(name_range) })
        }
        Kind::AuthHeader => {
            if is_reference(v)
                || claimed_by_a_format(v)
                || v.starts_with("eyJ")
                || v.starts_with('<') && v.len() < 3
            {
                return None;
            }
            let note = if is_placeholder(v) {
                Note::Placeholder
            } else if strong_enough(v, NameClass::Key) {
                Note::Live
            } else {
                return None;
            };
            found(note, 0, None)
        }
    }
}

/// Payload fragments of the tokens documentation shows: jwt.io's default
/// token (`"sub": "1234567890"`, `"name": "John Doe"`) and its kin.
const JWT_EXAMPLES: &[&str] = &["john doe", "\"1234567890\"", "example", "jane doe", "placeholder", "dummy"];

/// `AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, and
/// every other value a vendor's documentation marks as its example.
fn is_documented_example(v: &str) -> bool {
    contains_ci(v.as_bytes(), b"example")
}

/// Words a value holds when it stands for one: documentation and templates.
const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "sample",
    "dummy",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your",
    "redacted",
    "fake",
    "xxx",
    "todo",
    "replace",
    "insert",
    "here",
    "mock",
    "lorem",
    "foobar",
    "...",
    "\u{2026}",
    "***",
    "<",
    ">",
    "{{",
    "}}",
];

/// A value that stands for a secret rather than being one: placeholder
/// words, one character repeated, or a run of consecutive characters.
fn is_placeholder(v: &str) -> bool {
    let b = v.as_bytes();
    if PLACEHOLDER_WORDS.iter().any(|w| contains_ci(b, w.as_bytes())) {
        return true;
    }
    let lower: Vec<u8> = b.iter().map(u8::to_ascii_lowercase).collect();
    // Random tokens hold runs of six like these with negligible probability.
    let run =
        |step: i16| lower.windows(6).any(|w| w.windows(2).all(|p| i16::from(p[1]) - i16::from(p[0]) == step));
    let distinct = {
        let mut seen = [false; 256];
        lower.iter().filter(|&&c| !std::mem::replace(&mut seen[usize::from(c)], true)).count()
    };
    run(0) || run(1) || run(-1) || b.len() >= 8 && distinct <= 3 || b.len() >= 16 && entropy(b) < 3.0
}

/// Passwords every tutorial uses; a secret only to nobody.
fn is_default_password(v: &str) -> bool {
    const DEFAULTS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "secret",
        "test",
        "admin",
        "root",
        "guest",
        "postgres",
        "mysql",
        "redis",
        "letmein",
        "qwerty",
        "hunter2",
        "123456",
        "12345678",
        "default",
        "demo",
        "dev",
        "local",
        "user",
        "mysecretpassword",
        "s3cr3t",
        "p@ssw0rd",
        "passw0rd",
        "token",
        "none",
        "null",
        "true",
        "false",
    ];
    let lower = v.to_ascii_lowercase();
    DEFAULTS.iter().any(|d| lower == *d || lower.starts_with(d) && lower.len() <= d.len() + 3)
}

/// `$TOKEN`, `${VAR}`, `${{ secrets.X }}`, `%VAR%`, `os.environ[...]`,
/// `process.env.X`: a value read from elsewhere.
fn is_reference(v: &str) -> bool {
    const READS: &[&str] = &[
        "os.environ",
        "os.getenv",
        "getenv(",
        "process.env",
        "env(",
        "env.",
        "env[",
        "secrets.",
        "vault:",
        "op://",
        "${",
        "$(",
        "<(",
        "{{",
        "<%",
        "@microsoft.keyvault",
    ];
    v.starts_with('$')
        || v.starts_with('%') && v.len() > 2 && v.ends_with('%')
        || READS.iter().any(|r| contains_ci(v.as_bytes(), r.as_bytes()))
}

/// An unquoted value that is code, not data: `token=token`, `key: self.key`,
/// `secret = settings.SECRET_KEY`, `password = get_password()`.
fn is_code(v: &str, name: &str) -> bool {
    let ident = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let last_name = name.rsplit(['.', '-']).next().unwrap_or(name).trim_start_matches('-');
    v.eq_ignore_ascii_case(last_name)
        || v.ends_with("()")
        || v.contains('(')
        || v.split('.').count() > 1 && v.split('.').all(ident) && v.bytes().any(|b| b.is_ascii_lowercase())
}

fn looks_like_a_path_or_url(v: &str) -> bool {
    v.starts_with('/')
        || v.starts_with("./")
        || v.starts_with("../")
        || v.starts_with('~')
        || v.contains("://")
        || v.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'_')
        || [".pem", ".json", ".key", ".txt", ".env", ".yaml", ".yml", ".p12", ".crt"]
            .iter()
            .any(|ext| v.to_ascii_lowercase().ends_with(ext))
}

/// A value another format of this family reports on its own.
fn claimed_by_a_format(v: &str) -> bool {
    FORMATS.iter().zip(COMPILED.iter()).any(|(f, re)| f.kind == Kind::Prefixed && re.is_match(v.as_bytes()))
        || v.starts_with("eyJ")
}

fn is_local(host: &str) -> bool {
    host == "localhost"
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || host == "[::1]"
        || host == "host.docker.internal"
        || host.ends_with(".local")
        || host.ends_with(".localhost")
        || host.ends_with(".test")
        // A single label is a service on a compose or cluster network.
        || !host.contains('.') && !host.starts_with('[')
}

/// The quoted value without its quotes, and whether it was quoted.
fn unquote(range: Range<usize>, v: &str) -> (Range<usize>, &str, bool) {
    let b = v.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'"' | b'\'' | b'`') && b[b.len() - 1] == b[0] {
        (range.start + 1..range.end - 1, &v[1..v.len() - 1], true)
    } else {
        (range, v, false)
    }
}

/// The index of the AWS secret key format, whose matches the generic
/// assignment rule leaves to it.
const AWS_SECRET: Option<usize> = {
    let mut i = 0;
    let mut found = None;
    while i < FORMATS.len() {
        if matches!(FORMATS[i].kind, Kind::AwsSecret) {
            found = Some(i);
        }
        i += 1;
    }
    found
};

/// `true`, `null`, `none`: a setting, not a value.
fn is_literal_keyword(v: &str) -> bool {
    ["true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "required", "optional"]
        .iter()
        .any(|k| v.eq_ignore_ascii_case(k))
}

/// A value people write for a password in tests and tutorials: a
/// placeholder, a default, or one naming what it stands for.
fn is_placeholder_value(v: &str) -> bool {
    is_placeholder(v)
        || is_default_password(v)
        || ["test", "passw", "secret", "token", "apikey", "api-key", "api_key"]
            .iter()
            .any(|w| contains_ci(v.as_bytes(), w.as_bytes()))
}

/// The text a base64 value decodes to, when it is printable ASCII (a
/// Kubernetes Secret's `data` holds its values so).
fn base64_text(v: &str) -> Option<String> {
    let b = v.as_bytes();
    if b.len() < 8
        || !b.len().is_multiple_of(4)
        || !b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
    {
        return None;
    }
    let text = base64url(v.trim_end_matches('=').as_bytes());
    text.iter()
        .all(|c| c.is_ascii_graphic() || *c == b' ')
        .then(|| String::from_utf8_lossy(&text).into_owned())
}

/// What a secret-looking name holds, for the strength its value needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameClass {
    /// Passwords are short and chosen by people.
    Password,
    /// Keys, tokens and secrets are long and random.
    Key,
    /// A name that is only `key`, `auth` or `pat`: a map's key, a flag.
    Bare,
}

/// Whether `name` names a secret: its last word is one (`API_KEY`,
/// `clientSecret`, `db.password`), and it is not a kind of key that is not
/// (`public_key`, `primary_key`, `next_token`, `max_tokens`).
fn secret_name(name: &str) -> Option<NameClass> {
    // Words of snake_case, kebab-case, dotted and camelCase names.
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.') {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    let last = words.last()?.as_str();
    let before = words.len().checked_sub(2).map(|i| words[i].as_str());
    const NOT_SECRET: &[&str] = &[
        "public",
        "pub",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "idempotency",
        "unique",
        "composite",
        "hash",
        "range",
        "row",
        "lookup",
        "object",
        "s3",
        "routing",
        "dedup",
        "index",
        "column",
        "translation",
        "i18n",
        "message",
        "name",
        "field",
        "map",
        "group",
        "join",
        "shard",
        "next",
        "page",
        "continuation",
        "pagination",
        "sync",
        "max",
        "num",
        "total",
        "count",
        "csrf",
        "password",
        "cancellation",
        "cancel",
        "by",
        "bypass",
        "o",
        "no",
    ];
    if before.is_some_and(|b| NOT_SECRET.contains(&b)) {
        return None;
    }
    match last {
        "password" | "passwd" | "pwd" | "pass" | "passphrase" => Some(NameClass::Password),
        "key" | "auth" | "pat" if before.is_none() => Some(NameClass::Bare),
        "key" | "token" | "secret" | "credential" | "credentials" | "apikey" | "secretkey" | "accesskey"
        | "privatekey" | "auth" | "pat" => Some(NameClass::Key),
        _ => None,
    }
}

/// Long and random enough to be a live secret for a name of this class
/// (gitleaks' generic rule asks 3.5 bits per character of its values).
fn strong_enough(v: &str, class: NameClass) -> bool {
    let b = v.as_bytes();
    let has_digit = b.iter().any(u8::is_ascii_digit);
    let has_letter = b.iter().any(u8::is_ascii_alphabetic);
    match class {
        NameClass::Password => {
            b.len() >= 8
                && entropy(b) >= 2.5
                && has_letter
                && (has_digit || !b.iter().all(u8::is_ascii_alphabetic))
        }
        NameClass::Key => b.len() >= 16 && entropy(b) >= 3.5 && has_digit && has_letter,
        NameClass::Bare => b.len() >= 20 && entropy(b) >= 4.0 && has_digit && has_letter,
    }
}

/// Whether the line after a key block's header holds key material (base64
/// of PEM, or the headers of an encrypted one): that is a live key;
/// otherwise the header stands alone, in prose or over a placeholder.
fn key_material_after(hay: &str, header_end: usize) -> Note {
    let rest = &hay[header_end..];
    let Some(next) = rest.split_once('\n').map(|(_, next)| next.lines().next().unwrap_or("")) else {
        return Note::NoKeyMaterial;
    };
    let next = next.trim().trim_matches(|c| matches!(c, '"' | '\'' | ',' | '|'));
    if is_placeholder(next) {
        return Note::Placeholder;
    }
    let base64 = next.len() >= 40
        && next.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if base64 || next.starts_with("Proc-Type:") { Note::Live } else { Note::NoKeyMaterial }
}

/// Shannon entropy of the bytes, in bits per byte.
fn entropy(b: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in b {
        counts[usize::from(c)] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Decodes base64url (or base64) without padding, up to the first byte
/// that is neither, and at most 2 KB of it.
fn base64url(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len().min(2048) * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s.iter().take(2048) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => break,
        };
        acc = (acc << 6 | u32::from(v)) & 0xffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// `line` with the value of every credential on it masked by `*` (its
/// format's prefix kept), every byte offset unchanged. References and
/// non-credentials are left as they are. Borrowed when nothing is masked.
pub(super) fn mask(line: &str) -> Cow<'_, str> {
    let mut out: Option<Vec<u8>> = None;
    for (i, re) in COMPILED.iter().enumerate() {
        for m in re.find_iter(line.as_bytes()) {
            let Some(found) = judge(i, line, m.range()) else {
                continue;
            };
            if found.note == Note::Reference {
                continue;
            }
            let mut start = found.value.start + found.shown;
            let mut end = found.value.end;
            // Whole characters only, so the result stays UTF-8.
            while !line.is_char_boundary(start) {
                start -= 1;
            }
            while !line.is_char_boundary(end) {
                end += 1;
            }
            out.get_or_insert_with(|| line.as_bytes().to_vec())[start..end].fill(b'*');
        }
    }
    match out {
        // Only whole characters were replaced, by ASCII.
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_default()),
        None => Cow::Borrowed(line),
    }
}

#[cfg(test)]
mod tests;
