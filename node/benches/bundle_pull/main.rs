//! Bundle benchmark (#26): a pull of many skill folders into an empty node,
//! in MB/s, against a plain copy of the same files over loopback in the same
//! run; and the bytes one `SKILL.md` edit in a 5 MB bundle moves by pull and
//! by push.
//!
//! Run with `cargo bench -p ecp-node --bench bundle_pull`
//! (`ECP_BENCH_BUNDLES=100` for a quick run; see `node/benches/README.md`).
//!
//! Real nodes ([`ecp_node::Node`]) serve on 127.0.0.1 ports in this process,
//! each in its own temporary folder; nothing leaves the loopback interface.
//!
//! # Layout
//!
//! - `main.rs`: the phases and the report.
//! - `content.rs`: the generated skill folders.
//! - `copy.rs`: the baseline, a plain HTTP copy of the same files.
//! - the counting proxy (`tests/it/counting_proxy.rs`) and the generated
//!   5 MB folder (`protocol/tests/it/generated_bundle.rs`) are the tests'.

mod content;
mod copy;
#[path = "../../tests/it/counting_proxy.rs"]
mod counting_proxy;
#[path = "../../../protocol/tests/it/generated_bundle.rs"]
mod generated_bundle;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ecp_node::Node;
use ecp_node::config::{Config, PeersConfig};
use ecp_node::federation::{self, Context, PeerSpec, PullReport, PushReport};
use ecp_node::import::Companion;
use ecp_node::store::{OriginLimits, Source};

use counting_proxy::CountingProxy;

/// Bundles of the pull, unless `ECP_BENCH_BUNDLES` says otherwise.
const BUNDLES: usize = 1000;
/// Bundles of a smoke run (`cargo test --benches`).
const SMOKE_BUNDLES: usize = 10;
/// The edited bundle's size.
const EDITED_BYTES: usize = 5 * 1024 * 1024;
/// Most bytes the edit may move (the goal).
const EDIT_GOAL: u64 = 50 * 1000;
/// Longest wait for a skills folder to hold every bundle.
const PROJECTION_DEADLINE: Duration = Duration::from_secs(600);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let bundles = std::env::var("ECP_BENCH_BUNDLES").ok().and_then(|n| n.parse().ok()).unwrap_or(if smoke {
        SMOKE_BUNDLES
    } else {
        BUNDLES
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(run(bundles, smoke));
}

async fn run(bundles: usize, smoke: bool) {
    let base = std::env::var_os("ECP_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let dir = tempfile::tempdir_in(&base).expect("a temporary folder");
    let a = start(dir.path(), "a", |_| {}).await;

    // The source: every bundle in A's store, and its files in a folder for the copy.
    let started = Instant::now();
    let (library, source) = (a.library().clone(), dir.path().join("source"));
    let (files, bytes, paths) =
        tokio::task::spawn_blocking(move || seed(&library, &source, bundles)).await.expect("the seeding");
    wait_projected(a.library().projection().dir(), bundles).await;
    let mb = bytes as f64 / 1e6;
    println!(
        "source: {bundles} bundles, {files} files ({:.1} a bundle), {mb:.1} MB ({:.0} KB a bundle); \
         A stored and projected them in {:.1} s",
        files as f64 / bundles as f64,
        bytes as f64 / bundles as f64 / 1e3,
        started.elapsed().as_secs_f64()
    );

    let copied = copy::copy(&dir.path().join("source"), &paths, &dir.path().join("copy")).await;
    assert_eq!((copied.files, copied.bytes), (files, bytes), "the copy moved every file");
    let copy_rate = mb / copied.elapsed.as_secs_f64();
    println!(
        "copy: {files} files over HTTP, {} in flight: {:.2} s, {copy_rate:.1} MB/s",
        copy::CONNECTIONS,
        copied.elapsed.as_secs_f64()
    );

    let b = start(dir.path(), "b", |_| {}).await;
    let started = Instant::now();
    let (rounds, fetched) = pull_all(&b, &a.url(), bundles).await;
    let pulled = started.elapsed();
    wait_projected(b.library().projection().dir(), bundles).await;
    let projected = started.elapsed();
    let (pull_rate, projected_rate) = (mb / pulled.as_secs_f64(), mb / projected.as_secs_f64());
    println!(
        "pull: {bundles} bundles in {rounds} round(s), {fetched} blobs fetched: merged in {:.2} s ({pull_rate:.1} MB/s), \
         in B's skills folder after {:.2} s ({projected_rate:.1} MB/s)",
        pulled.as_secs_f64(),
        projected.as_secs_f64()
    );
    for node in [a, b] {
        node.node.shutdown().await.expect("the node stops");
    }

    let edit = edit_bytes(dir.path()).await;
    println!(
        "edit: one SKILL.md line in a {:.1} MB bundle: first version {} bytes by pull, {} by push; \
         the edit {} bytes by pull, {} by push",
        edit.bundle as f64 / 1e6,
        edit.first_pull,
        edit.first_push,
        edit.pull,
        edit.push
    );

    println!();
    println!("| figure | measured | goal |");
    println!("|---|---:|---|");
    println!("| copy of the same files over loopback | {copy_rate:.1} MB/s | (baseline) |");
    println!(
        "| pull of {bundles} bundles into an empty node, merged | {pull_rate:.1} MB/s ({:.0} % of the copy) | against the copy |",
        100.0 * pull_rate / copy_rate
    );
    println!(
        "| the same, until in the skills folder | {projected_rate:.1} MB/s ({:.0} % of the copy) | against the copy |",
        100.0 * projected_rate / copy_rate
    );
    for (how, moved) in [("pull", edit.pull), ("push", edit.push)] {
        let judged = if smoke {
            ""
        } else if moved < EDIT_GOAL {
            " PASS"
        } else {
            " MISS"
        };
        println!("| one SKILL.md edit in a 5 MB bundle, by {how} | {moved} bytes | < 50 KB{judged} |");
    }
}

/// A node and the federation context its federator would use.
struct BenchNode {
    node: Node,
    context: Context,
}

impl std::ops::Deref for BenchNode {
    type Target = Node;
    fn deref(&self) -> &Node {
        &self.node
    }
}

/// A node in `<dir>/<name>` with the test configuration, no per-origin
/// limits (a bench pulls 1,000 new skills of one origin), and `adjust`.
async fn start(dir: &Path, name: &str, adjust: impl FnOnce(&mut Config)) -> BenchNode {
    let mut config = Config::for_tests(&dir.join(name));
    let unlimited = OriginLimits { per_hour: 0, per_day: 0 };
    (config.origin_limits, config.sender_limits) = (unlimited, unlimited);
    adjust(&mut config);
    let node = Node::bind(config.clone()).await.expect("the node starts");
    let context =
        Context::new(node.library().clone(), config.policy, config.reshare_external, Duration::from_secs(60));
    BenchNode { node, context }
}

/// Puts bundles `0..n` in `library` as its own, and writes their files
/// under `source`: (files, bytes, paths relative to `source`).
fn seed(library: &ecp_node::library::Library, source: &Path, n: usize) -> (usize, u64, Vec<String>) {
    let (mut files, mut bytes, mut paths) = (0, 0, Vec::new());
    for k in 0..n {
        let folder = content::bundle(k);
        for (path, content) in folder.all() {
            let file = source.join(&folder.name).join(path);
            std::fs::create_dir_all(file.parent().expect("a folder")).expect("the source folder");
            std::fs::write(&file, content).expect("a source file");
            paths.push(format!("{}/{path}", folder.name));
        }
        files += folder.count();
        bytes += folder.bytes() as u64;
        put(library, &folder.skill_md, folder.files);
    }
    (files, bytes, paths)
}

/// Puts the SKILL.md `text` with `files` in `library` as its own bundle.
fn put(library: &ecp_node::library::Library, text: &str, files: Vec<(String, Vec<u8>)>) {
    let companions: Vec<Companion> =
        files.into_iter().map(|(path, bytes)| Companion { path, bytes, executable: false }).collect();
    let origin = ecp_node::import::local_origin(library.store().instance_id());
    let (packet, _warnings) = ecp_node::import::local_packet(
        text,
        None,
        &origin,
        &ecp_protocol::skill_doc::StructureLimits::default(),
        ecp_node::store::now(),
    )
    .expect("a valid SKILL.md");
    library.put_local_bundle(packet, &companions, Source::Operator).expect("the bundle is stored");
}

/// Waits until `dir` holds `n` skill folders (a bundle's folder appears
/// whole, by a rename).
async fn wait_projected(dir: &Path, n: usize) {
    let deadline = Instant::now() + PROJECTION_DEADLINE;
    loop {
        let folders = std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    !e.file_name().to_string_lossy().starts_with('.') && e.path().join("SKILL.md").exists()
                })
                .count()
        });
        if folders >= n {
            return;
        }
        assert!(Instant::now() < deadline, "{} holds {folders} of {n} skill folders", dir.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn spec(url: &str, push: bool) -> PeerSpec {
    let text = format!("[[peer]]\nurl = \"{url}\"\ntrust = 1.0\npush = {push}\n");
    let file = PeersConfig::parse(&text, "bench peers").expect("a peers file");
    PeerSpec::configured(&file, &file.peers[0])
}

async fn pull(to: &BenchNode, url: &str) -> PullReport {
    federation::pull(&to.context, &spec(url, false)).await.expect("the pull succeeds")
}

async fn push(from: &BenchNode, url: &str) -> PushReport {
    federation::push(&from.context, &spec(url, true)).await.expect("the push succeeds")
}

/// Pulls `url` into `to` until `to` holds `n` skills: (rounds, blobs fetched).
async fn pull_all(to: &BenchNode, url: &str, n: usize) -> (usize, usize) {
    let (mut rounds, mut fetched) = (0, 0);
    loop {
        let report = pull(to, url).await;
        rounds += 1;
        fetched += report.blobs_fetched;
        let held = to.library().store().summary().expect("a summary").external_skills;
        if held >= n as i64 {
            return (rounds, fetched);
        }
        assert!(report.packets > 0, "a round brought nothing, {held} of {n} skills held: {report:?}");
    }
}

/// What the edit of one SKILL.md line moved.
struct Edit {
    bundle: usize,
    first_pull: u64,
    first_push: u64,
    pull: u64,
    push: u64,
}

/// Bytes on the wire (a counting proxy between the nodes, both ways) for a
/// generated 5 MB bundle and then one line more in its SKILL.md: E's
/// bundle pulled by F and pushed to G.
async fn edit_bytes(dir: &Path) -> Edit {
    use generated_bundle::{SKILL_MD, generated_bundle};
    let e = start(dir, "e", |_| {}).await;
    let f = start(dir, "f", |_| {}).await;
    let g = start(dir, "g", |c| c.default_trust = 1.0).await;
    let (to_e, to_g) =
        (CountingProxy::start(e.local_addr()).await, CountingProxy::start(g.local_addr()).await);
    let files = generated_bundle(EDITED_BYTES);
    let bundle = SKILL_MD.len() + files.iter().map(|(_, b)| b.len()).sum::<usize>();
    let library = e.library().clone();
    let (first, second) = (files.clone(), files);
    tokio::task::spawn_blocking(move || put(&library, SKILL_MD, first)).await.expect("E's bundle");
    assert_eq!(pull(&f, &to_e.url()).await.result.new_skills, 1);
    assert_eq!(push(&e, &to_g.url()).await.result.new_skills, 1);
    let (first_pull, first_push) = (to_e.take(), to_g.take());

    let edited = format!("{SKILL_MD}4. Keep a copy of the filled form beside the data.\n");
    let library = e.library().clone();
    tokio::task::spawn_blocking(move || put(&library, &edited, second)).await.expect("E's edit");
    assert_eq!(pull(&f, &to_e.url()).await.result.updated_skills, 1);
    assert_eq!(push(&e, &to_g.url()).await.result.updated_skills, 1);
    let edit = Edit { bundle, first_pull, first_push, pull: to_e.take(), push: to_g.take() };
    for node in [e, f, g] {
        node.node.shutdown().await.expect("the node stops");
    }
    edit
}
