//! The server's certificate and key (`--tls-cert`, `--tls-key`), served
//! from memory and swapped in when their files change, without a restart.
//!
//! [`ServerCert::watch`] reads both files every [`RELOAD_POLL`] and hashes
//! them; when the bytes changed it loads and checks the pair (the key must
//! be the certificate's) and, if it holds, new handshakes get it at once
//! (connections already open keep theirs). A pair that does not hold — a
//! half-written renewal, the certificate replaced before its key, a file
//! gone — keeps the pair in service and logs why, once per change of the
//! files; a later poll that finds a good pair takes it. Polling rather than
//! file events: certificate tools replace files by rename, through
//! symlinks (Kubernetes secrets) or on network mounts, where events are
//! unreliable, and two small reads per poll cost nothing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::{Identity, TlsError, setting};

/// How often the files are looked at.
pub const RELOAD_POLL: Duration = Duration::from_secs(1);

/// What is being served, and what went wrong with the files last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedCert {
    /// SHA-256 of the leaf certificate being served (its DER).
    pub leaf_sha256: [u8; 32],
    /// Why the files as they are now are not served; `None` when they are.
    pub problem: Option<String>,
}

/// The certificate served now, and its files.
#[derive(Debug)]
pub struct ServerCert {
    cert: PathBuf,
    key: PathBuf,
    /// The files' digest as read before the pair served first was loaded:
    /// where the watch starts. (Read when the watch task first runs, a
    /// renewal landing in between was taken for the files loaded, and never
    /// served.)
    loaded: [u8; 32],
    current: RwLock<Arc<CertifiedKey>>,
    served: watch::Sender<ServedCert>,
}

impl ServerCert {
    /// Reads and checks the pair; the error names the setting and the fix.
    pub fn load(cert: PathBuf, key: PathBuf) -> Result<ServerCert, TlsError> {
        // Before loading: a change after this read is one the watch sees.
        let loaded = digest_of(&cert, &key);
        let identity = Identity::load((setting::CERT, &cert), (setting::KEY, &key))?;
        let served = ServedCert { leaf_sha256: leaf_sha256(&identity.key), problem: None };
        Ok(ServerCert {
            cert,
            key,
            loaded,
            current: RwLock::new(identity.key),
            served: watch::channel(served).0,
        })
    }

    /// What is served now; the receiver sees every change.
    pub fn served(&self) -> watch::Receiver<ServedCert> {
        self.served.subscribe()
    }

    /// Looks at the files every [`RELOAD_POLL`] and swaps in a changed pair
    /// that holds; runs until dropped.
    pub async fn watch(self: Arc<Self>) {
        let mut seen = self.loaded;
        loop {
            tokio::time::sleep(RELOAD_POLL).await;
            let now = self.files_digest().await;
            if now == seen {
                continue;
            }
            seen = now;
            let (cert, key) = (self.cert.clone(), self.key.clone());
            let loaded = tokio::task::spawn_blocking(move || {
                Identity::load((setting::CERT, &cert), (setting::KEY, &key))
            })
            .await;
            match loaded {
                Ok(Ok(identity)) => self.swap(identity.key),
                Ok(Err(e)) => {
                    tracing::warn!(
                        "the changed certificate files are not used, the certificate served before still is: {e}"
                    );
                    self.served.send_modify(|s| s.problem = Some(e.to_string()));
                }
                Err(e) => tracing::warn!(error = %e, "reading the certificate files failed"),
            }
        }
    }

    fn swap(&self, key: Arc<CertifiedKey>) {
        let leaf_sha256 = leaf_sha256(&key);
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = key;
        let before = self.served.borrow().leaf_sha256;
        if before != leaf_sha256 {
            tracing::info!(sha256 = %hex::encode(leaf_sha256), "server certificate reloaded: new connections get it");
        }
        self.served.send_replace(ServedCert { leaf_sha256, problem: None });
    }

    /// [`digest_of`] the files, off the runtime's threads.
    async fn files_digest(&self) -> [u8; 32] {
        let (cert, key) = (self.cert.clone(), self.key.clone());
        tokio::task::spawn_blocking(move || digest_of(&cert, &key)).await.unwrap_or_default()
    }
}

/// A digest of both files' bytes (an unreadable file counts as empty):
/// what tells that they changed.
fn digest_of(cert: &Path, key: &Path) -> [u8; 32] {
    let mut hash = Sha256::new();
    for path in [cert, key] {
        let bytes = std::fs::read(path).unwrap_or_default();
        hash.update((bytes.len() as u64).to_be_bytes());
        hash.update(bytes);
    }
    hash.finalize().into()
}

impl ResolvesServerCert for ServerCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read().unwrap_or_else(|p| p.into_inner())))
    }
}

/// SHA-256 of the leaf of `key`'s chain.
fn leaf_sha256(key: &CertifiedKey) -> [u8; 32] {
    key.cert.first().map_or([0; 32], |leaf| Sha256::digest(leaf.as_ref()).into())
}
