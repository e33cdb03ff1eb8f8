//! Raw TCP connections to the node from a chosen loopback address, and the
//! request heads hostile clients send: one that grows without end, one that
//! stops short of its end.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to `to` from the loopback address `from`.
pub(crate) async fn connect_from(from: IpAddr, to: SocketAddr) -> io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(to).await
}

/// The `i`-th address of an attacker group: `127.0.<group>.<1 + i>`, so that
/// every group and every address is a client of its own to the node.
pub(crate) fn attacker(group: u8, i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, group, 1 + (i % 250) as u8))
}

/// The start of a request head, every header line complete, the blank line
/// that ends it never sent.
pub(crate) fn unfinished_head(to: SocketAddr) -> Vec<u8> {
    format!("GET /ecp/manifest HTTP/1.1\r\nHost: {to}\r\n").into_bytes()
}

/// One more header line of exactly 1 KiB (`X-Pad: aaa…\r\n`; a name may repeat).
pub(crate) fn padding_line() -> Vec<u8> {
    let mut line = b"X-Pad: ".to_vec();
    line.resize(1022, b'a');
    line.extend_from_slice(b"\r\n");
    line
}

/// What the node did with a hostile connection, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ending {
    /// It answered with this status (431, 408, …) and then closed.
    Answered(u16),
    /// It closed the connection without an answer.
    Closed,
    /// It reset the connection.
    Reset,
    /// Nothing yet: the connection is still open.
    Open,
}

/// Waits up to `wait` for the node's answer or close on `stream`.
pub(crate) async fn ending(stream: &mut TcpStream, wait: Duration) -> Ending {
    let mut buf = [0u8; 256];
    match tokio::time::timeout(wait, stream.read(&mut buf)).await {
        Err(_) => Ending::Open,
        Ok(Ok(0)) => Ending::Closed,
        Ok(Ok(n)) => {
            let text = String::from_utf8_lossy(&buf[..n]);
            let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok());
            status.map_or(Ending::Closed, Ending::Answered)
        }
        Ok(Err(_)) => Ending::Reset,
    }
}
