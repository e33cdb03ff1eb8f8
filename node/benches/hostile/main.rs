//! Hostile-traffic benchmarks of `ecp-node` against the real binary (#12),
//! not timed in CI:
//!
//! ```sh
//! cargo bench -p ecp-node --bench hostile -- headers   # item 3
//! cargo bench -p ecp-node --bench hostile -- stalled   # item 6
//! cargo bench -p ecp-node --bench hostile -- soak      # the soak, 30 minutes
//! ```
//!
//! - `headers`: 1,000 connections each sending 390 KiB of a request head
//!   that never ends; the node's peak RSS, and how each connection ended.
//! - `stalled`: 1,030 connections that never finish their headers (from one
//!   address, then from 21), and meanwhile 50 legitimate requests over 25 s,
//!   each on a new connection; how many fail, and the node's log lines.
//! - `soak`: `ECP_SOAK_MINUTES` (30) of mixed hostile and legitimate traffic
//!   against one node, with a second real node pulling from it; peak RSS,
//!   database size, the legitimate requests' p50/p99 and errors.
//!
//! The node runs as a separate process on `127.0.0.1`, with a fresh data
//! folder; attackers connect from other loopback addresses (`127.0.1.x`)
//! so that per-address limits see them as the strangers they are. Settings:
//! `ECP_NODE_BIN` (another binary to measure, e.g. an older build),
//! `ECP_BENCH_DIR` (where data folders go), `ECP_SOAK_MINUTES`.
//!
//! # Layout
//!
//! - `main.rs`: settings and the choice of mode.
//! - `raw`: raw TCP connections from a chosen loopback address, and the
//!   request heads that never end.
//! - `headers`, `stalled`: items 3 and 6.
//! - `soak`: the soak's run and report; `attack` its hostile actors, `legit`
//!   its legitimate ones, `stats` the latencies and counters they keep.
//! - From `http_load/`: `node` (process control), `client` (HTTP/1.1
//!   connections), `sampler` (`/proc`), `skills` (the skills pushed).

// Shared with http_load, which uses all of them: what this bench leaves
// unused is not dead.
#[allow(dead_code)]
#[path = "../http_load/client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../http_load/node.rs"]
mod node;
#[allow(dead_code)]
#[path = "../http_load/sampler.rs"]
mod sampler;
#[path = "../http_load/skills.rs"]
mod skills;

mod attack;
mod headers;
mod legit;
mod raw;
mod soak;
mod stalled;
mod stats;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hostile: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// What the run is told by the environment and the command line.
pub(crate) struct Settings {
    pub(crate) bin: PathBuf,
    pub(crate) data_root: Option<PathBuf>,
    /// `cargo bench` passes `--bench`; `cargo test --benches` does not, and
    /// then every mode runs briefly, as a smoke test.
    pub(crate) smoke: bool,
    pub(crate) soak: Duration,
}

fn run() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let smoke = !std::env::args().any(|a| a == "--bench");
    let bin = std::env::var_os("ECP_NODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")));
    ensure!(bin.is_file(), "node binary {} not found; build it or set ECP_NODE_BIN", bin.display());
    let minutes = match std::env::var("ECP_SOAK_MINUTES") {
        Ok(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|m| m.is_finite() && *m > 0.0 && *m <= 24.0 * 60.0)
            .with_context(|| format!("ECP_SOAK_MINUTES={text:?} is not a number of minutes (0–1440)"))?,
        Err(_) => 30.0,
    };
    let soak = if smoke { Duration::from_secs(5) } else { Duration::from_secs_f64(minutes * 60.0) };
    let settings =
        Settings { bin, data_root: std::env::var_os("ECP_BENCH_DIR").map(PathBuf::from), smoke, soak };
    println!("hostile: node {}{}", settings.bin.display(), if smoke { " (smoke mode)" } else { "" });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let modes: Vec<&str> = match args.first().map(String::as_str) {
        Some(mode @ ("headers" | "stalled" | "soak")) => vec![mode],
        Some(other) => bail!("unknown mode {other:?}: use headers, stalled or soak"),
        // `cargo test --benches`: every mode, briefly.
        None if smoke => vec!["headers", "stalled", "soak"],
        // A bare `cargo bench` does not start a half-hour soak unasked.
        None => {
            println!("name a mode: cargo bench -p ecp-node --bench hostile -- headers|stalled|soak");
            return Ok(());
        }
    };
    for mode in modes {
        println!("\n== {mode}");
        match mode {
            "headers" => runtime.block_on(headers::run(&settings))?,
            "stalled" => runtime.block_on(stalled::run(&settings))?,
            _ => runtime.block_on(soak::run(&settings))?,
        }
    }
    Ok(())
}

/// Megabytes of `kib` KiB.
pub(crate) fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}
