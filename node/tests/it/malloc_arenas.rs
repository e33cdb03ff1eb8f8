//! The binary caps glibc's malloc arenas itself (#18 item 3): a real
//! `ecp-node serve` started with no `MALLOC_ARENA_MAX`, its threads busy
//! with concurrent reads, holds one arena besides the main one; with the
//! variable set, the operator's number stands.
//!
//! Arenas are counted from outside, in `/proc/PID/maps`: every arena but the
//! main one (the `brk` heap) lives in heaps that glibc reserves 64 MiB at a
//! time (`HEAP_MAX_SIZE` on 64-bit), `PROT_NONE` at a 64 MiB-aligned
//! address, the part in use made read-write. That layout is glibc's own,
//! not an interface: if a glibc changes it, the uncapped case below finds
//! fewer than two heaps and fails, rather than the capped case passing
//! for nothing.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::future::join_all;

use crate::util::PUSH1;

/// glibc's heap size for the arenas after the first, on 64-bit.
const HEAP: u64 = 64 << 20;

/// The arena heaps in `maps`: an anonymous read-write mapping at a 64 MiB
/// boundary that is either the whole 64 MiB or followed by an anonymous
/// `---p` mapping reaching it.
fn arena_heaps(maps: &str) -> usize {
    let parsed: Vec<(u64, u64, &str, bool)> = maps
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields.first()?.split_once('-')?;
            let start = u64::from_str_radix(start, 16).ok()?;
            let end = u64::from_str_radix(end, 16).ok()?;
            Some((start, end, *fields.get(1)?, fields.len() == 5))
        })
        .collect();
    parsed
        .iter()
        .enumerate()
        .filter(|&(i, &(start, end, perms, anonymous))| {
            if !anonymous || perms != "rw-p" || start % HEAP != 0 {
                return false;
            }
            end - start == HEAP
                || parsed.get(i + 1).is_some_and(|&(next, next_end, next_perms, next_anonymous)| {
                    next == end && next_end == start + HEAP && next_perms == "---p" && next_anonymous
                })
        })
        .count()
}

/// `ecp-node serve` on a fresh data folder with glibc's variables removed
/// and then `env` set; its URL once it listens.
async fn serve(dir: &std::path::Path, env: &[(&str, &str)]) -> (Child, String) {
    let data = dir.join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
        .arg(&data)
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_PEERS")
        .env_remove("ECP_SECRET")
        .env_remove("MALLOC_ARENA_MAX")
        .env_remove("GLIBC_TUNABLES")
        .envs(env.iter().copied())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    tokio::task::spawn_blocking(move || {
        let url = crate::util::server_url(&data, &mut child);
        (child, url)
    })
    .await
    .expect("the node starts")
}

/// Pushes a few skills, then reads the node from 48 connections at once —
/// manifests, listings plain and gzipped, the feed — so that its tokio
/// workers and blocking threads all allocate; the arena heaps after.
async fn heaps_under_load(env: &[(&str, &str)]) -> usize {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (mut child, base) = serve(dir.path(), env).await;
    let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(60)).build().unwrap();
    let pushed =
        http.post(format!("{base}/ecp/skills")).body(PUSH1).send().await.expect("a reply to the push");
    assert_eq!(pushed.status(), 200);
    for _ in 0..3 {
        let reads = (0..48).map(|i| {
            let (path, gzip) = [
                ("/ecp/manifest", false),
                ("/ecp/skills", false),
                ("/ecp/skills", true),
                ("/ecp/skills?since=1", false),
            ][i % 4];
            let request = http.get(format!("{base}{path}"));
            let request = if gzip { request.header("accept-encoding", "gzip") } else { request };
            async move { request.send().await.expect("an answer").status() }
        });
        for status in join_all(reads).await {
            assert_eq!(status, 200);
        }
    }
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).expect("the node's maps");
    child.kill().expect("the node stops");
    child.wait().expect("the node is reaped");
    arena_heaps(&maps)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_started_without_malloc_arena_max_keeps_to_two_arenas_and_the_variable_overrides_it() {
    let uncapped = heaps_under_load(&[("MALLOC_ARENA_MAX", "16")]).await;
    assert!(
        uncapped >= 2,
        "with MALLOC_ARENA_MAX=16 the node's threads made {uncapped} arena heaps: \
         either the load no longer reaches several threads or glibc's heaps are not 64 MiB here"
    );
    let capped = heaps_under_load(&[]).await;
    assert_eq!(
        capped,
        ecp_node::arenas::ARENAS as usize - 1,
        "the node without MALLOC_ARENA_MAX: one arena heap besides the main arena (with 16 allowed: {uncapped})"
    );
}

#[test]
fn arena_heaps_are_told_from_stacks_and_other_mappings() {
    let maps = "\
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
7f3c40000000-7f3c40031000 rw-p 00000000 00:00 0 
7f3c40031000-7f3c44000000 ---p 00000000 00:00 0 
7f3c44000000-7f3c48000000 rw-p 00000000 00:00 0 
7f3c48000000-7f3c48001000 ---p 00000000 00:00 0 
7f3c48001000-7f3c48801000 rw-p 00000000 00:00 0 
7f3c4c000000-7f3c4c021000 rw-p 00000000 00:00 0 
7f3c4c021000-7f3c4d000000 ---p 00000000 00:00 0 
7f3c50000000-7f3c50021000 rw-p 00001000 08:01 1234                       /usr/lib/x.so
";
    // The first two are heaps (part used; all used); then a thread stack
    // (guard below), a reservation short of 64 MiB, a file mapping.
    assert_eq!(arena_heaps(maps), 2);
}
