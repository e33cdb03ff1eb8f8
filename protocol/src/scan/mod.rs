//! The safety scanner (`ECP.md` › Merge, safety scan). OWNED BY THE SCANNER HELPER — stub API.
//!
//! One pass over a normalised copy of a skill body; every finding names its
//! rule, category, severity, line and a short excerpt. Whether a body is
//! refused is decided by a severity threshold, not by the scanner.

use serde::{Deserialize, Serialize};

/// How bad a finding is. Ordered: `Info < Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, never a reason to refuse.
    Info,
    /// Usually legitimate (e.g. `sudo apt install`).
    Low,
    /// Suspicious in context.
    Medium,
    /// Refused by the default threshold.
    High,
    /// Clearly hostile.
    Critical,
}

/// The rule family a finding belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// `rm -rf /`, `mkfs`, `dd if=… of=/dev/sda`, fork bombs, force-push to main.
    DestructiveShell,
    /// `eval $…`, `python -c exec(…)`, piping fetched code into an interpreter.
    CodeInjection,
    /// base64/hex blobs decoded into a shell or interpreter.
    Obfuscation,
    /// Reading `/etc/shadow`, `~/.ssh/id_rsa`, cloud keys.
    CredentialAccess,
    /// Sending env vars, keys or files to a URL.
    Exfiltration,
    /// `../` escapes and writes to system paths.
    PathTraversal,
    /// `DROP DATABASE`, `TRUNCATE`, unbounded `DELETE`.
    SqlDestruction,
    /// `sudo`, `chmod 777`, `chown root`, setuid.
    PrivilegeEscalation,
    /// "ignore previous instructions", claims of higher authority.
    PromptInjection,
    /// "do not tell the user", hiding actions.
    Concealment,
    /// Zero-width and bidi control characters.
    HiddenUnicode,
    /// Download a second stage and run it.
    RemoteExecution,
}

/// One rule that matched one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable rule id, e.g. `shell.pipe-to-shell`.
    pub rule_id: String,
    /// The rule's family.
    pub category: Category,
    /// How bad it is.
    pub severity: Severity,
    /// 1-based line number in the original body.
    pub line: usize,
    /// A short excerpt of the matching line (at most ~80 characters).
    pub excerpt: String,
}

/// Everything the scanner found in one body.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ScanReport {
    /// Findings in line order.
    pub findings: Vec<Finding>,
}

impl ScanReport {
    /// The worst severity found, if any.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// Findings at or above `threshold`: the reasons to refuse.
    pub fn blocking(&self, threshold: Severity) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.severity >= threshold)
    }

    /// Whether any finding reaches `threshold`.
    pub fn is_blocked(&self, threshold: Severity) -> bool {
        self.blocking(threshold).next().is_some()
    }
}

/// The compiled rule set. Build once ([`Scanner::standard`]) and share.
#[derive(Debug)]
pub struct Scanner {}

impl Scanner {
    /// The full default rule set, compiled once per process.
    pub fn standard() -> &'static Scanner {
        static STANDARD: std::sync::OnceLock<Scanner> = std::sync::OnceLock::new();
        STANDARD.get_or_init(|| Scanner {})
    }

    /// Scans one body.
    pub fn scan(&self, _body: &str) -> ScanReport {
        ScanReport::default()
    }
}

/// The threshold the default accept policy refuses at.
pub const DEFAULT_THRESHOLD: Severity = Severity::High;
