//! The HTTP clients rounds use: one reqwest client (one connection pool) per
//! distinct TLS setting — which CAs to trust and which certificate to
//! present — made on first use and kept.
//!
//! Most nodes need one: every peer trusts the system's roots and presents
//! the node's own client certificate, if it has one. A `[[peer]]` with its
//! own `ca` or `client_cert` gets a client of its own, shared with any peer
//! whose setting is the same.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::client::{ClientError, http_client};
use crate::tls::{Identity, PeerTls};

/// A TLS setting's fingerprints: of its CAs, of its client identity.
type SettingKey = ([u8; 32], [u8; 32]);

/// The clients, by TLS setting. Cheap to clone: clones share the clients.
#[derive(Debug, Clone)]
pub struct Clients {
    timeout: Duration,
    /// Presented to peers whose `[[peer]]` names no `client_cert`.
    node_identity: Option<Identity>,
    by_setting: Arc<Mutex<HashMap<SettingKey, reqwest::Client>>>,
}

impl Clients {
    /// No clients yet; each will connect within `timeout` (at most 5 s).
    pub fn new(timeout: Duration, node_identity: Option<Identity>) -> Clients {
        Clients { timeout, node_identity, by_setting: Arc::default() }
    }

    /// The client for a peer with TLS setting `tls`.
    pub fn get(&self, tls: &PeerTls) -> Result<reqwest::Client, ClientError> {
        let effective = PeerTls {
            ca: tls.ca.clone(),
            identity: tls.identity.clone().or_else(|| self.node_identity.clone()),
            pin: tls.pin,
        };
        let key = effective.key();
        let mut clients = self.by_setting.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = clients.get(&key) {
            return Ok(client.clone());
        }
        let config = effective
            .client_config()
            .map_err(|e| ClientError::Tls(format!("cannot set up TLS for this peer: {e}")))?;
        let client = http_client(self.timeout, config)?;
        clients.insert(key, client.clone());
        Ok(client)
    }
}
