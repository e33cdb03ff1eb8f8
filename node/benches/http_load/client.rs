//! The load client's HTTP side: keep-alive HTTP/1.1 connections to the
//! node (hyper, without a pool), GETs with an optional `If-None-Match`, and
//! bodies read whole or only counted.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ETAG, HOST, IF_NONE_MATCH};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;

/// The longest any one request may take before the bench gives up on it.
pub(crate) const REQUEST_LIMIT: Duration = Duration::from_secs(60);

/// One keep-alive HTTP/1.1 connection to the node.
pub(crate) type Conn = SendRequest<Full<Bytes>>;

pub(crate) async fn connect(addr: SocketAddr) -> anyhow::Result<Conn> {
    handshake(tokio::net::TcpStream::connect(addr).await?).await
}

/// An HTTP/1.1 connection over `stream`, driven in its own task.
pub(crate) async fn handshake(stream: tokio::net::TcpStream) -> anyhow::Result<Conn> {
    stream.set_nodelay(true)?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(send)
}

/// A GET of the node's local `/v1/` API, with its API token.
#[allow(dead_code)] // The hostile bench's; http_load reads no `/v1/`.
pub(crate) fn get_v1(addr: SocketAddr, path: &str, token: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header(HOST, addr.to_string())
        .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::new(Bytes::new()))
        .expect("a GET with valid headers")
}

pub(crate) fn get(addr: SocketAddr, path: &str, if_none_match: Option<&str>) -> Request<Full<Bytes>> {
    let mut builder = Request::get(path).header(HOST, addr.to_string());
    if let Some(tag) = if_none_match {
        builder = builder.header(IF_NONE_MATCH, tag);
    }
    builder.body(Full::new(Bytes::new())).expect("a GET with valid headers")
}

/// One GET whose whole answer is kept: status, ETag and body.
pub(crate) async fn fetch(
    conn: &mut Conn,
    addr: SocketAddr,
    path: &str,
    if_none_match: Option<&str>,
) -> anyhow::Result<(StatusCode, Option<String>, Bytes)> {
    let exchange = async {
        conn.ready().await?;
        let response = conn.send_request(get(addr, path, if_none_match)).await?;
        let status = response.status();
        let etag = response.headers().get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        Ok::<_, hyper::Error>((status, etag, body))
    };
    let limit = tokio::time::timeout(REQUEST_LIMIT, exchange).await;
    Ok(limit.with_context(|| format!("GET {path}: no answer within {} s", REQUEST_LIMIT.as_secs()))??)
}

/// Reads a body to its end without keeping it; its length in bytes.
pub(crate) async fn drain(mut body: Incoming) -> Result<u64, hyper::Error> {
    let mut bytes = 0;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            bytes += data.len() as u64;
        }
    }
    Ok(bytes)
}
