//! A client configuration that trusts exactly one server certificate: the
//! node's own (`--tls-cert`). `ecp-node health` uses it to probe its own
//! node over HTTPS on loopback, where the certificate's names (issued for
//! the node's public name) would not match `127.0.0.1` and the CA may not be
//! in any store the probe can read. Trusting the one leaf byte for byte is
//! stricter than a CA check; the handshake's signature is still verified
//! with the leaf's key, so only the holder of the node's key passes.

use std::path::Path;
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::{ALPN_HTTP1, AlwaysPresent, Identity, TlsError, TlsFiles, load_certs, provider, setting};

/// Trusts one server certificate, compared byte for byte.
#[derive(Debug)]
struct PinnedLeaf(CertificateDer<'static>);

impl ServerCertVerifier for PinnedLeaf {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.0.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General("the server does not present this node's certificate".into()))
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
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedLeaf(leaf)));
    let mut config = match Identity::of_node(files)? {
        Some(identity) => builder.with_client_cert_resolver(Arc::new(AlwaysPresent(identity.key))),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
    Ok(config)
}
