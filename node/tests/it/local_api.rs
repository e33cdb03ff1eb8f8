//! The local API and the data folder, with real `ecp-node serve` processes:
//! one server per data folder, the API token, `--trust-loopback`, forwarded
//! requests, and the CLI sending its writes (and asking `status` and
//! `peers`) through the running server.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::cli::{Folders, ecp_node_bin, eventually, skill_md, write_skill};
use crate::util::TestNode;

/// How long a server may take to start, or a change to reach its folder (generous: tests run in parallel).
const SOON: Duration = Duration::from_secs(30);

/// An `ecp-node serve` process on `127.0.0.1:<ephemeral>`, stopped with
/// SIGTERM when dropped.
pub(super) struct Served {
    pub(super) child: Child,
    pub(super) url: String,
    data: PathBuf,
}

impl Served {
    /// Starts `serve --data DATA --skills-dir SKILLS EXTRA` and waits for its `server.json`.
    pub(super) fn start(data: &Path, skills: &Path, extra: &[&str]) -> Served {
        let child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
            .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
            .arg(data)
            .arg("--skills-dir")
            .arg(skills)
            .args(extra)
            .env_remove("ECP_CONFIG")
            .env_remove("ECP_SERVER_TRUST_LOOPBACK")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        wait_for_server(data, child)
    }

    fn token(&self) -> String {
        std::fs::read_to_string(self.data.join("api-token")).expect("the token file").trim().to_owned()
    }

    /// `Bearer <the API token>`, for the `Authorization` header.
    pub(super) fn bearer(&self) -> String {
        format!("Bearer {}", self.token())
    }

    /// `GET path` with `headers`: status and JSON body.
    pub(super) fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut request =
                reqwest::Client::builder().no_proxy().build().unwrap().get(format!("{}{path}", self.url));
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let response = request.send().await.expect("the server answers");
            let status = response.status().as_u16();
            (status, response.json().await.unwrap_or(Value::Null))
        })
    }

    pub(super) fn get_with_token(&self, path: &str) -> Value {
        let bearer = format!("Bearer {}", self.token());
        let (status, body) = self.get(path, &[("authorization", &bearer)]);
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// SIGTERM, then waits for the exit.
    pub(super) fn stop(mut self) {
        stop(&mut self.child);
    }
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            stop(&mut self.child);
        }
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

// ---- one server per data folder ----

#[test]
fn a_second_server_on_one_data_folder_exits_2_naming_the_first() {
    let f = Folders::new();
    let first = Served::start(&f.data(), &f.skills(), &[]);
    let pid = first.child.id().to_string();
    let second = ecp_node_bin(&["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data", path(&f.data())]);
    assert_eq!(second.code, 2, "{second:?}");
    assert!(second.stderr.contains(&format!("pid {pid}")), "{second:?}");
    assert!(second.stderr.contains(&first.url), "names its address: {second:?}");
    // The first one is untouched.
    first.get_with_token("/v1/status");
    first.stop();
    assert!(!f.data().join("server.json").exists(), "removed on a clean shutdown");

    // A server killed outright leaves server.json behind: without the lock it is ignored.
    let mut killed = Served::start(&f.data(), &f.skills(), &[]);
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    assert!(f.data().join("server.json").exists(), "a stale file stays");
    let status = f.run(&["status", "--json"]).json();
    assert_eq!(status["server"], Value::Null, "the CLI ignores the stale file: {status}");
    let third = Served::start(&f.data(), &f.skills(), &[]);
    third.get_with_token("/v1/status");
}

/// `serve` names itself in server.json before its first import: a SIGTERM
/// sent as soon as the file appears (as a supervisor or a test may) must
/// stop it cleanly, not kill it with the file left behind.
#[test]
fn a_server_stopped_as_soon_as_it_publishes_server_json_stops_cleanly() {
    let f = Folders::new();
    // Skills to import and project at start keep it busy after it published the file.
    for i in 0..300 {
        let name = format!("at-start-{i}");
        write_skill(&f.skills(), &name, &skill_md(&name, ""));
    }
    let mut served = Served::start(&f.data(), &f.skills(), &[]);
    let _ = Command::new("kill").args(["-TERM", &served.child.id().to_string()]).status();
    let status = served.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a clean stop, not death by the signal: {status:?}");
    assert!(!f.data().join("server.json").exists(), "removed on a clean shutdown");
}

#[test]
fn a_cli_command_does_not_create_a_missing_data_folder_unless_told_to() {
    let f = Folders::new();
    let file = write_skill(&f.tmp.path().join("src"), "first", &skill_md("first", ""));
    for args in [&["skill", "add", path(&file)][..], &["status"], &["peers"], &["quarantine", "approve", "1"]]
    {
        let out = f.run(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains(path(&f.data())), "names the path: {out:?}");
        assert!(
            out.stderr.contains("ecp-node serve") && out.stderr.contains("--init"),
            "the two ways: {out:?}"
        );
        assert!(!f.data().exists(), "{args:?} created the folder");
    }
    let out = f.run(&["skill", "add", "--init", path(&file)]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(f.data().join(ecp_node::store::DB_FILE).is_file(), "a new node");
    assert_eq!(f.run(&["status", "--json"]).json()["localSkills"], 1);
}

// ---- the API token ----

#[test]
fn v1_needs_the_token_from_loopback_and_the_token_is_private_and_kept() {
    let f = Folders::new();
    let served = Served::start(&f.data(), &f.skills(), &[]);
    let (status, body) = served.get("/v1/status", &[]);
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "api_token_required");
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("api-token") && !message.contains(path(&f.data())), "{message}");
    let token = served.token();
    assert_eq!(token.len(), 64, "32 bytes in hex");
    assert!(served.get_with_token("/v1/status")["instance"].is_string());
    let (status, _) = served.get("/v1/status", &[("authorization", &format!("Bearer {token}0"))]);
    assert_eq!(status, 401, "a longer token is not the token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for file in ["api-token", "server.json"] {
            let mode = std::fs::metadata(f.data().join(file)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
    }
    served.stop();
    let again = Served::start(&f.data(), &f.skills(), &[]);
    assert_eq!(again.token(), token, "kept across restarts");
    again.get_with_token("/v1/status");
}

#[test]
fn trust_loopback_restores_local_access_but_never_for_forwarded_requests() {
    let f = Folders::new();
    for how in ["flag", "env"] {
        let mut served = match how {
            "flag" => Served::start(&f.data(), &f.skills(), &["--trust-loopback"]),
            _ => {
                // The variable, through a wrapper start: same process shape.
                let child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
                    .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data", path(&f.data())])
                    .args(["--skills-dir", path(&f.skills())])
                    .env("ECP_SERVER_TRUST_LOOPBACK", "true")
                    .env_remove("ECP_CONFIG")
                    .env("RUST_LOG", "warn")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                wait_for_server(&f.data(), child)
            }
        };
        let (status, body) = served.get("/v1/status", &[]);
        assert_eq!(status, 200, "{how}: {body}");
        // A proxy's headers, and a page of another name (DNS rebinding:
        // the browser sends the name the page was loaded from).
        let rebound = served.url.replace("127.0.0.1", "rebound.example").replace("http://", "");
        for header in [("x-forwarded-for", "192.0.2.1"), ("forwarded", "for=192.0.2.1"), ("host", &rebound)] {
            let (status, body) = served.get("/v1/status", &[header]);
            assert_eq!(
                (status, &body["code"]),
                (401, &Value::from("api_token_required")),
                "{how} {header:?}"
            );
        }
        stop(&mut served.child);
    }
    // Without it, loopback alone is not enough.
    let served = Served::start(&f.data(), &f.skills(), &[]);
    assert_eq!(served.get("/v1/status", &[]).0, 401);
}

/// The server `child` once it has written `server.json`.
fn wait_for_server(data: &Path, mut child: Child) -> Served {
    let url = crate::util::server_url(data, &mut child);
    Served { child, url, data: data.to_owned() }
}

#[test]
fn the_loopback_exemption_from_the_rate_limit_does_not_cover_forwarded_requests() {
    let f = Folders::new();
    let served = Served::start(&f.data(), &f.skills(), &["--client-rate-limit", "1", "--client-burst", "2"]);
    for _ in 0..5 {
        assert_eq!(served.get("/healthz", &[]).0, 200, "loopback is exempt");
    }
    let forwarded: Vec<u16> =
        (0..3).map(|_| served.get("/healthz", &[("x-forwarded-for", "192.0.2.1")]).0).collect();
    assert_eq!(forwarded, [200, 200, 429], "a burst of 2, then limited");
    assert_eq!(served.get("/healthz", &[]).0, 200, "this machine's own requests stay exempt");
}

// ---- the CLI through the running server ----

#[test]
fn the_cli_adds_and_removes_through_the_server_visible_on_the_very_next_request() {
    let f = Folders::new();
    // The server projects into an agent's folder the CLI is not told about.
    let agent = f.tmp.path().join("agent-skills");
    let served = Served::start(&f.data(), &agent, &[]);
    let file = write_skill(&f.tmp.path().join("src"), "right-away", &skill_md("right-away", ""));
    let data_dir = f.data();
    let data = path(&data_dir);
    let added = ecp_node_bin(&["skill", "add", path(&file), "--data", data]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains("added      right-away (version 1)"), "{added:?}");
    let (_, manifest) = served.get("/ecp/manifest", &[]);
    assert_eq!(manifest["skillNames"], serde_json::json!(["right-away"]), "no wait for a poll");
    assert!(!f.data().join("skills").exists(), "the CLI did not project into a folder of its own");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(eventually("projected into the server's folder", SOON, || async {
        agent.join("right-away/SKILL.md").is_file().then_some(())
    }));
    let again = ecp_node_bin(&["skill", "add", path(&file), "--data", data]);
    assert!(again.stdout.contains("unchanged  right-away"), "{again:?}");
    let bad = write_skill(&f.tmp.path().join("src"), "bad", "no frontmatter here\n");
    let refused = ecp_node_bin(&["skill", "add", path(&bad), "--data", data]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stdout.contains("refused") && refused.stdout.contains("frontmatter"), "{refused:?}");

    let removed = ecp_node_bin(&["skill", "rm", "right-away", "--data", data]);
    assert_eq!(removed.code, 0, "{removed:?}");
    assert!(removed.stdout.contains("version 2 is a tombstone"), "{removed:?}");
    let (_, manifest) = served.get("/ecp/manifest", &[]);
    assert_eq!(manifest["skillNames"], serde_json::json!([]), "withdrawn on the next request");
    let missing = ecp_node_bin(&["skill", "rm", "never-was", "--data", data]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("no skill named \"never-was\""), "{missing:?}");
}

#[test]
fn status_and_peers_show_the_running_servers_live_view() {
    let f = Folders::new();
    let peers = f.tmp.path().join("peers.toml");
    // A configured peer nobody answers at: the server knows it as active.
    std::fs::write(&peers, "[[peer]]\nurl = \"http://127.0.0.1:9\"\n").unwrap();
    let served = Served::start(&f.data(), &f.skills(), &["--peers", path(&peers)]);
    let data_dir = f.data();
    let data = path(&data_dir);
    let live = ecp_node_bin(&["peers", "--json", "--data", data]).json();
    // The server's view (its state moves as its rounds fail: compare what does not).
    let server = served.get_with_token("/v1/peers");
    for key in ["url", "kind", "active", "trust", "schedule"] {
        assert_eq!(live["peers"][0][key], server["peers"][0][key], "{key}: the CLI prints the server's view");
    }
    assert_eq!(live["peers"][0]["active"], true, "{live}");
    let text = ecp_node_bin(&["peers", "--data", data]);
    assert!(text.stdout.contains("http://127.0.0.1:9"), "{text:?}");

    let status = ecp_node_bin(&["status", "--json", "--data", data]).json();
    let server = served.get_with_token("/v1/status");
    assert_eq!(status["instance"], server["instance"]);
    assert!(status["uptimeSeconds"].is_u64(), "the server's own status: {status}");
    assert!(status["server"].as_str().unwrap().contains(&served.url), "{status}");
    assert_eq!(status["skillsDir"], path(&f.skills()), "the server's folder");
    let text = ecp_node_bin(&["status", "--data", data]);
    assert!(text.stdout.contains(&format!("running, pid {}", served.child.id())), "{text:?}");

    served.stop();
    // Without a server: the store's view, which cannot know the peer is active.
    let offline = ecp_node_bin(&["peers", "--json", "--data", data]).json();
    let offline = offline["peers"].as_array().expect("a list");
    assert!(offline.iter().all(|p| p["active"] == false), "{offline:?}");
    assert_eq!(ecp_node_bin(&["status", "--json", "--data", data]).json()["server"], Value::Null);
}

// ---- the /v1 write endpoints ----

#[tokio::test(flavor = "multi_thread")]
async fn the_v1_write_endpoints_answer_every_bad_request_with_a_4xx_naming_it() {
    let node = TestNode::start_with(|config| config.max_body_bytes = 1024).await;
    let post = |body: Vec<u8>| {
        node.request(reqwest::Method::POST, "/v1/skills", &[("content-type", "application/json")], Some(body))
    };
    post(b"not json".to_vec()).await.assert_error(400, "invalid_json");
    post(br#"{"text": "x", "extra": 1}"#.to_vec()).await.assert_error(400, "invalid_json");
    let refused = post(br#"{"text": "no frontmatter"}"#.to_vec()).await.assert_error(422, "skill_refused");
    assert!(refused["error"].as_str().unwrap().contains("frontmatter"), "{refused}");
    // A folder named otherwise: added under the frontmatter name, with a warning.
    let renamed = skill_md("renamed-post", "");
    let body = serde_json::to_vec(&serde_json::json!({ "text": renamed, "folder": "elsewhere" })).unwrap();
    let added = post(body).await;
    assert_eq!(added.status, 200, "{}", added.text());
    assert_eq!(
        (added.json()["name"].clone(), added.json()["result"].clone()),
        ("renamed-post".into(), "added".into())
    );
    assert!(added.json()["warning"].as_str().unwrap().contains("\"elsewhere\""), "{}", added.text());
    let text = skill_md("posted", "");
    // The body limit, at it and one past it.
    let fill = |n: usize| {
        let mut body = serde_json::to_vec(&serde_json::json!({ "text": text })).unwrap();
        let pad = n - body.len();
        body.splice(1..1, std::iter::repeat_n(b' ', pad));
        body
    };
    let at = post(fill(1024)).await;
    assert_eq!(at.status, 200, "{}", at.text());
    assert_eq!(at.json()["result"], "added");
    post(fill(1025)).await.assert_error(413, "payload_too_large");

    let delete = |path: &'static str| node.request(reqwest::Method::DELETE, path, &[], None);
    delete("/v1/skills/never-was").await.assert_error(404, "no_such_skill");
    delete("/v1/quarantine/abc").await.assert_error(400, "invalid_path");
    delete("/v1/quarantine/99").await.assert_error(404, "no_such_quarantine_entry");
    node.request(reqwest::Method::POST, "/v1/quarantine/99/approve", &[], None)
        .await
        .assert_error(404, "no_such_quarantine_entry");
    let removed = delete("/v1/skills/posted").await;
    assert_eq!(removed.status, 200, "{}", removed.text());
    assert_eq!(removed.json()["removed"], true);
    // Without the token, no write.
    let anonymous = reqwest::Client::builder().no_proxy().build().unwrap();
    let answer = anonymous.delete(node.url("/v1/skills/posted")).send().await.unwrap();
    assert_eq!(answer.status(), 401);
    node.assert_healthy().await;
}
