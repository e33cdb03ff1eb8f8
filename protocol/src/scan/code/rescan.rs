//! Scanning text again: what a literal decodes to, or a command as the
//! shell reads it. The inner scan is the whole scanner, at most
//! [`MAX_DEPTH`] deep (a payload encoded in a payload is decoded, one
//! encoded a third time is not).

use std::cell::Cell;
use std::collections::HashMap;

use super::blocks::{self, CodeMap, Lang};
use super::shell_defs::{self, Defs};
use super::shell_words::{self, Vars};
use crate::scan::engine::{Body, LineRef};
use crate::scan::rule::{self, EXCERPT_CHARS};
use crate::scan::{Finding, Scanner, Severity};

/// Nested scans, at most.
const MAX_DEPTH: u8 = 2;
/// Lines before a command searched for the variables it uses.
const MAX_VAR_LINES: usize = 50;

thread_local! {
    static DEPTH: Cell<u8> = const { Cell::new(0) };
}

/// The findings of the whole scanner on `text`, or `None` when the scans
/// are nested too deep already.
pub(super) fn scan(text: &str) -> Option<Vec<Finding>> {
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_DEPTH {
        return None;
    }
    DEPTH.with(|d| d.set(depth + 1));
    let findings = Scanner::standard().scan_rules(text).findings;
    DEPTH.with(|d| d.set(depth));
    Some(findings)
}

/// Disguised commands an analysis may scan again with their context:
/// [`MAX_CONTEXT_RESCANS`] in a body, none in text already scanned again
/// (its context would be scanned once more for every line of it).
pub(super) fn context_rescans() -> usize {
    if DEPTH.with(Cell::get) == 0 { MAX_CONTEXT_RESCANS } else { 0 }
}

/// [`scan`] as it runs `depth` scans deep.
#[cfg(test)]
pub(super) fn scan_at_depth_for_tests(depth: u8, text: &str) -> Option<Vec<Finding>> {
    DEPTH.with(|d| d.set(depth));
    let found = scan(text);
    DEPTH.with(|d| d.set(0));
    found
}

/// A finding on line `r` for an inner finding made on rescanned text: the
/// inner's category and severity, its rule named in the excerpt.
pub(super) fn outer(id: &str, inner: &Finding, r: LineRef) -> Finding {
    let text = format!("{}: {}", inner.rule_id, inner.excerpt);
    let excerpt: String = text.chars().take(EXCERPT_CHARS).collect::<String>().trim().to_string();
    Finding {
        rule_id: id.to_string(),
        category: inner.category,
        severity: inner.severity,
        line: r.index + 1,
        excerpt,
        file: None,
        message: String::new(),
    }
}

/// The findings of a scan per line, kept beside them so that [`report`]
/// reads a line's findings, not every finding made before (a body of many
/// findings on many lines made it quadratic). It indexes what was pushed
/// since it last looked, whoever pushed it; one lives for one analyzer's
/// run, over the scan's findings only.
#[derive(Default)]
pub(super) struct ByLine {
    at: HashMap<usize, Vec<usize>>,
    indexed: usize,
}

impl ByLine {
    /// The findings of `out` on `line` (1-based, as [`Finding::line`]).
    pub(super) fn on<'a>(&'a mut self, out: &'a [Finding], line: usize) -> impl Iterator<Item = &'a Finding> {
        // Findings are only ever added while an analyzer runs; should some
        // be taken away, the index starts again rather than point past them.
        if out.len() < self.indexed {
            self.at.clear();
            self.indexed = 0;
        }
        for (i, f) in out.iter().enumerate().skip(self.indexed) {
            self.at.entry(f.line).or_default().push(i);
        }
        self.indexed = out.len();
        self.at.get(&line).into_iter().flatten().map(move |&i| &out[i])
    }
}

/// Adds the outer findings of `inner` at or above `floor` that the line
/// does not have already under the inner rule's own id. `warned`: the
/// line warns against what it shows ("never run `…`"), which lowers every
/// finding to Low, as it does a shell rule's. `seen`: `out` per line.
pub(super) fn report(
    id: &str,
    inner: &[Finding],
    floor: Severity,
    warned: bool,
    r: LineRef,
    out: &mut Vec<Finding>,
    seen: &mut ByLine,
) {
    for f in inner.iter().filter(|f| f.severity >= floor) {
        let line = r.index + 1;
        let known = seen
            .on(out, line)
            .any(|o| o.rule_id == f.rule_id || o.rule_id == id && o.excerpt.starts_with(&f.rule_id));
        if !known {
            let mut o = outer(id, f, r);
            if warned {
                o.severity = o.severity.min(Severity::Low);
            }
            out.push(o);
        }
    }
}

/// Commands that fetch or evaluate: the lines a disguised command word
/// matters on.
/// `://` (a URL on the line, which `c\ur\l` or `$c` do not name) and a
/// pipe into a variable (`| $X`) wake it for fetchers no literal names.
pub(super) const TRIGGERS: &[&str] = &[
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    "aria2c",
    "eval",
    "fetch",
    "://",
    "| $",
    "|$",
    "\"${",
];

/// Lines of a `{ … }` or `( … )` group piped on as one, at most.
const MAX_GROUP_LINES: usize = 20;

/// A group of commands written over several lines whose output is piped
/// on (`{` … `} | curl …`), as one line: what each command prints goes
/// where the pipe goes, as if they were one command. `None` when the line
/// does not close such a group.
fn piped_group(body: &Body<'_>, r: LineRef, block_first: usize) -> Option<String> {
    let line = body.line(r).trim_start();
    let close = line.as_bytes().first().copied().filter(|c| matches!(c, b'}' | b')'))?;
    if !line[1..].trim_start().starts_with('|') {
        return None;
    }
    let open = if close == b'}' { "{" } else { "(" };
    let back = (r.index - block_first).min(MAX_GROUP_LINES);
    let first = body.line_before(r, back);
    let inside: Vec<&str> = body.lines_from(first).take(back).map(|(_, l)| l.trim()).collect();
    let start = inside.iter().rposition(|l| *l == open || l.ends_with(&format!("= {open}")))?;
    let mut joined = String::from(open);
    for l in &inside[start + 1..] {
        if !l.is_empty() && !l.starts_with('#') {
            joined.push(' ');
            joined.push_str(l.trim_end_matches(';'));
            joined.push(';');
        }
    }
    joined.push(' ');
    joined.push_str(line);
    Some(joined)
}

/// Shell lines whose command words are disguised, normalised and scanned
/// again (`code.normalized-command`), and groups of commands piped on as
/// one (`piped_group`).
pub(super) fn normalized_commands(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut budget = context_rescans();
    let mut seen = ByLine::default();
    // A command word may be an alias or a function the body defines.
    let mut defines: Option<bool> = None;
    for &r in lines {
        let line = body.line(r);
        if line.trim_start().starts_with(['}', ')']) {
            let map = body.code_map();
            if let Some(b) = map.block_at(r.index).filter(|b| matches!(b.lang, Lang::Shell | Lang::Other))
                && let Some(joined) = piped_group(body, r, b.first)
                && let Some(inner) = scan(&format!("```bash\n{joined}\n```\n"))
            {
                report("code.normalized-command", &inner, Severity::High, false, r, out, &mut seen);
            }
        }
        // Most command lines need no more: nothing in command position is
        // quoted, escaped, substituted or a variable.
        let suspect = shell_words::may_disguise_a_command;
        let disguised = suspect(line)
            || memchr::memchr(b'`', line.as_bytes()).is_some()
                && blocks::inline_spans(line).into_iter().any(suspect);
        if !disguised && !*defines.get_or_insert_with(|| shell_defs::may_define(body.text)) {
            continue;
        }
        let map = body.code_map();
        let units: Vec<(&str, Vars)> = match map.block_at(r.index) {
            Some(b) if matches!(b.lang, Lang::Shell | Lang::Other) => {
                let first = b.first;
                in_block(body, r, first, &mut budget, out, &mut seen);
                continue;
            }
            Some(_) => continue,
            None if map.is_code(r.index) || !disguised => continue,
            None => {
                let spans = blocks::inline_spans(line);
                if spans.is_empty() {
                    vec![(line, Vars::default())]
                } else {
                    spans.into_iter().map(|s| (s, Vars::default())).collect()
                }
            }
        };
        for (code, mut vars) in units {
            let words = shell_words::normalize(code, &mut vars);
            if !words.disguised_command {
                continue;
            }
            // Inline code is put back into its sentence, so that the inner
            // rules read the prose around it ("never run `…`") as they
            // would around the plain command.
            let at = code.as_ptr() as usize - line.as_ptr() as usize;
            let text = format!("{}{}{}", &line[..at], words.text, &line[at + code.len()..]);
            if let Some(inner) = scan(&text) {
                report("code.normalized-command", &inner, Severity::High, false, r, out, &mut seen);
            }
        }
    }
}

/// Lines of a block above a disguised command scanned again with it, at
/// most: what they fill (a file, a variable) is then known to the
/// analyses that follow a value to the command.
const MAX_CONTEXT_LINES: usize = 30;
/// Disguised commands scanned again with their context per analysis of a
/// body, at most (each scans up to [`MAX_CONTEXT_LINES`] lines); later
/// ones are scanned alone, so that a hostile body of disguised commands
/// costs a scan per line, not thirty.
const MAX_CONTEXT_RESCANS: usize = 8;

/// The command on line `r` of the shell block starting at line
/// `block_first`, when its command words are disguised: written out with
/// the variables the block sets above it, and scanned again after the
/// block's lines above it (`code.normalized-command`, findings on its
/// line only). Without `budget` left, the command is scanned alone.
fn in_block(
    body: &Body<'_>,
    r: LineRef,
    block_first: usize,
    budget: &mut usize,
    out: &mut Vec<Finding>,
    seen: &mut ByLine,
) {
    let back = (r.index - block_first).min(MAX_VAR_LINES);
    let first = body.line_before(r, back);
    let mut vars = Vars::default();
    let mut defs = Defs::default();
    let above: Vec<&str> = body.lines_from(first).take(back).map(|(_, l)| l).collect();
    for l in &above {
        if memchr::memchr(b'=', l.as_bytes()).is_some() {
            shell_words::normalize(l, &mut vars);
        }
        if shell_defs::may_define(l) {
            defs.learn(l);
        }
    }
    // A call of an alias or a function is read as what it runs.
    let called = defs.apply(body.line(r));
    let words = shell_words::normalize(called.as_deref().unwrap_or(body.line(r)), &mut vars);
    if !words.disguised_command && called.is_none() {
        return;
    }
    if *budget == 0 || above.is_empty() {
        // The command alone, as it reads.
        if let Some(inner) = scan(&words.text) {
            report("code.normalized-command", &inner, Severity::High, false, r, out, seen);
        }
        return;
    }
    *budget -= 1;
    let context = &above[above.len().saturating_sub(MAX_CONTEXT_LINES)..];
    let mut text = String::from("```bash\n");
    for l in context {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&words.text);
    text.push_str("\n```\n");
    if let Some(inner) = scan(&text) {
        // Line 1 is the fence.
        let line = context.len() + 2;
        let found: Vec<Finding> = inner.into_iter().filter(|f| f.line == line).collect();
        report("code.normalized-command", &found, Severity::High, false, r, out, seen);
    }
}

/// The disguised commands of the shell block holding line `r`, each as
/// [`in_block`] scans it, unless the block starts at a line of `done`:
/// for an analysis that found the block decodes or builds a command word
/// the rescan's triggers do not name (`c=$(… | base64 -d)` … `$c -F …`).
/// Returns the block's first line.
pub(super) fn disguised_in_block(
    body: &Body<'_>,
    map: &CodeMap,
    r: LineRef,
    done: &[usize],
    budget: &mut usize,
    out: &mut Vec<Finding>,
    seen: &mut ByLine,
) -> Option<usize> {
    let b = map.block_at(r.index).filter(|b| matches!(b.lang, Lang::Shell | Lang::Other))?;
    if done.contains(&b.first) {
        return None;
    }
    let first = body.line_before(r, r.index - b.first);
    for (l, text) in body.lines_from(first).take(b.end - b.first) {
        // Only a command word that is a variable: the rest is read where
        // this module's triggers wake it (`normalized_commands`).
        if text.trim_start().trim_start_matches('"').starts_with('$') {
            in_block(body, l, b.first, budget, out, seen);
        }
    }
    Some(b.first)
}

/// Whether the text of `line` before `code` (an inline span of it, or a
/// part starting where `code` does) warns against it.
pub(super) fn warned_before(line: &str, code: &str) -> bool {
    let at = (code.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    at > 0 && at <= line.len() && rule::warned_against(&line[..at])
}

#[cfg(test)]
#[path = "rescan_tests.rs"]
mod tests;
