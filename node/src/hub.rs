//! A hub replica (#18 item 5): `ecp-node serve --store postgres://…`. It
//! serves the ECP endpoints (manifest, listings, one version, pushes) and
//! the health endpoints from the hub's database ([`HubStore`]); every
//! replica given the same database serves the same skill set, as the same
//! instance, so a load balancer may send any request to any of them.
//!
//! A replica keeps nothing a restart would lose: it may be started, killed
//! or replaced at any time. What needs a folder of a node's own is refused
//! at start, with what to do instead: peers to federate with, agents'
//! folders, skills folders. Of the local `/v1/` API it serves search and
//! the quarantine's review — list, show, approve, drop — on the quarantine
//! every replica shares (the token is `<data>/api-token`, as on a node:
//! give every replica the same file); the rest (`not_on_a_hub`) and the
//! status page are not served (JSON 404s).
//! Bundles (`ecp-1.3`) are taken, kept and served as a node does (hub
//! migration 4): the blob endpoints upload to and serve from the hub's
//! database, a pushed bundle passes the node's checks and scan, and a
//! bundle pushed to one replica — its files, its signature — is served by
//! every other (`store::hub`'s `blobs`). An upload passes through a
//! temporary file in the replica's own folder while it arrives.
//! Revocations pushed to any replica are taken as a node takes them (signed
//! by the skill's origin), applied and served on by every replica (the
//! `revocations` profile); outcome claims that packets carry are kept and
//! served on them the same way (`store::hub`'s `revoke` and `evidence`).
//! The replica keeps its metrics in a small library of its own under
//! `<data>/hub-replica`, from which nothing is served. The hub's node key
//! comes from the key file every replica is given (`hub_key_file`), else
//! from the hub's database.

use std::net::SocketAddr;
use std::sync::Arc;

use ecp_protocol::identity::NodeKey;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::http::{self, AppState};
use crate::library::Library;
use crate::store::StoreError;
use crate::store::hub::{DEFAULT_POOL, HubStore};

/// The folder under the data folder a replica keeps its own library in.
pub const REPLICA_DIR: &str = "hub-replica";

/// Why a hub replica could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubError {
    /// The database could not be reached, migrated or read.
    #[error(
        "cannot use the hub's database (--store): {0}{step}",
        step = crate::store::hub::next_step(.0).map(|s| format!("; {s}")).unwrap_or_default()
    )]
    Store(#[from] StoreError),
    /// Something configured needs a folder of the node's own.
    #[error("a hub replica (--store) does not {0}")]
    Refused(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}; choose another with --listen")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// The API token file (`api-token` in the data folder) cannot be read or made.
    #[error(
        "cannot read or create {file} in the data folder: {0}; check the folder's permissions, or delete a \
         damaged token file",
        file = crate::api_token::TOKEN_FILE
    )]
    ApiToken(std::io::Error),
    /// A certificate or key file is missing or unusable.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// The hub's key file (`hub_key_file`) cannot be read or holds no key.
    #[error(
        "cannot use the hub's key file {path} (--hub-key-file): {problem}; it must hold the key as 64 hex digits \
         (make one with: openssl rand -hex 32), the same file for every replica"
    )]
    KeyFile {
        /// The file, as configured.
        path: std::path::PathBuf,
        /// What is wrong with it (never its content).
        problem: String,
    },
}

/// The node key in the hub's key file at `path`: 64 hex digits (the
/// seed, as a node's `node.key` holds it), surrounding white space ignored.
fn key_from_file(path: &std::path::Path) -> Result<NodeKey, HubError> {
    let bad = |problem: String| HubError::KeyFile { path: path.to_owned(), problem };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let mut seed = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut seed)
        .map_err(|_| bad(format!("it does not hold 64 hex digits ({} characters)", text.trim().len())))?;
    Ok(NodeKey::from_seed(&seed))
}

/// A running hub replica.
#[derive(Debug)]
pub struct HubNode {
    local_addr: SocketAddr,
    hub: Arc<HubStore>,
    shutdown: Option<watch::Sender<bool>>,
    server: JoinHandle<std::io::Result<()>>,
    /// Lets go of cached answers on each change any replica commits.
    follower: JoinHandle<()>,
}

/// What `config` asks of a node that a hub replica cannot do, if anything.
fn refused(config: &Config) -> Option<String> {
    if config.peers_file.is_some() {
        return Some(
            "federate with peers (--peers): run a node of its own beside the hub and let it push to the hub"
                .into(),
        );
    }
    if !config.agents.is_empty() {
        return Some(
            "fill agents' folders ([[agent]]): agents pull from the hub, or a node of their own does".into(),
        );
    }
    if config.sharing.folders.len() > 1 {
        return Some(
            "import skills folders (--skills-dir): push a folder's skills to the hub from a node".into(),
        );
    }
    None
}

impl HubNode {
    /// Connects to the hub's database (`config.store`), migrating it on
    /// first use, binds and starts serving.
    pub async fn bind(config: Config) -> Result<HubNode, HubError> {
        crate::tls::install_default_provider();
        if let Some(why) = refused(&config) {
            return Err(HubError::Refused(why));
        }
        let Some(url) = config.store.clone() else {
            return Err(HubError::Refused("start without --store".into()));
        };
        let server_tls = {
            let files = config.tls.clone();
            tokio::task::spawn_blocking(move || crate::tls::ServerTls::load(&files))
                .await
                .expect("reading certificate files does not panic")?
        };
        let weak = crate::config::weak_secrets(&config, &crate::config::PeersConfig::default());
        for w in &weak {
            if !config.listen.ip().is_loopback() {
                return Err(HubError::Refused(format!("listen beyond loopback with a weak secret: {w}")));
            }
            tracing::warn!("{w} (accepted on loopback only)");
        }
        // The `/v1/` search is opened as a node's `/v1/` is: the same token
        // file in every replica's data folder lets a client use any of them.
        let api_token = {
            let data = config.data_dir.clone();
            tokio::task::spawn_blocking(move || {
                std::fs::create_dir_all(&data)?;
                crate::api_token::load_or_create(&data)
            })
            .await
            .expect("reading the token file does not panic")
            .map_err(HubError::ApiToken)?
        };
        let key = config.hub_key_file.as_deref().map(key_from_file).transpose()?;
        let (limits, replica) = (config.merge_limits(), config.data_dir.join(REPLICA_DIR));
        let (hub, library) = tokio::task::spawn_blocking(move || {
            let hub = HubStore::connect(url.expose(), DEFAULT_POOL, limits, key)?;
            let library = Library::open(&replica, &replica.join("skills"))?;
            Ok::<_, StoreError>((Arc::new(hub), library))
        })
        .await
        .expect("connecting to the hub's database does not panic")?;
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| HubError::Bind { addr: config.listen, source })?;
        let local_addr =
            listener.local_addr().map_err(|source| HubError::Bind { addr: config.listen, source })?;
        let (header_read_timeout, connections) = (config.header_read_timeout, config.connections);
        let metrics = library.metrics().clone();
        let state = AppState::hub(library, hub.clone(), config, Some(api_token));
        let follower = http::follow_changes(state.clone());
        let router = http::hub_app(state);
        let (tx, mut rx) = watch::channel(false);
        let server = tokio::spawn(crate::serve::serve(
            listener,
            router,
            header_read_timeout,
            connections,
            metrics,
            server_tls.map(|t| t.acceptor),
            async move {
                let _ = rx.wait_for(|stop| *stop).await;
            },
        ));
        Ok(HubNode { local_addr, hub, shutdown: Some(tx), server, follower })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Its base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", crate::node::reachable_locally(self.local_addr))
    }

    /// The hub's store, as this replica holds it.
    pub fn store(&self) -> &Arc<HubStore> {
        &self.hub
    }

    /// Serves until `signal` completes, then shuts down gracefully.
    pub async fn run_until(mut self, signal: impl Future<Output = ()>) -> std::io::Result<()> {
        match crate::serve::until_signal(&mut self.server, signal).await {
            Some(ended) => ended,
            None => self.shutdown().await,
        }
    }

    /// Stops accepting and lets requests in flight finish.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(true);
        }
        self.follower.abort();
        (&mut self.server).await.unwrap_or(Ok(()))
    }
}
