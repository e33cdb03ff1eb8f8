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

mod values;

pub(super) use values::base64url;
use values::{
    AWS_SECRET, JWT_EXAMPLES, NameClass, base64_text, claimed_by_a_format, is_code, is_default_password,
    is_documented_example, is_literal_keyword, is_local, is_placeholder, is_placeholder_value, is_reference,
    key_material_after, looks_like_a_path_or_url, secret_name, strong_enough, unquote,
};

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
/// A blank is any the pattern's `\s` takes (form feed and vertical tab
/// too), so the gate passes every line the pattern matches.
fn assigns_to_a_secret_name(line: &str) -> bool {
    let b = line.as_bytes();
    memchr::memchr2_iter(b'=', b':', b).any(|i| {
        let mut j = i;
        while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r' | b'"' | b'\'' | b']') {
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
mod bounds_edge_tests;
#[cfg(test)]
mod edge_tests;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;
