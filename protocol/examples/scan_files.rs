//! Prints the scanner's findings for each file named on the command line
//! (`cargo run -p ecp-protocol --example scan_files -- a.md b.md`), or for
//! standard input when none is named: for trying a rule on a skill by hand.

use std::io::Read;

use ecp_protocol::scan::{DEFAULT_THRESHOLD, Scanner};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let bodies: Vec<(String, String)> = if paths.is_empty() {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).expect("read standard input");
        vec![("-".into(), s)]
    } else {
        paths
            .into_iter()
            .map(|p| {
                let body = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {p}: {e}"));
                (p, body)
            })
            .collect()
    };
    for (name, body) in bodies {
        let report = Scanner::standard().scan(&body);
        let verdict = if report.is_blocked(DEFAULT_THRESHOLD) { "BLOCKED" } else { "passed" };
        println!("{name}: {verdict}");
        for f in &report.findings {
            println!(
                "  line {:>3} {:<9} {:<30} {}",
                f.line,
                format!("{:?}", f.severity),
                f.rule_id,
                f.excerpt
            );
        }
    }
}
