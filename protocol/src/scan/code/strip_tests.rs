//! Edges of `strip` that a whole-file mutation sweep found unpinned (#27,
//! session 24): what a comment is in each language, how an escape and
//! the end of a line inside a string are blanked, and which parts of a
//! string stay (what it interpolates, nested braces and `$name`s).

use super::*;

fn py(code: &str) -> String {
    strip(code, Lang::Python)
}

fn js(code: &str) -> String {
    strip(code, Lang::JavaScript)
}

#[test]
fn a_string_keeps_its_quotes_and_loses_its_text() {
    assert_eq!(py("x = 'abc' + y"), "x = '   ' + y");
    assert_eq!(py("x = \"a b\""), "x = \"   \"");
    assert_eq!(js("x = `ab`"), "x = `  `");
    assert_eq!(py(""), "");
}

#[test]
fn a_hash_comment_starts_a_line_or_follows_a_blank() {
    assert_eq!(py("# c"), "   ");
    assert_eq!(py("x # c"), "x    ");
    assert_eq!(py("x #c"), "x   ");
    assert_eq!(py("a#b"), "a#b");
    assert_eq!(py("a# b"), "a# b");
    // `//` is floor division in Python.
    assert_eq!(py("x // 2"), "x // 2");
}

#[test]
fn a_slash_comment_is_two_slashes_not_after_a_colon() {
    assert_eq!(js("// c"), "    ");
    assert_eq!(js("x // c"), "x     ");
    assert_eq!(js("x = 1;// c"), "x = 1;    ");
    assert_eq!(js("a = b / c"), "a = b / c");
    assert_eq!(js("u = a://b"), "u = a://b");
    // `#` is no comment in JavaScript.
    assert_eq!(js("x # c"), "x # c");
}

#[test]
fn an_escape_is_blanked_with_what_it_escapes() {
    assert_eq!(py(r#"s = "a\"b" + t"#), r#"s = "    " + t"#);
    assert_eq!(py(r"s = 'a\'b' + t"), r"s = '    ' + t");
    // A backslash ending the line: one blank for it, none past the end.
    assert_eq!(py(r"s = 'a\"), "s = '  ");
}

#[test]
fn what_a_string_interpolates_stays() {
    assert_eq!(py("f\"a{token}b\""), "f\" {token} \"");
    assert_eq!(js("`${f({a: 1})} t`"), "`${f({a: 1})}  `");
    assert_eq!(py("\"$HOME/x\""), "\"$HOME  \"");
    assert_eq!(py("\"$MY_VAR.\""), "\"$MY_VAR \"");
    assert_eq!(py("\"a $b c\""), "\"  $b  \"");
}

#[test]
fn a_dollar_name_is_a_run_of_name_bytes_after_a_dollar() {
    assert!(is_dollar_name(b"\"$a"));
    assert!(is_dollar_name(b"\"$a_b:c1"));
    assert!(is_dollar_name(b"\"$"));
    assert!(!is_dollar_name(b"\"a"));
    assert!(!is_dollar_name(b"$a b"));
    assert!(!is_dollar_name(b"ab"));
    assert!(!is_dollar_name(b""));
}
