//! The mesh itself: one real `ecp-node serve` process per node of a
//! [`Graph`], each peering with its neighbours through [`Link`]s; killing
//! (`kill -9`) and restarting nodes; adding skills at a node through its
//! local API; and reading what each node serves. (The mesh integration
//! test uses this file too.)

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};

use super::graph::Graph;
use super::links::Link;

/// How long a node may take to answer `/readyz` after it is started.
const READY_WITHIN: Duration = Duration::from_secs(120);

/// A skill set as nodes serve it: name to `integrityHash`.
pub(crate) type Skills = BTreeMap<String, String>;

/// How the nodes federate.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Pull interval (`[federation] interval`).
    pub(crate) interval: Duration,
    /// Whether a node pushes its changes to its peers as they happen.
    pub(crate) push: bool,
    /// Time allowed for one request to a peer (`[federation] timeout`).
    pub(crate) timeout: Duration,
}

/// One node process; `child` is `None` while it is dead.
struct Process {
    child: Option<Child>,
    /// Where it listens: a free port the first time (`--listen 127.0.0.1:0`,
    /// read back from `server.json`, so no other process can take it
    /// between a probe and the bind), the same one after a restart.
    addr: Option<SocketAddr>,
    dir: PathBuf,
    token: String,
}

impl Process {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }
}

/// A running mesh. Dropping it kills every node.
pub(crate) struct Mesh {
    bin: PathBuf,
    pub(crate) graph: Graph,
    settings: Settings,
    nodes: Vec<Process>,
    links: Vec<Link>,
    http: reqwest::Client,
}

impl Mesh {
    /// Starts one node per node of `graph` in folders under `root` (which
    /// must exist), and waits until every node serves.
    pub(crate) async fn start(
        bin: &Path,
        root: &Path,
        graph: Graph,
        settings: &Settings,
    ) -> Result<Mesh, String> {
        let mut links = Vec::new();
        for v in 0..graph.len() {
            for &w in graph.neighbours(v) {
                links.push(Link::start(v, w).await.map_err(|e| format!("a link cannot listen: {e}"))?);
            }
        }
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| e.to_string())?;
        let mut nodes = Vec::with_capacity(graph.len());
        for v in 0..graph.len() {
            let dir = root.join(format!("node-{v}"));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            nodes.push(Process { child: None, addr: None, dir, token: String::new() });
        }
        let mut mesh = Mesh { bin: bin.to_owned(), graph, settings: settings.clone(), nodes, links, http };
        mesh.write_peers()?;
        for v in 0..mesh.nodes.len() {
            mesh.spawn(v)?;
        }
        for v in 0..mesh.nodes.len() {
            mesh.wait_ready(v).await?;
        }
        Ok(mesh)
    }

    /// Writes every node's peers file: its links, as [`Settings`] say.
    fn write_peers(&self) -> Result<(), String> {
        for (v, node) in self.nodes.iter().enumerate() {
            let peers: Vec<&Link> = self.links.iter().filter(|l| l.from == v).collect();
            let path = node.dir.join("peers.toml");
            std::fs::write(&path, peers_file(&peers, &self.settings))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Federates as `settings` say from now on: rewrites the peers files,
    /// has every live node reload its own (SIGHUP: the file may not be
    /// watched where inotify instances ran out), and waits until each
    /// shows its peers with the new schedule and push (`GET /v1/peers`).
    /// Peers keep their state (cursor, learned instance) across a reload.
    pub(crate) async fn reconfigure(&mut self, settings: &Settings, within: Duration) -> Result<(), String> {
        self.settings = settings.clone();
        self.write_peers()?;
        let schedule = format!("every {}", humantime::format_duration(settings.interval));
        let deadline = Instant::now() + within;
        for v in (0..self.len()).filter(|&v| self.is_alive(v)) {
            let pid = self.pid(v).map(|p| p.to_string()).unwrap_or_default();
            let _ = Command::new("kill").args(["-HUP", &pid]).status();
            loop {
                let peers = self.peers(v).await;
                let applied = peers.iter().filter(|p| p["active"] == true).count()
                    == self.graph.neighbours(v).len()
                    && peers.iter().filter(|p| p["active"] == true).all(|p| {
                        p["schedule"].as_str() == Some(schedule.as_str()) && p["push"] == settings.push
                    });
                if applied {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "node {v} has not applied its new peers file within {within:?}: {peers:?}"
                    ));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Ok(())
    }

    /// Node `v`'s peers as it shows them (`GET /v1/peers`); none when it does not answer.
    async fn peers(&self, v: usize) -> Vec<Value> {
        let answer = self.http.get(self.url(v, "/v1/peers")).bearer_auth(&self.nodes[v].token).send().await;
        let body: Value = match answer {
            Ok(a) => a.json().await.unwrap_or_default(),
            Err(_) => Value::Null,
        };
        body["peers"].as_array().cloned().unwrap_or_default()
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Starts node `v`'s process over its folder.
    fn spawn(&mut self, v: usize) -> Result<(), String> {
        let node = &mut self.nodes[v];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(node.dir.join("serve.log"))
            .map_err(|e| e.to_string())?;
        let child = Command::new(&self.bin)
            .arg("--data")
            .arg(node.data())
            .args(["serve", "--listen", &node.addr.map_or("127.0.0.1:0".to_owned(), |a| a.to_string())])
            .args(["--no-mdns", "--peers"])
            .arg(node.dir.join("peers.toml"))
            .env("RUST_LOG", "warn")
            .env_remove("ECP_SECRET")
            .env_remove("ECP_CONFIG")
            .env_remove("ECP_SKILLS_DIR")
            .env_remove("ECP_PEERS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.bin.display()))?;
        node.child = Some(child);
        Ok(())
    }

    /// Waits until node `v` says where it listens (its `server.json`) and
    /// answers `/readyz` there, then aims its links at it and reads its
    /// API token.
    async fn wait_ready(&mut self, v: usize) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let node = &mut self.nodes[v];
            if let Some(Ok(Some(status))) = node.child.as_mut().map(Child::try_wait) {
                return Err(format!("node {v} exited ({status}) at start: {}", self.log_tail(v)));
            }
            if let Some(addr) = listening(&node.data(), node.child.as_ref().map(Child::id)) {
                let ready = self.http.get(format!("http://{addr}/readyz")).send().await;
                if ready.is_ok_and(|r| r.status().is_success()) {
                    let path = node.data().join("api-token");
                    let token =
                        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    (node.addr, node.token) = (Some(addr), token.trim().to_owned());
                    self.links.iter().filter(|l| l.to == v).for_each(|l| l.aim(addr));
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "node {v} did not answer /readyz within {READY_WITHIN:?}: {}",
                    self.log_tail(v)
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The last lines of node `v`'s log.
    pub(crate) fn log_tail(&self, v: usize) -> String {
        let text = std::fs::read_to_string(self.nodes[v].dir.join("serve.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// `kill -9` of node `v`: no chance to finish anything.
    pub(crate) fn kill(&mut self, v: usize) {
        if let Some(mut child) = self.nodes[v].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts dead node `v` again over the data it left, on its address.
    pub(crate) async fn restart(&mut self, v: usize) -> Result<(), String> {
        self.spawn(v)?;
        self.wait_ready(v).await
    }

    pub(crate) fn is_alive(&self, v: usize) -> bool {
        self.nodes[v].child.is_some()
    }

    /// Which nodes run.
    pub(crate) fn alive(&self) -> Vec<bool> {
        (0..self.len()).map(|v| self.is_alive(v)).collect()
    }

    /// Node `v`'s process id, while it runs.
    pub(crate) fn pid(&self, v: usize) -> Option<u32> {
        self.nodes[v].child.as_ref().map(Child::id)
    }

    /// Cuts every link between a node on side `true` and one on side
    /// `false` (both ways), or heals all links (`side` = `None`).
    pub(crate) fn partition(&self, side: Option<&[bool]>) {
        for link in &self.links {
            link.set_cut(side.is_some_and(|s| s[link.from] != s[link.to]));
        }
    }

    pub(crate) fn links(&self) -> &[Link] {
        &self.links
    }

    fn url(&self, v: usize, path: &str) -> String {
        let addr = self.nodes[v].addr.map_or("127.0.0.1:0".to_owned(), |a| a.to_string());
        format!("http://{addr}{path}")
    }

    /// Adds (or replaces) local skill `name` at node `v` through its local
    /// API; on its 2xx answer — the node acknowledged it — returns the
    /// `integrityHash` it serves the skill with.
    pub(crate) async fn add_skill(&self, v: usize, name: &str, line: &str) -> Result<String, String> {
        self.post_skill(v, name, line).await?;
        self.own_hash(v, name).await
    }

    /// `POST /v1/skills` of local skill `name` at node `v`; `Ok` on a 2xx answer.
    pub(crate) async fn post_skill(&self, v: usize, name: &str, line: &str) -> Result<(), String> {
        let text = format!(
            "---\nname: {name}\ndescription: Mesh benchmark skill {name}\nconfidence: 1.0\n---\n\n# {name}\n\n{line}\n"
        );
        let answer = self
            .http
            .post(self.url(v, "/v1/skills"))
            .bearer_auth(&self.nodes[v].token)
            .json(&json!({ "text": text }))
            .send()
            .await
            .map_err(|e| format!("node {v}: POST /v1/skills: {e}"))?;
        let status = answer.status();
        if !status.is_success() {
            let body = answer.text().await.unwrap_or_default();
            return Err(format!("node {v} refused skill {name}: {status} {body}"));
        }
        Ok(())
    }

    /// The `integrityHash` of skill `name` as node `v` holds it (`GET /v1/skills/{name}`).
    pub(crate) async fn own_hash(&self, v: usize, name: &str) -> Result<String, String> {
        let shown: Value = self
            .http
            .get(self.url(v, &format!("/v1/skills/{name}")))
            .bearer_auth(&self.nodes[v].token)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| format!("node {v}: GET /v1/skills/{name}: {e}"))?
            .json()
            .await
            .map_err(|e| format!("node {v}: GET /v1/skills/{name}: {e}"))?;
        shown["packet"]["integrityHash"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("node {v}: /v1/skills/{name} has no packet.integrityHash: {shown}"))
    }

    /// When node `v` stored its current version of `name` (its own clock,
    /// `updatedAt`), or `None` while it does not hold it.
    pub(crate) async fn stored_at(&self, v: usize, name: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        let answer = self
            .http
            .get(self.url(v, &format!("/v1/skills/{name}")))
            .bearer_auth(&self.nodes[v].token)
            .send()
            .await;
        let shown: Value = answer.ok().filter(|a| a.status().is_success())?.json().await.ok()?;
        let at = chrono::DateTime::parse_from_rfc3339(shown["skill"]["updatedAt"].as_str()?).ok()?;
        Some(at.with_timezone(&chrono::Utc))
    }

    /// Node `v`'s metrics (`GET /metrics`, Prometheus text), or `None`
    /// when it does not answer.
    pub(crate) async fn metrics(&self, v: usize) -> Option<String> {
        let answer =
            self.http.get(self.url(v, "/metrics")).bearer_auth(&self.nodes[v].token).send().await.ok()?;
        answer.error_for_status().ok()?.text().await.ok()
    }

    /// The skills node `v` serves its peers (`GET /ecp/skills`).
    pub(crate) async fn skills(&self, v: usize) -> Result<Skills, String> {
        let answer: Value = self
            .http
            .get(self.url(v, "/ecp/skills"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| format!("node {v}: GET /ecp/skills: {e}"))?
            .json()
            .await
            .map_err(|e| format!("node {v}: GET /ecp/skills: {e}"))?;
        let packets =
            answer["skills"].as_array().ok_or_else(|| format!("node {v}: no skills in {answer}"))?;
        Ok(packets
            .iter()
            .filter_map(|p| {
                Some((p["skillName"].as_str()?.to_owned(), p["integrityHash"].as_str()?.to_owned()))
            })
            .collect())
    }

    /// Waits until every live node has completed a pull round with each of
    /// its live peers (`lastSuccess` in `GET /v1/peers`), so a measurement
    /// starts on a mesh past its first rounds.
    pub(crate) async fn settle(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let live: Vec<String> = self.links.iter().filter(|l| self.is_alive(l.to)).map(Link::url).collect();
        for v in (0..self.len()).filter(|&v| self.is_alive(v)) {
            loop {
                let peers = self.peers(v).await;
                let settled = peers
                    .iter()
                    .filter(|p| p["url"].as_str().is_some_and(|u| live.iter().any(|l| l == u)))
                    .all(|p| !p["lastSuccess"].is_null());
                if !peers.is_empty() && settled {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "node {v} has not pulled from every live peer within {within:?}: {peers:?}"
                    ));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Ok(())
    }

    /// Polls every live node's skill set until all are the same and hold
    /// `expected` (name and hash) — the mesh converged, and nothing
    /// acknowledged is missing — then returns that set. After `within`,
    /// the error names the nodes that differ and how.
    pub(crate) async fn converge(&self, expected: &Skills, within: Duration) -> Result<Skills, String> {
        let deadline = Instant::now() + within;
        loop {
            let live: Vec<usize> = (0..self.len()).filter(|&v| self.is_alive(v)).collect();
            let sets = join_all(live.iter().map(|&v| self.skills(v))).await;
            let mut problems = Vec::new();
            let mut first: Option<(usize, &Skills)> = None;
            for (&v, set) in live.iter().zip(&sets) {
                match set {
                    Err(e) => problems.push(e.clone()),
                    Ok(set) => {
                        let missing: Vec<&String> = expected
                            .iter()
                            .filter(|(n, h)| set.get(*n) != Some(*h))
                            .map(|(n, _)| n)
                            .collect();
                        if !missing.is_empty() {
                            problems
                                .push(format!("node {v} lacks (or holds another version of) {missing:?}"));
                        }
                        match first {
                            None => first = Some((v, set)),
                            Some((u, other)) if other != set => {
                                let differ: Vec<&String> = set
                                    .iter()
                                    .filter(|(n, h)| other.get(*n) != Some(*h))
                                    .chain(other.iter().filter(|(n, h)| set.get(*n) != Some(*h)))
                                    .map(|(n, _)| n)
                                    .collect();
                                problems.push(format!("nodes {u} and {v} differ on {differ:?}"));
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
            if problems.is_empty() {
                return Ok(first.map(|(_, set)| set.clone()).unwrap_or_default());
            }
            if Instant::now() > deadline {
                problems.truncate(10);
                return Err(format!("not converged within {within:?}: {}", problems.join("; ")));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        for v in 0..self.nodes.len() {
            self.kill(v);
        }
    }
}

/// A node's peers file: its links, trust 1.0 so skills travel unlowered.
fn peers_file(links: &[&Link], settings: &Settings) -> String {
    let mut file = format!(
        "[federation]\ninterval = \"{}ms\"\ntimeout = \"{}ms\"\n\n[discovery]\nenabled = false\n",
        settings.interval.as_millis(),
        settings.timeout.as_millis()
    );
    for link in links {
        file.push_str(&format!(
            "\n[[peer]]\nurl = \"{}\"\ntrust = 1.0\npull = true\npush = {}\n",
            link.url(),
            settings.push
        ));
    }
    file
}

/// Where the server of process `pid` over data folder `data` listens, once
/// its `server.json` says so (one of an earlier process does not count).
fn listening(data: &Path, pid: Option<u32>) -> Option<SocketAddr> {
    let text = std::fs::read_to_string(data.join("server.json")).ok()?;
    let info: Value = serde_json::from_str(&text).ok()?;
    if info["pid"].as_u64() != pid.map(u64::from) {
        return None;
    }
    info["url"].as_str()?.strip_prefix("http://")?.parse().ok()
}
