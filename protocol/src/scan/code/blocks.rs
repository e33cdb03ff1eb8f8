//! Where the code of a body is: fenced blocks (with the language their
//! info string names, or one guessed from their content) and inline code
//! spans on the other lines.

use crate::scan::engine::count_newlines;

/// The languages the analyses tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    /// sh, bash, zsh, a console session.
    Shell,
    Python,
    /// JavaScript and TypeScript.
    JavaScript,
    PowerShell,
    /// Anything else: a config file, another language, inline code.
    Other,
}

/// One fenced block: the lines between its fences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block {
    /// 0-based index of the first line inside the block.
    pub(super) first: usize,
    /// Index just past the last line inside (the closing fence, or the end).
    pub(super) end: usize,
    pub(super) lang: Lang,
    /// The block's text, as byte offsets: from its first line to its
    /// closing fence (or the end).
    pub(super) bytes: std::ops::Range<usize>,
}

/// The fenced blocks of a body, in order.
#[derive(Debug, Default)]
pub(in crate::scan) struct CodeMap {
    pub(super) blocks: Vec<Block>,
    /// Where the lines start (byte offsets, in order) that `trojan` reads
    /// as fences: a fence (`fence::is_fence`) with only blanks (ASCII
    /// white space) before it, no list or quote marker; open and close
    /// alternate, whatever their character or length. Found in this map's
    /// pass, which visits every line holding a fence byte: `trojan`
    /// searched the whole body twice for them (#14's throughput).
    pub(in crate::scan) loose_fences: Vec<usize>,
}

/// A fence, after the indent and the list and quote markers a block may
/// sit behind (`fence::fence`: ```` ```x``` ```` is no fence): the tests'
/// reading of a line, which [`CodeMap::of`] does in place.
#[cfg(test)]
fn fence(line: &str) -> Option<(u8, usize, &str)> {
    super::super::fence::fence(line.trim_start_matches([' ', '\t', '>', '-', '*']).trim_start())
}

impl CodeMap {
    /// Finds the fenced blocks of `text`: only a line whose first byte
    /// past its indent and markers is a backtick or tilde is looked at
    /// closer, and those lines are found by searching for the two bytes
    /// (one search per such line, not a pass over every line: this map
    /// is built on most scans, and a line-by-line walk was most of its
    /// cost). The lines between are counted, not visited.
    pub(in crate::scan) fn of(text: &str) -> CodeMap {
        let mut blocks = Vec::new();
        // One allocation for the fences of most bodies (a growing list
        // cost three).
        let mut loose_fences = Vec::with_capacity(16);
        // Fence character, length, first line inside, its byte offset, info.
        let mut open: Option<(u8, usize, usize, usize, &str)> = None;
        let b = text.as_bytes();
        // `index` is the line of `start`; `counted` how far newlines are counted.
        let (mut index, mut counted) = (0, 0);
        let mut from = 0;
        while let Some(k) = memchr::memchr2(b'`', b'~', &b[from..]) {
            let at = from + k;
            let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
            from = (end + 1).min(b.len());
            // Back from `at` over what may stand before a fence, to the
            // line's start: a byte of anything else ends the look, which
            // most lines holding inline code do after a byte or two (a
            // search back for the line's start, and two reads of the
            // bytes before `at`, cost more, #14's throughput, tenth pass).
            // `at` is the line's first fence byte: a loose fence (after
            // blanks alone) starts there.
            let (mut start, mut markers, mut other_blanks) = (at, false, false);
            let clean = loop {
                let Some(&c) = start.checked_sub(1).map(|i| &b[i]) else {
                    break true;
                };
                match c {
                    b'\n' => break true,
                    b' ' | b'\t' => {}
                    b'>' | b'-' | b'*' => markers = true,
                    b'\x0c' | b'\r' => other_blanks = true,
                    _ => break false,
                }
                start -= 1;
            };
            if clean && !other_blanks {
                // Behind indent and markers alone, which `fence` trims:
                // the fence opens at `at`.
                if let Some((c, n, info)) = super::super::fence::fence(&text[at..end]) {
                    if !markers {
                        loose_fences.push(start);
                    }
                    // Counted at fences only: most lines reaching here hold an
                    // inline `code` span, not a fence.
                    index += count_newlines(&b[counted..start]);
                    counted = start;
                    match open {
                        Some((oc, on, first, at, oinfo)) if c == oc && n >= on && info.is_empty() => {
                            blocks.push(Block {
                                first,
                                end: index,
                                lang: lang_of(oinfo, &text[at..start]),
                                bytes: at..start,
                            });
                            open = None;
                        }
                        Some(_) => {}
                        None => open = Some((c, n, index + 1, (end + 1).min(b.len()), info)),
                    }
                }
            } else if clean && !markers && super::super::fence::is_fence(&text[at..end]) {
                // Behind blanks with a form feed or carriage return: no
                // fence of this map's, one of `trojan`'s.
                loose_fences.push(start);
            }
            if end == b.len() {
                break;
            }
        }
        // Past the last line: the line count.
        let index = index + count_newlines(&b[counted..]) + 1;
        if let Some((_, _, first, at, info)) = open {
            let bytes = at..text.len();
            blocks.push(Block {
                first: first.min(index),
                end: index,
                lang: lang_of(info, &text[at..]),
                bytes,
            });
        }
        CodeMap { blocks, loose_fences }
    }

    /// The block holding line `index`, if any.
    pub(super) fn block_at(&self, index: usize) -> Option<&Block> {
        // The first block ending past `index`: only its start is left to check.
        let k = self.blocks.partition_point(|b| b.end <= index);
        self.blocks.get(k).filter(|b| b.first <= index)
    }

    /// Whether line `index` is a fence or inside a block.
    pub(super) fn is_code(&self, index: usize) -> bool {
        let k = self.blocks.partition_point(|b| b.end < index);
        self.blocks.get(k).is_some_and(|b| b.first <= index + 1 && index <= b.end)
    }
}

/// The language an info string names, else the one `code` looks like.
fn lang_of(info: &str, code: &str) -> Lang {
    // The word ends where `char::is_whitespace`, `{` or `,` does: an ASCII
    // info string (nearly all) is cut by its bytes, without decoding chars
    // (#14's throughput, tenth pass).
    let word = if info.is_ascii() {
        let n =
            info.bytes().position(|c| matches!(c, b'\t'..=b'\r' | b' ' | b'{' | b',')).unwrap_or(info.len());
        &info.as_bytes()[..n]
    } else {
        info.split(|c: char| c.is_whitespace() || c == '{' || c == ',').next().unwrap_or("").as_bytes()
    };
    // Lower-cased on the stack: every name below is shorter than the
    // buffer, and a longer word is none of them (a `String` per block
    // was most of this function's cost, #14's speed).
    let mut lower = [0u8; 16];
    let name: &[u8] = match lower.get_mut(..word.len()) {
        Some(buf) => {
            buf.copy_from_slice(word);
            buf.make_ascii_lowercase();
            buf
        }
        None => b"-",
    };
    match name {
        b"sh" | b"bash" | b"shell" | b"zsh" | b"ksh" | b"fish" | b"console" | b"shell-session"
        | b"shellsession" | b"terminal" => Lang::Shell,
        b"python" | b"py" | b"python3" | b"ipython" | b"pycon" => Lang::Python,
        b"js" | b"javascript" | b"ts" | b"typescript" | b"node" | b"jsx" | b"tsx" | b"mjs" | b"cjs" => {
            Lang::JavaScript
        }
        b"powershell" | b"ps1" | b"pwsh" | b"ps" | b"posh" => Lang::PowerShell,
        b"" => guess(code),
        _ => Lang::Other,
    }
}

/// The language of unlabelled code, from telltale words.
pub(super) fn guess(code: &str) -> Lang {
    let has = |words: &[&str]| words.iter().any(|w| code.contains(w));
    if has(&["$env:", "Invoke-", "Get-", "New-Object", "Set-"]) {
        Lang::PowerShell
    } else if has(&["import ", "def ", "os.environ", "print("]) {
        Lang::Python
    } else if has(&["const ", "let ", "require(", "=>", "process.env", "fetch(", "document.", "window."]) {
        Lang::JavaScript
    } else {
        Lang::Shell
    }
}

/// The inline code spans of a prose line (`` `x` ``, ``` ``x`` ```).
pub(super) fn inline_spans(line: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'`', &b[i..]) {
        let start = i + k;
        let n = b[start..].iter().take_while(|&&c| c == b'`').count();
        let from = start + n;
        // The closing run has the same length.
        let mut j = from;
        let mut close = None;
        while let Some(k) = memchr::memchr(b'`', &b[j..]) {
            let s = j + k;
            let m = b[s..].iter().take_while(|&&c| c == b'`').count();
            if m == n {
                close = Some(s);
                break;
            }
            j = s + m;
        }
        match close {
            Some(s) => {
                spans.push(&line[from..s]);
                i = s + n;
            }
            None => break,
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map as a walk over every line finds it: the reference for
    /// [`CodeMap::of`], which visits only the lines a fence byte opens.
    fn line_by_line(text: &str) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut open: Option<(u8, usize, usize, usize, &str)> = None;
        let b = text.as_bytes();
        let (mut index, mut start) = (0, 0);
        while start <= b.len() {
            let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |k| start + k);
            let first = b[start..end].iter().find(|c| !matches!(c, b' ' | b'\t' | b'>' | b'-' | b'*'));
            if matches!(first, Some(b'`' | b'~'))
                && let Some((c, n, info)) = fence(&text[start..end])
            {
                match open {
                    Some((oc, on, first, at, oinfo)) if c == oc && n >= on && info.is_empty() => {
                        blocks.push(Block {
                            first,
                            end: index,
                            lang: lang_of(oinfo, &text[at..start]),
                            bytes: at..start,
                        });
                        open = None;
                    }
                    Some(_) => {}
                    None => open = Some((c, n, index + 1, (end + 1).min(b.len()), info)),
                }
            }
            index += 1;
            start = end + 1;
        }
        if let Some((_, _, first, at, info)) = open {
            blocks.push(Block {
                first: first.min(index),
                end: index,
                lang: lang_of(info, &text[at..]),
                bytes: at..text.len(),
            });
        }
        blocks
    }

    #[test]
    fn fences_after_markers_inline_code_and_an_unclosed_block() {
        let text = "a `x`\n> ```py\nimport os\n> ```\n- ~~~\nrun\n`` no\n  ```bash\nls\n";
        let map = CodeMap::of(text);
        assert_eq!(map.blocks, line_by_line(text));
        let spans: Vec<(usize, usize, Lang)> = map.blocks.iter().map(|b| (b.first, b.end, b.lang)).collect();
        // The `~~~` block swallows the later fence of backticks, and runs
        // unclosed to past the last line.
        assert_eq!(spans, [(2, 3, Lang::Python), (5, 10, Lang::Shell)]);
    }

    #[test]
    fn a_backtick_run_with_a_backtick_after_it_is_inline_code_not_a_fence() {
        let text = "```x```\nprose\n- ````a``\nmore\n~~~ a`b\nls\n~~~\n```sh\nls\n```\n";
        let map = CodeMap::of(text);
        assert_eq!(map.blocks, line_by_line(text));
        let spans: Vec<(usize, usize, Lang)> = map.blocks.iter().map(|b| (b.first, b.end, b.lang)).collect();
        // Tildes may have backticks in their info string; backticks may not.
        assert_eq!(spans.len(), 2, "{spans:?}");
        assert_eq!((spans[0].0, spans[0].1), (5, 6));
        assert_eq!((spans[1].0, spans[1].1, spans[1].2), (8, 9, Lang::Shell));
    }

    proptest::proptest! {
        #[test]
        fn finds_what_a_walk_over_every_line_finds(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["`", "```", "~~~", " ", "\t", ">", "-", "*", "\n", "\r\n", "a", "py", "sh", "````"]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            proptest::prop_assert_eq!(CodeMap::of(&text).blocks, line_by_line(&text));
        }
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod sweep_tests;

#[cfg(test)]
#[path = "blocks_speed9_tests.rs"]
mod speed9_tests;

#[cfg(test)]
#[path = "blocks_speed10_tests.rs"]
mod speed10_tests;
