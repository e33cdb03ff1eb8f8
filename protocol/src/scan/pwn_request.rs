//! A workflow that runs a fork's code with the base repository's rights
//! (category `RemoteExecution`, rule id `exec.untrusted-pr-code`): `on:
//! pull_request_target` (which runs with the repository's secrets and a
//! write token, for pull requests from anyone's fork) and a checkout of
//! the pull request's head (`ref: ${{ github.event.pull_request.head.sha
//! }}`, `github.head_ref`, `refs/pull/…`, `gh pr checkout`) in the same
//! workflow: every later step that builds, installs or runs that tree
//! runs a stranger's code with those rights. `High`. A
//! `pull_request_target` workflow that only labels or comments, or
//! checks out the base branch, is the event's intended use and no
//! finding.

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef, finding};
use super::fence::is_fence;
use super::rule::{Lazy, compile, warned_against};
use super::{Category, Finding, Severity};

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![Analyzer { triggers: &["pull_request_target"], run }]
}

/// Lines of a workflow read after its trigger, at most.
const WORKFLOW_LINES: usize = 80;

/// A checkout of the pull request's own tree.
static HEAD_CHECKOUT: Lazy = LazyLock::new(|| {
    compile(
        r"\bref:\s*\$\{\{\s*github\.(?:event\.pull_request\.head\.(?:sha|ref)|head_ref)\s*\}\}|\brefs/pull/|\bgh\s+pr\s+checkout\b|\bgit\s+(?:fetch|checkout)\b[^\n]*\$\{\{\s*github\.(?:event\.pull_request\.head|head_ref)",
    )
});

/// The event as a workflow's trigger (`on: pull_request_target`, a list
/// item or a key), not named in a sentence.
static EVENT: Lazy = LazyLock::new(|| {
    compile(
        r"^\s*(?:on:\s*\[?[^\n]*\bpull_request_target\b|-\s*pull_request_target\b|pull_request_target\s*:)",
    )
});

fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let Some(m) = EVENT.find(line.as_bytes()) else { continue };
        if warned_against(&line[..m.start()]) {
            continue;
        }
        let checks_out_head = body
            .lines_from(l)
            .skip(1)
            .take(WORKFLOW_LINES)
            .take_while(|(_, t)| !is_fence(t))
            .any(|(_, t)| HEAD_CHECKOUT.is_match(t.as_bytes()));
        if checks_out_head {
            let at = line.find("pull_request_target").unwrap_or(0);
            let severity = body.unless_explained(Severity::High, l, at..line.len());
            out.push(finding("exec.untrusted-pr-code", Category::RemoteExecution, severity, l, line, at));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit};
    use crate::scan::{Category::RemoteExecution, Severity::*};

    const HEAD: &str = "```yaml\non:\n  pull_request_target:\n    types: [opened]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n      - run: npm install && npm test\n```\n";

    #[test]
    fn a_fork_s_head_checked_out_under_pull_request_target_is_high() {
        assert_hit(HEAD, "exec.untrusted-pr-code", RemoteExecution, High, 3);
        let inline = HEAD.replace("on:\n  pull_request_target:\n", "on: [pull_request_target]\n");
        assert_hit(&inline, "exec.untrusted-pr-code", RemoteExecution, High, 2);
        let gh = "```yaml\non: pull_request_target\njobs:\n  t:\n    steps:\n      - run: gh pr checkout ${{ github.event.number }} && make\n```\n";
        assert_hit(gh, "exec.untrusted-pr-code", RemoteExecution, High, 2);
    }

    #[test]
    fn labelling_or_the_base_branch_under_pull_request_target_is_not() {
        let base = HEAD.replace("ref: ${{ github.event.pull_request.head.sha }}", "ref: main");
        assert_absent(&base, "exec.untrusted-pr-code");
        // `pull_request` runs a fork's code without the secrets.
        assert_absent(&HEAD.replace("pull_request_target", "pull_request"), "exec.untrusted-pr-code");
        // Named in prose.
        assert_absent(
            "Never check out the PR head under `pull_request_target`: use `ref: ${{ github.event.pull_request.head.sha }}` only with `pull_request`.\n",
            "exec.untrusted-pr-code",
        );
        // The head checked out past the fence belongs to another block.
        let split = HEAD.replace("      - uses: actions/checkout@v4\n", "```\n\n```yaml\n");
        assert_absent(&split, "exec.untrusted-pr-code");
    }
}
