//! `stalled` (#12 item 6): 1,030 connections that never finish their request
//! head, reopened as soon as the node closes one, while a legitimate client
//! sends 50 requests over 25 s, each on a new connection. Before the fix 46
//! of the 50 failed and the node logged 787 WARN lines. Run twice: every
//! stalled connection from one address (the per-address cap), then spread
//! over 21 addresses (the global cap and its fair eviction).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt as _;

use crate::client::{connect, fetch};
use crate::node::NodeProcess;
use crate::raw::{Ending, attacker, connect_from, ending, unfinished_head};
use crate::sampler::memory_kib;
use crate::stats::Latencies;
use crate::{Settings, mb};

/// How long an attacker waits before reopening a connection the node closed
/// or refused: it keeps the pressure on without spinning a core on it.
const REOPEN_AFTER: Duration = Duration::from_millis(200);

pub(crate) async fn run(settings: &Settings) -> anyhow::Result<()> {
    let (conns, requests, span) =
        if settings.smoke { (60, 5, Duration::from_secs(2)) } else { (1_030, 50, Duration::from_secs(25)) };
    for addresses in [1, 21] {
        scenario(settings, conns, addresses, requests, span).await?;
    }
    Ok(())
}

/// What the attackers did.
#[derive(Default)]
struct Pressure {
    /// Connections the node accepted and the head was written to.
    opened: AtomicU64,
    /// Connections the node closed (or refused) under them.
    closed: AtomicU64,
}

async fn scenario(
    settings: &Settings,
    conns: usize,
    addresses: usize,
    requests: usize,
    span: Duration,
) -> anyhow::Result<()> {
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), &[], &[]).await?;
    println!(
        "\n{conns} stalled connections from {addresses} address(es), {requests} legitimate requests over {} s",
        span.as_secs()
    );
    let pressure = Arc::new(Pressure::default());
    let ramp = Duration::from_secs(if settings.smoke { 1 } else { 3 });
    let until = Instant::now() + ramp + span + Duration::from_secs(1);
    let attackers: Vec<_> = (0..conns)
        .map(|i| tokio::spawn(stall(node.addr, attacker(2, i % addresses), until, pressure.clone())))
        .collect();
    tokio::time::sleep(ramp).await;
    let opened_at_start = pressure.opened.load(Ordering::Relaxed);
    let every = span / requests as u32;
    let legit: Vec<_> = (0..requests)
        .map(|i| {
            let addr = node.addr;
            tokio::spawn(async move {
                tokio::time::sleep(every * i as u32).await;
                let sent = Instant::now();
                let answer = async {
                    let mut conn = connect(addr).await?;
                    fetch(&mut conn, addr, "/ecp/manifest", None).await
                };
                let outcome = tokio::time::timeout(Duration::from_secs(10), answer).await;
                let ok = matches!(outcome, Ok(Ok((status, _, _))) if status.is_success());
                (ok, sent.elapsed())
            })
        })
        .collect();
    let mut latencies = Latencies::default();
    let mut failed = 0;
    for request in legit {
        let (ok, took) = request.await?;
        latencies.record(took);
        failed += usize::from(!ok);
    }
    for attacker in attackers {
        attacker.await?;
    }
    let log = std::fs::read_to_string(&node.log).unwrap_or_default();
    let warn_lines = log.lines().filter(|l| l.contains("WARN")).count();
    println!(
        "legitimate requests failed: {failed} of {requests} (goal 0); latency p50 {:.1} ms, max {:.1} ms",
        latencies.quantile_ms(0.5),
        latencies.quantile_ms(1.0)
    );
    println!(
        "attackers: {opened_at_start} connections opened in the {} s ramp, {} opened and {} closed or refused \
         in all",
        ramp.as_secs(),
        pressure.opened.load(Ordering::Relaxed),
        pressure.closed.load(Ordering::Relaxed)
    );
    println!(
        "node log: {} lines, {warn_lines} of them WARN; node VmHWM {:.1} MB",
        log.lines().count(),
        mb(memory_kib(node.pid()).1)
    );
    Ok(())
}

/// One attacker slot: a connection with an unfinished head, reopened after
/// [`REOPEN_AFTER`] whenever the node closes or refuses it, until `until`.
async fn stall(to: SocketAddr, from: IpAddr, until: Instant, pressure: Arc<Pressure>) {
    while Instant::now() < until {
        if let Ok(mut stream) = connect_from(from, to).await
            && stream.write_all(&unfinished_head(to)).await.is_ok()
        {
            pressure.opened.fetch_add(1, Ordering::Relaxed);
            if ending(&mut stream, until.saturating_duration_since(Instant::now())).await == Ending::Open {
                return;
            }
        }
        pressure.closed.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(REOPEN_AFTER).await;
    }
}
