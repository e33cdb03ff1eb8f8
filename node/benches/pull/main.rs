//! Pull benchmark (#18 items 1–2): an empty node pulls N skills from a
//! source node, N = 1,000 and 10,000, against the real `ecp-node` binary.
//!
//! Run with `cargo bench -p ecp-node --bench pull` (sizes as arguments:
//! `cargo bench -p ecp-node --bench pull -- 1000`).
//!
//! For each N it starts a source node (`ecp-node serve` on 127.0.0.1, the
//! limits on origins and senders off) and loads it with `POST /ecp/skills`
//! in batches of 100 (the skills of `http_load`, about 1.7 KB each). Then
//! `ecp-node --init --data <new> pull <source> --trust 1` runs into a fresh
//! data folder on the same disk, timed from spawn to exit; its answer must
//! count N new skills. The puller runs under `sh`, which reads its own
//! `/proc/<pid>/io` after reaping it: a reaped child's I/O is added to its
//! parent's, so `write_bytes` there is the pull's (the bytes it caused to be
//! written to disk, SQLite and the skills folder alike). Then the data folder
//! is measured: the database (its files, WAL included, and blobs) and the
//! skills folder, in bytes allocated on disk and in bytes of content, against
//! the body bytes of the N skills.
//!
//! With `ECP_REFERENCE_BIN` naming a Go reference binary, each N is pulled by
//! it too, in the same run, from the same source (a Go node pulls our node
//! as it pulls its own kind, `GET /ecp/skills`; `/work/shared/ECP.md`): it is
//! started as a server whose federator has the source as its one peer, by
//! the command in `ECP_REFERENCE_PULL` (placeholders `{bin}`, `{data}`,
//! `{port}`, `{peer}`; default `{bin} serve --port {port} --data {data}
//! --peer {peer} --interval 1s`), and timed from spawn until its
//! `GET /ecp/manifest` counts N skills. Its data folder and its
//! `/proc/<pid>/io` are read before it is stopped, and the ratio ecp / Go
//! of the times is printed (goal ≤ 1.0).
//!
//! Goals printed as met or missed (the bench never fails on them): store ≤
//! 1.5× body bytes, bytes written ≤ 3× body bytes. `ECP_NODE_BIN` measures
//! another `ecp-node` (an older build, for "before"); `ECP_BENCH_DIR` is
//! where the data folders go (default the system temp folder; it must be a
//! disk, not tmpfs, for `write_bytes` to mean anything);
//! `ECP_BENCH_PULL_PREFIX` runs the pull under a profiler (`perf record -g
//! -o pull.perf --`; its own writes are then counted too). Without `--bench`
//! (`cargo test --benches`) it is a smoke test: 200 skills, no reference.
//!
//! # Layout
//!
//! - `main.rs`: the runs and the report.
//! - `folder.rs`: a data folder's bytes, a process's `write_bytes`.
//! - `reference.rs`: the Go reference's pull.
//! - From `http_load/`: `node` (the source process), `client`, `load`,
//!   `sampler` and `skills` (loading it).

// Shared with http_load, which uses all of them: what this bench leaves
// unused is not dead.
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
#[path = "../http_load/skills.rs"]
mod skills;

mod folder;
mod reference;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};

use folder::{Bytes, DataFolder};

/// One N pulled by one implementation.
struct Pulled {
    elapsed: Duration,
    folder: DataFolder,
    written: Option<u64>,
}

/// One N: the source's body bytes and each pull.
struct Run {
    n: usize,
    body_bytes: u64,
    ecp: Pulled,
    reference: Option<anyhow::Result<Pulled>>,
}

fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = match (sizes.is_empty(), bench) {
        (false, _) => sizes,
        (true, true) => vec![1_000, 10_000],
        (true, false) => vec![200],
    };
    let bin = std::env::var_os("ECP_NODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ecp-node")));
    let reference = std::env::var_os("ECP_REFERENCE_BIN").filter(|_| bench).map(PathBuf::from);
    let root = std::env::var_os("ECP_BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    let mut runs = Vec::new();
    for n in sizes {
        eprintln!("pull bench: {n} skills …");
        match runtime.block_on(run(&bin, reference.as_deref(), &root, n)) {
            Ok(r) => runs.push(r),
            Err(e) => {
                eprintln!("pull bench: {n} skills: {e:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    report(&bin, reference.as_deref(), &runs);
    ExitCode::SUCCESS
}

async fn run(bin: &Path, reference: Option<&Path>, root: &Path, n: usize) -> anyhow::Result<Run> {
    // Trust 1 in the loading client: served at 0.9, the skills pass the puller's threshold.
    let env = [node::UNLIMITED, &[("ECP_POLICY_DEFAULT_TRUST", "1")]].concat();
    let source = node::NodeProcess::start(bin, Some(root), &env, &[]).await?;
    let packets = skills::skill_packets(0..n);
    let body_bytes = packets.iter().map(|p| p.skill_body.len() as u64).sum();
    let bodies = skills::update_bodies(packets)?;
    let loaded = load::load(&source, &bodies, n).await?;
    eprintln!("pull bench: source loaded in {:.1} s", loaded.elapsed.as_secs_f64());
    let url = format!("http://{}", source.addr);
    let ecp = pull_ecp(bin, root, &url, n)?;
    let reference = match reference {
        Some(go) => Some(reference::pull(go, root, &url, n).await),
        None => None,
    };
    Ok(Run { n, body_bytes, ecp, reference })
}

/// `ecp-node pull` into a fresh data folder, under `sh` for its `/proc/<pid>/io`.
fn pull_ecp(bin: &Path, root: &Path, url: &str, n: usize) -> anyhow::Result<Pulled> {
    let dir = tempfile::Builder::new().prefix("ecp-pull-bench-").tempdir_in(root)?;
    let data = dir.path().join("data");
    let io = dir.path().join("io");
    // A profiler to run the pull under, e.g. `perf record -g -o pull.perf --`.
    let prefix = std::env::var("ECP_BENCH_PULL_PREFIX").unwrap_or_default();
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#""$@"; rc=$?; cat /proc/$$/io > "$ECP_BENCH_IO"; exit $rc"#)
        .arg("sh")
        .args(prefix.split_whitespace())
        .arg(bin)
        .arg("--init")
        .arg("--data")
        .arg(&data)
        .args(["pull", url, "--trust", "1", "--json"])
        .env("ECP_BENCH_IO", &io)
        .env("RUST_LOG", "warn")
        .envs(node::UNLIMITED.iter().copied())
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_SKILLS_DIR")
        .env_remove("ECP_PEER_SECRET")
        .stdin(Stdio::null())
        .output()
        .context("cannot run the pull")?;
    let elapsed = started.elapsed();
    ensure!(out.status.success(), "the pull failed: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("the pull's --json answer is not JSON")?;
    let new = report["result"]["newSkills"].as_u64().unwrap_or(0);
    if new != n as u64 {
        bail!("the pull installed {new} new skills of {n}: {report}");
    }
    let written = folder::write_bytes(&std::fs::read_to_string(&io).unwrap_or_default());
    Ok(Pulled { elapsed, folder: DataFolder::measure(&data, &data.join("skills")), written })
}

fn report(bin: &Path, reference: Option<&Path>, runs: &[Run]) {
    println!();
    println!(
        "pull bench: {} pulling into an empty node (bytes: on disk, content in brackets)",
        bin.display()
    );
    let goal = |met: bool| if met { "met" } else { "MISSED" };
    for r in runs {
        let body = r.body_bytes as f64;
        let e = &r.ecp;
        let store = e.folder.store.on_disk as f64 / body;
        println!("\nN = {}: body bytes {} ({:.1} MB)", r.n, r.body_bytes, body / 1e6);
        println!("  ecp pull            {:>8.2} s", e.elapsed.as_secs_f64());
        println!(
            "  store (db, blobs)   {}  {store:.2}× body   goal ≤ 1.5×: {}",
            e.folder.store,
            goal(store <= 1.5)
        );
        println!(
            "  skills folder       {}  {:.2}× body",
            e.folder.skills,
            e.folder.skills.on_disk as f64 / body
        );
        match e.written {
            Some(w) => {
                let ratio = w as f64 / body;
                println!(
                    "  bytes written       {w:>12}  {ratio:.2}× body   goal ≤ 3×: {}",
                    goal(ratio <= 3.0)
                );
                // A fresh pull writes each skill's file once, so the folder
                // wrote its files' pages; the store (database, WAL, blobs)
                // the rest.
                let folder = e.folder.skills.pages.min(w);
                println!(
                    "    skills folder     {folder:>12}  {:.2}× body   (its files' {}-byte pages)",
                    folder as f64 / body,
                    folder::PAGE
                );
                println!("    store             {:>12}  {:.2}× body", w - folder, (w - folder) as f64 / body);
            }
            None => println!("  bytes written       unknown (no /proc/<pid>/io)"),
        }
        match &r.reference {
            None => {}
            Some(Err(e)) => println!("  reference           failed: {e:#}"),
            Some(Ok(go)) => {
                let ratio = e.elapsed.as_secs_f64() / go.elapsed.as_secs_f64();
                println!(
                    "  reference pull      {:>8.2} s   ecp / reference = {ratio:.2}   goal ≤ 1.0: {}",
                    go.elapsed.as_secs_f64(),
                    goal(ratio <= 1.0)
                );
                println!("  reference folder    {}", go.folder.total());
                if let Some(w) = go.written {
                    println!("  reference written   {w:>12}");
                }
            }
        }
    }
    if reference.is_none() {
        println!("\n(no ECP_REFERENCE_BIN: the Go reference was not run)");
    }
}

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:>12} [{:>12}]", self.on_disk, self.content)
    }
}
