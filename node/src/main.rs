//! The `ecp-node` binary: parse the command line, run the command, turn the
//! outcome into an exit code (0 success, 1 a check found something —
//! `skill scan` — 2 an error). Errors print with their whole cause chain,
//! each part once. The log is set up in `logging`; glibc's malloc arenas
//! are capped first of all (`ecp_node::arenas`).

mod cli;
mod commands;
mod logging;

use std::process::ExitCode;

use clap::Parser;
use commands::tell;

fn main() -> ExitCode {
    // Before any thread: the runtime's workers and the log's writer would
    // each take an arena of their own first.
    let arenas = ecp_node::arenas::cap();
    let cli = cli::Cli::parse();
    logging::init(commands::log_format(&cli.global));
    tracing::debug!(?arenas, "malloc arenas");
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            tell(format_args!("ecp-node: error: {}", said_once(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each part said once: many errors
/// repeat their cause's text in their own, and `{:#}` would print it again
/// for every level of the chain.
fn said_once(error: &anyhow::Error) -> String {
    let mut said = error.to_string();
    for cause in error.chain().skip(1) {
        for part in cause.to_string().split(": ") {
            if !said.contains(part) {
                said.push_str(": ");
                said.push_str(part);
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::said_once;

    #[test]
    fn a_cause_repeated_by_the_errors_above_it_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let error = anyhow::Error::new(io)
            .context("cannot read peers file nope.toml: No such file or directory (os error 2)");
        let error = error.context("cannot start");
        assert_eq!(
            said_once(&error),
            "cannot start: cannot read peers file nope.toml: No such file or directory (os error 2)"
        );
        let fresh = anyhow::anyhow!("disk full").context("cannot write x");
        assert_eq!(said_once(&fresh), "cannot write x: disk full");
    }
}
