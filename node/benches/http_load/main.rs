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
//!
//! # Layout
//!
//! - `main.rs`: settings, and the run: a phase per store size.
//! - `node`: process control — start an `ecp-node`, wait for it, kill it.
//! - `sampler`: the node's memory and everyone's CPU time, from `/proc`.
//! - `client`: keep-alive HTTP/1.1 connections and GETs.
//! - `skills`: the skills pushed, as update bodies.
//! - `load`: pushing them, timed.
//! - `cases`: the closed-loop GET cases and the burst after a push.
//! - `report`: the lines and tables printed.

mod cases;
mod client;
mod load;
mod node;
mod report;
mod sampler;
mod skills;

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context as _, ensure};
use hyper::StatusCode;
use hyper::body::Bytes;

use crate::cases::{Burst, Case, CaseResult, burst_after_push, run_case};
use crate::client::{connect, fetch};
use crate::load::{LoadResult, load};
use crate::node::{NodeProcess, UNLIMITED};
use crate::report::{mib, print_case, print_load, report, wrk_hint};
use crate::sampler::memory_kib;
use crate::skills::{BATCH, skill_packets, update_bodies};

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
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), UNLIMITED, &[]).await?;
    println!("node pid {} on http://{}", node.pid(), node.addr);
    let load = load(&node, &bodies, skills).await?;
    drop(bodies);
    print_load(&load);
    println!("data folder after the load: {:.1} MB", node.data_bytes() as f64 / 1e6);
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
        print_case(&result);
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

/// `ECP_BENCH_LOAD_ONLY`: a fresh node loaded with `skills`, and nothing else.
async fn load_alone(settings: &Settings, skills: usize) -> anyhow::Result<()> {
    let bodies = update_bodies(skill_packets(0..skills))?;
    let node = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), UNLIMITED, &[]).await?;
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
