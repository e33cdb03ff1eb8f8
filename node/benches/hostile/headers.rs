//! `headers` (#12 item 3): 1,000 connections, from 20 loopback addresses
//! (50 each, under the per-address cap), each sending 390 KiB of a request
//! head that never ends, then holding the connection open. Before the fix
//! the node buffered all of it (420 MB); now a head is cut at 32 KiB with
//! 431. It prints the node's peak RSS, what each connection saw, and
//! whether a legitimate request meanwhile was answered.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt as _;

use crate::client::{connect, fetch};
use crate::node::NodeProcess;
use crate::raw::{Ending, attacker, connect_from, ending, padding_line, unfinished_head};
use crate::sampler::{RssSampler, memory_kib};
use crate::{Settings, mb};

pub(crate) async fn run(settings: &Settings) -> anyhow::Result<()> {
    let (conns, kib, addresses, hold) = if settings.smoke { (40, 64, 2, 2) } else { (1_000, 390, 20, 20) };
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), &[], &[]).await?;
    let idle_kib = memory_kib(node.pid()).0;
    println!(
        "{conns} connections from {addresses} addresses, each sending {kib} KiB of headers without an end, \
         held {hold} s; node idle at {:.1} MB",
        mb(idle_kib)
    );
    let sampler = RssSampler::start(node.pid());
    let started = Instant::now();
    let hold_until = started + Duration::from_secs(hold);
    let line = Arc::new(padding_line());
    let tasks: Vec<_> = (0..conns)
        .map(|i| tokio::spawn(one(node.addr, attacker(1, i % addresses), kib, line.clone(), hold_until)))
        .collect();
    // A legitimate client, while every hostile connection is there.
    tokio::time::sleep(Duration::from_secs(hold) / 2).await;
    let legit_started = Instant::now();
    let legit = match connect(node.addr).await {
        Ok(mut conn) => fetch(&mut conn, node.addr, "/ecp/manifest", None)
            .await
            .map(|(status, _, _)| status.to_string())
            .unwrap_or_else(|e| format!("failed: {e}")),
        Err(e) => format!("could not connect: {e}"),
    };
    let legit_ms = legit_started.elapsed().as_secs_f64() * 1e3;
    let (mut written, mut endings, mut refused) = (0u64, BTreeMap::new(), 0);
    for task in tasks {
        match task.await? {
            Some((bytes, end)) => {
                written += bytes;
                *endings.entry(end).or_insert(0) += 1;
            }
            None => refused += 1,
        }
    }
    let sampled_kib = sampler.finish();
    let (rss_kib, peak_kib) = memory_kib(node.pid());
    println!(
        "written by the clients: {:.1} MB in {:.1} s; connections refused at connect: {refused}",
        written as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    println!("how the connections ended (after up to {hold} s): {endings:?}");
    println!("a legitimate GET /ecp/manifest meanwhile: {legit} in {legit_ms:.0} ms");
    println!(
        "node memory: idle {:.1} MB, highest sampled VmRSS {:.1} MB, VmHWM (peak) {:.1} MB, VmRSS after {:.1} MB",
        mb(idle_kib),
        mb(sampled_kib),
        mb(peak_kib),
        mb(rss_kib)
    );
    Ok(())
}

/// One hostile connection: the head and `kib` KiB of header lines (as far
/// as the node takes them), then held open until `hold_until`. `None` when
/// it could not connect; else the bytes written and how it ended.
async fn one(
    to: SocketAddr,
    from: IpAddr,
    kib: usize,
    line: Arc<Vec<u8>>,
    hold_until: Instant,
) -> Option<(u64, Ending)> {
    let mut stream = connect_from(from, to).await.ok()?;
    let mut written = 0u64;
    let send = async {
        stream.write_all(&unfinished_head(to)).await?;
        for _ in 0..kib {
            stream.write_all(&line).await?;
            written += line.len() as u64;
        }
        Ok::<_, std::io::Error>(())
    };
    // A node that neither reads nor closes would block the writes for good.
    let _ = tokio::time::timeout_at(hold_until.into(), send).await;
    let end = ending(&mut stream, hold_until.saturating_duration_since(Instant::now())).await;
    tokio::time::sleep_until(hold_until.into()).await;
    Some((written, end))
}
