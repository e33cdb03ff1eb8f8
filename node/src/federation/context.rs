//! [`Context`]: what a round needs (library, policy, HTTP clients, the node's
//! own credentials), how requests to a peer are signed, and the helpers that
//! pulls, pushes and probes share.

use std::sync::Arc;
use std::time::Duration;

use ecp_protocol::signed_auth::SigningKey;
use ecp_protocol::{SkillPacket, StandardPolicy};

use crate::config::DEFAULT_KEY_ID;
use crate::config::{PeerKey, Secret};
use crate::library::Library;
use crate::store::{PeerKind, PeerState, Store, StoreError};
use crate::tls::Identity;

use super::clients::Clients;
use super::holdings::Holdings;
use super::{ClientError, Credentials, PeerClient, PeerSpec, ProgressHook, SyncError};

/// What a round needs: the library, the accept policy, whether received
/// skills are re-served, and the HTTP clients with their timeout.
#[derive(Debug, Clone)]
pub struct Context {
    /// Where merges go and pushes come from.
    pub library: Library,
    /// The accept policy of every merge.
    pub policy: StandardPolicy,
    /// Re-serve received skills (`reshare_external`).
    pub reshare: bool,
    /// Shared connection pools, one per TLS setting.
    pub http: Clients,
    /// Time allowed for each request.
    pub timeout: Duration,
    /// The node's default key: what requests to peers without a key of
    /// their own are signed with.
    pub own_key: Option<SigningKey>,
    /// The node's shared secret: X-ECP-HMAC towards legacy peers without a secret of their own.
    pub own_secret: Option<Secret>,
    /// Told of every page a pull merges (`ecp-node pull` and `sync`); none in a running node.
    pub progress: Option<ProgressHook>,
    /// When it was made: the start of the node (or command), for a push's `uptimeHours`.
    pub started: std::time::Instant,
    /// The versions peers sent us themselves, which pushes to them leave out;
    /// shared by the clones of a context.
    pub holdings: Arc<Holdings>,
    /// Scan a page's bodies on a thread of their own, a slice ahead of
    /// the merge ([`super::scan_ahead`]): `ecp-node pull`, whose pages are
    /// mostly content the node lacks. Off in a running node, whose rounds
    /// bring copies of what it holds, which the merge does not scan again.
    pub scan_ahead: bool,
}

impl Context {
    /// A context whose clients have `timeout` per request, present no
    /// client certificate unless a peer's own `client_cert` says so, and
    /// sign with no key of the node's own (see [`Context::signing_as`]).
    pub fn new(library: Library, policy: StandardPolicy, reshare: bool, timeout: Duration) -> Context {
        Context {
            library,
            policy,
            reshare,
            http: Clients::new(timeout, None),
            timeout,
            own_key: None,
            own_secret: None,
            progress: None,
            started: std::time::Instant::now(),
            holdings: Arc::default(),
            scan_ahead: false,
        }
    }

    /// The same context, scanning pages ahead of their merge or not
    /// ([`Context::scan_ahead`]).
    pub fn with_scan_ahead(mut self, scan_ahead: bool) -> Context {
        self.scan_ahead = scan_ahead;
        self
    }

    /// The same context, telling `hook` of every page a pull merges.
    pub fn with_progress(mut self, hook: ProgressHook) -> Context {
        self.progress = Some(hook);
        self
    }

    /// This context, presenting `identity` (the node's `--tls-client-cert`)
    /// to `https` peers that ask for a certificate and have none of their own.
    pub fn with_client_identity(mut self, identity: Option<Identity>) -> Context {
        self.http = Clients::new(self.timeout, identity);
        self
    }

    /// The same context, signing with the node's default key and secret
    /// (towards peers that have none of their own).
    pub fn signing_as(mut self, own_key: Option<SigningKey>, own_secret: Option<Secret>) -> Context {
        self.own_key = own_key;
        self.own_secret = own_secret;
        self
    }

    /// How requests to `peer` are signed: its own key, else its secret as
    /// the key `default`, else (when `node_key`) the node's default key;
    /// X-ECP-HMAC only for a legacy peer; answers verified unless legacy;
    /// and always the node-key signature (`SPEC.md` §13.11).
    pub fn credentials(&self, peer: &PeerSpec) -> Credentials {
        let own_key = || peer.node_key.then(|| self.own_key.clone()).flatten();
        let key = peer
            .key
            .as_ref()
            .map(PeerKey::signing_key)
            .or_else(|| {
                peer.secret.as_ref().map(|s| {
                    SigningKey::new(DEFAULT_KEY_ID, s.expose().as_bytes())
                        .expect("`default` is a valid key id")
                })
            })
            .or_else(own_key);
        let legacy_secret = peer
            .legacy
            .then(|| peer.secret.clone().or_else(|| peer.node_key.then(|| self.own_secret.clone()).flatten()))
            .flatten();
        // Public and bound to the peer, time and nonce: safe to send to anyone.
        let node_key = Some(self.library.store().node_key().clone());
        Credentials { verify_answers: key.is_some() && !peer.legacy, key, legacy_secret, node_key }
    }

    /// Our instance id.
    pub fn instance(&self) -> &str {
        self.library.store().instance_id()
    }

    /// A client for `peer`.
    pub fn client(&self, peer: &PeerSpec) -> Result<PeerClient, ClientError> {
        Ok(PeerClient::new(self.http.get(&peer.tls)?, &peer.url, self.credentials(peer), self.timeout))
    }

    /// The stored state of `peer` (cursor, ETags, acknowledgements), or a
    /// fresh one for a peer never synced.
    pub(crate) async fn peer_state(&self, peer: &PeerSpec) -> Result<PeerState, SyncError> {
        let (library, url) = (self.library.clone(), peer.url.clone());
        Ok(blocking(move || library.store().peer_state(&url))
            .await?
            .unwrap_or_else(|| PeerState::new(&peer.url, peer.kind)))
    }

    /// Whether a failed round with `peer` is to leave no trace: a peer
    /// named once on the command line (`pull URL`, `push URL`) that the
    /// store holds nothing of yet. A one-off attempt that fails must not
    /// become a permanent `manual` peer showing its error; one that succeeds
    /// is remembered (its cursor, so the next `pull URL` asks only for what
    /// changed), and its later failures are counted like any peer's.
    pub(super) async fn is_new_one_off(&self, peer: &PeerSpec) -> bool {
        if peer.kind != PeerKind::Manual {
            return false;
        }
        let (library, url) = (self.library.clone(), peer.url.clone());
        // A store that cannot say keeps the failure: the error is then seen.
        matches!(blocking(move || library.store().peer_state(&url)).await, Ok(None))
    }

    /// Records a failed round with `peer`: forgotten when `forget` (a new
    /// one-off, [`Context::is_new_one_off`]), else `record` counts it.
    /// Returns the consecutive failures now counted.
    pub(super) async fn record_failure(
        &self,
        peer: &PeerSpec,
        forget: bool,
        record: impl FnOnce(&Store, &str) -> Result<i64, StoreError> + Send + 'static,
    ) -> i64 {
        let (library, url) = (self.library.clone(), peer.url.clone());
        blocking(move || {
            if forget { library.store().forget_peer(&url).map(|()| 1) } else { record(library.store(), &url) }
        })
        .await
        .unwrap_or(0)
    }

    /// The instance a manifest claims, checked: not empty (falling back to
    /// the configured one), printable, not ours, and the configured one if set.
    pub(super) fn check_instance(&self, peer: &PeerSpec, claimed: &str) -> Result<String, SyncError> {
        let claimed = claimed.trim();
        let instance = match (claimed.is_empty(), &peer.instance) {
            (false, _) => claimed.to_owned(),
            (true, Some(configured)) => configured.clone(),
            (true, None) => return Err(SyncError::Protocol("its manifest names no instance".into())),
        };
        if instance.len() > ecp_protocol::merge::MAX_INSTANCE_BYTES || instance.chars().any(char::is_control)
        {
            return Err(SyncError::Protocol(
                "its manifest's instance is over 128 bytes or not printable".into(),
            ));
        }
        if instance == self.instance() {
            return Err(SyncError::ItIsUs);
        }
        if let Some(expected) = &peer.instance
            && *expected != instance
        {
            return Err(SyncError::WrongInstance { expected: expected.clone(), found: instance });
        }
        Ok(instance)
    }
}

/// Runs `f` on the blocking pool.
pub(crate) async fn blocking<T, E>(f: impl FnOnce() -> Result<T, E> + Send + 'static) -> Result<T, SyncError>
where
    T: Send + 'static,
    E: Into<SyncError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(SyncError::Internal(crate::joined::described(&e).to_owned())),
    }
}

/// Whether a packet originated at `instance` or already passed through it.
pub(crate) fn is_echo(packet: &SkillPacket, instance: &str) -> bool {
    packet.origin_instance == instance
        || packet.provenance.as_ref().is_some_and(|p| p.path.iter().any(|hop| hop == instance))
}

#[cfg(test)]
mod tests {
    use ecp_protocol::Provenance;

    use super::*;

    fn packet(origin: &str, path: &[&str]) -> SkillPacket {
        SkillPacket {
            origin_instance: origin.to_owned(),
            provenance: (!path.is_empty()).then(|| Provenance {
                path: path.iter().map(|hop| (*hop).to_owned()).collect(),
                ..Provenance::default()
            }),
            ..SkillPacket::default()
        }
    }

    #[test]
    fn a_packet_from_us_or_through_us_is_an_echo() {
        assert!(is_echo(&packet("us", &[]), "us"));
        assert!(is_echo(&packet("a", &["a", "us", "b"]), "us"));
    }

    #[test]
    fn a_packet_that_never_met_us_is_not_an_echo() {
        assert!(!is_echo(&packet("a", &[]), "us"));
        assert!(!is_echo(&packet("a", &["a", "b"]), "us"));
        assert!(!is_echo(&packet("a", &["a", "usa"]), "us"), "a hop is compared whole");
    }
}
