//! [`Federator`]: federation inside a running node — start, the peers it
//! runs, applying a (re)loaded peers file, shutdown. How a peer is run lives
//! in [`schedule`](super::schedule), what a round does in
//! [`rounds`](super::rounds), who is trusted in [`trust`](super::trust), and
//! discovered peers in [`discovered`](super::discovered). Reading the peers
//! file is the node's job ([`crate::reload`]): the federator is handed a
//! [`PeersConfig`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ecp_protocol::SkillPacket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::PeersConfig;
use crate::discovery::DiscoveryEvent;
use crate::keys::Keyring;
use crate::library::Library;
use crate::store::PeerKind;
use crate::tls::Identity;

use super::discovered::consume_discovery;
use super::holdings::{Holdings, Version};
use super::schedule::{Running, Scheduler};
use super::trust::Trust;
use super::{Context, PeerSpec, PeerView, SyncError, blocking, peer_views};

/// Runs federation inside a node: scheduled pulls, pushes on change,
/// discovered peers, the peers file as applied. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Federator(pub(super) Arc<Inner>);

/// What the clones of a [`Federator`] share.
#[derive(Debug)]
pub(super) struct Inner {
    pub(super) library: Library,
    /// `reshare_external` of node.toml; `[federation] reshare_external` overrides it.
    node_reshare: bool,
    /// This node's client certificate (`--tls-client-cert`), for every context.
    client_identity: Option<Identity>,
    /// The peers file as last applied, and the context rounds clone. A std
    /// lock: held for a clone, never across an await.
    settings: std::sync::RwLock<(PeersConfig, Context)>,
    /// The running peers by URL. A tokio lock: changing them awaits the scheduler.
    pub(super) peers: tokio::sync::Mutex<HashMap<String, Running>>,
    /// Who is who: the keys requests to this node are verified with, and the
    /// trust of pushes from configured peers.
    pub(super) trust: Trust,
    pub(super) scheduler: Scheduler,
    /// The discovery consumer, stopped at shutdown.
    discovery: std::sync::Mutex<Option<JoinHandle<()>>>,
    /// Set when shutdown begins: readiness (`/readyz`) reports it.
    stopped: AtomicBool,
    /// The contexts' [`Holdings`]: pushes the HTTP layer merged add to it.
    holdings: Arc<Holdings>,
}

/// Why the federator could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the federation scheduler: {0}")]
pub struct StartError(pub(super) String);

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
        let scheduler = Scheduler::start().await?;
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
        .signing_as(keyring.default_key().cloned(), own_secret);
        let learned = {
            let library = library.clone();
            blocking(move || library.store().peer_states()).await.unwrap_or_default()
        }
        .into_iter()
        .filter(|s| !s.instance.is_empty())
        .map(|s| (s.url, s.instance))
        .collect();
        let holdings = Arc::clone(&ctx.holdings);
        let inner = Arc::new(Inner {
            library,
            node_reshare: config.reshare_external,
            client_identity,
            settings: std::sync::RwLock::new((initial, ctx)),
            peers: tokio::sync::Mutex::new(HashMap::new()),
            trust: Trust::new(keyring, learned),
            scheduler,
            discovery: std::sync::Mutex::new(None),
            stopped: AtomicBool::new(false),
            holdings,
        });
        let federator = Federator(inner);
        federator.apply(peers).await;
        if let Some(events) = discovery {
            let task = tokio::spawn(consume_discovery(Arc::downgrade(&federator.0), events));
            *federator.0.discovery.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        }
        Ok(federator)
    }

    /// Our instance id.
    pub(super) fn instance(&self) -> &str {
        self.0.library.store().instance_id()
    }

    /// The keys requests to this node are verified with; they follow the
    /// peers file as it is applied.
    pub fn keyring(&self) -> Arc<Keyring> {
        self.0.trust.keyring()
    }

    /// The trust for a push whose `peerInstance` is `instance`: that of the
    /// configured peer with this instance id (configured, or learned from its
    /// manifest); `None` for anyone else.
    pub fn inbound_trust(&self, instance: &str) -> Option<f64> {
        self.0.trust.inbound(instance)
    }

    /// Remembers that the configured peer that pushed `packets` holds their
    /// versions; pushes to it leave them out. The pusher is the peer at
    /// `proven` (its key, node key or certificate proved it), else the
    /// configured peers whose instance `claimed` is — the claim that also
    /// gives the push their trust (`SPEC.md` §5.4.2); anyone else, nobody.
    pub fn peer_sent(&self, proven: Option<&str>, claimed: &str, packets: &[SkillPacket]) {
        let urls = match proven {
            Some(url) => vec![url.to_owned()],
            None => self.0.trust.claimed_by(claimed),
        };
        for url in urls {
            self.0.holdings.sent_by(&url, packets.iter().map(Version::of));
        }
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
                // New clients: a client's timeouts are fixed when it is made.
                *ctx = Context { timeout: config.federation.timeout, ..ctx.clone() }
                    .with_client_identity(self.0.client_identity.clone());
            }
            ctx.reshare = reshare;
            *applied = config.clone();
        }
        let library = self.0.library.clone();
        let pinned = config.origin_keys.clone();
        if let Err(e) = blocking(move || library.store().pin_origin_keys(&pinned)).await {
            tracing::error!(error = %e, "could not record the pinned origin keys of the peers file");
        }
        let desired: Vec<PeerSpec> = config.peers.iter().map(|p| PeerSpec::configured(&config, p)).collect();
        let configured_instances: HashSet<String> = self.0.trust.configure(&desired);
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

    /// Whether federation runs: from start until shutdown begins.
    pub fn running(&self) -> bool {
        !self.0.stopped.load(Ordering::SeqCst)
    }

    /// Stops every peer, the scheduler and the discovery consumer.
    pub async fn shutdown(&self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        if let Some(task) = self.0.discovery.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
        let running: Vec<Running> = self.0.peers.lock().await.drain().map(|(_, r)| r).collect();
        for r in running {
            r.slot.abort_round();
            self.stop(r).await;
        }
        self.0.scheduler.shutdown().await;
    }
}
