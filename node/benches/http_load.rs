//! Load benchmark of `ecp-node` over HTTP, against the real binary.
//!
//! Run with `cargo bench -p ecp-node --bench http_load`.
//!
//! For each store size (1,000 and 10,000 skills) it starts a fresh node as
//! a separate process (`ecp-node --data <tempdir> serve --listen
//! 127.0.0.1:<port>`), so the resident memory it reports is the node's own;
//! pushes the skills with `POST /ecp/skills` in batches of 100 and times the
//! whole load; then runs a closed-loop load of fixed duration on 16 keep-alive
//! connections against `GET /ecp/manifest`, `GET /ecp/skills` and
//! `GET /ecp/skills` with `If-None-Match` (a 304). Every latency is kept; the
//! node's VmRSS is sampled during each case and its VmHWM (peak) read after
//! them. Last, it pushes one skill and sends a burst of `GET /ecp/skills` on
//! the stale cache, and reads VmHWM again. A markdown table compares each
//! figure with the goal of the issue.
//!
//! The load generator shares the machine with the node, which is the point
//! (the goals are stated that way), so the table also shows the CPU time the
//! node and the client each spent per request, and the CPU other processes
//! took meanwhile: that says which side limits a figure, and when a shared
//! machine's other work did.
//!
//! Settings come from the environment:
//! - `ECP_BENCH_SECS`: measured seconds per case (default 5), after a warm-up
//!   of a fifth of that (at most 1 s);
//! - `ECP_BENCH_CONNECTIONS`: concurrent connections (default 16);
//! - `ECP_BENCH_CLIENT_THREADS`: worker threads of the load client (default 1,
//!   leaving the other core to the node);
//! - `ECP_NODE_BIN`: the node binary (default: the one cargo built for this bench);
//! - `ECP_BENCH_DIR`: where the node's data folder is made (default: the
//!   system temp folder); e.g. `/dev/shm` to take the disk out of the figures;
//! - `ECP_BENCH_LOAD_ONLY`: a number of runs of the largest load alone (fresh
//!   node each, no GET cases, no table), to measure the load without the
//!   minutes the rest takes; each run's figures are printed. With it,
//!   `ECP_BENCH_BEFORE_LOAD` and `ECP_BENCH_AFTER_LOAD` are shell commands run
//!   (and waited for) right before and after each load, with the node's pid
//!   in `$ECP_NODE_PID`: to attach `strace -c`, or to zero and dump the
//!   counters of a node run under `valgrind --tool=callgrind` (`ECP_NODE_BIN`
//!   a script that `exec`s valgrind), so that start-up is not in the figures.
//!
//! Run without `--bench` (as `cargo test --benches` does), it is a smoke test:
//! 200 skills, a fraction of a second per case, no goals judged.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use ecp_protocol::{KnowledgeUpdate, MergeResult, Origin, PeerStats, SkillPacket, Timestamp};
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{CONTENT_TYPE, ETAG, HOST, IF_NONE_MATCH};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;

/// Skills per `POST /ecp/skills`, as the issue asks.
const BATCH: usize = 100;
/// Kernel clock ticks per second for `/proc/<pid>/stat` (USER_HZ, 100 on Linux).
const CLOCK_TICKS_PER_SEC: f64 = 100.0;
/// The longest any one request may take before the bench gives up on it.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);
/// How often the node's VmRSS is sampled during a case.
const RSS_EVERY: Duration = Duration::from_millis(50);
/// The Go reference figures quoted by the issue, printed under the table.
const GO_REFERENCE: &str = "Go reference (issue): 60 and 45 req/s at 1,000 skills, 5 and 4 req/s at \
                            10,000, 28 s to load 10,000, 1.1–1.5 GB RSS.";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("http_load: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let settings = Settings::from_env()?;
    println!(
        "http_load: node {} | data in {} | {} s per case after {} ms warm-up | {} connections | \
         client threads {}",
        settings.bin.display(),
        settings.data_root.as_deref().unwrap_or(&std::env::temp_dir()).display(),
        settings.secs.as_secs_f64(),
        settings.warmup.as_millis(),
        settings.connections,
        settings.client_threads,
    );
    if !settings.judge {
        println!("(smoke mode: run with `cargo bench` for the real figures)");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(settings.client_threads)
        .enable_all()
        .build()?;
    if let Some(runs) = settings.load_only {
        let skills = settings.sizes.iter().copied().max().unwrap_or(BATCH);
        for run in 1..=runs {
            println!("\n== load only, run {run} of {runs}");
            runtime.block_on(load_alone(&settings, skills))?;
        }
        return Ok(());
    }
    let mut phases = Vec::new();
    for &skills in &settings.sizes {
        phases.push(runtime.block_on(phase(&settings, skills))?);
    }
    let report = report(&settings, &phases);
    println!("\n{report}");
    wrk_hint();
    Ok(())
}

/// What the run is told by the environment and the command line.
struct Settings {
    bin: PathBuf,
    secs: Duration,
    warmup: Duration,
    connections: usize,
    client_threads: usize,
    sizes: Vec<usize>,
    /// Where the node's data folders go (default: the system temp folder).
    data_root: Option<PathBuf>,
    /// Judge figures against the goals (only in a real `cargo bench` run).
    judge: bool,
    /// `ECP_BENCH_LOAD_ONLY`: runs of the largest load alone, nothing else.
    load_only: Option<usize>,
}

impl Settings {
    fn from_env() -> anyhow::Result<Settings> {
        let bin = std::env::var_os("ECP_NODE_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")));
        ensure!(bin.is_file(), "node binary {} not found; build it or set ECP_NODE_BIN", bin.display());
        // `cargo bench` passes `--bench`; `cargo test --benches` does not.
        let judge = std::env::args().any(|a| a == "--bench");
        let number = |var: &str, default: f64| -> anyhow::Result<f64> {
            match std::env::var(var) {
                Ok(text) => text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite() && *n > 0.0)
                    .with_context(|| format!("{var}={text:?} is not a positive number")),
                Err(_) => Ok(default),
            }
        };
        let secs =
            Duration::from_secs_f64(number("ECP_BENCH_SECS", if judge { 5.0 } else { 0.3 })?.min(600.0));
        let warmup = (secs / 5).min(Duration::from_secs(1));
        let connections = number("ECP_BENCH_CONNECTIONS", 16.0)?.clamp(1.0, 1024.0) as usize;
        let client_threads = number("ECP_BENCH_CLIENT_THREADS", 1.0)?.clamp(1.0, 64.0) as usize;
        let sizes = if judge { vec![1_000, 10_000] } else { vec![200] };
        let data_root = std::env::var_os("ECP_BENCH_DIR").map(PathBuf::from);
        let load_only = match std::env::var("ECP_BENCH_LOAD_ONLY") {
            Ok(_) => Some(number("ECP_BENCH_LOAD_ONLY", 1.0)?.clamp(1.0, 100.0) as usize),
            Err(_) => None,
        };
        Ok(Settings { bin, secs, warmup, connections, client_threads, sizes, data_root, judge, load_only })
    }
}

// ---------------------------------------------------------------- the node

/// A running `ecp-node serve` with its own data folder. Dropping it kills
/// the process (also when the bench panics), then removes the folder.
struct NodeProcess {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    /// Kept for its `Drop`: the data folder lives as long as the node.
    _dir: tempfile::TempDir,
}

impl NodeProcess {
    async fn start(bin: &Path, data_root: Option<&Path>) -> anyhow::Result<NodeProcess> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("ecp-http-load-");
        let dir = match data_root {
            Some(root) => builder.tempdir_in(root)?,
            None => builder.tempdir()?,
        };
        let log = dir.path().join("node.log");
        let addr = free_port()?;
        let child = Command::new(bin)
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(["serve", "--listen", &addr.to_string()])
            .env("RUST_LOG", "warn")
            // The load pushes thousands of new skills from one origin: not what the
            // origin limits are for. Variables, not flags, so older binaries still run.
            .env("ECP_ORIGIN_LIMIT_HOUR", "0")
            .env("ECP_ORIGIN_LIMIT_DAY", "0")
            .env("ECP_CLIENT_RATE_LIMIT", "0")
            .env_remove("ECP_SECRET")
            .env_remove("ECP_CONFIG")
            .env_remove("ECP_SKILLS_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let mut node = NodeProcess { child, addr, log, _dir: dir };
        node.wait_ready().await?;
        Ok(node)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls `GET /healthz` until it answers 200 (at most 30 s).
    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("the node exited ({status}) before serving:\n{}", self.log_tail());
            }
            if let Ok(mut conn) = connect(self.addr).await
                && let Ok((StatusCode::OK, _, _)) = fetch(&mut conn, self.addr, "/healthz", None).await
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("the node did not answer /healthz within 30 s:\n{}", self.log_tail());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback address no one listens on (the node binds it right after;
/// a clash is reported by the node's start-up check).
fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = StdListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// User plus system CPU time a process has used, in seconds.
fn cpu_secs(pid: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line; 12th and 13th after the name.
    (ticks(11) + ticks(12)) as f64 / CLOCK_TICKS_PER_SEC
}

/// Samples the node's VmRSS in a thread until dropped; keeps the highest.
struct RssSampler {
    stop: Arc<AtomicBool>,
    max_kib: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let max_kib = Arc::new(AtomicU64::new(memory_kib(pid).0));
        let thread = {
            let (stop, max_kib) = (Arc::clone(&stop), Arc::clone(&max_kib));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    max_kib.fetch_max(memory_kib(pid).0, Ordering::Relaxed);
                    std::thread::sleep(RSS_EVERY);
                }
            })
        };
        RssSampler { stop, max_kib, thread: Some(thread) }
    }

    /// Stops sampling; the highest VmRSS seen, in KiB.
    fn finish(mut self) -> u64 {
        self.stop_thread();
        self.max_kib.load(Ordering::Relaxed)
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Machine-wide CPU seconds from `/proc/stat`: `(busy, steal)`, where busy
/// is the user, nice and system time of every process on every core.
fn machine_cpu_secs() -> (f64, f64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| ticks.get(i).copied().unwrap_or(0) as f64 / CLOCK_TICKS_PER_SEC;
    // user nice system idle iowait irq softirq steal: interrupt time is left
    // out, as the kernel spends it for whichever process the packets are for.
    (at(0) + at(1) + at(2), at(7))
}

/// Where CPU time went during a measurement, in seconds.
#[derive(Clone, Copy, Default)]
struct CpuUse {
    /// The node process.
    node: f64,
    /// This process: the load client.
    client: f64,
    /// Every other process on the machine (other builds on a shared machine).
    others: f64,
    /// Time the hypervisor gave to other machines.
    steal: f64,
}

/// Reads [`CpuUse`] between [`CpuMeter::begin`] and [`CpuMeter::end`].
struct CpuMeter {
    node_pid: String,
    start: CpuUse,
    machine: f64,
}

impl CpuMeter {
    fn begin(node_pid: u32) -> CpuMeter {
        let node_pid = node_pid.to_string();
        let (machine, steal) = machine_cpu_secs();
        let start = CpuUse { node: cpu_secs(&node_pid), client: cpu_secs("self"), others: 0.0, steal };
        CpuMeter { node_pid, start, machine }
    }

    fn end(&self) -> CpuUse {
        let (machine, steal) = machine_cpu_secs();
        let node = cpu_secs(&self.node_pid) - self.start.node;
        let client = cpu_secs("self") - self.start.client;
        let others = (machine - self.machine - node - client).max(0.0);
        CpuUse { node, client, others, steal: steal - self.start.steal }
    }
}

// ---------------------------------------------------------------- HTTP client

/// One keep-alive HTTP/1.1 connection to the node.
type Conn = SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> anyhow::Result<Conn> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(send)
}

fn get(addr: SocketAddr, path: &str, if_none_match: Option<&str>) -> Request<Full<Bytes>> {
    let mut builder = Request::get(path).header(HOST, addr.to_string());
    if let Some(tag) = if_none_match {
        builder = builder.header(IF_NONE_MATCH, tag);
    }
    builder.body(Full::new(Bytes::new())).expect("a GET with valid headers")
}

/// One GET whose whole answer is kept: status, ETag and body.
async fn fetch(
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
async fn drain(mut body: Incoming) -> Result<u64, hyper::Error> {
    let mut bytes = 0;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            bytes += data.len() as u64;
        }
    }
    Ok(bytes)
}

// ---------------------------------------------------------------- the skills

/// Realistic, unique, harmless skills: a SKILL.md of about 1.7 KB each, with
/// frontmatter (`name` = `skillName`, `description`, `tags`).
fn skill_packets(indices: std::ops::Range<usize>) -> Vec<SkillPacket> {
    const AREAS: [&str; 8] = ["rust", "python", "go", "web", "data", "mobile", "infra", "docs"];
    const SUBJECTS: [(&str, &str); 10] = [
        ("release notes", "release-notes"),
        ("dependency updates", "dependencies"),
        ("test coverage", "testing"),
        ("error messages", "errors"),
        ("log output", "logging"),
        ("API reference pages", "api-docs"),
        ("build caching", "builds"),
        ("code review requests", "review"),
        ("onboarding guide", "onboarding"),
        ("configuration files", "config"),
    ];
    const VERBS: [&str; 5] = ["Tidy", "Review", "Update", "Audit", "Plan"];
    let origin = Origin::new("http-load-bench", "bench-user", "linux/amd64", env!("CARGO_PKG_VERSION"));
    let created_at = Timestamp::from_datetime(chrono::Utc::now() - chrono::Duration::minutes(5));
    indices
        .map(|i| {
            let area = AREAS[i % AREAS.len()];
            let (subject, tag) = SUBJECTS[(i / AREAS.len()) % SUBJECTS.len()];
            let verb = VERBS[(i / (AREAS.len() * SUBJECTS.len())) % VERBS.len()];
            let name = format!("{area}-{tag}-{verb}-{i:05}").to_lowercase();
            let description = format!(
                "{verb} the {subject} of a {area} project step by step, with checks before and after."
            );
            let body = skill_body(&name, &description, [area, tag, "playbook"], verb, subject, area, i);
            SkillPacket::new(&origin, &name, &description, &body, 0.9, created_at)
                .with_tags([area, tag, "playbook"])
        })
        .collect()
}

fn skill_body(
    name: &str,
    description: &str,
    tags: [&str; 3],
    verb: &str,
    subject: &str,
    area: &str,
    variant: usize,
) -> String {
    let verb_lower = verb.to_lowercase();
    let mut s = String::with_capacity(2048);
    let _ = write!(
        s,
        "---\nname: {name}\ndescription: {description}\ntags: [{}]\n---\n\
         # {verb} the {subject}\n\n\
         Use this playbook to {verb_lower} the {subject} of a {area} project with a result\n\
         that a reviewer can follow and the next person can repeat.\n\n\
         ## When to use\n\
         - The {subject} have drifted from what the team agreed on last quarter.\n\
         - A release is planned within the week and the {subject} must be ready for it.\n\
         - A new teammate asks how the {subject} are handled in this {area} project.\n\n\
         ## Before you start\n\
         1. Read the project README and the contributing guide.\n\
         2. Start a fresh branch named after the task, so the change stays easy to review.\n\
         3. Run the test suite once, so that you know the state you start from.\n\n\
         ## Steps\n\
         1. List the files that define the {subject}.\n\
         2. Compare them with the team checklist and write down each difference you find.\n\
         3. Change one thing at a time, and run the relevant tests after each change.\n\
         4. Keep commit messages short: what changed, and why it was needed.\n\
         5. Ask a reviewer who knows the {area} side of the project to read the diff.\n\
         6. After the merge, watch the dashboards for an hour and note anything unusual.\n\n\
         ## Checks\n\
         - The test suite passes on the branch and on the main line.\n\
         - The change log names the change in one line that a user understands.\n\
         - Nothing unrelated changed in the diff; move stray edits to their own branch.\n\n\
         ## Notes\n\
         Variant {variant}: prefer small pull requests. If the work grows beyond a day, split it\n\
         and open an issue for the rest.\n",
        tags.join(", ")
    );
    s
}

/// The packets as `POST /ecp/skills` bodies of [`BATCH`] packets each.
fn update_bodies(packets: Vec<SkillPacket>) -> anyhow::Result<Vec<Bytes>> {
    let mut bodies = Vec::new();
    let mut packets = packets.into_iter().peekable();
    let mut n = 0;
    while packets.peek().is_some() {
        let skills: Vec<SkillPacket> = packets.by_ref().take(BATCH).collect();
        n += 1;
        let update = KnowledgeUpdate {
            id: format!("http-load-bench-{n}"),
            peer_instance: "http-load-bench".into(),
            generated_at: Timestamp::from_datetime(chrono::Utc::now()),
            stats: PeerStats { total_skills: skills.len() as i64, ..PeerStats::default() },
            skills,
            sequence_num: 0,
        };
        bodies.push(Bytes::from(serde_json::to_vec(&update)?));
    }
    Ok(bodies)
}

// ---------------------------------------------------------------- measurements

/// Loading the skills: the whole push, timed.
struct LoadResult {
    skills: usize,
    elapsed: Duration,
    /// Time of each batch, in order: a trend shows work growing with the store.
    batches: Vec<Duration>,
    bytes: usize,
    cpu: CpuUse,
    rss_max_kib: u64,
}

impl LoadResult {
    fn slowest_batch(&self) -> Duration {
        self.batches.iter().copied().max().unwrap_or_default()
    }

    /// Mean time of the first (`last == false`) or last ten batches, in ms.
    fn mean_of_ten_ms(&self, last: bool) -> f64 {
        let n = self.batches.len().min(10);
        let ten = if last { &self.batches[self.batches.len() - n..] } else { &self.batches[..n] };
        ten.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e3 / n.max(1) as f64
    }
}

/// Pushes every body in turn on one connection; each must add [`BATCH`] skills.
async fn load(node: &NodeProcess, bodies: &[Bytes], skills: usize) -> anyhow::Result<LoadResult> {
    let mut conn = connect(node.addr).await?;
    let sampler = RssSampler::start(node.pid());
    let cpu = CpuMeter::begin(node.pid());
    let started = Instant::now();
    let mut batches = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        let sent = Instant::now();
        let request = Request::builder()
            .method(Method::POST)
            .uri("/ecp/skills")
            .header(HOST, node.addr.to_string())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body.clone()))?;
        let exchange = async {
            conn.ready().await?;
            let response = conn.send_request(request).await?;
            let status = response.status();
            Ok::<_, hyper::Error>((status, response.into_body().collect().await?.to_bytes()))
        };
        let (status, answer) = tokio::time::timeout(REQUEST_LIMIT, exchange)
            .await
            .with_context(|| format!("batch {i}: no answer within {} s", REQUEST_LIMIT.as_secs()))??;
        batches.push(sent.elapsed());
        ensure!(status == StatusCode::OK, "batch {i}: {status}: {}", String::from_utf8_lossy(&answer));
        let result: MergeResult = serde_json::from_slice(&answer)
            .with_context(|| format!("batch {i}: the answer is not a MergeResult"))?;
        let expected = BATCH.min(skills - i * BATCH) as u64;
        ensure!(
            result.new_skills == expected && result.rejected_skills == 0,
            "batch {i}: expected newSkills={expected}, got {result:?}"
        );
    }
    let elapsed = started.elapsed();
    Ok(LoadResult {
        skills,
        elapsed,
        batches,
        bytes: bodies.iter().map(Bytes::len).sum(),
        cpu: cpu.end(),
        rss_max_kib: sampler.finish(),
    })
}

/// One of the GET cases.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Manifest,
    Skills,
    NotModified,
}

impl Case {
    const ALL: [Case; 3] = [Case::Manifest, Case::Skills, Case::NotModified];

    fn label(self) -> &'static str {
        match self {
            Case::Manifest => "GET /ecp/manifest",
            Case::Skills => "GET /ecp/skills",
            Case::NotModified => "GET /ecp/skills 304",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Case::Manifest => "/ecp/manifest",
            Case::Skills | Case::NotModified => "/ecp/skills",
        }
    }

    fn expect(self) -> StatusCode {
        match self {
            Case::NotModified => StatusCode::NOT_MODIFIED,
            _ => StatusCode::OK,
        }
    }
}

/// The outcome of one closed-loop case.
struct CaseResult {
    case: Case,
    skills: usize,
    /// Every latency of the measured window, sorted, in nanoseconds.
    latencies: Vec<u64>,
    /// From the start of the window to the last completion in it.
    elapsed: Duration,
    bytes: u64,
    /// Answers with another status, or failed requests.
    errors: u64,
    cpu: CpuUse,
    rss_max_kib: u64,
}

impl CaseResult {
    fn requests(&self) -> usize {
        self.latencies.len()
    }

    fn rate(&self) -> f64 {
        self.requests() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile (0..=1) in milliseconds.
    fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * self.latencies.len() as f64).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[rank - 1] as f64 / 1e6
    }

    fn bytes_per_response(&self) -> u64 {
        self.bytes / self.requests().max(1) as u64
    }

    fn us_per_request(&self, cpu_secs: f64) -> f64 {
        cpu_secs * 1e6 / self.requests().max(1) as f64
    }

    /// CPU seconds as cores busy on average over the window.
    fn cores(&self, cpu_secs: f64) -> f64 {
        cpu_secs / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Checks one answer of the case before loading it, and returns the ETag the
/// 304 case sends.
async fn validate(addr: SocketAddr, case: Case, skills: usize, etag: Option<&str>) -> anyhow::Result<()> {
    let mut conn = connect(addr).await?;
    let (status, _, body) = fetch(&mut conn, addr, case.path(), etag).await?;
    ensure!(status == case.expect(), "{}: expected {}, got {status}", case.label(), case.expect());
    match case {
        Case::Manifest => {
            let manifest: serde_json::Value = serde_json::from_slice(&body)?;
            ensure!(
                manifest["skillCount"] == skills,
                "{}: skillCount is {}",
                case.label(),
                manifest["skillCount"]
            );
        }
        Case::Skills => {
            let update: serde_json::Value = serde_json::from_slice(&body)?;
            let served = update["skills"].as_array().map_or(0, Vec::len);
            ensure!(served == skills, "{}: {served} skills served, {skills} stored", case.label());
        }
        Case::NotModified => ensure!(body.is_empty(), "{}: a 304 with a body", case.label()),
    }
    Ok(())
}

/// Runs `case` with `settings.connections` closed-loop clients.
async fn run_case(
    settings: &Settings,
    node: &NodeProcess,
    case: Case,
    skills: usize,
    etag: Option<&str>,
) -> anyhow::Result<CaseResult> {
    validate(node.addr, case, skills, etag).await?;
    let mut conns = Vec::with_capacity(settings.connections);
    for _ in 0..settings.connections {
        conns.push(connect(node.addr).await?);
    }
    let sampler = RssSampler::start(node.pid());
    let begin = Instant::now();
    let measure_from = begin + settings.warmup;
    let end = measure_from + settings.secs;
    let workers: Vec<_> = conns
        .into_iter()
        .map(|conn| {
            let etag = etag.map(str::to_owned);
            tokio::spawn(worker(conn, node.addr, case, etag, measure_from, end))
        })
        .collect();
    tokio::time::sleep_until(measure_from.into()).await;
    let cpu = CpuMeter::begin(node.pid());
    let mut result = CaseResult {
        case,
        skills,
        latencies: Vec::new(),
        elapsed: Duration::ZERO,
        bytes: 0,
        errors: 0,
        cpu: CpuUse::default(),
        rss_max_kib: 0,
    };
    let mut last_done = measure_from;
    for worker in workers {
        let w = worker.await?;
        result.latencies.extend(w.latencies);
        result.bytes += w.bytes;
        result.errors += w.errors;
        last_done = last_done.max(w.last_done);
    }
    result.cpu = cpu.end();
    result.rss_max_kib = sampler.finish();
    result.elapsed = last_done - measure_from;
    result.latencies.sort_unstable();
    Ok(result)
}

/// What one connection measured.
struct WorkerResult {
    latencies: Vec<u64>,
    bytes: u64,
    errors: u64,
    last_done: Instant,
}

/// Sends requests back to back until `end`; records those started after `measure_from`.
async fn worker(
    mut conn: Conn,
    addr: SocketAddr,
    case: Case,
    etag: Option<String>,
    measure_from: Instant,
    end: Instant,
) -> WorkerResult {
    let mut out = WorkerResult { latencies: Vec::new(), bytes: 0, errors: 0, last_done: measure_from };
    loop {
        let sent = Instant::now();
        if sent >= end {
            break;
        }
        let exchange = async {
            conn.ready().await?;
            let response = conn.send_request(get(addr, case.path(), etag.as_deref())).await?;
            let status = response.status();
            Ok::<_, hyper::Error>((status, drain(response.into_body()).await?))
        };
        let answer = tokio::time::timeout(REQUEST_LIMIT, exchange).await.ok().and_then(Result::ok);
        let done = Instant::now();
        let measured = sent >= measure_from;
        match answer {
            Some((status, bytes)) => {
                if measured {
                    out.latencies.push((done - sent).as_nanos() as u64);
                    out.bytes += bytes;
                    out.last_done = done;
                    out.errors += u64::from(status != case.expect());
                }
            }
            None => {
                out.errors += 1;
                // The connection is gone or stuck; a closed-loop client opens another.
                match connect(addr).await {
                    Ok(fresh) => conn = fresh,
                    Err(_) => break,
                }
            }
        }
    }
    out
}

/// Everything measured on one node.
struct Phase {
    skills: usize,
    load: LoadResult,
    cases: Vec<CaseResult>,
    /// VmHWM of the node after the cases: its peak resident memory, in KiB.
    peak_kib: u64,
    burst: Burst,
}

async fn phase(settings: &Settings, skills: usize) -> anyhow::Result<Phase> {
    println!("\n== {skills} skills: fresh node");
    let packets = skill_packets(0..skills);
    let doc_bytes = packets.iter().map(|p| p.skill_body.len()).sum::<usize>() / skills.max(1);
    let bodies = update_bodies(packets)?;
    println!(
        "skills: SKILL.md {doc_bytes} B on average, {} B per packet as JSON",
        bodies.iter().map(Bytes::len).sum::<usize>() / skills.max(1)
    );
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref()).await?;
    println!("node pid {} on http://{}", node.pid(), node.addr);
    let load = load(&node, &bodies, skills).await?;
    drop(bodies);
    print_load(&load);
    let etag = {
        let mut conn = connect(node.addr).await?;
        let (status, etag, _) = fetch(&mut conn, node.addr, "/ecp/skills", None).await?;
        ensure!(status == StatusCode::OK, "GET /ecp/skills answered {status}");
        etag.context("GET /ecp/skills sent no ETag")?
    };
    let mut cases = Vec::new();
    for case in Case::ALL {
        let etag = (case == Case::NotModified).then_some(etag.as_str());
        let result = run_case(settings, &node, case, skills, etag).await?;
        println!(
            "{:<20} {:>9.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  {:>9} B/resp  \
             CPU µs/req node {:>6.1} client {:>6.1}  others {:.2} cores  steal {:.2} cores  \
             node RSS max {:.1} MB{}",
            case.label(),
            result.rate(),
            result.quantile_ms(0.5),
            result.quantile_ms(0.99),
            result.quantile_ms(1.0),
            result.bytes_per_response(),
            result.us_per_request(result.cpu.node),
            result.us_per_request(result.cpu.client),
            result.cores(result.cpu.others),
            result.cores(result.cpu.steal),
            mib(result.rss_max_kib),
            if result.errors > 0 { format!("  ERRORS {}", result.errors) } else { String::new() },
        );
        cases.push(result);
    }
    let (rss, peak_kib) = memory_kib(node.pid());
    println!("node memory after the cases: VmRSS {:.1} MB, VmHWM (peak) {:.1} MB", mib(rss), mib(peak_kib));
    let burst = burst_after_push(settings, &node, skills).await?;
    println!(
        "push 1 skill, then {} concurrent GET /ecp/skills on the stale cache: all answered in {:.0} ms; \
         node VmHWM now {:.1} MB",
        settings.connections,
        burst.elapsed.as_secs_f64() * 1e3,
        mib(burst.peak_kib)
    );
    drop(node);
    Ok(Phase { skills, load, cases, peak_kib, burst })
}

/// Prints one load's figures.
fn print_load(load: &LoadResult) {
    println!(
        "load: {} skills in {} batches of {BATCH}: {:.0} ms, {:.0} skills/s; batch mean {:.1} ms \
         (first ten) / {:.1} ms (last ten), slowest {:.1} ms; {:.1} MB sent; CPU: node {:.2} s, \
         other processes {:.2} s, steal {:.2} s; node RSS max {:.1} MB",
        load.skills,
        load.skills.div_ceil(BATCH),
        load.elapsed.as_secs_f64() * 1e3,
        load.skills as f64 / load.elapsed.as_secs_f64(),
        load.mean_of_ten_ms(false),
        load.mean_of_ten_ms(true),
        load.slowest_batch().as_secs_f64() * 1e3,
        load.bytes as f64 / 1e6,
        load.cpu.node,
        load.cpu.others,
        load.cpu.steal,
        mib(load.rss_max_kib),
    );
}

/// `ECP_BENCH_LOAD_ONLY`: a fresh node loaded with `skills`, and nothing else.
async fn load_alone(settings: &Settings, skills: usize) -> anyhow::Result<()> {
    let bodies = update_bodies(skill_packets(0..skills))?;
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref()).await?;
    println!("node pid {} on http://{}", node.pid(), node.addr);
    hook("ECP_BENCH_BEFORE_LOAD", node.pid())?;
    let load = load(&node, &bodies, skills).await?;
    hook("ECP_BENCH_AFTER_LOAD", node.pid())?;
    print_load(&load);
    Ok(())
}

/// Runs the shell command in the variable `var`, if set, with `ECP_NODE_PID`.
fn hook(var: &str, pid: u32) -> anyhow::Result<()> {
    let Ok(script) = std::env::var(var) else { return Ok(()) };
    let status = Command::new("sh").args(["-c", &script]).env("ECP_NODE_PID", pid.to_string()).status()?;
    ensure!(status.success(), "{var} failed: {status}");
    Ok(())
}

/// A push, then every connection asking for the full skill set at once.
struct Burst {
    elapsed: Duration,
    /// VmHWM afterwards, in KiB.
    peak_kib: u64,
}

/// Pushes one new skill, so the cached `GET /ecp/skills` answer is stale,
/// then sends `settings.connections` of those GETs at the same moment: the
/// memory a node needs when peers pull right after a change.
async fn burst_after_push(settings: &Settings, node: &NodeProcess, skills: usize) -> anyhow::Result<Burst> {
    load(node, &update_bodies(skill_packets(skills..skills + 1))?, 1).await?;
    let mut conns = Vec::with_capacity(settings.connections);
    for _ in 0..settings.connections {
        conns.push(connect(node.addr).await?);
    }
    let started = Instant::now();
    let gets: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let addr = node.addr;
            tokio::spawn(async move { fetch(&mut conn, addr, "/ecp/skills", None).await.map(|r| r.0) })
        })
        .collect();
    for get in gets {
        let status = get.await??;
        ensure!(status == StatusCode::OK, "GET /ecp/skills after a push answered {status}");
    }
    Ok(Burst { elapsed: started.elapsed(), peak_kib: memory_kib(node.pid()).1 })
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ---------------------------------------------------------------- report

/// One goal of the issue: a figure, its target, whether it was met.
struct Goal {
    what: String,
    measured: String,
    target: String,
    met: Option<bool>,
}

/// The result of `c` on `p`, unless it had errors (then its figures mean nothing).
fn case(p: &Phase, c: Case) -> Option<&CaseResult> {
    p.cases.iter().find(|r| r.case == c).filter(|r| r.errors == 0)
}

fn goals(phases: &[Phase]) -> Vec<Goal> {
    let mut goals = Vec::new();
    for p in phases {
        let n = p.skills;
        let rate = |c: Case, min: f64, goals: &mut Vec<Goal>| {
            let r = case(p, c);
            goals.push(Goal {
                what: format!("{n} skills: {} req/s", c.label()),
                measured: r.map_or("errors".into(), |r| format!("{:.0}", r.rate())),
                target: format!("≥ {min:.0}"),
                met: Some(r.is_some_and(|r| r.rate() >= min)),
            });
        };
        if n == 1_000 {
            rate(Case::Manifest, 10_000.0, &mut goals);
            let r = case(p, Case::Manifest);
            goals.push(Goal {
                what: format!("{n} skills: {} p99", Case::Manifest.label()),
                measured: r.map_or("errors".into(), |r| format!("{:.2} ms", r.quantile_ms(0.99))),
                target: "< 10 ms".into(),
                met: Some(r.is_some_and(|r| r.quantile_ms(0.99) < 10.0)),
            });
            rate(Case::Skills, 500.0, &mut goals);
            rate(Case::NotModified, 20_000.0, &mut goals);
        }
        if n == 10_000 {
            rate(Case::Skills, 50.0, &mut goals);
            rate(Case::NotModified, 20_000.0, &mut goals);
            let secs = p.load.elapsed.as_secs_f64();
            goals.push(Goal {
                what: format!("load {n} skills in batches of {BATCH}"),
                measured: format!("{secs:.2} s ({:.0} skills/s)", n as f64 / secs),
                target: "≤ 2 s".into(),
                met: Some(secs <= 2.0),
            });
            let mb = p.peak_kib as f64 / 1024.0;
            goals.push(Goal {
                what: format!("{n} skills: node peak RSS (VmHWM) under load"),
                measured: format!("{mb:.1} MB"),
                target: "≤ 100 MB".into(),
                met: Some(mb <= 100.0),
            });
            let mb = p.burst.peak_kib as f64 / 1024.0;
            goals.push(Goal {
                what: format!("{n} skills: node peak RSS after a push and a burst of GET /ecp/skills"),
                measured: format!("{mb:.1} MB"),
                target: "≤ 100 MB".into(),
                met: Some(mb <= 100.0),
            });
        }
    }
    goals
}

fn report(settings: &Settings, phases: &[Phase]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### http_load: {} connections, {} s per case, client threads {}\n",
        settings.connections,
        settings.secs.as_secs_f64(),
        settings.client_threads
    );
    let _ = writeln!(
        out,
        "| skills | case | req/s | p50 ms | p99 ms | max ms | bytes/resp | node CPU µs/req | \
         client CPU µs/req | others' CPU, cores | node RSS max MB |"
    );
    let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in phases {
        for r in &p.cases {
            let _ = writeln!(
                out,
                "| {} | {}{} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {:.1} | {:.1} | {:.2} | {:.1} |",
                r.skills,
                r.case.label(),
                if r.errors > 0 { format!(" ({} errors)", r.errors) } else { String::new() },
                r.rate(),
                r.quantile_ms(0.5),
                r.quantile_ms(0.99),
                r.quantile_ms(1.0),
                r.bytes_per_response(),
                r.us_per_request(r.cpu.node),
                r.us_per_request(r.cpu.client),
                r.cores(r.cpu.others + r.cpu.steal),
                mib(r.rss_max_kib),
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| skills | load time | skills/s | slowest batch | node CPU | others' CPU | node peak RSS (VmHWM) | \
         VmHWM after push + burst | burst time |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in phases {
        let _ = writeln!(
            out,
            "| {} | {:.0} ms | {:.0} | {:.1} ms | {:.2} s | {:.2} s | {:.1} MB | {:.1} MB | {:.0} ms |",
            p.skills,
            p.load.elapsed.as_secs_f64() * 1e3,
            p.skills as f64 / p.load.elapsed.as_secs_f64(),
            p.load.slowest_batch().as_secs_f64() * 1e3,
            p.load.cpu.node,
            p.load.cpu.others + p.load.cpu.steal,
            mib(p.peak_kib),
            mib(p.burst.peak_kib),
            p.burst.elapsed.as_secs_f64() * 1e3,
        );
    }
    if settings.judge {
        let _ = writeln!(out, "\n| goal | measured | target | result |");
        let _ = writeln!(out, "|---|---:|---:|---|");
        for g in goals(phases) {
            let result = match g.met {
                Some(true) => "PASS",
                Some(false) => "MISS",
                None => "-",
            };
            let _ = writeln!(out, "| {} | {} | {} | {result} |", g.what, g.measured, g.target);
        }
        let _ = writeln!(out, "\n{GO_REFERENCE}");
    }
    out
}

/// Prints how to check the figures with `wrk`, when it is installed.
fn wrk_hint() {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("wrk").is_file()));
    if on_path {
        println!(
            "wrk is installed; for an independent check, start a node and load it, then e.g.:\n  \
             ecp-node --data /tmp/ecp-wrk serve --listen 127.0.0.1:7327 &\n  \
             wrk -t1 -c16 -d5s --latency http://127.0.0.1:7327/ecp/manifest\n  \
             wrk -t1 -c16 -d5s --latency http://127.0.0.1:7327/ecp/skills\n  \
             wrk -t1 -c16 -d5s --latency -H 'If-None-Match: <ETag of /ecp/skills>' \
             http://127.0.0.1:7327/ecp/skills"
        );
    }
}
