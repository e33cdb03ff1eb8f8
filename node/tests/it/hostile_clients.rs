//! Clients that try to exhaust the node's connections or memory: a request
//! head is bounded in bytes, one address holds at most its share of
//! connections, and a client from another address is still served while
//! one address floods the node with connections that never finish; the
//! request bodies held at once are bounded across requests.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ecp_node::serve::MAX_HEADER_BYTES;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::util::{TestNode, raw_exchange};

/// A request head of exactly `size` bytes: a GET of the manifest with a padding header.
fn head_of(size: usize) -> Vec<u8> {
    let start = "GET /ecp/manifest HTTP/1.1\r\nHost: x\r\nX-Pad: ";
    let end = "\r\n\r\n";
    let pad = size - start.len() - end.len();
    format!("{start}{}{end}", "a".repeat(pad)).into_bytes()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_head_is_bounded_in_bytes() {
    let node = TestNode::start().await;
    let at_limit = raw_exchange(node.addr(), &head_of(MAX_HEADER_BYTES), Vec::new()).await;
    assert_eq!(at_limit.status, 200, "a head of exactly {MAX_HEADER_BYTES} bytes is read");
    let past = raw_exchange(node.addr(), &head_of(MAX_HEADER_BYTES + 1), Vec::new()).await;
    assert_eq!(past.status, 431, "one byte more is refused before it is buffered further");
    node.assert_healthy().await;
}

/// A connection from `source` (a loopback address) that sends half a request head and stalls.
async fn stalled_from(source: IpAddr, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.bind(SocketAddr::new(source, 0)).expect("bind a loopback source address");
    let mut stream = socket.connect(to).await.expect("connect");
    stream.write_all(b"GET /ecp/manifest HTTP/1.1\r\nHost: x\r\n").await.expect("half a head");
    stream
}

/// Whether the node closed `stream` (end of stream or a reset) within `within`.
async fn closed_by_node(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    matches!(tokio::time::timeout(within, stream.read(&mut buf)).await, Ok(Ok(0) | Err(_)))
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_holds_its_share_and_others_are_still_served() {
    let share = 4;
    // Stalled heads are not what closes these connections: only the share does.
    let node = TestNode::start_with(|c| {
        c.connections.per_address = share;
        c.header_read_timeout = Duration::from_secs(300);
    })
    .await;
    let flooder: IpAddr = "127.0.0.2".parse().unwrap();
    let mut held = Vec::new();
    for _ in 0..share {
        held.push(stalled_from(flooder, node.addr()).await);
    }
    // The node has accepted each of them once the next one gets through; the
    // last of the share stays open.
    let within_share = closed_by_node(held.last_mut().unwrap(), Duration::from_secs(1)).await;
    assert!(!within_share, "the {share}th connection is within the share");
    let mut over = stalled_from(flooder, node.addr()).await;
    // At once, but a loaded machine may take its time to get there.
    let closed = closed_by_node(&mut over, Duration::from_secs(30)).await;
    assert!(closed, "connection {} of one address is closed", share + 1);
    // A client from another address is served while the share is held.
    node.assert_healthy().await;
    drop(held);
}

/// A push from `source` that declares `length` bytes, asks to continue, and
/// sends nothing once the node said it reads the body — which it does only
/// after reserving room for it.
pub(super) async fn body_reserved_from(source: IpAddr, to: SocketAddr, length: usize) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.bind(SocketAddr::new(source, 0)).expect("bind a loopback source address");
    let mut stream = socket.connect(to).await.expect("connect");
    let head = format!(
        "POST /ecp/skills HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.expect("the head");
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
        .await
        .expect("an answer to Expect in time")
        .expect("read");
    assert!(
        buf[..n].starts_with(b"HTTP/1.1 100"),
        "the node reads the body: {:?}",
        String::from_utf8_lossy(&buf[..n])
    );
    stream
}

/// An update with no packets: a push that changes nothing.
const NOTHING: &[u8] = br#"{"peerInstance":"tester","skills":[]}"#;

#[tokio::test(flavor = "multi_thread")]
async fn request_bodies_held_at_once_are_bounded_across_requests() {
    let node = TestNode::start_with(|c| {
        c.max_body_bytes = 1024;
        c.body_bytes_in_flight = 2048;
    })
    .await;
    let before = node.snapshot().await;
    let first = body_reserved_from("127.0.0.2".parse().unwrap(), node.addr(), 1024).await;
    let empty = node.push(NOTHING).await;
    assert_eq!(empty.status, 200, "1 KiB held of 2: a push still fits: {}", empty.text());
    let second = body_reserved_from("127.0.0.3".parse().unwrap(), node.addr(), 1024).await;
    // Exactly the budget is held; one byte more waits, then is refused.
    let refused = node.push(NOTHING).await;
    let error = refused.assert_error(503, "body_budget_exhausted");
    assert!(error["error"].as_str().unwrap().contains("2 KiB"), "{error}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    drop(first);
    let mut again = node.push(NOTHING).await;
    for _ in 0..50 {
        // The node notices the closed connection on its next read.
        if again.status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        again = node.push(NOTHING).await;
    }
    assert_eq!(again.status, 200, "a closed upload gives its room back: {}", again.text());
    before.assert_unchanged(&node.snapshot().await, "pushes of nothing, and refused ones");
    drop(second);
}
