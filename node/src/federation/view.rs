//! [`PeerView`]: a peer as `ecp-node peers` and `GET /v1/peers` show it —
//! its stored state joined with how it is run now.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::store::PeerState;

use super::PeerSpec;

/// A peer as `ecp-node peers` and `GET /v1/peers` show it: its stored state,
/// plus how it is configured when it is known to the running federator (or
/// to the peers file given).
#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PeerKind;

    fn stored(url: &str, instance: &str) -> PeerState {
        PeerState { instance: instance.to_owned(), ..PeerState::new(url, PeerKind::Manual) }
    }

    fn configured(url: &str, instance: Option<&str>) -> PeerSpec {
        PeerSpec {
            kind: PeerKind::Configured,
            instance: instance.map(str::to_owned),
            ..PeerSpec::manual(url, None, 0.7)
        }
    }

    #[test]
    fn every_stored_peer_then_active_peers_never_contacted_in_url_order() {
        let views = peer_views(
            vec![stored("http://c", "inst-c"), stored("http://a", "inst-a")],
            &[configured("http://b", Some("inst-b")), configured("http://a", None)],
        );
        let shown: Vec<(&str, bool)> = views.iter().map(|v| (v.state.url.as_str(), v.active)).collect();
        assert_eq!(shown, [("http://a", true), ("http://b", true), ("http://c", false)]);
    }

    #[test]
    fn an_active_peer_shows_its_settings_and_an_inactive_one_none() {
        let views = peer_views(
            vec![stored("http://a", ""), stored("http://gone", "old")],
            &[configured("http://a", Some("inst-a"))],
        );
        let (a, gone) = (&views[0], &views[1]);
        assert_eq!(a.state.kind, PeerKind::Configured, "the kind it is run as");
        assert_eq!(a.state.instance, "inst-a", "the configured instance until one is learned");
        assert_eq!(
            (a.trust, a.pull, a.push, a.signed, a.legacy),
            (Some(0.7), Some(true), Some(true), Some(false), None)
        );
        assert!(a.schedule.is_some());
        assert_eq!((gone.active, gone.trust, gone.schedule.as_deref()), (false, None, None));
        assert_eq!(gone.state.instance, "old");
    }

    #[test]
    fn a_learned_instance_wins_and_legacy_and_signed_show_when_set() {
        let spec = PeerSpec {
            legacy: true,
            secret: Some(crate::config::Secret::new("s".to_owned())),
            ..configured("http://a", Some("configured"))
        };
        let view = &peer_views(vec![stored("http://a", "learned")], &[spec])[0];
        assert_eq!(view.state.instance, "learned");
        assert_eq!((view.signed, view.legacy), (Some(true), Some(true)));
        let json = serde_json::to_value(view).unwrap();
        assert_eq!(json["url"], "http://a", "the stored state is flattened");
        assert_eq!(json["legacy"], true);
    }
}
