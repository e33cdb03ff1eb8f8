//! The subcommands that read and act on the store's records: `skill`,
//! `quarantine`, `deletions`, `inbox` and `proposals`, with their flags and
//! help text. What they do is in [`crate::commands`].

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::JsonFlag;

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
        /// List the skill's files instead (path, mode, size, sha256).
        #[arg(long)]
        files: bool,
        /// Also show how the skill fares across the mesh: the outcomes
        /// peers report for it, per observer, weighed by trust.
        #[arg(long, conflicts_with = "files")]
        mesh: bool,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Search the skills shown here, best first: words (all must match),
    /// `word*` for a prefix, `"a phrase"`; name and description count above the body.
    Search {
        /// What to search for.
        query: String,
        /// Most hits to show (1 to 100).
        #[arg(long, default_value_t = ecp_node::store::search::DEFAULT_LIMIT,
              value_parser = |s: &str| ecp_node::store::search::limit(Some(s)))]
        limit: usize,
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
    /// Report how a skill did after an agent used it: the node keeps score,
    /// its confidence follows, and a skill that keeps failing is retired.
    Outcome {
        /// Skill name.
        name: String,
        /// How it went.
        #[arg(value_parser = ["success", "failure"])]
        outcome: String,
        /// What happened (at most 1024 bytes).
        #[arg(long)]
        note: Option<String>,
        /// Your id for this report: sending it again does not count it twice.
        #[arg(long)]
        id: Option<String>,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Bring a retired skill back: into the skills folder, shared as before.
    Restore {
        /// Skill name.
        name: String,
    },
    /// A skill's kept versions: number, digest, origin, time, how it
    /// arrived, confidence, and which is current, pinned or locked.
    History {
        /// Skill name.
        name: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Keep a received skill's file at one version (its current one by
    /// default): newer versions are stored and shown as available, and
    /// written to the skills folder only once it is unpinned.
    Pin {
        /// Skill name.
        name: String,
        /// The version: its number in `skill history`, or its digest.
        #[arg(long, value_name = "VERSION|DIGEST")]
        to: Option<String>,
    },
    /// Undo `skill pin`: the skills folder shows the newest version again.
    Unpin {
        /// Skill name.
        name: String,
    },
    /// Go back to an earlier version (by default the one before the version
    /// shown): a received skill is pinned to it here; this node's own skill
    /// is published again with that content, so peers follow.
    Rollback {
        /// Skill name.
        name: String,
        /// The version: its number in `skill history`, or its digest.
        #[arg(long, value_name = "VERSION|DIGEST")]
        to: Option<String>,
    },
    /// Revoke one version of this node's own skill everywhere (`SPEC.md`
    /// §14): the revocation is signed with the node's key and travels to
    /// every peer, which goes back to its newest version not revoked and
    /// refuses the revoked one from then on.
    // `--version` is the flag: it names the skill's version, not the program's.
    #[command(disable_version_flag = true)]
    Revoke {
        /// Skill name.
        name: String,
        /// The version: its number in `skill history`, or its digest.
        #[arg(long, value_name = "VERSION|DIGEST")]
        version: String,
        /// Why, for the people who hold it (one line, at most 512 bytes).
        #[arg(long)]
        reason: String,
    },
    /// Publish your edit of a received skill (its derived version) as a
    /// local skill of its own under NEW-NAME; the received skill's file
    /// goes back to its origin's version.
    Fork {
        /// The received skill you edited.
        name: String,
        /// The name to publish your version under.
        #[arg(value_name = "NEW-NAME")]
        new_name: String,
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

/// `proposals …`
#[derive(Debug, Subcommand)]
pub(crate) enum ProposalsCommand {
    /// List proposals: sent from here, waiting for your review, relayed.
    List(JsonFlag),
    /// Show one proposal whole: what it derives from, its state, its text.
    Show {
        /// Proposal id from `proposals list`.
        id: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// The proposal's text against the version it edits, line by line.
    Diff {
        /// Proposal id from `proposals list`.
        id: String,
    },
    /// Accept a proposal for one of your skills: its text is published as
    /// the skill's new version, crediting the proposer.
    Accept {
        /// Proposal id from `proposals list`.
        id: String,
        /// A note the proposer reads back.
        #[arg(long)]
        note: Option<String>,
    },
    /// Reject a proposal; the proposer reads the state and your note.
    Reject {
        /// Proposal id from `proposals list`.
        id: String,
        /// Why, for the proposer.
        #[arg(long)]
        note: Option<String>,
    },
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
