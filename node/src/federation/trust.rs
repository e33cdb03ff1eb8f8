//! Who is who, for pushes to this node: the [`Keyring`] requests are
//! verified with (the node's own keys and the configured peers', with the
//! node keys and certificates that prove peers), and the trust a push gets
//! from the instance it claims — that of the configured peer with this
//! instance, configured or learned from its manifest, unless that peer is
//! known by a node key or certificate: then only the proof gets its trust.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::keys::{KeyOwner, Keyring, PeerProofs};

use super::PeerSpec;

/// The keyring and the identities, kept in step with the peers file as applied.
#[derive(Debug)]
pub(super) struct Trust {
    /// Shared with the HTTP layer, which verifies every request with it.
    keyring: Arc<Keyring>,
    /// A std lock: read by every push, never held across an await.
    identities: RwLock<Identities>,
    /// When each peer was last asked who it is on behalf of a push.
    identified: Mutex<HashMap<String, Instant>>,
}

/// Instance ids learned from manifests, and the trust map derived from them.
#[derive(Debug, Default)]
struct Identities {
    /// URL → instance, as learned from each peer's manifest.
    learned: HashMap<String, String>,
    /// Configured peers: URL, configured instance, trust.
    configured: Vec<(String, Option<String>, f64)>,
    /// Instance → trust of the configured peer(s) with that instance (the
    /// lowest if several claim it).
    inbound: HashMap<String, f64>,
}

impl Identities {
    fn rebuild(&mut self) {
        self.inbound.clear();
        for (url, instance, trust) in &self.configured {
            let Some(instance) = instance.as_ref().or_else(|| self.learned.get(url)) else { continue };
            let entry = self.inbound.entry(instance.clone()).or_insert(*trust);
            *entry = entry.min(*trust);
        }
    }
}

impl Trust {
    /// No configured peers yet; `learned` maps URLs to the instances their
    /// manifests named (from the store).
    pub(super) fn new(keyring: Arc<Keyring>, learned: HashMap<String, String>) -> Trust {
        Trust {
            keyring,
            identities: RwLock::new(Identities { learned, ..Identities::default() }),
            identified: Mutex::default(),
        }
    }

    /// The keyring requests to this node are verified with.
    pub(super) fn keyring(&self) -> Arc<Keyring> {
        Arc::clone(&self.keyring)
    }

    /// Takes the configured peers `desired` (their keys, instances and trust)
    /// in place of the previous ones; returns the instances they are known by.
    pub(super) fn configure(&self, desired: &[PeerSpec]) -> HashSet<String> {
        let owner = |s: &PeerSpec| KeyOwner { url: s.url.clone(), trust: s.trust };
        let mut proofs = PeerProofs::default();
        for s in desired {
            if let Some(key) = &s.key {
                proofs.shared.push((key.signing_key(), owner(s)));
            }
            if let Some(id) = &s.known_by.key_id {
                proofs.node_keys.push((id.clone(), owner(s)));
            }
            for fingerprint in [s.known_by.cert, s.known_by.cert_key].into_iter().flatten() {
                proofs.certs.push((fingerprint, owner(s)));
            }
        }
        self.keyring.set_peer_keys(proofs);
        let mut ids = self.write();
        // A peer that can prove itself gets no trust for a mere claim of its instance.
        ids.configured = desired
            .iter()
            .filter(|s| !s.known_by.any())
            .map(|s| (s.url.clone(), s.instance.clone(), s.trust))
            .collect();
        ids.rebuild();
        desired
            .iter()
            .filter_map(|s| s.instance.clone().or_else(|| ids.learned.get(&s.url).cloned()))
            .collect()
    }

    /// The configured peers a push claiming `instance` is taken to come
    /// from, by URL: those whose claim [`Trust::inbound`] honours.
    pub(super) fn claimed_by(&self, instance: &str) -> Vec<String> {
        let ids = self.read();
        ids.configured
            .iter()
            .filter(|(url, configured, _)| {
                configured.as_ref().or_else(|| ids.learned.get(url)).is_some_and(|i| i == instance)
            })
            .map(|(url, _, _)| url.clone())
            .collect()
    }

    /// Records that the peer at `url` named itself `instance`.
    pub(super) fn learned(&self, url: &str, instance: &str) {
        if instance.is_empty() {
            return;
        }
        let mut ids = self.write();
        if ids.learned.get(url).map(String::as_str) != Some(instance) {
            ids.learned.insert(url.to_owned(), instance.to_owned());
            ids.rebuild();
        }
    }

    /// The instance of `spec`: configured, else learned.
    pub(super) fn instance_of(&self, spec: &PeerSpec) -> Option<String> {
        spec.instance.clone().or_else(|| self.read().learned.get(&spec.url).cloned())
    }

    /// The trust of a push claiming `instance`; `None` unless a configured peer has it.
    pub(super) fn inbound(&self, instance: &str) -> Option<f64> {
        self.read().inbound.get(instance).copied()
    }

    /// Whether the peer at `url` may be asked who it is now (not within
    /// `interval` of the last time); if so, now counts as the last time.
    pub(super) fn due_to_identify(&self, url: &str, interval: Duration) -> bool {
        let mut asked = self.identified.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if asked.get(url).is_some_and(|at| now.duration_since(*at) < interval) {
            return false;
        }
        asked.insert(url.to_owned(), now);
        true
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Identities> {
        self.identities.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Identities> {
        self.identities.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(url: &str, instance: Option<&str>, trust: f64) -> PeerSpec {
        PeerSpec { instance: instance.map(str::to_owned), ..PeerSpec::manual(url, None, trust) }
    }

    fn trust() -> Trust {
        Trust::new(Arc::new(Keyring::new(Vec::new())), HashMap::new())
    }

    #[test]
    fn a_configured_instance_gets_its_peers_trust_and_strangers_none() {
        let t = trust();
        let known = t.configure(&[peer("http://a", Some("inst-a"), 0.9)]);
        assert_eq!(known, HashSet::from(["inst-a".to_owned()]));
        assert_eq!(t.inbound("inst-a"), Some(0.9));
        assert_eq!(t.inbound("inst-x"), None);
    }

    #[test]
    fn an_instance_learned_from_a_manifest_counts_once_the_peer_is_configured() {
        let t = trust();
        t.learned("http://a", "inst-a");
        assert_eq!(t.inbound("inst-a"), None, "learned, but not a configured peer");
        t.configure(&[peer("http://a", None, 0.8)]);
        assert_eq!(t.inbound("inst-a"), Some(0.8));
        assert_eq!(t.instance_of(&peer("http://a", None, 0.8)).as_deref(), Some("inst-a"));
        t.learned("http://a", "inst-b");
        assert_eq!((t.inbound("inst-a"), t.inbound("inst-b")), (None, Some(0.8)));
    }

    #[test]
    fn two_peers_claiming_one_instance_give_the_lower_trust() {
        let t = trust();
        t.configure(&[peer("http://a", Some("same"), 0.9), peer("http://b", Some("same"), 0.4)]);
        assert_eq!(t.inbound("same"), Some(0.4));
    }

    #[test]
    fn a_peer_known_by_key_is_trusted_by_its_proof_never_by_its_claim() {
        let t = trust();
        let mut keyed = peer("http://a", Some("inst-a"), 0.9);
        keyed.known_by.key_id = Some("KEY-A".into());
        let mut certified = peer("http://b", Some("inst-b"), 0.8);
        certified.known_by.cert = Some([7; 32]);
        t.configure(&[keyed, certified, peer("http://c", Some("inst-c"), 0.7)]);
        assert_eq!(t.inbound("inst-a"), None, "a claim of a keyed peer's instance");
        assert_eq!(t.inbound("inst-b"), None, "a claim of a certified peer's instance");
        assert_eq!(t.inbound("inst-c"), Some(0.7), "a peer without proofs keeps the claim rule");
        let set = t.keyring().current();
        assert_eq!(set.node_key_owner("KEY-A").map(|o| o.trust), Some(0.9));
        let cert = crate::tls::ClientCert { sha256: [7; 32], key_sha256: None };
        assert_eq!(set.cert_owner(&cert).map(|o| o.url.as_str()), Some("http://b"));
    }

    #[test]
    fn a_claimed_instance_names_the_peers_whose_claim_counts() {
        let t = trust();
        let mut keyed = peer("http://k", Some("inst-a"), 0.9);
        keyed.known_by.key_id = Some("KEY-K".into());
        t.configure(&[peer("http://a", Some("inst-a"), 0.9), peer("http://b", None, 0.5), keyed]);
        t.learned("http://b", "inst-b");
        assert_eq!(t.claimed_by("inst-a"), ["http://a"], "not the peer known by its key");
        assert_eq!(t.claimed_by("inst-b"), ["http://b"], "learned from its manifest");
        assert!(t.claimed_by("inst-x").is_empty());
    }

    #[test]
    fn a_peer_removed_from_the_file_loses_its_trust() {
        let t = trust();
        t.configure(&[peer("http://a", Some("inst-a"), 0.9)]);
        t.configure(&[]);
        assert_eq!(t.inbound("inst-a"), None);
    }

    #[test]
    fn a_peer_is_asked_who_it_is_at_most_once_per_interval() {
        let t = trust();
        let hour = Duration::from_secs(3_600);
        assert!(t.due_to_identify("http://a", hour));
        assert!(!t.due_to_identify("http://a", hour), "within the interval");
        assert!(t.due_to_identify("http://b", hour), "each peer on its own");
        assert!(t.due_to_identify("http://a", Duration::ZERO), "at the interval's end");
    }

    #[test]
    fn an_empty_instance_is_not_learned() {
        let t = trust();
        t.learned("http://a", "");
        assert_eq!(t.instance_of(&peer("http://a", None, 0.5)), None);
    }
}
