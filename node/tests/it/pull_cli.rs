//! `ecp-node pull` by hand: a pull that held skills back over the limits
//! installed what fit and exits 0 saying how many wait and for how long;
//! the limits come from the same flags and environment as `serve`'s (#16).
//! A one-off pull or push that fails leaves no peer behind, and a peer's
//! HTML error page is said as one line of text wherever it shows (#16 item 8).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::cli::update_from;
use super::logs::Logged;

/// A proxy's error page, as nginx writes it.
const BAD_GATEWAY_PAGE: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
    <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/// A reverse proxy on 127.0.0.1 in front of `node`, answering every request
/// with [`BAD_GATEWAY_PAGE`] while `failing` is set; its URL. It runs on a
/// thread of its own, so the test may block on the binary meanwhile.
fn proxy(node: String, failing: Arc<AtomicBool>) -> String {
    async fn forward(
        State((node, failing)): State<(String, Arc<AtomicBool>)>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        if failing.load(Ordering::SeqCst) {
            return (StatusCode::BAD_GATEWAY, [(header::CONTENT_TYPE, "text/html")], BAD_GATEWAY_PAGE)
                .into_response();
        }
        let client = reqwest::Client::builder().no_proxy().build().expect("a client");
        let mut request = client.request(method, format!("{node}{uri}")).body(body);
        for (name, value) in headers.iter().filter(|(name, _)| *name != header::HOST) {
            request = request.header(name, value);
        }
        let answer = request.send().await.expect("the node answers");
        let mut response = Response::builder().status(answer.status());
        for (name, value) in answer.headers() {
            response = response.header(name, value);
        }
        response.body(answer.bytes().await.expect("a body").into()).expect("a response")
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://{}", listener.local_addr().expect("bound"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            let app = axum::Router::new().fallback(forward).with_state((node, failing));
            axum::serve(listener, app).await
        })
    });
    url
}

/// Runs the binary on the data folder `data` (in `dir`), ECP_* cleared.
fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(args)
        .args(["--data", "d"])
        .current_dir(dir)
        .env_clear()
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The peers the store of `dir`'s data folder holds (`peers --json`).
fn stored_peers(dir: &std::path::Path) -> Vec<Value> {
    let (code, stdout, stderr) = run(dir, &["peers", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let answer: Value = serde_json::from_str(&stdout).expect("JSON");
    answer["peers"].as_array().expect("peers").clone()
}

#[test]
fn a_failed_one_off_pull_leaves_no_peer_and_a_peers_html_error_is_one_line_of_text_everywhere() {
    let a = Logged::start(&[], &[]);
    assert_eq!(a.push(&serde_json::to_vec(&update_from("busy", &[("one", 1.0)])).unwrap()), 200);
    let failing = Arc::new(AtomicBool::new(true));
    let peer = proxy(a.url.clone(), Arc::clone(&failing));
    let said = format!("HTTP 502 from {peer}/ecp/manifest: 502 Bad Gateway");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();

    // A first pull and a first push that fail: said on one line, nothing kept.
    let (code, stdout, stderr) = run(dir, &["pull", &peer, "--init"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains(&said) && !stderr.contains('<'), "{stderr}");
    assert_eq!(stored_peers(dir), Vec::<Value>::new(), "a failed one-off pull leaves no peer");
    let (code, stdout, stderr) = run(dir, &["push", &peer]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains(&said) && !stderr.contains('<'), "{stderr}");
    assert_eq!(stored_peers(dir), Vec::<Value>::new(), "a failed one-off push leaves no peer");

    // A one-off pull that succeeds is remembered, as a manual peer with its cursor.
    failing.store(false, Ordering::SeqCst);
    let (code, stdout, stderr) = run(dir, &["pull", &peer]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("new 1,"), "{stdout}");
    let peers = stored_peers(dir);
    assert_eq!(peers.len(), 1, "{peers:?}");
    assert_eq!((&peers[0]["url"], &peers[0]["kind"]), (&Value::from(peer.as_str()), &Value::from("manual")));
    assert!(peers[0]["cursor"].as_i64().expect("a cursor") > 0, "{peers:?}");

    // Its later failures are counted, the error kept as one line of text.
    failing.store(true, Ordering::SeqCst);
    let (code, _, stderr) = run(dir, &["pull", &peer]);
    assert_eq!(code, 2, "{stderr}");
    let peers = stored_peers(dir);
    assert_eq!(
        (&peers[0]["failures"], &peers[0]["lastError"]),
        (&Value::from(1), &Value::from(said.as_str()))
    );
    let (code, table, stderr) = run(dir, &["peers"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(table.contains(&said) && !table.contains('<'), "{table}");

    // A running node's log says it so too.
    let peers_file = dir.join("peers.toml");
    std::fs::write(&peers_file, format!("[[peer]]\nurl = \"{peer}\"\n")).unwrap();
    let b = Logged::start(&["--peers", peers_file.to_str().unwrap()], &[]);
    let lines = b.lines(1, |line| line.contains("HTTP 502 from"));
    assert!(lines[0].contains(&said), "{lines:?}");
    assert!(!b.stderr().contains("<center>") && !b.stderr().contains("<html"), "{}", b.stderr());
}

#[test]
fn a_pull_that_holds_skills_back_over_an_origin_limit_exits_0_saying_when_the_rest_comes() {
    let a = Logged::start(&[], &[]);
    let three =
        serde_json::to_vec(&update_from("busy", &[("one", 1.0), ("two", 1.0), ("three", 1.0)])).unwrap();
    assert_eq!(a.push(&three), 200);
    let tmp = tempfile::tempdir().unwrap();
    // The limit from the environment, as `serve` takes it.
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["pull", &a.url, "--trust", "1.0", "--init", "--data", "b"])
        .current_dir(tmp.path())
        .env_clear()
        .env("ECP_ORIGIN_LIMIT_HOUR", "2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("new 2,") && stdout.contains("held back 1, next round in "), "{stdout}");
    // And from the flag, as `serve` takes it (`sync` takes it too).
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["pull", &a.url, "--trust", "1.0", "--init", "--data", "c", "--origin-limit-hour", "1"])
        .current_dir(tmp.path())
        .env_clear()
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("new 1,") && stdout.contains("held back 2, next round in "), "{stdout}");
}
