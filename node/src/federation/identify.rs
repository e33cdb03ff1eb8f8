//! Who a push claiming a configured peer's instance comes from, when that
//! peer's instance is not known yet (no `instance` in the peers file, no
//! pull yet to learn it from its manifest): the configured peers of unknown
//! instance are asked for their manifests first, so a configured peer that
//! pushes before the first pull gets its own trust, not the default —
//! trust does not depend on which came first.
//!
//! A push from a stranger cannot make the node hammer its peers: each peer
//! is asked at most once per [`IDENTIFY_INTERVAL`], and each answer is
//! awaited at most [`IDENTIFY_TIMEOUT`].

use std::time::Duration;

use super::federator::Federator;
use super::rounds::probe;
use crate::store::PeerKind;

/// Shortest time between two manifest requests to one peer on behalf of pushes.
pub(super) const IDENTIFY_INTERVAL: Duration = Duration::from_secs(30);
/// Longest a push waits for a peer's manifest.
pub(super) const IDENTIFY_TIMEOUT: Duration = Duration::from_secs(5);

impl Federator {
    /// The trust for a push whose `peerInstance` is `instance` (see
    /// [`Federator::inbound_trust`]), after learning the instances of the
    /// configured peers not known yet.
    pub async fn inbound_trust_learning(&self, instance: &str) -> Option<f64> {
        if let Some(trust) = self.inbound_trust(instance) {
            return Some(trust);
        }
        let unknown: Vec<_> = self
            .active_peers()
            .await
            .into_iter()
            .filter(|spec| spec.kind == PeerKind::Configured && self.0.trust.instance_of(spec).is_none())
            .filter(|spec| self.0.trust.due_to_identify(&spec.url, IDENTIFY_INTERVAL))
            .collect();
        if unknown.is_empty() {
            return None;
        }
        let ctx = self.context();
        let mut asked = tokio::task::JoinSet::new();
        for spec in unknown {
            let ctx = ctx.clone();
            asked.spawn(async move {
                let found = tokio::time::timeout(IDENTIFY_TIMEOUT, probe(&ctx, &spec)).await;
                (spec.url, found)
            });
        }
        while let Some(Ok((url, found))) = asked.join_next().await {
            if let Ok(Ok(learned)) = found {
                self.0.trust.learned(&url, &learned);
            }
        }
        self.inbound_trust(instance)
    }
}
