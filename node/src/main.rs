//! The `ecp-node` binary: parse the command line, run the command, turn the
//! outcome into an exit code (0 success, 1 a check found something —
//! `skill scan` — 2 an error). Errors print with their whole cause chain.

mod cli;
mod commands;
mod logging;

use std::process::ExitCode;

use clap::Parser;
use commands::tell;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(commands::log_format(&cli.global));
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            tell(format_args!("ecp-node: error: {e:#}"));
            ExitCode::from(2)
        }
    }
}
