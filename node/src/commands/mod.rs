//! What each subcommand does. `serve` starts a [`Node`](ecp_node::Node); the
//! others open the same store directly (SQLite lets them run beside a server).
//!
//! - `serve`: run the node.
//! - `skill`: add, list, show, remove and scan skills; keep one private or share it.
//! - `quarantine`: review refused packets.
//! - `inbox`: review skills from peers before they reach the skills folder.
//! - `proposals`: review proposals; the state of those sent (#20).
//! - `deletions`: release or drop the deletions the deletion guard held.
//! - `status`: identity, sequence number and counts.
//! - `health`: asks the running node whether it is ready or alive (probes).
//! - `federation`: `pull`, `push`, `sync` and `peers`.
//! - `peers_file`: `peers add` and `peers rm`, edits of the peers file.
//! - `config`: `config show`, the resolved settings and their sources.
//! - `audit`: the audit log, read-only from the data folder, filtered, followed.
//! - `events`: the running server's live decisions (`GET /v1/events`).
//! - `ui`: a one-time login link to the running server's status page.
//! - `versions`: `skill history | pin | unpin | rollback`.
//! - `lockfile`: `lock`, `install` and `verify`.
//! - `mcp`: the MCP server on standard input and output, for agents.
//! - `agents`: `agents list | show | add | remove` (`[[agent]]`, #24).
//! - `api`: the running server's `/v1/` API, one function per action.
//! - `progress`: the progress of `pull` and `sync` on standard error.
//! - `output`: printing shared by the commands.

mod agents;
mod api;
mod archive;
mod audit;
mod config;
mod deletions;
mod events;
mod federation;
mod health;
mod inbox;
mod lockfile;
mod mcp;
mod output;
mod peers_file;
mod progress;
mod proposals;
mod quarantine;
mod serve;
mod skill;
mod status;
mod ui;
mod versions;

use std::process::ExitCode;

pub(crate) use output::tell;

use anyhow::{Context, bail};
pub(crate) use api::Refusal;
use ecp_node::config::{Config, Env, Flags, Resolved, Sources};
use ecp_node::library::Library;

use crate::cli::{Cli, Command};

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::run(&cli.global, *args),
        Command::Skill(s) => skill::run(&cli.global.with(s.keys.0), s.command),
        Command::Quarantine(s) => quarantine::run(&cli.global.with(s.keys.0), s.command),
        Command::Inbox(s) => inbox::run(&cli.global.with(s.keys.0), s.command),
        Command::Proposals(s) => proposals::run(&cli.global.with(s.keys.0), s.command),
        Command::Deletions(s) => deletions::run(&cli.global.with(s.keys.0), s.command),
        Command::Status(args) => status::run(&cli.global.with(args.keys.0), args.json.json),
        Command::Health(args) => health::run(&cli.global, *args),
        Command::Pull(args) => federation::pull(&cli.global, args),
        Command::Push(args) => federation::push(&cli.global, args),
        Command::Sync(args) => federation::sync(&cli.global, args),
        Command::Peers(args) => match args.edit {
            None => federation::peers(&cli.global, args.json.json),
            Some(edit) => peers_file::run(&cli.global, edit),
        },
        Command::Config(command) => config::run(&cli.global, command),
        Command::Audit(args) => audit::run(&cli.global, &args),
        Command::Events(args) => events::run(&cli.global, &args),
        Command::Ui => ui::run(&cli.global),
        Command::Lock(args) => lockfile::lock(&cli.global.with(args.keys.0.clone()), &args),
        Command::Install(args) => lockfile::install(&cli.global.with(args.keys.0.clone()), &args),
        Command::Verify(args) => lockfile::verify(&cli.global.with(args.keys.0.clone()), &args),
        Command::Mcp => mcp::run(&cli.global),
        Command::Archive(s) => archive::run(&cli.global.with(s.keys.0), s.command),
        Command::Agents(command) => agents::run(&cli.global, command),
    }
}

/// Resolves the configuration from the environment, `--config` and the
/// global flags plus `serve`'s (those of `serve`, `health` and `config
/// show`; none for the other commands).
pub(crate) fn resolve(global: &crate::cli::GlobalArgs, serve: Flags) -> anyhow::Result<Config> {
    Ok(Config::from_resolved(&resolved(global, serve)?)?)
}

/// Each setting's value and where it came from, before [`Config`] checks
/// and combines them.
pub(crate) fn resolved(global: &crate::cli::GlobalArgs, serve: Flags) -> anyhow::Result<Resolved> {
    let mut flags = global.keys.0.clone();
    flags.extend(serve);
    let sources = Sources { file: global.config.clone(), env: Env::process(), flags };
    Ok(Resolved::load(&sources)?)
}

/// The log format the settings name, read before the log starts (so before
/// the command resolves them itself). Settings that do not resolve give
/// `text`: the command reports their error.
pub(crate) fn log_format(global: &crate::cli::GlobalArgs) -> crate::logging::Format {
    let resolved = resolved(global, Flags::default()).ok();
    crate::logging::Format::named(resolved.as_ref().and_then(|r| r.text("log.format")))
}

/// Where a write command sends its change.
pub(crate) enum Target {
    /// The server running on the data folder, through its `/v1/` API.
    Server(api::Server),
    /// The store itself: no server runs on the data folder.
    Store(Library),
}

/// The running server of `config`'s data folder, else its store (made with `init`).
pub(crate) fn write_target(config: &Config, init: bool) -> anyhow::Result<Target> {
    match api::running(config)? {
        Some(server) => Ok(Target::Server(server)),
        None => open_library(config, init).map(Target::Store),
    }
}

/// Opens the library of the resolved configuration (for commands other than
/// `serve`). Only `init` (`--init`) makes a new data folder: a command given
/// a folder without a node in it was almost surely given the wrong `--data`,
/// and must not make a new node with a new identity there.
pub(crate) fn open_library(config: &Config, init: bool) -> anyhow::Result<Library> {
    let data = config.data_dir.display();
    let exists = ecp_node::data_lock::data_folder_exists(&config.data_dir).map_err(anyhow::Error::msg)?;
    if !init && !exists {
        bail!(
            "the data folder {data} does not exist; pass --data DIR with the folder `ecp-node serve` uses, or \
             create a new node there with `ecp-node serve` or by adding --init to this command"
        );
    }
    let db = config.data_dir.join(ecp_node::store::DB_FILE);
    match std::fs::metadata(&db) {
        Ok(meta) if meta.is_file() => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !init {
                bail!(
                    "{data} holds no ecp-node data; pass --data DIR with the folder `ecp-node serve` uses, or add \
                     --init to make a new node there"
                );
            }
        }
        Ok(_) => bail!("{} is not a file; it must be the node's database (see --data)", db.display()),
        Err(e) => {
            bail!("cannot read {}: {e}; check the data folder's permissions (see --data)", db.display())
        }
    }
    // The peers' trust decides which received skills keep their grants.
    let peers = match &config.peers_file {
        Some(path) => ecp_node::config::PeersConfig::load(path)
            .with_context(|| format!("cannot read the peers file {}", path.display()))?,
        None => ecp_node::config::PeersConfig::default(),
    };
    Library::open(&config.data_dir, &config.skills_dir)
        .map(|library| {
            library
                .with_limits(config.merge_limits())
                .with_structure_limits(config.policy.structure.clone())
                .with_bundle_limits(config.policy.bundle.clone())
                .with_deletion_guard(config.deletion_guard)
                .with_intake(config.intake)
                .with_sharing(ecp_node::sharing::Sharing::new(config.sharing.clone()))
                .with_permissions(config.permission_policy(&peers))
                .with_agents(config.agents.clone())
        })
        .with_context(|| format!("cannot open the node's database {} (see --data)", db.display()))
}
