//! Whether a body shows a companion file it runs: the lines naming the
//! file, judged once per file name for every run of it.
//!
//! `companions` asks for every run it finds. Judged afresh each time (a
//! search of the body for the name, then each line naming it read), a
//! body running one file on each of its lines cost a pass over every
//! such line per run — 6 s for 64 KiB of `chmod +x a.sh && ./a.sh`
//! lines — and one long line of them a search back to the line's start
//! per naming too (20 s for 64 KiB). Here the lines naming a file are
//! found and judged once, in one pass; a run then reads only those that
//! can show it, almost always the first.

use std::collections::HashMap;

use super::is_fence;
use crate::scan::engine::LineRef;
use crate::scan::supply::has_url;

/// How far below a line naming a file its code block may open.
const SHOWN_WITHIN: usize = 2;

/// Bytes from a block's fence to a run inside it, at most, for [`holds`]:
/// `shown` is asked for every run found, and a body's size must not
/// multiply its cost.
const MAX_BLOCK_BYTES: usize = 4096;

/// A line naming a file that may show it to a run on another line.
#[derive(Debug, Clone, Copy)]
struct Naming {
    /// Where the line starts: it never shows a run on itself.
    start: usize,
    /// The line shows the file whatever the run (see [`Shown::shown`]).
    shows: bool,
    /// Otherwise, where the code block opening below it starts: it shows
    /// the file unless that block holds the run.
    open: Option<usize>,
}

/// The lines naming each file a body runs, judged on first use.
pub(super) struct Shown<'a> {
    text: &'a str,
    by_name: HashMap<&'a str, Vec<Naming>>,
    /// Where each fence line starts, found on first use.
    fences: Option<Vec<usize>>,
}

impl<'a> Shown<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Shown { text, by_name: HashMap::new(), fences: None }
    }

    /// Whether the body shows the file's content, or writes it, or fetches
    /// it (which the `remote` family judges): a line other than `run`
    /// naming it opens a code block or is the first line of one (a
    /// comment naming the file), has one open within [`SHOWN_WITHIN`]
    /// lines (other than the block holding `run`), writes it (`cat >
    /// x.sh <<EOF`, `tee x.sh`) or has the agent write it ("create
    /// `cli.py` with …"), or names a URL.
    pub(super) fn shown(&mut self, run: LineRef, path: &'a str) -> bool {
        // A folder's run (`./tools/`) is named by the folder: an empty
        // last component would name every byte of the body.
        let name = path.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or(path);
        let text = self.text;
        let fences = self.fences.get_or_insert_with(|| fence_starts(text));
        let namings = self.by_name.entry(name).or_insert_with(|| namings(text, fences, name));
        // At most one block holds a run (the last opened above it), and at
        // most `SHOWN_WITHIN` lines besides the run's open it: the search
        // ends within a few lines.
        namings.iter().any(|n| {
            n.start != run.start && (n.shows || n.open.is_some_and(|open| !holds(text, open, run.start)))
        })
    }
}

/// The lines of `text` naming `name` that may show it, in one pass: lines
/// that cannot show it are left out.
fn namings(text: &str, fences: &[usize], name: &str) -> Vec<Naming> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // The line being read: its start, its end, the last naming on it.
    let mut line: Option<(usize, usize, usize)> = None;
    let mut judge = |(start, end, last): (usize, usize, usize)| {
        if let Some(n) = judged(text, fences, start, end, last) {
            out.push(n);
        }
    };
    for at in memchr::memmem::find_iter(b, name.as_bytes()) {
        match line {
            Some((start, end, _)) if at < end => line = Some((start, end, at)),
            _ => {
                // Only back to the last line's end: a long line naming the
                // file many times is searched once.
                let from = line.map_or(0, |(_, end, _)| end);
                let start = memchr::memrchr(b'\n', &b[from..at]).map_or(from, |i| from + i + 1);
                let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
                if let Some(done) = line {
                    judge(done);
                }
                line = Some((start, end, at));
            }
        }
    }
    if let Some(done) = line {
        judge(done);
    }
    out
}

/// The line from `start` to `end`, naming the file last at `last`, as it
/// may show the file; `None` when it cannot.
fn judged(text: &str, fences: &[usize], start: usize, end: usize, last: usize) -> Option<Naming> {
    let b = text.as_bytes();
    let line = text[start..end].trim_end_matches('\r');
    // What is written before a naming only grows along the line: the last
    // naming's holds what any other's does.
    let before = &text[start..last];
    let previous = (start > 0).then(|| {
        let from = memchr::memrchr(b'\n', &b[..start - 1]).map_or(0, |i| i + 1);
        &text[from..start - 1]
    });
    let shows = is_fence(line)
        || previous.is_some_and(is_fence) && titles(line)
        || line.contains("<<")
        || has_url(line)
        || before.contains('>')
        || before.contains("tee ")
        || starts_word(line.as_bytes(), b"create")
        || starts_word(line.as_bytes(), b"write");
    // A line inside a block has that block's closing fence below it, which
    // opens nothing (`chmod +x x.sh` above `./x.sh` in one block).
    let inside = fences.partition_point(|&f| f < start) % 2 == 1;
    let open = if shows || inside { None } else { block_below(text, end) };
    (shows || open.is_some()).then_some(Naming { start, shows, open })
}

/// Where each fence line of `text` starts, in order: a line lies inside a
/// block when an odd number of them start before it.
fn fence_starts(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        if is_fence(line) {
            out.push(at);
        }
        at += line.len() + 1;
    }
    out
}

/// Whether a block's first line naming a file is its title (`# setup.sh`,
/// `// tools/run.js`, the bare name), which heads the file's content, and
/// not a command run on it (`chmod +x setup/x.sh`, `./setup/x.sh`), which
/// made a companion run on a block's first line read as shown.
fn titles(line: &str) -> bool {
    let t = line.trim_start();
    ["#", "//", "--", ";", "<!--", "rem ", "REM ", "'"].iter().any(|c| t.starts_with(c))
        || !t.trim_end().trim_end_matches(':').contains(char::is_whitespace)
}

/// Whether `word` starts a word of `line`, case aside: "create `x.sh`" has
/// the agent write the file; `postCreateCommand` names a hook that runs it.
fn starts_word(line: &[u8], word: &[u8]) -> bool {
    line.windows(word.len())
        .enumerate()
        .any(|(i, w)| w.eq_ignore_ascii_case(word) && (i == 0 || !line[i - 1].is_ascii_alphanumeric()))
}

/// Where the line opening a code block within [`SHOWN_WITHIN`] lines
/// below the line ending at byte `end` starts.
fn block_below(text: &str, end: usize) -> Option<usize> {
    let mut at = end + 1;
    for line in text.get(at..)?.split('\n').take(SHOWN_WITHIN) {
        if is_fence(line) {
            return Some(at);
        }
        at += line.len() + 1;
    }
    None
}

/// Whether the code block whose fence line starts at `open` holds the line
/// starting at `run`: a block below a line naming the file that is the
/// block running it ("the settings are kept in `x/list`; run them:", then
/// the command) shows the command, not the file.
fn holds(text: &str, open: usize, run: usize) -> bool {
    // Bounded: a block longer than this holding the run is read as
    // showing the file, as before blocks were told apart.
    open < run && run - open <= MAX_BLOCK_BYTES && !text[open..run].split('\n').skip(1).any(is_fence)
}

#[cfg(test)]
#[path = "shown_edge_tests.rs"]
mod edge_tests;
