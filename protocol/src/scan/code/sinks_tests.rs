//! Edges of `sinks` that a whole-file mutation sweep found unpinned (#27,
//! session 24): each kind of sink, worst first; a redirection only in a
//! shell-like line; a page's markup request needs both its write and its
//! URL.

use super::*;

#[test]
fn a_line_is_graded_by_its_worst_sink() {
    assert_eq!(find("requests.post(u, data=open(p, 'w').write(t))", false), Some(Kind::Network));
    assert_eq!(find("subprocess.run(c); print(c)", false), Some(Kind::Exec));
    assert_eq!(find("open(p, 'w').write(t); print(t)", false), Some(Kind::File));
    assert_eq!(find("print(t)", false), Some(Kind::Output));
    assert_eq!(find("x = t", false), None);
}

#[test]
fn a_redirection_writes_a_file_only_in_a_shell_like_line() {
    assert_eq!(find("$t > out.txt", true), Some(Kind::File));
    assert_eq!(find("$t > out.txt", false), None);
    // Not a redirection, shell-like or not.
    assert_eq!(find("if a => b", true), None);
    // A file write is one in any line.
    assert_eq!(find("Out-File -Path p", false), Some(Kind::File));
}

#[test]
fn a_markup_request_is_markup_written_with_a_source_url() {
    let view = "el.innerHTML = `<img src=\"\">`";
    assert!(markup_request(view, "el.innerHTML = `<img src=\"https://x.example/?t=${t}\">`"));
    assert!(!markup_request(view, "el.innerHTML = `<img alt=\"${t}\">`"));
    assert!(!markup_request("el.title = `x`", "el.title = `<img src=\"https://x.example/?t=${t}\">`"));
}

#[test]
fn the_network_call_is_where_its_name_is() {
    assert_eq!(network("r = requests.get(u)"), Some(4..16));
    assert_eq!(network("r = 1"), None);
}

#[test]
fn handles_and_network_programs_are_named() {
    assert!(makes_handle("requests.Session()"));
    assert!(!makes_handle("dict()"));
    assert!(runs_network_program("curl -d @- https://x.example"));
    assert!(!runs_network_program("ls -la"));
}
