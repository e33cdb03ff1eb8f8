//! Federation: pulling from and pushing to peers, on a schedule and on change.
//!
//! # Layout
//!
//! - [`client`]: the HTTP client (reqwest, rustls): ECP/1.2 signed requests
//!   and verified answers, `X-ECP-HMAC` towards legacy peers.
//! - [`clients`]: one connection pool per TLS setting (trusted CAs, client certificate).
//! - [`pull`](mod@pull): one pull round — manifest, `?since=` pull, merge, cursor.
//! - [`push`](mod@push): one push — what the peer has not acknowledged, as `POST /ecp/skills`.
//! - [`backoff`]: how long a failing peer is left alone.
//! - this module: [`Context`] (what a round needs), [`PeerSpec`] (one peer,
//!   resolved), [`sync_peer`] (pull and push once, for `ecp-node sync`), and
//!   [`Federator`], which runs it all inside a node.
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
//! them (`echoes`).
//!
//! The per-peer state (cursor, ETags, acknowledged sequence, failures) lives
//! in the store, so a restarted node resumes incrementally. What lives only
//! in memory: the backoff deadline, and discovered peers.
//!
//! Pushes *to* this node are merged by the HTTP layer; the federator tells it
//! which trust applies: a push signed with a configured peer's own key gets
//! that peer's trust (the [`Keyring`] the federator keeps in step with the
//! peers file); otherwise a push whose `peerInstance` is the instance of a
//! configured peer gets that peer's trust ([`Federator::inbound_trust`]).
//! `peerInstance` is a claim (`SPEC.md` §5.4.2, §6.5.3): give peers keys of
//! their own, or at least set a secret, on nodes that trust peers above the
//! default.

pub mod backoff;
pub mod client;
pub mod clients;
pub mod pull;
pub mod push;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use ecp_protocol::signed_auth::SigningKey;
use ecp_protocol::{SkillPacket, StandardPolicy};
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_cron_scheduler::{Job, JobScheduler};

use crate::config::{DEFAULT_KEY_ID, PeerConfig, PeerKey, PeersConfig, Schedule, Secret};
use crate::discovery::{DiscoveredPeer, DiscoveryEvent};
use crate::keys::{KeyOwner, Keyring};
use crate::library::Library;
use crate::store::{PeerKind, PeerState, StoreError};
use crate::tls::{Identity, PeerTls};

pub use client::{ClientError, Credentials, PeerClient};
pub use pull::{HeldBack, PullOutcome, PullReport, pull};
pub use push::{PushReport, push};

/// Shortest time between two pushes on change to one peer. A change after a
/// quiet spell is pushed at once (a skill crosses each hop of a mesh without
/// waiting); changes that follow a push closely are collected and go out
/// together when this much time has passed since it.
pub const PUSH_DEBOUNCE: Duration = Duration::from_millis(200);
/// Shortest interval run by the cron scheduler. It checks its jobs every
/// 500 ms and counts intervals in whole seconds, so a round starts up to
/// half a second late; shorter intervals run on a plain timer instead.
pub const SCHEDULER_MIN_INTERVAL: Duration = Duration::from_secs(1);
/// How often the peers file is checked for changes.
pub const PEERS_FILE_POLL: Duration = Duration::from_secs(1);

/// Why a round with a peer failed. Messages carry no secret and no local path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The exchange failed (connect, timeout, status, size).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Our store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The peer's answer is not a valid ECP message.
    #[error("answer does not decode: {0}")]
    Decode(String),
    /// The peer broke the protocol in another way.
    #[error("{0}")]
    Protocol(String),
    /// The peer is this node.
    #[error("the peer is this node itself (its manifest names our instance id); remove it from the peers")]
    ItIsUs,
    /// The peer's manifest names another instance than configured.
    #[error("the peer's manifest names instance {found:?}, but its [[peer]] says instance = {expected:?}")]
    WrongInstance {
        /// Configured.
        expected: String,
        /// Found.
        found: String,
    },
    /// A blocking task panicked or was cancelled.
    #[error("internal error: {0}")]
    Internal(String),
    /// Some pulled new skills did not fit under their origins' limits: the
    /// rest was merged, the cursor stays, and the next rounds fetch them again.
    #[error("origin limit: {0}")]
    OriginLimit(Box<pull::HeldBack>),
}

/// A failed round: the error and the consecutive failures now counted.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct SyncFailure {
    /// What went wrong.
    pub error: SyncError,
    /// Consecutive failures of this direction (pull or push), this one included.
    pub failures: i64,
}

/// One peer, resolved: from a `[[peer]]`, from discovery, or from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSpec {
    /// Normalised base URL: the peer's key.
    pub url: String,
    /// Configured, discovered or manual.
    pub kind: PeerKind,
    /// Its shared secret: the key `default` towards it, and X-ECP-HMAC when legacy.
    pub secret: Option<Secret>,
    /// Its own ECP/1.2 key.
    pub key: Option<PeerKey>,
    /// Speaks only ECP/1.1: also X-ECP-HMAC; answers taken unsigned.
    pub legacy: bool,
    /// Without a key or secret of its own, sign with the node's default key
    /// (and its secret for X-ECP-HMAC). Off for discovered nodes that
    /// require no signature.
    pub node_key: bool,
    /// Trust in what comes from it.
    pub trust: f64,
    /// Pull from it on its schedule.
    pub pull: bool,
    /// Push local changes to it.
    pub push: bool,
    /// When to pull.
    pub schedule: Schedule,
    /// The instance it must have, when known in advance.
    pub instance: Option<String>,
    /// For an `https` peer: the CAs to trust and the certificate to present.
    pub tls: PeerTls,
}

impl PeerSpec {
    /// A `[[peer]]` of `config`.
    pub fn configured(config: &PeersConfig, peer: &PeerConfig) -> PeerSpec {
        PeerSpec {
            url: peer.url.clone(),
            kind: PeerKind::Configured,
            secret: peer.secret.clone(),
            key: peer.key.clone(),
            legacy: peer.legacy,
            node_key: true,
            trust: peer.trust,
            pull: peer.pull,
            push: peer.push,
            schedule: config.schedule_of(peer),
            instance: peer.instance.clone(),
            tls: peer.tls.clone(),
        }
    }

    /// A peer named on the command line.
    pub fn manual(url: &str, secret: Option<Secret>, trust: f64) -> PeerSpec {
        PeerSpec {
            url: url.to_owned(),
            kind: PeerKind::Manual,
            secret,
            key: None,
            legacy: false,
            node_key: true,
            trust,
            pull: true,
            push: true,
            schedule: Schedule::Every(crate::config::DEFAULT_INTERVAL),
            instance: None,
            tls: PeerTls::default(),
        }
    }
}

/// What a round needs: the library, the accept policy, whether received
/// skills are re-served, and the HTTP clients with their timeout.
#[derive(Debug, Clone)]
pub struct Context {
    /// Where merges go and pushes come from.
    pub library: Library,
    /// The accept policy of every merge.
    pub policy: StandardPolicy,
    /// Re-serve received skills (`reshare_external`).
    pub reshare: bool,
    /// Shared connection pools, one per TLS setting.
    pub http: clients::Clients,
    /// Time allowed for each request.
    pub timeout: Duration,
    /// The node's default key: what requests to peers without a key of
    /// their own are signed with.
    pub own_key: Option<SigningKey>,
    /// The node's shared secret: X-ECP-HMAC towards legacy peers without a secret of their own.
    pub own_secret: Option<Secret>,
}

impl Context {
    /// A context whose clients have `timeout` per request, present no
    /// client certificate unless a peer's own `client_cert` says so, and
    /// sign with no key of the node's own (see [`Context::signing_as`]).
    pub fn new(library: Library, policy: StandardPolicy, reshare: bool, timeout: Duration) -> Context {
        Context {
            library,
            policy,
            reshare,
            http: clients::Clients::new(timeout, None),
            timeout,
            own_key: None,
            own_secret: None,
        }
    }

    /// This context, presenting `identity` (the node's `--tls-client-cert`)
    /// to `https` peers that ask for a certificate and have none of their own.
    pub fn with_client_identity(mut self, identity: Option<Identity>) -> Context {
        self.http = clients::Clients::new(self.timeout, identity);
        self
    }

    /// The same context, signing with the node's default key and secret
    /// (towards peers that have none of their own).
    pub fn signing_as(mut self, own_key: Option<SigningKey>, own_secret: Option<Secret>) -> Context {
        self.own_key = own_key;
        self.own_secret = own_secret;
        self
    }

    /// How requests to `peer` are signed: its own key, else its secret as
    /// the key `default`, else (when `node_key`) the node's default key;
    /// X-ECP-HMAC only for a legacy peer; answers verified unless legacy.
    pub fn credentials(&self, peer: &PeerSpec) -> Credentials {
        let own_key = || peer.node_key.then(|| self.own_key.clone()).flatten();
        let key = peer
            .key
            .as_ref()
            .map(PeerKey::signing_key)
            .or_else(|| {
                peer.secret.as_ref().map(|s| {
                    SigningKey::new(DEFAULT_KEY_ID, s.expose().as_bytes())
                        .expect("`default` is a valid key id")
                })
            })
            .or_else(own_key);
        let legacy_secret = peer
            .legacy
            .then(|| peer.secret.clone().or_else(|| peer.node_key.then(|| self.own_secret.clone()).flatten()))
            .flatten();
        Credentials { verify_answers: key.is_some() && !peer.legacy, key, legacy_secret }
    }

    /// Our instance id.
    pub fn instance(&self) -> &str {
        self.library.store().instance_id()
    }

    /// A client for `peer`.
    pub fn client(&self, peer: &PeerSpec) -> Result<PeerClient, ClientError> {
        Ok(PeerClient::new(self.http.get(&peer.tls)?, &peer.url, self.credentials(peer), self.timeout))
    }

    /// The stored state of `peer` (cursor, ETags, acknowledgements), or a
    /// fresh one for a peer never synced.
    pub(crate) async fn peer_state(&self, peer: &PeerSpec) -> Result<PeerState, SyncError> {
        let (library, url) = (self.library.clone(), peer.url.clone());
        Ok(blocking(move || library.store().peer_state(&url))
            .await?
            .unwrap_or_else(|| PeerState::new(&peer.url, peer.kind)))
    }

    /// The instance a manifest claims, checked: not empty (falling back to
    /// the configured one), printable, not ours, and the configured one if set.
    fn check_instance(&self, peer: &PeerSpec, claimed: &str) -> Result<String, SyncError> {
        let claimed = claimed.trim();
        let instance = match (claimed.is_empty(), &peer.instance) {
            (false, _) => claimed.to_owned(),
            (true, Some(configured)) => configured.clone(),
            (true, None) => return Err(SyncError::Protocol("its manifest names no instance".into())),
        };
        if instance.len() > ecp_protocol::merge::MAX_INSTANCE_BYTES || instance.chars().any(char::is_control)
        {
            return Err(SyncError::Protocol(
                "its manifest's instance is over 128 bytes or not printable".into(),
            ));
        }
        if instance == self.instance() {
            return Err(SyncError::ItIsUs);
        }
        if let Some(expected) = &peer.instance
            && *expected != instance
        {
            return Err(SyncError::WrongInstance { expected: expected.clone(), found: instance });
        }
        Ok(instance)
    }
}

/// Runs `f` on the blocking pool.
pub(crate) async fn blocking<T, E>(f: impl FnOnce() -> Result<T, E> + Send + 'static) -> Result<T, SyncError>
where
    T: Send + 'static,
    E: Into<SyncError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(SyncError::Internal(e.to_string())),
    }
}

/// Whether a packet originated at `instance` or already passed through it.
pub(crate) fn is_echo(packet: &SkillPacket, instance: &str) -> bool {
    packet.origin_instance == instance
        || packet.provenance.as_ref().is_some_and(|p| p.path.iter().any(|hop| hop == instance))
}

/// The outcome of syncing one peer once (`ecp-node sync`, [`Federator::sync_now`]).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerSync {
    /// The peer.
    pub url: String,
    /// The pull, when the peer is pulled from (JSON: the report, or `{"error": …}`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "report_or_error")]
    pub pull: Option<Result<PullReport, String>>,
    /// The push, when the peer is pushed to (JSON: the report, or `{"error": …}`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "report_or_error")]
    pub push: Option<Result<PushReport, String>>,
}

fn report_or_error<T: Serialize, S: serde::Serializer>(
    value: &Option<Result<T, String>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(Ok(report)) => report.serialize(serializer),
        Some(Err(error)) => serde_json::json!({ "error": error }).serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// Pulls from (if `pull`) and pushes to (if `push`) one peer, once.
pub async fn sync_peer(ctx: &Context, peer: &PeerSpec) -> PeerSync {
    let pulled = if peer.pull { Some(pull(ctx, peer).await.map_err(|f| f.to_string())) } else { None };
    let pushed = if peer.push { Some(push(ctx, peer).await.map_err(|f| f.to_string())) } else { None };
    PeerSync { url: peer.url.clone(), pull: pulled, push: pushed }
}

/// Syncs every peer once, all at the same time; results in the order given.
pub async fn sync_all(ctx: &Context, peers: &[PeerSpec]) -> Vec<PeerSync> {
    let tasks: Vec<_> = peers
        .iter()
        .map(|peer| {
            let (ctx, peer) = (ctx.clone(), peer.clone());
            tokio::spawn(async move { sync_peer(&ctx, &peer).await })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for (task, peer) in tasks.into_iter().zip(peers) {
        out.push(task.await.unwrap_or_else(|e| PeerSync {
            url: peer.url.clone(),
            pull: Some(Err(format!("internal error: {e}"))),
            push: None,
        }));
    }
    out
}

/// A peer as `ecp-node peers` and `GET /v1/peers` show it: its stored state,
/// plus how it is configured when it is known to the running federator (or
/// to the peers file given).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerView {
    /// Stored state (URL, instance, kind, cursor, times, failures, push ack).
    #[serde(flatten)]
    pub state: PeerState,
    /// Whether it is a peer now (configured or currently discovered).
    pub active: bool,
    /// Trust, when active.
    pub trust: Option<f64>,
    /// Pulled from, when active.
    pub pull: Option<bool>,
    /// Pushed to, when active.
    pub push: Option<bool>,
    /// Schedule, when active.
    pub schedule: Option<String>,
    /// Whether requests to it carry its own key (or its secret): signed for
    /// sure; otherwise they are signed with the node's key, if it has one.
    pub signed: Option<bool>,
    /// Whether it is a legacy (ECP/1.1) peer, when active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legacy: Option<bool>,
}

/// Joins stored states with the active peers: every stored URL, then active
/// peers never contacted.
pub fn peer_views(states: Vec<PeerState>, active: &[PeerSpec]) -> Vec<PeerView> {
    let mut seen = HashSet::new();
    let mut views: Vec<PeerView> = states
        .into_iter()
        .map(|state| {
            seen.insert(state.url.clone());
            view(state, active)
        })
        .collect();
    for spec in active.iter().filter(|s| !seen.contains(&s.url)) {
        views.push(view(PeerState::new(&spec.url, spec.kind), active));
    }
    views.sort_by(|a, b| a.state.url.cmp(&b.state.url));
    views
}

fn view(mut state: PeerState, active: &[PeerSpec]) -> PeerView {
    let spec = active.iter().find(|s| s.url == state.url);
    if let Some(spec) = spec {
        state.kind = spec.kind;
        if state.instance.is_empty() {
            state.instance = spec.instance.clone().unwrap_or_default();
        }
    }
    PeerView {
        state,
        active: spec.is_some(),
        trust: spec.map(|s| s.trust),
        pull: spec.map(|s| s.pull),
        push: spec.map(|s| s.push),
        schedule: spec.map(|s| s.schedule.to_string()),
        signed: spec.map(|s| s.secret.is_some() || s.key.is_some()),
        legacy: spec.map(|s| s.legacy).filter(|l| *l),
    }
}

// ---------------------------------------------------------------------------
// The federator

/// Runs federation inside a node: scheduled pulls, pushes on change,
/// discovered peers, reloads of the peers file. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Federator(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    library: Library,
    policy: StandardPolicy,
    /// `reshare_external` of node.toml; `[federation] reshare_external` overrides it.
    node_reshare: bool,
    /// This node's own secret: X-ECP-HMAC towards legacy peers without one.
    own_secret: Option<Secret>,
    /// This node's client certificate (`--tls-client-cert`), for every context.
    client_identity: Option<Identity>,
    /// The keys requests to this node are verified with: the node's own,
    /// and the configured peers' (replaced by every [`Federator::apply`]).
    keyring: Arc<Keyring>,
    /// The peers file as last applied, and the context rounds clone. A std
    /// lock: held for a clone, never across an await.
    settings: std::sync::RwLock<(PeersConfig, Context)>,
    /// The running peers by URL. A tokio lock: changing them awaits the scheduler.
    peers: tokio::sync::Mutex<HashMap<String, Running>>,
    /// Who is who, for pushes to this node (std lock: read by every push).
    identities: std::sync::RwLock<Identities>,
    scheduler: Scheduler,
    /// The discovery consumer and the peers-file watcher.
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

/// Instance ids learned from manifests, and the trust map derived from them.
#[derive(Debug, Default)]
struct Identities {
    /// URL → instance, as learned from each peer's manifest.
    learned: HashMap<String, String>,
    /// Configured peers: URL, configured instance, trust.
    configured: Vec<(String, Option<String>, f64)>,
    /// Instance → trust of the configured peer(s) with that instance (the
    /// lowest if several claim it).
    inbound: HashMap<String, f64>,
}

impl Identities {
    fn rebuild(&mut self) {
        self.inbound.clear();
        for (url, instance, trust) in &self.configured {
            let Some(instance) = instance.as_ref().or_else(|| self.learned.get(url)) else { continue };
            let entry = self.inbound.entry(instance.clone()).or_insert(*trust);
            *entry = entry.min(*trust);
        }
    }
}

/// A peer being run.
#[derive(Debug)]
struct Running {
    spec: PeerSpec,
    slot: Arc<Slot>,
    /// Its job in the scheduler (none for sub-second intervals).
    job: Option<uuid::Uuid>,
    /// Its timer (sub-second intervals), first round and push-on-change task.
    tasks: Vec<JoinHandle<()>>,
}

/// What survives a reload of a peer whose URL stays: the round lock and the backoff.
#[derive(Debug, Default)]
struct Slot {
    /// Held while a round runs: a tick that cannot take it skips.
    round: Arc<tokio::sync::Mutex<()>>,
    /// No round before this instant (backoff after failures).
    not_before: std::sync::Mutex<Option<Instant>>,
    /// The last round started, so that shutdown can stop it.
    current: std::sync::Mutex<Option<JoinHandle<()>>>,
}

/// The job scheduler (it has no `Debug` of its own).
#[derive(Clone)]
struct Scheduler(JobScheduler);

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobScheduler")
    }
}

/// Why the federator could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the federation scheduler: {0}")]
pub struct StartError(String);

type Tick = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs `f`'s future as the tick of `url`, if the federator still exists.
fn tick_of(weak: &Weak<Inner>, url: &str) -> Tick {
    let (weak, url) = (weak.clone(), url.to_owned());
    Box::pin(async move {
        if let Some(inner) = weak.upgrade() {
            Federator(inner).tick(&url).await;
        }
    })
}

/// Whether to log a failure at warning level: the first, then at 2, 4, 8, …
/// consecutive failures, so a dead peer does not fill the log.
fn worth_a_warning(failures: i64) -> bool {
    failures <= 1 || (failures as u64).is_power_of_two()
}

impl Federator {
    /// Starts federating with `peers`, presenting `client_identity` to
    /// `https` peers that ask for a certificate; consumes `discovery` events
    /// when given.
    pub async fn start(
        library: Library,
        config: &crate::config::Config,
        peers: PeersConfig,
        client_identity: Option<Identity>,
        discovery: Option<mpsc::Receiver<DiscoveryEvent>>,
    ) -> Result<Federator, StartError> {
        let scheduler = JobScheduler::new().await.map_err(|e| StartError(format!("{e:?}")))?;
        scheduler.start().await.map_err(|e| StartError(format!("{e:?}")))?;
        let initial = PeersConfig::default();
        let keyring = Arc::new(Keyring::new(config.own_keys()));
        let own_secret = config.secret.clone();
        let ctx = Context::new(
            library.clone(),
            config.policy.clone(),
            config.reshare_external,
            initial.federation.timeout,
        )
        .with_client_identity(client_identity.clone())
        .signing_as(keyring.default_key().cloned(), own_secret.clone());
        let learned = {
            let library = library.clone();
            blocking(move || library.store().peer_states()).await.unwrap_or_default()
        }
        .into_iter()
        .filter(|s| !s.instance.is_empty())
        .map(|s| (s.url, s.instance))
        .collect();
        let inner = Arc::new(Inner {
            library,
            policy: config.policy.clone(),
            node_reshare: config.reshare_external,
            own_secret,
            client_identity,
            keyring,
            settings: std::sync::RwLock::new((initial, ctx)),
            peers: tokio::sync::Mutex::new(HashMap::new()),
            identities: std::sync::RwLock::new(Identities { learned, ..Identities::default() }),
            scheduler: Scheduler(scheduler),
            tasks: std::sync::Mutex::new(Vec::new()),
        });
        let federator = Federator(inner);
        federator.apply(peers).await;
        if let Some(events) = discovery {
            let task = tokio::spawn(consume_discovery(Arc::downgrade(&federator.0), events));
            federator.tasks().push(task);
        }
        Ok(federator)
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.0.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn instance(&self) -> &str {
        self.0.library.store().instance_id()
    }

    /// The keys requests to this node are verified with; they follow the
    /// peers file as it is applied.
    pub fn keyring(&self) -> Arc<Keyring> {
        Arc::clone(&self.0.keyring)
    }

    /// The context rounds run with now.
    pub fn context(&self) -> Context {
        self.0.settings.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    /// The peers file as last applied.
    pub fn peers_config(&self) -> PeersConfig {
        self.0.settings.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    /// Whether received skills are re-served (`[federation] reshare_external`,
    /// else node.toml's setting).
    pub fn reshare_external(&self) -> bool {
        self.0.settings.read().unwrap_or_else(|p| p.into_inner()).1.reshare
    }

    /// The trust for a push whose `peerInstance` is `instance`: that of the
    /// configured peer with this instance id (configured, or learned from its
    /// manifest); `None` for anyone else.
    pub fn inbound_trust(&self, instance: &str) -> Option<f64> {
        self.0.identities.read().unwrap_or_else(|p| p.into_inner()).inbound.get(instance).copied()
    }

    fn learned(&self, url: &str, instance: &str) {
        if instance.is_empty() {
            return;
        }
        let mut ids = self.0.identities.write().unwrap_or_else(|p| p.into_inner());
        if ids.learned.get(url).map(String::as_str) != Some(instance) {
            ids.learned.insert(url.to_owned(), instance.to_owned());
            ids.rebuild();
        }
    }

    fn instance_of(&self, spec: &PeerSpec) -> Option<String> {
        spec.instance.clone().or_else(|| {
            self.0.identities.read().unwrap_or_else(|p| p.into_inner()).learned.get(&spec.url).cloned()
        })
    }

    /// The peers being run now (configured and discovered).
    pub async fn active_peers(&self) -> Vec<PeerSpec> {
        let mut specs: Vec<PeerSpec> = self.0.peers.lock().await.values().map(|r| r.spec.clone()).collect();
        specs.sort_by(|a, b| a.url.cmp(&b.url));
        specs
    }

    /// Every peer's state, as `GET /v1/peers` shows it.
    pub async fn views(&self) -> Result<Vec<PeerView>, SyncError> {
        let active = self.active_peers().await;
        let library = self.0.library.clone();
        let states = blocking(move || library.store().peer_states()).await?;
        Ok(peer_views(states, &active))
    }

    /// Applies a (re)loaded peers file: peers removed are stopped, peers
    /// added are started, peers changed are restarted; a peer whose URL
    /// stays keeps its backoff, and its stored state in any case.
    /// Discovered peers follow `[discovery]` and give way to configured ones.
    pub async fn apply(&self, config: PeersConfig) {
        // Taken first: two applies (a reload and an API call) do not interleave.
        let mut running = self.0.peers.lock().await;
        let reshare = config.federation.reshare_external.unwrap_or(self.0.node_reshare);
        {
            let mut settings = self.0.settings.write().unwrap_or_else(|p| p.into_inner());
            let (applied, ctx) = &mut *settings;
            if ctx.timeout != config.federation.timeout {
                *ctx = Context::new(
                    self.0.library.clone(),
                    self.0.policy.clone(),
                    reshare,
                    config.federation.timeout,
                )
                .with_client_identity(self.0.client_identity.clone())
                .signing_as(self.0.keyring.default_key().cloned(), self.0.own_secret.clone());
            }
            ctx.reshare = reshare;
            *applied = config.clone();
        }
        let desired: Vec<PeerSpec> = config.peers.iter().map(|p| PeerSpec::configured(&config, p)).collect();
        self.0.keyring.set_peer_keys(
            desired
                .iter()
                .filter_map(|s| {
                    let key = s.key.as_ref()?.signing_key();
                    Some((key, KeyOwner { url: s.url.clone(), trust: s.trust }))
                })
                .collect(),
        );
        let configured_instances: HashSet<String> = {
            let mut ids = self.0.identities.write().unwrap_or_else(|p| p.into_inner());
            ids.configured = desired.iter().map(|s| (s.url.clone(), s.instance.clone(), s.trust)).collect();
            ids.rebuild();
            desired
                .iter()
                .filter_map(|s| s.instance.clone().or_else(|| ids.learned.get(&s.url).cloned()))
                .collect()
        };
        let wanted: HashSet<&str> = desired.iter().map(|s| s.url.as_str()).collect();

        let urls: Vec<String> = running.keys().cloned().collect();
        for url in urls {
            let spec = &running[&url].spec;
            let keep = match spec.kind {
                PeerKind::Discovered => {
                    config.discovery.enabled
                        && !wanted.contains(url.as_str())
                        && !spec.instance.as_ref().is_some_and(|i| configured_instances.contains(i))
                }
                _ => wanted.contains(url.as_str()),
            };
            if !keep && let Some(r) = running.remove(&url) {
                self.stop(r).await;
            }
        }
        let mut changed: Vec<PeerSpec> = running
            .values()
            .filter(|r| r.spec.kind == PeerKind::Discovered)
            .map(|r| PeerSpec {
                trust: config.discovery.trust,
                schedule: config.federation.schedule.clone(),
                ..r.spec.clone()
            })
            .filter(|spec| running.get(&spec.url).is_some_and(|r| r.spec != *spec))
            .collect();
        changed.extend(
            desired.into_iter().filter(|spec| running.get(&spec.url).is_none_or(|r| r.spec != *spec)),
        );
        for spec in changed {
            let slot = match running.remove(&spec.url) {
                Some(r) => {
                    let slot = Arc::clone(&r.slot);
                    self.stop(r).await;
                    slot
                }
                None => Arc::default(),
            };
            tracing::info!(peer = %spec.url, kind = spec.kind.label(), trust = spec.trust, pull = spec.pull,
                push = spec.push, schedule = %spec.schedule, "peer started");
            let url = spec.url.clone();
            let launched = self.launch(spec, slot).await;
            running.insert(url, launched);
        }
    }

    /// Starts a peer's schedule (and first round) and its push-on-change task.
    async fn launch(&self, spec: PeerSpec, slot: Arc<Slot>) -> Running {
        let weak = Arc::downgrade(&self.0);
        let url = spec.url.clone();
        let mut tasks = Vec::new();
        let mut job = None;
        match &spec.schedule {
            Schedule::Every(every) if *every < SCHEDULER_MIN_INTERVAL => {
                let (every, weak, url) = (*every, weak.clone(), url.clone());
                tasks.push(tokio::spawn(async move {
                    let mut timer = tokio::time::interval(every);
                    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    loop {
                        timer.tick().await;
                        tick_of(&weak, &url).await;
                    }
                }));
            }
            schedule => {
                let (w, u) = (weak.clone(), url.clone());
                let run = move |_, _| tick_of(&w, &u);
                let made = match schedule {
                    Schedule::Every(every) => {
                        Job::new_repeated_async(Duration::from_secs(every.as_secs()), run)
                    }
                    Schedule::Cron(expr) => Job::new_async(expr.as_str(), run),
                };
                match made {
                    Ok(made) => match self.0.scheduler.0.add(made).await {
                        Ok(id) => job = Some(id),
                        Err(e) => tracing::error!(peer = %url, error = ?e, "cannot schedule the peer"),
                    },
                    Err(e) => tracing::error!(peer = %url, error = ?e, "cannot schedule the peer"),
                }
                tasks.push(tokio::spawn(tick_of(&weak, &url)));
            }
        }
        if spec.push {
            tasks.push(tokio::spawn(push_on_change(weak, url)));
        }
        Running { spec, slot, job, tasks }
    }

    async fn stop(&self, running: Running) {
        for task in &running.tasks {
            task.abort();
        }
        if let Some(id) = running.job
            && let Err(e) = self.0.scheduler.0.remove(&id).await
        {
            tracing::debug!(error = ?e, "scheduler job already gone");
        }
        tracing::debug!(peer = %running.spec.url, "peer stopped");
    }

    /// One scheduled tick: starts a round in its own task unless the last one
    /// still runs or the peer's backoff has not passed.
    async fn tick(&self, url: &str) {
        let (spec, slot) = {
            let peers = self.0.peers.lock().await;
            let Some(r) = peers.get(url) else { return };
            (r.spec.clone(), Arc::clone(&r.slot))
        };
        if !spec.pull && self.instance_of(&spec).is_some() {
            return;
        }
        if slot.not_before.lock().unwrap_or_else(|p| p.into_inner()).is_some_and(|t| Instant::now() < t) {
            tracing::trace!(peer = %url, "backing off; round skipped");
            return;
        }
        let Ok(guard) = Arc::clone(&slot.round).try_lock_owned() else {
            tracing::debug!(peer = %url, "the previous round still runs; round skipped");
            return;
        };
        let (this, in_round) = (self.clone(), Arc::clone(&slot));
        let round = tokio::spawn(async move {
            let _guard = guard;
            this.round(&spec, &in_round).await;
        });
        *slot.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(round);
    }

    /// A pull round (or, for a peer not pulled from, learning its instance).
    async fn round(&self, spec: &PeerSpec, slot: &Slot) {
        let ctx = self.context();
        let outcome = if spec.pull {
            pull(&ctx, spec).await.map(|r| {
                if r.outcome == PullOutcome::Merged && r.packets > r.echoes {
                    tracing::info!(peer = %spec.url, instance = %r.instance, since = r.since, packets = r.packets,
                        new = r.result.new_skills, updated = r.result.updated_skills,
                        rejected = r.result.rejected_skills, unchanged = r.result.unchanged, "pulled");
                }
                r.instance
            })
        } else {
            probe(&ctx, spec).await
        };
        let mut not_before = None;
        match outcome {
            Ok(instance) => self.learned(&spec.url, &instance),
            Err(failure) => {
                let wait = backoff::delay(u32::try_from(failure.failures).unwrap_or(u32::MAX));
                not_before = Some(Instant::now() + wait);
                if worth_a_warning(failure.failures) {
                    tracing::warn!(peer = %spec.url, failures = failure.failures, retry_in = ?wait,
                        error = %failure, "pull failed");
                } else {
                    tracing::debug!(peer = %spec.url, failures = failure.failures, error = %failure, "pull failed");
                }
            }
        }
        *slot.not_before.lock().unwrap_or_else(|p| p.into_inner()) = not_before;
    }

    /// Pulls from and pushes to every active peer now, all at once, waiting
    /// for a round already running rather than skipping; backoff ignored.
    pub async fn sync_now(&self) -> Vec<PeerSync> {
        let peers: Vec<(PeerSpec, Arc<Slot>)> =
            self.0.peers.lock().await.values().map(|r| (r.spec.clone(), Arc::clone(&r.slot))).collect();
        let tasks: Vec<_> = peers
            .into_iter()
            .map(|(spec, slot)| {
                let this = self.clone();
                tokio::spawn(async move {
                    let _guard = slot.round.lock().await;
                    let ctx = this.context();
                    let synced = sync_peer(&ctx, &spec).await;
                    if let Some(Ok(r)) = &synced.pull {
                        this.learned(&spec.url, &r.instance);
                        *slot.not_before.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    }
                    if let Some(Ok(r)) = &synced.push {
                        this.learned(&spec.url, &r.instance);
                    }
                    synced
                })
            })
            .collect();
        let mut out = Vec::new();
        for task in tasks {
            if let Ok(synced) = task.await {
                out.push(synced);
            }
        }
        out.sort_by(|a, b| a.url.cmp(&b.url));
        out
    }

    /// Handles one discovery event: a found node becomes a temporary peer
    /// (unless it is this node, discovery is off, or a configured peer has
    /// its URL or instance); a lost one is dropped.
    pub async fn discovery_event(&self, event: DiscoveryEvent) {
        match event {
            DiscoveryEvent::Found(peer) => self.found(peer).await,
            DiscoveryEvent::Lost { instance } => {
                let mut running = self.0.peers.lock().await;
                let gone: Vec<String> = running
                    .values()
                    .filter(|r| {
                        r.spec.kind == PeerKind::Discovered && r.spec.instance.as_deref() == Some(&instance)
                    })
                    .map(|r| r.spec.url.clone())
                    .collect();
                for url in gone {
                    if let Some(r) = running.remove(&url) {
                        tracing::info!(peer = %url, %instance, "discovered peer lost");
                        self.stop(r).await;
                    }
                }
            }
        }
    }

    async fn found(&self, peer: DiscoveredPeer) {
        let config = self.peers_config();
        if !config.discovery.enabled || peer.instance == self.instance() || peer.instance.trim().is_empty() {
            return;
        }
        let url = match crate::config::normalise_url(&peer.url) {
            Ok(url) => url,
            Err(e) => {
                tracing::debug!(error = %e, "discovered node with an unusable URL ignored");
                return;
            }
        };
        let mut running = self.0.peers.lock().await;
        let shadowed = running.values().any(|r| {
            r.spec.kind != PeerKind::Discovered
                && (r.spec.url == url || self.instance_of(&r.spec).as_deref() == Some(peer.instance.as_str()))
        });
        if shadowed {
            return;
        }
        let moved: Vec<String> = running
            .values()
            .filter(|r| {
                r.spec.kind == PeerKind::Discovered
                    && r.spec.instance.as_deref() == Some(&peer.instance)
                    && r.spec.url != url
            })
            .map(|r| r.spec.url.clone())
            .collect();
        for old in moved {
            if let Some(r) = running.remove(&old) {
                self.stop(r).await;
            }
        }
        let spec = PeerSpec {
            url: url.clone(),
            kind: PeerKind::Discovered,
            secret: None,
            key: None,
            legacy: false,
            // A node that requires signatures gets the mesh's key: ours.
            node_key: peer.auth_required,
            trust: config.discovery.trust,
            pull: true,
            push: false,
            schedule: config.federation.schedule.clone(),
            instance: Some(peer.instance.clone()),
            tls: PeerTls::default(),
        };
        let slot = match running.remove(&url) {
            Some(r) if r.spec == spec => {
                running.insert(url, r);
                return;
            }
            Some(r) => {
                let slot = Arc::clone(&r.slot);
                self.stop(r).await;
                slot
            }
            None => Arc::default(),
        };
        tracing::info!(peer = %url, instance = %peer.instance, trust = spec.trust, "discovered peer added");
        let launched = self.launch(spec, slot).await;
        running.insert(url, launched);
    }

    /// Reloads `path` when it changes (polled every [`PEERS_FILE_POLL`]) and
    /// on SIGHUP. A file that no longer parses is reported and ignored: the
    /// peers stay as they are.
    pub fn watch_file(&self, path: PathBuf) {
        let weak = Arc::downgrade(&self.0);
        let task = tokio::spawn(async move {
            // Unknown at first: the first poll parses the file and compares it
            // with what was applied, so a change made while starting is not missed.
            let mut last: Option<Option<Vec<u8>>> = None;
            let mut hangup = hangup_signal();
            loop {
                let by_signal = tokio::select! {
                    () = tokio::time::sleep(PEERS_FILE_POLL) => false,
                    () = next_hangup(&mut hangup) => true,
                };
                let now = Some(tokio::fs::read(&path).await.ok());
                if !by_signal && now == last {
                    continue;
                }
                last = now;
                let Some(inner) = weak.upgrade() else { return };
                Federator(inner).reload(&path).await;
            }
        });
        self.tasks().push(task);
    }

    /// Reloads the peers file at `path` now.
    pub async fn reload(&self, path: &Path) {
        let file = path.to_owned();
        match tokio::task::spawn_blocking(move || PeersConfig::load(&file)).await {
            Ok(Ok(config)) if config == self.peers_config() => tracing::debug!("peers file unchanged"),
            Ok(Ok(config)) => {
                tracing::info!(peers = config.peers.len(), "peers file reloaded");
                self.apply(config).await;
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "peers file not reloaded; the peers stay as they were"),
            Err(e) => tracing::error!(error = %e, "peers file reload failed"),
        }
    }

    /// Stops every peer, the scheduler and the watchers.
    pub async fn shutdown(&self) {
        for task in self.tasks().drain(..) {
            task.abort();
        }
        let running: Vec<Running> = self.0.peers.lock().await.drain().map(|(_, r)| r).collect();
        for r in running {
            if let Some(round) = r.slot.current.lock().unwrap_or_else(|p| p.into_inner()).take() {
                round.abort();
            }
            self.stop(r).await;
        }
        let mut scheduler = self.0.scheduler.0.clone();
        if let Err(e) = scheduler.shutdown().await {
            tracing::debug!(error = ?e, "scheduler shutdown");
        }
    }
}

/// Learns a non-pulled peer's instance from its manifest.
async fn probe(ctx: &Context, spec: &PeerSpec) -> Result<String, SyncFailure> {
    let attempt = async {
        let client::Fetched::Fresh { value: manifest, .. } = ctx.client(spec)?.manifest(None).await? else {
            return Err(SyncError::Protocol("answered 304 to a manifest request without a tag".into()));
        };
        let instance = ctx.check_instance(spec, &manifest.instance)?;
        let (library, url, kind, id) = (ctx.library.clone(), spec.url.clone(), spec.kind, instance.clone());
        blocking(move || library.store().record_peer_instance(&url, kind, &id)).await?;
        Ok(instance)
    };
    match attempt.await {
        Ok(instance) => Ok(instance),
        Err(error) => {
            let (library, url, kind, message) =
                (ctx.library.clone(), spec.url.clone(), spec.kind, error.to_string());
            let at = crate::store::now().to_string();
            let failures = blocking(move || library.store().record_pull_failure(&url, kind, &at, &message))
                .await
                .unwrap_or(0);
            Err(SyncFailure { error, failures })
        }
    }
}

/// Pushes to `url` whenever the library changes (leading-edge debounce, see
/// [`PUSH_DEBOUNCE`]); retries with backoff after a failure. Ends when the
/// peer is no longer run.
async fn push_on_change(weak: Weak<Inner>, url: String) {
    let Some(inner) = weak.upgrade() else { return };
    let mut changes = inner.library.subscribe();
    drop(inner);
    loop {
        changes.borrow_and_update();
        let (ctx, spec) = {
            let Some(inner) = weak.upgrade() else { return };
            let this = Federator(inner);
            let spec = this.0.peers.lock().await.get(&url).map(|r| r.spec.clone());
            let Some(spec) = spec.filter(|s| s.push) else { return };
            (this.context(), spec)
        };
        match push(&ctx, &spec).await {
            Ok(report) => {
                if let Some(inner) = weak.upgrade() {
                    Federator(inner).learned(&url, &report.instance);
                }
                if report.sent > 0 {
                    tracing::info!(peer = %url, sent = report.sent, acked = report.acked,
                        new = report.result.new_skills, updated = report.result.updated_skills,
                        rejected = report.result.rejected_skills, "pushed");
                }
            }
            Err(failure) => {
                let wait = backoff::delay(u32::try_from(failure.failures).unwrap_or(u32::MAX));
                if worth_a_warning(failure.failures) {
                    tracing::warn!(peer = %url, failures = failure.failures, retry_in = ?wait, error = %failure,
                        "push failed");
                }
                tokio::time::sleep(wait).await;
                continue;
            }
        }
        let pushed = tokio::time::Instant::now();
        if changes.changed().await.is_err() {
            return;
        }
        // Changes arriving meanwhile are kept by the watch and go out together.
        tokio::time::sleep_until(pushed + PUSH_DEBOUNCE).await;
    }
}

async fn consume_discovery(weak: Weak<Inner>, mut events: mpsc::Receiver<DiscoveryEvent>) {
    while let Some(event) = events.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        Federator(inner).discovery_event(event).await;
    }
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = ();

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}

#[cfg(not(unix))]
fn hangup_signal() -> Hangup {}

#[cfg(unix)]
async fn next_hangup(hangup: &mut Hangup) {
    let received = match hangup {
        Some(signal) => signal.recv().await.is_some(),
        None => false,
    };
    if !received {
        // No signal handling here (or the stream ended): never fire.
        *hangup = None;
        std::future::pending::<()>().await;
    }
}

#[cfg(not(unix))]
async fn next_hangup(_: &mut Hangup) {
    std::future::pending().await
}
