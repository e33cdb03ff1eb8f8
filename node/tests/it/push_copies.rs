//! What a mesh's pushes leave out (#18 item 4, `SPEC.md` §10.2.11), with
//! real nodes on loopback: a node does not push a peer the version that
//! peer pushed to it, and pushes it what it did not send.
//!
//! Pushes are driven one at a time with [`federation::push`] on the node's
//! own federator context (whose memory the HTTP layer fills), so what each
//! push carries does not depend on timing.

use std::time::Duration;

use ecp_node::config::PeersConfig;
use ecp_node::federation::{self, Context, PeerSpec, PushReport};
use ecp_protocol::StandardPolicy;

use crate::federation::Fed;

/// A `[[peer]]` block for `node`, known by its instance, neither pulled
/// nor pushed by the federator (the test pushes by hand).
fn peer_block(node: &Fed) -> String {
    format!(
        "[[peer]]\nurl = \"{}\"\ninstance = \"{}\"\ntrust = 1.0\npull = false\npush = false\n",
        node.url(),
        node.instance()
    )
}

/// `[[peer]]` blocks as a peers file that runs nothing on its own.
fn peers_file(blocks: &[String]) -> String {
    format!("[federation]\ninterval = \"1h\"\n\n{}", blocks.join("\n"))
}

/// The first peer of `toml` as the federator would run it.
fn spec(toml: &str) -> PeerSpec {
    let file = PeersConfig::parse(toml, "test peers").expect("valid peers");
    PeerSpec::configured(&file, &file.peers[0])
}

/// One push from `ctx` to `to`, which must succeed.
async fn push(ctx: &Context, to: &Fed) -> PushReport {
    let spec = spec(&peers_file(&[peer_block(to)]));
    federation::push(ctx, &spec).await.unwrap_or_else(|e| panic!("push to {}: {e}", to.url()))
}

/// How many `POST /ecp/skills` `node` has answered 200 (its `/metrics`).
async fn posts_answered(node: &Fed) -> u64 {
    let text = node.http.get(format!("{}/metrics", node.url())).send().await.expect("GET /metrics");
    let text = text.text().await.expect("the metrics text");
    text.lines()
        .find(|l| {
            l.starts_with("ecp_http_requests_total{")
                && l.contains("route=\"/ecp/skills\"")
                && l.contains("method=\"POST\"")
                && l.contains("status=\"200\"")
        })
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_is_not_pushed_the_version_it_pushed_here_and_is_pushed_the_rest() {
    let (a, b, c) = (Fed::start().await, Fed::start().await, Fed::start().await);
    // B and C know each other by instance: B takes C's pushes as C's.
    b.peers(&peers_file(&[peer_block(&c)])).await;
    c.peers(&peers_file(&[peer_block(&b)])).await;
    a.add_local("both-have-it", 1.0).await;
    c.pull_from(&a.url(), "trust = 1.0").await.expect("C pulls A");
    a.add_local("only-b-has-it", 1.0).await;
    b.pull_from(&a.url(), "trust = 1.0").await.expect("B pulls A");
    assert!(c.skill("only-b-has-it").await.is_none(), "C pulled before A had it");

    // C pushes B what it holds: it arrives at B as unchanged.
    let c_ctx =
        Context::new(c.node().library().clone(), StandardPolicy::default(), true, Duration::from_secs(10));
    let from_c = push(&c_ctx, &b).await;
    assert_eq!((from_c.sent, from_c.result.unchanged), (1, 1), "{from_c:?}");

    // B pushes C only what C did not push to it.
    let before = posts_answered(&c).await;
    let to_c = push(&b.node().federator().context(), &c).await;
    assert_eq!(to_c.names, ["only-b-has-it"], "{to_c:?}");
    assert_eq!((to_c.already_held, to_c.result.new_skills, to_c.result.unchanged), (1, 1, 0), "{to_c:?}");
    assert_eq!(posts_answered(&c).await, before + 1, "one update, with one packet");
    assert_eq!(b.peer_state(&c.url()).await["ackedSeq"], to_c.acked, "what was left out is acknowledged");
}
