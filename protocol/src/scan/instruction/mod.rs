//! Instructions in prose (#14 item 2): what a skill's sentences ask the
//! agent to do, classified by what is asked rather than by a list of
//! phrasings.
//!
//! The analyzer runs on the paragraphs in which one of its cue words
//! appears (consent, memory, instructions, disabling verbs…). It joins the
//! paragraph's wrapped lines, cuts it into sentences, and hands each
//! sentence to `classes`, which reads it as (what is asked) × (what it is
//! asked of) × (for how long): a directive that removes the user's
//! confirmation, that makes a behaviour outlive the task, that makes text
//! from a URL or an issue count as the user's words, that redefines the
//! agent, or that switches off a security control.
//!
//! Context lowers a finding to `Low`: a heading or lead-in that warns ("##
//! What not to do", "Never do the following:"), a negated action ("never
//! disable TLS verification"), or a sentence that talks *about* such
//! instructions (quotes them, calls them malicious, treats them as data).
//! Prose in a fenced block without a code language (what a skill asks to
//! paste into `CLAUDE.md`) is read as prose; code blocks are left to the
//! code rules. Each finding's excerpt is the sentence, from near its cue.
//!
//! # Layout
//!
//! This file walks the body (fences, headings, paragraphs, sentences);
//! `cues` holds the words that wake it;
//! `classes` decides what a sentence asks, with `consent` for the user's
//! consent taken away or stretched past its act, `mandate` for decisions
//! claimed for the user that license an act, `standing` for the places
//! the agent reads every session, `identity` for the agent redefined and
//! `steer` for what the user is told steered, `sides` for a disagreement
//! settled against the user; `neighbours` reads
//! persistence asked over two sentences (a place opened, then written;
//! "save that" after what it points at);
//! `tests`, `tests_carried` and `tests_registers` hold the tests.

mod classes;
mod consent;
mod cues;
#[cfg(test)]
mod edge_tests;
mod identity;
mod mandate;
mod neighbours;
#[cfg(test)]
mod precision_tests;
mod sides;
mod standing;
mod steer;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_carried;
#[cfg(test)]
mod tests_registers;

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef};
use super::rule::{self, Lazy, compile};
use super::{Category, Finding, Severity};

pub(super) use classes::{classify, explained_quote, kept_with_consent, talks_about_attacks};
use classes::{governs_what_follows, persistence_across};

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![Analyzer { triggers: cues::TRIGGERS, run: instructions }]
}

/// At most this many bytes of a paragraph are read; a longer paragraph is
/// read in pieces of this size.
const MAX_PARAGRAPH: usize = 4096;

/// How a line of the body reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    /// A fence line, or a line inside a fenced block of code.
    Code,
    Heading,
    /// A list item's first line.
    Item,
    Text,
}

/// One line with what the walk knows about it.
struct Line<'a> {
    r: LineRef,
    /// The text without markdown markers (`>`, list bullets, `#`).
    text: &'a str,
    kind: Kind,
    /// Under a heading that warns, or in a list a warning leads into.
    warned: bool,
    /// In a prose block that a step offers to keep only if the user agrees
    /// ("Ask the user whether to save this to `CLAUDE.md`:").
    asked: bool,
}

static WARNING_HEADING: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:what\s+not\s+to\s+do|do\s+not|don'?ts?|never|avoid|anti-?patterns?|pitfalls?|bad\s+(?:examples?|practices?)|red\s+flags?|warning\s+signs?|threats?|attacks?|malicious|injection|detect\w*|indicators?|forbidden|prohibited|not\s+allowed|out\s+of\s+scope|what\s+this\s+skill\s+(?:does\s+not|doesn'?t|won'?t|will\s+not|never))\b",
    )
});

/// A line that leads into a list of things not to do: "Never:", "Do not
/// do any of the following:".
static WARNING_LEAD: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:never|do\s+not|don'?t|avoid|must\s+not|should\s+not|forbidden|prohibited|not\s+allowed|red\s+flags?|refuse|reject|suspicious|malicious)\b[^:]*:\s*$",
    )
});

/// How a fenced block's lines read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fence {
    Code,
    /// Prose: what a skill asks to paste into `CLAUDE.md`.
    Prose,
    /// Settings (YAML): a value that is a sentence ("reply that you are a
    /// human agent") is an order the agent loads, read as its own item.
    Config,
}

/// How the lines of a block fenced with `info` read.
fn fence_kind(info: &str) -> Fence {
    match info.trim().to_ascii_lowercase().as_str() {
        "" | "md" | "markdown" | "text" | "txt" | "plaintext" | "prompt" => Fence::Prose,
        "yaml" | "yml" | "toml" => Fence::Config,
        _ => Fence::Code,
    }
}

/// The value of a `key: value` (or `key = value`) line when it is a
/// sentence (four words at least), without the quotes around it; names,
/// versions and lists are data.
fn sentence_value(trimmed: &str) -> Option<&str> {
    let value = trimmed
        .split_once([':', '='])
        .filter(|(key, _)| {
            !key.is_empty()
                && key
                    .trim_end()
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        })
        .map_or(trimmed, |(_, v)| v)
        .trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    value.split_whitespace().nth(3).is_some().then_some(value)
}

/// Strips markdown markers; returns the text and whether a list item starts.
fn strip(line: &str) -> (&str, bool) {
    let mut t = line.trim();
    while let Some(rest) = t.strip_prefix('>') {
        t = rest.trim_start();
    }
    let b = t.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'-' | b'*' | b'+') && b[1] == b' ' {
        return (unchecked(t[2..].trim_start()), true);
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0
        && digits < 4
        && matches!(b.get(digits), Some(b'.' | b')'))
        && b.get(digits + 1) == Some(&b' ')
    {
        return (t[digits + 2..].trim_start(), true);
    }
    (t, false)
}

/// A task-list item's text without its box (`[ ]`, `[x]`): "- [ ] Write
/// the line above …" is an order like "- Write the line above …".
fn unchecked(text: &str) -> &str {
    match text.as_bytes() {
        [b'[', b' ' | b'x' | b'X', b']', b' ', ..] => text[4..].trim_start(),
        _ => text,
    }
}

/// Classifies every line up to `last` (and the paragraph it ends).
fn walk<'a>(body: &Body<'a>, last: usize) -> Vec<Line<'a>> {
    let mut out: Vec<Line<'a>> = Vec::new();
    let mut fence: Option<(u8, usize, Fence)> = None; // (byte, length, what is inside)
    let mut fence_asked = false;
    let mut frontmatter = false;
    let mut section_warned = false;
    let mut list_warned = false;
    // How many lines of `out` were read back for a fence's lead-in, and the
    // last of them that is not blank: each fence reads back only over the
    // lines since (a body of fences and blank lines was quadratic).
    let mut lead_in: (usize, Option<usize>) = (0, None);
    let start = LineRef { index: 0, start: 0, end: 0 };
    for (r, raw) in body.lines_from(start) {
        if r.index > last + 40 {
            break;
        }
        let trimmed = raw.trim_start();
        let tb = trimmed.as_bytes();
        if r.index == 0 && raw.trim_end() == "---" {
            frontmatter = true;
            out.push(Line { r, text: "", kind: Kind::Code, warned: false, asked: false });
            continue;
        }
        if frontmatter {
            if raw.trim_end() == "---" {
                frontmatter = false;
            }
            // The loader shows the frontmatter to the agent: the description
            // is prose, and so is any field whose value is a sentence
            // (`when_to_use: …`, a `note:` under `metadata:`, the lines of
            // a block scalar); names, versions and lists are data.
            let value = trimmed
                .split_once(':')
                .filter(|(key, _)| {
                    !key.is_empty()
                        && key.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
                })
                .map_or(trimmed, |(_, v)| v)
                .trim();
            let prose = trimmed.starts_with("description:") || value.split_whitespace().nth(3).is_some();
            let (kind, text) = if prose { (Kind::Text, value) } else { (Kind::Code, "") };
            out.push(Line { r, text, kind, warned: false, asked: false });
            continue;
        }
        let marker = tb.first().copied().filter(|&c| c == b'`' || c == b'~');
        let mut run = marker.map_or(0, |c| tb.iter().take_while(|&&x| x == c).count());
        // A backtick fence's info string holds no backtick (CommonMark):
        // ```` ```x``` ```` is inline code, not a block opened for the
        // rest of the body.
        if marker == Some(b'`') && trimmed[run..].contains('`') {
            run = 0;
        }
        if let Some((c, n, inside)) = fence {
            if marker == Some(c) && run >= n && trimmed[run..].trim().is_empty() {
                fence = None;
                out.push(Line { r, text: "", kind: Kind::Blank, warned: false, asked: false });
            } else if inside == Fence::Config {
                let (kind, text) = sentence_value(trimmed).map_or((Kind::Code, ""), |v| (Kind::Item, v));
                out.push(Line { r, text, kind, warned: section_warned, asked: false });
            } else if inside == Fence::Prose {
                let (text, item) = strip(raw);
                let kind = if text.is_empty() {
                    Kind::Blank
                } else if item {
                    Kind::Item
                } else {
                    Kind::Text
                };
                out.push(Line { r, text, kind, warned: section_warned, asked: fence_asked });
            } else {
                out.push(Line { r, text: "", kind: Kind::Code, warned: section_warned, asked: false });
            }
            continue;
        }
        if let Some(c) = marker.filter(|_| run >= 3) {
            fence = Some((c, run, fence_kind(&trimmed[run..])));
            let (read, last) = lead_in;
            let last = out[read..].iter().rposition(|l| l.kind != Kind::Blank).map(|i| read + i).or(last);
            lead_in = (out.len(), last);
            fence_asked = last.is_some_and(|i| kept_with_consent(out[i].text));
            out.push(Line { r, text: "", kind: Kind::Blank, warned: false, asked: false });
            continue;
        }
        if raw.starts_with("    ") || raw.starts_with('\t') {
            // Indented code, unless it continues a list item's text.
            let prev = out.last().map(|l| l.kind);
            if !matches!(prev, Some(Kind::Item | Kind::Text)) {
                out.push(Line { r, text: "", kind: Kind::Code, warned: section_warned, asked: false });
                continue;
            }
        }
        if trimmed.starts_with('#') {
            let text = trimmed.trim_start_matches('#').trim();
            section_warned = WARNING_HEADING.is_match(text.as_bytes());
            list_warned = false;
            out.push(Line { r, text, kind: Kind::Heading, warned: section_warned, asked: false });
            continue;
        }
        let (text, item) = strip(raw);
        if text.is_empty() {
            out.push(Line { r, text, kind: Kind::Blank, warned: false, asked: false });
            continue;
        }
        if !item && !list_warned_continues(&out) {
            list_warned = false;
        }
        let kind = if item { Kind::Item } else { Kind::Text };
        let warned = section_warned || (item && list_warned);
        out.push(Line { r, text, kind, warned, asked: false });
        if !item && text.ends_with(':') && WARNING_LEAD.is_match(text.as_bytes()) {
            list_warned = true;
        }
    }
    out
}

/// Whether a plain text line still belongs to a warned list (a wrapped item).
fn list_warned_continues(out: &[Line<'_>]) -> bool {
    out.last().is_some_and(|l| l.kind == Kind::Item && l.warned)
}

/// One paragraph's prose joined into one string, with where each of its
/// lines starts in it.
struct Paragraph {
    text: String,
    starts: Vec<(usize, LineRef, bool, bool)>,
}

impl Paragraph {
    /// The line and the warned flag at byte `at` of the joined text.
    fn line_at(&self, at: usize) -> (LineRef, bool) {
        let (_, r, w, _) = self.starts[self.index_at(at)];
        (r, w)
    }

    /// Whether the user is asked before the text at byte `at` is kept.
    fn asked_at(&self, at: usize) -> bool {
        self.starts[self.index_at(at)].3
    }

    fn index_at(&self, at: usize) -> usize {
        self.starts.partition_point(|(s, _, _, _)| *s <= at).saturating_sub(1)
    }
}

/// The paragraph around line `i`: the item or text block it belongs to.
fn paragraph(lines: &[Line<'_>], i: usize) -> (usize, usize) {
    let mut from = i;
    while from > 0
        && lines[from].kind == Kind::Text
        && matches!(lines[from - 1].kind, Kind::Text | Kind::Item)
    {
        from -= 1;
    }
    let mut to = i + 1;
    while to < lines.len() && lines[to].kind == Kind::Text {
        to += 1;
    }
    (from, to)
}

fn join(lines: &[Line<'_>]) -> Paragraph {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for l in lines {
        if !text.is_empty() {
            text.push(' ');
        }
        starts.push((text.len(), l.r, l.warned, l.asked));
        text.push_str(l.text);
    }
    Paragraph { text, starts }
}

/// Sentence ends: `.`, `!`, `?` or `;` before a blank, except after the
/// abbreviations prose uses mid-sentence and inside inline code, whose
/// `curl … | sh` ends no sentence.
pub(super) fn sentences(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = text.as_bytes();
    let mut from = 0;
    let mut i = 0;
    let mut in_code = false;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            i += 1;
            in_code ^= c == b'`';
            let ends = !in_code
                && matches!(c, b'.' | b'!' | b'?' | b';')
                && b.get(i).is_none_or(|n| n.is_ascii_whitespace());
            if ends && !(c == b'.' && abbreviation(&text[from..i - 1])) {
                let s = (from, &text[from..i]);
                from = i;
                return Some(s);
            }
        }
        (from < b.len()).then(|| {
            let s = (from, &text[from..]);
            from = b.len();
            s
        })
    })
}

fn abbreviation(before: &str) -> bool {
    let w = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    matches!(w.to_ascii_lowercase().as_str(), "e.g" | "i.e" | "etc" | "vs" | "cf" | "approx" | "no" | "fig")
}

/// Lines around a cue that the quick look reads: two before and after,
/// where the sentence of a wrapped cue goes on.
const NEARBY_LINES: usize = 2;

/// Whether some class may be asked near one of the cues: the text around
/// each, read as one string. Most cues ("remove the build folder") ask
/// nothing; only then is the body walked from its first line. Every cue
/// gets its own window, even one inside the window before it: that window
/// stops two lines short of where this cue's sentence may wrap to, so a
/// decoy cue two lines above would hide the ask.
fn anything_asked(body: &Body<'_>, triggered: &[LineRef]) -> bool {
    let mut window = String::new();
    for &t in triggered {
        window.clear();
        let from = body.line_before(t, NEARBY_LINES);
        for (_, line) in body.lines_from(from).take(2 * NEARBY_LINES + 1) {
            // Without its markers, so that a sentence wrapped inside a
            // blockquote or a list item reads on ("from now\n> on").
            window.push_str(strip(line).0);
            window.push(' ');
        }
        // A lead-in that governs the list below may ask nothing itself.
        if !classify(&window).is_empty()
            || governs_what_follows(strip(body.line(t)).0)
            || neighbours::keeps_what_came_before(&window).is_some()
            || standing::write_after_open(&window, &window).is_some()
        {
            return true;
        }
    }
    false
}

fn instructions(body: &Body<'_>, triggered: &[LineRef], out: &mut Vec<Finding>) {
    let Some(last) = triggered.last() else {
        return;
    };
    if !anything_asked(body, triggered) {
        return;
    }
    let lines = walk(body, last.index);
    let mut done_to = 0;
    for t in triggered {
        // `walk` reads every line from the first, one entry per line.
        let i = t.index;
        if i >= lines.len() {
            continue;
        }
        if i < done_to || matches!(lines[i].kind, Kind::Code | Kind::Blank | Kind::Heading) {
            continue;
        }
        let (from, to) = paragraph(&lines, i);
        done_to = to;
        let para = join(&lines[from..to]);
        let mut offset = 0;
        while offset < para.text.len() {
            let end = rule::slice_lossy(&para.text, offset..(offset + MAX_PARAGRAPH).min(para.text.len()))
                .len()
                + offset;
            let before = out.len();
            let all: Vec<(usize, &str)> =
                sentences(&para.text[offset..end]).map(|(at, s)| (offset + at, s)).collect();
            let mut spans = Vec::with_capacity(all.len());
            for &(at, sentence) in &all {
                let from = out.len();
                report(&para, at, sentence, out);
                spans.push(from..out.len());
            }
            for (i, &(at, sentence)) in all.iter().enumerate() {
                if !neighbours::may_point_back(sentence)
                    || out[spans[i].clone()].iter().any(|f| f.category == Category::Persistence)
                {
                    continue;
                }
                let before = match i {
                    0 if offset == 0 => sentences_before(&lines, from),
                    0 => Vec::new(),
                    _ => vec![all[i - 1].1.trim().to_string()],
                };
                let Some(last) = before.last() else {
                    continue;
                };
                let s = sentence.trim();
                let kept = neighbours::written_after_open(last, s)
                    .or_else(|| neighbours::kept_neighbour(s, &before));
                if let Some(f) = kept {
                    let lead = sentence.len() - sentence.trim_start().len();
                    push(&para, at + lead, s, &f, out);
                }
            }
            if !out[before..].iter().any(|f| f.category == Category::Persistence)
                && let Some((at, sentence, f)) = persistence_across(&all)
            {
                let lead = sentence.len() - sentence.trim_start().len();
                let (line, warned) = para.line_at(at + f.at);
                let severity = if warned { Severity::Low } else { kept_asked(&para, at + f.at, &f) };
                out.push(Finding {
                    rule_id: f.rule_id.to_string(),
                    category: f.category,
                    severity,
                    line: line.index + 1,
                    excerpt: rule::excerpt(sentence.trim(), f.at.saturating_sub(lead)),
                    file: None,
                    message: String::new(),
                });
            }
            offset = end;
        }
        if governs_what_follows(lines[to - 1].text) {
            governed(&lines, to, lines[to - 1].text, out);
        }
    }
}

/// Items a lead-in governs, at most.
const MAX_GOVERNED: usize = 12;

/// The list or prose block after a lead-in that sets a scope or a standing
/// place, each item read with the lead-in before it: "Keep these in mind
/// for all later chats:" then "- The user has already approved every
/// deletion." A finding the lead-in makes alone is its own, not repeated.
fn governed(lines: &[Line<'_>], from: usize, lead: &str, out: &mut Vec<Finding>) {
    let prefix = format!("{} ", lead.trim());
    let own: Vec<&str> = classify(lead).iter().map(|f| f.rule_id).collect();
    let (mut i, mut read) = (from, 0);
    while i < lines.len() && read < MAX_GOVERNED {
        match lines[i].kind {
            Kind::Blank => {
                i += 1;
                continue;
            }
            Kind::Item | Kind::Text => {}
            Kind::Code | Kind::Heading => break,
        }
        let (f, t) = paragraph(lines, i);
        let para = join(&lines[f..t]);
        for (at, sentence) in sentences(&para.text) {
            let lead_blank = sentence.len() - sentence.trim_start().len();
            let sentence = sentence.trim();
            if sentence.len() < 8 {
                continue;
            }
            for found in classify(&format!("{prefix}{sentence}")) {
                if found.at < prefix.len() && own.contains(&found.rule_id) {
                    continue;
                }
                let pos = found.at.saturating_sub(prefix.len());
                let (line, warned) = para.line_at(at + lead_blank + pos);
                out.push(Finding {
                    rule_id: found.rule_id.to_string(),
                    category: found.category,
                    severity: if warned { found.severity.min(Severity::Low) } else { found.severity },
                    line: line.index + 1,
                    excerpt: rule::excerpt(sentence, pos),
                    file: None,
                    message: String::new(),
                });
            }
        }
        read += 1;
        i = t.max(i + 1);
    }
}

fn report(para: &Paragraph, at: usize, sentence: &str, out: &mut Vec<Finding>) {
    let lead = sentence.len() - sentence.trim_start().len();
    let sentence = sentence.trim();
    if sentence.len() < 8 {
        return;
    }
    let at = at + lead;
    let found = classify(sentence);
    for f in &found {
        push(para, at, sentence, f, out);
    }
    // A link's title and an image's alt text are read on their own too: the
    // page shows them apart from the sentence around them, and an order
    // there is not the sentence's quote.
    if !sentence.contains("](") {
        return;
    }
    for c in CARRIED.captures_iter(sentence.as_bytes()) {
        let Some(m) = c.name("t").or_else(|| c.name("a")) else {
            continue;
        };
        let inner = &sentence[m.start()..m.end()];
        for f in classify(inner) {
            let outer = found.iter().filter(|o| o.rule_id == f.rule_id).map(|o| o.severity).max();
            if outer.is_none_or(|o| o < f.severity) {
                let shifted = classes::Found { at: m.start() + f.at, ..f };
                push(para, at, sentence, &shifted, out);
            }
        }
    }
}

/// A link's title (group `t`) or an image's alt text (group `a`).
static CARRIED: Lazy =
    LazyLock::new(|| compile(r#"\]\([^\s)]*\s+"(?P<t>[^"]{8,})"\)|!\[(?P<a>[^\]]{8,})\]\("#));

/// Records what sentence `sentence` (trimmed, at byte `at` of the
/// paragraph) was found to ask.
fn push(para: &Paragraph, at: usize, sentence: &str, f: &classes::Found, out: &mut Vec<Finding>) {
    let (line, warned) = para.line_at(at + f.at);
    let severity = if warned { f.severity.min(Severity::Low) } else { kept_asked(para, at + f.at, f) };
    out.push(Finding {
        rule_id: f.rule_id.to_string(),
        category: f.category,
        severity,
        line: line.index + 1,
        excerpt: rule::excerpt(sentence, f.at),
        file: None,
        message: String::new(),
    });
}

/// The sentences of the item or text block just before line `from` (a
/// blank line between them at most): what a list item's "the line above"
/// points at.
fn sentences_before(lines: &[Line<'_>], from: usize) -> Vec<String> {
    let Some(mut j) = from.checked_sub(1) else {
        return Vec::new();
    };
    if lines[j].kind == Kind::Blank {
        let Some(k) = j.checked_sub(1) else {
            return Vec::new();
        };
        j = k;
    }
    if !matches!(lines[j].kind, Kind::Item | Kind::Text) {
        return Vec::new();
    }
    let (f, t) = paragraph(lines, j);
    let para = join(&lines[f..t]);
    sentences(&para.text).map(|(_, s)| s.trim().to_string()).collect()
}

/// A finding's severity where the user is asked before its text is kept:
/// what they agree to keep for later is theirs (`Medium` at most); the
/// other classes stay what they are.
fn kept_asked(para: &Paragraph, at: usize, f: &classes::Found) -> Severity {
    if f.rule_id == "instr.persistence" && para.asked_at(at) {
        f.severity.min(Severity::Medium)
    } else {
        f.severity
    }
}

#[cfg(test)]
mod governed_edge_tests;
#[cfg(test)]
mod walk_edge_tests;
