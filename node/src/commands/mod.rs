//! What each subcommand does. `serve` starts a [`Node`]; the others open the
//! same store directly (SQLite lets them run beside a server).

mod serve;

use std::process::ExitCode;

use anyhow::Context;
use ecp_node::config::{Config, Overrides};
use ecp_node::library::Library;

use crate::cli::{Cli, Command};

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::run(&cli.global, args),
        Command::Skill(_) | Command::Quarantine(_) | Command::Status(_) => {
            anyhow::bail!("this command is not built yet")
        }
    }
}

/// Resolves the configuration from the global flags plus `extra`.
pub(crate) fn resolve(global: &crate::cli::GlobalArgs, extra: Overrides) -> anyhow::Result<Config> {
    let over = Overrides { data: global.data.clone(), skills_dir: global.skills_dir.clone(), ..extra };
    Ok(Config::resolve(global.config.as_deref(), over)?)
}

/// Opens the library of the resolved configuration (for commands other than `serve`).
#[allow(dead_code)]
pub(crate) fn open_library(config: &Config) -> anyhow::Result<Library> {
    Library::open(&config.data_dir, &config.skills_dir)
        .with_context(|| "cannot open the node's data folder (see --data)".to_string())
}
