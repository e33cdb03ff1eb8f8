//! Where the code of a body is: fenced blocks (with the language their
//! info string names, or one guessed from their content) and inline code
//! spans on the other lines.

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
pub(super) struct CodeMap {
    pub(super) blocks: Vec<Block>,
}

/// A fence: its character, its length and the info string after it.
fn fence(line: &str) -> Option<(u8, usize, &str)> {
    let t = line.trim_start_matches([' ', '\t', '>', '-', '*']).trim_start();
    let c = *t.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == c).count();
    (n >= 3).then(|| (c, n, t[n..].trim()))
}

impl CodeMap {
    /// Finds the fenced blocks of `text` in one pass over its lines; only
    /// a line starting with a backtick or tilde is looked at closer.
    pub(super) fn of(text: &str) -> CodeMap {
        let mut blocks = Vec::new();
        // Fence character, length, first line inside, its byte offset, info.
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
            let bytes = at..text.len();
            blocks.push(Block {
                first: first.min(index),
                end: index,
                lang: lang_of(info, &text[at..]),
                bytes,
            });
        }
        CodeMap { blocks }
    }

    /// The block holding line `index`, if any.
    pub(super) fn block_at(&self, index: usize) -> Option<&Block> {
        let k = self.blocks.partition_point(|b| b.end <= index);
        self.blocks.get(k).filter(|b| b.first <= index && index < b.end)
    }

    /// Whether line `index` is a fence or inside a block.
    pub(super) fn is_code(&self, index: usize) -> bool {
        let k = self.blocks.partition_point(|b| b.end < index);
        self.blocks.get(k).is_some_and(|b| b.first <= index + 1 && index <= b.end)
    }
}

/// The language an info string names, else the one `code` looks like.
fn lang_of(info: &str, code: &str) -> Lang {
    let word = info.split(|c: char| c.is_whitespace() || c == '{' || c == ',').next().unwrap_or("");
    match word.to_ascii_lowercase().as_str() {
        "sh" | "bash" | "shell" | "zsh" | "ksh" | "fish" | "console" | "shell-session" | "shellsession"
        | "terminal" => Lang::Shell,
        "python" | "py" | "python3" | "ipython" | "pycon" => Lang::Python,
        "js" | "javascript" | "ts" | "typescript" | "node" | "jsx" | "tsx" | "mjs" | "cjs" => {
            Lang::JavaScript
        }
        "powershell" | "ps1" | "pwsh" | "ps" | "posh" => Lang::PowerShell,
        "" => guess(code),
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
