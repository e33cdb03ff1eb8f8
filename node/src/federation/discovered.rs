//! Discovered peers: a node found by discovery (mDNS) becomes a temporary
//! peer at `[discovery]` trust, unless it is this node, discovery is off, a
//! configured peer has its URL or instance, or it requires signed requests;
//! a node lost is dropped.
//!
//! Anyone on the network can advertise a node, and a request signed with
//! this node's own key could be relayed (within the replay window, to a node
//! it was not bound to, or read for what it reveals) by whoever receives it.
//! So a discovered node that requires signatures is never sent one made with
//! the node's key: it is pulled only through a `[[peer]]` configured with a
//! key for it (matched by URL or `instance`), which then shadows it here.

use std::sync::{Arc, Weak};

use tokio::sync::mpsc;

use crate::discovery::{DiscoveredPeer, DiscoveryEvent};
use crate::store::PeerKind;
use crate::tls::PeerTls;

use super::PeerSpec;
use super::federator::{Federator, Inner};

impl Federator {
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

    /// A found node: added, moved to its new URL, or ignored.
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
                && (r.spec.url == url
                    || self.0.trust.instance_of(&r.spec).as_deref() == Some(peer.instance.as_str()))
        });
        if shadowed {
            return;
        }
        if peer.auth_required {
            tracing::info!(
                peer = %url,
                instance = %peer.instance,
                "discovered node requires signed requests: not pulled (this node signs only for a [[peer]] \
                 configured with a key for it)"
            );
        }
        // A node that moved, or that now requires signatures, leaves its old entry.
        let moved: Vec<String> = running
            .values()
            .filter(|r| {
                r.spec.kind == PeerKind::Discovered
                    && r.spec.instance.as_deref() == Some(&peer.instance)
                    && (r.spec.url != url || peer.auth_required)
            })
            .map(|r| r.spec.url.clone())
            .collect();
        for old in moved {
            if let Some(r) = running.remove(&old) {
                self.stop(r).await;
            }
        }
        if peer.auth_required {
            return;
        }
        let spec = PeerSpec {
            url: url.clone(),
            kind: PeerKind::Discovered,
            secret: None,
            key: None,
            legacy: false,
            // Never the node's own key (see the module doc).
            node_key: false,
            trust: config.discovery.trust,
            pull: true,
            push: false,
            schedule: config.federation.schedule.clone(),
            instance: Some(peer.instance.clone()),
            known_by: crate::config::KnownBy::default(),
            // An https node is trusted with the certificate it advertised only.
            tls: PeerTls { pin: peer.tls, ..PeerTls::default() },
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
}

/// Hands each discovery event to the federator while it exists.
pub(super) async fn consume_discovery(weak: Weak<Inner>, mut events: mpsc::Receiver<DiscoveryEvent>) {
    while let Some(event) = events.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        Federator(inner).discovery_event(event).await;
    }
}
