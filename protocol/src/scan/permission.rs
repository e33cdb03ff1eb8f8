//! Broad grants in a skill's frontmatter (category `PermissionGrant`):
//! `allowed-tools` pre-approving an unrestricted shell (`Bash`, `Bash(*)`)
//! or unrestricted `Write`, web access (`WebFetch`, `WebSearch`) together
//! with a shell, and a `hooks:` block, which runs shell commands on the
//! agent's events.
//!
//! Agent harnesses give these keys real power: the agent runs the granted
//! tools without asking. Yet harmless skills grant them all the time, so
//! every finding here is `Info`, which no threshold refuses: what a node
//! does with a received skill's grants is its intake policy's decision,
//! not the scan score's. Only the frontmatter counts; a `hooks:` in a
//! pre-commit example further down is not a grant.

use super::engine::{Analyzer, Body, LineRef, finding};
use super::{Category, Finding, Severity};
use crate::skill_doc::{self, split_list};

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![Analyzer { triggers: &["allowed-tools", "allowed_tools", "hooks"], run: grants }]
}

/// The frontmatter key a line sets, if it sets one at the top level.
fn top_level_key(line: &str) -> Option<&str> {
    let (key, _) = line.split_once(':')?;
    let key = key.trim_end().trim_matches(|c| c == '"' || c == '\'');
    (!line.starts_with([' ', '\t', '-', '#'])).then_some(key)
}

fn grants(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    // The triggers fire on prose too; only lines of the frontmatter count.
    let parsed = skill_doc::parse(body.text);
    let (end, tools) = match &parsed {
        Ok(doc) if doc.frontmatter.is_some() => {
            (body.text.len() - doc.body.len(), doc.frontmatter.as_ref().map(|f| f.allowed_tools.clone()))
        }
        Ok(_) => return,
        // A frontmatter ECP cannot read is refused by the merge anyway; for
        // `skill scan`, read the grant from its own line.
        Err(_) => (frontmatter_end(body.text), None),
    };
    for &l in lines.iter().take_while(|l| l.start < end) {
        if l.index == 0 {
            continue;
        }
        let line = body.line(l);
        match top_level_key(line) {
            Some("allowed-tools" | "allowed_tools") => {
                let tools = tools.clone().unwrap_or_else(|| {
                    split_list(line.split_once(':').map_or("", |(_, v)| v).trim().trim_matches(['[', ']']))
                });
                report_tools(&tools, l, line, out);
            }
            Some("hooks") => {
                out.push(finding("perm.hooks", Category::PermissionGrant, Severity::Info, l, line, 0))
            }
            _ => {}
        }
    }
}

/// Where a frontmatter that did not parse ends: the first fence line after
/// the opening one, or the end of the text.
fn frontmatter_end(text: &str) -> usize {
    let mut at = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let fence = line.trim_end();
        if i == 0 && fence != "---" {
            return 0;
        }
        if i > 0 && (fence == "---" || fence == "...") {
            return at;
        }
        at += line.len();
    }
    at
}

/// The tool an entry names and whether it is restricted: `Bash(git:*)` is
/// `("Bash", true)`, `Bash` and `Bash(*)` are `("Bash", false)`.
fn tool(entry: &str) -> (&str, bool) {
    let entry = entry.trim().trim_matches(|c| c == '"' || c == '\'');
    match entry.split_once('(') {
        None => (entry, false),
        Some((name, args)) => {
            let args = args.trim_end_matches(')').trim();
            let any = args.is_empty() || args.trim_start_matches([':', '/']).chars().all(|c| c == '*');
            (name.trim(), !any)
        }
    }
}

fn report_tools(tools: &[String], l: LineRef, line: &str, out: &mut Vec<Finding>) {
    // (granted at all, granted without restriction)
    let grant = |want: &[&str]| {
        tools
            .iter()
            .map(|t| tool(t))
            .filter(|(name, _)| want.iter().any(|w| name.eq_ignore_ascii_case(w)))
            .fold((false, false), |(_, open), (_, restricted)| (true, open || !restricted))
    };
    let mut push = |id| out.push(finding(id, Category::PermissionGrant, Severity::Info, l, line, 0));
    let (shell, open_shell) = grant(&["Bash"]);
    if open_shell {
        push("perm.unrestricted-shell");
    }
    if grant(&["Write"]).1 {
        push("perm.unrestricted-write");
    }
    if shell && grant(&["WebFetch", "WebSearch"]).0 {
        push("perm.web-and-shell");
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged};
    use crate::scan::{Category::PermissionGrant, Scanner, Severity::Info};

    fn skill(frontmatter: &str) -> String {
        format!("---\nname: x\ndescription: y\n{frontmatter}---\n# X\n\nDo the thing.\n")
    }

    #[test]
    fn reports_an_unrestricted_shell_and_write() {
        let body = skill("allowed-tools: Bash, Read, Write\n");
        let f = assert_hit(&body, "perm.unrestricted-shell", PermissionGrant, Info, 4);
        assert_eq!(f.excerpt, "allowed-tools: Bash, Read, Write");
        assert_hit(&body, "perm.unrestricted-write", PermissionGrant, Info, 4);
        assert_absent(&body, "perm.web-and-shell");
        assert_hit(
            &skill("allowed-tools: \"Bash(*)\"\n"),
            "perm.unrestricted-shell",
            PermissionGrant,
            Info,
            4,
        );
        assert_hit(
            &skill("allowed_tools: [Bash(:*)]\n"),
            "perm.unrestricted-shell",
            PermissionGrant,
            Info,
            4,
        );
    }

    #[test]
    fn a_restricted_shell_is_no_broad_grant_but_counts_with_the_web() {
        let body = skill("allowed-tools: Read, Grep, Bash(git log:*), Write(docs/**)\n");
        assert_absent(&body, "perm.unrestricted-shell");
        assert_absent(&body, "perm.unrestricted-write");
        let body = skill("allowed-tools:\n  - Bash(npm test:*)\n  - WebFetch\n");
        assert_hit(&body, "perm.web-and-shell", PermissionGrant, Info, 4);
        assert_absent(&skill("allowed-tools: Read, WebFetch, WebSearch\n"), "perm.web-and-shell");
    }

    #[test]
    fn reports_a_hooks_block_in_the_frontmatter_only() {
        let body = skill("hooks:\n  PostToolUse:\n    - command: ./fmt.sh\n");
        assert_hit(&body, "perm.hooks", PermissionGrant, Info, 4);
        let prose = "---\nname: x\ndescription: y\n---\n# Pre-commit\n\nrepos:\n  - repo: local\nhooks:\n  - id: fmt\n";
        assert_absent(prose, "perm.hooks");
        assert_absent("allowed-tools: Bash\nhooks:\n", "perm.unrestricted-shell");
    }

    #[test]
    fn grants_never_reach_a_threshold() {
        let body = skill("allowed-tools: Bash, Write, WebFetch, WebSearch\nhooks:\n  Stop: [echo]\n");
        assert_not_flagged(&body);
        let report = Scanner::standard().scan(&body);
        assert_eq!(report.permission_grants().count(), 4, "{report:?}");
        assert!(report.findings.iter().all(|f| f.severity == Info));
    }

    #[test]
    fn reads_the_grant_from_its_line_when_the_frontmatter_does_not_parse() {
        // A duplicated key ECP reads fails the parse.
        let body = "---\nname: x\nname: y\nallowed-tools: Bash, WebSearch\n---\nbody\n";
        assert_hit(body, "perm.unrestricted-shell", PermissionGrant, Info, 4);
        assert_hit(body, "perm.web-and-shell", PermissionGrant, Info, 4);
    }
}

#[cfg(test)]
#[path = "permission_edge_tests.rs"]
mod edge_tests;
