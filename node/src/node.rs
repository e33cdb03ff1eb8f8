//! [`Node`]: a running server — bind, serve, shut down. Tests start one on
//! `127.0.0.1:0` with [`Node::spawn_for_tests`].

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::api_token::TOKEN_FILE;
use crate::config::{Config, PeersConfig, PeersError};
use crate::data_lock::{DataLock, LockError, SERVER_FILE, ServerInfo};
use crate::discovery::{DiscoveryEvent, DiscoveryHandle};
use crate::federation::Federator;
use crate::http::{self, AppState};
use crate::library::Library;
use crate::sharing::Sharing;
use crate::store::StoreError;

/// What a starting node scans once, so the scanner is built before a peer
/// pushes the first skill: a small SKILL.md, as most are.
const SCANNER_WARM_UP: &str =
    "---\nname: warm-up\ndescription: Built at start\n---\n\n# Warm-up\n\nRun `git status` and read it.\n";

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The store failed.
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    /// The database file could not be opened.
    #[error("cannot open the node's database {}: {error} (see --data)", path.display())]
    Database {
        /// The database file.
        path: std::path::PathBuf,
        /// Why.
        error: StoreError,
    },
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}; is another node running there? choose another with --listen")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// The peers file is unreadable or invalid.
    #[error(transparent)]
    Peers(#[from] PeersError),
    /// The federator could not start.
    #[error(transparent)]
    Federation(#[from] crate::federation::StartError),
    /// A certificate or key file is missing or unusable.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// Another server holds the data folder.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// The local API token could not be read or made.
    #[error("cannot read or create {TOKEN_FILE} in the data folder: {0}")]
    ApiToken(std::io::Error),
    /// `server.json` could not be written.
    #[error("cannot write {SERVER_FILE} in the data folder: {0}")]
    ServerFile(std::io::Error),
    /// Another running node serves a skills folder.
    #[error(transparent)]
    FolderLocked(#[from] crate::folder_lock::FolderLockError),
    /// Two skills folders hold a skill of the same name.
    #[error("{0}")]
    DuplicateSkill(crate::import::Duplicate),
    /// A secret requests may be signed with is weak, and the node would
    /// listen beyond loopback.
    #[error(
        "{} (refused because the node listens on {addr}, beyond loopback; on a loopback address it is only a \
         warning)",
        .weak.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    WeakSecret {
        /// The address.
        addr: SocketAddr,
        /// Each weak secret, named by where it is set.
        weak: Vec<crate::config::WeakSecret>,
    },
}

/// A started node.
#[derive(Debug)]
pub struct Node {
    local_addr: SocketAddr,
    /// `None`: plain HTTP; `Some(mutual)`: HTTPS, requiring client certificates when `mutual`.
    tls: Option<bool>,
    library: Library,
    federator: Federator,
    /// Where the health endpoints alone are served, when `health_listen` is set.
    health_addr: Option<SocketAddr>,
    shutdown: Option<watch::Sender<bool>>,
    server: JoinHandle<std::io::Result<()>>,
    /// The `health_listen` server.
    health_server: Option<JoinHandle<std::io::Result<()>>>,
    /// Projection, skills-folder import and peers-file reload: stopped at shutdown.
    background: Vec<JoinHandle<()>>,
    /// mDNS advertisement and browse; dropping it says goodbye. `None` when
    /// off (`--no-mdns`) or unavailable.
    discovery: Option<Arc<DiscoveryHandle>>,
    /// The certificate served, with TLS; it follows its files.
    served_cert: Option<watch::Receiver<crate::tls::ServedCert>>,
    /// The token of the `/v1/` API (`<data>/api-token`).
    api_token: crate::config::Secret,
    /// The data folder's lock, released (and `server.json` removed) when the
    /// node is dropped, after its shutdown.
    _lock: DataLock,
    /// The skills folders' locks: one server per folder.
    _folder_locks: crate::folder_lock::FolderLocks,
}

impl Node {
    /// Opens the store, projects the skills folder, binds, starts serving and
    /// federating with the peers of `config.peers_file` (reloaded when it
    /// changes and on SIGHUP, see [`crate::reload`]).
    pub async fn bind(config: Config) -> Result<Node, StartError> {
        Node::bind_with(config, None).await
    }

    /// [`Node::bind`], with a source of discovered peers (mDNS) whose events
    /// the federator consumes.
    pub async fn bind_with(
        config: Config,
        discovery: Option<mpsc::Receiver<DiscoveryEvent>>,
    ) -> Result<Node, StartError> {
        // Certificates first: a node whose TLS is broken must not start at all.
        crate::tls::install_default_provider();
        let (server_tls, client_identity) = {
            let files = config.tls.clone();
            tokio::task::spawn_blocking(move || {
                Ok::<_, crate::tls::TlsError>((
                    crate::tls::ServerTls::load(&files)?,
                    crate::tls::Identity::of_node(&files)?,
                ))
            })
            .await
            .expect("reading certificate files does not panic")?
        };
        let peers = match config.peers_file.clone() {
            Some(path) => tokio::task::spawn_blocking(move || PeersConfig::load(&path))
                .await
                .expect("reading the peers file does not panic")?,
            None => PeersConfig::default(),
        };
        // Before any file or socket is opened: a weak secret beyond loopback
        // guards nothing.
        let weak = crate::config::weak_secrets(&config, &peers);
        if !weak.is_empty() && !config.listen.ip().is_loopback() {
            return Err(StartError::WeakSecret { addr: config.listen, weak });
        }
        for w in &weak {
            tracing::warn!("{w} (accepted on loopback; a node listening beyond it refuses to start with it)");
        }
        // Before the store is opened: a second server must not import or
        // project anything into a folder the first one serves.
        let (mut lock, api_token) = {
            let data = config.data_dir.clone();
            tokio::task::spawn_blocking(move || {
                let lock = DataLock::acquire(&data)?;
                let token = crate::api_token::load_or_create(&data).map_err(StartError::ApiToken)?;
                Ok::<_, StartError>((lock, token))
            })
            .await
            .expect("locking the data folder does not panic")?
        };
        let folder_locks = {
            let mut folders: Vec<_> = config.sharing.folders.iter().map(|f| f.path.clone()).collect();
            // Agents' folders (#24) too, each once: numbered after the skills folders.
            for agent in &config.agents {
                if !folders.iter().any(|f| crate::config::same_path(f, &agent.path)) {
                    folders.push(agent.path.clone());
                }
            }
            tokio::task::spawn_blocking(move || {
                crate::folder_lock::FolderLocks::acquire(folders.iter().map(|p| p.as_path()))
            })
            .await
            .expect("locking the skills folders does not panic")?
        };
        if config.trust_loopback {
            tracing::warn!(
                "trust_loopback is on: any process on this machine can use the /v1 API without the API token \
                 (a reverse proxy on this host still cannot: forwarded requests are never local)"
            );
        }
        let library = {
            let (data, skills) = (config.data_dir.clone(), config.skills_dir.clone());
            let path = data.join(crate::store::DB_FILE);
            tokio::task::spawn_blocking(move || Library::open(&data, &skills))
                .await
                .expect("opening the store does not panic")
                .map_err(|error| StartError::Database { path, error })?
                .with_limits(config.merge_limits())
                .with_structure_limits(config.policy.structure.clone())
                .with_bundle_limits(config.policy.bundle.clone())
                .with_deletion_guard(config.deletion_guard)
                .with_intake(config.intake)
                .with_sharing(Sharing::new(config.sharing.clone()))
                .with_permissions(config.permission_policy(&peers))
                .with_agents(config.agents.clone())
        };
        let listener = bind(config.listen).await?;
        let local_addr =
            listener.local_addr().map_err(|source| StartError::Bind { addr: config.listen, source })?;
        let health_listener = match config.health_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let scheme = if server_tls.is_some() { "https" } else { "http" };
        let info = ServerInfo {
            pid: std::process::id(),
            url: format!("{scheme}://{}", reachable_locally(local_addr)),
            skills_dir: std::path::absolute(&config.skills_dir).unwrap_or_else(|_| config.skills_dir.clone()),
        };
        lock.publish(&info).map_err(StartError::ServerFile)?;
        {
            let library = library.clone();
            tokio::task::spawn_blocking(move || {
                let swept = library.projection().sweep_leftovers() + library.agents().sweep_leftovers();
                if swept > 0 {
                    tracing::info!(
                        swept,
                        "removed temporary files that an interrupted write left in the skills folder"
                    );
                }
                // Import first: a file the agent deleted while the node was down must not be projected back.
                let report = crate::import::import_all(&library);
                report.log();
                if let Some(duplicate) = report.duplicates.into_iter().next() {
                    return Err(StartError::DuplicateSkill(duplicate));
                }
                Ok(library.project_all()?)
            })
            .await
            .expect("projection does not panic")?;
        }
        // The scanner's rules are built on first use, ~40 ms of CPU: built now,
        // off the request path, not when the first skill arrives (#18 item 4).
        tokio::task::spawn_blocking(|| ecp_protocol::scan::Scanner::standard().scan(SCANNER_WARM_UP));
        let mut background = vec![
            library.start_projection_worker(),
            tokio::spawn(library.clone().follow_external_writes(Duration::from_millis(100))),
            tokio::spawn(crate::import::watch(library.clone(), crate::import::DEFAULT_DEBOUNCE)),
            tokio::spawn(library.clone().collect_blobs_while_serving()),
        ];
        let holds_keys = !config.own_keys().is_empty() || peers.peers.iter().any(|p| p.key.is_some());
        if !holds_keys && !local_addr.ip().is_loopback() {
            tracing::warn!(
                %local_addr,
                "NO SECRET OR KEY IS SET and the node listens on a non-loopback address: anyone who can reach \
                 it can push skills and read everything; set --secret (ECP_SECRET) or [[key]] in node.toml"
            );
        }
        // mDNS, unless the caller brings its own discovery source (tests) or
        // it is turned off (`--no-mdns`, `[discovery] enabled = false`).
        let (discovery_handle, discovery_events) = match discovery {
            Some(events) => (None, Some(events)),
            None if config.mdns && peers.discovery.enabled => {
                let advert = crate::discovery::Advert {
                    instance: library.store().instance_id().to_owned(),
                    listen: local_addr,
                    auth_required: holds_keys,
                    key_id: library.store().node_key().key_id(),
                    tls: server_tls.as_ref().map(|t| t.cert.served().borrow().leaf_sha256),
                };
                match tokio::task::spawn_blocking(move || crate::discovery::start(advert))
                    .await
                    .expect("starting discovery does not panic")
                {
                    Ok((handle, events)) => (Some(Arc::new(handle)), Some(events)),
                    Err(e) => {
                        tracing::warn!(
                            "mDNS discovery is off: {e}; configured peers still sync (--no-mdns silences this)"
                        );
                        (None, None)
                    }
                }
            }
            None => (None, None),
        };
        let federator =
            Federator::start(library.clone(), &config, peers, client_identity, discovery_events).await?;
        background.push(tokio::spawn(crate::proposals::outbox::run(
            library.clone(),
            federator.clone(),
            config.proposals_poll_interval,
        )));
        if let Some(path) = config.peers_file.clone() {
            background.push(tokio::spawn(crate::reload::watch(
                federator.clone(),
                path,
                crate::reload::DEBOUNCE,
                !config.listen.ip().is_loopback(),
            )));
        }
        let (header_read_timeout, connections) = (config.header_read_timeout, config.connections);
        let state = AppState::with_federator(
            library.clone(),
            config,
            Some(federator.clone()),
            Some(api_token.clone()),
        );
        let (tx, rx) = watch::channel(false);
        let stopping = |mut rx: watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let mut health_addr = None;
        let health_server = match health_listener {
            Some(listener) => {
                health_addr = listener.local_addr().ok();
                Some(tokio::spawn(crate::serve::serve(
                    listener,
                    http::health_app(state.clone()),
                    header_read_timeout,
                    connections,
                    library.metrics().clone(),
                    None,
                    stopping(rx.clone()),
                )))
            }
            None => None,
        };
        let router = http::app(state);
        let served_cert = server_tls.as_ref().map(|t| t.cert.served());
        if let Some(server_tls) = &server_tls {
            background.push(tokio::spawn(Arc::clone(&server_tls.cert).watch()));
            if let Some(handle) = &discovery_handle {
                background
                    .push(tokio::spawn(announce_reloads(Arc::downgrade(handle), server_tls.cert.served())));
            }
        }
        let tls = server_tls.as_ref().map(|t| t.mutual);
        let acceptor = server_tls.map(|t| t.acceptor);
        let server = tokio::spawn(crate::serve::serve(
            listener,
            router,
            header_read_timeout,
            connections,
            library.metrics().clone(),
            acceptor,
            stopping(rx),
        ));
        Ok(Node {
            local_addr,
            tls,
            library,
            federator,
            health_addr,
            shutdown: Some(tx),
            server,
            health_server,
            background,
            discovery: discovery_handle,
            served_cert,
            api_token,
            _lock: lock,
            _folder_locks: folder_locks,
        })
    }

    /// A node for tests: loopback, ephemeral port, data and skills under `dir`.
    pub async fn spawn_for_tests(dir: &Path) -> Result<Node, StartError> {
        Node::bind(Config::for_tests(dir)).await
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where it serves the health endpoints alone (`health_listen`), if anywhere.
    pub fn health_addr(&self) -> Option<SocketAddr> {
        self.health_addr
    }

    /// Its base URL: `http://<addr>`, or `https://<addr>` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.local_addr)
    }

    /// How it speaks to clients: plain HTTP, TLS, or TLS requiring client
    /// certificates (mTLS).
    pub fn transport(&self) -> &'static str {
        match self.tls {
            None => "plain HTTP",
            Some(false) => "TLS",
            Some(true) => "mTLS (client certificates required)",
        }
    }

    /// The token its `/v1/` API takes as `Authorization: Bearer`.
    pub fn api_token(&self) -> &crate::config::Secret {
        &self.api_token
    }

    /// Its skill library.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Its federator: peers, rounds on demand.
    pub fn federator(&self) -> &Federator {
        &self.federator
    }

    /// With TLS, the certificate it serves now, and why changed files are
    /// not served (they reload without a restart).
    pub fn served_certificate(&self) -> Option<crate::tls::ServedCert> {
        self.served_cert.as_ref().map(|served| served.borrow().clone())
    }

    /// Serves until `signal` completes, then shuts down gracefully.
    pub async fn run_until(mut self, signal: impl Future<Output = ()>) -> std::io::Result<()> {
        match crate::serve::until_signal(&mut self.server, signal).await {
            Some(ended) => ended,
            None => self.shutdown().await,
        }
    }

    /// Stops accepting, lets requests in flight finish, and stops background work.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(discovery) = self.discovery.take() {
            let _ = tokio::task::spawn_blocking(move || drop(discovery)).await;
        }
        // Federation first: readiness turns false while requests drain.
        self.federator.shutdown().await;
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(true);
        }
        self.library.events().close();
        for task in &self.background {
            task.abort();
        }
        // The aborted tasks' blocking jobs run on: wait for them.
        self.library.stop_background().await;
        if let Some(health) = self.health_server.take() {
            health.await.unwrap_or(Ok(()))?;
        }
        (&mut self.server).await.unwrap_or(Ok(()))
    }
}

/// Announces by mDNS each certificate the server reloads, while discovery runs.
async fn announce_reloads(
    handle: Weak<DiscoveryHandle>,
    mut served: watch::Receiver<crate::tls::ServedCert>,
) {
    while served.changed().await.is_ok() {
        let leaf = served.borrow_and_update().leaf_sha256;
        let Some(handle) = handle.upgrade() else { return };
        // The daemon's queue is a channel send: quick, but not async.
        let _ = tokio::task::spawn_blocking(move || handle.set_tls(leaf)).await;
    }
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr).await.map_err(|source| StartError::Bind { addr, source })
}

/// The address a client on this machine reaches `addr` at: `addr` itself,
/// or the loopback address of its family when it is the unspecified one.
pub fn reachable_locally(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, addr.port()))
        }
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, addr.port()))
        }
        _ => addr,
    }
}

/// A future that completes on SIGINT (Ctrl-C) or SIGTERM. The handlers are
/// installed by this call (inside a Tokio runtime), not when the future is
/// first polled: `serve` calls it before [`Node::bind`] publishes
/// `server.json`, so a signal sent as soon as that file appears stops the
/// node cleanly (and removes the file) instead of killing the process.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (interrupt, terminate) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()));
        async move {
            tokio::select! {
                () = received(interrupt) => {}
                () = received(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Completes when `signal` is received; never, if it could not be installed.
#[cfg(unix)]
async fn received(signal: std::io::Result<tokio::signal::unix::Signal>) {
    match signal {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending::<()>().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_on_every_address_is_reached_locally_on_loopback() {
        let cases = [
            ("0.0.0.0:7327", "127.0.0.1:7327"),
            ("[::]:7327", "[::1]:7327"),
            ("127.0.0.1:9", "127.0.0.1:9"),
            ("192.0.2.7:7327", "192.0.2.7:7327"),
        ];
        for (listen, reached) in cases {
            assert_eq!(reachable_locally(listen.parse().unwrap()).to_string(), reached, "{listen}");
        }
    }

    /// A background write in flight when the node stops (an import the
    /// watcher started) ends before `shutdown` returns: a node started
    /// again on the same data, or files changed meanwhile, meet no write
    /// of the stopped one.
    #[tokio::test(flavor = "multi_thread")]
    async fn shutdown_waits_for_a_background_write_in_flight() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let node = Node::bind(Config::for_tests(dir.path())).await.unwrap();
        let (started, done) = (Arc::new(tokio::sync::Notify::new()), Arc::new(AtomicBool::new(false)));
        let job = {
            let (library, started, done) = (node.library().clone(), started.clone(), done.clone());
            tokio::spawn(async move {
                library
                    .in_background(move |_| {
                        started.notify_one();
                        std::thread::sleep(Duration::from_millis(500));
                        done.store(true, Ordering::SeqCst);
                    })
                    .await
            })
        };
        started.notified().await;
        job.abort();
        node.shutdown().await.unwrap();
        assert!(done.load(Ordering::SeqCst), "shutdown returned while the write was still running");
    }
}
