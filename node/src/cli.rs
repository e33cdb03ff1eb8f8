//! The command line: every subcommand and flag, with its help text and
//! environment variable. What the flags mean is resolved in
//! [`ecp_node::config`]; what the commands do is in [`crate::commands`].
//!
//! # Layout
//!
//! - `cli.rs`: the subcommands and the flags that are no setting of the
//!   node (`--config`, `--init`, each command's own).
//! - `cli/keys.rs`: the flags of the node's settings, made from the key
//!   table ([`ecp_node::config::KEYS`]); each command flattens
//!   `Keys<{ Scope::of_command("name") }>`, so it shows exactly the flags
//!   the table's scopes give it.
//! - `cli/records.rs`: the subcommands of the store's records (`skill`,
//!   `quarantine`, `deletions`, `inbox`, `proposals`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use ecp_node::config::{Flags, Scope, Secret};

mod keys;
mod records;

pub(crate) use keys::{GlobalKeys, Keys};
pub(crate) use records::{
    DeletionsCommand, InboxCommand, InboxPick, ProposalsCommand, QuarantineCommand, SkillCommand,
};

/// ecp-node — share agent skills with peers over ECP, safely.
///
/// Runs with no configuration: `ecp-node serve` listens on 127.0.0.1:7327,
/// keeps its data in ./ecp-data and writes the skills it holds to
/// ./ecp-data/skills/<name>/SKILL.md. The other commands work on the same
/// data folder, also while a server runs on it: then their changes go
/// through the server's /v1 API (with the token in <data>/api-token), and
/// `status` and `peers` show its live view.
#[derive(Debug, Parser)]
#[command(name = "ecp-node", version, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// A node.toml with the node's settings (flags and environment
    /// variables win over it; `ecp-node config show` lists every key).
    #[arg(long = "config", env = "ECP_CONFIG", global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Create the data folder (a new node, with a new identity) if it does
    /// not exist. Only `serve` creates one without it, so that a mistyped
    /// --data is an error rather than a new node.
    #[arg(long, global = true)]
    pub(crate) init: bool,
    /// The settings every command takes (data folder, skills folders,
    /// peers file, log format), from the key table.
    #[command(flatten)]
    pub(crate) keys: GlobalKeys,
}

impl GlobalArgs {
    /// These flags with a command's own settings' flags added: what the
    /// command resolves its configuration from.
    pub(crate) fn with(&self, flags: Flags) -> GlobalArgs {
        let mut keys = self.keys.0.clone();
        keys.extend(flags);
        GlobalArgs { config: self.config.clone(), init: self.init, keys: Keys(keys) }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the node: serve ECP over HTTP until SIGINT or SIGTERM.
    // Boxed: its many flags make it several times larger than the others.
    Serve(Box<ServeArgs>),
    /// Add, list, show, remove or scan skills.
    Skill(Scoped<SkillCommand, { Scope::of_command("skill") }>),
    /// Review refused packets: list, show, approve (install) or drop them.
    Quarantine(Scoped<QuarantineCommand, { Scope::of_command("quarantine") }>),
    /// Review skills from peers before they reach the skills folder
    /// (`--intake review`): list, show, accept or reject them.
    Inbox(Scoped<InboxCommand, { Scope::of_command("inbox") }>),
    /// Proposals (#20): edits of received skills offered back to their
    /// origin — sent from here, held here for your review, or relayed.
    /// List, show, diff, accept (publish a new version crediting the
    /// proposer) or reject (with a note the proposer reads).
    Proposals(Scoped<ProposalsCommand, { Scope::of_command("proposals") }>),
    /// Deletions held because too many skills left the skills folder at
    /// once, or one peer withdrew too many at once: list them, accept (the
    /// tombstones go out, or a peer's are merged) or reject (the skills
    /// stay).
    Deletions(Scoped<DeletionsCommand, { Scope::of_command("deletions") }>),
    /// Show the node's instance id, sequence number and counts (the running
    /// server's, when one runs on the data folder).
    Status(StatusArgs),
    /// Ask the running node whether it is ready (exit 0) or not (exit 1),
    /// with the reasons: for exec probes. Takes serve's flags and
    /// environment, to find the node as it was started.
    Health(Box<HealthArgs>),
    /// Pull from a peer once: merge what changed there since the last pull.
    Pull(PullArgs),
    /// Push to a peer once: send it what changed here since it last
    /// acknowledged — skills and tombstones, and the files of bundles it
    /// lacks — and print what its merge made of them.
    Push(PushArgs),
    /// Pull from and push to every peer of the peers file (--peers) now.
    Sync(SyncArgs),
    /// The node's configuration as `serve` would resolve it.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Show each peer's state: last success, cursor, failures, configured or
    /// discovered (the running server's view, when one runs on the data
    /// folder); `peers add` and `peers rm` edit the peers file (--peers).
    Peers(PeersArgs),
    /// Read the audit log — every merge decision and operator action —
    /// from the data folder, read-only, whether a server runs on it or not.
    Audit(AuditArgs),
    /// Follow the decisions of the server running on the data folder as it
    /// makes them (its GET /v1/events stream).
    Events(EventsArgs),
    /// Print a link that logs a browser in to the running server's status
    /// page (`GET /`): it works once, within ten minutes, and only for the
    /// user who can read the data folder's API token.
    Ui,
    /// Write a lockfile (TOML) naming the version of every skill in the
    /// skills folder: name, digest, origin, sorted by name.
    Lock(LockArgs),
    /// Make the skills folder hold exactly the versions of a lockfile:
    /// from the store, else fetched by digest from the peers (--peers), each
    /// through the merge's checks. Exit 0: done; 1: a skill could not be
    /// installed (named), or with --frozen the folder differs; 2: error.
    Install(InstallArgs),
    /// Report drift of the skills folder — edited by hand, missing, extra —
    /// against what the node would write there, or against a lockfile.
    /// Exit 0: clean; 1: drift; 2: error.
    Verify(VerifyArgs),
    /// Serve the skills to an agent over MCP (the Model Context Protocol)
    /// on standard input and output: the command an agent's MCP
    /// configuration starts. Tools search_skills, read_skill,
    /// list_skill_files, read_skill_file, report_outcome; each skill a
    /// resource skill://NAME/SKILL.md. Reads the data folder's store; an
    /// outcome report goes to the server running on it, if one does.
    Mcp,
    /// Offline archives, for machines with no network path to the mesh:
    /// export skills to one signed file, import one through the merge's
    /// checks. Import exits 1 when a skill of it was refused, 2 on error (a
    /// tampered archive, named by the skill that failed).
    Archive(Scoped<ArchiveCommand, { Scope::of_command("archive") }>),
    /// The agents' folders ([[agent]] in node.toml): list them, show what
    /// one's listing holds and why, add or remove one (edits --config).
    #[command(subcommand)]
    Agents(AgentsCommand),
}

/// `archive export | import` (#25 item 5).
#[derive(Debug, Subcommand)]
pub(crate) enum ArchiveCommand {
    /// Write the skills this node shares (or those named) to one file,
    /// with their bundles' files, provenance and origin signatures, signed
    /// with the node's key.
    Export {
        /// Skill names; none: every skill the node shares.
        names: Vec<String>,
        /// The archive to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Take an archive in: checked whole first (sizes, the exporter's
    /// signatures, every file), then merged as an update from the exporter.
    Import {
        /// The archive.
        file: PathBuf,
        /// Trust in the exporter, 0–1, when it is no configured peer (whose
        /// trust it gets); default: the trust of an unconfigured sender
        /// (`[policy] default_trust`).
        #[arg(long)]
        trust: Option<f64>,
    },
}

/// `agents …` (#24 item 3).
#[derive(Debug, Subcommand)]
pub(crate) enum AgentsCommand {
    /// The agents of node.toml: folder, budget, and what each listing holds now.
    List(JsonFlag),
    /// What NAME's folder lists and what it leaves out, each skill with why.
    Show {
        /// The agent's name.
        name: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Add an [[agent]] to node.toml (--config FILE; created when missing),
    /// keeping the file's comments. A running server applies it at its next start.
    Add(AgentAddArgs),
    /// Remove the [[agent]] NAME from node.toml, keeping the file's comments.
    /// Nothing in its folder is deleted.
    Remove {
        /// The agent's name.
        name: String,
    },
}

/// Flags of `agents add`.
#[derive(Debug, Args)]
pub(crate) struct AgentAddArgs {
    /// The agent's name: letters, digits, '-' or '_'.
    pub(crate) name: String,
    /// The folder the agent reads its skills from.
    #[arg(long, value_name = "DIR")]
    pub(crate) path: PathBuf,
    /// The listing's budget, in characters of `name: description` per skill.
    #[arg(long, value_name = "N")]
    pub(crate) budget_chars: u64,
    /// `top`: the best by evidence within the budget; `all`: every skill
    /// (a warning when over the budget).
    #[arg(long, default_value = "top", value_parser = ["top", "all"])]
    pub(crate) select: String,
    /// Only skills with one of these tags are ranked (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub(crate) tags: Vec<String>,
    /// A skill always listed (repeatable).
    #[arg(long = "include", value_name = "SKILL")]
    pub(crate) include: Vec<String>,
}

/// Flags of `lock` (#25 item 3).
#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// The agent whose folder (`[[agent]]`) to use; required when there are several.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// Where to write the lockfile.
    #[arg(long, value_name = "FILE", default_value = "ecp.lock")]
    pub(crate) out: PathBuf,
    /// The settings' flags of its scopes.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("lock") }>,
}

/// Flags of `install` (#25 item 3).
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The agent whose folder (`[[agent]]`) to use; required when there are several.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The lockfile to install.
    #[arg(long, value_name = "FILE")]
    pub(crate) locked: PathBuf,
    /// Change nothing: exit 1 when the skills folder differs from the lockfile.
    #[arg(long)]
    pub(crate) frozen: bool,
    /// The settings' flags of its scopes.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("install") }>,
}

/// Flags of `verify` (#25 item 3).
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The agent whose folder (`[[agent]]`) to use; required when there are several.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// Compare with this lockfile's versions instead of the store's.
    #[arg(long, value_name = "FILE")]
    pub(crate) locked: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) json: JsonFlag,
    /// The settings' flags of its scopes.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("verify") }>,
}

/// A command with subcommands, and the settings' flags of the scopes
/// `SCOPES`, which each of its subcommands takes.
#[derive(Debug, Args)]
pub(crate) struct Scoped<C: Subcommand, const SCOPES: u8> {
    /// The settings' flags.
    #[command(flatten)]
    pub(crate) keys: Keys<SCOPES>,
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: C,
}

/// Flags of `status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// `--json`.
    #[command(flatten)]
    pub(crate) json: JsonFlag,
    /// The settings' flags of its scopes.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("status") }>,
}

/// `peers [add | rm]` (#16 item 8).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct PeersArgs {
    /// `--json`, for the list.
    #[command(flatten)]
    pub(crate) json: JsonFlag,
    /// Edit the peers file instead of listing the peers' state.
    #[command(subcommand)]
    pub(crate) edit: Option<PeersCommand>,
}

/// `peers add | rm`: edits of the peers file (--peers); a running server
/// reloads it as it does on any change.
#[derive(Debug, Subcommand)]
pub(crate) enum PeersCommand {
    /// Add a [[peer]] to the peers file (made if missing), its other lines
    /// and comments kept.
    Add {
        /// The peer's base URL, e.g. http://192.0.2.7:7327.
        #[arg(value_name = "URL")]
        url: String,
        /// Trust in what comes from it, 0–1 (default: 0.9).
        #[arg(long, value_name = "T")]
        trust: Option<f64>,
        /// Push our changes to it as they happen.
        #[arg(long)]
        push: bool,
    },
    /// Remove the [[peer]] of URL from the peers file, its other lines kept.
    Rm {
        /// The peer's base URL, as in the peers file.
        #[arg(value_name = "URL")]
        url: String,
    },
}

/// Flags of `audit` (#16).
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// Only entries at or after TIME: RFC 3339 (2026-01-02T15:04:05Z) or an
    /// age back from now (30s, 10m, 2h, 1d).
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,
    /// Only entries about the skill NAME.
    #[arg(long, value_name = "NAME")]
    pub(crate) skill: Option<String>,
    /// Only entries of the peer at URL (or of the instance id given instead).
    #[arg(long, value_name = "URL")]
    pub(crate) peer: Option<String>,
    /// Keep printing new entries as they are written, until interrupted.
    #[arg(long)]
    pub(crate) follow: bool,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Flags of `events` (#16).
#[derive(Debug, Args)]
pub(crate) struct EventsArgs {
    /// Stream the decisions made from now on, until interrupted or the
    /// server stops (required: `audit` prints what happened before).
    #[arg(long)]
    pub(crate) follow: bool,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// How `pull` and `push` reach a peer.
#[derive(Debug, Args)]
pub(crate) struct PeerArgs {
    /// The peer's base URL, e.g. http://192.0.2.7:7327.
    #[arg(value_name = "PEER_URL")]
    pub(crate) url: String,
    /// The peer's shared secret: requests are signed with it as the ECP/1.2
    /// key `default` (default: the secret or key of its [[peer]] in --peers,
    /// else this node's own key from node.toml).
    #[arg(long, env = "ECP_PEER_SECRET", value_name = "S", hide_env_values = true)]
    pub(crate) secret: Option<Secret>,
    /// The peer speaks only ECP/1.1 (a Go node): also send X-ECP-HMAC made
    /// with the secret, and take its answers unsigned.
    #[arg(long)]
    pub(crate) legacy: bool,
    /// For an https URL: trust only this CA (PEM) instead of the system's
    /// roots (default: the ca of its [[peer]] in --peers, if any).
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
}

/// Flags of `pull`: the peer's, the trust in what it brings, and the limits
/// on what the merge installs.
#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// The peer.
    #[command(flatten)]
    pub(crate) peer: PeerArgs,
    /// Trust in what this pull brings, 0–1: the skills' confidence is
    /// lowered by it (default: its [[peer]] trust in --peers, else the trust
    /// in unconfigured senders, 0.6).
    #[arg(long, value_name = "T")]
    pub(crate) trust: Option<f64>,
    /// Print the pull's report (cursor, packets, merge result) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// The settings' flags of its scopes: the limits and the intake, as
    /// `serve` takes them.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("pull") }>,
}

/// Flags of `push`: the peer's. What is sent is what the peer has not
/// acknowledged yet; the trust and limits are the receiving peer's own.
#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    /// The peer.
    #[command(flatten)]
    pub(crate) peer: PeerArgs,
    /// Print the push's report (packets sent, updates, the peer's merge
    /// result) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// The settings' flags of its scopes (what is shared, the client certificate).
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("push") }>,
}

/// Flags of `sync`.
#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// `--json`.
    #[command(flatten)]
    pub(crate) json: JsonFlag,
    /// The settings' flags of its scopes, as `serve` takes them.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("sync") }>,
}

/// Flags of `health`.
#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// Ask whether the node is alive (`/livez`) instead of ready (`/readyz`).
    #[arg(long)]
    pub(crate) live: bool,
    /// The node's settings, as given to `serve`.
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

/// Flags of `serve`: one per key of the key table that `serve` takes
/// (`health` and `config show` take the same).
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The flags, from the key table.
    #[command(flatten)]
    pub(crate) keys: Keys<{ Scope::of_command("serve") }>,
}

impl ServeArgs {
    /// Every flag given.
    pub(crate) fn flags(self) -> Flags {
        self.keys.0
    }
}

/// `config …`
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print every setting with its value and where it came from (default,
    /// file, env, flag), secrets masked. Takes serve's flags and
    /// environment; needs no running server and creates nothing.
    Show {
        #[command(flatten)]
        json: JsonFlag,
        /// serve's flags.
        #[command(flatten)]
        serve: ServeArgs,
    },
}

/// `--json` for commands that print data.
#[derive(Debug, Args)]
pub(crate) struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}
