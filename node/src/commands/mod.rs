//! What each subcommand does. `serve` starts a [`Node`](ecp_node::Node); the
//! others open the same store directly (SQLite lets them run beside a server).
//!
//! - `serve`: run the node.
//! - `skill`: add, list, show, remove and scan skills; keep one private or share it.
//! - `quarantine`: review refused packets.
//! - `status`: identity, sequence number and counts.
//! - `federation`: `pull`, `push`, `sync` and `peers`.
//! - `output`: printing shared by the commands.

mod federation;
mod output;
mod quarantine;
mod serve;
mod skill;
mod status;

use std::process::ExitCode;

pub(crate) use output::tell;

use anyhow::{Context, bail};
use ecp_node::config::{Config, Overrides};
use ecp_node::library::Library;

use crate::cli::{Cli, Command};

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::run(&cli.global, *args),
        Command::Skill(command) => skill::run(&cli.global, command),
        Command::Quarantine(command) => quarantine::run(&cli.global, command),
        Command::Status(flag) => status::run(&cli.global, flag.json),
        Command::Pull(args) => federation::pull(&cli.global, args),
        Command::Push(args) => federation::push(&cli.global, args),
        Command::Sync(flag) => federation::sync(&cli.global, flag.json),
        Command::Peers(flag) => federation::peers(&cli.global, flag.json),
    }
}

/// Resolves the configuration from the global flags plus `extra`.
pub(crate) fn resolve(global: &crate::cli::GlobalArgs, extra: Overrides) -> anyhow::Result<Config> {
    let tls = ecp_node::tls::TlsFiles {
        client_cert: global.tls_client_cert.clone(),
        client_key: global.tls_client_key.clone(),
        ..extra.tls.clone()
    };
    let over = Overrides {
        data: global.data.clone(),
        skills_dirs: global.skills_dir.clone(),
        sharing_mode: global.sharing_mode.clone(),
        peers: global.peers.clone(),
        tls,
        ..extra
    };
    Ok(Config::resolve(global.config.as_deref(), over)?)
}

/// Opens the library of the resolved configuration (for commands other than
/// `serve`). Only `create` makes a new data folder: a command that reads a
/// folder without a node in it was almost surely given the wrong `--data`.
pub(crate) fn open_library(config: &Config, create: bool) -> anyhow::Result<Library> {
    let data = config.data_dir.display();
    if !create && !config.data_dir.join(ecp_node::store::DB_FILE).is_file() {
        bail!("{data} holds no ecp-node data; pass --data DIR with the folder `ecp-node serve` uses");
    }
    Library::open(&config.data_dir, &config.skills_dir)
        .map(|library| {
            library
                .with_limits(config.merge_limits())
                .with_sharing(ecp_node::sharing::Sharing::new(config.sharing.clone()))
        })
        .with_context(|| format!("cannot open the node's data in {data} (see --data)"))
}
