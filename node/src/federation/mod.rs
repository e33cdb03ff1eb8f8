//! Federation: pulling from and pushing to peers, on a schedule and on change.
//!
//! # Layout
//!
//! - [`client`]: the HTTP client (reqwest, rustls): ECP/1.2 signed requests
//!   and verified answers, `X-ECP-HMAC` towards legacy peers.
//! - [`clients`]: one connection pool per TLS setting (trusted CAs, client certificate).
//! - [`pull`](mod@pull): one pull round — manifest, `?since=` pull, merge, cursor.
//! - `progress`: [`ProgressHook`], told of every page a pull merges (the CLI's progress).
//! - [`push`](mod@push): one push — what the peer has not acknowledged, as `POST /ecp/skills`.
//! - `bundles`: the blobs a round moves besides the packets — fetched before
//!   a pulled page is merged, uploaded before a push; plain packets for
//!   peers without `ecp-1.3`.
//! - [`backoff`]: how long a failing peer is left alone, and which failures
//!   are worth a warning.
//! - `spec`: [`PeerSpec`], one peer resolved (configured, discovered, manual).
//! - `context`: [`Context`], what a round needs, and how requests are signed.
//! - `error`: [`SyncError`] and [`SyncFailure`], why a round failed.
//! - `holdings`: [`Holdings`], the versions each peer sent us itself,
//!   which pushes to it leave out.
//! - `exact`: [`fetch_version`], one exact version fetched by digest and
//!   merged (`ecp-node install`, #25).
//! - `sync`: [`sync_peer`] and [`sync_all`], pull and push once (`ecp-node sync`).
//! - `view`: [`PeerView`], a peer as `ecp-node peers` and `GET /v1/peers` show it.
//! - `federator`: the [`Federator`], which runs it all inside a node: start,
//!   apply a peers file, shutdown.
//! - `schedule`: a peer's job or timer, its ticks, and the slot that keeps
//!   its rounds apart and holds its backoff.
//! - `rounds`: scheduled pull rounds and probes, pushes on change,
//!   [`Federator::sync_now`].
//! - `trust`: the keyring and the inbound trust of configured peers.
//! - `identify`: a push claiming an instance not known yet: the configured
//!   peers of unknown instance are asked who they are first.
//! - `discovered`: discovered peers come and go ([`Federator::discovery_event`]).
//!
//! Reading the peers file, on change and on SIGHUP, is the node's job
//! ([`crate::reload`]); the federator only applies what it is given
//! ([`Federator::apply`]).
//!
//! # The federator
//!
//! One scheduled job per peer (tokio-cron-scheduler: intervals of a second
//! or more and cron expressions; shorter intervals, used by tests and
//! benchmarks, run on a plain timer because the scheduler's resolution is one
//! second). A job only *starts* a round in its own task, so peers never wait
//! for each other: a dead or slow peer costs its own task a timeout and
//! nothing else. A round never overlaps the previous round of the same peer
//! (a tick that finds it still running is skipped), and a failing peer is
//! skipped until its backoff has passed. Peers with `push = true` also get a
//! task that watches the library's sequence number and pushes what changed:
//! at once after a quiet spell, at most once per [`PUSH_DEBOUNCE`] while
//! changes keep coming.
//!
//! Echoes are left out on both sides: a pulled packet that originated at
//! this node or already passed through it is not merged, and a packet is not
//! pushed to a peer it came from or through. The merge would refuse them as
//! loops (`SPEC.md` §7.8.2) and keep them in the quarantine; leaving them out
//! keeps a mesh's quarantines for what deserves review. Pull reports count
//! them (`echoes`). Nor is a peer pushed the very version it pushed to us
//! ([`Holdings`]): it holds it, and in a mesh such copies would be most of
//! what a new skill costs.
//!
//! The per-peer state (cursor, ETags, acknowledged sequence, failures) lives
//! in the store, so a restarted node resumes incrementally. What lives only
//! in memory: the backoff deadline, and discovered peers.
//!
//! Pushes *to* this node are merged by the HTTP layer; the federator tells it
//! which trust applies: a push signed with a configured peer's own key gets
//! that peer's trust (the [`Keyring`](crate::keys::Keyring) the federator keeps in step with the
//! peers file); otherwise a push whose `peerInstance` is the instance of a
//! configured peer gets that peer's trust ([`Federator::inbound_trust`]) —
//! also before the first pull has learned that peer's instance: the push
//! waits while the configured peers of unknown instance are asked
//! ([`Federator::inbound_trust_learning`]).
//! `peerInstance` is a claim (`SPEC.md` §5.4.2, §6.5.3): give peers keys of
//! their own, or at least set a secret, on nodes that trust peers above the
//! default.

pub mod backoff;
mod bundles;
pub mod client;
pub mod clients;
mod context;
mod discovered;
mod error;
mod exact;
mod federator;
mod holdings;
mod identify;
mod progress;
pub mod pull;
pub mod push;
mod rounds;
mod scan_ahead;
mod schedule;
mod spec;
mod sync;
mod trust;
mod view;

pub use client::{ClientError, Credentials, PeerClient};
pub use context::Context;
pub(crate) use context::{blocking, is_echo};
pub use error::{SyncError, SyncFailure};
pub use exact::fetch_version;
pub use federator::{Federator, StartError};
pub use holdings::{Holdings, MAX_REMEMBERED};
pub use progress::{ProgressHook, PullProgress};
pub use pull::{HeldBack, PullOutcome, PullReport, pull};
pub use push::{PushReport, push};
pub use rounds::PUSH_DEBOUNCE;
pub use schedule::SCHEDULER_MIN_INTERVAL;
pub use spec::PeerSpec;
pub use sync::{PeerSync, sync_all, sync_peer};
pub use view::{PeerView, peer_views};
