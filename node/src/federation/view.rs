//! [`PeerView`]: a peer as `ecp-node peers` and `GET /v1/peers` show it —
//! its stored state joined with how it is run now.

use std::collections::HashSet;

use serde::Serialize;

use crate::store::PeerState;

use super::PeerSpec;

/// A peer as `ecp-node peers` and `GET /v1/peers` show it: its stored state,
/// plus how it is configured when it is known to the running federator (or
/// to the peers file given).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerView {
    /// Stored state (URL, instance, kind, cursor, times, failures, push ack).
    #[serde(flatten)]
    pub state: PeerState,
    /// Whether it is a peer now (configured or currently discovered).
    pub active: bool,
    /// Trust, when active.
    pub trust: Option<f64>,
    /// Pulled from, when active.
    pub pull: Option<bool>,
    /// Pushed to, when active.
    pub push: Option<bool>,
    /// Schedule, when active.
    pub schedule: Option<String>,
    /// Whether requests to it carry its own key (or its secret): signed for
    /// sure; otherwise they are signed with the node's key, if it has one.
    pub signed: Option<bool>,
    /// Whether it is a legacy (ECP/1.1) peer, when active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legacy: Option<bool>,
}

/// Joins stored states with the active peers: every stored URL, then active
/// peers never contacted.
pub fn peer_views(states: Vec<PeerState>, active: &[PeerSpec]) -> Vec<PeerView> {
    let mut seen = HashSet::new();
    let mut views: Vec<PeerView> = states
        .into_iter()
        .map(|state| {
            seen.insert(state.url.clone());
            view(state, active)
        })
        .collect();
    for spec in active.iter().filter(|s| !seen.contains(&s.url)) {
        views.push(view(PeerState::new(&spec.url, spec.kind), active));
    }
    views.sort_by(|a, b| a.state.url.cmp(&b.state.url));
    views
}

fn view(mut state: PeerState, active: &[PeerSpec]) -> PeerView {
    let spec = active.iter().find(|s| s.url == state.url);
    if let Some(spec) = spec {
        state.kind = spec.kind;
        if state.instance.is_empty() {
            state.instance = spec.instance.clone().unwrap_or_default();
        }
    }
    PeerView {
        state,
        active: spec.is_some(),
        trust: spec.map(|s| s.trust),
        pull: spec.map(|s| s.pull),
        push: spec.map(|s| s.push),
        schedule: spec.map(|s| s.schedule.to_string()),
        signed: spec.map(|s| s.secret.is_some() || s.key.is_some()),
        legacy: spec.map(|s| s.legacy).filter(|l| *l),
    }
}
