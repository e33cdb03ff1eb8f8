//! Measurements on a running [`Mesh`]: how long a new skill takes to reach
//! every node, what it cost them (pushes received and made, merge
//! decisions, from their metrics), what an idle sync round costs on the
//! wire, and the nodes' memory and CPU time.

use std::time::{Duration, Instant};

use super::nodes::Mesh;

/// How often the bench asks the nodes that lack a new skill whether they
/// have it: seldom, so its own requests cost the nodes little CPU (the
/// times are the nodes' own, whenever the bench looks).
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How a new skill spread.
#[derive(Debug)]
pub(crate) struct Spread {
    /// From the request that made it until its origin stored it.
    pub(crate) at_origin: Duration,
    /// From that request until the last node stored it.
    pub(crate) everywhere: Duration,
    /// The median node's time.
    pub(crate) median: Duration,
    /// The last node's time at each distance from the origin (index: hops).
    pub(crate) by_hops: Vec<Duration>,
}

impl Spread {
    /// `by_hops` in words: `1: 0.31 s, 2: 0.70 s, …`.
    pub(crate) fn hops(&self) -> String {
        let each: Vec<String> = self
            .by_hops
            .iter()
            .enumerate()
            .skip(1)
            .map(|(h, t)| format!("{h}: {:.2} s", t.as_secs_f64()))
            .collect();
        each.join(", ")
    }
}

/// Makes skill `name` at node `origin` and waits (at most `within`) until
/// every node holds it. Each node's time is when it stored the skill by
/// its own clock (`updatedAt`; one machine, one clock), so how often the
/// bench looks changes nothing but when it notices.
pub(crate) async fn spread(
    mesh: &Mesh,
    origin: usize,
    name: &str,
    within: Duration,
) -> Result<Spread, String> {
    let made = chrono::Utc::now();
    mesh.add_skill(origin, name, "Read the failing test first, then bisect the last commits.").await?;
    let deadline = Instant::now() + within;
    let mut stored: Vec<Option<Duration>> = vec![None; mesh.len()];
    while stored.iter().any(Option::is_none) {
        if Instant::now() > deadline {
            let missing: Vec<usize> = (0..mesh.len()).filter(|&v| stored[v].is_none()).collect();
            return Err(format!("{name} did not reach nodes {missing:?} within {within:?}"));
        }
        for (v, time) in stored.iter_mut().enumerate() {
            if time.is_none()
                && let Some(at) = mesh.stored_at(v, name).await
            {
                *time = Some((at - made).to_std().unwrap_or_default());
            }
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
    let mut times: Vec<Duration> = stored.into_iter().flatten().collect();
    let hops = mesh.graph.hops_from(origin);
    let mut by_hops = vec![Duration::ZERO; hops.iter().copied().max().unwrap_or(0) + 1];
    for (&h, &t) in hops.iter().zip(&times) {
        by_hops[h] = by_hops[h].max(t);
    }
    let at_origin = times[origin];
    times.sort();
    Ok(Spread { at_origin, everywhere: times[times.len() - 1], median: times[times.len() / 2], by_hops })
}

/// What an idle mesh sends over its links.
#[derive(Debug)]
pub(crate) struct Idle {
    pub(crate) window: Duration,
    pub(crate) bytes: u64,
    /// Sync rounds: `GET /ecp/manifest` requests.
    pub(crate) rounds: u64,
    pub(crate) other_requests: u64,
    /// Directed links: one per node and peer.
    pub(crate) links: usize,
}

impl Idle {
    /// Bytes of one node's round with one peer, both ways.
    pub(crate) fn per_peer_round(&self) -> f64 {
        self.bytes as f64 / self.rounds.max(1) as f64
    }
}

/// Counts what crosses every link over `window`, after a quiet `settle`.
pub(crate) async fn idle(mesh: &Mesh, settle: Duration, window: Duration) -> Idle {
    tokio::time::sleep(settle).await;
    for link in mesh.links() {
        link.counts().take();
    }
    tokio::time::sleep(window).await;
    let (mut bytes, mut rounds, mut other_requests) = (0, 0, 0);
    for link in mesh.links() {
        let (b, r, o) = link.counts().take();
        (bytes, rounds, other_requests) = (bytes + b, rounds + r, other_requests + o);
    }
    Idle { window, bytes, rounds, other_requests, links: mesh.links().len() }
}

/// Resident memory of the live nodes, in KiB: now (`VmRSS`) and at peak (`VmHWM`).
pub(crate) fn memory(mesh: &Mesh) -> Vec<(u64, u64)> {
    (0..mesh.len())
        .filter_map(|v| {
            let status = std::fs::read_to_string(format!("/proc/{}/status", mesh.pid(v)?)).ok()?;
            let field = |key: &str| -> Option<u64> {
                let line = status.lines().find(|l| l.starts_with(key))?;
                line.split_whitespace().nth(1)?.parse().ok()
            };
            Some((field("VmRSS:")?, field("VmHWM:")?))
        })
        .collect()
}

/// CPU time the live nodes have used so far (user and system, from
/// `/proc/<pid>/stat`, in clock ticks of 10 ms).
pub(crate) fn cpu(mesh: &Mesh) -> Duration {
    let ticks: u64 = (0..mesh.len())
        .filter_map(|v| {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", mesh.pid(v)?)).ok()?;
            // Fields after the command name, which ends with the last ')'.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    Duration::from_millis(ticks * 10)
}

/// What the nodes counted (their `/metrics`): pushes received (`POST
/// /ecp/skills` answered 200), pushes made (that ended `ok`, also those
/// that found nothing to send), and merge decisions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counted {
    /// Per node.
    pub(crate) received: Vec<u64>,
    pub(crate) pushes: u64,
    pub(crate) new: u64,
    pub(crate) unchanged: u64,
    pub(crate) rejected: u64,
}

impl Counted {
    /// What happened between `before` and `self`.
    pub(crate) fn since(&self, before: &Counted) -> Counted {
        Counted {
            received: self.received.iter().zip(&before.received).map(|(a, b)| a.saturating_sub(*b)).collect(),
            pushes: self.pushes.saturating_sub(before.pushes),
            new: self.new.saturating_sub(before.new),
            unchanged: self.unchanged.saturating_sub(before.unchanged),
            rejected: self.rejected.saturating_sub(before.rejected),
        }
    }

    /// `received` in words: total, and min / median / max per node.
    pub(crate) fn received(&self) -> String {
        let mut each = self.received.clone();
        each.sort_unstable();
        let total: u64 = each.iter().sum();
        match (each.first(), each.last()) {
            (Some(min), Some(max)) => {
                format!(
                    "{total} pushes received (per node min {min}, median {}, max {max})",
                    each[each.len() / 2]
                )
            }
            _ => "no node answered".to_owned(),
        }
    }
}

/// Every live node's counts now.
pub(crate) async fn counted(mesh: &Mesh) -> Counted {
    let mut counted = Counted::default();
    for v in 0..mesh.len() {
        let text = mesh.metrics(v).await.unwrap_or_default();
        let sum = |metric: &str, labels: &[&str]| -> u64 {
            text.lines()
                .filter(|l| l.starts_with(metric) && labels.iter().all(|label| l.contains(label)))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>() as u64
        };
        counted.received.push(sum(
            "ecp_http_requests_total{",
            &["route=\"/ecp/skills\"", "method=\"POST\"", "status=\"200\""],
        ));
        counted.pushes += sum("ecp_pushes_total{", &["result=\"ok\""]);
        counted.new += sum("ecp_decisions_total{", &["decision=\"new\""]);
        counted.unchanged += sum("ecp_decisions_total{", &["decision=\"unchanged\""]);
        counted.rejected += sum("ecp_decisions_total{", &["decision=\"rejected\""]);
    }
    counted
}
