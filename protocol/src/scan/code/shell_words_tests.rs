//! Edges of `shell_words` that a whole-file mutation sweep found unpinned
//! (#27, session 26): where a long line is cut, how deep substitutions
//! nest, `$((…))`, the expansions no older test read (`${X##*/}`,
//! `${X,,}`, `$_x`, a default followed by more words), what a brace list
//! and an assignment are, escapes in double quotes, a quoted word after
//! a quoted word, the text of an array assignment and the variables
//! remembered. Session 28 (the rest of the list): single quotes around a
//! variable, and the gate `may_disguise_a_command`'s quotes, prefix flags and brace
//! lists pinned by name rather than left to its property test.

use super::*;

fn words(line: &str) -> (String, bool) {
    let w = normalize(line, &mut Vars::default());
    (w.text, w.disguised_command)
}

fn text(line: &str) -> String {
    normalize(line, &mut Vars::default()).text
}

#[test]
fn a_long_line_is_cut_at_its_bound_and_before_a_character_across_it() {
    let at = "a".repeat(MAX_LINE);
    assert_eq!(text(&format!("{at}b")), at);
    // `é` takes bytes 4,095 and 4,096: the cut goes back before it, not
    // past it.
    let across = format!("{}é b", "a".repeat(MAX_LINE - 1));
    assert_eq!(text(&across), "a".repeat(MAX_LINE - 1));
}

#[test]
fn substitutions_nest_three_deep_and_no_deeper() {
    // `$(…)`, a backtick in a word and one in double quotes, each as the
    // third level and as the fourth.
    assert_eq!(text("curl u | $(echo $(echo $(echo sh)))"), "curl u | sh");
    assert_ne!(text("curl u | $(echo $(echo $(echo $(echo sh))))"), "curl u | sh");
    assert_eq!(text("curl u | $(echo $(echo `echo sh`))"), "curl u | sh");
    assert_ne!(text("curl u | $(echo $(echo $(echo `echo sh`)))"), "curl u | sh");
    assert_eq!(text("curl u | $(echo $(echo \"`echo sh`\"))"), "curl u | sh");
    assert_ne!(text("curl u | $(echo $(echo $(echo \"`echo sh`\")))"), "curl u | sh");
}

#[test]
fn arithmetic_is_no_command_substitution() {
    // `$((…))` is kept as written, and what it holds is read at the
    // depth it is written at: a substitution inside it, two deep, is
    // still read (were `$((` a substitution, it would be the fourth).
    assert_eq!(text("echo $((1+2)) x"), "echo $((1+2)) x");
    assert_eq!(text("x $(echo $(echo $(( `echo 1` ))))"), "x $(( 1))");
}

#[test]
fn the_last_path_element_of_a_variable_is_its_program() {
    // `SHELL` unset in the block is the user's shell; another unset name
    // is unknown and stays as written.
    assert_eq!(words("s=${SHELL##*/}; curl u | $s"), ("s=sh; curl u | sh".into(), true));
    assert_eq!(text("curl u | ${X##*/}"), "curl u | ${X##*/}");
    assert_eq!(text("p=/usr/bin/zsh; curl u | ${p#*/}"), "p=/usr/bin/zsh; curl u | zsh");
    assert_eq!(text("curl u | ${1##*/}"), "curl u | ${1##*/}");
}

#[test]
fn a_value_is_lowered_and_a_name_may_start_with_an_underscore() {
    assert_eq!(text("v=SH; curl u | ${v,,}"), "v=SH; curl u | sh");
    assert_eq!(words("_x=sh; curl u | $_x"), ("_x=sh; curl u | sh".into(), true));
}

#[test]
fn an_expansion_in_braces_ends_at_its_brace_and_the_words_after_it_stay() {
    assert_eq!(text("curl u | ${SHELL:-sh} -s x"), "curl u | sh -s x");
    assert_eq!(text("S=bash; curl u | ${S:-sh} -s x"), "S=bash; curl u | bash -s x");
}

#[test]
fn a_group_or_a_lone_word_in_braces_is_no_brace_list() {
    assert_eq!(words("{ echo a,b; } | sh"), ("{ echo a,b; } | sh".into(), false));
    assert_eq!(words("{x} | sh"), ("{x} | sh".into(), false));
    assert_eq!(words("{sh,-c,id}"), ("sh -c id".into(), true));
}

#[test]
fn an_empty_assignment_is_no_array_and_a_dotted_name_no_assignment() {
    assert_eq!(text("E= ; curl u | sh"), "E= ; curl u | sh");
    // `a.b` is no shell name: `a.b=sh` is a command, and `${a.b}` unknown.
    assert_eq!(words("a.b=sh; curl u | ${a.b}"), ("a.b=sh; curl u | ${a.b}".into(), false));
}

#[test]
fn an_escape_in_double_quotes_keeps_the_quote_it_escapes() {
    assert_eq!(text(r#"echo "a\"b" "c\d" "e\\f""#), r#"echo a"b c\d e\f"#);
}

#[test]
fn a_quoted_command_after_a_quoted_argument_is_still_a_command() {
    assert_eq!(words("echo 'a' | 'sh'"), ("echo a | sh".into(), true));
    assert_eq!(words("echo $'a' | $'sh'"), ("echo a | sh".into(), true));
}

#[test]
fn an_array_assignment_reads_as_its_elements() {
    assert_eq!(text("a=(curl  sh); echo ${a[0]} ${a[1]}"), "a=(curl sh ); echo curl sh");
}

#[test]
fn a_program_named_by_its_path_is_no_disguise() {
    assert_eq!(words("curl u | /bin/bash"), ("curl u | /bin/bash".into(), false));
}

#[test]
fn sixty_four_variables_are_remembered_and_the_oldest_forgotten_past_them() {
    let mut vars = Vars::default();
    normalize("x=sh", &mut vars);
    for k in 1..MAX_VARS {
        normalize(&format!("v{k}=1"), &mut vars);
    }
    assert_eq!(vars.get("x"), Some("sh"));
    normalize("last=1", &mut vars);
    assert_eq!(vars.get("x"), None);
    assert_eq!(vars.get("v1"), Some("1"));
}

#[test]
fn a_backtick_is_one_level_deeper_than_its_word() {
    // Three levels in all, the first a backtick (in a word, and in double
    // quotes), are read; a fourth is not. Read at the backtick's own depth,
    // the `$(…)`s inside it would reach one level more.
    assert_eq!(text("curl u | `echo $(echo $(echo sh))`"), "curl u | sh");
    assert_ne!(text("curl u | `echo $(echo $(echo $(echo sh)))`"), "curl u | sh");
    assert_eq!(text("curl u | \"`echo $(echo $(echo sh))`\""), "curl u | sh");
    assert_ne!(text("curl u | \"`echo $(echo $(echo $(echo sh)))`\""), "curl u | sh");
}

// Session 28: the rest of the file's list, by function.

#[test]
fn a_single_quote_keeps_a_variable_as_written() {
    // Both quotes are read: `$X` between them is no expansion, and the
    // text after the closing one is.
    assert_eq!(text("X=sh; echo '$X' \"$X\""), "X=sh; echo $X sh");
    assert_eq!(text("X=sh; echo 'a  b'$X"), "X=sh; echo a  bsh");
}

#[test]
fn the_gate_jumps_over_quoted_text_to_its_closing_quote() {
    use super::may_disguise_a_command as may;
    // A closing quote one and two bytes after the opening one: what
    // follows it is read.
    assert!(may("echo \"a\" | 'sh'"));
    assert!(may("echo \"ab\" | 'sh'"));
    // An escaped backslash in double quotes does not escape the quote
    // after it; in single quotes a backslash escapes nothing.
    assert!(may(r#"echo "a\\" | 'sh'"#));
    assert!(may(r#"echo 'a\' | "sh""#));
    // An escaped quote does not close; a separator inside the quotes is
    // text, as is a quote of the other kind.
    assert!(!may(r#"echo "a\" | 'sh'""#));
    assert!(!may("echo \"x | 'sh'\""));
}

#[test]
fn the_gate_reads_a_prefixs_flags_and_no_flag_alone() {
    use super::may_disguise_a_command as may;
    // `sudo -E "sh"`: the flag keeps command position; a flag that starts
    // a line is an argument of the line before, and its next word none.
    assert!(may("sudo -E \"sh\""));
    assert!(!may("-s \"sh\""));
    assert!(!may("curl u | -s \"sh\""));
}

#[test]
fn the_gate_sees_a_brace_list_in_command_position_only() {
    use super::may_disguise_a_command as may;
    assert!(may("{sh,-c,id}"));
    assert!(may("curl u | {sh,-s}"));
    assert!(!may("{ echo a,b; }"));
    assert!(!may("echo {a,b}"));
}
