//! Integration tests of `ecp-node`: real servers on 127.0.0.1 ports and the
//! real binary, spoken to over HTTP. One binary, one link step.
//!
//! Modules:
// util: TestNode (an in-process node on an ephemeral port), HTTP helpers, the binary's path.
mod util;
// ecp_endpoints: manifest, skills GET/POST, ETag/304, since, the reference push.
mod ecp_endpoints;
// auth: legacy X-ECP-HMAC with and without a secret, using the reference vectors.
mod auth;
// signed_auth: ECP/1.2 signed requests and answers — every refusal, rotation, accept_legacy, a tampering proxy, peer keys.
mod signed_auth;
// bad_input: the malformed/oversized/hostile request matrix; the store stays unchanged.
mod bad_input;
// restart: skills, versions, quarantine, sequence and instance id survive a restart.
mod restart;
// config: every key of node.toml takes effect on a real node started from a file.
mod config;
// config_show: precedence on real serve processes, config show, the schema of node.toml, the README's key table.
mod config_show;
// config_setup: a node.toml in a fresh folder, a real node from it, config show on it.
mod config_setup;
// cli: the ecp-node binary's subcommands on a data folder, also beside a running server.
mod cli;
// peers_edit: `peers add` and `peers rm` edit the peers file; a running node follows.
mod peers_edit;
// skills_dir: importing an agent's SKILL.md files and projecting skills into the folder.
mod skills_dir;
// folder_import: real folders import whole — names other than the folder, long descriptions, every skill not shared named with why, a new node on a used folder.
mod folder_import;
// folder_bundles: the importer reads whole skill folders — every file travels, an edit of one is a new version, links and limits refused with their reason.
mod folder_bundles;
// deletion_guard: the folder marker and held bulk deletions, with real nodes.
mod deletion_guard;
// received_deletions: the deletion guard per sender — a peer's bulk withdrawals held per pull round or push.
mod received_deletions;
// sharing: what leaves a node — private skills, secrets, .ecpignore, listed mode, private folders, withdrawals.
mod sharing;
// discovery: mDNS between two nodes on loopback (ignored unless multicast works; see .ci/run).
mod discovery;
// bundles: blob endpoints and their limits, a pushed bundle pending until its files arrive, bundles by pull and push.
mod bundles;
// blob_fetch: a pull's concurrent blob fetches within their budget, files at the per-file limit.
mod blob_fetch;
// bundle_edit_bytes: one SKILL.md edit in a 5 MB bundle moves under 50 KB by pull and push, counted on the wire.
mod bundle_edit_bytes;
// counting_proxy: a loopback TCP proxy counting the bytes between two nodes (also the bundle_pull bench's).
mod counting_proxy;
// generated_bundle: the protocol tests' generated 5 MB skill folder.
#[path = "../../../protocol/tests/it/generated_bundle.rs"]
mod generated_bundle;
// bundle_projection: a bundle's whole folder written into the skills folder.
mod bundle_projection;
// skill_add_bundle: `skill add FOLDER` takes the whole folder, also through a running server's /v1/ uploads.
mod skill_add_bundle;
// projection_crash: kill -9 of a real server while it projects a big bundle leaves the old or the new folder.
mod projection_crash;
// folder_power_loss: a start after a power loss writes the node's empty or torn SKILL.md files again and imports neither.
mod folder_power_loss;
// pending_bundles: a bundle a peer answers 404 for stays pending and unprojected, and is fetched on a later round.
mod pending_bundles;
// pull_warnings: a pulled packet over the description guideline is taken, its warning in `pull`'s output and the decision log.
mod pull_warnings;
// mesh_faults: 12 node processes through kill -9, a partition, the heal and a restart converge and lose nothing (the mesh bench's code).
mod mesh_faults;
// federation: real nodes pulling and pushing — chains, a ring, dead/slow peers, restart, deletions.
mod federation;
// push_copies: #18 item 4 — a node does not push a peer the version that peer pushed to it.
mod push_copies;
// scan_guard: #14 — a skill the scanner panics on is refused alone, in a push and in a pulled page (debug builds).
mod scan_guard;
// go_peer: mixed meshes with a Go-like peer — laundered copies unverified and replaced by their origin, echoes, the 403 hint.
mod go_peer;
// peer_keys: #21 item 4 — a push proven by a peer's node key gets its trust, a mere claim does not; a key instead of a secret.
mod peer_keys;
// proposals: #20 — an edit of a received skill proposed to its origin through a relay, accepted, rejected, refused, a Go origin, limits, fork.
mod proposals;
// origin_signatures: #21 — signed origins across nodes and a relay, impostors, pinned and first-seen keys.
mod origin_signatures;
// hostile_clients: bounded request heads; one address holds only its share of connections.
mod hostile_clients;
// hostile_peers: peers that answer with redirects; nothing follows them, no credentials leave.
mod hostile_peers;
// paging: ?since=N&limit=M pages, their next cursor and byte budget; a merge that outlasts the time limit.
mod paging;
// limits: per-origin limits on new skills (push 429, pull holds back, restart) and the per-client request rate.
mod limits;
// local_api: one server per data folder, the /v1 API token, --trust-loopback, forwarded requests, the CLI through a running server.
mod local_api;
// quarantine: approve and drop with the CLI beside a running node — lowering, provenance, audit, re-sends.
mod quarantine;
// permissions: grants in received skills' frontmatter stripped from the file, kept from a trusted origin, refused.
mod permissions;
// inbound: review intake and the inbox, quarantine show/--force/drop, trust that does not depend on timing.
mod inbound;
// tls: TLS and mTLS between nodes with a test CA (rcgen); bad certificate files; the binary over HTTPS.
mod tls;
// health: /livez, /readyz and /healthz with their reasons; health_listen; `ecp-node health`.
mod health;
// unwritable_log: a node whose stderr is a full disk keeps serving and exits cleanly.
mod unwritable_log;
// malloc_arenas: the binary caps glibc's arenas at two, MALLOC_ARENA_MAX overrides it (#18 item 3).
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod malloc_arenas;
// observe: /metrics read by a Prometheus parser, `ecp-node audit` filtered and followed, `ecp-node events --follow`.
mod observe;
// status_page: GET / in headless Chromium and over HTTP — escaping, login link, CSRF and cross-site refusals, buttons.
mod status_page;
// logs: what a real node writes to stderr — decision lines, floods counted, JSON, colour, noise, a dead peer said once (#16).
mod logs;
// errors: start-up errors said once, naming the path; node.toml line and column; [peer] for [[peer]]; --listen localhost:PORT.
mod errors;
// pull_cli: `ecp-node pull` by hand — held back over the limits, exit 0 and when the rest comes.
mod pull_cli;
// pull_progress: `pull` and `sync` show their progress — lines off a terminal, a bar on one.
mod pull_progress;
// weak_secrets: a short or placeholder secret refused beyond loopback before anything opens, a warning on loopback.
mod weak_secrets;
// versions: lockfiles (lock, install, --frozen, verify), pins, rollback on a peer and the origin, GET /ecp/skills/{name}?digest= (#25).
mod versions;
// revocation: a revocation at A reaching C through B, rollback, a pin dropped, the revoked digest refused from a fourth node; forgeries refused and recorded (#25 item 4).
mod revocation;
// archives: export at A, import into an empty node (names, digests, files, trust); a tampered archive refused naming the skill (#25 item 5).
mod archives;
// bulk_pull: `pull` of 3,000 skills over many pages — every name, hash and body as the source's (#18).
mod bulk_pull;
// bulk_pull_kill: kill -9 of a bulk pull (rollback journal) leaves a whole store; the next pull brings the rest.
mod bulk_pull_kill;
// search: ranked search on real nodes — ranking, prefixes, phrases, quarantine, merge/import/delete, restart and rebuild, bounds.
mod search;
// mcp: a real MCP client (the official Python SDK) over `ecp-node mcp` on stdio and /mcp over HTTP (#24 item 2).
mod mcp;
// outcomes: agents' reports through the CLI and /v1/, confidence following the evidence, retirement and restore.
mod outcomes;
// #24 item 3: [[agent]] folders under a budget.
mod agents;
// outcomes_mesh: outcome evidence travels by pull and push, weighed by trust, counted once per observer; the evidence policy; --mesh; a push's stats.
mod outcomes_mesh;
// pg: a PostgreSQL server of a test's own (initdb in a temporary folder); skipped, saying why, where none can start.
mod pg;
// hub: hub replicas on one PostgreSQL database — served by one after a push to another, LISTEN/NOTIFY, shared limits and replay protection, migrations.
mod hub;
// hub_search: GET /v1/search on a hub (PostgreSQL full-text search) answers as a node's index does.
mod hub_search;
// hub_review: the hub review's H2 (pushes never starve reads), H3 (a budget per signing key), H7 (the key file), H9 (one ETag, one body).
mod hub_review;
// hub_revocations: revocations and outcome claims on a hub — taken at one replica, served and obeyed by the other, forged ones refused, kept across restarts.
mod hub_revocations;
// hub_bundles: bundles on a hub — pushed to one replica, served whole by the other, a signed one verified by a puller; tampering refused; limits at their edges; pending bundles; collection.
mod hub_bundles;
// hub_quarantine: the quarantine reviewed at any hub replica behind the API token, in the node's shapes; the caps at their edges; migration 5.
mod hub_quarantine;
// hub_fault: a PostgreSQL error answered as what it means — retry, the client's value, or the hub's own bug — read off a real server's errors.
mod hub_fault;
