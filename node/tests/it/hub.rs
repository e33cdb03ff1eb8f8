//! Hub mode (#18 item 5): several `ecp-node serve --store postgres://…`
//! replicas on one real PostgreSQL database ([`crate::pg`]) serve one skill
//! set — a push to one is served by another on the next request, a
//! replica hears of another's commit by LISTEN/NOTIFY, the limits on
//! installs and the replay protection of signed requests hold across
//! replicas, migrations are versioned, and what needs a folder is refused
//! at start. The conformance suite against two alternating replicas runs
//! in `.ci/hub-conformance.sh`.

use std::time::Duration;

use ecp_node::config::Config;
use ecp_node::hub::{HubError, HubNode};
use ecp_protocol::signed_auth::{RequestLine, SignatureHeaders, SigningKey, sign_request};
use reqwest::StatusCode;
use serde_json::Value;

use crate::cli::eventually;
use crate::pg::{PgServer, start_or_skip};
use crate::signed_auth::{nonce, now};
use crate::util::{ORIGIN, PUSH1, newer_version, packet_from, update};

/// The shared secret of the replicas in the replay test (key `default`).
const SECRET: &str = "hub-test-secret-0123456789abcdef";

/// A name both replicas answer to (on any port), so one signed request is valid at either.
const NAME: &str = "hub.test";

/// The authority signed requests are signed for: the balancer's, as clients see it.
const AUTHORITY: &str = "hub.test:7330";

/// A hub replica of a test's own, with its data folder.
pub(crate) struct Replica {
    pub(crate) node: HubNode,
    pub(crate) client: reqwest::Client,
    dir: tempfile::TempDir,
}

/// The headers of a `GET /ecp/manifest` signed with `key` now, under a fresh nonce.
fn signed_manifest(key: &SigningKey) -> SignatureHeaders {
    sign_request(
        key,
        AUTHORITY,
        &RequestLine { method: "GET", path_and_query: "/ecp/manifest" },
        b"",
        now(),
        &nonce(),
    )
}

impl Replica {
    /// `GET /ecp/manifest` carrying `signed`'s headers.
    fn get_manifest_signed(&self, signed: &SignatureHeaders) -> reqwest::RequestBuilder {
        signed
            .pairs()
            .into_iter()
            .fold(self.client.get(self.url("/ecp/manifest")), |r, (name, value)| r.header(name, value))
    }

    pub(crate) async fn start(url: &str, adjust: impl FnOnce(&mut Config)) -> Replica {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut config = Config::for_tests(dir.path());
        config.store = Some(url.into());
        adjust(&mut config);
        let node = HubNode::bind(config).await.expect("the replica starts");
        let client =
            reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(30)).build().expect("a client");
        Replica { node, client, dir }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.node.url())
    }

    /// The `/v1/` API token the replica made in its data folder.
    pub(crate) fn token(&self) -> String {
        let text =
            std::fs::read_to_string(self.dir.path().join("data").join("api-token")).expect("the token file");
        text.trim().to_owned()
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, Value) {
        let reply = self.client.get(self.url(path)).send().await.expect("an answer");
        (reply.status(), reply.json().await.expect("a JSON answer"))
    }

    pub(crate) async fn push(&self, body: Vec<u8>) -> (StatusCode, Value) {
        let reply = self
            .client
            .post(self.url("/ecp/skills"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("an answer");
        (reply.status(), reply.json().await.expect("a JSON answer"))
    }
}

pub(crate) async fn two_replicas(
    server: &PgServer,
    db: &str,
    adjust: impl Fn(&mut Config),
) -> (Replica, Replica) {
    let url = server.database(db);
    let a = Replica::start(&url, &adjust).await;
    let b = Replica::start(&url, &adjust).await;
    (a, b)
}

fn names(listing: &Value) -> Vec<String> {
    let skills = listing["skills"].as_array().expect("skills is an array");
    skills.iter().map(|p| p["skillName"].as_str().expect("a name").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_to_one_replica_is_served_by_the_other_on_the_next_request() {
    let Some(server) = start_or_skip("a_push_to_one_replica_is_served_by_the_other_on_the_next_request")
    else {
        return;
    };
    let (a, b) = two_replicas(&server, "served", |_| {}).await;
    let (_, before) = b.get("/ecp/manifest").await;
    assert_eq!(before["sequenceNum"], 0);

    let (status, merged) = a.push(PUSH1.to_vec()).await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert_eq!((merged["newSkills"].as_i64(), merged["rejectedSkills"].as_i64()), (Some(1), Some(3)));

    // The very next request, to the other replica: no waiting.
    let (_, manifest) = b.get("/ecp/manifest").await;
    assert_eq!(manifest["sequenceNum"], 1, "{manifest}");
    assert_eq!(manifest["skillNames"], serde_json::json!(["git-bisect-regression"]));
    let (_, since) = b.get("/ecp/skills?since=0").await;
    assert_eq!(names(&since), ["git-bisect-regression"]);
    let (_, digest_version) = b
        .get(&format!(
            "/ecp/skills/git-bisect-regression?digest={}",
            since["skills"][0]["integrityHash"].as_str().expect("a hash")
        ))
        .await;
    assert_eq!(names(&digest_version), ["git-bisect-regression"], "{digest_version}");
    // One instance, one key: the replicas are one node to their clients.
    let (_, from_a) = a.get("/ecp/manifest").await;
    assert_eq!((&from_a["instance"], &from_a["publicKey"]), (&manifest["instance"], &manifest["publicKey"]));
    let tag = |r: &Replica| {
        let (client, url) = (r.client.clone(), r.url("/ecp/skills"));
        async move { client.get(url).send().await.expect("an answer").headers()["etag"].clone() }
    };
    assert_eq!(tag(&a).await, tag(&b).await, "the listing's ETag is the same at both replicas");

    // And back: a push to the second is served by the first.
    let newer = update("pusher", &[packet_from(ORIGIN, "hub-second-skill", "2026-11-21T10:00:00Z")]);
    let (status, merged) = b.push(newer).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    let (_, since) = a.get("/ecp/skills?since=1").await;
    assert_eq!(names(&since), ["hub-second-skill"], "only what changed after 1");
    assert_eq!(since["sequenceNum"], 2);

    // A newer version, pushed to one replica: the superseded one is still
    // served by digest at the other (one stored copy per version).
    let old = since["skills"][0]["integrityHash"].as_str().expect("a hash").to_owned();
    let newer = update("pusher", &[newer_version("hub-second-skill", "2026-11-22T10:00:00Z", "Step two.")]);
    let (status, merged) = a.push(newer).await;
    assert_eq!((status, merged["updatedSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    let (status, superseded) = b.get(&format!("/ecp/skills/hub-second-skill?digest={old}")).await;
    assert_eq!(status, StatusCode::OK, "{superseded}");
    assert_eq!(superseded["skills"][0]["integrityHash"], old.as_str());
    assert_eq!(superseded["sequenceNum"], 3);

    // Every refusal is kept with its reason, and the audit log has each decision.
    let (refused, audited) = server.with("served", |db| {
        let refused: Vec<(String, String)> = db
            .query("SELECT name, reason FROM hub_quarantine ORDER BY id", &[])
            .expect("the quarantine")
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let audited: i64 = db.query_one("SELECT COUNT(*) FROM hub_audit", &[]).expect("the audit log").get(0);
        (refused, audited)
    });
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused.iter().any(|(n, r)| n == "cleanup" && r.contains("safety scan")), "{refused:?}");
    assert_eq!(audited, 6, "three installs and three refusals");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_name_holding_nul_is_kept_in_quarantine_and_the_rest_installs() {
    let Some(server) =
        start_or_skip("a_refused_name_holding_nul_is_kept_in_quarantine_and_the_rest_installs")
    else {
        return;
    };
    let (a, _b) = two_replicas(&server, "nul", |_| {}).await;
    // PostgreSQL's TEXT refuses NUL: the refusal must still be recorded, and
    // the update's good packet installed (not a 503 to retry forever).
    let mut bad = packet_from(ORIGIN, "nul-name", "2026-11-21T10:00:00Z");
    bad.skill_name = "bad\u{0}name".to_owned();
    let good = packet_from(ORIGIN, "hub-good-skill", "2026-11-21T10:00:00Z");
    let (status, merged) = a.push(update("pusher", &[bad, good])).await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert_eq!(
        (merged["newSkills"].as_i64(), merged["rejectedSkills"].as_i64()),
        (Some(1), Some(1)),
        "{merged}"
    );
    let refused: Vec<String> = server.with("nul", |db| {
        db.query("SELECT name FROM hub_quarantine", &[])
            .expect("the quarantine")
            .iter()
            .map(|r| r.get(0))
            .collect()
    });
    assert_eq!(refused, ["bad\u{fffd}name"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_hears_of_another_replicas_commit_without_a_request() {
    let Some(server) = start_or_skip("a_replica_hears_of_another_replicas_commit_without_a_request") else {
        return;
    };
    let (a, b) = two_replicas(&server, "notified", |_| {}).await;
    let mut heard = b.node.store().subscribe();
    assert_eq!(*heard.borrow_and_update(), 0);
    let (status, _) =
        a.push(update("pusher", &[packet_from("carol", "notified-skill", "2026-11-21T10:00:00Z")])).await;
    assert_eq!(status, StatusCode::OK);
    // B makes no request: only NOTIFY (or, failing it, B's listener's poll) can tell it.
    let seq = eventually("replica B hears of sequence 1", Duration::from_secs(20), || {
        let seq = *heard.borrow();
        async move { (seq >= 1).then_some(seq) }
    })
    .await;
    assert_eq!(seq, 1);
    // Its liveness answer reports it, read from memory, not the database.
    let (_, live) = b.get("/livez").await;
    assert_eq!(live["sequence"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_on_installs_hold_across_replicas() {
    let Some(server) = start_or_skip("the_limits_on_installs_hold_across_replicas") else { return };
    // Two installs per origin per hour, whichever replica takes them.
    let (a, b) = two_replicas(&server, "limited", |c: &mut Config| {
        c.origin_limits.per_hour = 2;
    })
    .await;
    let skill = |n: u32| packet_from("flooder", &format!("limited-{n}"), "2026-11-21T10:00:00Z");
    let (status, merged) = a.push(update("pusher", &[skill(1)])).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)));
    // At the limit: the second install, on the other replica, is taken.
    let (status, merged) = b.push(update("pusher", &[skill(2)])).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");
    // One past it: refused whole, on either replica.
    for replica in [&a, &b] {
        let (status, refused) = replica.push(update("pusher", &[skill(3)])).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
        assert_eq!(refused["code"], "origin_rate_limited");
    }
    let (_, manifest) = a.get("/ecp/manifest").await;
    assert_eq!(manifest["skillCount"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_request_replayed_to_another_replica_is_refused() {
    let Some(server) = start_or_skip("a_signed_request_replayed_to_another_replica_is_refused") else {
        return;
    };
    let (a, b) = two_replicas(&server, "replayed", |c: &mut Config| {
        c.secret = Some(SECRET.into());
        c.names = vec![NAME.to_owned()];
    })
    .await;
    let key = SigningKey::new("default", SECRET.as_bytes()).expect("a valid key");
    let signed = signed_manifest(&key);
    let send = |r: &Replica| r.get_manifest_signed(&signed).send();
    let first = send(&a).await.expect("an answer");
    assert_eq!(first.status(), StatusCode::OK, "{}", first.text().await.unwrap_or_default());
    // Each replica's own cache has never seen it: only the database can tell.
    let replayed = send(&b).await.expect("an answer");
    assert_eq!(replayed.status(), StatusCode::UNAUTHORIZED);
    let body: Value = replayed.json().await.expect("a JSON error");
    assert_eq!(body["code"], "replayed_nonce", "{body}");
    // A fresh nonce is still taken by the second replica.
    let fresh = b.get_manifest_signed(&signed_manifest(&key)).send();
    assert_eq!(fresh.await.expect("an answer").status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_versioned_and_a_newer_schema_is_refused() {
    let Some(server) = start_or_skip("migrations_are_versioned_and_a_newer_schema_is_refused") else {
        return;
    };
    let url = server.database("versioned");
    let first = Replica::start(&url, |_| {}).await;
    let meta = |key: &'static str| {
        server.with("versioned", |db| {
            db.query_one("SELECT value FROM hub_meta WHERE key = $1", &[&key])
                .expect("a meta row")
                .get::<_, String>(0)
        })
    };
    assert_eq!(meta("schema"), "5");
    let (status, _) = first.push(PUSH1.to_vec()).await;
    assert_eq!(status, StatusCode::OK);
    drop(first);
    // A second start migrates nothing and keeps the identity.
    let instance = meta("instance_id");
    let again = Replica::start(&url, |_| {}).await;
    assert_eq!(again.node.store().instance_id(), instance);
    drop(again);
    // A database at schema 3 (before bundles), holding a skill, is migrated
    // to 5 on start: the skill still served, no blob held.
    server.with("versioned", |db| {
        db.batch_execute(crate::hub_quarantine::BACK_TO_SCHEMA_4).expect("back to schema 4");
        db.batch_execute(
            "DROP TABLE hub_pending, hub_blob_refs, hub_blob_chunks, hub_blobs;
             ALTER TABLE hub_skills DROP COLUMN bundle_digest;
             DELETE FROM hub_meta WHERE key = 'blob_bytes';
             UPDATE hub_meta SET value = '3' WHERE key = 'schema'",
        )
        .expect("back to schema 3")
    });
    let migrated = Replica::start(&url, |_| {}).await;
    assert_eq!((meta("schema"), meta("blob_bytes")), ("5".to_owned(), "0".to_owned()));
    let (_, manifest) = migrated.get("/ecp/manifest").await;
    assert_eq!(manifest["skillNames"], serde_json::json!(["git-bisect-regression"]), "{manifest}");
    drop(migrated);
    server.with("versioned", |db| {
        db.execute("UPDATE hub_meta SET value = '99' WHERE key = 'schema'", &[]).expect("an update")
    });
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut config = Config::for_tests(dir.path());
    config.store = Some(url.as_str().into());
    let refused = HubNode::bind(config).await.expect_err("a newer schema is refused");
    assert!(refused.to_string().contains("schema 99 is newer"), "{refused}");
}

#[tokio::test]
async fn a_replica_refuses_what_needs_a_folder_of_its_own() {
    // Refused before the database is reached: no server needed.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut config = Config::for_tests(dir.path());
    config.store = Some("postgres://ecp@127.0.0.1:1/none".into());
    config.peers_file = Some(dir.path().join("peers.toml"));
    match HubNode::bind(config).await {
        Err(e @ HubError::Refused(_)) => assert!(e.to_string().contains("--peers"), "{e}"),
        other => panic!("expected a refusal naming --peers, got {other:?}"),
    }
    let mut config = Config::for_tests(dir.path());
    config.store = Some("not a url".into());
    let bad = HubNode::bind(config).await.expect_err("a bad URL is refused");
    assert!(bad.to_string().contains("invalid --store"), "{bad}");
    assert!(!bad.to_string().contains("not a url"), "the URL (maybe with a password) is not echoed: {bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_is_a_signal_and_its_payload_is_never_the_sequence_number() {
    let Some(server) =
        start_or_skip("a_notification_is_a_signal_and_its_payload_is_never_the_sequence_number")
    else {
        return;
    };
    let (a, b) = two_replicas(&server, "signalled", |_| {}).await;
    let mut heard = b.node.store().subscribe();
    // Any role that can connect can NOTIFY: a number it sends is not taken.
    server.with("signalled", |db| {
        db.execute("SELECT pg_notify('ecp_changes', '999999')", &[]).expect("a notification")
    });
    let (status, _) =
        a.push(update("pusher", &[packet_from("carol", "signalled-skill", "2026-11-21T10:00:00Z")])).await;
    assert_eq!(status, StatusCode::OK);
    let seq = eventually("replica B hears of a change", Duration::from_secs(20), || {
        let seq = *heard.borrow_and_update();
        async move { (seq >= 1).then_some(seq) }
    })
    .await;
    assert_eq!(seq, 1, "the database's sequence number, not the notification's");
    let (_, live) = b.get("/livez").await;
    assert_eq!(live["sequence"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_errors_are_sorted_by_sqlstate_and_a_held_lock_times_out_to_a_retry() {
    let Some(server) =
        start_or_skip("postgresql_errors_are_sorted_by_sqlstate_and_a_held_lock_times_out_to_a_retry")
    else {
        return;
    };
    let url = server.database("sorted");
    let a = Replica::start(&url, |_| {}).await;
    let refuse = |state: &str, message: &str| {
        let sql = format!(
            "CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN RAISE EXCEPTION '{message}' USING ERRCODE = '{state}'; END $$;
             DROP TRIGGER IF EXISTS refuse ON hub_audit;
             CREATE TRIGGER refuse BEFORE INSERT ON hub_audit FOR EACH ROW EXECUTE FUNCTION refuse();"
        );
        server.with("sorted", |db| db.batch_execute(&sql).expect("a trigger"));
    };
    let skill =
        |n: u32| update("pusher", &[packet_from("carol", &format!("sorted-{n}"), "2026-11-21T10:00:00Z")]);
    // Class 22, a value the database refuses: 422 naming it, not "retry".
    refuse("22023", "gecko value refused");
    let (status, body) = a.push(skill(1)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "store_refused_value", "{body}");
    let message = body["error"].as_str().unwrap_or_default();
    assert!(message.contains("gecko value refused") && message.contains("22023"), "{body}");
    // Class 23, a constraint the hub's writes never break: 500, the cause in the log only.
    refuse("23505", "hidden detail");
    let (status, body) = a.push(skill(2)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(!body.to_string().contains("hidden detail"), "{body}");
    server.with("sorted", |db| db.batch_execute("DROP TRIGGER refuse ON hub_audit").expect("dropped"));

    // The sequence number's row held elsewhere (a replica cut off
    // mid-push): the push gives up at the lock timeout, 503 with Retry-After.
    let mut holder = tokio::task::block_in_place(|| {
        let mut holder = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        holder
            .batch_execute("BEGIN; SELECT value FROM hub_meta WHERE key = 'sequence' FOR UPDATE")
            .expect("the row locked");
        holder
    });
    let reply = a
        .client
        .post(a.url("/ecp/skills"))
        .header("content-type", "application/json")
        .body(skill(3))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(reply.headers().contains_key("retry-after"));
    let body: Value = reply.json().await.expect("a JSON error");
    assert_eq!(body["code"], "store_unavailable", "{body}");
    tokio::task::block_in_place(move || {
        holder.batch_execute("ROLLBACK").expect("released");
        drop(holder);
    });
    // Released: the same push is taken.
    let (status, merged) = a.push(skill(3)).await;
    assert_eq!((status, merged["newSkills"].as_i64()), (StatusCode::OK, Some(1)), "{merged}");

    // A database that does not exist: the start says what to do.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut config = Config::for_tests(dir.path());
    config.store = Some(server.url("missing").as_str().into());
    let refused = HubNode::bind(config).await.expect_err("no such database");
    assert!(refused.to_string().contains("create the database first"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_nonces_are_capped_across_replicas() {
    let Some(server) = start_or_skip("a_keys_nonces_are_capped_across_replicas") else {
        return;
    };
    let (a, b) = two_replicas(&server, "capped", |c: &mut Config| {
        c.secret = Some(SECRET.into());
        c.names = vec![NAME.to_owned()];
        c.replay_cache_capacity = 2;
    })
    .await;
    let key = SigningKey::new("default", SECRET.as_bytes()).expect("a valid key");
    let send = |r: &Replica| r.get_manifest_signed(&signed_manifest(&key)).send();
    // Two nonces of one key, one at each replica: at the cap, both taken.
    assert_eq!(send(&a).await.expect("an answer").status(), StatusCode::OK);
    assert_eq!(send(&b).await.expect("an answer").status(), StatusCode::OK);
    // One past it, at a replica whose own memory holds one: the hub's cap refuses it.
    let refused = send(&a).await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = refused.json().await.expect("a JSON error");
    assert_eq!(body["code"], "replay_cache_full", "{body}");
    let held: i64 = server.with("capped", |db| {
        db.query_one("SELECT COUNT(*) FROM hub_nonces", &[]).expect("the nonces").get(0)
    });
    assert_eq!(held, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_sender_limit_counts_the_client_a_trusted_balancer_names_and_no_other() {
    let Some(server) =
        start_or_skip("the_per_sender_limit_counts_the_client_a_trusted_balancer_names_and_no_other")
    else {
        return;
    };
    // One new skill per sender per hour; this test's client is the balancer (127.0.0.1).
    let one_each = |c: &mut Config| c.sender_limits.per_hour = 1;
    let trusting = Replica::start(&server.database("forwarded"), |c: &mut Config| {
        one_each(c);
        c.trusted_proxies = vec!["127.0.0.1".parse().expect("an address")];
    })
    .await;
    let untrusting = Replica::start(&server.database("unforwarded"), one_each).await;
    let push = |r: &Replica, n: u32, forwarded_for: &str| {
        let skill = packet_from(&format!("origin-{n}"), &format!("forwarded-{n}"), "2026-11-21T10:00:00Z");
        r.client
            .post(r.url("/ecp/skills"))
            .header("content-type", "application/json")
            .header("x-forwarded-for", forwarded_for)
            .body(update("pusher", &[skill]))
            .send()
    };
    // Behind the configured balancer: each client it names has a budget of
    // its own (the last address it appended counts, not what the client claimed).
    assert_eq!(push(&trusting, 1, "198.51.100.1").await.expect("an answer").status(), StatusCode::OK);
    let other = push(&trusting, 2, "198.51.100.1, 198.51.100.2").await.expect("an answer");
    assert_eq!(other.status(), StatusCode::OK, "{}", other.text().await.unwrap_or_default());
    let again = push(&trusting, 3, "198.51.100.1").await.expect("an answer");
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS, "the first client's budget is spent");
    // From an address not configured as a balancer the header is not
    // believed: both pushes are that address's, one budget.
    assert_eq!(push(&untrusting, 1, "198.51.100.1").await.expect("an answer").status(), StatusCode::OK);
    let second = push(&untrusting, 2, "198.51.100.2").await.expect("an answer");
    assert_eq!(second.status(), StatusCode::TOO_MANY_REQUESTS);
}
