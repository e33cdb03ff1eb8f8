//! The reference check: which tools a skill tells the agent to use, and
//! which of them this node does not know. [`check_references`],
//! [`check_document_references`], [`KnownTools`].
//!
//! The rule is documented on [`check_references`].

use std::collections::HashSet;

use super::SkillDocument;

/// Tools and programs a node considers known, for [`check_references`].
///
/// Build one from any list (`KnownTools::from_iter(["git", "Read"])`), or
/// start from [`KnownTools::default`] and [`insert`](KnownTools::insert) more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownTools {
    names: HashSet<String>,
}

/// Common agent tools (Claude Code's) and command-line programs a playbook
/// is likely to name.
// Kept in grouped rows: one name per line would make the list 120 lines.
#[rustfmt::skip]
const DEFAULT_TOOLS: &[&str] = &[
    // Agent tools.
    "Read", "Write", "Edit", "MultiEdit", "Grep", "Glob", "LS", "Bash", "WebFetch", "WebSearch",
    "Task", "TodoWrite", "NotebookEdit", "NotebookRead",
    // Shells and core utilities.
    "bash", "sh", "zsh", "fish", "ls", "cat", "cp", "mv", "rm", "mkdir", "touch", "ln", "chmod",
    "chown", "find", "grep", "rg", "fd", "sed", "awk", "sort", "uniq", "wc", "head", "tail",
    "cut", "tr", "xargs", "tee", "diff", "patch", "echo", "printf", "env", "which", "tar",
    "gzip", "zip", "unzip", "less", "date", "ps", "kill", "top", "du", "df",
    // Version control and forges.
    "git", "gh", "glab",
    // Languages, package managers and build tools.
    "python", "python3", "pip", "pip3", "uv", "poetry", "pytest", "ruff", "black", "mypy",
    "node", "npm", "npx", "yarn", "pnpm", "deno", "bun", "tsc", "eslint", "prettier", "cargo",
    "rustc", "rustup", "clippy", "rustfmt", "go", "gofmt", "make", "cmake", "ninja", "gcc",
    "clang", "java", "javac", "mvn", "gradle", "ruby", "gem", "bundle", "perl", "php",
    "composer", "dotnet",
    // Containers, cloud and services.
    "docker", "podman", "kubectl", "helm", "terraform", "aws", "gcloud", "az", "systemctl",
    "journalctl",
    // Network and data.
    "curl", "wget", "ssh", "scp", "rsync", "jq", "yq", "psql", "mysql", "sqlite3", "redis-cli",
];

impl Default for KnownTools {
    /// A list of common agent tools and CLI programs (`git`, `bash`, `cargo`,
    /// `docker`, `Read`, `Bash`, `WebFetch`, …).
    fn default() -> Self {
        DEFAULT_TOOLS.iter().copied().collect()
    }
}

impl KnownTools {
    /// An empty list: every reference is unknown.
    #[must_use]
    pub fn empty() -> Self {
        KnownTools { names: HashSet::new() }
    }

    /// Whether `name` is known (case-sensitive).
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// Adds a name; returns false if it was already known.
    pub fn insert(&mut self, name: impl Into<String>) -> bool {
        self.names.insert(name.into())
    }

    /// Removes a name; returns false if it was not known.
    pub fn remove(&mut self, name: &str) -> bool {
        self.names.remove(name)
    }

    /// How many names are known.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name is known.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl<S: Into<String>> FromIterator<S> for KnownTools {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        KnownTools { names: iter.into_iter().map(Into::into).collect() }
    }
}

impl<S: Into<String>> Extend<S> for KnownTools {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        self.names.extend(iter.into_iter().map(Into::into));
    }
}

/// The tools a skill refers to, each listed once, in order of first
/// appearance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReferenceReport {
    /// Every tool referenced.
    pub referenced: Vec<String>,
    /// Those of `referenced` that are not in the [`KnownTools`].
    pub unknown: Vec<String>,
}

/// Finds the tool references in a Markdown body and sorts out the unknown
/// ones.
///
/// # What counts as a tool reference
///
/// The rule prefers precision (no false mentions) over recall:
///
/// 1. An inline code span whose whole content, trimmed of spaces, is one
///    token `[A-Za-z][A-Za-z0-9_.+-]*`: `` `git` ``, `` `python3` ``,
///    `` `Read` ``, `` `g++` ``. A span holding a command line
///    (`` `git bisect start` ``) or anything else is prose, not a reference:
///    its first word might be a tool, a path or a variable, and guessing
///    would put noise in the report.
/// 2. Spans are matched within one line, CommonMark style: an opening run of
///    N backticks closes at the next run of exactly N; `` \` `` outside a span
///    is a literal backtick; an unmatched run is literal text.
/// 3. Lines inside fenced code blocks (```` ``` ```` or `~~~`, any
///    indentation, closed by a fence of the same character at least as long,
///    or by the end of the text) are code, not prose, and are skipped.
///    Indented code blocks are not recognised: telling them from list
///    continuation lines needs a full Markdown parser.
/// 4. [`check_document_references`] also counts each entry of the frontmatter
///    `allowed-tools`, minus its argument suffix: `Bash(git:*)` is `Bash`.
///
/// Names are compared case-sensitively: `Bash` (the agent tool) and `bash`
/// (the program) are different entries.
#[must_use]
pub fn check_references(doc_body: &str, known: &KnownTools) -> ReferenceReport {
    let mut report = Collector::new(known);
    scan_body(doc_body, &mut report);
    report.finish()
}

/// Like [`check_references`] on the document's body, with the frontmatter's
/// `allowed-tools` counted first (argument suffixes stripped).
#[must_use]
pub fn check_document_references(doc: &SkillDocument<'_>, known: &KnownTools) -> ReferenceReport {
    let mut report = Collector::new(known);
    for entry in doc.frontmatter.iter().flat_map(|f| &f.allowed_tools) {
        let tool = entry.split('(').next().unwrap_or_default().trim();
        if is_tool_token(tool) {
            report.add(tool);
        }
    }
    scan_body(doc.body, &mut report);
    report.finish()
}

/// Builds a [`ReferenceReport`], deduplicating as it goes.
struct Collector<'k> {
    known: &'k KnownTools,
    seen: HashSet<String>,
    report: ReferenceReport,
}

impl<'k> Collector<'k> {
    fn new(known: &'k KnownTools) -> Self {
        Collector { known, seen: HashSet::new(), report: ReferenceReport::default() }
    }

    fn add(&mut self, tool: &str) {
        if self.seen.insert(tool.to_owned()) {
            self.report.referenced.push(tool.to_owned());
            if !self.known.contains(tool) {
                self.report.unknown.push(tool.to_owned());
            }
        }
    }

    fn finish(self) -> ReferenceReport {
        self.report
    }
}

/// An open fenced code block: its fence character and length.
struct Fence {
    ch: u8,
    len: usize,
}

fn scan_body(body: &str, report: &mut Collector<'_>) {
    let mut fence: Option<Fence> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        match &fence {
            Some(open) => {
                if closes(trimmed, open) {
                    fence = None;
                }
            }
            None => match opens(trimmed) {
                Some(open) => fence = Some(open),
                None => scan_line(line, report),
            },
        }
    }
}

/// A fence opens with 3+ backticks or tildes. A backtick fence's info string
/// may not hold a backtick (CommonMark), which keeps ```` ```git``` ```` on
/// one line an inline span.
fn opens(line: &str) -> Option<Fence> {
    let ch = *line.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = run_len(line.as_bytes(), 0, ch);
    let info = &line[len..];
    (len >= 3 && !(ch == b'`' && info.contains('`'))).then_some(Fence { ch, len })
}

/// A fence closes with a run of its character at least as long, and nothing
/// but whitespace after it.
fn closes(line: &str, open: &Fence) -> bool {
    let len = run_len(line.as_bytes(), 0, open.ch);
    len >= open.len && line[len..].trim().is_empty()
}

fn run_len(bytes: &[u8], start: usize, ch: u8) -> usize {
    bytes[start..].iter().take_while(|&&b| b == ch).count()
}

/// Finds the inline code spans of one line of prose.
fn scan_line(line: &str, report: &mut Collector<'_>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'`') => i += 2,
            b'`' => {
                let open = run_len(bytes, i, b'`');
                let content_start = i + open;
                match find_closing_run(bytes, content_start, open) {
                    Some(close) => {
                        let content = line[content_start..close].trim_matches(' ');
                        if is_tool_token(content) {
                            report.add(content);
                        }
                        i = close + open;
                    }
                    None => i = content_start,
                }
            }
            _ => i += 1,
        }
    }
}

/// The start of the next run of exactly `len` backticks at or after `from`.
fn find_closing_run(bytes: &[u8], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = run_len(bytes, i, b'`');
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// `[A-Za-z][A-Za-z0-9_.+-]*`
fn is_tool_token(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn refs(body: &str) -> Vec<String> {
        check_references(body, &KnownTools::default()).referenced
    }

    #[test]
    fn finds_single_token_spans() {
        assert_eq!(refs("Run `git` then `bash`, `python3` and `g++`."), ["git", "bash", "python3", "g++"]);
    }

    #[test]
    fn ignores_command_line_spans() {
        assert!(refs("Run `git bisect start` and `ls -la`.").is_empty());
    }

    #[test]
    fn ignores_spans_that_are_not_tokens() {
        assert!(refs("`$HOME` `./run.sh` `--force` `1password` `` `a/b` `x()`").is_empty());
    }

    #[test]
    fn trims_spaces_inside_spans() {
        assert_eq!(refs("`` git `` and ` jq `"), ["git", "jq"]);
    }

    #[test]
    fn matches_backtick_runs_of_equal_length() {
        assert_eq!(refs("``a ` b`` then `rg`"), ["rg"]);
        assert_eq!(refs("``cargo``"), ["cargo"]);
    }

    #[test]
    fn treats_unmatched_backticks_as_text() {
        // The `` run has no closing ``, so it is literal and `make` is a span.
        assert_eq!(refs("a `` lone pair, then `make`"), ["make"]);
        // CommonMark pairs the lone tick with the next one: no reference.
        assert!(refs("a ` lone tick, then `make`").is_empty());
        assert!(refs("trailing `").is_empty());
    }

    #[test]
    fn honours_escaped_backticks() {
        assert_eq!(refs(r"\`not code\` and `npm`"), ["npm"]);
    }

    #[test]
    fn does_not_match_spans_across_lines() {
        assert!(refs("start `git\nbash` end").is_empty());
    }

    #[test]
    fn skips_fenced_code_blocks() {
        let body = "Use `git`.\n```bash\necho `date`\n`curl`\n```\nThen `jq`.\n";
        assert_eq!(refs(body), ["git", "jq"]);
    }

    #[test]
    fn skips_tilde_and_indented_fences() {
        let body = "~~~~\n`curl`\n~~~\nstill code `wget`\n~~~~~\n1. step\n   ```\n   `ssh`\n   ```\n`jq`";
        assert_eq!(refs(body), ["jq"]);
    }

    #[test]
    fn unclosed_fence_runs_to_end() {
        assert_eq!(refs("`git`\n```\n`bash`\n"), ["git"]);
    }

    #[test]
    fn backtick_fence_needs_clean_info_string() {
        // CommonMark: an info string with a backtick means this is no fence.
        assert_eq!(refs("```git```\n`bash`"), ["git", "bash"]);
    }

    #[test]
    fn closing_fence_must_match_char_and_length() {
        assert_eq!(refs("````\n```\n`git`\n~~~~\n````\n`bash`"), ["bash"]);
    }

    #[test]
    fn deduplicates_in_order_of_first_appearance() {
        let report = check_references("`zz` `git` `zz` `git` `Read`", &KnownTools::default());
        assert_eq!(report.referenced, ["zz", "git", "Read"]);
        assert_eq!(report.unknown, ["zz"]);
    }

    #[test]
    fn compares_names_case_sensitively() {
        let known = KnownTools::from_iter(["bash"]);
        let report = check_references("`bash` `Bash` `BASH`", &known);
        assert_eq!(report.unknown, ["Bash", "BASH"]);
    }

    #[test]
    fn uses_configured_known_tools() {
        let mut known = KnownTools::empty();
        assert!(known.is_empty());
        assert!(known.insert("mytool"));
        assert!(!known.insert("mytool"));
        known.extend(["other"]);
        assert_eq!(known.len(), 2);
        let report = check_references("`mytool` `git`", &known);
        assert_eq!(report.unknown, ["git"]);
        assert!(known.remove("mytool"));
        assert!(!known.contains("mytool"));
    }

    #[test]
    fn default_knows_common_tools() {
        let known = KnownTools::default();
        for tool in [
            "git", "bash", "sh", "python", "python3", "pip", "npm", "node", "cargo", "rustc", "go", "make",
            "docker", "kubectl", "curl", "jq", "grep", "rg", "sed", "awk", "find", "ls", "cat", "ssh",
            "psql", "sqlite3", "gh", "Read", "Write", "Edit", "Grep", "Glob", "Bash", "WebFetch",
        ] {
            assert!(known.contains(tool), "{tool}");
        }
        assert!(!known.contains("git bisect"));
    }

    #[test]
    fn counts_allowed_tools_first_without_arguments() {
        let text = "---\nname: x\nallowed-tools: Read, Bash(git log:*), mcp__gh__issue, *\n---\n\
                    Use `git` and `Read`.\n";
        let doc = parse(text).unwrap();
        let report = check_document_references(&doc, &KnownTools::default());
        assert_eq!(report.referenced, ["Read", "Bash", "mcp__gh__issue", "git"]);
        assert_eq!(report.unknown, ["mcp__gh__issue"]);
    }

    #[test]
    fn document_without_frontmatter_uses_body_only() {
        let doc = parse("Use `git`.").unwrap();
        assert_eq!(check_document_references(&doc, &KnownTools::default()).referenced, ["git"]);
    }

    #[test]
    fn handles_non_ascii_around_spans() {
        assert_eq!(refs("é `git` ü `日本` `rg`é"), ["git", "rg"]);
    }
}
