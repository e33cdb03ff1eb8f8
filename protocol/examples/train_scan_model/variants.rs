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
//! - `buckets=N`: words folded into `N` buckets (a smaller vocabulary).
//!
//! Its tokenizer is the scanner's (`CLASS`'s bytes) with its own hash: a
//! candidate that wins is then built into `scan::classifier`.

use ecp_protocol::scan::Finding;
use ecp_protocol::scan::classifier::{Features, WORD_BUCKETS};

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

/// A token and whether it is inside code.
struct Token {
    text: String,
    code: bool,
}

fn tokens(body: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
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
                out.push(Token { text: line[s..i].to_ascii_lowercase(), code: fenced || inline });
            } else {
                if is_symbol(c) {
                    out.push(Token { text: (c as char).to_string(), code: fenced || inline });
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
        || fold != WORD_BUCKETS;
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
            let h = fnv(t.text.bytes(), u64::from(prose_only));
            words.push(bucket(h));
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
    f
}
