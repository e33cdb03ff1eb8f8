//! Edges of `shell_expand` that a whole-file mutation sweep found
//! unpinned (#27, session 24): what each kind of substitution prints,
//! which decoders a literal goes through, where a `$'…'` string ends and
//! what each of its escapes is. The escapes under test stand past the
//! first byte, so that a wrong step fails at once rather than looping.

use super::*;

#[test]
fn which_and_command_print_the_programs_name_when_they_name_one() {
    assert_eq!(substitution("which env"), "env");
    assert_eq!(substitution("command -v /usr/bin/env"), "env");
    // Two names, or none: left as written.
    assert_eq!(substitution("which env sh"), "$(which env sh)");
    assert_eq!(substitution("command -v"), "$(command -v)");
}

#[test]
fn echo_prints_its_words_without_its_flags() {
    assert_eq!(substitution("echo -n s h"), "s h");
    assert_eq!(substitution("date"), "$(date)");
}

#[test]
fn printf_prints_its_format_or_its_arguments_by_the_directive() {
    // `%b`: the arguments' escapes are printf's.
    assert_eq!(substitution(r"printf %b \x73h"), "sh");
    // `%s`: the arguments as they are.
    assert_eq!(substitution(r"printf %s \x73h"), r"\x73h");
    assert_eq!(substitution("printf %s s h"), "sh");
    // No directive and no argument: the format, its escapes read.
    assert_eq!(substitution(r"printf a\x73h"), "ash");
    assert_eq!(substitution("printf sh"), "sh");
    // Any other directive: left as written.
    assert_eq!(substitution("printf %d 5"), "$(printf %d 5)");
    assert_eq!(substitution("printf %d"), "$(printf %d)");
    assert_eq!(substitution("printf a b"), "$(printf a b)");
}

#[test]
fn a_literal_piped_through_decoders_prints_what_they_print() {
    assert_eq!(substitution("printf YmFzaA== | base64 -d"), "bash");
    assert_eq!(substitution("echo hs | rev"), "sh");
    assert_eq!(substitution("echo 7368 | xxd -r -p"), "sh");
    assert_eq!(substitution("echo 7368 | xxd -p"), "$(echo 7368 | xxd -p)");
    assert_eq!(substitution("date | rev"), "$(date | rev)");
}

#[test]
fn rev_reverses_and_base64_decodes_only_when_asked_to() {
    assert_eq!(decoded("hs", "rev").as_deref(), Some("sh"));
    for flag in ["-d", "--decode", "-D"] {
        assert_eq!(decoded("c2g=", &format!("base64 {flag}")).as_deref(), Some("sh"), "{flag}");
    }
    assert_eq!(decoded("c2g=", "base64"), None);
    assert_eq!(decoded("c2g=", "base64 -w0"), None);
    // base32 is not read: what it decodes is not base64's.
    assert_eq!(decoded("c2g=", "base32 -d"), None);
    // `tr` translates (session 25: ROT13 through `tr` hid a fetcher's name).
    assert_eq!(decoded("phey", "tr a-z n-za-m").as_deref(), Some("curl"));
}

#[test]
fn tr_translates_literal_sets_and_ranges_only() {
    assert_eq!(decoded("Uryyb", "tr A-Za-z N-ZA-Mn-za-m").as_deref(), Some("Hello"));
    // A shorter second set repeats its last character; others pass through.
    assert_eq!(decoded("abc-d", "tr abc x").as_deref(), Some("xxx-d"));
    // Flags, classes, escapes, reversed ranges and sets past 128 bytes are
    // not read.
    for stage in ["tr -d a", "tr [:upper:] [:lower:]", "tr \\n x", "tr z-a a-z", "tr a-z"] {
        assert_eq!(decoded("abc", stage), None, "{stage}");
    }
    let at_limit = "a".repeat(128);
    assert_eq!(decoded("a", &format!("tr {at_limit} b")).as_deref(), Some("b"));
    let past = "a".repeat(129);
    assert_eq!(decoded("a", &format!("tr {past} b")), None);
}

#[test]
fn xxd_decodes_hex_only_in_reverse_plain_mode() {
    for flags in ["-r -p", "-p -r", "-rp", "-pr"] {
        assert_eq!(decoded("73 68", &format!("xxd {flags}")).as_deref(), Some("sh"), "{flags}");
    }
    for flags in ["", "-r", "-p", "-r -x"] {
        assert_eq!(decoded("7368", &format!("xxd {flags}")), None, "{flags}");
    }
}

#[test]
fn a_decoded_text_keeps_newlines_and_tabs_and_no_other_control_byte() {
    assert_eq!(decoded("YQpi", "base64 -d").as_deref(), Some("a\nb"));
    assert_eq!(decoded("YQli", "base64 -d").as_deref(), Some("a\tb"));
    assert_eq!(decoded("YQFi", "base64 -d"), None);
    assert_eq!(decoded("610162", "xxd -r -p"), None);
    // Not UTF-8.
    assert_eq!(decoded("ff", "xxd -r -p"), None);
}

#[test]
fn an_ansi_c_string_ends_at_its_first_unescaped_quote() {
    assert_eq!(ansi_c_end(r"a\'b'c"), 4);
    assert_eq!(ansi_c_end("ab'cd"), 2);
    assert_eq!(ansi_c_end("'"), 0);
    assert_eq!(ansi_c_end("abc"), 3);
    assert_eq!(ansi_c_end(r"ab\"), 3);
    assert_eq!(ansi_c_end(""), 0);
}

#[test]
fn each_escape_of_an_ansi_c_string_is_read() {
    assert_eq!(ansi_c("a"), "a");
    assert_eq!(ansi_c("ab"), "ab");
    assert_eq!(ansi_c(""), "");
    // Hex: two digits, one, or none (kept as written).
    assert_eq!(ansi_c(r"a\x41b"), "aAb");
    assert_eq!(ansi_c(r"a\x7eb"), "a~b");
    assert_eq!(ansi_c(r"a\x9z"), "a\tz");
    assert_eq!(ansi_c(r"a\xzz"), r"a\xzz");
    // Octal: at most three digits.
    assert_eq!(ansi_c(r"a\163\150b"), "ashb");
    assert_eq!(ansi_c(r"a\1634"), "as4");
    assert_eq!(ansi_c(r"a\18"), "a\u{1}8");
    assert_eq!(ansi_c(r"a\7"), "a\u{7}");
    // The common escapes; `\n` is a blank on the command line.
    assert_eq!(ansi_c(r"a\nb"), "a b");
    assert_eq!(ansi_c(r"a\tb"), "a\tb");
    assert_eq!(ansi_c(r"a\qb"), "aqb");
    assert_eq!(ansi_c(r"a\\b"), r"a\b");
    // A backslash that ends the string is kept.
    assert_eq!(ansi_c(r"a\"), r"a\");
    assert_eq!(ansi_c(r"\x73h"), "sh");
}
