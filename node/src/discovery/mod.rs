//! Peer discovery: finding other ECP nodes without configuring them.
//!
//! A discovery source reports [`DiscoveryEvent`]s on a channel; the
//! federator adds found nodes as temporary peers (trusted at
//! `discovery.trust`, 0.6 by default) and drops them when they are lost.
//! The only source today is mDNS (`_ecp._tcp.local.`); where multicast is
//! unavailable the node logs one warning and carries on without it.

/// A node found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredPeer {
    /// Its instance id (TXT record `instance`).
    pub instance: String,
    /// Its base URL, e.g. `http://192.0.2.7:7327`.
    pub url: String,
    /// Whether it requires X-ECP-HMAC (TXT record `auth`).
    pub auth_required: bool,
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
