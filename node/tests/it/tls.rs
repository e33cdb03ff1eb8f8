//! TLS and mTLS between real nodes on loopback ports: a test CA made here
//! with rcgen, two nodes pulling and pushing over TLS and over mTLS, a
//! client without a certificate refused by an mTLS node, a node refusing a
//! server whose CA it does not trust, certificate files that stop a node
//! with the setting named, and the binary serving HTTPS and pulling with
//! `--ca` and a client certificate.
//!
//! Every certificate names 127.0.0.1 (and localhost); every address is a
//! loopback one. Rounds are driven with [`Federator::sync_now`].

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::PeersConfig;
use ecp_node::config::{Config, Flags, Sources};
use ecp_node::federation::PeerSync;
use ecp_node::tls::TlsFiles;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use reqwest::StatusCode;
use tempfile::TempDir;

use crate::cli::Folders;

/// Generous bound for anything that should take milliseconds.
const SOON: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------
// A test PKI

/// Two CAs and what they issued, as PEM files in a temporary folder:
///
/// - `ca.pem`: the test CA; `server.pem`/`server.key` for 127.0.0.1 and
///   localhost (serverAuth); `client.pem`/`client.key` (clientAuth);
///   `node.pem`/`node.key` (both: one certificate per node, both ways).
/// - `other-ca.pem`: an unrelated CA; `stranger.pem`/`stranger.key`, a
///   client certificate it issued.
pub(super) struct Pki {
    dir: TempDir,
}

impl Pki {
    pub(super) fn new() -> Pki {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let pki = Pki { dir };
        let ca = pki.ca("ca.pem", "ecp test CA");
        pki.issue(&ca, "server", "ecp test server", &[ExtendedKeyUsagePurpose::ServerAuth]);
        pki.issue(&ca, "client", "ecp test client", &[ExtendedKeyUsagePurpose::ClientAuth]);
        pki.issue(
            &ca,
            "node",
            "ecp test node",
            &[ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth],
        );
        let other = pki.ca("other-ca.pem", "another CA");
        pki.issue(&other, "stranger", "a stranger", &[ExtendedKeyUsagePurpose::ClientAuth]);
        pki
    }

    fn ca(&self, file: &str, name: &str) -> CertifiedIssuer<'static, KeyPair> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("a key"))
            .expect("a self-signed CA");
        std::fs::write(self.path(file), ca.pem()).expect("write the CA");
        ca
    }

    /// `<stem>.pem` and `<stem>.key`, issued by `ca` for 127.0.0.1 and localhost.
    fn issue(
        &self,
        ca: &CertifiedIssuer<'static, KeyPair>,
        stem: &str,
        name: &str,
        usages: &[ExtendedKeyUsagePurpose],
    ) {
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).expect("parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = usages.to_vec();
        let key = KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, ca).expect("a certificate");
        std::fs::write(self.path(&format!("{stem}.pem")), cert.pem()).expect("write the certificate");
        std::fs::write(self.path(&format!("{stem}.key")), key.serialize_pem()).expect("write the key");
    }

    pub(super) fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn read(&self, file: &str) -> Vec<u8> {
        std::fs::read(self.path(file)).expect("a PKI file")
    }

    /// A server that serves `server.pem`; with `mutual`, it requires a
    /// client certificate from the test CA.
    fn server(&self, mutual: bool) -> TlsFiles {
        TlsFiles {
            cert: Some(self.path("server.pem")),
            key: Some(self.path("server.key")),
            client_ca: mutual.then(|| self.path("ca.pem")),
            ..TlsFiles::default()
        }
    }

    /// `files`, presenting `<stem>.pem` to servers that ask.
    fn presenting(&self, stem: &str, files: TlsFiles) -> TlsFiles {
        TlsFiles {
            client_cert: Some(self.path(&format!("{stem}.pem"))),
            client_key: Some(self.path(&format!("{stem}.key"))),
            ..files
        }
    }

    /// A client of our own (not the node's code): trusts only `ca`, and
    /// presents `<identity>.pem` when given.
    fn client(&self, ca: &str, identity: Option<&str>) -> reqwest::Client {
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .timeout(SOON)
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&self.read(ca)).expect("the CA"));
        if let Some(stem) = identity {
            let mut pem = self.read(&format!("{stem}.pem"));
            pem.extend(self.read(&format!("{stem}.key")));
            builder = builder.identity(reqwest::Identity::from_pem(&pem).expect("an identity"));
        }
        builder.build().expect("a client")
    }
}

// ---------------------------------------------------------------------------
// Nodes

/// A node in its own temporary folder, with `tls` as its TLS files.
struct TlsNode {
    _dir: TempDir,
    node: Node,
}

impl TlsNode {
    async fn start(tls: TlsFiles) -> TlsNode {
        TlsNode::start_with(tls, |_| {}).await
    }

    /// A node whose test configuration `adjust` changed first.
    async fn start_with(tls: TlsFiles, adjust: impl FnOnce(&mut Config)) -> TlsNode {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut config = Config::for_tests(dir.path());
        config.tls = tls;
        adjust(&mut config);
        let node = Node::bind(config).await.expect("the node starts");
        TlsNode { _dir: dir, node }
    }

    fn url(&self) -> String {
        self.node.url()
    }

    /// Adds a local skill.
    async fn add_local(&self, name: &str) {
        crate::util::add_local_skill(self.node.library(), name, 1.0).await;
    }

    /// The names of the skills it holds.
    async fn skills(&self) -> Vec<String> {
        let library = self.node.library().clone();
        tokio::task::spawn_blocking(move || library.store().list_skills().expect("skills"))
            .await
            .expect("no panic")
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    /// Federates with the peers of `toml` and runs one round with each.
    async fn sync(&self, toml: &str) -> Vec<PeerSync> {
        let peers = PeersConfig::parse(toml, "test peers").expect("valid peers");
        self.node.federator().apply(peers).await;
        self.node.federator().sync_now().await
    }
}

/// A `[[peer]]` at `url` that is pulled from and pushed to, never on its own
/// schedule during the test; `extra` are more keys.
fn peer(url: &str, extra: &str) -> String {
    format!("[federation]\ninterval = \"1h\"\n\n[[peer]]\nurl = \"{url}\"\npush = true\n{extra}\n")
}

fn toml_path(path: &Path) -> String {
    path.to_str().expect("UTF-8 temporary path").replace('\\', "\\\\")
}

#[track_caller]
fn assert_synced(results: &[PeerSync]) {
    assert_eq!(results.len(), 1, "one peer");
    let r = &results[0];
    assert!(matches!(r.pull, Some(Ok(_))), "pull from {}: {:?}", r.url, r.pull);
    assert!(matches!(r.push, Some(Ok(_))), "push to {}: {:?}", r.url, r.push);
}

/// The pull and push errors of the one peer synced.
#[track_caller]
fn sync_errors(results: &[PeerSync]) -> (String, String) {
    assert_eq!(results.len(), 1, "one peer");
    let r = &results[0];
    let pull = match &r.pull {
        Some(Err(e)) => e.clone(),
        other => panic!("the pull should fail: {other:?}"),
    };
    let push = match &r.push {
        Some(Err(e)) => e.clone(),
        other => panic!("the push should fail: {other:?}"),
    };
    (pull, push)
}

// ---------------------------------------------------------------------------
// Federation over TLS and mTLS

#[tokio::test(flavor = "multi_thread")]
async fn two_nodes_pull_and_push_a_skill_over_tls() {
    let pki = Pki::new();
    let (a, b) = (TlsNode::start(pki.server(false)).await, TlsNode::start(pki.server(false)).await);
    assert!(a.url().starts_with("https://127.0.0.1:"), "{}", a.url());
    assert_eq!(a.node.transport(), "TLS");
    a.add_local("from-a").await;
    b.add_local("from-b").await;

    let ca = toml_path(&pki.path("ca.pem"));
    assert_synced(&b.sync(&peer(&a.url(), &format!("ca = \"{ca}\""))).await);
    assert!(b.skills().await.contains(&"from-a".to_owned()), "B pulled from-a over TLS");
    assert!(a.skills().await.contains(&"from-b".to_owned()), "B pushed from-b over TLS");

    // A client of our own that trusts the test CA talks to it; plain HTTP does not.
    let reply = pki.client("ca.pem", None).get(format!("{}/healthz", a.url())).send().await.expect("https");
    assert_eq!(reply.status(), StatusCode::OK);
    let plain = a.url().replacen("https://", "http://", 1);
    let http = reqwest::Client::builder().no_proxy().timeout(SOON).build().unwrap();
    assert!(http.get(format!("{plain}/healthz")).send().await.is_err(), "plain HTTP to a TLS port fails");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_nodes_pull_and_push_a_skill_over_mtls() {
    let pki = Pki::new();
    // A presents its node certificate to every peer (--tls-client-cert);
    // B presents none of its own, only the one its [[peer]] names.
    let a = TlsNode::start(pki.presenting("node", pki.server(true))).await;
    let b = TlsNode::start(pki.server(true)).await;
    assert_eq!(a.node.transport(), "mTLS (client certificates required)");
    a.add_local("from-a").await;
    b.add_local("from-b").await;

    let ca = toml_path(&pki.path("ca.pem"));
    let (cert, key) = (toml_path(&pki.path("client.pem")), toml_path(&pki.path("client.key")));
    let b_to_a = format!("ca = \"{ca}\"\nclient_cert = \"{cert}\"\nclient_key = \"{key}\"");
    assert_synced(&b.sync(&peer(&a.url(), &b_to_a)).await);
    assert_synced(&a.sync(&peer(&b.url(), &format!("ca = \"{ca}\""))).await);

    let (at_a, at_b) = (a.skills().await, b.skills().await);
    for name in ["from-a", "from-b"] {
        assert!(at_a.contains(&name.to_owned()) && at_b.contains(&name.to_owned()), "{at_a:?} {at_b:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mtls_node_refuses_a_client_without_a_certificate_and_stores_nothing() {
    let pki = Pki::new();
    let a = TlsNode::start(pki.server(true)).await;
    let b = TlsNode::start(pki.server(false)).await;
    b.add_local("uninvited").await;
    let sequence = a.node.library().sequence();

    let ca = toml_path(&pki.path("ca.pem"));
    let (pull, push) = sync_errors(&b.sync(&peer(&a.url(), &format!("ca = \"{ca}\""))).await);
    eprintln!("pull refused: {pull}");
    for error in [&pull, &push] {
        assert!(error.contains("TLS") && error.contains("client certificate"), "{error}");
    }
    assert!(b.skills().await == ["uninvited"], "B pulled nothing");
    assert_eq!(a.skills().await, Vec::<String>::new(), "A stored nothing");
    assert_eq!(a.node.library().sequence(), sequence, "A's store did not change");
    let quarantine = a.node.library().store().quarantine().expect("quarantine");
    assert!(quarantine.is_empty(), "nothing reached A's quarantine either: {quarantine:?}");

    // Our own client: refused without a certificate and with one from
    // another CA, answered with one from the test CA.
    let healthz = format!("{}/healthz", a.url());
    assert!(pki.client("ca.pem", None).get(&healthz).send().await.is_err(), "no certificate: refused");
    let stranger = pki.client("ca.pem", Some("stranger")).get(&healthz).send().await;
    assert!(stranger.is_err(), "a certificate from another CA: refused");
    let member =
        pki.client("ca.pem", Some("client")).get(&healthz).send().await.expect("a certificate it trusts");
    assert_eq!(member.status(), StatusCode::OK);
}

/// The confidence `node` holds `name` at.
async fn held_confidence(node: &TlsNode, name: &str) -> f64 {
    let library = node.node.library().clone();
    let skills = tokio::task::spawn_blocking(move || library.store().list_skills().expect("skills"))
        .await
        .expect("no panic");
    skills.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is held")).confidence
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mtls_client_certificate_proves_a_configured_peer_and_an_unknown_one_gets_the_default_trust() {
    let pki = Pki::new();
    let b = TlsNode::start(pki.server(true)).await;
    let (a, c) = (TlsNode::start(pki.server(false)).await, TlsNode::start(pki.server(false)).await);
    a.add_local("via-client-cert").await;
    c.add_local("via-node-cert").await;
    let cert_of = |stem: &str| {
        let chain =
            ecp_node::tls::load_certs("test", &pki.path(&format!("{stem}.pem"))).expect("a certificate");
        ecp_node::tls::ClientCert::of(&chain[0])
    };
    let (client, node) = (cert_of("client"), cert_of("node"));
    // B knows A by its certificate's fingerprint (as openssl prints it, colons and all).
    let colons = |fp: &[u8]| fp.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":");
    let b_peers = format!(
        "[federation]\ninterval = \"1h\"\n\n[[peer]]\nurl = \"{}\"\ntrust = 1.0\npull = false\ncert_fingerprint = \"{}\"\n",
        a.url(),
        colons(&client.sha256)
    );
    b.node.federator().apply(PeersConfig::parse(&b_peers, "test peers").expect("valid peers")).await;

    let ca = toml_path(&pki.path("ca.pem"));
    let presenting = |stem: &str| {
        let (cert, key) =
            (toml_path(&pki.path(&format!("{stem}.pem"))), toml_path(&pki.path(&format!("{stem}.key"))));
        format!("ca = \"{ca}\"\nclient_cert = \"{cert}\"\nclient_key = \"{key}\"")
    };
    assert_synced(&a.sync(&peer(&b.url(), &presenting("client"))).await);
    assert!((held_confidence(&b, "via-client-cert").await - 1.0).abs() < 1e-9, "A's trust, 1.0");
    // C's certificate is from the CA B trusts but proves no peer: the default trust, 0.6.
    assert_synced(&c.sync(&peer(&b.url(), &presenting("node"))).await);
    assert!((held_confidence(&b, "via-node-cert").await - 0.6).abs() < 1e-9, "an unknown certificate: 0.6");

    // Known by its certificate's public key instead: C's next skill gets its trust.
    let b_peers = format!(
        "{b_peers}\n[[peer]]\nurl = \"{}\"\ntrust = 0.7\npull = false\ncert_key_fingerprint = \"{}\"\n",
        c.url(),
        hex::encode(node.key_sha256.expect("the certificate parses"))
    );
    b.node.federator().apply(PeersConfig::parse(&b_peers, "test peers").expect("valid peers")).await;
    c.add_local("via-node-key").await;
    assert_synced(&c.sync(&peer(&b.url(), &presenting("node"))).await);
    assert!((held_confidence(&b, "via-node-key").await - 0.7).abs() < 1e-9, "C's trust, 0.7");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_refuses_a_server_whose_ca_it_does_not_trust() {
    let pki = Pki::new();
    let a = TlsNode::start(pki.server(false)).await;
    let b = TlsNode::start(TlsFiles::default()).await;
    a.add_local("unverified").await;

    // `ca` names another CA: only it is trusted.
    let other = toml_path(&pki.path("other-ca.pem"));
    let (pull, push) = sync_errors(&b.sync(&peer(&a.url(), &format!("ca = \"{other}\""))).await);
    eprintln!("pull refused: {pull}");
    for error in [&pull, &push] {
        assert!(error.contains("TLS") && error.contains("not issued by a CA we trust"), "{error}");
    }
    // No `ca`: the system's roots, which do not hold the test CA either.
    let (pull, _) = sync_errors(&b.sync(&peer(&a.url(), "")).await);
    assert!(pull.contains("not issued by a CA we trust"), "{pull}");
    assert_eq!(b.skills().await, Vec::<String>::new(), "B took nothing from an unverified server");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_stalls_the_handshake_is_disconnected() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let pki = Pki::new();
    let a =
        TlsNode::start_with(pki.server(false), |c| c.header_read_timeout = Duration::from_millis(300)).await;
    let mut stream = tokio::net::TcpStream::connect(a.node.local_addr()).await.unwrap();
    // The start of a TLS record (a handshake message), and then nothing.
    stream.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).await.unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the node kept a connection with an unfinished handshake open");
    let reply = pki.client("ca.pem", None).get(format!("{}/healthz", a.url())).send().await.expect("https");
    assert_eq!(reply.status(), StatusCode::OK, "the node still answers");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_discovered_tls_node_is_pulled_over_https_trusting_its_advertised_certificate_only() {
    use ecp_node::discovery::{DiscoveredPeer, DiscoveryEvent};
    let pki = Pki::new();
    let a = TlsNode::start(pki.server(false)).await;
    let c = TlsNode::start(TlsFiles {
        cert: Some(pki.path("node.pem")),
        key: Some(pki.path("node.key")),
        ..TlsFiles::default()
    })
    .await;
    a.add_local("over-https").await;
    c.add_local("from-an-impostor").await;
    let (events, receiver) = tokio::sync::mpsc::channel(8);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let b = Node::bind_with(Config::for_tests(dir.path()), Some(receiver)).await.expect("B starts");
    let a_sha256 = a.node.served_certificate().expect("TLS").leaf_sha256;
    assert_eq!(a_sha256, sha256_of(&pki, "server"));
    let found = |node: &TlsNode, tls| {
        let instance = node.node.library().store().instance_id().to_owned();
        DiscoveryEvent::Found(DiscoveredPeer { instance, url: node.url(), auth_required: false, tls })
    };

    // C advertises A's fingerprint: its own certificate does not match, nothing is pulled.
    events.send(found(&c, Some(a_sha256))).await.expect("B listens");
    let error = crate::cli::eventually("B's pull from C fails", SOON, || async {
        let state = b.library().store().peer_state(&c.url()).expect("peer state")?;
        (!state.last_error.is_empty()).then_some(state.last_error)
    })
    .await;
    assert!(
        error.contains(&hex::encode(&a_sha256[..8])),
        "the error names the expected certificate: {error}"
    );
    // A, with its own: pulled over HTTPS, though B trusts no CA of A's.
    events.send(found(&a, Some(a_sha256))).await.expect("B listens");
    crate::cli::eventually("A's skill arrives over HTTPS", SOON, || async {
        let held = b.library().store().list_skills().expect("skills");
        held.iter().any(|s| s.name == "over-https").then_some(())
    })
    .await;
    let held = b.library().store().list_skills().expect("skills");
    assert!(!held.iter().any(|s| s.name == "from-an-impostor"), "nothing of C: {held:?}");
    b.shutdown().await.expect("clean shutdown");
}

// ---------------------------------------------------------------------------
// Reload

/// The SHA-256 of the certificate `addr` serves, as a client trusting the
/// test CA sees it in a fresh handshake.
async fn served_sha256(pki: &Pki, addr: std::net::SocketAddr) -> [u8; 32] {
    use sha2::Digest;
    let mut roots = rustls::RootCertStore::empty();
    for cert in ecp_node::tls::load_certs("test", &pki.path("ca.pem")).expect("the CA") {
        roots.add(cert).expect("a trust anchor");
    }
    let config = rustls::ClientConfig::builder_with_provider(ecp_node::tls::provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").expect("a name");
    let tls = connector.connect(name, tcp).await.expect("a handshake");
    let leaf = &tls.get_ref().1.peer_certificates().expect("a certificate")[0];
    sha2::Sha256::digest(leaf.as_ref()).into()
}

fn sha256_of(pki: &Pki, stem: &str) -> [u8; 32] {
    let chain = ecp_node::tls::load_certs("test", &pki.path(&format!("{stem}.pem"))).expect("a certificate");
    ecp_node::tls::ClientCert::of(&chain[0]).sha256
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_replaced_on_disk_is_served_without_a_restart_and_a_bad_one_is_not() {
    let pki = Pki::new();
    let live = tempfile::tempdir().expect("a temporary folder");
    let (cert, key) = (live.path().join("live.pem"), live.path().join("live.key"));
    std::fs::copy(pki.path("server.pem"), &cert).expect("copy");
    std::fs::copy(pki.path("server.key"), &key).expect("copy");
    let files = TlsFiles { cert: Some(cert.clone()), key: Some(key.clone()), ..TlsFiles::default() };
    let a = TlsNode::start(files).await;
    let addr = a.node.local_addr();
    assert_eq!(served_sha256(&pki, addr).await, sha256_of(&pki, "server"));

    // Renewed: the key first, then the certificate, as a careless tool would.
    std::fs::copy(pki.path("node.key"), &key).expect("copy");
    std::fs::copy(pki.path("node.pem"), &cert).expect("copy");
    let renewed = sha256_of(&pki, "node");
    crate::cli::eventually("the renewed certificate is served", SOON, || async {
        (served_sha256(&pki, addr).await == renewed).then_some(())
    })
    .await;
    let served = a.node.served_certificate().expect("TLS");
    assert_eq!((served.leaf_sha256, served.problem), (renewed, None));

    // A certificate without its key: reported, and the renewed one still served.
    std::fs::copy(pki.path("server.pem"), &cert).expect("copy");
    let problem = crate::cli::eventually("the mismatch is reported", SOON, || async {
        a.node.served_certificate().and_then(|s| s.problem)
    })
    .await;
    assert!(problem.contains("--tls-key") && problem.contains("does not belong"), "{problem}");
    assert_eq!(served_sha256(&pki, addr).await, renewed, "the good certificate is still served");
    // Garbage: the same.
    std::fs::write(&cert, "not a certificate").expect("write");
    crate::cli::eventually("the garbage is reported", SOON, || async {
        a.node.served_certificate().and_then(|s| s.problem).filter(|p| p.contains("holds no certificate"))
    })
    .await;
    assert_eq!(served_sha256(&pki, addr).await, renewed);
    assert_eq!(a.node.served_certificate().expect("TLS").leaf_sha256, renewed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_renewed_before_the_watch_first_looks_is_still_served() {
    // The watch starts from the files as they were loaded, not as they are
    // when its task first runs: a renewal in between is a change.
    let pki = Pki::new();
    let live = tempfile::tempdir().expect("a temporary folder");
    let (cert, key) = (live.path().join("live.pem"), live.path().join("live.key"));
    std::fs::copy(pki.path("server.pem"), &cert).expect("copy");
    std::fs::copy(pki.path("server.key"), &key).expect("copy");
    let loaded =
        std::sync::Arc::new(ecp_node::tls::ServerCert::load(cert.clone(), key.clone()).expect("the pair"));
    let served = loaded.served();
    assert_eq!(served.borrow().leaf_sha256, sha256_of(&pki, "server"));
    std::fs::copy(pki.path("node.key"), &key).expect("copy");
    std::fs::copy(pki.path("node.pem"), &cert).expect("copy");
    let watching = tokio::spawn(std::sync::Arc::clone(&loaded).watch());
    let renewed = sha256_of(&pki, "node");
    crate::cli::eventually("the renewal is served", SOON, || async {
        (served.borrow().leaf_sha256 == renewed).then_some(())
    })
    .await;
    watching.abort();
}

// ---------------------------------------------------------------------------
// Bad files

#[tokio::test(flavor = "multi_thread")]
async fn bad_certificate_files_stop_the_node_with_the_setting_named() {
    let pki = Pki::new();
    let missing = pki.path("missing.pem");
    let garbled = pki.path("garbled.pem");
    std::fs::write(&garbled, "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
        .unwrap();
    let good = pki.server(true);
    let cases: Vec<(&str, TlsFiles, &[&str])> = vec![
        (
            "missing certificate",
            TlsFiles { cert: Some(missing.clone()), ..good.clone() },
            &["--tls-cert", "cannot read", "missing.pem"],
        ),
        (
            "a key as the certificate",
            TlsFiles { cert: Some(pki.path("server.key")), ..good.clone() },
            &["--tls-cert", "holds no certificate", "PEM"],
        ),
        (
            "garbled PEM",
            TlsFiles { cert: Some(garbled.clone()), ..good.clone() },
            &["--tls-cert", "not a valid PEM file"],
        ),
        (
            "a certificate as the key",
            TlsFiles { key: Some(pki.path("server.pem")), ..good.clone() },
            &["--tls-key", "holds no private key"],
        ),
        (
            "another certificate's key",
            TlsFiles { key: Some(pki.path("client.key")), ..good.clone() },
            &["--tls-key", "does not belong to the certificate"],
        ),
        (
            "missing client CA",
            TlsFiles { client_ca: Some(missing.clone()), ..good.clone() },
            &["--client-ca", "cannot read"],
        ),
        (
            "a key as the client CA",
            TlsFiles { client_ca: Some(pki.path("client.key")), ..good.clone() },
            &["--client-ca", "holds no certificate"],
        ),
        (
            "mismatched client certificate",
            TlsFiles {
                client_cert: Some(pki.path("client.pem")),
                client_key: Some(pki.path("node.key")),
                ..good.clone()
            },
            &["--tls-client-key", "does not belong"],
        ),
    ];
    let mut failures = Vec::new();
    for (case, tls, expected) in &cases {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::for_tests(dir.path());
        config.tls = tls.clone();
        match Node::bind(config).await {
            Ok(node) => {
                failures.push(format!("{case}: the node started"));
                let _ = node.shutdown().await;
            }
            Err(e) => {
                let message = e.to_string();
                if let Some(missing) = expected.iter().find(|part| !message.contains(*part)) {
                    failures.push(format!("{case}: {missing:?} not in {message:?}"));
                }
                if dir.path().join("data").exists() {
                    failures.push(format!("{case}: the store was created before the files were checked"));
                }
            }
        }
    }
    crate::util::assert_no_failures(&failures, cases.len());

    // Half a pair is a configuration error, whichever half.
    let half = Flags::default().with("tls-cert", pki.path("server.pem").to_string_lossy());
    let err = Config::resolve(&Sources { flags: half, ..Sources::default() }).unwrap_err().to_string();
    assert!(err.contains("--tls-key"), "{err}");
}

#[test]
fn peers_file_certificates_are_read_relative_to_it_and_errors_name_the_key() {
    let pki = Pki::new();
    let file = pki.path("peers.toml");
    let load = |text: &str| {
        std::fs::write(&file, text).unwrap();
        PeersConfig::load(&file).map_err(|e| e.to_string())
    };
    let https = "https://127.0.0.1:7327";
    let ok = load(&format!(
        "[[peer]]\nurl = \"{https}\"\nca = \"ca.pem\"\nclient_cert = \"client.pem\"\nclient_key = \"client.key\"\n"
    ))
    .expect("relative paths resolve against the peers file's folder");
    assert!(ok.peers[0].tls.ca.is_some() && ok.peers[0].tls.identity.is_some());

    let cases = [
        (format!("[[peer]]\nurl = \"{https}\"\nca = \"nowhere.pem\"\n"), "peer[0].ca: cannot read"),
        (format!("[[peer]]\nurl = \"{https}\"\nca = \"client.key\"\n"), "peer[0].ca:"),
        (format!("[[peer]]\nurl = \"{https}\"\nclient_cert = \"client.pem\"\n"), "peer[0].client_key"),
        (format!("[[peer]]\nurl = \"{https}\"\nclient_key = \"client.key\"\n"), "peer[0].client_cert"),
        (
            format!(
                "[[peer]]\nurl = \"{https}\"\nclient_cert = \"client.pem\"\nclient_key = \"server.key\"\n"
            ),
            "peer[0].client_key: the private key",
        ),
        (
            "[[peer]]\nurl = \"http://127.0.0.1:7327\"\nca = \"ca.pem\"\n".to_owned(),
            "peer[0].ca: applies to https",
        ),
    ];
    let mut failures = Vec::new();
    for (text, expected) in &cases {
        match load(text) {
            Ok(_) => failures.push(format!("{text:?}: accepted")),
            Err(e) if !e.contains(expected) => failures.push(format!("{text:?}: {expected:?} not in {e:?}")),
            Err(_) => {}
        }
    }
    crate::util::assert_no_failures(&failures, cases.len());
}

// ---------------------------------------------------------------------------
// The binary

#[test]
fn the_binary_serves_https_from_environment_variables_and_refuses_a_missing_certificate() {
    let pki = Pki::new();
    let folders = Folders::new();
    let data = folders.data();
    let bin = env!("CARGO_BIN_EXE_ecp-node");

    let refused = Command::new(bin)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(&data)
        .arg("--tls-cert")
        .arg(pki.path("missing.pem"))
        .arg("--tls-key")
        .arg(pki.path("server.key"))
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--tls-cert") && stderr.contains("missing.pem"), "{stderr}");

    let mut child = Command::new(bin)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(&data)
        .env_remove("ECP_CONFIG")
        .env("ECP_TLS_CERT", pki.path("server.pem"))
        .env("ECP_TLS_KEY", pki.path("server.key"))
        .env("ECP_CLIENT_CA", pki.path("ca.pem"))
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            let at = line.find("listening on https://")? + "listening on ".len();
            Some(line[at..].split_whitespace().next()?.to_owned())
        })
        .expect("the node logs its https URL");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answered = runtime.block_on(async {
        let healthz = format!("{url}/healthz");
        let without = pki.client("ca.pem", None).get(&healthz).send().await;
        let with = pki.client("ca.pem", Some("client")).get(&healthz).send().await;
        (without.is_err(), with.map(|r| r.status()).map_err(|e| e.to_string()))
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        answered,
        (true, Ok(StatusCode::OK)),
        "mTLS from ECP_CLIENT_CA: refused without a certificate"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pull_command_trusts_ca_and_presents_the_client_certificate() {
    let pki = Pki::new();
    let a = TlsNode::start(pki.server(true)).await;
    a.add_local("by-hand").await;
    let folders = Folders::new();
    let (url, ca, cert, key) = (
        a.url(),
        toml_path(&pki.path("ca.pem")),
        toml_path(&pki.path("client.pem")),
        toml_path(&pki.path("client.key")),
    );
    let refused = folders.run_async(&["pull", "--init", &url, "--ca", &ca]).await;
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("client certificate"), "{refused:?}");
    let pulled = folders
        .run_async(&[
            "pull",
            "--init",
            &url,
            "--ca",
            &ca,
            "--tls-client-cert",
            &cert,
            "--tls-client-key",
            &key,
        ])
        .await;
    assert_eq!(pulled.code, 0, "{pulled:?}");
    assert!(pulled.stdout.contains("new 1"), "{pulled:?}");
}

// ---------------------------------------------------------------------------
// Probes under mTLS

#[tokio::test(flavor = "multi_thread")]
async fn under_mtls_probes_reach_health_listen_in_plain_http_and_the_health_command_over_https() {
    let pki = Pki::new();
    let a = TlsNode::start_with(pki.server(true), |c| c.health_listen = Some("127.0.0.1:0".parse().unwrap()))
        .await;
    let health = a.node.health_addr().expect("a health address");
    let plain = reqwest::Client::builder().no_proxy().timeout(SOON).build().unwrap();
    let ready =
        plain.get(format!("http://{health}/readyz")).send().await.expect("plain HTTP on health_listen");
    assert_eq!(ready.status(), StatusCode::OK);
    assert!(
        plain.get(format!("{}/readyz", a.url())).send().await.is_err(),
        "the main address stays mTLS only"
    );

    // `ecp-node health` on the main address: it trusts the node's own
    // certificate and presents the node's client certificate.
    let folders = Folders::new();
    let addr = a.node.local_addr().to_string();
    let (cert, key, ca) = (pki.path("server.pem"), pki.path("server.key"), pki.path("ca.pem"));
    let (client_cert, client_key) = (pki.path("client.pem"), pki.path("client.key"));
    let serve_flags = [
        "health",
        "--listen",
        &addr,
        "--tls-cert",
        path(&cert),
        "--tls-key",
        path(&key),
        "--client-ca",
        path(&ca),
    ];
    let without = folders.run_async(&serve_flags).await;
    assert_eq!(without.code, 1, "no client certificate to present: {without:?}");
    let mut with: Vec<&str> = serve_flags.to_vec();
    with.extend(["--tls-client-cert", path(&client_cert), "--tls-client-key", path(&client_key)]);
    let probed = folders.run_async(&with).await;
    assert_eq!(probed.code, 0, "{probed:?}");
    assert_eq!(probed.json()["status"], "ready", "{probed:?}");
    // Another node's certificate is not this node's: the probe refuses it.
    let b = TlsNode::start(pki.presenting(
        "node",
        TlsFiles {
            cert: Some(pki.path("node.pem")),
            key: Some(pki.path("node.key")),
            client_ca: Some(pki.path("ca.pem")),
            ..TlsFiles::default()
        },
    ))
    .await;
    let other = b.node.local_addr().to_string();
    with[2] = &other;
    let refused = folders.run_async(&with).await;
    assert_eq!(refused.code, 1, "a server presenting another certificate: {refused:?}");
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
