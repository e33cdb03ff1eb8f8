//! The one table of the node's settings: every key of `node.toml` with its
//! section, type, default, environment variable, flag and meaning.
//!
//! Everything else derives from it: which keys `node.toml` may hold
//! ([`super::sources`]), which environment variables are read and which
//! flags the command line has (`cli.rs` builds them from [`KEYS`]), the
//! precedence (flag > environment > file > default, the same for every
//! key), `ecp-node config show`, and the table in README.md (a test keeps it
//! equal to [`markdown`]).
//!
//! Arrays of tables (`[[folder]]`, `[[key]]`) have no row: they are
//! file-only, listed in [`FILE_ONLY_ARRAYS`].
//!
//! What it does not do: parse or check values — [`super::sources`] turns
//! text into typed values by [`Kind`], [`super::resolve`] checks ranges.

/// What a key holds, and so how its text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any text.
    Text,
    /// A file or folder; relative to the working directory.
    Path,
    /// Several folders (a repeated flag); one in the file or environment.
    Paths,
    /// An address with a port, like `127.0.0.1:7327`.
    Addr,
    /// `true` or `false` (the environment and flags also take `1`/`0`,
    /// `yes`/`no`, `on`/`off`).
    Bool,
    /// A whole number, 0 or more.
    Count,
    /// A number from 0 to 1.
    Share,
    /// A duration like `"30s"`, `"5m"`, `"1h"`.
    Duration,
    /// A list of texts: an array in the file, comma-separated in the
    /// environment, a repeated (or comma-separated) flag.
    List,
    /// One of the texts given.
    Choice(&'static [&'static str]),
    /// A secret: never printed, masked by `config show`.
    Secret,
}

/// Which commands take a key's flag: each shows only on the commands it
/// affects (#16 item 8). The CLI is built from [`Scope::commands`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every command: where the node is (data folder, skills folders, peers
    /// file) and how it logs.
    Global,
    /// `serve`, `health` and `config show` (how the server runs).
    Serve,
    /// `serve` (so `health` and `config show`) and the commands that merge
    /// what peers send, `pull` and `sync`: the limits on what merges bring.
    Merge,
    /// What is applied to skills received from peers and to their files
    /// (intake, grants): the serve commands, `pull`, `sync`, and the
    /// commands that install or write them back — `quarantine`, `inbox`,
    /// `deletions`.
    Received,
    /// What leaves the node (the sharing mode): the serve commands, `push`,
    /// `sync`, `skill` and `status`.
    Shared,
    /// The limits on a skill's text, imported or received: the serve
    /// commands, `pull`, `sync` and `skill`.
    Content,
    /// How the node connects to peers (its client certificate): the serve
    /// commands, `pull`, `push` and `sync`.
    Outbound,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 7] = [
        Scope::Global,
        Scope::Serve,
        Scope::Merge,
        Scope::Received,
        Scope::Shared,
        Scope::Content,
        Scope::Outbound,
    ];

    /// The top-level commands whose flags these are, with all their
    /// subcommands; none for [`Scope::Global`], which every command takes.
    pub const fn commands(self) -> &'static [&'static str] {
        const SERVE: [&str; 3] = ["serve", "health", "config"];
        match self {
            Scope::Global => &[],
            Scope::Serve => &SERVE,
            Scope::Merge => &[SERVE[0], SERVE[1], SERVE[2], "pull", "sync"],
            Scope::Received => {
                &[SERVE[0], SERVE[1], SERVE[2], "pull", "sync", "quarantine", "inbox", "deletions"]
            }
            Scope::Shared => &[SERVE[0], SERVE[1], SERVE[2], "push", "sync", "skill", "status"],
            Scope::Content => &[SERVE[0], SERVE[1], SERVE[2], "pull", "sync", "skill"],
            Scope::Outbound => &[SERVE[0], SERVE[1], SERVE[2], "pull", "push", "sync"],
        }
    }

    /// The scope as one bit of a set of scopes.
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The scopes whose flags the top-level `command` takes besides the
    /// global ones, as a set of [`Scope::bit`]s.
    pub const fn of_command(command: &str) -> u8 {
        let mut set = 0;
        let mut i = 0;
        while i < Scope::ALL.len() {
            let commands = Scope::ALL[i].commands();
            let mut j = 0;
            while j < commands.len() {
                if same(commands[j], command) {
                    set |= Scope::ALL[i].bit();
                }
                j += 1;
            }
            i += 1;
        }
        set
    }
}

/// `a == b`, for const functions.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A key's command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// The long name, without `--`.
    pub long: &'static str,
    /// Which commands take it.
    pub scope: Scope,
    /// How it is written.
    pub form: Form,
}

/// How a flag is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `--flag VALUE` (repeated for [`Kind::Paths`] and [`Kind::List`]).
    Value,
    /// `--flag` alone sets a [`Kind::Bool`] key to true.
    Switch,
    /// `--flag` alone sets a [`Kind::Bool`] key to false, and its
    /// environment variable says the opposite of the key too
    /// (`--no-mdns`, `ECP_NO_MDNS=true`: `mdns = false`).
    NegatedSwitch,
}

/// One key of `node.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The table it is in (`limits`, `policy`, …); `""` for top-level keys.
    pub section: &'static str,
    /// Its name in the file.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// The default as the file would spell it; `None`: unset unless given.
    pub default: Option<&'static str>,
    /// Its environment variable.
    pub env: &'static str,
    /// Its flag, if it has one.
    pub flag: Option<Flag>,
    /// What it means, and what the default means (one line, Markdown).
    pub doc: &'static str,
}

impl Key {
    /// `section.name`, or `name` for a top-level key: how errors and
    /// `config show` name it.
    pub fn id(&self) -> String {
        if self.section.is_empty() { self.name.to_owned() } else { format!("{}.{}", self.section, self.name) }
    }
}

/// The arrays of tables `node.toml` may hold: file-only, never from the
/// environment or a flag.
pub const FILE_ONLY_ARRAYS: &[(&str, &str)] = &[
    ("folder", "skills folders, each `path` and `share` (default true), instead of `skills_dir`"),
    (
        "agent",
        "agents' folders filled with received skills under a listing budget: `name`, `path`, `budget_chars`, `select` (`top` or `all`), optional `tags` and `include`",
    ),
    ("key", "the node's own ECP/1.2 signing keys: `id` and `secret` or `secret_env`, several for rotation"),
];

const fn key(
    section: &'static str,
    name: &'static str,
    kind: Kind,
    default: Option<&'static str>,
    env: &'static str,
    flag: Option<Flag>,
    doc: &'static str,
) -> Key {
    Key { section, name, kind, default, env, flag, doc }
}

const fn global(long: &'static str) -> Option<Flag> {
    Some(Flag { long, scope: Scope::Global, form: Form::Value })
}

const fn serve(long: &'static str) -> Option<Flag> {
    Some(Flag { long, scope: Scope::Serve, form: Form::Value })
}

const fn merge(long: &'static str) -> Option<Flag> {
    Some(Flag { long, scope: Scope::Merge, form: Form::Value })
}

const fn scoped(long: &'static str, scope: Scope) -> Option<Flag> {
    Some(Flag { long, scope, form: Form::Value })
}

const fn switch(long: &'static str, form: Form) -> Option<Flag> {
    Some(Flag { long, scope: Scope::Serve, form })
}

use Kind::*;

/// Every key of `node.toml`, top-level keys first, then by table.
#[rustfmt::skip]
pub static KEYS: &[Key] = &[
    key("", "listen", Addr, Some("127.0.0.1:7327"), "ECP_LISTEN", serve("listen"),
        "address to listen on; loopback by default, so a node started without thinking is not reachable from the network"),
    key("", "data", Path, Some("./ecp-data"), "ECP_DATA", global("data"),
        "data folder: the database and, by default, the skills folder"),
    // #18 item 5: hub mode, several replicas on one PostgreSQL database.
    key("", "store", Secret, None, "ECP_STORE", serve("store"),
        "`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`: serve as a hub replica from that database, with every other replica given it (see `deploy/hub/`); none: the node's own SQLite in `data`"),
    // #18 item 5, review H3: whose X-Forwarded-For names the client.
    key("", "trusted_proxy", List, None, "ECP_TRUSTED_PROXY", serve("trusted-proxy"),
        "IP addresses of the load balancers in front of the node (a hub's): from them alone `X-Forwarded-For` names the client a push's per-sender limits count; none: the header is never trusted"),
    // #18 item 5, review H7: the hub's signing key out of its database.
    key("", "hub_key_file", Path, None, "ECP_HUB_KEY_FILE", serve("hub-key-file"),
        "a hub's node key (64 hex digits, as `node.key`) in a file every replica is given (a mounted secret); none: the key is kept in the hub's database"),
    key("", "secret", Secret, None, "ECP_SECRET", serve("secret"),
        "shared secret: requests must be signed with it (ECP/1.2 key `default`, or X-ECP-HMAC); none and no keys: the node is open (a loud warning beyond loopback)"),
    key("", "secret_file", Path, None, "ECP_SECRET_FILE", serve("secret-file"),
        "a file holding the shared secret (systemd credentials, a Kubernetes secret mounted as a file), one trailing line break dropped"),
    key("", "secret_env", Text, None, "ECP_SECRET_ENV", None,
        "the name of an environment variable holding the shared secret"),
    key("", "accept_legacy", Bool, Some("true"), "ECP_ACCEPT_LEGACY", serve("accept-legacy"),
        "accept the legacy, replayable X-ECP-HMAC header made with the secret (for Go peers)"),
    key("", "replay_cache_capacity", Count, Some("100000"), "ECP_REPLAY_CACHE_CAPACITY", None,
        "signed requests remembered at once against replay; when full, signed requests get 503 until some expire"),
    key("", "skills_dir", Paths, None, "ECP_SKILLS_DIR", global("skills-dir"),
        "skills folder agents read (default `<data>/skills`); the flag may be repeated (all shared); flag or environment replace the file's `[[folder]]`"),
    key("", "peers", Path, None, "ECP_PEERS", global("peers"),
        "the peers file (see `peers.toml`): whom `serve` and `sync` federate with; none: no configured peers"),
    key("", "mdns", Bool, Some("true"), "ECP_NO_MDNS", switch("no-mdns", Form::NegatedSwitch),
        "advertise and browse for nodes by mDNS (`_ecp._tcp.local.`); `--no-mdns` and `ECP_NO_MDNS=true` turn it off"),
    key("server", "health_listen", Addr, None, "ECP_SERVER_HEALTH_LISTEN", serve("health-listen"),
        "a second address serving only `/livez`, `/readyz` and `/healthz` over plain HTTP, for probes that cannot pass mTLS"),
    key("server", "names", List, None, "ECP_NAMES", serve("name"),
        "names clients reach the node by (`host` on any port, or `host:port`): signed requests may be signed for them besides the address"),
    key("server", "trust_loopback", Bool, Some("false"), "ECP_SERVER_TRUST_LOOPBACK", switch("trust-loopback", Form::Switch),
        "let loopback clients no proxy forwarded use `/v1/` without the API token (`<data>/api-token`); a warning at start"),
    key("sharing", "mode", Choice(&["shared", "listed"]), Some("shared"), "ECP_SHARING_MODE", scoped("sharing-mode", Scope::Shared),
        "`shared`: every local skill not kept private leaves the node; `listed`: only those `[sharing] skills` names"),
    key("sharing", "skills", List, None, "ECP_SHARING_SKILLS", None,
        "the skills shared in mode `listed`"),
    // #19 item 4: which local skills are broadcast.
    key("sharing", "eligible", Choice(&["always", "proven"]), Some("always"), "ECP_SHARING_ELIGIBLE", None,
        "`always`: every local skill nothing else keeps home is shared; `proven`: only after `proven_streak` successes in a row or at `proven_confidence` (see Outcomes), and withdrawn again if it degrades"),
    key("sharing", "proven_streak", Count, Some("3"), "ECP_SHARING_PROVEN_STREAK", None,
        "reported successes in a row of its current version that make a local skill proven (at least 1)"),
    key("sharing", "proven_confidence", Share, Some("0.9"), "ECP_SHARING_PROVEN_CONFIDENCE", None,
        "the confidence (prior and outcomes) that makes a local skill proven whatever its streak"),
    key("limits", "max_body_bytes", Count, Some("8388608"), "ECP_MAX_BODY_BYTES", serve("max-body-bytes"),
        "largest request body in bytes (8 MiB; at least 1024)"),
    key("limits", "body_bytes_in_flight", Count, None, "ECP_LIMITS_BODY_BYTES_IN_FLIGHT", serve("body-bytes-in-flight"),
        "request-body bytes held at once across all pushes (default 64 MiB, at least `max_body_bytes`); one client address holds half; a push finding no room within 2 s gets 503"),
    key("limits", "max_packets", Count, Some("10000"), "ECP_MAX_PACKETS", serve("max-packets"),
        "most packets in one update; more is refused whole with 413"),
    key("limits", "max_skill_bytes", Count, Some("102400"), "ECP_LIMITS_MAX_SKILL_BYTES", None,
        "largest skill body in bytes (100 KiB); larger packets are refused"),
    key("limits", "max_description_bytes", Count, Some("4096"), "ECP_LIMITS_MAX_DESCRIPTION_BYTES", scoped("max-description-bytes", Scope::Content),
        "largest skill description in bytes (4 KiB; at least 1024), imported or received; over 1,024 characters is only a warning"),
    key("limits", "page_bytes", Count, Some("8388608"), "ECP_LIMITS_PAGE_BYTES", None,
        "packet bytes per page of a paged `GET /ecp/skills?since=N&limit=M` (8 MiB, at most 32 MiB; a page always carries one packet)"),
    key("limits", "request_timeout", Duration, Some("30s"), "ECP_LIMITS_REQUEST_TIMEOUT", None,
        "time allowed for a whole request"),
    key("limits", "header_read_timeout", Duration, Some("10s"), "ECP_LIMITS_HEADER_READ_TIMEOUT", None,
        "time a client has to send a request's headers"),
    key("limits", "origin_limit_hour", Count, Some("1000"), "ECP_ORIGIN_LIMIT_HOUR", merge("origin-limit-hour"),
        "new or updated skills installed per origin per rolling hour (0: no limit)"),
    key("limits", "origin_limit_day", Count, Some("5000"), "ECP_ORIGIN_LIMIT_DAY", merge("origin-limit-day"),
        "new or updated skills installed per origin per rolling day (0: no limit)"),
    key("limits", "sender_limit_hour", Count, Some("2000"), "ECP_SENDER_LIMIT_HOUR", merge("sender-limit-hour"),
        "new skills per sender per rolling hour, whatever origins they claim (0: no limit)"),
    key("limits", "sender_limit_day", Count, Some("10000"), "ECP_SENDER_LIMIT_DAY", merge("sender-limit-day"),
        "new skills per sender per rolling day (0: no limit)"),
    key("limits", "quarantine_entries", Count, Some("10000"), "ECP_QUARANTINE_ENTRIES", serve("quarantine-entries"),
        "quarantine entries held for review at once, shared between senders (at least 1)"),
    key("limits", "quarantine_bytes", Count, Some("67108864"), "ECP_QUARANTINE_BYTES", serve("quarantine-bytes"),
        "bytes the quarantine holds at once (64 MiB), shared between senders (at least 1)"),
    key("limits", "quarantine_body_bytes", Count, Some("262144"), "ECP_QUARANTINE_BODY_BYTES", serve("quarantine-body-bytes"),
        "largest refused packet kept whole (256 KiB); a larger one is kept as an excerpt with its size and SHA-256"),
    key("limits", "history_depth", Count, Some("10"), "ECP_HISTORY_DEPTH", serve("history-depth"),
        "superseded versions kept per skill (0: the current one only)"),
    key("limits", "client_rate_limit", Count, Some("600"), "ECP_CLIENT_RATE_LIMIT", serve("client-rate-limit"),
        "requests per minute per client address, sustained (0: no limit); more get 429"),
    key("limits", "client_burst", Count, Some("120"), "ECP_CLIENT_BURST", serve("client-burst"),
        "requests one client address may send at once (at least 1)"),
    key("limits", "client_rate_limit_loopback", Bool, Some("false"), "ECP_LIMITS_CLIENT_RATE_LIMIT_LOOPBACK", None,
        "rate-limit loopback clients too (forwarded requests always are)"),
    key("limits", "max_connections", Count, Some("1024"), "ECP_MAX_CONNECTIONS", serve("max-connections"),
        "connections open at once; when all are taken, a client from an address holding fewer takes the oldest of the address holding most"),
    key("limits", "max_connections_per_address", Count, Some("64"), "ECP_MAX_CONNECTIONS_PER_ADDRESS", serve("max-connections-per-address"),
        "connections one client address (IPv6: one /64) holds at once"),
    key("limits", "max_bulk_delete", Count, Some("5"), "ECP_LIMITS_MAX_BULK_DELETE", serve("max-bulk-delete"),
        "an import pass (or one peer's push or pull round) that would tombstone more skills than this, and more than `max_bulk_delete_fraction` of the folder (or of what that peer brought), is held (`ecp-node deletions`)"),
    key("limits", "max_bulk_delete_fraction", Share, Some("0.5"), "ECP_LIMITS_MAX_BULK_DELETE_FRACTION", serve("max-bulk-delete-fraction"),
        "largest share of the folder's skills one import pass tombstones without a hold, or of the skills held from one peer that its push or pull round does (0 to 1)"),
    // Bundles (#26, SPEC §12): what one bundle may hold, and the blob store's quota, cap and grace.
    key("limits", "bundle_max_files", Count, Some("1000"), "ECP_LIMITS_BUNDLE_MAX_FILES", serve("bundle-max-files"),
        "most files in one bundle, `SKILL.md` included (at least 1); a bundle with more is refused"),
    key("limits", "bundle_max_file_bytes", Count, Some("16777216"), "ECP_LIMITS_BUNDLE_MAX_FILE_BYTES", serve("bundle-max-file-bytes"),
        "largest file of a bundle in bytes (16 MiB); also the limit of one blob upload, `PUT /ecp/blobs/{sha256}`, whatever `max_body_bytes` says"),
    key("limits", "bundle_max_bytes", Count, Some("67108864"), "ECP_LIMITS_BUNDLE_MAX_BYTES", serve("bundle-max-bytes"),
        "largest sum of a bundle's file sizes in bytes (64 MiB)"),
    key("limits", "blob_quota_bytes", Count, Some("268435456"), "ECP_LIMITS_BLOB_QUOTA_BYTES", serve("blob-quota-bytes"),
        "bytes of blobs one sender may hold that no skill lists yet (uploads ahead of their packet; 256 MiB); more is answered 507"),
    key("limits", "blob_store_bytes", Count, Some("8589934592"), "ECP_LIMITS_BLOB_STORE_BYTES", serve("blob-store-bytes"),
        "bytes of all blobs (bundles' files) the node holds (8 GiB); a blob past it is refused with 507"),
    key("limits", "blob_grace", Duration, Some("1h"), "ECP_LIMITS_BLOB_GRACE", serve("blob-grace"),
        "how long a blob no kept version lists is kept before it is collected (an upload waiting for its packet)"),
    key("policy", "min_confidence", Share, Some("0.6"), "ECP_POLICY_MIN_CONFIDENCE", None,
        "refuse packets whose confidence as received is below this"),
    key("policy", "default_trust", Share, Some("0.6"), "ECP_POLICY_DEFAULT_TRUST", None,
        "trust in senders nobody configured"),
    key("policy", "allow_origins", List, None, "ECP_POLICY_ALLOW_ORIGINS", None,
        "accept only these origins (none: all)"),
    key("policy", "deny_origins", List, None, "ECP_POLICY_DENY_ORIGINS", None,
        "never accept these origins"),
    key("policy", "reshare_external", Bool, Some("true"), "ECP_POLICY_RESHARE_EXTERNAL", None,
        "serve skills received from peers to other peers"),
    key("policy", "require_origin_signature", Bool, Some("false"), "ECP_POLICY_REQUIRE_ORIGIN_SIGNATURE",
        merge("require-origin-signature"),
        "refuse every packet without a valid origin signature (SPEC §13); off: an unsigned packet keeps a claimed origin"),
    // #19 item 5 (SPEC §16.6): peers' outcome evidence may refuse a skill.
    key("policy", "max_reported_failure_rate", Share, Some("1"), "ECP_POLICY_MAX_REPORTED_FAILURE_RATE",
        merge("max-reported-failure-rate"),
        "refuse a received skill when peers' outcome evidence, weighed by trust, shows a higher failure rate than this (0 to 1; 1: never)"),
    key("policy", "min_reported_uses", Count, Some("5"), "ECP_POLICY_MIN_REPORTED_USES", merge("min-reported-uses"),
        "fewest uses, weighed by trust, the reported failure rate is judged on"),
    key("policy", "accept_full_url_hmac", Bool, Some("true"), "ECP_POLICY_ACCEPT_FULL_URL_HMAC", None,
        "accept X-ECP-HMAC GET signatures over the full URL, as the Go client sends them"),
    key("policy", "intake", Choice(&["auto", "review"]), Some("auto"), "ECP_POLICY_INTAKE", scoped("intake", Scope::Received),
        "`auto`: skills from peers reach the skills folder at once; `review`: they wait in the inbox until you accept them"),
    key("policy", "received_permissions", Choice(&["strip", "keep-from-trusted", "refuse"]), Some("strip"),
        "ECP_POLICY_RECEIVED_PERMISSIONS", scoped("received-permissions", Scope::Received),
        "grants in received skills' frontmatter: `strip` removes them; `keep-from-trusted` keeps them from an origin trusted at least `permissions_trust`; `refuse` quarantines such skills"),
    key("policy", "permission_keys", List, None, "ECP_POLICY_PERMISSION_KEYS", None,
        "frontmatter keys treated as grants besides `allowed-tools` and `hooks` (at most 64, each 1–64 letters, digits, `-`, `_`)"),
    key("policy", "permissions_trust", Share, Some("0.9"), "ECP_POLICY_PERMISSIONS_TRUST", None,
        "the trust a configured peer needs for its own skills to keep their grants under `keep-from-trusted`"),
    // #19 item 3: when a failing skill is retired.
    key("outcomes", "retire_failure_rate", Share, Some("0.5"), "ECP_OUTCOMES_RETIRE_FAILURE_RATE", None,
        "retire a skill when this share of its recent reported uses failed (0 to 1; `ecp-node skill restore` brings it back)"),
    key("outcomes", "retire_min_uses", Count, Some("5"), "ECP_OUTCOMES_RETIRE_MIN_USES", None,
        "fewest recent reported uses the failure rate is taken over (0: never retire; at most `retire_window`)"),
    key("outcomes", "retire_window", Count, Some("10"), "ECP_OUTCOMES_RETIRE_WINDOW", None,
        "how many of a skill's latest reported uses since its last restore are recent (1 to 1000)"),
    // #20: proposals (SPEC §17).
    key("proposals", "per_hour", Count, Some("20"), "ECP_PROPOSALS_PER_HOUR", serve("proposals-per-hour"),
        "new proposals (`POST /ecp/proposals`) one sender may make per rolling hour, copies of one folded (0: no limit); more get 429"),
    key("proposals", "poll_interval", Duration, Some("60s"), "ECP_PROPOSALS_POLL_INTERVAL", serve("proposals-poll-interval"),
        "how often proposals not yet delivered are sent again and the answers to those sent are asked for"),
    key("log", "format", Choice(&["text", "json"]), Some("text"), "ECP_LOG_FORMAT", global("log-format"),
        "how log lines on stderr are written: `text` for people (coloured on a terminal unless `NO_COLOR` is set), `json` one object per line for collectors"),
    key("tls", "cert", Path, None, "ECP_TLS_CERT", serve("tls-cert"),
        "serve HTTPS with this certificate chain (PEM, leaf first); none: plain HTTP"),
    key("tls", "key", Path, None, "ECP_TLS_KEY", serve("tls-key"),
        "the private key (PEM) of `cert`"),
    key("tls", "client_ca", Path, None, "ECP_CLIENT_CA", serve("client-ca"),
        "require a client certificate issued by one of these CAs (PEM) from every client (mTLS)"),
    key("tls", "client_cert", Path, None, "ECP_TLS_CLIENT_CERT", scoped("tls-client-cert", Scope::Outbound),
        "certificate (PEM chain) this node presents to https peers that ask for one; a `[[peer]]`'s own replaces it"),
    key("tls", "client_key", Path, None, "ECP_TLS_CLIENT_KEY", scoped("tls-client-key", Scope::Outbound),
        "the private key (PEM) of `client_cert`"),
];

/// The key `id` (`section.name`) names. Panics on an id no row has: every
/// caller names a key of the table, and a test reads each.
pub(super) fn find(id: &str) -> &'static Key {
    KEYS.iter().find(|k| k.id() == id).unwrap_or_else(|| panic!("no key {id} in the key table"))
}

/// The README's table of keys, made from [`KEYS`].
pub fn markdown() -> String {
    let mut out =
        String::from("| `node.toml` key | env | flag | default | meaning |\n|---|---|---|---|---|\n");
    for k in KEYS {
        let file = if k.section.is_empty() {
            format!("`{}`", k.name)
        } else {
            format!("`[{}] {}`", k.section, k.name)
        };
        let flag = k.flag.map_or(String::new(), |f| {
            let value = match (f.form, k.kind) {
                (Form::Switch | Form::NegatedSwitch, _) => "",
                (_, Kind::Bool) => " BOOL",
                (_, Kind::Count) => " N",
                (_, Kind::Share) => " SHARE",
                (_, Kind::Addr) => " ADDR",
                (_, Kind::Path | Kind::Paths) => " PATH",
                _ => " VALUE",
            };
            format!("`--{}{value}`", f.long)
        });
        let default = k.default.map_or("none".to_owned(), |d| format!("`{d}`"));
        out.push_str(&format!("| {file} | `{}` | {flag} | {default} | {} |\n", k.env, k.doc));
    }
    for (name, doc) in FILE_ONLY_ARRAYS {
        out.push_str(&format!("| `[[{name}]]` | file only | file only | none | {doc} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_env_names_and_flags_are_each_used_once() {
        for (i, k) in KEYS.iter().enumerate() {
            for other in &KEYS[..i] {
                assert_ne!(k.id(), other.id());
                assert_ne!(k.env, other.env, "{} and {}", k.id(), other.id());
                if let (Some(a), Some(b)) = (k.flag, other.flag) {
                    assert_ne!(a.long, b.long);
                }
            }
            assert!(k.env.starts_with("ECP_") && k.env == k.env.to_ascii_uppercase(), "{}", k.env);
        }
    }

    #[test]
    fn find_names_the_row() {
        assert_eq!(find("limits.max_packets").env, "ECP_MAX_PACKETS");
        assert_eq!(find("listen").section, "");
    }
}
