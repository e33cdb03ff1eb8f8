//! A TCP proxy on 127.0.0.1 that counts the bytes crossing it both ways:
//! put between two nodes, it measures what a pull or a push moves on the
//! wire (HTTP heads and bodies, no TCP/IP headers). Used by the tests and,
//! through `#[path]`, by the `bundle_pull` bench.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A proxy to one target; it stops accepting when dropped.
pub(crate) struct CountingProxy {
    addr: SocketAddr,
    bytes: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl CountingProxy {
    /// Listens on an ephemeral loopback port and forwards every connection to `target`.
    pub(crate) async fn start(target: SocketAddr) -> CountingProxy {
        assert!(target.ip().is_loopback(), "the proxy forwards to loopback only");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("the proxy listens");
        let addr = listener.local_addr().expect("its address");
        let bytes = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&bytes);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(target).await else { return };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    tokio::join!(
                        pump(client_read, server_write, Arc::clone(&counted)),
                        pump(server_read, client_write, counted)
                    );
                });
            }
        });
        CountingProxy { addr, bytes, task }
    }

    /// The URL a peer is given to reach the target through the proxy.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Bytes that crossed it, both ways, since the start or the last [`CountingProxy::take`].
    pub(crate) fn take(&self) -> u64 {
        self.bytes.swap(0, Ordering::SeqCst)
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies `from` to `to`, counting, until either side closes.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    counted: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Counted before it is forwarded: once the receiver has read the
        // last byte of an answer, the count includes it.
        counted.fetch_add(n as u64, Ordering::SeqCst);
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
