//! Mesh benchmark (#18 item 4): real `ecp-node` processes on 127.0.0.1 in
//! a seeded random graph in which every node has 3 or 4 neighbours, each
//! peering with its neighbours through a proxy per link that counts and
//! can cut (`links.rs`).
//!
//! `cargo bench -p ecp-node --bench mesh -- --nodes 100` (defaults:
//! `--nodes 100 --seed 18 --kill 10 --partition 30`). Data folders go
//! under `ECP_BENCH_DIR` (else the temporary folder) and are removed after;
//! `ECP_NODE_BIN` replaces the bench build's `ecp-node`. The mesh starts
//! pushing on change and pulling every 1 s, and waits until every node has
//! pulled from each of its peers (so each knows its peers' instances, as
//! in a mesh that has run a while); then, with the peers files rewritten
//! and reloaded between the steps:
//!
//! 1. push: pushes on change, pulls hourly. A new skill at one node must
//!    be stored by every node in < 2 s; what it cost the nodes (CPU,
//!    pushes received and made, merge decisions) is printed beside.
//! 2. pull: pulls every 1 s, no pushes. A new skill must be everywhere in
//!    ≤ (diameter + 1) s; then, idle, one round costs ≤ 1 KB per peer on
//!    the wire (both ways, counted by the links); each node's memory.
//! 3. faults: pushes on change and pulls every 1 s; `faults.rs`: kill -9,
//!    a partition, the heal and the restart, with the time each
//!    convergence took. It fails the bench if a node does not converge or
//!    an acknowledged skill is missing.
//!
//! Figures are printed beside their goals as met or MISSED (a missed goal
//! does not fail the bench: shared machines are noisy), with the load
//! average. Nothing leaves 127.0.0.1.
//!
//! # Layout
//!
//! - `main.rs`: arguments, the three steps, the report.
//! - `graph.rs`: the random graph, its diameter, who dies, the two halves.
//! - `links.rs`: the proxy per link: counts, cuts.
//! - `nodes.rs`: the node processes, kill and restart, skills in and out,
//!   convergence.
//! - `probe.rs`: a skill's spread, an idle round's bytes, memory.
//! - `faults.rs`: the faults scenario (the integration test's as well).

mod faults;
mod graph;
mod links;
mod nodes;
mod probe;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

use graph::Graph;
use nodes::{Mesh, Settings};

/// The longest wait for a mesh to reach its first rounds, or to converge.
const WITHIN: Duration = Duration::from_secs(300);
/// Goal: a pushed skill at every node within this.
const PUSH_GOAL: Duration = Duration::from_secs(2);
/// Goal: an idle round's bytes per peer.
const IDLE_GOAL_BYTES: f64 = 1024.0;

/// The command line.
struct Args {
    nodes: usize,
    seed: u64,
    kill: usize,
    partition: Duration,
}

fn args() -> Result<Args, String> {
    let mut args = Args { nodes: 100, seed: 18, kill: 10, partition: Duration::from_secs(30) };
    let mut words = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(flag) = words.next() {
        let value = words.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number =
            |v: &str| v.parse::<u64>().map_err(|_| format!("{flag} takes a whole number, not {v:?}"));
        match flag.as_str() {
            "--nodes" => args.nodes = number(&value)? as usize,
            "--seed" => args.seed = number(&value)?,
            "--kill" => args.kill = number(&value)? as usize,
            "--partition" => args.partition = Duration::from_secs(number(&value)?),
            _ => {
                return Err(format!(
                    "unknown argument {flag} (--nodes N, --seed S, --kill K, --partition SECONDS)"
                ));
            }
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("mesh bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    match runtime.block_on(bench(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mesh bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

async fn bench(args: &Args) -> Result<(), String> {
    let bin = std::env::var_os("ECP_NODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")));
    let root = match std::env::var_os("ECP_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .map_err(|e| format!("no folder for the nodes: {e}"))?;
    let graph = Graph::random(args.nodes, args.seed)?;
    let diameter = graph.diameter();
    let edges = graph.edges().count();
    println!(
        "mesh bench: {} nodes, random graph of degree 3-4 (seed {}): {edges} edges, diameter {diameter}; load average {}",
        args.nodes,
        args.seed,
        load()
    );
    let mut rng = StdRng::seed_from_u64(args.seed);
    let origin = 0;
    let hour = Duration::from_secs(3600);
    let second = Duration::from_secs(1);
    let timeout = Duration::from_secs(10);

    let both = Settings { interval: second, push: true, timeout };
    let mut mesh = Mesh::start(&bin, root.path(), graph, &both).await?;
    mesh.settle(WITHIN).await?;
    println!("mesh started and every node pulled from each of its peers (load {})", load());

    // 1. push
    mesh.reconfigure(&Settings { interval: hour, push: true, timeout }, WITHIN).await?;
    let counted = probe::counted(&mesh).await;
    let cpu = probe::cpu(&mesh);
    let push = probe::spread(&mesh, origin, "push-probe", WITHIN).await?;
    let push_cpu = probe::cpu(&mesh).saturating_sub(cpu);
    let counted = probe::counted(&mesh).await.since(&counted);
    println!(
        "push (pulls hourly): stored at its origin after {}, at the median node after {}, at the last node after {}: goal < {} {} (load {})",
        secs(push.at_origin),
        secs(push.median),
        secs(push.everywhere),
        secs(PUSH_GOAL),
        verdict(push.everywhere < PUSH_GOAL),
        load()
    );
    println!("push: the last node at each distance from the origin (hops): {}", push.hops());
    println!(
        "push: the {} nodes used {} of CPU from the skill's creation until every node had it (and the bench saw it)",
        args.nodes,
        secs(push_cpu)
    );
    println!(
        "push: {}; {} pushes made; merge decisions {} new, {} unchanged (copies of what was held), {} rejected",
        counted.received(),
        counted.pushes,
        counted.new,
        counted.unchanged,
        counted.rejected
    );

    // 2. pull, idle, memory
    mesh.reconfigure(&Settings { interval: second, push: false, timeout }, WITHIN).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pull = probe::spread(&mesh, origin, "pull-probe", WITHIN).await?;
    let goal = second * (diameter as u32 + 1);
    println!(
        "pull (every 1 s, no pushes): stored at the median node after {}, at the last node after {}: goal ≤ {} (diameter + 1 s) {} (load {})",
        secs(pull.median),
        secs(pull.everywhere),
        secs(goal),
        verdict(pull.everywhere <= goal),
        load()
    );
    println!("pull: the last node at each distance from the origin (hops): {}", pull.hops());
    let idle = probe::idle(&mesh, Duration::from_secs(3), Duration::from_secs(10)).await;
    let per_peer = idle.per_peer_round();
    let degree = idle.links as f64 / args.nodes as f64;
    println!(
        "idle over {}: {} bytes, {} rounds (manifest GETs) and {} other requests on {} links: \
         {per_peer:.0} B per peer per round, {:.0} B per node per round (mean degree {degree:.2}): goal ≤ {IDLE_GOAL_BYTES} B per peer {} (load {})",
        secs(idle.window),
        idle.bytes,
        idle.rounds,
        idle.other_requests,
        idle.links,
        per_peer * degree,
        verdict(per_peer <= IDLE_GOAL_BYTES),
        load()
    );
    let mut memory = probe::memory(&mesh);
    memory.sort();
    let mib = |kib: u64| kib as f64 / 1024.0;
    if let (Some(least), Some(most)) = (memory.first(), memory.last()) {
        let total: u64 = memory.iter().map(|m| m.0).sum();
        let peak = memory.iter().map(|m| m.1).max().unwrap_or_default();
        println!(
            "memory per node (RSS, idle): min {:.1} MiB, median {:.1} MiB, max {:.1} MiB, all {} nodes {:.0} MiB; highest peak (VmHWM) {:.1} MiB",
            mib(least.0),
            mib(memory[memory.len() / 2].0),
            mib(most.0),
            memory.len(),
            mib(total),
            mib(peak)
        );
    }

    // 3. faults
    mesh.reconfigure(&both, WITHIN).await?;
    let plan = faults::Plan {
        kills: args.kill,
        partition: args.partition,
        skills_per_side: 10,
        converge_within: WITHIN,
    };
    let outcome = faults::run(&mut mesh, &plan, &mut rng).await?;
    println!(
        "faults (push on change, pull every 1 s, timeout {}): kill -9 of nodes {:?}; partition for {} into {} + {} live nodes, {} links cut (black holes), \
         {} skills made on each side; {} leaked across the cut",
        secs(timeout),
        outcome.killed,
        secs(outcome.partition),
        outcome.sides.0,
        outcome.sides.1,
        outcome.cut_links,
        plan.skills_per_side,
        outcome.leaked.len()
    );
    println!(
        "faults: after the heal, all {} live nodes serve the same {} skills with every acknowledged version in {}; \
         after the restart of the {} killed, all {} nodes serve the same {} (their last acknowledged skills included) in {}: \
         {} acknowledged versions, none lost (load {})",
        args.nodes - outcome.killed.len(),
        outcome.skills.0,
        secs(outcome.healed_in),
        outcome.killed.len(),
        args.nodes,
        outcome.skills.1,
        secs(outcome.restarted_in),
        outcome.acknowledged,
        load()
    );
    Ok(())
}
