//! Peer discovery: finding other ECP nodes without configuring them.
//!
//! A discovery source reports [`DiscoveryEvent`]s on a channel; the
//! federator adds found nodes as temporary peers (trusted at
//! `discovery.trust`, 0.6 by default) and drops them when they are lost.
//! The only source today is mDNS (`_ecp._tcp.local.`); where multicast is
//! unavailable the node logs one warning and carries on without it.
//!
//! - [`mdns`]: advertise and browse `_ecp._tcp.local.`; [`start`] runs it.

pub mod mdns;

use std::net::SocketAddr;

use tokio::sync::mpsc;

pub use mdns::DiscoveryHandle;

/// A node found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredPeer {
    /// Its instance id (TXT record `instance`).
    pub instance: String,
    /// Its base URL, e.g. `http://192.0.2.7:7327`, or `https://…` for a
    /// node serving TLS (TXT record `scheme`).
    pub url: String,
    /// Whether it requires signed requests (TXT record `auth`).
    pub auth_required: bool,
    /// For an `https` node: the SHA-256 of the certificate it serves (TXT
    /// record `tls`), the one certificate it is trusted with.
    pub tls: Option<[u8; 32]>,
}

/// What this node advertises of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advert {
    /// Its instance id.
    pub instance: String,
    /// The address it serves on (its actual bound address).
    pub listen: SocketAddr,
    /// Whether it requires signed requests.
    pub auth_required: bool,
    /// The key id of its node key (TXT record `key`).
    pub key_id: String,
    /// With TLS: the SHA-256 of the certificate it serves.
    pub tls: Option<[u8; 32]>,
}

/// What a discovery source reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoveryEvent {
    /// A node appeared (or its address changed).
    Found(DiscoveredPeer),
    /// A node went away.
    Lost {
        /// Its instance id.
        instance: String,
    },
}

/// Why discovery could not start. The node carries on without it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// Multicast does not work here (no multicast route, an interface that
    /// is down, a sandbox or CI container); nothing to fix unless you want
    /// discovery — then run on a network that carries multicast.
    #[error("multicast is unavailable on {interface}: {reason}")]
    MulticastUnavailable {
        /// The interface address that was tried (`0.0.0.0`: the default route's).
        interface: String,
        /// What failed, with the system's error.
        reason: String,
    },
    /// The mDNS daemon could not start or refused our service.
    #[error("the mDNS daemon failed: {0}")]
    Mdns(String),
}

/// Starts mDNS discovery for this node: advertises `advert` in its TXT
/// records, and reports the other ECP nodes it finds on the returned
/// channel (never our own instance). Dropping the handle says goodbye on
/// the network and stops discovery. Blocks for up to half a second (a
/// multicast check), so call it from a blocking context in async code.
pub fn start(advert: Advert) -> Result<(DiscoveryHandle, mpsc::Receiver<DiscoveryEvent>), DiscoveryError> {
    mdns::start(advert)
}
