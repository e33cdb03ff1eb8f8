//! What a credential-looking value turns out to be: a documented example, a
//! placeholder, a default password, a reference to a value kept elsewhere,
//! code rather than data — or strong enough, by length and entropy, to be a
//! live secret for the name it is assigned to. The formats of
//! [`super`] ask these questions of every match before they report it.

use std::ops::Range;

use super::super::rule::contains_ci;
use super::{COMPILED, FORMATS, Kind, Note};

/// Payload fragments of the tokens documentation shows: jwt.io's default
/// token (`"sub": "1234567890"`, `"name": "John Doe"`) and its kin.
pub(super) const JWT_EXAMPLES: &[&str] =
    &["john doe", "\"1234567890\"", "example", "jane doe", "placeholder", "dummy"];

/// `AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, and
/// every other value a vendor's documentation marks as its example.
pub(super) fn is_documented_example(v: &str) -> bool {
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
pub(super) fn is_placeholder(v: &str) -> bool {
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
pub(super) fn is_default_password(v: &str) -> bool {
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
pub(super) fn is_reference(v: &str) -> bool {
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
pub(super) fn is_code(v: &str, name: &str) -> bool {
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

pub(super) fn looks_like_a_path_or_url(v: &str) -> bool {
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
pub(super) fn claimed_by_a_format(v: &str) -> bool {
    FORMATS.iter().zip(COMPILED.iter()).any(|(f, re)| f.kind == Kind::Prefixed && re.is_match(v.as_bytes()))
        || v.starts_with("eyJ")
}

pub(super) fn is_local(host: &str) -> bool {
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
pub(super) fn unquote(range: Range<usize>, v: &str) -> (Range<usize>, &str, bool) {
    let b = v.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'"' | b'\'' | b'`') && b[b.len() - 1] == b[0] {
        (range.start + 1..range.end - 1, &v[1..v.len() - 1], true)
    } else {
        (range, v, false)
    }
}

/// The index of the AWS secret key format, whose matches the generic
/// assignment rule leaves to it.
pub(super) const AWS_SECRET: Option<usize> = {
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
pub(super) fn is_literal_keyword(v: &str) -> bool {
    ["true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "required", "optional"]
        .iter()
        .any(|k| v.eq_ignore_ascii_case(k))
}

/// A value people write for a password in tests and tutorials: a
/// placeholder, a default, or one naming what it stands for.
pub(super) fn is_placeholder_value(v: &str) -> bool {
    is_placeholder(v)
        || is_default_password(v)
        || ["test", "passw", "secret", "token", "apikey", "api-key", "api_key"]
            .iter()
            .any(|w| contains_ci(v.as_bytes(), w.as_bytes()))
}

/// The text a base64 value decodes to, when it is printable ASCII (a
/// Kubernetes Secret's `data` holds its values so).
pub(super) fn base64_text(v: &str) -> Option<String> {
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
pub(super) enum NameClass {
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
pub(super) fn secret_name(name: &str) -> Option<NameClass> {
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
pub(super) fn strong_enough(v: &str, class: NameClass) -> bool {
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
pub(super) fn key_material_after(hay: &str, header_end: usize) -> Note {
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
pub(super) fn entropy(b: &[u8]) -> f64 {
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
pub(in crate::scan) fn base64url(s: &[u8]) -> Vec<u8> {
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
