//! Edges of `blocks` that a whole-file mutation sweep found unpinned
//! (#27, session 24): what a fence is (the reference walk in `tests`
//! shares `fence` and `lang_of`, so it cannot tell them wrong), which
//! lines a block holds and which are code, and where inline spans end.

use super::*;

#[test]
fn a_fence_is_three_backticks_or_tildes_and_a_backtick_fence_has_no_backtick_after() {
    assert_eq!(fence("```py"), Some((b'`', 3, "py")));
    assert_eq!(fence("> - ~~~~ sh "), Some((b'~', 4, "sh")));
    assert_eq!(fence("``"), None);
    assert_eq!(fence("~~"), None);
    assert_eq!(fence("abc"), None);
    assert_eq!(fence("```a`"), None);
    assert_eq!(fence("~~~a`"), Some((b'~', 3, "a`")));
}

#[test]
fn a_block_holds_its_lines_and_neither_fence_nor_prose() {
    // Lines: 0 prose, 1 blank, 2 fence, 3-4 code, 5 fence, 6 prose,
    // 7 blank, 8 prose, 9 fence, 10 code, 11 fence, 12 prose.
    let text = "prose\n\n```sh\nls\npwd\n```\nafter\n\nbetween\n```py\nx = 1\n```\nlast\n";
    let map = CodeMap::of(text);
    let held: Vec<usize> = (0..14).filter(|&i| map.block_at(i).is_some()).collect();
    assert_eq!(held, [3, 4, 10]);
    assert_eq!(map.block_at(4).map(|b| b.lang), Some(Lang::Shell));
    assert_eq!(map.block_at(10).map(|b| b.lang), Some(Lang::Python));
    // Code: the lines inside and both fences.
    let code: Vec<usize> = (0..14).filter(|&i| map.is_code(i)).collect();
    assert_eq!(code, [2, 3, 4, 5, 9, 10, 11]);
}

#[test]
fn a_block_on_the_first_line_is_code_from_line_zero() {
    let map = CodeMap::of("```sh\nls\n```\nprose\n");
    let code: Vec<usize> = (0..5).filter(|&i| map.is_code(i)).collect();
    assert_eq!(code, [0, 1, 2]);
    assert!(!CodeMap::of("prose\n").is_code(0));
}

#[test]
fn an_inline_span_ends_at_a_run_of_its_own_length() {
    assert_eq!(inline_spans("`a` and `b`"), ["a", "b"]);
    assert_eq!(inline_spans("x ``a`b`` y"), ["a`b"]);
    assert_eq!(inline_spans("x ``a```b`` y `c`"), ["a```b", "c"]);
    assert_eq!(inline_spans("x `a"), Vec::<&str>::new());
}

#[test]
fn an_unlabelled_block_is_guessed_and_an_unknown_label_is_other() {
    let lang = |text: &str| CodeMap::of(text).blocks[0].lang;
    assert_eq!(lang("```\nimport os\n```\n"), Lang::Python);
    assert_eq!(lang("```\nls -la\n```\n"), Lang::Shell);
    assert_eq!(lang("```rust\nimport os\n```\n"), Lang::Other);
    for info in ["shell", "ksh", "fish", "python3", "ipython", "ps", "posh", "cjs"] {
        assert_ne!(lang(&format!("```{info}\nx\n```\n")), Lang::Other, "{info}");
    }
    // A label is its first word, before a blank, a brace or a comma.
    assert_eq!(lang("```py,x\nx\n```\n"), Lang::Python);
    assert_eq!(lang("```py{x}\nx\n```\n"), Lang::Python);
    assert_eq!(lang("```py x\nx\n```\n"), Lang::Python);
}
