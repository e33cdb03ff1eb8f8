//! The hub review's findings H2, H3, H7 and H9 (#18 item 5), each on a real
//! PostgreSQL server ([`crate::pg`]): pushes queued for the sequence
//! number's lock never starve reads and `/readyz`, and sequence numbers
//! stay gapless; signed pushes count against their signing key, not the
//! address they came through; the hub's node key from a key file never
//! lands in the database, a response or a log line; every replica sends
//! the same bytes under one ETag.

use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use ecp_node::config::Config;
use ecp_node::hub::HubNode;
use ecp_protocol::identity::NodeKey;
use ecp_protocol::signed_auth::{RequestLine, SigningKey, sign_request};
use reqwest::StatusCode;
use serde_json::Value;

use crate::cli::eventually;
use crate::hub::{Replica, two_replicas};
use crate::pg::start_or_skip;
use crate::signed_auth::{nonce, now};
use crate::util::{packet_from, update};

/// How long anything a test waits for may take (tests run in parallel on two cores).
const SOON: Duration = Duration::from_secs(30);

fn skill(n: usize) -> ecp_protocol::SkillPacket {
    packet_from(&format!("origin-{n}"), &format!("queued-{n}"), "2026-11-21T10:00:00Z")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_readiness_answer_while_pushes_wait_for_the_lock_and_sequence_numbers_stay_gapless() {
    let Some(server) = start_or_skip("reads_and_readiness_answer_while_pushes_wait_for_the_lock") else {
        return;
    };
    let url = server.database("queued");
    let replica = Replica::start(&url, |_| {}).await;
    // The sequence number's row held, as by a push of another replica that
    // writes for a long time: every push of this replica queues behind it.
    let (locked, is_locked) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let holder = {
        let url = url.clone();
        std::thread::spawn(move || {
            let mut db = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
            let mut tx = db.transaction().expect("a transaction");
            tx.query_one("SELECT value FROM hub_meta WHERE key = 'sequence' FOR UPDATE", &[])
                .expect("locked");
            locked.send(()).expect("the test waits");
            let _ = released.recv();
            tx.commit().expect("commits");
        })
    };
    tokio::task::block_in_place(|| is_locked.recv()).expect("the row is locked");
    // More pushes than the replica has connections of any kind.
    const PUSHES: usize = 8;
    let pushes: Vec<_> = (1..=PUSHES)
        .map(|n| {
            let (client, url) = (replica.client.clone(), replica.url("/ecp/skills"));
            tokio::spawn(async move {
                let reply = client
                    .post(url)
                    .header("content-type", "application/json")
                    .body(update("pusher", &[skill(n)]))
                    .send()
                    .await
                    .expect("an answer");
                (reply.status(), reply.json::<Value>().await.expect("a JSON answer"))
            })
        })
        .collect();
    let waiting = || {
        server.with("queued", |db| {
            let row = db
                .query_one(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = 'queued' AND wait_event_type = 'Lock'",
                    &[],
                )
                .expect("the activity");
            row.get::<_, i64>(0)
        })
    };
    // Every push connection of the replica is waiting for the lock.
    eventually("pushes wait for the sequence number's lock", SOON, || {
        let n = waiting();
        async move { (n >= ecp_node::store::hub::PUSH_POOL as i64).then_some(()) }
    })
    .await;
    // Reads and readiness still find a connection: answered while every
    // push is still waiting (before review H2 they waited for the pushes'
    // lock timeout, which failed them).
    let (status, ready) = replica.get("/readyz").await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    let (status, listing) = replica.get("/ecp/skills?since=0").await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    assert_eq!(listing["skills"].as_array().map(Vec::len), Some(0));
    let (status, _) = replica.get("/ecp/manifest").await;
    assert_eq!(status, StatusCode::OK);
    let finished = pushes.iter().filter(|p| p.is_finished()).count();
    assert_eq!(finished, 0, "every push is still waiting for the lock while reads are answered");
    release.send(()).expect("the holder waits");
    tokio::task::block_in_place(|| holder.join()).expect("the holder commits");
    for push in pushes {
        let (status, merged) = push.await.expect("the push task");
        assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    }
    // One sequence number per install, in commit order, none skipped.
    let seqs: Vec<i64> = server.with("queued", |db| {
        let rows = db.query("SELECT seq FROM hub_versions ORDER BY seq", &[]).expect("the versions");
        rows.iter().map(|r| r.get(0)).collect()
    });
    assert_eq!(seqs, (1..=PUSHES as i64).collect::<Vec<_>>());
    let (_, live) = replica.get("/livez").await;
    assert_eq!(live["sequence"], PUSHES as i64);
    let (_, listing) = replica.get("/ecp/skills?since=0").await;
    assert_eq!(listing["skills"].as_array().map(Vec::len), Some(PUSHES), "{listing}");
}

/// `body` POSTed to `/ecp/skills` of `replica`, signed with `key` for the replica's own address.
async fn signed_push(replica: &Replica, key: &SigningKey, body: Vec<u8>) -> (StatusCode, Value) {
    let authority = replica.node.local_addr().to_string();
    let line = RequestLine { method: "POST", path_and_query: "/ecp/skills" };
    let signed = sign_request(key, &authority, &line, &body, now(), &nonce());
    let request = signed
        .pairs()
        .into_iter()
        .fold(replica.client.post(replica.url("/ecp/skills")), |r, (name, value)| r.header(name, value));
    let reply =
        request.header("content-type", "application/json").body(body).send().await.expect("an answer");
    (reply.status(), reply.json().await.expect("a JSON answer"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_signed_with_two_keys_through_one_address_have_a_budget_each() {
    let Some(server) = start_or_skip("pushes_signed_with_two_keys_through_one_address_have_a_budget_each")
    else {
        return;
    };
    static ALICE: LazyLock<SigningKey> =
        LazyLock::new(|| SigningKey::new("alice", b"alice-hub-key-0123456789abcdef-0123").expect("a key"));
    static BOB: LazyLock<SigningKey> =
        LazyLock::new(|| SigningKey::new("bob", b"bob-hub-key-0123456789abcdef-012345").expect("a key"));
    let (alice, bob): (&'static SigningKey, &'static SigningKey) = (&ALICE, &BOB);
    let (alice_key, bob_key) = (alice.clone(), bob.clone());
    // One new skill per sender per hour; both clients come from 127.0.0.1.
    let replica = Replica::start(&server.database("keyed_budgets"), move |c: &mut Config| {
        c.sender_limits.per_hour = 1;
        c.keys = vec![alice_key, bob_key];
    })
    .await;
    let push = |key: &'static SigningKey, n: usize| signed_push(&replica, key, update("pusher", &[skill(n)]));
    let (status, merged) = push(alice, 1).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    // Another key through the same address: a budget of its own.
    let (status, merged) = push(bob, 2).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    // One past the limit, each key: refused, the message naming the key's account.
    for key in [alice, bob] {
        let (status, refused) = push(key, 3).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
        let message = refused["error"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("key:{}", key.id())), "{refused}");
    }
}

/// A hub replica as a real `ecp-node serve --store` process, its stderr in a file.
struct Process {
    child: Child,
    dir: tempfile::TempDir,
    url: String,
}

impl Process {
    fn start(store: &str, key_file: &std::path::Path) -> Process {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let stderr = std::fs::File::create(dir.path().join("stderr")).expect("a stderr file");
        let child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
            .args(["serve", "--listen", "127.0.0.1:0", "--no-mdns", "--data"])
            .arg(dir.path().join("data"))
            .args(["--store", store, "--hub-key-file"])
            .arg(key_file)
            .env_clear()
            .env("RUST_LOG", "debug")
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("the binary starts");
        let mut process = Process { child, dir, url: String::new() };
        let deadline = Instant::now() + SOON;
        process.url = loop {
            let log = process.stderr();
            if let Some(at) = log.find("listening on http://") {
                let rest = &log[at + "listening on ".len()..];
                break rest.split([',', ' ', '\n']).next().expect("a URL").to_owned();
            }
            if let Ok(Some(status)) = process.child.try_wait() {
                panic!("the replica exited ({status}): {log}");
            }
            assert!(Instant::now() < deadline, "the replica did not start within {SOON:?}: {log}");
            std::thread::sleep(Duration::from_millis(50));
        };
        process
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default()
    }

    /// SIGTERM, then what it wrote to stderr.
    fn stop(mut self) -> String {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
        self.stderr()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key file holding `seed` (owner-only), in `dir`.
fn key_file(dir: &std::path::Path, name: &str, seed: &[u8; 32]) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("{}\n", hex::encode(seed))).expect("the key file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_given_the_key_file_serves_its_key_which_never_reaches_the_database_a_response_or_a_log() {
    let Some(server) = start_or_skip("a_replica_given_the_key_file_serves_its_key") else {
        return;
    };
    let keys = tempfile::tempdir().expect("a temporary folder");
    let seed = rand::random::<[u8; 32]>();
    let (secret, key_id) = (hex::encode(seed), NodeKey::from_seed(&seed).key_id());
    let file = key_file(keys.path(), "hub.key", &seed);
    let url = server.database("key_file");
    let replica = tokio::task::block_in_place(|| Process::start(&url, &file));
    let client = reqwest::Client::builder().no_proxy().timeout(SOON).build().expect("a client");
    let get = |path: &str| client.get(format!("{}{path}", replica.url)).send();
    let manifest: Value = get("/ecp/manifest").await.expect("an answer").json().await.expect("JSON");
    assert_eq!((manifest["keyId"].as_str(), manifest["instance"].as_str()), (Some(&*key_id), Some(&*key_id)));
    let pushed = client
        .post(format!("{}/ecp/skills", replica.url))
        .header("content-type", "application/json")
        .body(update("pusher", &[skill(1)]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(pushed.status(), StatusCode::OK);
    for path in ["/ecp/manifest", "/ecp/skills", "/ecp/skills?since=0", "/livez", "/readyz", "/metrics"] {
        let body = get(path).await.expect("an answer").text().await.expect("a body");
        assert!(!body.to_ascii_lowercase().contains(&secret), "{path} shows the key");
    }
    // Only the key's id is in the database.
    let (rows, recorded): (i64, Option<String>) = server.with("key_file", |db| {
        let held = db
            .query_one(
                "SELECT COUNT(*) FROM hub_meta WHERE key = 'node_key' OR value ILIKE '%' || $1 || '%'",
                &[&secret],
            )
            .expect("hub_meta")
            .get(0);
        let id = db.query_opt("SELECT value FROM hub_meta WHERE key = 'node_key_id'", &[]).expect("hub_meta");
        (held, id.map(|r| r.get(0)))
    });
    assert_eq!((rows, recorded.as_deref()), (0, Some(&*key_id)));
    // Another replica needs the same file: none, or another key, is refused at start.
    let refused = |key_file: Option<std::path::PathBuf>| async {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut config = Config::for_tests(dir.path());
        config.store = Some(url.as_str().into());
        config.hub_key_file = key_file;
        HubNode::bind(config).await.expect_err("refused").to_string()
    };
    let without = refused(None).await;
    assert!(without.contains("--hub-key-file"), "{without}");
    let other = refused(Some(key_file(keys.path(), "other.key", &rand::random()))).await;
    assert!(other.contains("the same key file"), "{other}");
    let garbled = keys.path().join("garbled.key");
    std::fs::write(&garbled, "not a key\n").expect("a file");
    let garbled = refused(Some(garbled)).await;
    assert!(garbled.contains("64 hex digits") && !garbled.contains("not a key"), "{garbled}");
    let log = tokio::task::block_in_place(|| replica.stop());
    assert!(log.contains("hub replica listening"), "{log}");
    assert!(!log.to_ascii_lowercase().contains(&secret), "the log shows the key: {log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_kept_in_the_database_moves_to_the_key_file_given_to_a_replica() {
    let Some(server) = start_or_skip("a_key_kept_in_the_database_moves_to_the_key_file") else {
        return;
    };
    let url = server.database("key_moved");
    let first = Replica::start(&url, |_| {}).await;
    let kept: String = server.with("key_moved", |db| {
        db.query_one("SELECT value FROM hub_meta WHERE key = 'node_key'", &[]).expect("a key kept").get(0)
    });
    let mut seed = [0u8; 32];
    hex::decode_to_slice(kept.trim(), &mut seed).expect("hex");
    let keys = tempfile::tempdir().expect("a temporary folder");
    let file = key_file(keys.path(), "hub.key", &seed);
    let second = Replica::start(&url, |c: &mut Config| c.hub_key_file = Some(file.clone())).await;
    assert_eq!(second.node.store().instance_id(), first.node.store().instance_id());
    assert_eq!(second.node.store().node_key().key_id(), first.node.store().node_key().key_id());
    let left: i64 = server.with("key_moved", |db| {
        db.query_one("SELECT COUNT(*) FROM hub_meta WHERE key = 'node_key'", &[]).expect("hub_meta").get(0)
    });
    assert_eq!(left, 0, "the key left the database");
    let (a, b) = (first.get("/ecp/manifest").await.1, second.get("/ecp/manifest").await.1);
    assert_eq!(a["keyId"], b["keyId"]);
}

/// The ETag and the bytes of `GET path` at `replica`.
async fn tagged(replica: &Replica, path: &str) -> (String, Vec<u8>) {
    let reply = replica.client.get(replica.url(path)).send().await.expect("an answer");
    assert_eq!(reply.status(), StatusCode::OK, "{path}");
    let tag = reply.headers()["etag"].to_str().expect("a tag").to_owned();
    (tag, reply.bytes().await.expect("a body").to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replica_sends_the_same_bytes_under_one_etag() {
    let Some(server) = start_or_skip("every_replica_sends_the_same_bytes_under_one_etag") else {
        return;
    };
    let (a, b) = two_replicas(&server, "same_bytes", |_| {}).await;
    for n in 1..=3 {
        let (status, merged) = a.push(update("pusher", &[skill(n)])).await;
        assert_eq!(status, StatusCode::OK, "{merged}");
    }
    for path in ["/ecp/skills", "/ecp/skills?since=1", "/ecp/skills?since=0&limit=2", "/ecp/manifest"] {
        let (tag_a, body_a) = tagged(&a, path).await;
        let (tag_b, body_b) = tagged(&b, path).await;
        assert_eq!(tag_a, tag_b, "{path}");
        assert!(
            body_a == body_b,
            "{path}: one tag, two bodies:\n{}\n{}",
            String::from_utf8_lossy(&body_a),
            String::from_utf8_lossy(&body_b)
        );
    }
    // The listing says when the hub last changed, not when a replica built it.
    let (_, body) = tagged(&b, "/ecp/skills").await;
    let listing: Value = serde_json::from_slice(&body).expect("JSON");
    let (_, manifest) = b.get("/ecp/manifest").await;
    assert_eq!(listing["generatedAt"], manifest["lastUpdate"]);
}
