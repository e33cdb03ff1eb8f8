//! Start-up files written by code (`code.persistent-write`): a Python,
//! JavaScript, PowerShell or other non-shell block that names a shell
//! start-up file or `authorized_keys` (as a literal path, or one built
//! from parts: `os.path.join(os.homedir(), '.zshrc')`) and writes or
//! appends to a file has each string literal it holds from there on read
//! as the shell's `echo '…' >> ~/.zshrc` would be, and scanned again: the
//! `persistence` rules then judge what is written (a fetch, an alias over
//! `sudo`, a preload hook) as they judge it in a shell block, however many
//! lines and literals the program spreads it over.

use super::blocks::Lang;
use super::rescan;
use crate::scan::engine::{Body, LineRef};
use crate::scan::rule::contains_ci;
use crate::scan::{Finding, Severity};

/// The start-up files and key files a program may write: triggers of
/// `persistence`'s rules already.
pub(super) const TRIGGERS: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    "config.fish",
    "authorized_keys",
    // The agent's own instruction files: what a program appends to them
    // is read as the prose the agent will follow.
    "agents.md",
    "claude.md",
    ".cursorrules",
    "copilot-instructions",
];

/// Agent instruction files, as `target` names them.
const AGENT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", ".cursorrules", ".github/copilot-instructions.md"];

/// Lines of a block read after the line naming the file, at most.
const MAX_LINES: usize = 40;
/// Lines above the one naming the file that the writing call may open on.
const CALL_LINES: usize = 3;
/// Literals of a block scanned again, at most.
const MAX_LITERALS: usize = 24;

/// Calls that write or append to a file, in the languages of this module.
const WRITES: &[&[u8]] = &[
    b"\"a\"",
    b"'a'",
    b"\"w\"",
    b"'w'",
    b"appendfile",
    b"writefile",
    b"add-content",
    b"set-content",
    b"out-file",
    b".write(",
    b"write_text",
    b"createwritestream",
    b"openoptions",
    b"os.o_append",
];

/// The file a line names, written as the shell would write it.
fn target(line: &str) -> Option<&'static str> {
    let b = line.as_bytes();
    [
        (&b".bashrc"[..], "~/.bashrc"),
        (b".bash_profile", "~/.bash_profile"),
        (b".zshrc", "~/.zshrc"),
        (b".zprofile", "~/.zprofile"),
        (b".zshenv", "~/.zshenv"),
        (b".profile", "~/.profile"),
        (b"config.fish", "~/.config/fish/config.fish"),
        (b"authorized_keys", "~/.ssh/authorized_keys"),
        (b"agents.md", "AGENTS.md"),
        (b"claude.md", "CLAUDE.md"),
        (b".cursorrules", ".cursorrules"),
        (b"copilot-instructions", ".github/copilot-instructions.md"),
    ]
    .into_iter()
    .find(|(name, _)| contains_ci(b, name))
    .map(|(_, path)| path)
}

/// Scans what the non-shell blocks naming a start-up file write to it.
pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut done: Option<usize> = None;
    let mut seen = rescan::ByLine::default();
    for &r in lines {
        let map = body.code_map();
        let Some(block) = map.block_at(r.index).filter(|b| !matches!(b.lang, Lang::Shell)) else {
            continue;
        };
        let Some(path) = target(body.line(r)) else { continue };
        if done == Some(block.first) {
            continue;
        }
        // The call may open on a line above the one naming the file.
        let back = (r.index - block.first).min(CALL_LINES);
        let from = body.line_before(r, back);
        let rest: Vec<(LineRef, &str)> =
            body.lines_from(from).take(MAX_LINES.min(block.end - from.index)).collect();
        if !rest.iter().any(|(_, l)| WRITES.iter().any(|w| contains_ci(l.as_bytes(), w))) {
            continue;
        }
        done = Some(block.first);
        if AGENT_FILES.contains(&path) {
            instructions_written(body, &rest, out, &mut seen);
            continue;
        }
        let mut echoes = String::from("```bash\n");
        let mut at: Vec<LineRef> = Vec::new();
        for (lr, l) in &rest {
            for lit in literals(l) {
                if at.len() >= MAX_LITERALS {
                    break;
                }
                // Written as a shell line would be: single-quoted, the
                // literal's own single quotes left out.
                let text = lit.replace(['\'', '\n'], " ").replace("\\n", " ");
                if text.trim().is_empty() || target(&text).is_some() {
                    continue;
                }
                echoes.push_str(&format!("echo '{}' >> {path}\n", text.trim()));
                at.push(*lr);
            }
        }
        echoes.push_str("```\n");
        let Some(inner) = rescan::scan(&echoes) else { continue };
        for (k, lr) in at.iter().enumerate() {
            // Only what the write installs: the rest of the literal's
            // findings are the line's own rules' to make.
            let found: Vec<Finding> = inner
                .iter()
                .filter(|f| f.line == k + 2 && f.rule_id.starts_with("persist."))
                .cloned()
                .collect();
            let from = out.len();
            rescan::report("code.persistent-write", &found, Severity::High, false, *lr, out, &mut seen);
            for f in &mut out[from..] {
                f.severity = body.unless_explained(f.severity, *lr, 0..lr.end.saturating_sub(lr.start));
            }
        }
    }
}

/// What a program appends to the agent's instruction files, read as the
/// prose it becomes there: each literal a paragraph, scanned again; the
/// instruction classes found (`instr.*`, `prompt.*`) are the write's.
fn instructions_written(
    body: &Body<'_>,
    rest: &[(LineRef, &str)],
    out: &mut Vec<Finding>,
    seen: &mut rescan::ByLine,
) {
    let mut prose = String::new();
    let mut at: Vec<LineRef> = Vec::new();
    for (lr, l) in rest {
        for lit in literals(l) {
            let text = lit.replace("\\n", " ");
            if at.len() >= MAX_LITERALS || text.split_whitespace().count() < 4 {
                continue;
            }
            prose.push_str(text.trim());
            prose.push_str("\n\n");
            at.push(*lr);
        }
    }
    let Some(inner) = rescan::scan(&prose) else { return };
    for (k, lr) in at.iter().enumerate() {
        let found: Vec<Finding> = inner
            .iter()
            .filter(|f| {
                f.line == 2 * k + 1 && (f.rule_id.starts_with("instr.") || f.rule_id.starts_with("prompt."))
            })
            .cloned()
            .collect();
        let from = out.len();
        rescan::report("code.persistent-write", &found, Severity::High, false, *lr, out, seen);
        for f in &mut out[from..] {
            f.severity = body.unless_explained(f.severity, *lr, 0..lr.end.saturating_sub(lr.start));
        }
    }
}

/// The string literals of a line of code, without their quotes: `"…"`,
/// `'…'` and template literals (`` `…` ``).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if matches!(q, b'"' | b'\'' | b'`') {
            // The closing quote is the first one not escaped.
            let mut j = i + 1;
            while j < b.len() && b[j] != q {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j >= b.len() {
                break;
            }
            out.push(&line[i + 1..j]);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
#[path = "written_tests.rs"]
mod sweep_tests;
