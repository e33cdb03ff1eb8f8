//! Health that means something: `/livez` says the process serves,
//! `/readyz` checks the store, federation and the skills folder and names
//! what failed, `/healthz` stays an alias of `/livez`; `health_listen`
//! serves those alone over plain HTTP; `ecp-node health` asks them for
//! exec probes, also under mTLS (see `tls.rs`).

use serde_json::Value;

use crate::cli::Folders;
use crate::util::TestNode;

async fn readiness(node: &TestNode) -> (u16, Value) {
    let reply = node.get("/readyz").await;
    reply.assert_json_content_type();
    (reply.status.as_u16(), reply.json())
}

#[tokio::test(flavor = "multi_thread")]
async fn live_and_ready_answer_json_and_healthz_is_livez() {
    let node = TestNode::start().await;
    let live = node.get_json("/livez").await;
    assert_eq!(live["status"], "ok");
    assert_eq!(live["instance"], node.instance_id().await.as_str());
    let healthz = node.get_json("/healthz").await;
    assert_eq!(healthz, live, "/healthz is /livez");
    let (status, ready) = readiness(&node).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["status"], "ready");
    for check in ["store", "federator", "skills_folder"] {
        assert_eq!(ready["checks"][check], serde_json::json!({"ok": true}), "{ready}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_fails_with_a_reason_while_another_process_holds_the_store() {
    let node = TestNode::start().await;
    let db = node.config().data_dir.join(ecp_node::store::DB_FILE);
    let holder = rusqlite::Connection::open(&db).expect("open the node's database");
    holder.execute_batch("BEGIN EXCLUSIVE").expect("take the write lock");
    let (status, ready) = readiness(&node).await;
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["status"], "not_ready");
    let reason = ready["checks"]["store"]["reason"].as_str().expect("a reason");
    assert!(reason.contains("cannot take a write"), "{reason}");
    assert_eq!(ready["checks"]["federator"]["ok"], true, "only the store failed: {ready}");
    assert_eq!(node.get("/livez").await.status, 200, "alive all the same: do not restart it");
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(readiness(&node).await.0, 200, "ready again once the lock is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_fails_while_the_skills_folder_is_gone_without_naming_its_path() {
    let node = TestNode::start().await;
    let skills = node.config().skills_dir.clone();
    // The node makes a missing skills folder when it starts watching it, and
    // marks it as its own: ready only once both are done (moving the folder
    // before its marker is written would leave the marker lost).
    ready_within(&node).await;
    let away = node.dir().join("moved-away");
    std::fs::rename(&skills, &away).unwrap();
    let (status, ready) = readiness(&node).await;
    assert_eq!(status, 503, "{ready}");
    let reason = ready["checks"]["skills_folder"]["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("unavailable") && reason.contains("nothing is imported or withdrawn"),
        "{reason}"
    );
    crate::util::assert_no_server_path(&ready.to_string());
    std::fs::rename(&away, &skills).unwrap();
    ready_within(&node).await;
}

/// Waits until `/readyz` answers 200 (deadline 30 s: CI machines are loaded).
async fn ready_within(node: &TestNode) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, ready) = readiness(node).await;
        if status == 200 {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "not ready within 30 s: {ready}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_fails_once_federation_has_stopped() {
    let node = TestNode::start().await;
    node.federator().shutdown().await;
    let (status, ready) = readiness(&node).await;
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["checks"]["federator"]["ok"], false, "{ready}");
}

#[tokio::test(flavor = "multi_thread")]
async fn health_listen_serves_the_health_endpoints_alone() {
    let node = TestNode::start_with(|c| c.health_listen = Some("127.0.0.1:0".parse().unwrap())).await;
    let health = node.health_addr().expect("a health address");
    assert_ne!(health, node.addr());
    let client = node.client();
    for (path, status) in
        [("/readyz", 200), ("/livez", 200), ("/healthz", 200), ("/ecp/manifest", 404), ("/v1/status", 404)]
    {
        let reply =
            client.get(format!("http://{health}{path}")).send().await.expect("the health address answers");
        assert_eq!(reply.status().as_u16(), status, "{path} on the health address");
    }
    assert_eq!(node.get("/ecp/manifest").await.status, 200, "the main address serves as before");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_health_command_exits_0_when_ready_and_1_when_the_node_is_gone() {
    let folders = Folders::new();
    let node = ecp_node::Node::bind(folders.config()).await.expect("the node starts");
    let addr = node.local_addr().to_string();
    let ready = folders.run_async(&["health", "--listen", &addr]).await;
    assert_eq!(ready.code, 0, "{ready:?}");
    assert_eq!(ready.json()["status"], "ready", "{ready:?}");
    let live = folders.run_async(&["health", "--live", "--listen", &addr]).await;
    assert_eq!((live.code, live.json()["status"].as_str()), (0, Some("ok")), "{live:?}");
    node.shutdown().await.expect("a clean shutdown");
    let gone = folders.run_async(&["health", "--listen", &addr]).await;
    assert_eq!(gone.code, 1, "{gone:?}");
    assert!(gone.stderr.contains("cannot reach the node"), "{gone:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_listens_where_node_toml_says_and_the_health_command_finds_it_there() {
    let folders = Folders::new();
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        probe.local_addr().unwrap().port()
    };
    let config = folders.tmp.path().join("node.toml");
    std::fs::write(&config, format!("listen = \"127.0.0.1:{port}\"\n")).unwrap();
    let config = config.to_str().unwrap().to_owned();
    let (data, skills) = (folders.data(), folders.skills());
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--no-mdns", "--config", &config, "--data"])
        .arg(&data)
        .arg("--skills-dir")
        .arg(&skills)
        .env_remove("ECP_LISTEN")
        .env("RUST_LOG", "warn")
        .spawn()
        .expect("the binary starts");
    let mut answer = None;
    for _ in 0..100 {
        let probed = folders.run_async(&["health", "--config", &config]).await;
        if probed.code == 0 {
            answer = Some(probed);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let _ = server.kill();
    let _ = server.wait();
    let answer = answer.expect("the node answers on the port node.toml names");
    assert_eq!(answer.json()["status"], "ready", "{answer:?}");
}
