//! A big node (#18 item 3): 100,000 skills (about 160 MB of bodies) in a
//! real `ecp-node` process, its memory under readers, and a full pull of it.
//!
//! Run with `cargo bench -p ecp-node --bench big` (`ECP_BENCH_SKILLS` sets
//! the size, default 100,000). Against the release build of `ecp-node`
//! (`ECP_NODE_BIN` for another), on `127.0.0.1` only:
//!
//! 1. **Load.** A node (`ecp-node serve`, origin and sender limits off) is
//!    pushed the skills by `POST /ecp/skills` in batches of 100 on one
//!    keep-alive connection — what a user with many skills would do through
//!    the API (`http_load`'s skills, about 1.7 KB each, generated 5,000 at a
//!    time). Timed; every batch must add 100.
//! 2. **Restart.** The node is restarted on its data folder, so that its
//!    VmHWM counts the serving alone, not the load.
//! 3. **Rates.** `GET /ecp/manifest` and `GET /ecp/skills` answered 304 (the
//!    ETag sent), each a closed loop on `ECP_BENCH_CONNECTIONS` (16)
//!    connections for `ECP_BENCH_SECS` (10) seconds.
//! 4. **Readers.** 16 connections each going round the full listing plain
//!    and gzipped, `?since=1` (a run streamed from the feed), a page of 500
//!    and the manifest, for the same time, the node's VmRSS sampled; then
//!    its VmHWM (goal ≤ 200 MB).
//! 5. **Burst.** One more skill pushed, then 16 full listings at once on the
//!    stale cache; VmHWM again.
//! 6. **Pull.** `ecp-node --init --data <new> pull <node> --trust 1` into an
//!    empty data folder, timed from spawn to exit (under `/usr/bin/time`
//!    for its peak RSS when there is one); MB/s of skill bodies. Then the
//!    same pull again: an idle round, which must bring nothing.
//!
//! `ECP_BENCH_DIR` is where the data folders go (default the system temp
//! folder). Without `--bench` (`cargo test --benches`) it is a smoke test:
//! 300 skills, half a second per case, no goals judged.
//!
//! # Layout
//!
//! - `main.rs`: settings, the phases and the report.
//! - `readers.rs`: the mixed readers.
//! - From `http_load/`: `node` (the process), `client`, `load`, `sampler`,
//!   `skills` and `cases` (the closed loops and the burst).

// Shared with http_load, which uses all of them: what this bench leaves
// unused is not dead.
#[allow(dead_code)]
#[path = "../http_load/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../http_load/client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../http_load/load.rs"]
mod load;
#[allow(dead_code)]
#[path = "../http_load/node.rs"]
mod node;
#[allow(dead_code)]
#[path = "../http_load/sampler.rs"]
mod sampler;
#[allow(dead_code)]
#[path = "../http_load/skills.rs"]
mod skills;

mod readers;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};

use crate::cases::{Case, CaseResult, burst_after_push, run_case};
use crate::client::{connect, fetch};
use crate::node::{NodeProcess, UNLIMITED};
use crate::sampler::{RssSampler, memory_kib};
use crate::skills::{skill_packets, update_bodies};

/// Skills generated and pushed at a time: the bench's own memory stays small.
const CHUNK: usize = 5_000;
/// The goal on the serving node's peak RSS, in MB.
const RSS_GOAL_MB: f64 = 200.0;

/// What the run is told by the environment and the command line.
pub(crate) struct Settings {
    bin: PathBuf,
    skills: usize,
    pub(crate) secs: Duration,
    pub(crate) warmup: Duration,
    pub(crate) connections: usize,
    data_root: Option<PathBuf>,
    judge: bool,
}

impl Settings {
    fn from_env() -> anyhow::Result<Settings> {
        let judge = std::env::args().any(|a| a == "--bench");
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str, default: f64| -> anyhow::Result<f64> {
            var(name)
                .map_or(Ok(default), |v| v.parse().with_context(|| format!("{name}={v} is not a number")))
        };
        let secs = number("ECP_BENCH_SECS", if judge { 10.0 } else { 0.5 })?;
        Ok(Settings {
            bin: var("ECP_NODE_BIN")
                .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")), PathBuf::from),
            skills: number("ECP_BENCH_SKILLS", if judge { 100_000.0 } else { 300.0 })? as usize,
            secs: Duration::from_secs_f64(secs),
            warmup: Duration::from_secs_f64((secs / 5.0).min(1.0)),
            connections: number("ECP_BENCH_CONNECTIONS", 16.0)? as usize,
            data_root: var("ECP_BENCH_DIR").map(PathBuf::from),
            judge,
        })
    }
}

/// Everything measured.
#[derive(Default)]
struct Figures {
    body_bytes: u64,
    load: Duration,
    load_hwm_kib: u64,
    data_bytes: u64,
    /// From spawn to `/healthz` answering on the loaded folder.
    restart: Duration,
    /// VmRSS and VmHWM when `/healthz` first answers after the restart.
    ready_kib: (u64, u64),
    idle_kib: u64,
    cases: Vec<CaseResult>,
    readers: Vec<readers::Tally>,
    readers_rss_kib: u64,
    readers_hwm_kib: u64,
    burst_hwm_kib: u64,
    pull: Duration,
    puller_kib: Option<u64>,
    idle_round: String,
    /// `/proc/loadavg`'s one-minute figure at the start and at the end: the
    /// machine's load beside every figure.
    load_average: (String, String),
}

fn main() -> ExitCode {
    let settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("big: {e:#}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    match runtime.block_on(run(&settings)) {
        Ok(figures) => {
            report(&settings, &figures);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("big: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(settings: &Settings) -> anyhow::Result<Figures> {
    let n = settings.skills;
    let env = [UNLIMITED, &[("ECP_POLICY_DEFAULT_TRUST", "1")]].concat();
    let mut node = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), &env, &[]).await?;
    let mut f = Figures::default();
    f.load_average.0 = load_average();
    eprintln!("big: loading {n} skills …");
    let mut from = 0;
    while from < n {
        let to = (from + CHUNK).min(n);
        let packets = skill_packets(from..to);
        f.body_bytes += packets.iter().map(|p| p.skill_body.len() as u64).sum::<u64>();
        let loaded = load::load(&node, &update_bodies(packets)?, to - from).await?;
        f.load += loaded.elapsed;
        from = to;
        eprintln!("big: {to} loaded, {:.1} s", f.load.as_secs_f64());
    }
    f.load_hwm_kib = memory_kib(node.pid()).1;
    f.data_bytes = node.data_bytes();

    f.restart = node.restart().await?;
    f.ready_kib = memory_kib(node.pid());
    // A first manifest and listing, so that the rates measure answers, not the first build.
    let mut conn = connect(node.addr).await?;
    let (_, etag, _) = fetch(&mut conn, node.addr, "/ecp/skills", None).await?;
    f.idle_kib = memory_kib(node.pid()).0;
    eprintln!("big: restarted in {:.1} s, {} MB resident", f.restart.as_secs_f64(), mb(f.idle_kib));
    for (case, tag) in [(Case::Manifest, None), (Case::NotModified, etag.as_deref())] {
        f.cases.push(run_case(settings, &node, case, n, tag).await?);
    }

    let sampler = RssSampler::start(node.pid());
    f.readers = readers::read(node.addr, settings.connections, settings.secs).await?;
    f.readers_rss_kib = sampler.finish();
    f.readers_hwm_kib = memory_kib(node.pid()).1;
    eprintln!("big: readers done, VmHWM {} MB", mb(f.readers_hwm_kib));
    f.burst_hwm_kib = burst_after_push(settings, &node, n).await?.peak_kib;

    let dir = match &settings.data_root {
        Some(root) => tempfile::Builder::new().prefix("ecp-big-pull-").tempdir_in(root)?,
        None => tempfile::Builder::new().prefix("ecp-big-pull-").tempdir()?,
    };
    let url = format!("http://{}", node.addr);
    let (elapsed, answer, kib) = pull(&settings.bin, dir.path(), &url)?;
    let new = answer["result"]["newSkills"].as_u64().unwrap_or(0);
    ensure!(new == n as u64 + 1, "the pull installed {new} new skills of {}: {answer}", n + 1);
    (f.pull, f.puller_kib) = (elapsed, kib);
    let (again, answer, _) = pull(&settings.bin, dir.path(), &url)?;
    ensure!(answer["result"]["newSkills"] == 0, "an idle round brought new skills: {answer}");
    f.idle_round = format!("{:.2} s, {}", again.as_secs_f64(), answer["result"]);
    f.load_average.1 = load_average();
    Ok(f)
}

/// `ecp-node --data <dir>/data pull <url>`: its time, its `--json` answer,
/// and its peak RSS in KiB when `/usr/bin/time` is there to tell it.
fn pull(bin: &Path, dir: &Path, url: &str) -> anyhow::Result<(Duration, serde_json::Value, Option<u64>)> {
    let time = Path::new("/usr/bin/time");
    let peak = dir.join("peak-kib");
    let mut command = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&peak).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let started = Instant::now();
    let out = command
        .arg("--init")
        .arg("--data")
        .arg(dir.join("data"))
        .args(["pull", url, "--trust", "1", "--json"])
        .env("RUST_LOG", "warn")
        .envs(UNLIMITED.iter().copied())
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_SKILLS_DIR")
        .env_remove("ECP_PEER_SECRET")
        .stdin(Stdio::null())
        .output()
        .context("cannot run the pull")?;
    let elapsed = started.elapsed();
    ensure!(out.status.success(), "the pull failed: {}", String::from_utf8_lossy(&out.stderr));
    let answer = serde_json::from_slice(&out.stdout).context("the pull's --json answer is not JSON")?;
    let kib = std::fs::read_to_string(&peak).ok().and_then(|t| t.trim().parse().ok());
    Ok((elapsed, answer, kib))
}

/// The machine's one-minute load average (`/proc/loadavg`), or `?`.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().unwrap_or("?").to_owned()
}

fn mb(kib: u64) -> String {
    format!("{:.1}", kib as f64 * 1024.0 / 1e6)
}

fn report(settings: &Settings, f: &Figures) {
    let n = settings.skills;
    let body_mb = f.body_bytes as f64 / 1e6;
    let goal = |met: bool| match (settings.judge, met) {
        (false, _) => "(smoke)",
        (true, true) => "met",
        (true, false) => "MISSED",
    };
    println!("\nbig: {} | {n} skills, {body_mb:.1} MB of bodies", settings.bin.display());
    println!("load average at the start {}, at the end {}", f.load_average.0, f.load_average.1);
    println!(
        "load (POST /ecp/skills, batches of 100)   {:.1} s, {:.0} skills/s; VmHWM {} MB; data folder {:.1} MB",
        f.load.as_secs_f64(),
        n as f64 / f.load.as_secs_f64().max(1e-9),
        mb(f.load_hwm_kib),
        f.data_bytes as f64 / 1e6
    );
    println!(
        "restart (import of the folder, then /healthz) {:.1} s, VmRSS {} MB, VmHWM {} MB; after one listing VmRSS {} MB",
        f.restart.as_secs_f64(),
        mb(f.ready_kib.0),
        mb(f.ready_kib.1),
        mb(f.idle_kib)
    );
    for c in &f.cases {
        println!(
            "{:<41} {:>8.0} req/s  p50 {:.2} ms  p99 {:.2} ms  errors {}  {} B each",
            c.case.label(),
            c.rate(),
            c.quantile_ms(0.5),
            c.quantile_ms(0.99),
            c.errors,
            c.bytes_per_response()
        );
    }
    println!("{} readers for {:.1} s:", settings.connections, settings.secs.as_secs_f64());
    for (read, t) in readers::READS.iter().zip(&f.readers) {
        println!(
            "  {:<39} {:>6} answers  {:>4} failed  {:>8.1} MB each  slowest {:.2} s",
            read.label,
            t.ok,
            t.failed,
            t.bytes as f64 / t.ok.max(1) as f64 / 1e6,
            t.slowest.as_secs_f64()
        );
    }
    let hwm = |kib: u64| kib as f64 * 1024.0 / 1e6;
    println!(
        "  node VmRSS at most {} MB; VmHWM {} MB   goal ≤ {RSS_GOAL_MB} MB: {}",
        mb(f.readers_rss_kib),
        mb(f.readers_hwm_kib),
        goal(hwm(f.readers_hwm_kib) <= RSS_GOAL_MB)
    );
    println!(
        "a push, then {} full listings at once    VmHWM {} MB   goal ≤ {RSS_GOAL_MB} MB: {}",
        settings.connections,
        mb(f.burst_hwm_kib),
        goal(hwm(f.burst_hwm_kib) <= RSS_GOAL_MB)
    );
    println!(
        "pull into an empty node ({} skills)     {:.1} s, {:.2} MB/s of bodies; puller peak RSS {}",
        n + 1,
        f.pull.as_secs_f64(),
        body_mb / f.pull.as_secs_f64().max(1e-9),
        f.puller_kib.map_or("unknown".into(), |k| format!("{} MB", mb(k)))
    );
    println!("the same pull again (an idle round)      {}", f.idle_round);
}
