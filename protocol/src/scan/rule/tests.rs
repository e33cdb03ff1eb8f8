//! The rule helpers' cases: excerpts, masking, warnings before a command,
//! and what counts as piping into a shell.

use super::*;

#[test]
fn excerpt_is_short_trimmed_and_char_safe() {
    let line = format!("   {}curl x | sh{}   ", "é".repeat(100), "ü".repeat(100));
    let at = line.find("curl").unwrap();
    let e = excerpt(&line, at);
    assert!(e.chars().count() <= EXCERPT_CHARS);
    assert!(e.contains("curl"), "{e}");
    assert_eq!(e, e.trim());
    assert_eq!(excerpt("  short  ", 0), "short");
}

#[test]
fn recognises_warnings_in_the_same_clause_only() {
    assert!(warned_against("Never pipe `curl` to `sh`; do not run `"));
    assert!(warned_against("# Don't: "));
    assert!(warned_against("Avoid "));
    assert!(!warned_against("Do not skip this step: "));
    assert!(!warned_against("Don't worry, just run "));
    assert!(!warned_against("Never mind the warning; run "));
    assert!(!warned_against("Run "));
}

#[test]
fn carries_a_warning_over_a_wrapped_prose_line() {
    assert!(warned_across_lines("2. Never pipe `curl` output to `sh`; do not", "   run `"));
    assert!(!warned_across_lines("# never do this in production", "curl "));
    assert!(!warned_across_lines("Do not skip the next step.", "run `"));
    // A heading is no sentence wrapped onto the next line.
    assert!(!warned_across_lines("## Warning: never on laptops", "`"));
    assert!(warned_across_lines("Warning: never on laptops", "`"));
}

#[test]
fn finds_literals_ignoring_case() {
    assert!(contains_ci(b"a | SH", b"| sh"));
    assert!(contains_ci(b"x", b""));
    assert!(!contains_ci(b"ab", b"abc"));
    assert!(!contains_ci(b"curl x", b"wget"));
    // Around and across the 16-byte blocks of the fast path.
    for n in 0..40 {
        for at in 0..=n {
            let mut hay = vec![b'w'; n];
            hay.splice(at..at, *b"WgEt");
            assert!(contains_ci(&hay, b"wget"), "{n} {at}");
            hay[at + 3] = b'x';
            assert!(!contains_ci(&hay, b"wget"), "{n} {at}");
        }
    }
}

proptest::proptest! {
    // Bytes that differ from a needle byte only in bit 0x20 (`@` and
    // `` ` ``, `[` and `{`) must not pass for it: only letters fold.
    #[test]
    fn contains_ci_agrees_with_a_naive_search(
        hay in proptest::collection::vec(proptest::sample::select(b"aAzZ@`[{-| \xc3".to_vec()), 0..70),
        needle in proptest::collection::vec(proptest::sample::select(b"az@[-| ".to_vec()), 1..5),
    ) {
        let naive = hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(&needle));
        proptest::prop_assert_eq!(contains_ci(&hay, &needle), naive);
    }
}

proptest::proptest! {
    #[test]
    fn any_ci_agrees_with_a_search_per_word(
        hay in proptest::collection::vec(proptest::sample::select(b"aAbBzZ@`[{-| .\xc3".to_vec()), 0..70),
        pick in proptest::collection::vec(0..WORDS.len(), 0..6),
    ) {
        static ANY: AnyCi = AnyCi::new(WORDS);
        // A subset of the words, as a gate would list them.
        let mut words: Vec<&'static str> = pick.iter().map(|&k| WORDS[k]).collect();
        words.sort_unstable();
        words.dedup();
        let some = AnyCi::new(Box::leak(words.clone().into_boxed_slice()));
        let per_word = |ws: &[&str]| ws.iter().any(|w| contains_ci(&hay, w.as_bytes()));
        proptest::prop_assert_eq!(some.any_in(&hay), per_word(&words));
        proptest::prop_assert_eq!(ANY.any_in(&hay), per_word(WORDS));
    }
}

/// A place is looked at by its first two bytes: a word of one byte
/// at the haystack's end, a word whose second byte is the last, a
/// second byte in the other case, one that differs in bit 0x20 only.
#[test]
fn any_ci_reads_a_place_by_its_first_two_bytes_up_to_the_end() {
    static ANY: AnyCi = AnyCi::new(&["index", " -i", "-", "zq"]);
    for (hay, want) in [
        ("x-", true),
        ("-", true),
        ("INDEX", true),
        ("inDEx=1", true),
        ("indeX", true),
        ("inde", false),
        ("x -I", true),
        ("x -", true),
        ("Zq", true),
        ("ZQ", true),
        ("z", false),
        ("zQ ", true),
        ("z1", false),
        ("", false),
    ] {
        let per_word = ["index", " -i", "-", "zq"].iter().any(|w| contains_ci(hay.as_bytes(), w.as_bytes()));
        assert_eq!(ANY.any_in(hay.as_bytes()), want, "{hay:?}");
        assert_eq!(per_word, want, "{hay:?}");
    }
    static Z: AnyCi = AnyCi::new(&["z{"]);
    assert!(!Z.any_in(b"z["), "only letters fold");
    assert!(Z.any_in(b"Z{"));
}

/// Words of the shapes gates look for: letters, a blank, punctuation,
/// one byte, a word inside another.
const WORDS: &[&str] = &["ab", "b ", "z@", "-", "|a", "ba", "aab", " .", "`", "{z", "bz-"];

#[test]
fn splits_words_as_split_whitespace_does() {
    for line in ["", " a\tb\x0bc\x0cd\re\nf  ", "x\u{3000}y é\u{a0}z", "\u{2028}-o\u{85}f"] {
        let ours: Vec<&[u8]> = words(line).collect();
        let std: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        assert_eq!(ours, std, "{line:?}");
    }
}

#[test]
fn slices_never_split_characters() {
    let s = "aé€b";
    for i in 0..=s.len() {
        for j in i..=s.len() + 2 {
            let _ = slice_lossy(s, i..j);
        }
    }
}

#[test]
fn gates_pipes_without_splitting_characters() {
    assert!(!pipes_into_shell("|||é"));
    assert!(!pipes_into_shell("a || sh"));
    assert!(pipes_into_shell("curl x |  bash -s"));
    assert!(!pipes_into_shell("curl x | jq . | tee out"));
    assert!(pipes_into_shell("CURL x | SuDo BASH"));
    assert!(pipes_into_shell("x | Python3 -"));
    assert!(!pipes_into_shell("x | Shellcheck"));
}
