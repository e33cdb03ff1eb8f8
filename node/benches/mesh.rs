//! Mesh benchmark: real `ecp-node` processes on loopback, wired by
//! `deploy/local-mesh.sh` as a random 3-regular graph.
//!
//! Run with `cargo bench -p ecp-node --bench mesh` (sizes as arguments:
//! `cargo bench -p ecp-node --bench mesh -- 10 30`; default 10 and 30).
//!
//! For each size it measures, in two meshes:
//! - (a) push on change (pulls only hourly): the time from `ecp-node skill add`
//!   at one node until every node's `GET /ecp/manifest` lists the skill;
//! - (b) pull only, every 1 s: the same time, against diameter × 1 s + 1 s;
//! - the bytes one idle sync round costs per peer: node 0 sits behind a
//!   counting TCP proxy (local-mesh.sh `--hide 0`), so every request its
//!   neighbours make to it crosses the proxy; after convergence the proxy
//!   counts the bytes both ways (TCP payload, no headers of TCP/IP) over
//!   10 idle seconds and divides by the manifest requests seen, one per round.
//!
//! Goals (issue 4): (a) < 1 s for 30 nodes; (b) ≤ diameter × interval + 1 s;
//! an idle round ≤ 1 KB per peer. Printed as met or missed; the bench
//! never fails on them (shared machines are noisy). It prints
//! `mesh bench skipped: <reason>` and exits 0 when the binary has no
//! `serve --peers`.
//!
//! Nothing leaves 127.0.0.1. Ports: in run r (0, 1, … in order), node i on
//! 17400 (`ECP_MESH_BASE_PORT`) + 100·r + i, node 0 itself on its port + 1000.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Pull interval of the pull-only mesh.
const PULL_INTERVAL: Duration = Duration::from_secs(1);
/// How often each node is asked whether it has the skill yet.
const POLL_EVERY: Duration = Duration::from_millis(25);
/// Longest wait for a mesh to converge.
const CONVERGE_DEADLINE: Duration = Duration::from_secs(90);
/// The idle window over which the proxy counts.
const IDLE_WINDOW: Duration = Duration::from_secs(10);
/// A node in a mesh listens at most this long after "mesh: ready" without
/// having completed its first round with every peer.
const SETTLE_DEADLINE: Duration = Duration::from_secs(20);
/// Ports between the first ports of two runs (more than the largest mesh).
const PORTS_PER_RUN: u16 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Push,
    Pull,
}

impl Mode {
    fn flag(self) -> &'static str {
        match self {
            Mode::Push => "push",
            Mode::Pull => "pull",
        }
    }
}

/// What one mesh run measured.
#[derive(Debug)]
struct Run {
    n: usize,
    mode: Mode,
    diameter: usize,
    /// From the start of `skill add` until the origin's manifest lists it.
    at_origin: Duration,
    /// From the start of `skill add` until every node's manifest lists it.
    converged: Duration,
    idle: Idle,
}

/// What crossed the proxy in front of node 0 in the idle window.
#[derive(Debug, Default)]
struct Idle {
    bytes: u64,
    manifest_gets: u64,
    requests: u64,
    neighbours: usize,
}

impl Idle {
    fn per_round(&self) -> Option<f64> {
        (self.manifest_gets > 0).then(|| self.bytes as f64 / self.manifest_gets as f64)
    }
}

fn main() -> ExitCode {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10, 30] } else { sizes };
    let bin = std::env::var_os("ECP_NODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/local-mesh.sh");
    if let Err(reason) = has_federation(&bin) {
        println!("mesh bench skipped: {reason}");
        return ExitCode::SUCCESS;
    }
    let base_port: u16 =
        std::env::var("ECP_MESH_BASE_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(17400);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    let mut runs = Vec::new();
    for &n in &sizes {
        for mode in [Mode::Push, Mode::Pull] {
            eprintln!("mesh bench: {n} nodes, {} …", mode.flag());
            // Each run gets its own ports: the previous mesh's processes and
            // proxy may still be letting go of theirs.
            let ports = base_port + (runs.len() as u16) * PORTS_PER_RUN.max(n as u16 + 1);
            match runtime.block_on(run(&script, &bin, n, mode, ports)) {
                Ok(r) => runs.push(r),
                Err(e) => {
                    eprintln!("mesh bench: {n} nodes, {}: {e}", mode.flag());
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    report(&runs);
    ExitCode::SUCCESS
}

/// Whether `bin` can run a mesh (`serve --peers`).
fn has_federation(bin: &Path) -> Result<(), String> {
    let out = Command::new(bin)
        .args(["serve", "--help"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    if String::from_utf8_lossy(&out.stdout).contains("--peers") {
        Ok(())
    } else {
        Err(format!("{} has no `serve --peers` yet (the federator has not landed)", bin.display()))
    }
}

/// Stops the mesh (SIGTERM to local-mesh.sh, which stops its nodes) when dropped.
struct Mesh {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Mesh {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

async fn run(script: &Path, bin: &Path, n: usize, mode: Mode, base_port: u16) -> Result<Run, String> {
    let counters = Arc::new(Counters::default());
    let hidden_port = base_port + 1000;
    let listener = TcpListener::bind(("127.0.0.1", base_port))
        .await
        .map_err(|e| format!("the proxy cannot listen on port {base_port}: {e}; set ECP_MESH_BASE_PORT"))?;
    let proxy = tokio::spawn(proxy(listener, hidden_port, counters.clone()));

    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let seed = 4000 + n as u64;
    let mut child = Command::new("bash")
        .arg(script)
        .args([&n.to_string(), "random", "--mode", mode.flag(), "--interval", "1s"])
        .args(["--seed", &seed.to_string(), "--hide", "0", "--base-port", &base_port.to_string()])
        .arg("--dir")
        .arg(dir.path())
        .env("ECP_NODE_BIN", bin)
        .env_remove("ECP_MESH_SECRET")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", script.display()))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let mesh = Mesh { child, dir };
    let ready = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout).lines().map_while(Result::ok).any(|line| line.starts_with("mesh: ready"))
    });
    match tokio::time::timeout(Duration::from_secs(120), ready).await {
        Ok(Ok(true)) => {}
        _ => return Err("local-mesh.sh did not report the mesh ready".into()),
    }

    let root = mesh.dir.path();
    let edges = read_edges(&root.join("graph.txt"))?;
    let diameter = diameter(n, &edges);
    let neighbours = edges.iter().filter(|(a, b)| *a == 0 || *b == 0).count();
    // Direct URLs, for the bench's own requests (node 0's bypasses the proxy).
    let urls: Vec<String> = (0..n)
        .map(|i| format!("http://127.0.0.1:{}", if i == 0 { hidden_port } else { base_port + i as u16 }))
        .collect();
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let tokens: Vec<String> = (0..n)
        .map(|i| {
            std::fs::read_to_string(root.join(format!("node-{i}")).join("api-token")).unwrap_or_default()
        })
        .collect();
    settle(&client, &urls, &tokens).await;

    let origin = 1;
    let name = format!("mesh-bench-{}-{n}", mode.flag());
    let skill_dir = root.join("skill").join(&name);
    std::fs::create_dir_all(&skill_dir).map_err(|e| e.to_string())?;
    std::fs::write(
        skill_dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Mesh benchmark skill\nconfidence: 1.0\n---\n\n\
             # {name}\n\nRead the failing test first, then bisect the last commits.\n"
        ),
    )
    .map_err(|e| e.to_string())?;

    let start = Instant::now();
    let pollers: Vec<_> = urls
        .iter()
        .map(|url| {
            let (client, url, name) = (client.clone(), url.clone(), name.clone());
            tokio::spawn(async move { first_seen(&client, &url, &name, start).await })
        })
        .collect();
    let add = {
        let (bin, data) = (bin.to_owned(), root.join(format!("node-{origin}")));
        let path = skill_dir.join("SKILL.md");
        tokio::task::spawn_blocking(move || {
            Command::new(bin).args(["skill", "add"]).arg(path).arg("--data").arg(data).output()
        })
    };
    let added = add.await.map_err(|e| e.to_string())?.map_err(|e| format!("skill add: {e}"))?;
    if !added.status.success() {
        return Err(format!("skill add failed: {}", String::from_utf8_lossy(&added.stderr)));
    }
    let mut seen = Vec::with_capacity(n);
    for (i, poller) in pollers.into_iter().enumerate() {
        match poller.await.map_err(|e| e.to_string())? {
            Some(t) => seen.push(t),
            None => return Err(format!("node {i} never got the skill within {CONVERGE_DEADLINE:?}")),
        }
    }
    let converged = seen.iter().copied().max().unwrap_or_default();

    // In-flight rounds finish, then count what an idle mesh costs.
    tokio::time::sleep(Duration::from_secs(2)).await;
    counters.reset();
    tokio::time::sleep(IDLE_WINDOW).await;
    let idle = Idle {
        bytes: counters.up.load(Ordering::Relaxed) + counters.down.load(Ordering::Relaxed),
        manifest_gets: counters.manifest_gets.load(Ordering::Relaxed),
        requests: counters.requests.load(Ordering::Relaxed),
        neighbours,
    };
    drop(mesh);
    proxy.abort();
    // Wait for the abort, so the listener is closed before the next run.
    let _ = proxy.await;
    Ok(Run { n, mode, diameter, at_origin: seen[origin], converged, idle })
}

/// Waits until every node has completed a round with each of its peers
/// (`lastSuccess` in `GET /v1/peers`), so the measurement starts on a quiet
/// mesh; if the endpoint is missing, waits a few seconds instead. `tokens`:
/// each node's API token (`<data>/api-token`), which `/v1/` requires.
async fn settle(client: &reqwest::Client, urls: &[String], tokens: &[String]) {
    let deadline = Instant::now() + SETTLE_DEADLINE;
    for (url, token) in urls.iter().zip(tokens) {
        loop {
            let answer = client.get(format!("{url}/v1/peers")).bearer_auth(token.trim()).send().await;
            let Ok(answer) = answer else { break };
            if answer.status() == reqwest::StatusCode::NOT_FOUND {
                tokio::time::sleep(Duration::from_secs(3)).await;
                return;
            }
            let body: serde_json::Value = answer.json().await.unwrap_or_default();
            let peers = body.as_array().or_else(|| body["peers"].as_array()).cloned().unwrap_or_default();
            if !peers.is_empty() && peers.iter().all(|p| !p["lastSuccess"].is_null()) {
                break;
            }
            if Instant::now() > deadline {
                eprintln!("mesh bench: {url} has not synced with every peer yet; measuring anyway");
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// How long after `start` the node at `url` first lists `name` in its manifest.
async fn first_seen(client: &reqwest::Client, url: &str, name: &str, start: Instant) -> Option<Duration> {
    while start.elapsed() < CONVERGE_DEADLINE {
        if let Ok(answer) = client.get(format!("{url}/ecp/manifest")).send().await
            && let Ok(manifest) = answer.json::<serde_json::Value>().await
            && manifest["skillNames"].as_array().is_some_and(|names| names.iter().any(|n| n == name))
        {
            return Some(start.elapsed());
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
    None
}

fn read_edges(path: &Path) -> Result<Vec<(usize, usize)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace().map(str::parse::<usize>);
            match (it.next(), it.next()) {
                (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
                _ => Err(format!("{}: not an edge: {l:?}", path.display())),
            }
        })
        .collect()
}

/// The longest shortest path of the graph, by breadth-first search from every node.
fn diameter(n: usize, edges: &[(usize, usize)]) -> usize {
    let mut adjacent: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(a, b) in edges {
        adjacent.entry(a).or_default().push(b);
        adjacent.entry(b).or_default().push(a);
    }
    let mut longest = 0;
    for source in 0..n {
        let mut distance = vec![usize::MAX; n];
        distance[source] = 0;
        let mut queue = VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            for &w in adjacent.get(&v).into_iter().flatten() {
                if distance[w] == usize::MAX {
                    distance[w] = distance[v] + 1;
                    longest = longest.max(distance[w]);
                    queue.push_back(w);
                }
            }
        }
    }
    longest
}

/// Bytes and requests that crossed the proxy.
#[derive(Debug, Default)]
struct Counters {
    /// Client to node.
    up: AtomicU64,
    /// Node to client.
    down: AtomicU64,
    /// `GET /ecp/manifest` requests: one per sync round.
    manifest_gets: AtomicU64,
    /// Every other request (`GET /…`, `POST /…` at the start of a line).
    requests: AtomicU64,
}

impl Counters {
    fn reset(&self) {
        for c in [&self.up, &self.down, &self.manifest_gets, &self.requests] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// Forwards connections on `listener` to 127.0.0.1:`target`, counting.
async fn proxy(listener: TcpListener, target: u16, counters: Arc<Counters>) {
    loop {
        let Ok((client, _)) = listener.accept().await else { continue };
        let counters = counters.clone();
        tokio::spawn(async move {
            let Ok(node) = TcpStream::connect(("127.0.0.1", target)).await else { return };
            let (client_read, client_write) = client.into_split();
            let (node_read, node_write) = node.into_split();
            let up = pump(client_read, node_write, counters.clone(), true);
            let down = pump(node_read, client_write, counters, false);
            let _ = tokio::join!(up, down);
        });
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    counters: Arc<Counters>,
    upstream: bool,
) {
    let mut buf = vec![0u8; 16 * 1024];
    // The previous chunk's last bytes, so a request line split across reads is still seen.
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if upstream {
            counters.up.fetch_add(n as u64, Ordering::Relaxed);
            let mut window = std::mem::take(&mut tail);
            let carried = window.len();
            window.extend_from_slice(&buf[..n]);
            count_requests(&window, carried, &counters);
            tail = window[window.len().saturating_sub(24)..].to_vec();
        } else {
            counters.down.fetch_add(n as u64, Ordering::Relaxed);
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Counts request lines that end after `carried` (the part already scanned).
fn count_requests(window: &[u8], carried: usize, counters: &Counters) {
    let starts_line = |i: usize| i == 0 || window[i - 1] == b'\n';
    for (i, _) in window.iter().enumerate() {
        if !starts_line(i) {
            continue;
        }
        let rest = &window[i..];
        let patterns: [(&[u8], &AtomicU64); 3] = [
            (b"GET /ecp/manifest ", &counters.manifest_gets),
            (b"GET /", &counters.requests),
            (b"POST /", &counters.requests),
        ];
        if let Some((method, counter)) = patterns.into_iter().find(|(m, _)| rest.starts_with(m))
            && i + method.len() > carried
        {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn report(runs: &[Run]) {
    println!();
    println!("mesh bench: random 3-regular graphs on loopback, trust 1.0");
    println!("  N  mode  diam  at origin  everywhere  goal");
    for r in runs {
        let (goal, met) = match r.mode {
            Mode::Push => {
                ("< 1 s (for N = 30)".to_owned(), r.converged < Duration::from_secs(1) || r.n != 30)
            }
            Mode::Pull => {
                let limit = PULL_INTERVAL * r.diameter as u32 + Duration::from_secs(1);
                (format!("≤ {:.1} s", limit.as_secs_f64()), r.converged <= limit)
            }
        };
        println!(
            "{:>3}  {:<4}  {:>4}  {:>8.3}s  {:>9.3}s  {goal} {}",
            r.n,
            r.mode.flag(),
            r.diameter,
            r.at_origin.as_secs_f64(),
            r.converged.as_secs_f64(),
            if met { "met" } else { "MISSED" }
        );
    }
    println!();
    println!(
        "idle traffic at node 0 over {} s (its neighbours' requests, both directions):",
        IDLE_WINDOW.as_secs()
    );
    for r in runs {
        let i = &r.idle;
        let per_round = match i.per_round() {
            Some(b) => format!(
                "{b:.0} B per peer per round (goal ≤ 1024: {})",
                if b <= 1024.0 { "met" } else { "MISSED" }
            ),
            None => "no sync rounds seen".to_owned(),
        };
        println!(
            "{:>3}  {:<4}  {} bytes, {} manifest GETs + {} other requests from {} neighbours: {per_round}",
            r.n,
            r.mode.flag(),
            i.bytes,
            i.manifest_gets,
            i.requests,
            i.neighbours
        );
    }
}
