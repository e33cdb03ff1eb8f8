//! The `ecp-node` binary: parse the command line, run the command, turn the
//! outcome into an exit code (0 success, 1 a check found something —
//! `skill scan` — 2 an error). Errors print with their whole cause chain.

mod cli;
mod commands;

use std::process::ExitCode;

use clap::Parser;
use commands::tell;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // The cron scheduler logs every job it creates at info.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tokio_cron_scheduler=warn")),
        )
        .with_writer(std::io::stderr)
        // A log that cannot be written (a full disk, a closed stderr) must not
        // stop the node: tracing's fallback would report it with eprintln!,
        // which panics when stderr fails.
        .log_internal_errors(false)
        .init();
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            tell(format_args!("ecp-node: error: {e:#}"));
            ExitCode::from(2)
        }
    }
}
