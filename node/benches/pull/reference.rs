//! The Go reference's pull: its server started with the source as its one
//! peer (`ECP_REFERENCE_PULL`), timed until its manifest counts every skill.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::Pulled;
use crate::folder::{self, DataFolder};

/// How the reference is started when `ECP_REFERENCE_PULL` is not set.
const DEFAULT_COMMAND: &str = "{bin} serve --port {port} --data {data} --peer {peer} --interval 1s";
/// Longest wait for the reference to hold every skill.
const DEADLINE: Duration = Duration::from_secs(600);

/// Kills the reference when dropped, also on an error.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) async fn pull(bin: &Path, root: &Path, peer: &str, n: usize) -> anyhow::Result<Pulled> {
    let dir = tempfile::Builder::new().prefix("ecp-pull-reference-").tempdir_in(root)?;
    let data = dir.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let template = std::env::var("ECP_REFERENCE_PULL").unwrap_or_else(|_| DEFAULT_COMMAND.to_owned());
    let words: Vec<String> = template
        .split_whitespace()
        .map(|w| {
            w.replace("{bin}", &bin.to_string_lossy())
                .replace("{data}", &data.to_string_lossy())
                .replace("{port}", &port.to_string())
                .replace("{peer}", peer)
        })
        .collect();
    let Some((program, args)) = words.split_first() else { bail!("ECP_REFERENCE_PULL is empty") };
    let log = std::fs::File::create(dir.path().join("reference.log"))?;
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("cannot start the reference: {template}"))?;
    let mut running = Running(child);
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(5)).build()?;
    let manifest = format!("http://127.0.0.1:{port}/ecp/manifest");
    loop {
        if let Some(status) = running.0.try_wait()? {
            bail!("the reference exited ({status}); see its log in {}", dir.path().display());
        }
        if let Ok(answer) = client.get(&manifest).send().await
            && let Ok(value) = answer.json::<serde_json::Value>().await
            && value["skillCount"].as_u64().is_some_and(|c| c >= n as u64)
        {
            break;
        }
        if started.elapsed() > DEADLINE {
            bail!("the reference did not hold {n} skills within {} s", DEADLINE.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    let io = std::fs::read_to_string(format!("/proc/{}/io", running.0.id())).unwrap_or_default();
    // Its skills folder, if it keeps one apart, is not known here: all of its data folder is counted.
    let folder = DataFolder::measure(&data, &data.join("skills"));
    Ok(Pulled { elapsed, folder, written: folder::write_bytes(&io) })
}
