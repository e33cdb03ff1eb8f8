//! TLS, both ends, with rustls: the certificate files a node is given, the
//! server configuration `serve` accepts connections with (optionally asking
//! every client for a certificate: mTLS), and the client configurations the
//! federator connects to `https` peers with — and, in `pinned`, the one
//! `ecp-node health` probes its own node with.
//!
//! Everything is read from PEM files: certificate chains (leaf first), and
//! unencrypted private keys in PKCS#8, PKCS#1 (RSA) or SEC1 (EC) form. The
//! files are read and checked when the node starts (or the peers file
//! is loaded), and every problem is reported with the setting that named the
//! file, so a node with a broken certificate never starts half-secured. The
//! server's own pair is then watched and reloaded when it changes
//! ([`ServerCert`], in `server_cert`).
//!
//! One crypto provider, *ring*: reqwest's `rustls-tls` already builds on it,
//! and aws-lc-rs would need cmake and nasm to build. Every configuration here
//! names the provider itself, so nothing depends on a process-wide default;
//! [`install_default_provider`] sets that default too, for any library that
//! asks for it.
//!
//! Trust, client side: a peer with its own `ca` is trusted only if its
//! certificate chains to that CA; any other `https` peer is checked against
//! the system's roots (the OS store, `SSL_CERT_FILE`/`SSL_CERT_DIR` honoured),
//! or, where the system has none (a slim container), the Mozilla roots built
//! into the binary.

mod pinned;
mod server_cert;

pub use pinned::own_node_client_config;
pub use server_cert::{RELOAD_POLL, ServedCert, ServerCert};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The only application protocol either end speaks over TLS.
const ALPN_HTTP1: &[u8] = b"http/1.1";

/// The settings naming each file, as errors show them.
pub mod setting {
    /// `--tls-cert`.
    pub const CERT: &str = "--tls-cert (ECP_TLS_CERT, [tls] cert)";
    /// `--tls-key`.
    pub const KEY: &str = "--tls-key (ECP_TLS_KEY, [tls] key)";
    /// `--client-ca`.
    pub const CLIENT_CA: &str = "--client-ca (ECP_CLIENT_CA, [tls] client_ca)";
    /// `--tls-client-cert`.
    pub const CLIENT_CERT: &str = "--tls-client-cert (ECP_TLS_CLIENT_CERT, [tls] client_cert)";
    /// `--tls-client-key`.
    pub const CLIENT_KEY: &str = "--tls-client-key (ECP_TLS_CLIENT_KEY, [tls] client_key)";
}

/// A certificate or key file that cannot be used. The message names the
/// setting that gave the file, the file, and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The file could not be read.
    #[error("{setting}: cannot read {}: {source}", .path.display())]
    Read {
        /// The flag or key that named the file.
        setting: String,
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// No PEM certificate in the file.
    #[error(
        "{setting}: {} holds no certificate; give a PEM file with `-----BEGIN CERTIFICATE-----` blocks \
         (convert DER with `openssl x509 -inform der -in FILE -out FILE.pem`)",
        .path.display()
    )]
    NoCertificate {
        /// The flag or key that named the file.
        setting: String,
        /// The file.
        path: PathBuf,
    },
    /// No PEM private key in the file.
    #[error(
        "{setting}: {} holds no private key; give an unencrypted PEM key (`BEGIN PRIVATE KEY`, \
         `BEGIN RSA PRIVATE KEY` or `BEGIN EC PRIVATE KEY`)",
        .path.display()
    )]
    NoKey {
        /// The flag or key that named the file.
        setting: String,
        /// The file.
        path: PathBuf,
    },
    /// The file parses as PEM but its content is unusable.
    #[error("{setting}: {}: {message}", .path.display())]
    Invalid {
        /// The flag or key that named the file.
        setting: String,
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// The key is not the key of the certificate.
    #[error(
        "{key_setting}: the private key in {} does not belong to the certificate in {}; \
         give the key the certificate was issued for",
        .key_path.display(), .cert_path.display()
    )]
    KeyMismatch {
        /// The flag or key that named the key file.
        key_setting: String,
        /// The key file.
        key_path: PathBuf,
        /// The certificate file.
        cert_path: PathBuf,
    },
}

// ---------------------------------------------------------------------------
// The files

/// The node's TLS files: `[tls]` of node.toml, and the flags and environment
/// variables of the same names. Relative paths are relative to the working
/// directory, like the node's other paths.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFiles {
    /// The server's certificate chain, PEM, leaf first (`--tls-cert`).
    pub cert: Option<PathBuf>,
    /// The server's private key, PEM (`--tls-key`).
    pub key: Option<PathBuf>,
    /// CA certificates, PEM: with it, every client must present a
    /// certificate issued by one of them (`--client-ca`).
    pub client_ca: Option<PathBuf>,
    /// The certificate chain this node presents to `https` peers that ask
    /// for one (`--tls-client-cert`).
    pub client_cert: Option<PathBuf>,
    /// Its private key (`--tls-client-key`).
    pub client_key: Option<PathBuf>,
}

impl TlsFiles {
    /// Each file of `self`, else of `fallback`.
    pub fn or(self, fallback: TlsFiles) -> TlsFiles {
        TlsFiles {
            cert: self.cert.or(fallback.cert),
            key: self.key.or(fallback.key),
            client_ca: self.client_ca.or(fallback.client_ca),
            client_cert: self.client_cert.or(fallback.client_cert),
            client_key: self.client_key.or(fallback.client_key),
        }
    }

    /// Whether the node serves HTTPS.
    pub fn serves_tls(&self) -> bool {
        self.cert.is_some()
    }

    /// Checks that the files come in pairs; the error names the missing
    /// setting and says what to do.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        match (&self.cert, &self.key) {
            (Some(_), None) => {
                return Err((setting::KEY, "--tls-cert needs the certificate's key too".into()));
            }
            (None, Some(_)) => return Err((setting::CERT, "--tls-key needs its certificate too".into())),
            _ => {}
        }
        if self.client_ca.is_some() && self.cert.is_none() {
            return Err((
                setting::CLIENT_CA,
                "client certificates are asked for in the TLS handshake: give --tls-cert and --tls-key too"
                    .into(),
            ));
        }
        match (&self.client_cert, &self.client_key) {
            (Some(_), None) => {
                Err((setting::CLIENT_KEY, "--tls-client-cert needs the certificate's key too".into()))
            }
            (None, Some(_)) => {
                Err((setting::CLIENT_CERT, "--tls-client-key needs its certificate too".into()))
            }
            _ => Ok(()),
        }
    }
}

/// Reads a PEM file of certificates (at least one).
pub fn load_certs(setting: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read(setting, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem).collect::<Result<Vec<_>, _>>().map_err(|e| {
        TlsError::Invalid { setting: setting.to_owned(), path: path.to_owned(), message: pem_problem(&e) }
    })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { setting: setting.to_owned(), path: path.to_owned() });
    }
    Ok(certs)
}

/// Reads the first private key of a PEM file.
pub fn load_key(setting: &str, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read(setting, path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls_pki_types::pem::Error::NoItemsFound => {
            TlsError::NoKey { setting: setting.to_owned(), path: path.to_owned() }
        }
        e => {
            TlsError::Invalid { setting: setting.to_owned(), path: path.to_owned(), message: pem_problem(&e) }
        }
    })
}

fn read(setting: &str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        setting: setting.to_owned(),
        path: path.to_owned(),
        source,
    })
}

fn pem_problem(e: &rustls_pki_types::pem::Error) -> String {
    format!("is not a valid PEM file ({e}); give the file as issued, in PEM form")
}

fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part);
    }
    hash.finalize().into()
}

/// The certificate a client presented in the TLS handshake (mTLS): put
/// by the accept loop on each request of the connection, where a
/// configured peer's `cert_fingerprint` or `cert_key_fingerprint` maps it
/// to that peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCert {
    /// SHA-256 of the leaf certificate, DER: what `openssl x509
    /// -fingerprint -sha256` prints.
    pub sha256: [u8; 32],
    /// SHA-256 of its public key (DER SubjectPublicKeyInfo), when the
    /// certificate parses.
    pub key_sha256: Option<[u8; 32]>,
}

impl ClientCert {
    /// The fingerprints of a leaf certificate.
    pub fn of(leaf: &CertificateDer<'_>) -> ClientCert {
        let key_sha256 = rustls::server::ParsedCertificate::try_from(leaf)
            .ok()
            .map(|parsed| Sha256::digest(parsed.subject_public_key_info().as_ref()).into());
        ClientCert { sha256: Sha256::digest(leaf.as_ref()).into(), key_sha256 }
    }
}

// ---------------------------------------------------------------------------
// The crypto provider

/// The ring provider every configuration here is built with.
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    Arc::clone(PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())))
}

/// Makes ring the process-wide default provider, unless one is set already:
/// rustls panics when code that relies on the default finds none.
pub fn install_default_provider() {
    let _ = CryptoProvider::clone(&provider()).install_default();
}

// ---------------------------------------------------------------------------
// Server

/// How the server speaks TLS: the acceptor, whether it requires client
/// certificates, and the certificate it serves (reloaded as it changes).
#[derive(Clone)]
pub struct ServerTls {
    /// Accepts a TCP stream's handshake.
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// Whether every client must present a certificate (`--client-ca`).
    pub mutual: bool,
    /// The certificate served: [`ServerCert::watch`] keeps it current.
    pub cert: Arc<ServerCert>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls").field("mutual", &self.mutual).finish_non_exhaustive()
    }
}

impl ServerTls {
    /// The server side of `files`: `None` without `--tls-cert`.
    pub fn load(files: &TlsFiles) -> Result<Option<ServerTls>, TlsError> {
        let (Some(cert_path), Some(key_path)) = (&files.cert, &files.key) else { return Ok(None) };
        let cert = Arc::new(ServerCert::load(cert_path.clone(), key_path.clone())?);
        let provider = provider();
        let verifier = match &files.client_ca {
            Some(path) => {
                let roots = TrustAnchors::load(setting::CLIENT_CA, path)?;
                WebPkiClientVerifier::builder_with_provider(roots.roots, Arc::clone(&provider))
                    .build()
                    .map_err(|e| TlsError::Invalid {
                        setting: setting::CLIENT_CA.to_owned(),
                        path: path.clone(),
                        message: format!("cannot verify clients with these CAs: {e}"),
                    })?
            }
            None => WebPkiClientVerifier::no_client_auth(),
        };
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Invalid {
                setting: setting::CERT.to_owned(),
                path: cert_path.clone(),
                message: format!("no TLS version available: {e}"),
            })?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::clone(&cert) as Arc<dyn rustls::server::ResolvesServerCert>);
        config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
        Ok(Some(ServerTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            mutual: files.client_ca.is_some(),
            cert,
        }))
    }
}

// ---------------------------------------------------------------------------
// Client

/// CA certificates to trust instead of the system's roots.
#[derive(Clone)]
pub struct TrustAnchors {
    roots: Arc<RootCertStore>,
    fingerprint: [u8; 32],
}

impl TrustAnchors {
    /// Reads a PEM file of CA certificates (a self-signed server certificate
    /// also works: it is then trusted as its own CA).
    pub fn load(setting: &str, path: &Path) -> Result<TrustAnchors, TlsError> {
        let certs = load_certs(setting, path)?;
        let mut roots = RootCertStore::empty();
        for cert in &certs {
            roots.add(cert.clone()).map_err(|e| TlsError::Invalid {
                setting: setting.to_owned(),
                path: path.to_owned(),
                message: format!("holds a certificate that cannot be a trust anchor: {e}"),
            })?;
        }
        let fingerprint = fingerprint(certs.iter().map(|c| c.as_ref()));
        Ok(TrustAnchors { roots: Arc::new(roots), fingerprint })
    }
}

impl PartialEq for TrustAnchors {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl fmt::Debug for TrustAnchors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TrustAnchors({} CAs, sha256 {})", self.roots.len(), hex::encode(&self.fingerprint[..6]))
    }
}

/// A certificate and its private key, presented to servers that ask for one.
#[derive(Clone)]
pub struct Identity {
    key: Arc<CertifiedKey>,
    fingerprint: [u8; 32],
}

impl Identity {
    /// Reads and checks a certificate chain and its key.
    pub fn load(
        (cert_setting, cert_path): (&str, &Path),
        (key_setting, key_path): (&str, &Path),
    ) -> Result<Identity, TlsError> {
        let chain = load_certs(cert_setting, cert_path)?;
        let key = load_key(key_setting, key_path)?;
        let fingerprint = fingerprint(chain.iter().map(|c| c.as_ref()).chain([key.secret_der()]));
        let key = CertifiedKey::from_der(chain, key, &provider()).map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => TlsError::KeyMismatch {
                key_setting: key_setting.to_owned(),
                key_path: key_path.to_owned(),
                cert_path: cert_path.to_owned(),
            },
            e => TlsError::Invalid {
                setting: key_setting.to_owned(),
                path: key_path.to_owned(),
                message: format!("cannot sign with this key: {e}"),
            },
        })?;
        Ok(Identity { key: Arc::new(key), fingerprint })
    }

    /// The node's own client identity (`--tls-client-cert`, `--tls-client-key`),
    /// if it has one.
    pub fn of_node(files: &TlsFiles) -> Result<Option<Identity>, TlsError> {
        match (&files.client_cert, &files.client_key) {
            (Some(cert), Some(key)) => {
                Identity::load((setting::CLIENT_CERT, cert), (setting::CLIENT_KEY, key)).map(Some)
            }
            _ => Ok(None),
        }
    }
}

impl PartialEq for Identity {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl fmt::Debug for Identity {
    // The fingerprint covers the key: only a prefix of it is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity(sha256 {})", hex::encode(&self.fingerprint[..6]))
    }
}

/// Presents the one identity to every server that asks.
#[derive(Debug)]
struct AlwaysPresent(Arc<CertifiedKey>);

impl ResolvesClientCert for AlwaysPresent {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// The TLS side of connections to one peer, from its `[[peer]]` (or, for
/// a node found by mDNS, its advertised certificate).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeerTls {
    /// Trust only these CAs (`ca`); `None`: the system's roots.
    pub ca: Option<TrustAnchors>,
    /// The identity to present (`client_cert`, `client_key`); `None`: the
    /// node's own (`--tls-client-cert`), if any.
    pub identity: Option<Identity>,
    /// Trust only the server certificate whose DER has this SHA-256 (a
    /// discovered node's advertised fingerprint), instead of any CA.
    pub pin: Option<[u8; 32]>,
}

impl PeerTls {
    /// A key that is equal exactly when two settings give equal configurations.
    pub fn key(&self) -> ([u8; 32], [u8; 32]) {
        let trusted = match (&self.ca, self.pin) {
            (Some(ca), _) => ca.fingerprint,
            // Tagged, so that a pin never shares a client with a CA file.
            (None, Some(pin)) => fingerprint([b"pin".as_slice(), &pin]),
            (None, None) => [0; 32],
        };
        (trusted, self.identity.as_ref().map_or([0; 32], |i| i.fingerprint))
    }

    /// The rustls client configuration: the roots (or the one certificate)
    /// to trust, and the identity to present when a server asks for one.
    pub fn client_config(&self) -> Result<rustls::ClientConfig, rustls::Error> {
        if let (Some(pin), None) = (self.pin, &self.ca) {
            return Ok(pinned::pinned_config(pin, self.identity.as_ref()));
        }
        let roots = match &self.ca {
            Some(ca) => Arc::clone(&ca.roots),
            None => system_roots(),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots);
        let mut config = match &self.identity {
            Some(identity) => {
                builder.with_client_cert_resolver(Arc::new(AlwaysPresent(Arc::clone(&identity.key))))
            }
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
        Ok(config)
    }
}

/// The system's trusted roots, read once: the OS store, else (none there,
/// as in a slim container) the Mozilla roots built in.
pub fn system_roots() -> Arc<RootCertStore> {
    static ROOTS: OnceLock<Arc<RootCertStore>> = OnceLock::new();
    Arc::clone(ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        let mut roots = RootCertStore::empty();
        let (added, ignored) = roots.add_parsable_certificates(found.certs);
        for error in &found.errors {
            tracing::debug!(%error, "part of the system's certificate store is unreadable");
        }
        if added == 0 {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            tracing::info!(
                "no CA certificates in the system's store: https peers without `ca` are checked against \
                 the Mozilla roots built into ecp-node"
            );
        } else {
            tracing::debug!(added, ignored, "system CA certificates loaded");
        }
        Arc::new(roots)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_come_in_pairs_and_client_ca_needs_a_server_certificate() {
        let p = |s: &str| Some(PathBuf::from(s));
        let ok = TlsFiles { cert: p("c"), key: p("k"), client_ca: p("ca"), ..TlsFiles::default() };
        assert_eq!(ok.check(), Ok(()));
        let cases = [
            (TlsFiles { cert: p("c"), ..TlsFiles::default() }, setting::KEY),
            (TlsFiles { key: p("k"), ..TlsFiles::default() }, setting::CERT),
            (TlsFiles { client_ca: p("ca"), ..TlsFiles::default() }, setting::CLIENT_CA),
            (TlsFiles { client_cert: p("c"), ..TlsFiles::default() }, setting::CLIENT_KEY),
            (TlsFiles { client_key: p("k"), ..TlsFiles::default() }, setting::CLIENT_CERT),
        ];
        for (files, named) in cases {
            assert_eq!(files.check().map_err(|(s, _)| s), Err(named), "{files:?}");
        }
    }

    #[test]
    fn unreadable_and_non_pem_files_name_the_setting_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let err = load_certs(setting::CERT, &missing).unwrap_err().to_string();
        assert!(err.starts_with("--tls-cert") && err.contains("missing.pem"), "{err}");
        let der = dir.path().join("cert.der");
        std::fs::write(&der, [0x30, 0x82, 0x01, 0x0a]).unwrap();
        let err = load_certs(setting::CERT, &der).unwrap_err().to_string();
        assert!(err.contains("holds no certificate") && err.contains("PEM"), "{err}");
        let err = load_key(setting::KEY, &der).unwrap_err().to_string();
        assert!(err.starts_with("--tls-key") && err.contains("holds no private key"), "{err}");
    }

    #[test]
    fn the_provider_is_ring_and_installing_it_twice_is_harmless() {
        install_default_provider();
        install_default_provider();
        assert!(CryptoProvider::get_default().is_some());
        assert!(!provider().cipher_suites.is_empty());
    }
}
