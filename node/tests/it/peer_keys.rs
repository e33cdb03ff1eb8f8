//! Peers known by their node key (#21 item 4, `SPEC.md` §13.11): a push
//! signed with a configured peer's node key gets that peer's trust, on an
//! open node and instead of a shared secret on a closed one; a push that
//! only claims the peer's instance gets the default trust; a tampered
//! node-key signature is refused with its code and stores nothing.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::{Config, PeersConfig};
use ecp_node::federation::{self, Context, PeerSpec};
use ecp_protocol::SkillPacket;
use ecp_protocol::node_auth;
use ecp_protocol::signed_auth::{self, RequestLine};
use serde_json::Value;

use crate::cli::get;

const SOON: Duration = Duration::from_secs(30);

async fn start(adjust: impl FnOnce(&mut Config)) -> (tempfile::TempDir, Node) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut config = Config::for_tests(dir.path());
    adjust(&mut config);
    let node = Node::bind(config).await.expect("the node starts");
    (dir, node)
}

/// B's peers file: A at `a_url`, trust 1.0, never pulled, with `extra` keys.
async fn configure(b: &Node, a_url: &str, extra: &str) {
    let toml = format!(
        "[federation]\ninterval = \"1h\"\n\n[[peer]]\nurl = \"{a_url}\"\ntrust = 1.0\npull = false\n{extra}\n"
    );
    b.federator().apply(PeersConfig::parse(&toml, "test peers").expect("valid peers")).await;
}

/// The confidence B holds `name` at.
async fn confidence(node: &Node, name: &str) -> f64 {
    get(node, &format!("/v1/skills/{name}")).await["skill"]["confidence"].as_f64().expect("a confidence")
}

/// A's served packet named `name`.
async fn served(a: &Node, name: &str) -> SkillPacket {
    let listing = get(a, "/ecp/skills").await;
    let packet = listing["skills"].as_array().expect("skills").iter().find(|p| p["skillName"] == name);
    serde_json::from_value(packet.expect("A serves it").clone()).expect("a packet")
}

/// An update of `packets` claiming to come from `peer`, as JSON bytes.
fn update(peer: &str, packets: Vec<SkillPacket>) -> Vec<u8> {
    let update = ecp_protocol::KnowledgeUpdate {
        id: format!("{peer}-1"),
        peer_instance: peer.to_owned(),
        skills: packets,
        ..Default::default()
    };
    serde_json::to_vec(&update).expect("JSON")
}

/// POSTs `body` to `node`'s `/ecp/skills` with `headers`: the status and the answer.
async fn post(node: &Node, body: Vec<u8>, headers: &[(&str, String)]) -> (u16, Value) {
    let mut request = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client")
        .post(format!("{}/ecp/skills", node.url()))
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.body(body).send().await.expect("POST /ecp/skills");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

/// A's node-key signature of a POST of `signed_body` to `node`.
fn node_signature(a: &Node, node: &Node, signed_body: &[u8]) -> (&'static str, String) {
    let authority = signed_auth::authority("127.0.0.1", node.local_addr().port());
    let line = RequestLine { method: "POST", path_and_query: "/ecp/skills" };
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    let now = ecp_node::keys::unix_now();
    let digest = signed_auth::body_digest(signed_body);
    let value =
        node_auth::sign_request(a.library().store().node_key(), &authority, &line, &digest, now, &nonce);
    (node_auth::HEADER, value)
}

/// A pushes its skills to B with its own federation code (which signs with
/// its node key), under no shared key.
async fn push_as(a: &Node, b: &Node) -> federation::PushReport {
    let ctx = Context::new(a.library().clone(), Default::default(), true, SOON);
    federation::push(&ctx, &PeerSpec::manual(&b.url(), None, 1.0)).await.expect("A's push is taken")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_push_proven_by_a_peers_node_key_gets_its_trust_and_a_claim_of_its_instance_does_not() {
    let ((_a_dir, a), (_b_dir, b)) = (start(|_| {}).await, start(|_| {}).await);
    crate::util::add_local_skill(a.library(), "claimed", 0.8).await;
    crate::util::add_local_skill(a.library(), "keyed", 0.8).await;
    let a_instance = a.library().store().instance_id().to_owned();
    let a_key = a.library().store().node_key();
    // Known by its key id; its instance configured too, which alone used to earn the trust.
    configure(&b, &a.url(), &format!("instance = \"{a_instance}\"\nkey = \"{}\"", a_key.key_id())).await;

    // Anyone can claim A's instance: the default trust, 0.6.
    let claim = update(&a_instance, vec![served(&a, "claimed").await]);
    let (status, answer) = post(&b, claim.clone(), &[]).await;
    assert_eq!((status, &answer["newSkills"]), (200, &Value::from(1)), "{answer}");
    assert!((confidence(&b, "claimed").await - 0.48).abs() < 1e-9, "0.8 × 0.6: a claim earns nothing");

    // A signature by A's key over another body: refused, nothing stored.
    let (name, signature) = node_signature(&a, &b, b"{}");
    let keyed = update(&a_instance, vec![served(&a, "keyed").await]);
    let (status, answer) = post(&b, keyed.clone(), &[(name, signature)]).await;
    assert_eq!((status, answer["code"].as_str()), (401, Some("bad_node_signature")), "{answer}");
    assert!(answer["error"].as_str().unwrap_or_default().contains("X-ECP-Node-Signature"), "{answer}");
    let held = get(&b, "/v1/skills").await.to_string();
    assert!(!held.contains("\"keyed\""), "nothing stored: {held}");

    // A's own push carries its node-key signature: A's trust, 1.0, whatever it claims.
    let report = push_as(&a, &b).await;
    assert_eq!((report.result.new_skills, report.result.updated_skills), (1, 1), "{report:?}");
    assert!((confidence(&b, "keyed").await - 0.8).abs() < 1e-9, "0.8 × 1.0");
    assert!((confidence(&b, "claimed").await - 0.8).abs() < 1e-9, "raised by the proven path");

    // A stranger's own key proves nothing: the claim rule, the default trust.
    let (_c_dir, c) = start(|_| {}).await;
    crate::util::add_local_skill(a.library(), "strange", 0.8).await;
    let strange = update(&a_instance, vec![served(&a, "strange").await]);
    let signed_by_c = node_signature(&c, &b, &strange);
    let (status, answer) = post(&b, strange, &[signed_by_c]).await;
    assert_eq!(status, 200, "{answer}");
    assert!((confidence(&b, "strange").await - 0.48).abs() < 1e-9);
    for node in [a, b, c] {
        node.shutdown().await.expect("clean shutdown");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_key_stands_in_for_the_shared_secret_of_a_closed_node() {
    let (_a_dir, a) = start(|_| {}).await;
    let (_b_dir, b) = start(|c| c.secret = Some("a shared secret for B only".into())).await;
    crate::util::add_local_skill(a.library(), "keyed", 0.8).await;
    let a_instance = a.library().store().instance_id().to_owned();

    // Not configured yet: A's push, with no secret, is refused.
    let ctx = Context::new(a.library().clone(), Default::default(), true, SOON);
    let refused = federation::push(&ctx, &PeerSpec::manual(&b.url(), None, 1.0)).await;
    assert!(refused.is_err(), "an unknown node key opens nothing: {refused:?}");

    // Known by its public key (64 hex digits): taken, at A's trust.
    configure(&b, &a.url(), &format!("key = \"{}\"", a.library().store().node_key().public_hex())).await;
    let report = push_as(&a, &b).await;
    assert_eq!(report.result.new_skills, 1, "{report:?}");
    let held = b.library().store().list_skills().expect("skills");
    let keyed = held.iter().find(|s| s.name == "keyed").expect("B holds it");
    assert!((keyed.confidence - 0.8).abs() < 1e-9, "0.8 × 1.0: {}", keyed.confidence);

    // Nothing else is let in: no signature at all.
    let (status, answer) = post(&b, update(&a_instance, Vec::new()), &[]).await;
    assert_eq!((status, answer["code"].as_str()), (403, Some("missing_signature")), "{answer}");
    // A malformed node-key signature is refused whatever the key.
    let (status, answer) =
        post(&b, update(&a_instance, Vec::new()), &[(node_auth::HEADER, "key=00".into())]).await;
    assert_eq!((status, answer["code"].as_str()), (401, Some("malformed_node_signature")), "{answer}");
    a.shutdown().await.expect("clean shutdown");
    b.shutdown().await.expect("clean shutdown");
}
