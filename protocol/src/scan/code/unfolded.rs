//! Commands written as text YAML rewrites before a runner reads them: a
//! folded scalar (`run: >`), whose lines YAML joins with blanks into one
//! command line, joined so and scanned again (`code.folded-yaml`). Only
//! findings that refuse (`High` or worse) are reported, on the key's line.
//!
//! HTML character references (`&#124;` for `|`) were read here too, and
//! left out: their trigger `&#` put `#`, the most common byte of Markdown,
//! among the prefilter's key bytes, which cost every scan 1.7 % more
//! instructions (184,882 against 181,751 per typical body, cachegrind).

use std::sync::LazyLock;

use super::rescan;
use crate::scan::engine::{Body, LineRef};
use crate::scan::fence::is_fence;
use crate::scan::rule::{Lazy, compile};
use crate::scan::{Finding, Severity};

/// A folded scalar's indicator after a key.
pub(super) const TRIGGERS: &[&str] = &[": >"];

/// Lines of a folded scalar joined, at most.
const MAX_FOLDED_LINES: usize = 40;
/// Bytes of a folded scalar joined, at most.
const MAX_FOLDED_BYTES: usize = 4096;
/// Texts scanned again per body, at most: each costs a scan.
const MAX_RESCANS: usize = 16;

/// A key whose value a runner executes (CI steps, hooks, container and
/// task definitions), with a folded indicator (`>`, `>-`, `>+`) and
/// nothing after it but a comment.
static FOLDED_COMMAND: Lazy = LazyLock::new(|| {
    compile(
        r"^\s*(?:-\s+)?[\w.-]*(?:run|script|scripts|command|commands|cmd|entrypoint|exec|shell|install|before_script|after_script|post\w*|pre\w*)\s*:\s*>[-+]?\d?\s*(?:#.*)?$",
    )
});

pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut budget = MAX_RESCANS;
    let mut seen = rescan::ByLine::default();
    for &r in lines {
        if budget == 0 {
            return;
        }
        let line = body.line(r);
        if !FOLDED_COMMAND.is_match(line.as_bytes()) {
            continue;
        }
        let Some((id, text)) = folded(body, r, line) else { continue };
        budget -= 1;
        if let Some(inner) = rescan::scan(&text) {
            rescan::report(id, &inner, Severity::High, false, r, out, &mut seen);
        }
    }
}

/// The folded scalar starting below `line` as YAML joins it: its
/// more-indented lines, blanks between, as one shell line.
fn folded(body: &Body<'_>, r: LineRef, line: &str) -> Option<(&'static str, String)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let key_indent = indent(line);
    let mut joined = String::new();
    for (_, l) in body.lines_from(r).skip(1).take(MAX_FOLDED_LINES) {
        if is_fence(l) || !l.trim().is_empty() && indent(l) <= key_indent {
            break;
        }
        if joined.len() + l.len() > MAX_FOLDED_BYTES {
            break;
        }
        let t = l.trim();
        if !t.is_empty() {
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(t);
        }
    }
    (!joined.is_empty()).then(|| ("code.folded-yaml", format!("```bash\n{joined}\n```\n")))
}

#[cfg(test)]
#[path = "unfolded_tests.rs"]
mod sweep_tests;
