//! Peers that try to steer federation elsewhere: a peer answering with a
//! redirect must not make this node contact the redirect's target, nor hand
//! it the request's signing headers (which it could replay at any node that
//! holds the same key).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::IntoResponse;
use ecp_node::Node;
use tokio::net::TcpListener;

use crate::cli::{Folders, skill_md, write_skill};

/// What the redirect's target saw.
#[derive(Default)]
struct Trap {
    requests: AtomicUsize,
    signed: AtomicUsize,
}

async fn trap(State(trap): State<Arc<Trap>>, headers: HeaderMap) -> StatusCode {
    trap.requests.fetch_add(1, Ordering::SeqCst);
    if headers.keys().any(|name| name.as_str().starts_with("x-ecp-")) {
        trap.signed.fetch_add(1, Ordering::SeqCst);
    }
    StatusCode::OK
}

async fn serve(app: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("bound"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A peer that answers every request with `status` towards the same path on `target`.
async fn redirecting_peer(status: StatusCode, target: String) -> String {
    let app = axum::Router::new().fallback(move |uri: Uri| {
        let location = format!("{target}{uri}");
        async move { (status, [(header::LOCATION, location)]).into_response() }
    });
    serve(app).await
}

#[tokio::test(flavor = "multi_thread")]
async fn redirects_from_a_peer_are_not_followed_and_no_credentials_reach_their_target() {
    let seen = Arc::new(Trap::default());
    let target = serve(axum::Router::new().fallback(trap).with_state(Arc::clone(&seen))).await;
    let f = Folders::new();
    let node = Node::bind(f.config()).await.expect("the node starts");
    // Something to push.
    let file = write_skill(f.tmp.path(), "to-push", &skill_md("to-push", ""));
    let added = f.run_async(&["skill", "add", file.to_str().expect("UTF-8 path")]).await;
    assert_eq!(added.code, 0, "{added:?}");

    for status in
        [StatusCode::MOVED_PERMANENTLY, StatusCode::TEMPORARY_REDIRECT, StatusCode::PERMANENT_REDIRECT]
    {
        let peer = redirecting_peer(status, target.clone()).await;
        // Pull and push, signed with ECP/1.2 and (legacy) X-ECP-HMAC.
        for args in [
            vec!["pull", &peer, "--secret", "mesh-secret"],
            vec!["pull", &peer, "--secret", "mesh-secret", "--legacy"],
            vec!["push", &peer, "--secret", "mesh-secret", "--legacy"],
        ] {
            let out = f.run_async(&args).await;
            assert_eq!(out.code, 2, "{args:?}: {out:?}");
            assert!(
                out.stderr.contains(&format!("answered {status}"))
                    && out.stderr.contains("do not follow redirects"),
                "{args:?}: {out:?}"
            );
        }
    }
    assert_eq!(seen.requests.load(Ordering::SeqCst), 0, "the redirect target was never contacted");
    assert_eq!(seen.signed.load(Ordering::SeqCst), 0);
    node.shutdown().await.expect("clean shutdown");
}
