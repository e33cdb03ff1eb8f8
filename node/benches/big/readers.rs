//! Readers of a big node: closed-loop keep-alive connections, each going
//! round the heavy reads a peer or an agent makes — the full listing plain
//! and gzipped, the incremental answer since the first change, pages — while
//! the node's memory is sampled.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{ACCEPT_ENCODING, HOST};
use hyper::{Request, StatusCode};

use crate::client::{Conn, REQUEST_LIMIT, connect, drain};

/// One kind of read.
#[derive(Clone, Copy)]
pub(crate) struct Read {
    pub(crate) label: &'static str,
    path: &'static str,
    gzip: bool,
}

/// What the readers go round, each starting at its own place.
pub(crate) const READS: [Read; 5] = [
    Read { label: "full listing", path: "/ecp/skills", gzip: false },
    Read { label: "full listing, gzip", path: "/ecp/skills", gzip: true },
    Read { label: "since=1 (streamed run)", path: "/ecp/skills?since=1", gzip: false },
    Read { label: "page of 500", path: "/ecp/skills?since=5000&limit=500", gzip: false },
    Read { label: "manifest", path: "/ecp/manifest", gzip: false },
];

/// Per kind of read: answers, failures, bytes, the slowest.
#[derive(Clone, Copy, Default)]
pub(crate) struct Tally {
    pub(crate) ok: u64,
    pub(crate) failed: u64,
    pub(crate) bytes: u64,
    pub(crate) slowest: Duration,
}

/// `connections` readers for `secs`; a tally per entry of [`READS`].
pub(crate) async fn read(addr: SocketAddr, connections: usize, secs: Duration) -> anyhow::Result<Vec<Tally>> {
    let end = Instant::now() + secs;
    let mut tasks = Vec::new();
    for i in 0..connections {
        let conn = connect(addr).await?;
        tasks.push(tokio::spawn(reader(conn, addr, i, end)));
    }
    let mut total = vec![Tally::default(); READS.len()];
    for task in tasks {
        for (sum, t) in total.iter_mut().zip(task.await?) {
            sum.ok += t.ok;
            sum.failed += t.failed;
            sum.bytes += t.bytes;
            sum.slowest = sum.slowest.max(t.slowest);
        }
    }
    Ok(total)
}

async fn reader(mut conn: Conn, addr: SocketAddr, first: usize, end: Instant) -> Vec<Tally> {
    let mut tally = vec![Tally::default(); READS.len()];
    let mut k = first;
    while Instant::now() < end {
        let i = k % READS.len();
        k += 1;
        let read = READS[i];
        let mut request = Request::get(read.path).header(HOST, addr.to_string());
        if read.gzip {
            request = request.header(ACCEPT_ENCODING, "gzip");
        }
        let request = request.body(Full::new(Bytes::new())).expect("a GET with valid headers");
        let sent = Instant::now();
        let exchange = async {
            conn.ready().await?;
            let response = conn.send_request(request).await?;
            let status = response.status();
            Ok::<_, hyper::Error>((status, drain(response.into_body()).await?))
        };
        match tokio::time::timeout(REQUEST_LIMIT, exchange).await {
            Ok(Ok((StatusCode::OK, bytes))) => {
                tally[i].ok += 1;
                tally[i].bytes += bytes;
                tally[i].slowest = tally[i].slowest.max(sent.elapsed());
            }
            _ => {
                tally[i].failed += 1;
                match connect(addr).await {
                    Ok(fresh) => conn = fresh,
                    Err(_) => break,
                }
            }
        }
    }
    tally
}
