//! The command line: every subcommand and flag, with its help text and
//! environment variable. What the flags mean is resolved in
//! [`ecp_node::config`]; what the commands do is in [`crate::commands`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use ecp_node::config::Secret;
use ecp_node::intake::IntakeMode;
use ecp_node::permissions::ReceivedPermissions;

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
    /// Data folder: the database and, by default, the skills folder.
    #[arg(long = "data", env = "ECP_DATA", global = true, value_name = "DIR")]
    pub(crate) data: Option<PathBuf>,
    /// Skills folder agents read (default <data>/skills). Point it at an
    /// agent's own skills folder to share the skills the agent writes.
    /// Repeat it for several folders (all shared; `[[folder]] share = false`
    /// in node.toml keeps one private); skills received from peers go into
    /// the first.
    #[arg(long = "skills-dir", env = "ECP_SKILLS_DIR", global = true, value_name = "DIR")]
    pub(crate) skills_dir: Vec<PathBuf>,
    /// Which local skills are shared: `shared` (every one not kept private)
    /// or `listed` (only those [sharing] skills in node.toml names).
    #[arg(long = "sharing-mode", env = "ECP_SHARING_MODE", global = true, value_name = "MODE")]
    pub(crate) sharing_mode: Option<String>,
    /// A node.toml with the same settings (flags win over it).
    #[arg(long = "config", env = "ECP_CONFIG", global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The peers file (see peers.toml): whom `serve` and `sync` federate
    /// with. `serve` reloads it on SIGHUP and when it changes.
    #[arg(long = "peers", env = "ECP_PEERS", global = true, value_name = "FILE")]
    pub(crate) peers: Option<PathBuf>,
    /// Certificate (PEM chain) this node presents to https peers that ask
    /// for one (mTLS); a [[peer]]'s client_cert replaces it for that peer.
    #[arg(long, env = "ECP_TLS_CLIENT_CERT", global = true, value_name = "FILE")]
    pub(crate) tls_client_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-client-cert.
    #[arg(long, env = "ECP_TLS_CLIENT_KEY", global = true, value_name = "FILE")]
    pub(crate) tls_client_key: Option<PathBuf>,
    /// Create the data folder (a new node, with a new identity) if it does
    /// not exist. Only `serve` creates one without it, so that a mistyped
    /// --data is an error rather than a new node.
    #[arg(long, global = true)]
    pub(crate) init: bool,
    /// What happens to skills peers send: `auto` writes them to the skills
    /// folder at once; `review` keeps them in the inbox (`ecp-node inbox`)
    /// until you accept them. Either way the node stores and serves them.
    #[arg(long, env = "ECP_POLICY_INTAKE", global = true, value_name = "MODE",
        value_parser = clap::builder::TypedValueParser::map(
            clap::builder::PossibleValuesParser::new(["auto", "review"]),
            |mode| mode.parse::<IntakeMode>().expect("a possible value")))]
    pub(crate) intake: Option<IntakeMode>,
    /// What becomes of grants (`allowed-tools`, `hooks`, `[policy]
    /// permission_keys`) in received skills' frontmatter: `strip` removes
    /// them from the skill's file; `keep-from-trusted` keeps them when the
    /// skill's origin is a peer trusted at or above `[policy]
    /// permissions_trust`; `refuse` quarantines such skills.
    #[arg(long, env = "ECP_POLICY_RECEIVED_PERMISSIONS", global = true, value_name = "MODE",
        value_parser = clap::builder::TypedValueParser::map(
            clap::builder::PossibleValuesParser::new(["strip", "keep-from-trusted", "refuse"]),
            |mode| mode.parse::<ReceivedPermissions>().expect("a possible value")))]
    pub(crate) received_permissions: Option<ReceivedPermissions>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the node: serve ECP over HTTP until SIGINT or SIGTERM.
    // Boxed: its many flags make it several times larger than the others.
    Serve(Box<ServeArgs>),
    /// Add, list, show, remove or scan skills.
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Review refused packets: list, show, approve (install) or drop them.
    #[command(subcommand)]
    Quarantine(QuarantineCommand),
    /// Review skills from peers before they reach the skills folder
    /// (`--intake review`): list, show, accept or reject them.
    #[command(subcommand)]
    Inbox(InboxCommand),
    /// Deletions held because too many skills left the skills folder at
    /// once: list them, accept (the tombstones go out) or reject (the files
    /// are written back).
    #[command(subcommand)]
    Deletions(DeletionsCommand),
    /// Show the node's instance id, sequence number and counts (the running
    /// server's, when one runs on the data folder).
    Status(JsonFlag),
    /// Ask the running node whether it is ready (exit 0) or not (exit 1),
    /// with the reasons: for exec probes. Takes serve's flags and
    /// environment, to find the node as it was started.
    Health(Box<HealthArgs>),
    /// Pull from a peer once: merge what changed there since the last pull.
    Pull(PeerArgs),
    /// Push to a peer once: send what changed here since it last acknowledged.
    Push(PeerArgs),
    /// Pull from and push to every peer of the peers file (--peers) now.
    Sync(JsonFlag),
    /// Show each peer's state: last success, cursor, failures, configured or
    /// discovered (the running server's view, when one runs on the data folder).
    Peers(JsonFlag),
}

/// Flags of `pull` and `push`.
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
    /// Trust in what a pull brings, 0–1 (default: its [[peer]] trust in
    /// --peers, else the trust in unconfigured senders, 0.6).
    #[arg(long, value_name = "T")]
    pub(crate) trust: Option<f64>,
    /// For an https URL: trust only this CA (PEM) instead of the system's
    /// roots (default: the ca of its [[peer]] in --peers, if any).
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
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

/// Flags of `serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:7327, or `listen` of node.toml).
    #[arg(long, env = "ECP_LISTEN", value_name = "ADDR")]
    pub(crate) listen: Option<String>,
    /// A second address serving only /livez, /readyz and /healthz over plain
    /// HTTP, for probes that cannot present a client certificate (mTLS).
    #[arg(long, env = "ECP_SERVER_HEALTH_LISTEN", value_name = "ADDR")]
    pub(crate) health_listen: Option<String>,
    /// Shared secret: requests must be signed with it, as the ECP/1.2 key
    /// `default` (or by X-ECP-HMAC, see --accept-legacy). Without it and
    /// without keys ([[key]] in node.toml, key_id in the peers file) the
    /// node is open (a loud warning if it listens beyond loopback).
    #[arg(long, env = "ECP_SECRET", value_name = "S", hide_env_values = true)]
    pub(crate) secret: Option<Secret>,
    /// A file holding the shared secret, so it is neither on the command
    /// line (visible in `ps`) nor in the environment: systemd credentials,
    /// a Kubernetes secret mounted as a file. One trailing line break is
    /// not part of the secret. --secret wins over it.
    #[arg(long, env = "ECP_SECRET_FILE", value_name = "FILE")]
    pub(crate) secret_file: Option<std::path::PathBuf>,
    /// Accept the legacy, replayable X-ECP-HMAC header made with the secret
    /// (default true, for Go peers); false once every peer signs with ECP/1.2.
    #[arg(long, env = "ECP_ACCEPT_LEGACY", value_name = "BOOL", action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) accept_legacy: Option<bool>,
    /// A name clients reach this node by (`host` on any port, or
    /// `host:port`), when it is not the address they connect to: a DNS name,
    /// a proxy's. Signed requests must be signed for the address or one of
    /// these names (repeat the flag, or separate names by commas).
    #[arg(long = "name", env = "ECP_NAMES", value_name = "HOST[:PORT]", value_delimiter = ',')]
    pub(crate) names: Vec<String>,
    /// Largest request body in bytes (default 8 MiB).
    #[arg(long, env = "ECP_MAX_BODY_BYTES", value_name = "N")]
    pub(crate) max_body_bytes: Option<usize>,
    /// Request-body bytes the node holds at once across all pushes (default
    /// 67108864, 64 MiB; at least --max-body-bytes). One client address may
    /// hold half; a push that finds no room within 2 s gets 503.
    #[arg(long, env = "ECP_LIMITS_BODY_BYTES_IN_FLIGHT", value_name = "N")]
    pub(crate) body_bytes_in_flight: Option<usize>,
    /// Most packets in one update (default 10000); more is refused with 413.
    #[arg(long, env = "ECP_MAX_PACKETS", value_name = "N")]
    pub(crate) max_packets: Option<usize>,
    /// Let any process on this machine use the /v1 API without the API
    /// token (<data>/api-token), as before the token existed; a request a
    /// proxy forwarded (Forwarded, X-Forwarded-For) still needs it. Logs a
    /// warning at start.
    #[arg(long, env = "ECP_SERVER_TRUST_LOOPBACK", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) trust_loopback: bool,
    /// Do not advertise or browse for nodes by mDNS (`_ecp._tcp.local.`).
    #[arg(long, env = "ECP_NO_MDNS", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) no_mdns: bool,
    /// Most skills newly installed from one origin (originInstance) in any
    /// hour (default 1000; 0: no limit). A push that would exceed it gets 429
    /// and changes nothing; a pull installs what fits and retries the rest.
    #[arg(long, env = "ECP_ORIGIN_LIMIT_HOUR", value_name = "N")]
    pub(crate) origin_limit_hour: Option<u64>,
    /// Most skills newly installed from one origin in any 24 hours (default
    /// 5000; 0: no limit).
    #[arg(long, env = "ECP_ORIGIN_LIMIT_DAY", value_name = "N")]
    pub(crate) origin_limit_day: Option<u64>,
    /// Most skills newly installed from one sender in any hour, whatever
    /// origins they claim (default 2000; 0: no limit). The sender is the
    /// configured peer (pulled from, or pushing signed with its own key), or
    /// else the client address (IPv6: its /64).
    #[arg(long, env = "ECP_SENDER_LIMIT_HOUR", value_name = "N")]
    pub(crate) sender_limit_hour: Option<u64>,
    /// Most skills newly installed from one sender in any 24 hours (default
    /// 10000; 0: no limit).
    #[arg(long, env = "ECP_SENDER_LIMIT_DAY", value_name = "N")]
    pub(crate) sender_limit_day: Option<u64>,
    /// Most quarantine entries held at once (default 10000). Over it, each
    /// sender keeps an equal share and loses its oldest entries beyond.
    #[arg(long, env = "ECP_QUARANTINE_ENTRIES", value_name = "N")]
    pub(crate) quarantine_entries: Option<u64>,
    /// Most bytes the quarantine holds at once (default 67108864, 64 MiB),
    /// shared between senders as the entries are.
    #[arg(long, env = "ECP_QUARANTINE_BYTES", value_name = "N")]
    pub(crate) quarantine_bytes: Option<u64>,
    /// Largest refused packet the quarantine keeps whole (default 262144,
    /// 256 KiB); a larger one is kept as an excerpt with its size and
    /// SHA-256, for review, and cannot be approved.
    #[arg(long, env = "ECP_QUARANTINE_BODY_BYTES", value_name = "N")]
    pub(crate) quarantine_body_bytes: Option<u64>,
    /// Superseded versions kept per skill (default 10; 0: only the current
    /// one); older ones are pruned as each skill changes.
    #[arg(long, env = "ECP_HISTORY_DEPTH", value_name = "N")]
    pub(crate) history_depth: Option<u64>,
    /// Requests per minute one client address may send, sustained (default
    /// 600; 0: no limit); more get 429. Loopback clients are not limited
    /// unless `[limits] client_rate_limit_loopback = true`, or a proxy
    /// forwarded the request (Forwarded, X-Forwarded-For).
    #[arg(long, env = "ECP_CLIENT_RATE_LIMIT", value_name = "N")]
    pub(crate) client_rate_limit: Option<u32>,
    /// Requests one client address may send at once (default 120).
    #[arg(long, env = "ECP_CLIENT_BURST", value_name = "N")]
    pub(crate) client_burst: Option<u32>,
    /// Most connections open at once (default 1024). When all are taken, a
    /// client from an address holding fewer takes the oldest connection of
    /// the address holding the most.
    #[arg(long, env = "ECP_MAX_CONNECTIONS", value_name = "N")]
    pub(crate) max_connections: Option<usize>,
    /// Most connections one client address (IPv6: one /64) holds at once
    /// (default 64); more are closed at once.
    #[arg(long, env = "ECP_MAX_CONNECTIONS_PER_ADDRESS", value_name = "N")]
    pub(crate) max_connections_per_address: Option<usize>,
    /// Most skills one import pass tombstones without asking (default 5): a
    /// pass that would tombstone more, and more than
    /// --max-bulk-delete-fraction of the folder, is held (`ecp-node deletions`).
    #[arg(long, env = "ECP_LIMITS_MAX_BULK_DELETE", value_name = "N")]
    pub(crate) max_bulk_delete: Option<u64>,
    /// Largest share of the folder's skills one import pass tombstones
    /// without asking (default 0.5; 0 to 1).
    #[arg(long, env = "ECP_LIMITS_MAX_BULK_DELETE_FRACTION", value_name = "SHARE")]
    pub(crate) max_bulk_delete_fraction: Option<f64>,
    /// Serve HTTPS with this certificate: a PEM file, the node's certificate
    /// first, then its intermediates.
    #[arg(long, env = "ECP_TLS_CERT", value_name = "FILE")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key (PEM: PKCS#8, RSA or EC) of --tls-cert.
    #[arg(long, env = "ECP_TLS_KEY", value_name = "FILE")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Require a client certificate issued by one of these CAs (PEM) from
    /// every client (mTLS); clients without one fail the TLS handshake.
    #[arg(long, env = "ECP_CLIENT_CA", value_name = "FILE")]
    pub(crate) client_ca: Option<PathBuf>,
}

/// `--json` for commands that print data.
#[derive(Debug, Args)]
pub(crate) struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `skill …`
#[derive(Debug, Subcommand)]
pub(crate) enum SkillCommand {
    /// Add a SKILL.md file, or every <name>/SKILL.md in a folder, as local skills.
    Add {
        /// A SKILL.md file or a folder of skill folders.
        path: PathBuf,
    },
    /// List every skill (tombstones marked).
    List(JsonFlag),
    /// Show one skill: its record, body and versions.
    Show {
        /// Skill name.
        name: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Remove a skill: it becomes a tombstone that travels to peers.
    Rm {
        /// Skill name.
        name: String,
    },
    /// Keep a local skill on this node: stored and in the skills folder as
    /// before, never served to peers (withdrawn with a tombstone if they had it).
    Private {
        /// Skill name.
        name: String,
    },
    /// Undo `skill private`: share the skill again, unless something else
    /// keeps it home (the command says what).
    Share {
        /// Skill name.
        name: String,
        /// Share it even though the secret scan finds credentials in it:
        /// for this content only — an edit is scanned and held again.
        #[arg(long)]
        allow_secrets: bool,
    },
    /// Scan a SKILL.md (or a folder of them) for dangerous content.
    /// Exit 0: clean; 1: something at or above the refusal threshold; 2: error.
    Scan {
        /// A SKILL.md file or a folder.
        path: PathBuf,
        #[command(flatten)]
        json: JsonFlag,
    },
}

/// `quarantine …`
#[derive(Debug, Subcommand)]
pub(crate) enum QuarantineCommand {
    /// List held entries with their reasons and findings.
    List(JsonFlag),
    /// Show one held entry whole: the reason, the findings with their line
    /// numbers, the provenance path and the body.
    Show {
        /// Entry id from `quarantine list`.
        id: i64,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Install a held entry: as an external skill, its confidence lowered by
    /// the trust its sender had, re-served if the policy re-shares. Origin
    /// limits do not apply to approvals. An entry refused by the safety scan
    /// or with any scan finding needs --force (its findings are printed
    /// first). Audited.
    Approve {
        /// Entry id from `quarantine list`.
        id: i64,
        /// Install it even though the scan flagged it.
        #[arg(long)]
        force: bool,
    },
    /// Remove held entries for good (the same packet re-sent stays dropped):
    /// one by id, all of them, or those first received longer ago than a
    /// duration. Audited.
    #[command(group(clap::ArgGroup::new("which").required(true).args(["id", "all", "older_than"])))]
    Drop {
        /// Entry id from `quarantine list`.
        id: Option<i64>,
        /// Every held entry.
        #[arg(long)]
        all: bool,
        /// Entries first received longer ago than this, e.g. `7d`, `12h`.
        #[arg(long, value_name = "DURATION")]
        older_than: Option<String>,
    },
}

/// `deletions …`
#[derive(Debug, Subcommand)]
pub(crate) enum DeletionsCommand {
    /// List the held deletions: the skills folder's, and peers' bulk withdrawals.
    List(JsonFlag),
    /// Accept a held deletion: its skills become tombstones and peers learn
    /// of it (a peer's withdrawals are merged as they came: a newer version
    /// received meanwhile wins). Without ID, the only one held.
    Accept {
        /// Deletion id from `deletions list`.
        id: Option<i64>,
    },
    /// Reject a held deletion: its skills stay (the skills folder's files are
    /// written back; a peer's withdrawals are dropped). Without ID, the only
    /// one held.
    Reject {
        /// Deletion id from `deletions list`.
        id: Option<i64>,
    },
}

/// `inbox …`
#[derive(Debug, Subcommand)]
pub(crate) enum InboxCommand {
    /// List the skills waiting for review.
    List(JsonFlag),
    /// Show one waiting skill whole: origin, confidence, provenance and body.
    Show {
        /// Entry id from `inbox list`.
        id: i64,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Accept a waiting skill (or --all): it is written to the skills folder.
    #[command(group(clap::ArgGroup::new("which").required(true).args(["id", "all"])))]
    Accept(InboxPick),
    /// Reject a waiting skill (or --all): it stays out of the skills folder,
    /// and this version is not offered again (a newer one is).
    #[command(group(clap::ArgGroup::new("which").required(true).args(["id", "all"])))]
    Reject(InboxPick),
}

/// Which inbox entries `accept` and `reject` decide on.
#[derive(Debug, Args)]
pub(crate) struct InboxPick {
    /// Entry id from `inbox list`.
    pub(crate) id: Option<i64>,
    /// Every waiting entry.
    #[arg(long)]
    pub(crate) all: bool,
}
