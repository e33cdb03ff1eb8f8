//! Candidate feature sets of the second stage, measured by the trainer
//! before any is built into the scanner (`ECP_FEATURES`, comma-separated):
//!
//! - `nopairs`: the words alone, no word pairs;
//! - `code`: the tokens (and pairs) inside code only (fenced blocks and
//!   inline code), the prose's left out;
//! - `codeprose`: code tokens with pairs, prose words alone, in two
//!   vocabularies;
//! - `marks`: behaviour marks beside the evidence: which of a few classes
//!   of token (a secret source, a network or exec sink, a decode, a
//!   persistence place, concealment, a control disabled, a drop host)
//!   occur, in code or prose, and the pairs of classes that co-occur;
//! - `symbolpairs`, `codepairs`: only the pairs with a symbol in them, or
//!   inside code; `mine`: this tokenizer's words and pairs (to compare
//!   with the scanner's own hashing);
//! - `noevidence`: the rules' findings left out;
//! - `buckets=N`: words folded into `N` buckets (a smaller or larger
//!   vocabulary: 65,536 against the scanner's 16,384, session 28);
//! - `place`: each word (and pair) hashed with where it sits — prose, code
//!   (fenced or inline), a heading, the frontmatter — as separate
//!   features; `placeplus`: the placed word beside the plain one;
//!   `placeplus=chf`: only in the places named (p prose, c code, h
//!   heading, f frontmatter); `dup`, its control: a second hash of every
//!   token, whatever its place (session 28);
//! - `ngrams=code|woke|wokelow|all`: the character 3–5-grams of the code
//!   (fenced lines and inline spans), of the lines a rule's finding stands
//!   on (below the refusing threshold: `wokelow`), or of every line, in their own `ngrambuckets=N` (16,384) after the
//!   words', counted among the words (`1/√n`) (session 28).
//!
//! Its tokenizer is the scanner's (`CLASS`'s bytes) with its own hash: a
//! candidate that wins is then built into `scan::classifier`.

use ecp_protocol::scan::classifier::{Features, WORD_BUCKETS};
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Finding};

fn fnv(bytes: impl Iterator<Item = u8>, seed: u64) -> u64 {
    let salt: u64 = std::env::var("ECP_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_symbol(c: u8) -> bool {
    b"|;&$<>(){}[]/\\:=@!`~%+*".contains(&c)
}

/// A token, whether it is inside code, and where it sits: 0 prose, 1
/// code, 2 a heading, 3 the frontmatter.
struct Token {
    text: String,
    code: bool,
    place: u8,
}

/// Whether each line of `body` is the frontmatter's (between a first
/// line `---` and the next).
fn frontmatter(body: &str) -> Vec<bool> {
    let mut out = Vec::new();
    let mut open = false;
    for (n, line) in body.lines().enumerate() {
        let t = line.trim();
        if n == 0 && t == "---" {
            open = true;
            out.push(true);
            continue;
        }
        out.push(open);
        if open && t == "---" {
            open = false;
        }
    }
    out
}

fn tokens(body: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut fenced = false;
    let front = frontmatter(body);
    for (n, line) in body.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        let place = if fenced {
            1
        } else if front[n] {
            3
        } else if t.starts_with('#') {
            2
        } else {
            0
        };
        let b = line.as_bytes();
        let mut inline = false;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'`' {
                inline = !inline;
                i += 1;
                continue;
            }
            if is_word(c) {
                let s = i;
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
                let code = fenced || inline;
                out.push(Token {
                    text: line[s..i].to_ascii_lowercase(),
                    code,
                    place: if code { 1 } else { place },
                });
            } else {
                if is_symbol(c) {
                    let code = fenced || inline;
                    out.push(Token {
                        text: (c as char).to_string(),
                        code,
                        place: if code { 1 } else { place },
                    });
                }
                i += 1;
            }
        }
    }
    out
}

/// The behaviour classes of a token.
const MARKS: [(&str, &[&str]); 9] = [
    (
        "source",
        &[
            "environ",
            "getenv",
            "env",
            "token",
            "secret",
            "secrets",
            "password",
            "passwd",
            "credentials",
            "credential",
            "id_rsa",
            "id_ed25519",
            "aws",
            "ssh",
            "keychain",
            "cookies",
            "wallet",
            "mnemonic",
            "api_key",
            "apikey",
            "private_key",
            "github_token",
            "npmrc",
            "pypirc",
            "kube",
            "kubeconfig",
            "clipboard",
            "shadow",
            "history",
        ],
    ),
    (
        "network",
        &[
            "curl",
            "wget",
            "requests",
            "fetch",
            "urllib",
            "urlopen",
            "socket",
            "nc",
            "ncat",
            "axios",
            "webhook",
            "upload",
            "post",
            "scp",
            "rsync",
            "dig",
            "nslookup",
            "invoke_webrequest",
            "iwr",
            "sendto",
            "smtp",
        ],
    ),
    (
        "exec",
        &[
            "eval",
            "exec",
            "subprocess",
            "system",
            "popen",
            "spawn",
            "child_process",
            "sh",
            "bash",
            "iex",
            "invoke",
            "source",
            "execsync",
            "runpy",
            "powershell",
        ],
    ),
    (
        "decode",
        &[
            "base64",
            "b64decode",
            "atob",
            "decode",
            "fromhex",
            "unhexlify",
            "fromcharcode",
            "xxd",
            "chr",
            "frombase64string",
            "rot13",
            "zlib",
            "decompress",
            "gunzip",
        ],
    ),
    (
        "persist",
        &[
            "bashrc",
            "zshrc",
            "bash_profile",
            "crontab",
            "cron",
            "systemd",
            "systemctl",
            "launchagents",
            "authorized_keys",
            "cursorrules",
            "memory",
            "hooks",
            "autostart",
            "startup",
            "rc",
            "profile",
        ],
    ),
    (
        "conceal",
        &[
            "silently",
            "quietly",
            "secretly",
            "hidden",
            "hide",
            "background",
            "nohup",
            "null",
            "disown",
            "unnoticed",
            "mention",
            "reveal",
            "tell",
            "inform",
        ],
    ),
    (
        "disable",
        &[
            "insecure",
            "no_verify",
            "verify",
            "setenforce",
            "disable",
            "disabled",
            "ufw",
            "firewall",
            "antivirus",
            "audit",
            "auditd",
            "bypass",
            "skip",
            "unset",
            "rm",
            "shred",
        ],
    ),
    (
        "drop",
        &[
            "pastebin",
            "ngrok",
            "requestbin",
            "pipedream",
            "telegram",
            "discord",
            "transfer",
            "hastebin",
            "termbin",
            "oast",
            "interactsh",
            "burpcollaborator",
            "trycloudflare",
            "serveo",
        ],
    ),
    (
        "agent",
        &[
            "you",
            "your",
            "assistant",
            "agent",
            "always",
            "never",
            "must",
            "confirmation",
            "approval",
            "permission",
            "future",
            "sessions",
            "remember",
            "instructions",
            "ignore",
        ],
    ),
];

fn marks_of(tokens: &[Token]) -> Vec<String> {
    let mut seen = [[false; 2]; MARKS.len()];
    for t in tokens {
        for (k, (_, words)) in MARKS.iter().enumerate() {
            if words.contains(&t.text.as_str()) {
                seen[k][usize::from(t.code)] = true;
            }
        }
    }
    let mut out = Vec::new();
    for (k, (name, _)) in MARKS.iter().enumerate() {
        for (code, at) in [(false, "prose"), (true, "code")] {
            if seen[k][usize::from(code)] {
                out.push(format!("{name}@{at}"));
            }
        }
    }
    let any: Vec<usize> = (0..MARKS.len()).filter(|&k| seen[k][0] || seen[k][1]).collect();
    for (a, &x) in any.iter().enumerate() {
        for &y in &any[a + 1..] {
            out.push(format!("{}+{}", MARKS[x].0, MARKS[y].0));
        }
    }
    out
}

/// The candidate's word buckets (`buckets=N`, and the n-grams' after
/// them): where the rules' evidence starts in its weights.
pub(crate) fn word_dim() -> usize {
    let kind = std::env::var("ECP_FEATURES").unwrap_or_default();
    let parts: Vec<&str> = kind.split(',').collect();
    let fold = parts
        .iter()
        .find_map(|p| p.strip_prefix("buckets="))
        .map_or(WORD_BUCKETS, |n| n.parse::<usize>().expect("buckets=N"));
    fold + if parts.iter().any(|p| p.starts_with("ngrams=")) { ngram_buckets(&parts) } else { 0 }
}

fn ngram_buckets(parts: &[&str]) -> usize {
    parts
        .iter()
        .find_map(|p| p.strip_prefix("ngrambuckets="))
        .map_or(1 << 14, |n| n.parse().expect("ngrambuckets=N"))
}

/// The text `ngrams=…` reads: the code (fenced lines and inline spans),
/// the lines a rule's finding stands on, or every line.
fn ngram_text(which: &str, body: &str, findings: &[Finding]) -> Vec<String> {
    let mut out = Vec::new();
    // `wokelow`: only the lines of findings below the refusing threshold
    // (as the rules' evidence reads them: a refused skill is refused).
    let low = which == "wokelow";
    let woke: std::collections::BTreeSet<usize> = findings
        .iter()
        .filter(|f| !f.rule_id.starts_with("classifier.") && (!low || f.severity < DEFAULT_THRESHOLD))
        .map(|f| f.line)
        .collect();
    let which = if low { "woke" } else { which };
    let mut fenced = false;
    for (n, line) in body.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        match which {
            "all" => out.push(line.to_lowercase()),
            "woke" if woke.contains(&(n + 1)) => out.push(line.to_lowercase()),
            "code" if fenced => out.push(line.to_lowercase()),
            "code" => {
                for (k, span) in line.split('`').enumerate() {
                    if k % 2 == 1 {
                        out.push(span.to_lowercase());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The features of `body` under the candidate `kind`, from the scanner's
/// own (`base`).
pub(crate) fn apply(kind: &str, body: &str, findings: &[Finding], base: Features) -> Features {
    if kind.is_empty() {
        return base;
    }
    let parts: Vec<&str> = kind.split(',').collect();
    let has = |p: &str| parts.contains(&p);
    let fold = parts
        .iter()
        .find_map(|p| p.strip_prefix("buckets="))
        .map_or(WORD_BUCKETS, |n| n.parse::<usize>().expect("buckets=N"));
    let mut f = base;
    let own_words = has("nopairs")
        || has("symbolpairs")
        || has("codepairs")
        || has("mine")
        || has("code")
        || has("codeprose")
        || has("place")
        || has("placeplus")
        || has("dup")
        || fold != WORD_BUCKETS;
    // `placeplus=ch`: the placed word beside the plain one only in these
    // places (p prose, c code, h heading, f frontmatter).
    let dup: Vec<u8> = parts
        .iter()
        .find_map(|p| p.strip_prefix("placeplus="))
        .map(|l| l.bytes().filter_map(|c| b"pchf".iter().position(|&x| x == c)).map(|k| k as u8).collect())
        .unwrap_or_default();
    let own_words = own_words || !dup.is_empty();
    let toks = if own_words || has("marks") || has("imarks") { tokens(body) } else { Vec::new() };
    if own_words {
        let mut words = Vec::new();
        let bucket = |h: u64| ((h >> 20) % fold as u64) as u32;
        let mut previous: Option<(u64, bool)> = None;
        let mut previous_symbolic = false;
        for t in &toks {
            let prose_only = has("codeprose") && !t.code;
            if has("code") && !t.code {
                previous = None;
                continue;
            }
            let plain = fnv(t.text.bytes(), u64::from(prose_only));
            // `dup`: the control of `placeplus`, a second hash of every
            // token whatever its place.
            let placed = fnv(t.text.bytes(), 100 + if has("dup") { 0 } else { u64::from(t.place) });
            let h = if has("place") { placed } else { plain };
            words.push(bucket(h));
            if has("placeplus") || has("dup") || dup.contains(&t.place) {
                words.push(bucket(placed));
            }
            let symbolic = |x: &str| x.len() == 1 && is_symbol(x.as_bytes()[0]);
            let pair_ok = (!has("symbolpairs") || symbolic(&t.text) || previous_symbolic)
                && (!has("codepairs") || t.code);
            previous_symbolic = symbolic(&t.text);
            if !has("nopairs")
                && !prose_only
                && pair_ok
                && let Some((p, code)) = previous
                && code == t.code
            {
                words.push(bucket(fnv(p.to_le_bytes().into_iter(), h)));
            }
            previous = (!prose_only).then_some((h, t.code));
        }
        words.sort_unstable();
        words.dedup();
        f.words = words;
    }
    if let Some(which) = parts.iter().find_map(|p| p.strip_prefix("ngrams=")) {
        let n_buckets = ngram_buckets(&parts) as u64;
        for line in ngram_text(which, body, findings) {
            let b = line.as_bytes();
            for n in 3..=5 {
                for g in b.windows(n) {
                    // A gram of blanks alone says nothing.
                    if g.iter().all(|c| c.is_ascii_whitespace()) {
                        continue;
                    }
                    let h = fnv(g.iter().copied(), 200 + n as u64);
                    f.words.push(fold as u32 + ((h >> 20) % n_buckets) as u32);
                }
            }
        }
        f.words.sort_unstable();
        f.words.dedup();
    }
    if has("noevidence") {
        f.evidence.clear();
    }
    if has("intent") {
        let evidence = ecp_protocol::scan::classifier::EVIDENCE_BUCKETS as u64;
        let marks = if has("imarks") { marks_of(&toks) } else { Vec::new() };
        for m in super::intent::features(&parts, body, findings, &marks) {
            f.evidence.push(WORD_BUCKETS as u32 + (fnv(m.bytes(), 91) % evidence) as u32);
        }
        f.evidence.sort_unstable();
        f.evidence.dedup();
    }
    if has("marks") {
        let evidence = ecp_protocol::scan::classifier::EVIDENCE_BUCKETS as u64;
        for m in marks_of(&toks) {
            f.evidence.push(WORD_BUCKETS as u32 + (fnv(m.bytes(), 77) % evidence) as u32);
        }
        f.evidence.sort_unstable();
        f.evidence.dedup();
    }
    // The evidence follows the candidate's words (`word_dim`).
    let dim = word_dim() as u32;
    for k in &mut f.evidence {
        *k = *k - WORD_BUCKETS as u32 + dim;
    }
    f
}
