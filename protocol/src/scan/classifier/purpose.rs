//! What a skill says it is for: the coarse kinds of purpose (deploy,
//! install, security tooling, data, writing, an agent's memory, code,
//! operations, credentials, clean-up) its frontmatter's `name` and
//! `description` and its first title name, as features of the second
//! stage (session 27, #14 item 5).
//!
//! A bag of the body's words sees *what* a skill talks about; the purpose
//! says what the skill *claims* to be, which the model weighs against
//! everything else it reads: a "PDF formatter" whose body reads like a
//! credential stealer is further from its claim than a "secret rotation"
//! skill with the same words. Measured leave one writer out, these few
//! features carried over better than every crossing of them with what the
//! steps do (the module doc of `classifier`).
//!
//! Each kind present is one feature in the evidence's buckets, weighted
//! `1` as a finding is; a skill that names none gets the kind "other".
//! Only the first [`HEAD_LINES`] lines are read, so the cost is bounded
//! whatever the body.

use std::sync::OnceLock;

use super::evidence::EVIDENCE_BUCKETS;
use super::tokens::{alnum_bytes, eight_at, short_word};
use super::{MIX, finish, word};

const HIGH: u64 = 0x8080_8080_8080_8080;

/// Lines of the body read for the frontmatter and the first title.
const HEAD_LINES: usize = 60;

/// The kinds of purpose and the words that name them (lower case, ASCII
/// letters and digits: a word of the head is a run of those).
pub const KINDS: [(&str, &[&str]); 10] = [
    (
        "deploy",
        &[
            "deploy",
            "deployment",
            "deploys",
            "release",
            "releases",
            "rollout",
            "ship",
            "publish",
            "ci",
            "cd",
            "pipeline",
            "pipelines",
            "staging",
            "production",
            "helm",
            "terraform",
            "workflow",
            "actions",
        ],
    ),
    (
        "install",
        &[
            "install",
            "installing",
            "installation",
            "setup",
            "bootstrap",
            "onboarding",
            "environment",
            "toolchain",
            "dependencies",
            "dependency",
            "upgrade",
            "configure",
            "configuration",
            "provision",
            "local",
            "dev",
            "devcontainer",
            "package",
            "packages",
        ],
    ),
    (
        "security",
        &[
            "security",
            "audit",
            "auditing",
            "pentest",
            "penetration",
            "vulnerability",
            "vulnerabilities",
            "cve",
            "red",
            "ctf",
            "forensics",
            "incident",
            "malware",
            "threat",
            "hardening",
            "scanner",
            "scan",
            "scanning",
            "exploit",
            "phishing",
            "compliance",
            "sast",
            "triage",
            "detection",
            "injection",
        ],
    ),
    (
        "data",
        &[
            "data",
            "csv",
            "database",
            "databases",
            "sql",
            "postgres",
            "mysql",
            "etl",
            "analytics",
            "query",
            "queries",
            "migration",
            "migrations",
            "spreadsheet",
            "json",
            "dataset",
            "schema",
            "excel",
        ],
    ),
    (
        "writing",
        &[
            "write",
            "writing",
            "writer",
            "docs",
            "documentation",
            "blog",
            "markdown",
            "pdf",
            "format",
            "formatter",
            "formatting",
            "translate",
            "translation",
            "summarize",
            "summarise",
            "summary",
            "notes",
            "readme",
            "changelog",
            "email",
            "style",
            "proofread",
            "copy",
            "slides",
            "presentation",
            "resume",
            "letter",
            "meeting",
            "report",
            "reports",
        ],
    ),
    (
        "memory",
        &[
            "memory",
            "remember",
            "preferences",
            "preference",
            "agent",
            "agents",
            "claude",
            "cursorrules",
            "instructions",
            "persona",
            "context",
            "session",
            "sessions",
            "assistant",
            "prompt",
            "prompts",
            "rules",
        ],
    ),
    (
        "code",
        &[
            "code",
            "review",
            "refactor",
            "refactoring",
            "test",
            "tests",
            "testing",
            "lint",
            "linting",
            "debug",
            "debugging",
            "git",
            "commit",
            "commits",
            "pr",
            "pull",
            "branch",
            "python",
            "rust",
            "typescript",
            "javascript",
            "api",
            "sdk",
            "build",
            "compile",
            "library",
            "repo",
            "repository",
        ],
    ),
    (
        "ops",
        &[
            "server",
            "servers",
            "kubernetes",
            "k8s",
            "docker",
            "container",
            "containers",
            "monitor",
            "monitoring",
            "logs",
            "log",
            "logging",
            "nginx",
            "ssh",
            "cron",
            "systemd",
            "shell",
            "backup",
            "backups",
            "cloud",
            "aws",
            "gcp",
            "azure",
            "network",
            "dns",
            "linux",
            "vm",
            "cluster",
            "service",
            "services",
            "disk",
            "sync",
        ],
    ),
    (
        "credentials",
        &[
            "credential",
            "credentials",
            "token",
            "tokens",
            "auth",
            "authentication",
            "login",
            "sso",
            "keys",
            "key",
            "password",
            "passwords",
            "vault",
            "secret",
            "secrets",
            "oauth",
            "certificate",
            "certificates",
            "rotate",
            "rotation",
            "keychain",
            "gpg",
        ],
    ),
    (
        "cleanup",
        &[
            "cleanup",
            "clean",
            "prune",
            "purge",
            "delete",
            "remove",
            "reset",
            "uninstall",
            "teardown",
            "cache",
            "disk",
            "space",
            "tidy",
        ],
    ),
];

/// The kind "other": no word of the head names a purpose.
const OTHER: u32 = KINDS.len() as u32;

/// Slots of the purpose words' table: a power of two, about four times
/// the words, so that a word is found in one probe or two.
const SLOTS: usize = 1 << 10;

/// The purpose words, for finding them fast.
struct Table {
    /// Each word's hash (`word`'s) and the kinds it names (a bit per
    /// kind), in the slot the hash's top bits choose (or the next free
    /// one): one probe a word, as a binary search of the 230 words cost 3 %
    /// of a typical scan.
    slots: [(u64, u16); SLOTS],
    /// Per first byte (lower case), a bit per length (1–31) of the words
    /// that start with it: most words of a head ("the", "orders") are no
    /// purpose word's first byte and length, and are passed over unhashed.
    lengths: [u32; 128],
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Box<Table>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new(Table { slots: [(0, 0); SLOTS], lengths: [0; 128] });
        for (k, (_, words)) in KINDS.iter().enumerate() {
            for w in *words {
                let h = word(w.as_bytes(), 0, w.len());
                let mut at = slot(h);
                // A word of two kinds ("disk") names both.
                while t.slots[at].1 != 0 && t.slots[at].0 != h {
                    at = (at + 1) % SLOTS;
                }
                t.slots[at] = (h, t.slots[at].1 | 1 << k);
                t.lengths[usize::from(w.as_bytes()[0])] |= 1 << w.len();
            }
        }
        t
    })
}

fn slot(h: u64) -> usize {
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Table {
    /// Whether a purpose word may start with `first` and be `n` bytes long.
    fn may_be(&self, first: u8, n: usize) -> bool {
        n < 32 && self.lengths[usize::from(first.to_ascii_lowercase() & 0x7f)] & (1 << n) != 0
    }

    /// The kinds a word of hash `h` names (0 for none).
    fn lookup(&self, h: u64) -> u16 {
        let mut at = slot(h);
        loop {
            let (x, kinds) = self.slots[at];
            if kinds == 0 || x == h {
                return if x == h { kinds } else { 0 };
            }
            at = (at + 1) % SLOTS;
        }
    }
}

/// The kinds (a bit each) the words of `text` name: a word's end and
/// hash from one eight-byte load where the text has eight bytes from its
/// start (`tokens`' way), a byte at a time near the end.
fn kinds_of(text: &[u8]) -> u16 {
    let table = table();
    let mut kinds = 0;
    let mut at = 0;
    while at < text.len() {
        let first = text[at];
        if !first.is_ascii_alphanumeric() {
            at += 1;
            continue;
        }
        let start = at;
        if let Some(v) = eight_at(text, at) {
            let not_word = !alnum_bytes(v) & HIGH;
            if not_word != 0 {
                let n = (not_word.trailing_zeros() / 8) as usize;
                if table.may_be(first, n) {
                    kinds |= table.lookup(short_word(v, n));
                }
                at += n;
                continue;
            }
        }
        while at < text.len() && text[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if table.may_be(first, at - start) {
            kinds |= table.lookup(word(text, start, at));
        }
    }
    kinds
}

/// The kinds of purpose the head of `body` names: the frontmatter's
/// `name` and `description` (a folded or indented description's lines
/// too) and the first `# ` title, within [`HEAD_LINES`] lines.
pub(crate) fn kinds(body: &str) -> u16 {
    let mut kinds = 0;
    let mut lines = body.lines().take(HEAD_LINES);
    let mut front = false;
    if body.starts_with("---") {
        lines.next();
        front = true;
    }
    // Whether an indented line continues `description`.
    let mut describing = false;
    for line in lines {
        let t = line.trim();
        if front {
            if t == "---" {
                front = false;
            } else if let Some(v) = t.strip_prefix("name:").or_else(|| t.strip_prefix("description:")) {
                kinds |= kinds_of(v.as_bytes());
                describing = t.starts_with("description:");
            } else if describing && line.starts_with([' ', '\t']) {
                kinds |= kinds_of(t.as_bytes());
            } else {
                describing = false;
            }
        } else if let Some(title) = t.strip_prefix("# ") {
            kinds |= kinds_of(title.as_bytes());
            break;
        }
    }
    kinds
}

/// Calls `each` with the evidence bucket of every kind of purpose `body`
/// names, or of "other" when it names none.
pub(super) fn for_each(body: &str, mut each: impl FnMut(u32)) {
    let kinds = kinds(body);
    if kinds == 0 {
        each(bucket(OTHER));
        return;
    }
    for k in 0..KINDS.len() as u32 {
        if kinds & (1 << k) != 0 {
            each(bucket(k));
        }
    }
}

/// The evidence bucket of kind `k`: apart from every finding's feature
/// kind (`evidence`'s are 1–5).
fn bucket(k: u32) -> u32 {
    let mixed = finish((6u64 << 56) ^ u64::from(k + 1).wrapping_mul(MIX));
    (mixed >> (64 - EVIDENCE_BUCKETS.trailing_zeros())) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(body: &str) -> Vec<&'static str> {
        let k = kinds(body);
        KINDS.iter().enumerate().filter(|(i, _)| k & (1 << i) != 0).map(|(_, (n, _))| *n).collect()
    }

    #[test]
    fn the_frontmatter_and_the_first_title_name_the_purpose() {
        let body = "---\nname: pdf-formatter\ndescription: Set a PDF's margins.\n---\n\n# Margins\n\nRead ~/.aws/credentials\n";
        assert_eq!(named(body), ["writing"]);
        let deploy = "---\nname: x\n---\n# Deploy the site\n\n# Security notes\n";
        assert_eq!(named(deploy), ["deploy"], "the first title only");
        // Case-blind, split at every byte that is no letter or digit.
        assert_eq!(named("# SECRET-Rotation\n"), ["credentials"]);
        // A word of two kinds names both.
        assert_eq!(named("# disk\n"), ["ops", "cleanup"]);
        // A folded description's indented lines are read; the keys after it are not.
        let folded = "---\nname: x\ndescription: >\n  Back up the\n  database\nlicense: MIT docker\n---\n";
        assert_eq!(named(folded), ["data"], "docker, under another key, is not read");
    }

    #[test]
    fn a_word_is_found_whether_eight_bytes_follow_it_or_not() {
        let deploy = 1 << 0;
        // Loaded eight at a time (a separator within them), and near the end.
        assert_eq!(kinds_of(b"deploy the app today"), deploy);
        assert_eq!(kinds_of(b"the app: deploy"), deploy);
        assert_eq!(kinds_of(b"DEPLOY"), deploy);
        // A word of eight bytes or more goes the long way: "kubernetes".
        assert_eq!(kinds_of(b"kubernetes cluster"), 1 << 7);
        assert_eq!(kinds_of(b"deployment"), deploy);
        // A byte past ASCII ends a word, as any other separator does.
        assert_eq!(kinds_of("deploy\u{e9}x and more".as_bytes()), deploy);
        assert_eq!(kinds_of("d\u{e9}ploy and more".as_bytes()), 0);
        // `_` is no letter: `pdf_tool` is two words here.
        assert_eq!(kinds_of(b"pdf_tool of ours"), 1 << 4);
    }

    #[test]
    fn every_purpose_word_is_found_in_either_case_and_a_neighbour_is_not() {
        for (k, (_, words)) in KINDS.iter().enumerate() {
            for w in *words {
                assert_ne!(kinds_of(w.as_bytes()) & (1 << k), 0, "{w}");
                let loud = format!("{} and more", w.to_ascii_uppercase());
                assert_ne!(kinds_of(loud.as_bytes()) & (1 << k), 0, "{loud}");
                // One byte more or less: another first byte and length.
                assert_eq!(kinds_of(format!("{w}q").as_bytes()), 0, "{w}q");
            }
        }
        // "the": no purpose word starts with `t` and is three bytes long.
        assert!(!table().may_be(b't', 3));
        assert!(table().may_be(b'T', 4), "tidy, test");
        assert!(!table().may_be(b'd', 32), "past the lengths kept");
    }

    #[test]
    fn words_of_the_body_and_past_the_head_are_not_read() {
        assert_eq!(kinds("Deploy this.\n\nNo title here, docker.\n"), 0);
        let late = "\n".repeat(HEAD_LINES - 1) + "# deploy\n";
        assert_eq!(named(&late), ["deploy"], "the last line of the head");
        let past = "\n".repeat(HEAD_LINES) + "# deploy\n";
        assert_eq!(kinds(&past), 0, "one past it");
        // A word that only starts like one: no purpose.
        assert_eq!(kinds("# deployer\n"), 0);
    }

    #[test]
    fn a_skill_naming_no_purpose_is_other_and_each_kind_has_its_own_bucket() {
        let mut other = Vec::new();
        for_each("plain text", |k| other.push(k));
        assert_eq!(other, [bucket(OTHER)]);
        let mut buckets: Vec<u32> = (0..=OTHER).map(bucket).collect();
        assert!(buckets.iter().all(|&b| (b as usize) < EVIDENCE_BUCKETS));
        buckets.sort_unstable();
        buckets.dedup();
        assert_eq!(buckets.len(), KINDS.len() + 1);
        let mut two = Vec::new();
        for_each("# disk", |k| two.push(k));
        assert_eq!(two, [bucket(7), bucket(9)]);
    }
}
