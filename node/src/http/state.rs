//! [`AppState`]: what every handler shares.

use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ecp_protocol::legacy_auth::LegacyVerifier;
use ecp_protocol::signed_auth::NonceCache;

use super::body_budget::BodyBudget;
use super::cache::ResponseCache;
use crate::config::{Config, Secret};
use crate::federation::Federator;
use crate::keys::Keyring;
use crate::library::Library;
use crate::serving::Serving;

/// Shared, immutable-after-start state of the HTTP API (cheap to clone).
#[derive(Debug, Clone)]
pub struct AppState(Arc<Shared>);

/// The contents of [`AppState`].
#[derive(Debug)]
pub struct Shared {
    /// Skills: store and projection.
    pub library: Library,
    /// What the ECP endpoints serve from: the library, or a hub's database.
    pub serving: Serving,
    /// The resolved configuration.
    pub config: Config,
    /// Legacy X-ECP-HMAC verifier, when a secret is set (used only with `accept_legacy`).
    pub verifier: Option<LegacyVerifier>,
    /// The ECP/1.2 keys requests are verified with (the federator's, which
    /// follow the peers file).
    pub keyring: Arc<Keyring>,
    /// Nonces of accepted signed requests, until they leave the skew window.
    pub nonces: Mutex<NonceCache>,
    /// Encoded responses by sequence number.
    pub cache: ResponseCache,
    /// Request-body bytes held at once, across requests.
    pub body_budget: Arc<BodyBudget>,
    /// Start time, for `uptimeHours`.
    pub started: Instant,
    /// The node's federator: the trust of configured peers for their
    /// pushes, and `/v1/peers`. `None` in router-only tests.
    pub federator: Option<Federator>,
    /// The local API token (`<data>/api-token`); `None` in router-only
    /// tests, where only the secret, a signature or trusted loopback open `/v1/`.
    pub api_token: Option<Secret>,
    /// The status page's login tickets, session cookies and CSRF token.
    pub status_page: super::status_page::Access,
}

impl AppState {
    /// State for a node with `config` serving `library`, without federation.
    pub fn new(library: Library, config: Config) -> Self {
        AppState::with_federator(library, config, None, None)
    }

    /// State for a node with `config` serving `library`, federating with
    /// `federator`, its `/v1/` API opened by `api_token`.
    pub fn with_federator(
        library: Library,
        config: Config,
        federator: Option<Federator>,
        api_token: Option<Secret>,
    ) -> Self {
        let serving = Serving::Local(Box::new(library.clone()));
        AppState::serving(library, serving, config, federator, api_token)
    }

    /// State for a hub replica serving from `hub` (#18 item 5), its `/v1/`
    /// search opened by `api_token`. `library` is the replica's own,
    /// unserved: the metrics are kept in it.
    pub fn hub(
        library: Library,
        hub: Arc<crate::store::hub::HubStore>,
        config: Config,
        api_token: Option<Secret>,
    ) -> Self {
        AppState::serving(library, Serving::Hub(hub), config, None, api_token)
    }

    fn serving(
        library: Library,
        serving: Serving,
        config: Config,
        federator: Option<Federator>,
        api_token: Option<Secret>,
    ) -> Self {
        let verifier = config.secret.as_ref().map(|secret| {
            let mut v = LegacyVerifier::new(secret.expose().as_bytes());
            v.accept_full_url = config.accept_full_url_hmac;
            v
        });
        let keyring = match &federator {
            Some(f) => f.keyring(),
            None => Arc::new(Keyring::new(config.own_keys())),
        };
        let nonces = Mutex::new(NonceCache::with_capacity(config.replay_cache_capacity));
        let body_budget = BodyBudget::new(config.body_bytes_in_flight);
        let status_page = super::status_page::Access::new(api_token.as_ref());
        AppState(Arc::new(Shared {
            serving,
            library,
            config,
            verifier,
            keyring,
            nonces,
            cache: ResponseCache::default(),
            body_budget,
            started: Instant::now(),
            federator,
            api_token,
            status_page,
        }))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
