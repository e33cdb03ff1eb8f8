//! One text file of a bundle, scanned with the language its name says
//! (`SPEC.md` §12.5.5): Markdown and plain text as prose, like `SKILL.md`;
//! a script as a fenced block of its language, so the code analysis and
//! the shell rules read it as they read a block of `SKILL.md`; anything
//! else as a block of data.

use std::borrow::Cow;

use super::super::kind::{ContentKind, extension};
use crate::scan::{Finding, Scanner};

/// How a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// As a body of Markdown.
    Prose,
    /// As a fenced block with this info string (empty: the scanner guesses
    /// the language from the content).
    Code(&'static str),
}

/// Extensions read as prose; a file without an extension is too, unless
/// it starts with a shebang.
const PROSE: &[&str] = &["md", "markdown", "mdx", "txt", "text", "rst", "adoc"];

/// Extensions of data and markup: a block the code analysis does not take
/// for any language, and no explanatory context takes for inert.
const DATA: &[&str] = &[
    "json",
    "jsonl",
    "yaml",
    "yml",
    "toml",
    "xml",
    "xsd",
    "xsl",
    "xslt",
    "html",
    "htm",
    "css",
    "csv",
    "tsv",
    "ini",
    "cfg",
    "conf",
    "svg",
    "lock",
    "properties",
];

/// The info string of a language the code analysis tells apart.
fn language(word: &str) -> Option<&'static str> {
    Some(match word {
        "sh" | "bash" | "zsh" | "ksh" | "fish" | "dash" | "command" => "bash",
        "py" | "pyw" | "pyi" | "python" | "python3" | "python2" => "python",
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" | "node" | "deno" | "bun" => "javascript",
        "ps1" | "psm1" | "psd1" | "pwsh" | "powershell" => "powershell",
        _ => return None,
    })
}

/// How the file `name` holding `text` is read: its shebang's interpreter,
/// else its extension.
pub(super) fn reading(name: &str, text: &str) -> Reading {
    if let Some(line) = text.strip_prefix("#!") {
        let line = line.lines().next().unwrap_or("");
        let mut words = line.split_whitespace();
        let program = words.next().unwrap_or("").rsplit('/').next().unwrap_or("");
        // `#!/usr/bin/env -S python3 -u`: the program is the first word that is no option.
        let program =
            if program == "env" { words.find(|w| !w.starts_with('-')).unwrap_or("") } else { program };
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        return Reading::Code(language(program).unwrap_or(""));
    }
    let Some(ext) = extension(name) else { return Reading::Prose };
    if PROSE.contains(&ext.as_str()) {
        Reading::Prose
    } else if let Some(info) = language(&ext) {
        Reading::Code(info)
    } else if DATA.contains(&ext.as_str()) {
        Reading::Code("data")
    } else {
        Reading::Code("")
    }
}

/// The text of a file the scanner can read: UTF-8 as it is; UTF-16 with a
/// byte-order mark decoded (Windows editors save PowerShell so); other
/// bytes without NUL read as UTF-8 with replacement characters, as a shell
/// reads a Latin-1 script. `None` for binary content.
pub(super) fn text_of(bytes: &[u8], kind: ContentKind) -> Option<Cow<'_, str>> {
    match kind {
        ContentKind::Text | ContentKind::Svg => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
        ContentKind::Binary => utf16(bytes)
            .map(Cow::Owned)
            .or_else(|| (!bytes.contains(&0)).then(|| String::from_utf8_lossy(bytes))),
        _ => None,
    }
}

/// UTF-16 after a byte-order mark, if it decodes.
fn utf16(bytes: &[u8]) -> Option<String> {
    let big = match bytes.get(..2)? {
        [0xff, 0xfe] => false,
        [0xfe, 0xff] => true,
        _ => return None,
    };
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    let units = bytes[2..].chunks_exact(2).map(|u| {
        let pair = [u[0], u[1]];
        if big { u16::from_be_bytes(pair) } else { u16::from_le_bytes(pair) }
    });
    char::decode_utf16(units).collect::<Result<String, _>>().ok()
}

/// Scans `text`, the content of the file `name`, as [`reading`] says; the
/// findings name the file, their lines count in it.
pub(super) fn scan(scanner: &Scanner, name: &str, text: &str) -> Vec<Finding> {
    let mut findings = match reading(name, text) {
        Reading::Prose => scanner.scan(text).findings,
        Reading::Code(info) => {
            // A fence longer than any run of backticks in the file: no line
            // of it can close the block early.
            let fence = "`".repeat(longest_backtick_run(text).max(2) + 1);
            let wrapped = format!("{fence}{info}\n{text}\n{fence}\n");
            let lines = text.split('\n').count();
            let mut findings = scanner.scan(&wrapped).findings;
            for f in &mut findings {
                f.line = f.line.saturating_sub(1).clamp(1, lines);
            }
            findings
        }
    };
    for f in &mut findings {
        f.file = Some(name.to_owned());
    }
    findings
}

fn longest_backtick_run(text: &str) -> usize {
    let b = text.as_bytes();
    let (mut longest, mut next) = (0, 0);
    for at in memchr::memchr_iter(b'`', b) {
        if at < next {
            continue;
        }
        let run = b[at..].iter().take_while(|&&c| c == b'`').count();
        longest = longest.max(run);
        next = at + run;
    }
    longest
}
