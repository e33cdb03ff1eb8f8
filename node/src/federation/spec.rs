//! [`PeerSpec`]: one peer, resolved — from a `[[peer]]` of the peers file,
//! from discovery, or from the command line — as rounds use it.

use crate::config::{KnownBy, PeerConfig, PeerKey, PeersConfig, Schedule, Secret};
use crate::store::PeerKind;
use crate::tls::PeerTls;

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
    /// The node key and client certificate its requests to us prove it by.
    pub known_by: KnownBy,
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
            known_by: peer.known_by.clone(),
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
            known_by: KnownBy::default(),
            tls: PeerTls::default(),
        }
    }
}
