//! The links of the mesh: one loopback TCP proxy per direction of every
//! edge, which a node's peers file names instead of its neighbour's own
//! port. Each counts the bytes and requests crossing it, and can be cut:
//! a partition. (The mesh integration test uses this file too.)
//!
//! This machine's kernel has no `netem` queueing discipline (`tc qdisc add
//! dev lo root netem` answers "Specified qdisc kind is unknown"), so loss
//! is made here: a cut link black-holes, as a link losing every packet
//! does. It keeps accepting connections and reading what the client sends,
//! but forwards nothing and answers nothing, so a request waits for its
//! timeout; connections open when it is cut stop in mid-flight the same
//! way. Healing closes the black-holed connections (the peer sees them
//! fail, as retransmissions over a long-dead path would) and forwards new
//! ones again.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// One direction of an edge: `from` reaches `to` through it.
pub(crate) struct Link {
    pub(crate) from: usize,
    pub(crate) to: usize,
    addr: SocketAddr,
    /// Where `to` listens, once known.
    target: Arc<Mutex<Option<SocketAddr>>>,
    counts: Arc<Counts>,
    cut: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

/// What crossed a link (or several).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Bytes both ways: HTTP heads and bodies, no TCP/IP headers.
    pub(crate) bytes: AtomicU64,
    /// `GET /ecp/manifest` requests: one per sync round.
    pub(crate) manifest_gets: AtomicU64,
    /// Every other request.
    pub(crate) other_requests: AtomicU64,
}

impl Counts {
    /// The three counts, then zero.
    pub(crate) fn take(&self) -> (u64, u64, u64) {
        let take = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        (take(&self.bytes), take(&self.manifest_gets), take(&self.other_requests))
    }
}

impl Link {
    /// Listens on a free loopback port; it forwards once [`Link::aim`]ed
    /// (until then, as to a dead node, connections close at once).
    pub(crate) async fn start(from: usize, to: usize) -> std::io::Result<Link> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        let target = Arc::new(Mutex::new(None));
        let (cut, watching) = watch::channel(false);
        let (counted, aimed) = (Arc::clone(&counts), Arc::clone(&target));
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let target = *aimed.lock().unwrap_or_else(|p| p.into_inner());
                tokio::spawn(carry(client, target, Arc::clone(&counted), watching.clone()));
            }
        });
        Ok(Link { from, to, addr, target, counts, cut, task })
    }

    /// Forwards to `target` (where `to` listens) from now on.
    pub(crate) fn aim(&self, target: SocketAddr) {
        assert!(target.ip().is_loopback(), "links forward to loopback only");
        *self.target.lock().unwrap_or_else(|p| p.into_inner()) = Some(target);
    }

    /// The URL `from` is given for `to`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Cuts (`true`) or heals (`false`) the link.
    pub(crate) fn set_cut(&self, cut: bool) {
        self.cut.send_replace(cut);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection: forwarded while the link is whole, black-holed from the
/// moment it is cut until it heals, then closed.
async fn carry(
    mut client: TcpStream,
    target: Option<SocketAddr>,
    counts: Arc<Counts>,
    mut cut: watch::Receiver<bool>,
) {
    if !*cut.borrow_and_update() {
        // A dead node refuses the connection: the client sees it closed, as it would.
        let Some(target) = target else { return };
        let Ok(mut server) = TcpStream::connect(target).await else { return };
        let (mut client_read, mut client_write) = client.split();
        let (mut server_read, mut server_write) = server.split();
        let forwarded = async {
            tokio::join!(
                pump(&mut client_read, &mut server_write, &counts, true),
                pump(&mut server_read, &mut client_write, &counts, false)
            )
        };
        tokio::select! {
            _ = forwarded => return,
            _ = cut.wait_for(|&c| c) => {}
        }
    }
    let mut sink = vec![0u8; 16 * 1024];
    tokio::select! {
        _ = async { while matches!(client.read(&mut sink).await, Ok(n) if n > 0) {} } => {}
        _ = cut.wait_for(|&c| !c) => {}
    }
}

/// Copies `from` to `to` until either ends, counting; `upstream` (client to
/// node) is also scanned for request lines.
async fn pump(
    from: &mut (impl AsyncRead + Unpin),
    to: &mut (impl AsyncWrite + Unpin),
    counts: &Counts,
    upstream: bool,
) {
    let mut buf = vec![0u8; 16 * 1024];
    // The previous read's last bytes, so a request line split across reads is still seen.
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        counts.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if upstream {
            let mut window = std::mem::take(&mut tail);
            let carried = window.len();
            window.extend_from_slice(&buf[..n]);
            count_requests(&window, carried, counts);
            tail = window[window.len().saturating_sub(24)..].to_vec();
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Counts the request lines of `window` that end after `carried` (the part
/// an earlier call already scanned).
fn count_requests(window: &[u8], carried: usize, counts: &Counts) {
    for i in 0..window.len() {
        if i > 0 && window[i - 1] != b'\n' {
            continue;
        }
        let rest = &window[i..];
        let patterns: [(&[u8], &AtomicU64); 3] = [
            (b"GET /ecp/manifest ", &counts.manifest_gets),
            (b"GET /", &counts.other_requests),
            (b"POST /", &counts.other_requests),
        ];
        if let Some((method, counter)) = patterns.into_iter().find(|(m, _)| rest.starts_with(m))
            && i + method.len() > carried
        {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}
