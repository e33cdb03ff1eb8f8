//! The text the engine walks and analyzers read: a located line
//! ([`LineRef`]), the normalised body with its lines ([`Body`]), the
//! cursor that maps the prefilter's byte offsets to lines, and the
//! haystacks a rule runs on — a line with the lines it spans, a command
//! joined over its `\` continuations, a lower-cased copy.

use crate::scan::Severity;
use crate::scan::code::CodeMap;
use crate::scan::context::Outline;

/// A body line located by the prefilter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scan) struct LineRef {
    /// 0-based line index.
    pub(in crate::scan) index: usize,
    /// Byte offset of the line's first byte in the normalised text.
    pub(in crate::scan) start: usize,
    /// Byte offset just past the line (its `\n`, or the end of the text).
    pub(in crate::scan) end: usize,
}

/// The normalised body, as analyzers see it.
pub(in crate::scan) struct Body<'a> {
    /// Normalised text; its lines correspond one to one to the original's.
    pub(in crate::scan) text: &'a str,
    /// Its structure, once an analyzer's finding has asked for it.
    pub(super) outline: std::cell::OnceCell<Outline>,
    /// Its fenced blocks, once an analyzer has asked for them: found once
    /// per scan for every analyzer that reads them.
    code: std::cell::OnceCell<CodeMap>,
}

impl<'a> Body<'a> {
    pub(in crate::scan) fn new(text: &'a str) -> Body<'a> {
        Body::with_outline(text, std::cell::OnceCell::new())
    }

    /// A body whose outline the line rules may already have built.
    pub(super) fn with_outline(text: &'a str, outline: std::cell::OnceCell<Outline>) -> Body<'a> {
        Body { text, outline, code: std::cell::OnceCell::new() }
    }

    /// The body's fenced blocks (`code::CodeMap`), found the first time
    /// an analyzer asks.
    pub(in crate::scan) fn code_map(&self) -> &CodeMap {
        self.code.get_or_init(|| CodeMap::of(self.text))
    }

    /// `severity`, or [`Severity::Low`] when it would block and the command
    /// at bytes `m` of line `l` is shown in an explanatory context
    /// (`context.rs`), as line rules that are warnable are lowered.
    pub(in crate::scan) fn unless_explained(
        &self,
        severity: Severity,
        l: LineRef,
        m: std::ops::Range<usize>,
    ) -> Severity {
        if severity >= Severity::High
            && self.outline.get_or_init(|| Outline::new(self.text)).explained(self.text, l.index, m, true)
        {
            Severity::Low
        } else {
            severity
        }
    }

    /// The text of a located line, without its line terminator.
    pub(in crate::scan) fn line(&self, l: LineRef) -> &'a str {
        self.text[l.start..l.end].trim_end_matches('\r')
    }

    /// The line `back` lines before `l` (or the first line).
    pub(in crate::scan) fn line_before(&self, l: LineRef, back: usize) -> LineRef {
        let mut line = l;
        for _ in 0..back {
            if line.start == 0 {
                break;
            }
            // The line before ends at the newline before this one.
            let end = line.start - 1;
            let start = newline_before(self.text, end).map_or(0, |i| i + 1);
            line = LineRef { index: line.index - 1, start, end };
        }
        line
    }

    /// The lines from `l` (inclusive) to the end, with their references.
    pub(in crate::scan) fn lines_from(&self, l: LineRef) -> impl Iterator<Item = (LineRef, &'a str)> + 'a {
        let text = self.text;
        let mut start = l.start;
        let mut index = l.index;
        std::iter::from_fn(move || {
            if start > text.len() {
                return None;
            }
            let end = newline_from(text, start);
            let r = LineRef { index, start, end };
            start = end + 1;
            index += 1;
            Some((r, text[r.start..r.end].trim_end_matches('\r')))
        })
    }
}

/// Lower-cased haystacks for the `requires` test, so that it is a plain
/// (SIMD) substring search. Only the haystack is lowered, and the copy is
/// kept for the next rule on the same haystack.
#[derive(Default)]
pub(super) struct Lowered {
    pub(super) text: String,
    /// Address and length of the haystack `text` is the copy of. Valid only
    /// while the haystacks it was made from live: `confirm` resets it.
    pub(super) of: Option<(usize, usize)>,
}

impl Lowered {
    pub(super) fn of(&mut self, hay: &str) -> &str {
        let key = (hay.as_ptr() as usize, hay.len());
        if self.of != Some(key) {
            self.text.clear();
            self.text.push_str(hay);
            self.text.make_ascii_lowercase();
            self.of = Some(key);
        }
        &self.text
    }
}

/// The line before `line`, or "" for the first.
pub(super) fn previous_line(text: &str, line: LineRef) -> &str {
    if line.start == 0 {
        return "";
    }
    let end = line.start - 1;
    let start = newline_before(text, end).map_or(0, |i| i + 1);
    text[start..end].trim_end_matches('\r')
}

/// The offset of the first `\n` of `text` at or after `from`, or the
/// text's end. The memchr crate's search, not `str::find`'s: the standard
/// library's scalar search costs about 200 instructions a call on a
/// typical body's lines, most of it its start (#14's throughput, eighth
/// pass).
pub(in crate::scan) fn newline_from(text: &str, from: usize) -> usize {
    memchr::memchr(b'\n', &text.as_bytes()[from..]).map_or(text.len(), |i| from + i)
}

/// The offset of the last `\n` of `text` before `end`.
pub(in crate::scan) fn newline_before(text: &str, end: usize) -> Option<usize> {
    memchr::memrchr(b'\n', &text.as_bytes()[..end])
}

pub(super) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The line plus up to `lines` following lines, as one slice of the text.
pub(super) fn span(text: &str, line: LineRef, lines: u8) -> &str {
    let mut end = line.end;
    for _ in 0..lines {
        if end >= text.len() {
            break;
        }
        end = newline_from(text, end + 1);
    }
    &text[line.start..end]
}

/// A command continued with trailing backslashes, joined into one line.
pub(super) fn join_continuation(text: &str, line: LineRef) -> Option<String> {
    let mut out = String::new();
    let mut pos = line.start;
    for _ in 0..super::MAX_CONTINUATION_LINES {
        if pos > text.len() {
            break;
        }
        let end = newline_from(text, pos);
        let l = text[pos..end].trim_end_matches('\r');
        match l.strip_suffix('\\') {
            Some(head) => {
                out.push_str(head);
                out.push(' ');
            }
            None => {
                out.push_str(l);
                break;
            }
        }
        if out.len() > super::MAX_CONTINUATION_BYTES {
            break;
        }
        pos = end + 1;
    }
    Some(out)
}

/// Maps byte offsets, which the prefilter reports in increasing order, to
/// lines, counting newlines only once.
#[derive(Default)]
pub(super) struct LineCursor {
    /// Start of the line with index `index`; newlines before it are counted.
    start: usize,
    index: usize,
    /// End of the current line, when one is located.
    end: Option<usize>,
}

impl LineCursor {
    /// The line holding byte `pos` (an ASCII byte, so a char boundary).
    pub(super) fn locate(&mut self, text: &str, pos: usize) -> LineRef {
        if let Some(end) = self.end
            && pos >= self.start
            && pos <= end
        {
            return LineRef { index: self.index, start: self.start, end };
        }
        // The memchr crate's vector searches, which matters here: this is
        // the only other pass over the text. From the located line's end
        // when `pos` is past it: its own bytes hold no newline, and were
        // read twice more per hit on a later line (#14's throughput,
        // tenth pass).
        let from = match self.end {
            Some(end) if pos > end => end,
            _ => self.start.min(pos),
        };
        let seg = &text.as_bytes()[from..pos];
        if let Some(last) = memchr::memrchr(b'\n', seg) {
            self.index += count_newlines(seg);
            self.start = from + last + 1;
        }
        let end = memchr::memchr(b'\n', &text.as_bytes()[pos..]).map_or(text.len(), |i| pos + i);
        self.end = Some(end);
        LineRef { index: self.index, start: self.start, end }
    }
}

/// The number of `\n` in `bytes`. Counting into a byte per chunk of 255
/// lets the compiler compare and add 16 bytes at a time (a `usize` count, or
/// `matches`, which calls memchr per line, is several times slower).
pub(in crate::scan) fn count_newlines(bytes: &[u8]) -> usize {
    bytes.chunks(255).map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n')))).sum()
}
