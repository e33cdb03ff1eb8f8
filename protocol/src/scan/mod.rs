//! The safety scanner (`ECP.md` › Merge, step 2: "a body with no dangerous
//! pattern").
//!
//! One pass over a normalised copy of a skill body; every finding names its
//! rule, category, severity, line and a short excerpt. Whether a body is
//! refused is decided by a severity threshold, not by the scanner.
//!
//! # How a body is scanned
//!
//! 1. `normalize`: hidden characters (zero-width, bidi, tag characters) are
//!    removed and reported, the rest is put in Unicode NFKC, and words split
//!    by empty shell quotes (`c""url`) are joined. Lines stay where they
//!    were. Pure-ASCII bodies skip this step and are not copied.
//! 2. `engine`: one automaton pass (`literals`) over the copy finds the trigger
//!    literals of every rule; each line with a trigger (and the lines before
//!    it that a wrapped phrase or a `\`-continued command may start on, for
//!    the rules whose matches may start before their trigger) is then
//!    checked against the regexes of the triggered rules only, and the
//!    analyzers that look across lines run on the lines that triggered them.
//! 3. Each rule settles its severity from context: `rm -rf ./target` is not
//!    `rm -rf ~`, `DROP TABLE` in a rollback is not `DROP DATABASE` on
//!    production, and a line warning against `curl … | sh` is not an
//!    instruction to run it; nor is `curl … | sh` quoted in a list of
//!    indicators under "do not run these" (`context`). The caller compares severities with a
//!    threshold ([`DEFAULT_THRESHOLD`]).
//!
//! # Rule families
//!
//! One file each: `shell` (destructive commands, reverse shells),
//! `hijack` (remote shells across lines of code, web shells, miners),
//! `injection` (code injection and obfuscation), `addressed` (orders to
//! "the assistant" tucked inside content, asking secrets or hiding), `remote` (two-stage
//! download and run), `exfil` (credential access and exfiltration),
//! `traversal` (path traversal, system writes), `sql`, `privilege`,
//! `persistence`, `prompt` (prompt injection and concealment), `unicode`
//! (hidden characters), `secret` (credentials written into the skill,
//! which no excerpt ever shows), `permission` (broad grants in the
//! frontmatter, reported at `Info`), `code` (a folder: what code blocks
//! do, per language — secrets followed to where they are sent, literals
//! decoded and scanned again wherever they sit, disguised shell words read
//! as the shell reads them, YAML folded commands joined), `supply` (look-alike package and skill names
//! checked against hand-made popular-name lists, package index overrides,
//! installs from URLs, containers handed the user's keys), `trojan`
//! (bundled scripts run unseen, fetching and running
//! "the installer"; `vouched`: code the skill says it carries, run
//! unseen, and clones from unknown hosts run), `controls` (TLS verification, hooks
//! and security tools switched off in code), `tamper` (writes to the
//! agent's instruction files, git hooks and start-up entries, erased logs)
//! `outbound` (private data asked in prose to be sent to a stranger),
//! `disclose` (data carried out through the agent's own output: credential
//! contents asked into a reply or a tool's argument, an image URL filled
//! with the conversation, mail blind-copied to a stranger)
//! and `instruction` (what prose asks, per sentence: approval carried over,
//! persistence beyond the task, trust in other origins, a redefined agent,
//! controls switched off); `foreign` (concealment and persistence asked in
//! German, Dutch, French, Spanish, Italian or Portuguese), `pwn_request`
//! (a workflow running a fork's code under `pull_request_target`) and
//! `autorun` (an editor task run unseen on folder open). `prefixed` says
//! which words a command prefix (`sudo -E`, `env -i`) takes before the
//! command it runs, for the analyzers that track command position. `generalised_tests` holds one test per class
//! of the #14 generalisation pass, each beside its benign look-alike;
//! `recall2_tests` and `recall3_tests` those of sessions 25 and 26's
//! recall passes. Rule ids are `family.name` (`instr.*` for
//! `instruction`, `control.*`, `tamper.*`) and never change meaning. A
//! command quoted (not run) under a heading or lead-in that warns ("## What
//! not to do") is lowered to `Low` (`context`); a runnable block or a step
//! never is.
//! Beside the rules, `classifier` is a second stage: a linear model over
//! hashed words and the rules' findings below the threshold, whose score
//! ([`ScanReport::classifier`]) is reported with the findings and adds at
//! most a `Low` finding; it never refuses alone, only beside a rule's
//! finding (`classifier.corroborated`, which names it). What refuses is
//! then decided from measured precision (`classifier::policy`): a rule
//! that alone refused as many benign skills as malicious ones
//! (`control.hooks-off`, `exfil.instruction`) refuses only beside a finding of another family at `Medium` or the
//! classifier's corroboration, and is lowered to `Medium` otherwise, its
//! message saying so; the per-rule, per-writer table it was chosen from is
//! there.
//! `fence` is the one test of a fenced code block's fence line that every
//! analyzer uses (```` ```x``` ```` is inline code, not a fence), and
//! `guard` turns a panic in the scan of one received body into
//! [`ScanFailed`], which the merge records as that body's refusal
//! ([`Scanner::try_scan`]).
//! The machinery is in `rule` (what a rule is, shared helpers), `context`
//! (whether a match is shown in an explanatory context rather than asked
//! for), `literals` (the trigger automaton), `engine` and `normalize`.
//!
//! # Limits
//!
//! The rules read text, they do not run it: a payload assembled at run time
//! from innocuous pieces, fetched from a URL that serves something else
//! tomorrow, or phrased in words no rule anticipated gets through. The
//! scanner is one layer of the accept policy, not a sandbox.

use serde::{Deserialize, Serialize};

mod addressed;
mod autorun;
pub mod classifier;
mod code;
mod context;
mod controls;
mod disclose;
#[cfg(test)]
mod dos_tests;
#[cfg(test)]
mod edge_tests;
mod engine;
mod exfil;
mod fence;
mod foreign;
#[cfg(test)]
mod fresh_tests;
#[cfg(test)]
mod generalised_tests;
mod guard;
mod hijack;
mod injection;
mod instruction;
mod literals;
mod normalize;
mod outbound;
mod permission;
mod persistence;
#[cfg(test)]
mod precision_s25_tests;
mod prefixed;
mod privilege;
mod prompt;
mod pwn_request;
#[cfg(test)]
mod recall2_tests;
#[cfg(test)]
mod recall3_tests;
mod remote;
mod rule;
mod secret;
#[cfg(test)]
mod seed31_edge_tests;
mod shell;
mod sql;
mod supply;
mod tamper;
mod traversal;
mod trojan;
mod unicode;
mod vouched;

pub use guard::{PANIC_PROBE, ScanFailed, guarded};
pub(crate) use trojan::scripts_run;
pub(crate) use unicode::is_invisible;

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
    /// Cron jobs, shell start-up files, authorized keys: running again later.
    Persistence,
    /// A credential written into the skill: an API key, a token, a private
    /// key block, a password. Live-looking ones are
    /// [`SECRET_SEVERITY`] and hold a skill back from sharing
    /// ([`ScanReport::secrets`]).
    Secret,
    /// A broad grant in the frontmatter: `allowed-tools` with an
    /// unrestricted shell or `Write`, web access with a shell, `hooks`.
    /// Always [`Severity::Info`]: common in harmless skills, never a reason
    /// to refuse ([`ScanReport::permission_grants`]).
    PermissionGrant,
    /// Code from somewhere nobody reviewed: a package under a look-alike of
    /// a popular name, a replaced or added package index, an install from
    /// a raw URL, a bundled script run unseen.
    SupplyChain,
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
    /// A short excerpt of the matching line (at most ~80 characters), with
    /// any credential on it masked. A `secret` finding says instead what it
    /// found, its format's prefix and its length; never the value.
    pub excerpt: String,
    /// What the rule saw and why it matters, for a person reading the
    /// finding (`"pipe to shell: runs code the skill does not show, or
    /// builds it at run time"`); the excerpt shows the construct itself. Empty in
    /// findings stored before it existed, and then omitted from JSON.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The bundle file the finding is in (`scripts/fill.py`, or
    /// `scripts/c.tar.gz!src/x.py` inside an archive); `None` for
    /// `SKILL.md`. Written to JSON only when set, so a finding in a body
    /// reads as it always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The [`Finding::message`] of a rule: its name in words and why its
/// family matters.
pub(crate) fn message(rule_id: &str, category: Category) -> String {
    // One allocation: a scan of a typical body is a few microseconds.
    let name = rule_id.split_once('.').map_or(rule_id, |(_, n)| n);
    let why = category.why();
    let mut m = String::with_capacity(name.len() + 2 + why.len());
    // Pieces between the dashes copied whole, not pushed a char at a time
    // (450 instructions a finding, #14's throughput, tenth pass).
    let mut piece = 0;
    for dash in name.bytes().enumerate().filter(|&(_, c)| c == b'-').map(|(i, _)| i) {
        m.push_str(&name[piece..dash]);
        m.push(' ');
        piece = dash + 1;
    }
    m.push_str(&name[piece..]);
    m.push_str(": ");
    m.push_str(why);
    m
}

impl Category {
    /// Why a finding of this family matters, in a few words.
    pub fn why(self) -> &'static str {
        match self {
            Category::DestructiveShell => "a command that destroys data or the system when run",
            Category::CodeInjection => "runs code the skill does not show, or builds it at run time",
            Category::Obfuscation => "hides what it runs or sends behind an encoding",
            Category::CredentialAccess => "reads credentials the task has no need for",
            Category::Exfiltration => "sends local data or secrets to another host",
            Category::PathTraversal => "reaches files outside the skill's folder or system paths",
            Category::SqlDestruction => "destroys database data",
            Category::PrivilegeEscalation => "gains privileges or switches a security control off",
            Category::PromptInjection => "tries to change whose instructions the agent follows",
            Category::Concealment => "hides actions from the user or takes their approval away",
            Category::HiddenUnicode => "text a person reading the skill cannot see",
            Category::RemoteExecution => "downloads code and runs it unreviewed",
            Category::Persistence => "makes a change that outlives the task",
            Category::Secret => "a credential written into the skill",
            Category::PermissionGrant => "a broad permission asked in the frontmatter",
            Category::SupplyChain => "installs code from an unreviewed or look-alike source",
        }
    }
}

/// Everything the scanner found in one body.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ScanReport {
    /// Findings in line order.
    pub findings: Vec<Finding>,
    /// The second stage's score ([`classifier`]), in thousandths: how much
    /// the body reads like the malicious skills it was trained on. Beside
    /// the findings, never instead of them: at [`classifier::THRESHOLD`]
    /// it adds a `classifier.suspicious` finding of at most
    /// [`classifier::SEVERITY`], and it never blocks by itself — only
    /// beside a rule's finding of [`classifier::CORROBORATES_BESIDE`] or
    /// worse (`classifier.corroborated`). `None` for
    /// a report made without it (a bundle's, or one stored before it
    /// existed), and then omitted from JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier: Option<u16>,
}

impl ScanReport {
    /// The secret findings that look like live credentials (at least
    /// [`SECRET_SEVERITY`]): what a node holds a skill back from sharing
    /// for. Documented examples, placeholders (Low) and values read from
    /// elsewhere (Info) stay in [`findings`](Self::findings) only.
    pub fn secrets(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.category == Category::Secret && f.severity >= SECRET_SEVERITY)
    }

    /// Whether the body holds a credential that looks live.
    pub fn has_secrets(&self) -> bool {
        self.secrets().next().is_some()
    }

    /// The broad grants in the frontmatter (category
    /// [`Category::PermissionGrant`]), for the node's policy on received
    /// skills' permissions.
    pub fn permission_grants(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.category == Category::PermissionGrant)
    }

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
pub struct Scanner {
    engine: engine::Engine,
    /// `family#k` per analyzer, in the engine's order.
    analyzer_names: Vec<String>,
}

impl Scanner {
    /// The full default rule set, compiled once per process.
    pub fn standard() -> &'static Scanner {
        static STANDARD: std::sync::OnceLock<Scanner> = std::sync::OnceLock::new();
        STANDARD.get_or_init(Scanner::build)
    }

    fn build() -> Scanner {
        let mut rules = Vec::new();
        rules.extend(shell::rules());
        rules.extend(injection::rules());
        rules.extend(exfil::rules());
        rules.extend(traversal::rules());
        rules.extend(sql::rules());
        rules.extend(privilege::rules());
        rules.extend(persistence::rules());
        rules.extend(prompt::rules());
        rules.extend(foreign::rules());
        rules.extend(controls::rules());
        rules.extend(tamper::rules());
        rules.extend(unicode::rules());
        rules.extend(secret::rules());
        // Each analyzer is named `family#k` (its place in the family's
        // list) for the bench of the analyzers' shares.
        let families = [
            ("remote", remote::analyzers()),
            ("exfil", exfil::analyzers()),
            ("permission", permission::analyzers()),
            ("instruction", instruction::analyzers()),
            ("tamper", tamper::analyzers()),
            ("code", code::analyzers()),
            ("supply", supply::analyzers()),
            ("trojan", trojan::analyzers()),
            ("vouched", vouched::analyzers()),
            ("hijack", hijack::analyzers()),
            ("addressed", addressed::analyzers()),
            ("outbound", outbound::analyzers()),
            ("disclose", disclose::analyzers()),
            ("pwn_request", pwn_request::analyzers()),
            ("autorun", autorun::analyzers()),
        ];
        let mut analyzers = Vec::new();
        let mut names = Vec::new();
        for (family, list) in families {
            names.extend((0..list.len()).map(|k| format!("{family}#{k}")));
            analyzers.extend(list);
        }
        Scanner { engine: engine::Engine::new(rules, analyzers), analyzer_names: names }
    }

    /// Scans one body: the rules' findings, and the second stage's score
    /// beside them ([`ScanReport::classifier`]). Linear in the body's
    /// length, and meant never to panic: a body that makes it panic is a
    /// bug to fix (in a debug build, [`PANIC_PROBE`] does on purpose);
    /// bodies received from peers are scanned with [`try_scan`](Self::try_scan).
    pub fn scan(&self, body: &str) -> ScanReport {
        let (mut report, words) = self.scan_scored(body);
        let score = report.classifier.unwrap_or_default();
        // After the score (which the model was trained to read from the
        // rules' own findings), before the corroboration (which may still
        // refuse beside a lowered finding).
        classifier::refine_voice(&mut report.findings, body);
        classifier::refine(&mut report.findings);
        let corroborated = classifier::corroborated_read(score, words, &report.findings);
        for f in classifier::finding(score).into_iter().chain(corroborated) {
            let at = report.findings.partition_point(|g| g.line <= f.line);
            report.findings.insert(at, f);
        }
        report
    }

    /// For the training and the precision tool only: the rules' findings
    /// as the rules made them and the second stage's score, before the
    /// refusal policy (`classifier::policy`) and the corroboration.
    #[doc(hidden)]
    pub fn scan_unrefined(&self, body: &str) -> ScanReport {
        self.scan_scored(body).0
    }

    /// [`scan_unrefined`](Self::scan_unrefined), and how many word features
    /// the score read (whether it may corroborate: `classifier::MIN_WORDS`).
    fn scan_scored(&self, body: &str) -> (ScanReport, usize) {
        guard::probe(body);
        let mut report = self.scan_rules(body);
        let (score, words) = classifier::score_read(body, &report.findings);
        report.classifier = Some(score);
        (report, words)
    }

    /// [`scan`](Self::scan) of a body received from elsewhere: a panic in
    /// it is [`ScanFailed`], for the caller to refuse the body with
    /// (`guard`).
    pub fn try_scan(&self, body: &str) -> Result<ScanReport, ScanFailed> {
        guarded(|| self.scan(body))
    }

    /// The rules' findings alone: what a text scanned again inside a scan
    /// (a decoded payload, a folded string) is judged by.
    pub(crate) fn scan_rules(&self, body: &str) -> ScanReport {
        self.engine.scan(body, engine::Parts::ALL)
    }

    /// For the scan bench only: the analyzers' names (`family#k`), which
    /// [`scan_part`](Self::scan_part) takes by index.
    #[doc(hidden)]
    pub fn analyzer_names(&self) -> &[String] {
        &self.analyzer_names
    }

    /// For the scan bench only: [`scan`](Self::scan) with only one part of
    /// the work after the prefilter's pass, so that the bench can show each
    /// part's share of a scan.
    #[doc(hidden)]
    pub fn scan_part(&self, body: &str, part: ScanPart) -> ScanReport {
        let parts = match part {
            ScanPart::Prefilter => engine::Parts { rules: 0, analyzers: 0 },
            ScanPart::LineRules => engine::Parts { rules: u128::MAX, analyzers: 0 },
            ScanPart::Analyzer(i) => {
                engine::Parts { rules: 0, analyzers: 1u32.checked_shl(i as u32).unwrap_or(0) }
            }
        };
        self.engine.scan(body, parts)
    }
}

/// One part of a scan's work ([`Scanner::scan_part`]), for the scan bench.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum ScanPart {
    /// Normalising and the prefilter's pass, nothing confirmed.
    Prefilter,
    /// That, then the line rules, no analyzer.
    LineRules,
    /// That, then this analyzer (an index into
    /// [`Scanner::analyzer_names`]) alone.
    Analyzer(usize),
}

/// The threshold the default accept policy refuses at.
pub const DEFAULT_THRESHOLD: Severity = Severity::High;

/// The severity of a secret finding that looks like a live credential.
/// Below [`DEFAULT_THRESHOLD`]: a received skill holding its sender's key
/// is the sender's leak, not an attack on the receiver.
pub const SECRET_SEVERITY: Severity = Severity::Medium;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
#[path = "message_tests.rs"]
mod message_tests;
