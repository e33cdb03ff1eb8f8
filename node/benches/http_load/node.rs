//! Process control: a fresh `ecp-node serve` in its own data folder on a
//! free loopback port, ready once `/healthz` answers, killed when dropped.
//! (The `hostile` bench uses this file too.)

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use hyper::StatusCode;

use crate::client::{connect, fetch};

/// How long a started node may take to answer `/healthz`.
const READY_WITHIN: Duration = Duration::from_secs(600);

/// A running `ecp-node serve` with its own data folder. Dropping it kills
/// the process (also when the bench panics), then removes the folder.
pub(crate) struct NodeProcess {
    child: Child,
    pub(crate) addr: SocketAddr,
    /// The node's stderr.
    pub(crate) log: PathBuf,
    /// The data folder's parent; removed when dropped, so the data folder
    /// lives as long as the node.
    dir: tempfile::TempDir,
    /// How it was started, to start it again ([`NodeProcess::restart`]).
    command: (PathBuf, Vec<(String, String)>, Vec<String>),
}

/// The settings of a node the load pushes thousands of new skills to, from
/// one origin and one client: not what the origin, sender and client limits
/// are for. Variables, not flags, so older binaries still run.
pub(crate) const UNLIMITED: &[(&str, &str)] = &[
    ("ECP_ORIGIN_LIMIT_HOUR", "0"),
    ("ECP_ORIGIN_LIMIT_DAY", "0"),
    ("ECP_SENDER_LIMIT_HOUR", "0"),
    ("ECP_SENDER_LIMIT_DAY", "0"),
    ("ECP_CLIENT_RATE_LIMIT", "0"),
];

impl NodeProcess {
    /// Starts `bin serve` with `env` set and `args` after `serve`.
    pub(crate) async fn start(
        bin: &Path,
        data_root: Option<&Path>,
        env: &[(&str, &str)],
        args: &[String],
    ) -> anyhow::Result<NodeProcess> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("ecp-http-load-");
        let dir = match data_root {
            Some(root) => builder.tempdir_in(root)?,
            None => builder.tempdir()?,
        };
        let log = dir.path().join("node.log");
        let addr = free_port()?;
        let command =
            (bin.to_owned(), env.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect(), args.to_vec());
        let child = spawn(&command, dir.path(), addr, &log)?;
        let mut node = NodeProcess { child, addr, log, dir, command };
        node.wait_ready().await?;
        Ok(node)
    }

    /// Kills the node and starts it again on the same data folder and
    /// address: a fresh process (its VmHWM counts from now) over the store
    /// as it was left. Returns how long it took to answer `/healthz`.
    #[allow(dead_code)] // The big bench's.
    pub(crate) async fn restart(&mut self) -> anyhow::Result<Duration> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let started = Instant::now();
        self.child = spawn(&self.command, self.dir.path(), self.addr, &self.log)?;
        self.wait_ready().await?;
        Ok(started.elapsed())
    }

    /// The node's local API token (`<data>/api-token`), which `/v1/` requires.
    #[allow(dead_code)] // The hostile bench's; http_load reads no `/v1/`.
    pub(crate) fn api_token(&self) -> anyhow::Result<String> {
        let path = self.dir.path().join("data").join("api-token");
        Ok(std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_owned())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Bytes the data folder holds on disk (the database with its WAL, the
    /// skills folder, the log beside it not counted).
    pub(crate) fn data_bytes(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.dir.path().join("data"))
    }

    /// Polls `GET /healthz` until it answers 200: at most [`READY_WITHIN`],
    /// since a node imports its whole skills folder before it serves (a
    /// 100,000-skill folder takes minutes on a loaded machine).
    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_WITHIN;
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
                bail!(
                    "the node did not answer /healthz within {} s:\n{}",
                    READY_WITHIN.as_secs(),
                    self.log_tail()
                );
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

/// Starts `bin --data <dir>/data serve` on `addr` (`command`: bin, env, args), its stderr to `log`.
fn spawn(
    command: &(PathBuf, Vec<(String, String)>, Vec<String>),
    dir: &Path,
    addr: SocketAddr,
    log: &Path,
) -> anyhow::Result<Child> {
    let (bin, env, args) = command;
    Command::new(bin)
        .arg("--data")
        .arg(dir.join("data"))
        .args(["serve", "--listen", &addr.to_string(), "--no-mdns"])
        .args(args)
        .env("RUST_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("ECP_SECRET")
        .env_remove("ECP_CONFIG")
        .env_remove("ECP_SKILLS_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::OpenOptions::new().create(true).append(true).open(log)?)
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))
}

/// A loopback address no one listens on (the node binds it right after;
/// a clash is reported by the node's start-up check).
fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = StdListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}
