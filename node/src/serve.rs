//! The accept loop: HTTP/1.1 connections served by the router, with the
//! limits that must sit below HTTP handlers.
//!
//! `axum::serve` gives hyper no timer, and without one hyper cannot enforce
//! a header read timeout: a client sending headers one byte a minute would
//! hold its connection for ever. So this loop builds each connection itself:
//! a header read timeout, a bound on the bytes a connection may buffer while
//! its headers arrive ([`MAX_HEADER_BYTES`], so 1,024 connections hold at
//! most 32 MiB of partial headers, not hyper's default of 400 KiB each),
//! admission by [`Connections`] (a total cap and a share per address; excess
//! connections are closed at once rather than queued), and a graceful
//! shutdown that lets requests in flight finish for a while.
//!
//! With TLS, each connection's handshake runs in the connection's own task
//! (a slow client never holds up the accept loop), under the same deadline
//! as the headers: a client that stalls the handshake is dropped like one
//! that stalls its headers. The connection's permit is held from accept to
//! close, handshake included. The certificate a client presented (mTLS) is
//! put on each of its requests ([`ClientCert`]), for authentication.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::connections::{ConnectionLimits, Connections};
use crate::http::LocalAddr;
use crate::metrics::Metrics;
use crate::tls::ClientCert;

/// Most bytes a connection buffers while reading a request's headers; a
/// request whose headers do not fit is answered 431. ECP requests need a few
/// hundred bytes of headers; browsers and proxies stay under 16 KiB.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;
/// How long requests in flight may run after shutdown begins.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Waits for `signal`, or for the `server` task to end by itself first:
/// then its result (a task that panicked or was aborted ended fine), while
/// `None` says the signal came and the caller shuts down. What a node's
/// and a hub replica's `run_until` share.
pub async fn until_signal(
    server: &mut tokio::task::JoinHandle<std::io::Result<()>>,
    signal: impl std::future::Future<Output = ()>,
) -> Option<std::io::Result<()>> {
    tokio::select! {
        () = signal => None,
        result = server => Some(result.unwrap_or(Ok(()))),
    }
}

/// Serves `router` on `listener` until `shutdown` completes; a client has
/// `header_read_timeout` to send each request's headers (and, with `tls`,
/// as long again to complete the TLS handshake); connections are admitted
/// under `limits`, each refusal counted in `metrics`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
    tls: Option<TlsAcceptor>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let connections = Connections::new(limits);
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // A refused connection is closed at once (the stream dropped); the
        // table logs refusals as a summary.
        let Ok(mut ticket) = connections.admit(remote.ip()) else {
            metrics.connection_refused();
            continue;
        };
        let _ = stream.set_nodelay(true);
        // The address the client reached: what it signed ECP/1.2 requests for.
        let Ok(local) = stream.local_addr() else { continue };
        let (router, watcher, tls) = (router.clone(), graceful.watcher(), tls.clone());
        tokio::spawn(async move {
            let served = async {
                let Some(acceptor) = tls else {
                    return connection(stream, (remote, local, None), router, header_read_timeout, watcher)
                        .await;
                };
                match tokio::time::timeout(header_read_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        // mTLS: the client's certificate may prove a configured peer.
                        let cert = stream
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|c| c.first())
                            .map(ClientCert::of);
                        connection(stream, (remote, local, cert), router, header_read_timeout, watcher).await
                    }
                    // Scanners, plain-HTTP clients, untrusted or missing client certificates.
                    Ok(Err(e)) => tracing::debug!(%remote, error = %e, "TLS handshake failed"),
                    Err(_) => {
                        tracing::debug!(%remote, "TLS handshake not completed in time; connection closed")
                    }
                }
            };
            tokio::select! {
                () = served => {}
                // Dropping the connection closes it; its slot went to another address.
                Ok(()) = &mut ticket.evicted => tracing::debug!(%remote, "connection closed to make room for another address"),
            }
            drop(ticket);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!("shutdown grace period over; closing connections"),
    }
    Ok(())
}

/// Serves one connection (plain or after the TLS handshake) until it closes
/// or, after shutdown began, its request in flight is answered.
async fn connection<I>(
    io: I,
    (remote, local, cert): (SocketAddr, SocketAddr, Option<ClientCert>),
    router: Router,
    header_read_timeout: Duration,
    watcher: Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(remote));
        request.extensions_mut().insert(LocalAddr(local));
        if let Some(cert) = cert {
            request.extensions_mut().insert(cert);
        }
        let router = router.clone();
        async move { Ok::<_, Infallible>(router.oneshot(request).await.unwrap_or_else(|e| match e {})) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        // The exact bound on a request head, and the read buffer no larger:
        // without the first a head arriving in one read could pass the second.
        .max_header_size(MAX_HEADER_BYTES)
        .max_buf_size(MAX_HEADER_BYTES)
        .serve_connection(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(connection).await {
        tracing::debug!(%remote, error = %e, "connection closed with an error");
    }
}
