//! Client configurations that trust exactly one server certificate, by the
//! SHA-256 of its DER: the node's own (`--tls-cert`), which `ecp-node
//! health` probes its own node with over HTTPS on loopback, where the
//! certificate's names (issued for the node's public name) would not match
//! `127.0.0.1` and the CA may not be in any store the probe can read; and
//! a node found by mDNS, whose advertised fingerprint it must present
//! (`SPEC.md` §13.12). Trusting the one leaf is stricter than a CA check;
//! the handshake's signature is still verified with the leaf's key, so only
//! the holder of that certificate's key passes.

use std::path::Path;
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use sha2::{Digest, Sha256};

use super::{ALPN_HTTP1, AlwaysPresent, Identity, TlsError, TlsFiles, load_certs, provider, setting};

/// Trusts one server certificate: the one whose DER has this SHA-256.
#[derive(Debug)]
pub(super) struct PinnedLeaf(pub(super) [u8; 32]);

impl ServerCertVerifier for PinnedLeaf {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let presented: [u8; 32] = Sha256::digest(end_entity.as_ref()).into();
        // Public values: no need for a constant-time comparison.
        if presented == self.0 {
            Ok(ServerCertVerified::assertion())
        } else {
            // Prefixes: error messages are shortened where they are stored.
            Err(rustls::Error::General(format!(
                "the server's certificate is SHA-256 {}…, not the pinned {}…",
                hex::encode(&presented[..8]),
                hex::encode(&self.0[..8])
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &provider().signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &provider().signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        provider().signature_verification_algorithms.supported_schemes()
    }
}

/// A client configuration for the node that serves `cert` (its
/// `--tls-cert`): it trusts only that file's leaf and presents the node's
/// client identity of `files` (`--tls-client-cert`), if it has one, to a
/// node that requires one.
pub fn own_node_client_config(cert: &Path, files: &TlsFiles) -> Result<rustls::ClientConfig, TlsError> {
    let leaf = load_certs(setting::CERT, cert)?.swap_remove(0);
    Ok(pinned_config(Sha256::digest(leaf.as_ref()).into(), Identity::of_node(files)?.as_ref()))
}

/// A client configuration that trusts only the server certificate whose
/// SHA-256 is `leaf_sha256`, presenting `identity` to a server that asks.
pub(super) fn pinned_config(leaf_sha256: [u8; 32], identity: Option<&Identity>) -> rustls::ClientConfig {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedLeaf(leaf_sha256)));
    let mut config = match identity {
        Some(identity) => {
            builder.with_client_cert_resolver(Arc::new(AlwaysPresent(Arc::clone(&identity.key))))
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
    config
}
