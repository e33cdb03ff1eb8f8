//! `CodeMap::of`'s walk back over a fence's indent and markers, and its
//! newline counts, held to the searches they replaced; `lang_of`'s cut by
//! bytes held to its cut by chars (#14's throughput, tenth pass).

use super::*;
use proptest::prelude::*;

/// `CodeMap::of` before the tenth pass: the line's start searched back
/// for, its bytes before the fence byte read twice, the fence read
/// through `fence`'s trims, newlines counted by `memchr`.
fn of_before(text: &str) -> CodeMap {
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
        let start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        from = (end + 1).min(b.len());
        // `at` is the line's first fence byte: a loose fence (after
        // blanks alone) starts there. Behind spaces and tabs it is a
        // fence of this map's too, and is read below with it.
        let blanks = b[start..at].iter().all(|c| matches!(c, b' ' | b'\t' | b'\x0c' | b'\r'));
        if !b[start..at].iter().all(|c| matches!(c, b' ' | b'\t' | b'>' | b'-' | b'*')) {
            if blanks && crate::scan::fence::is_fence(&text[at..end]) {
                loose_fences.push(start);
            }
            if end == b.len() {
                break;
            }
            continue;
        }
        if let Some((c, n, info)) = fence(&text[start..end]) {
            if blanks {
                loose_fences.push(start);
            }
            // Counted at fences only: most lines reaching here hold an
            // inline `code` span, not a fence.
            index += memchr::memchr_iter(b'\n', &b[counted..start]).count();
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
        if end == b.len() {
            break;
        }
    }
    // Past the last line: the line count.
    let index = index + memchr::memchr_iter(b'\n', &b[counted..]).count() + 1;
    if let Some((_, _, first, at, info)) = open {
        let bytes = at..text.len();
        blocks.push(Block { first: first.min(index), end: index, lang: lang_of(info, &text[at..]), bytes });
    }
    CodeMap { blocks, loose_fences }
}

/// `lang_of` before the tenth pass: the word cut by chars.
fn lang_of_before(info: &str, code: &str) -> Lang {
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

/// A map's blocks and loose fences, compared whole.
type Map = (Vec<Block>, Vec<usize>);

fn both(text: &str) -> (Map, Map) {
    let (now, before) = (CodeMap::of(text), of_before(text));
    ((now.blocks, now.loose_fences), (before.blocks, before.loose_fences))
}

#[test]
fn what_stands_before_a_fence_byte_decides_as_it_did() {
    for text in [
        "```sh\nls\n```\n",
        "  ```sh\nls\n  ```",
        "> ```py\nimport os\n> ```\n",
        "- ~~~\nrun\n~~~",
        // A form feed or carriage return before it: `trojan`'s fence only.
        "\x0c```\nx\n\r```\n",
        "\r```sh\nls\n```",
        // Markers and a form feed: neither.
        "-\x0c```\nx\n```",
        // Anything else before it: inline code, neither.
        "a ```sh\nls\n```",
        "x`y`\n```\n`z`\n```",
        // At the text's very start and end, and a fence alone.
        "```",
        "~~~\n",
        "\n\n```\n\n",
        "",
        "`",
    ] {
        let (now, before) = both(text);
        assert_eq!(now, before, "{text:?}");
    }
    // Counted across more than one chunk of `count_newlines`.
    let long = format!("{}```sh\nls\n{}```\n{}", "a\n".repeat(300), "b\n".repeat(700), "\n".repeat(260));
    let (now, before) = both(&long);
    assert_eq!(now, before);
    assert_eq!((now.0[0].first, now.0[0].end), (301, 1002));
}

#[test]
fn an_info_word_is_cut_where_a_char_cut_would_cut_it() {
    for (info, want) in [
        ("bash", Lang::Shell),
        ("bash{.x}", Lang::Shell),
        ("PY,x", Lang::Python),
        ("ps1\x0bx", Lang::PowerShell),
        ("node\x0cx", Lang::JavaScript),
        // Unicode white space ends the word too (no-break space, em space).
        ("bash\u{a0}x", Lang::Shell),
        ("py\u{2003}", Lang::Python),
        ("\u{e9}sh", Lang::Other),
        ("sh\x1cx", Lang::Other),
        ("", Lang::Shell),
    ] {
        assert_eq!(lang_of(info, "ls"), want, "{info:?}");
        assert_eq!(lang_of_before(info, "ls"), want, "{info:?}");
    }
}

proptest! {
    #[test]
    fn the_map_is_the_map_it_was(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "`", "```", "~~~", "````", " ", "\t", "\x0c", "\r", ">", "-", "*", "\n", "\r\n", "a", "py", "sh", "\u{e9}",
            ]),
            0..60,
        )
    ) {
        let text: String = parts.concat();
        let (now, before) = both(&text);
        prop_assert_eq!(now, before);
    }

    #[test]
    fn the_language_is_the_language_it_was(
        info in r"(sh|BASH|Py|python3|PowerShell|shell-session|node|x|\x{e9}|\x{a0}|\x{2003}|\x0b|\x0c|\x1c|-| |\t|\{|,){0,6}",
        code in r"(import |const |\$env:|x){0,2}",
    ) {
        prop_assert_eq!(lang_of(&info, &code), lang_of_before(&info, &code));
    }
}
