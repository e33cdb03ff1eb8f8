//! An editor task that runs by itself when the folder is opened (category
//! `Persistence`, rule id `persist.folder-open-task`): VS Code's and
//! Cursor's `"runOptions": { "runOn": "folderOpen" }`. Whatever the task
//! runs, it runs again for everyone who opens the repository, without
//! anyone asking for it. `Info` alone (teams start watchers so, and a
//! finding the classifier could corroborate refused such a skill);
//! `High` when the same task hides what it does (`"reveal": "never"`,
//! `"echo": false`, `"close": true`): a helper that starts unseen on every
//! open is how a committed binary or script gets run. A line that warns
//! against it lowers it to `Info`.

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef, finding};
use super::fence::is_fence;
use super::rule::{Lazy, compile, warned_across_lines, warned_against};
use super::{Category, Finding, Severity};

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![Analyzer { triggers: &["folderopen"], run }]
}

/// Lines of the task object read on each side of its `runOn`, at most.
const TASK_LINES: usize = 10;

static RUN_ON_OPEN: Lazy = LazyLock::new(|| compile(r#""runon"\s*:\s*"folderopen""#));

/// The task's output kept from the user.
static HIDDEN: Lazy = LazyLock::new(|| {
    compile(r#""reveal"\s*:\s*"never"|"echo"\s*:\s*false|"close"\s*:\s*true|"hide"\s*:\s*true"#)
});

fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let Some(m) = RUN_ON_OPEN.find(line.as_bytes()) else { continue };
        // Inside inline code the sentence ends at its backtick: the JSON's
        // own colons are no clause break.
        let before = &line[..m.start()];
        let before = &before[..before.rfind('`').unwrap_or(before.len())];
        if warned_against(before) || warned_across_lines(body.line(body.line_before(l, 1)), before) {
            out.push(finding(
                "persist.folder-open-task",
                Category::Persistence,
                Severity::Info,
                l,
                line,
                m.start(),
            ));
            continue;
        }
        // The task object: the lines around `runOn` inside the same block.
        let from = (1..=TASK_LINES.min(l.index))
            .map(|k| body.line_before(l, k))
            .take_while(|&r| !is_fence(body.line(r)))
            .last()
            .unwrap_or(l);
        let hidden = body
            .lines_from(from)
            .take(l.index - from.index + TASK_LINES + 1)
            .take_while(|(r, t)| r.index <= l.index || !is_fence(t))
            .any(|(_, t)| HIDDEN.is_match(t.as_bytes()));
        let severity = if hidden { Severity::High } else { Severity::Info };
        let severity = body.unless_explained(severity, l, m.start()..m.end());
        out.push(finding("persist.folder-open-task", Category::Persistence, severity, l, line, m.start()));
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
    use crate::scan::{Category::Persistence, Severity::*};

    const TASK: &str = "```json\n{\n  \"tasks\": [{\n    \"label\": \"agent\",\n    \"type\": \"shell\",\n    \"command\": \"./tools/bin/ws-agent --daemon\",\n    \"presentation\": { \"reveal\": \"never\", \"echo\": false },\n    \"runOptions\": { \"runOn\": \"folderOpen\" }\n  }]\n}\n```\n";

    #[test]
    fn a_task_run_unseen_on_folder_open_is_high() {
        assert_hit(TASK, "persist.folder-open-task", Persistence, High, 8);
        let shown = TASK.replace("\"presentation\": { \"reveal\": \"never\", \"echo\": false },\n", "");
        assert_hit(&shown, "persist.folder-open-task", Persistence, Info, 7);
    }

    #[test]
    fn a_warning_or_a_query_about_such_tasks_is_not() {
        assert_severity(
            "Do not add `\"runOptions\": { \"runOn\": \"folderOpen\" }` unless the user asks for it.\n",
            "persist.folder-open-task",
            Info,
        );
        assert_absent(
            "```bash\njq '.tasks[] | select(.runOptions.runOn==\"folderOpen\")' .vscode/tasks.json\n```\n",
            "persist.folder-open-task",
        );
        // A hidden presentation in another block is not this task's.
        let apart = format!(
            "```json\n{{ \"presentation\": {{ \"reveal\": \"never\" }} }}\n```\n\n{}",
            TASK.replace("    \"presentation\": { \"reveal\": \"never\", \"echo\": false },\n", "")
        );
        assert_severity(&apart, "persist.folder-open-task", Info);
    }
}
