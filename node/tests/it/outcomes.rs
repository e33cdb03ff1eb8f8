//! Outcomes (#19): agents report how skills did, through the CLI and the
//! `/v1/` API, on real nodes; the confidence follows the evidence (ten
//! failures, ten successes), a failing skill is retired out of the skills
//! folder and restored, a report sent again counts once, bad reports get a
//! 4xx naming the problem.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cli::{Folders, eventually, skill_md, update_from, write_skill};
use crate::util::{TestNode, add_local_skill};

/// Generous: tests run in parallel on two cores.
const SOON: Duration = Duration::from_secs(30);

/// The default accept threshold the numbers are measured against.
const THRESHOLD: f64 = ecp_protocol::policy::DEFAULT_MIN_CONFIDENCE;

/// `POST /v1/skills/{name}/outcomes` with `body`: status and JSON answer.
pub(super) async fn report_with(node: &TestNode, name: &str, body: Value) -> (u16, Value) {
    let reply = node
        .client()
        .post(node.url(&format!("/v1/skills/{name}/outcomes")))
        .json(&body)
        .send()
        .await
        .expect("POST outcomes");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or(Value::Null))
}

/// Reports one `outcome` of `name`, which must be counted; the answer.
pub(super) async fn report(node: &TestNode, name: &str, outcome: &str) -> Value {
    let (status, answer) = report_with(node, name, json!({ "outcome": outcome })).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn skill(node: &TestNode, name: &str) -> Value {
    node.get_json(&format!("/v1/skills/{name}")).await["skill"].clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.005
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_failures_and_ten_successes_through_the_api_carry_skills_across_the_threshold() {
    let node = TestNode::start_with(|c| c.outcomes.min_uses = 0).await;
    add_local_skill(node.library(), "fragile", 0.8).await;
    add_local_skill(node.library(), "promising", 0.54).await;
    let before = skill(&node, "fragile").await;
    assert!(close(before["confidence"].as_f64().unwrap(), 0.8), "{before}");
    for _ in 0..10 {
        report(&node, "fragile", "failure").await;
        report(&node, "promising", "success").await;
    }
    let fragile = skill(&node, "fragile").await;
    let confidence = fragile["confidence"].as_f64().unwrap();
    assert!(close(confidence, 0.40) && confidence < THRESHOLD - 0.1, "{fragile}");
    assert_eq!(fragile["priorConfidence"], 0.8);
    assert_eq!(
        (&fragile["score"]["uses"], &fragile["score"]["failures"], &fragile["score"]["streak"]),
        (&json!(10), &json!(10), &json!(0))
    );
    let promising = skill(&node, "promising").await;
    let confidence = promising["confidence"].as_f64().unwrap();
    assert!(close(confidence, 0.77) && confidence > THRESHOLD, "{promising}");
    assert_eq!((&promising["score"]["successes"], &promising["score"]["streak"]), (&json!(10), &json!(10)));
    assert!(promising["score"]["lastUsed"].is_string(), "{promising}");
    // The list says the same.
    let listed = node.get_json("/v1/skills").await;
    let entry =
        listed["skills"].as_array().unwrap().iter().find(|s| s["name"] == "promising").unwrap().clone();
    assert_eq!(entry["score"], promising["score"]);
    // Never retired: retire_min_uses = 0 turns retirement off.
    assert!(fragile["score"]["retired"].is_null(), "{fragile}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_sent_again_with_its_id_counts_once_and_a_new_version_starts_its_streak_at_zero() {
    let node = TestNode::start().await;
    add_local_skill(node.library(), "steady", 0.7).await;
    let body = json!({ "outcome": "success", "note": "worked", "at": "2026-11-20T10:00:00Z", "id": "run-1" });
    let (status, first) = report_with(&node, "steady", body.clone()).await;
    assert_eq!((status, &first["duplicate"]), (200, &json!(false)), "{first}");
    let (status, again) = report_with(&node, "steady", body).await;
    assert_eq!((status, &again["duplicate"], &again["id"]), (200, &json!(true), &first["id"]), "{again}");
    report(&node, "steady", "success").await;
    let score = skill(&node, "steady").await["score"].clone();
    assert_eq!((&score["uses"], &score["streak"]), (&json!(2), &json!(2)), "{score}");
    // A new version keeps the counts; its streak starts at 0.
    add_local_skill(node.library(), "steady", 0.71).await;
    let score = skill(&node, "steady").await["score"].clone();
    assert_eq!((&score["uses"], &score["successes"], &score["streak"]), (&json!(2), &json!(2), &json!(0)));
    let answer = report(&node, "steady", "success").await;
    assert_eq!((&answer["score"]["uses"], &answer["score"]["streak"]), (&json!(3), &json!(1)), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_reports_get_a_4xx_naming_the_problem_and_count_nothing() {
    let node = TestNode::start().await;
    add_local_skill(node.library(), "target", 0.7).await;
    let note = |n: usize| json!({ "outcome": "failure", "note": "n".repeat(n) });
    for (body, status, code) in [
        (json!({ "outcome": "maybe" }), 400, "invalid_outcome"),
        (json!({ "outcome": "success", "extra": 1 }), 400, "invalid_json"),
        (json!({ "note": "no outcome" }), 400, "invalid_json"),
        (note(1025), 400, "note_too_long"),
        (json!({ "outcome": "success", "at": "last tuesday" }), 400, "invalid_time"),
        (json!({ "outcome": "success", "at": "2999-01-01T00:00:00Z" }), 400, "invalid_time"),
        (json!({ "outcome": "success", "id": "x".repeat(129) }), 400, "invalid_id"),
    ] {
        let (got, answer) = report_with(&node, "target", body.clone()).await;
        assert_eq!((got, answer["code"].as_str()), (status, Some(code)), "{body}: {answer}");
        assert!(answer["error"].as_str().is_some_and(|e| !e.is_empty()), "{answer}");
    }
    let (got, answer) = report_with(&node, "nobody", json!({ "outcome": "success" })).await;
    assert_eq!(got, 404, "{answer}");
    let plain = node
        .client()
        .post(node.url("/v1/skills/target/outcomes"))
        .body(r#"{"outcome": "success"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 415);
    assert_eq!(skill(&node, "target").await["score"]["uses"], 0, "nothing was counted");
    // At the limits: a note of 1024 bytes and an id of 128 are taken.
    let (got, answer) = report_with(&node, "target", note(1024)).await;
    assert_eq!(got, 200, "{answer}");
    let (got, answer) =
        report_with(&node, "target", json!({ "outcome": "success", "id": "x".repeat(128) })).await;
    assert_eq!(got, 200, "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_takes_sixty_reports_a_minute_and_the_sixty_first_gets_429() {
    let node = TestNode::start_with(|c| c.outcomes.min_uses = 0).await;
    add_local_skill(node.library(), "busy", 0.7).await;
    for i in 0..ecp_node::outcomes::PER_MINUTE {
        let (status, answer) = report_with(&node, "busy", json!({ "outcome": "success" })).await;
        assert_eq!(status, 200, "report {i}: {answer}");
    }
    let (status, answer) = report_with(&node, "busy", json!({ "outcome": "success" })).await;
    assert_eq!((status, answer["code"].as_str()), (429, Some("too_many_outcomes")), "{answer}");
    assert_eq!(skill(&node, "busy").await["score"]["uses"], 60);
    // Another skill is not held back by this one's reports.
    add_local_skill(node.library(), "quiet", 0.7).await;
    report(&node, "quiet", "success").await;
}

/// Runs one import pass now (as the folder watcher would), off the runtime.
async fn import_now(node: &TestNode) -> ecp_node::import::ImportReport {
    let library = node.library().clone();
    tokio::task::spawn_blocking(move || ecp_node::import::import_all(&library)).await.unwrap()
}

/// The names `GET /ecp/skills` serves as live skills.
async fn served(node: &TestNode) -> Vec<String> {
    let update = node.get_json("/ecp/skills").await;
    // No skills is `null`.
    let skills = update["skills"].as_array().cloned().unwrap_or_default();
    skills.iter().map(|p| p["skillName"].as_str().unwrap().to_owned()).collect()
}

/// The names `/v1/search` finds for `query`.
async fn found(node: &TestNode, query: &str) -> Vec<String> {
    let answer = node.get_json(&format!("/v1/search?q={query}")).await;
    answer["results"].as_array().unwrap().iter().map(|hit| hit["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_failing_skill_is_retired_out_of_its_folder_kept_withdrawn_and_restored() {
    let node = TestNode::start().await;
    let skills = node.config().skills_dir.clone();
    let file = write_skill(&skills, "flaky", &skill_md("flaky", "confidence: 0.8\n"));
    import_now(&node).await;
    assert!(served(&node).await.contains(&"flaky".to_owned()));
    // Four failures of five: under the default line (5 uses), not retired yet.
    for _ in 0..4 {
        assert_eq!(report(&node, "flaky", "failure").await["retired"], false);
    }
    assert!(file.exists(), "not retired before its fifth use");
    let fifth = report(&node, "flaky", "failure").await;
    assert_eq!(fifth["retired"], true, "{fifth}");
    eventually("the retired skill's file leaves the skills folder", SOON, || async {
        (!file.exists()).then_some(())
    })
    .await;
    // The import does not take the node's removal for the agent's deletion.
    let pass = import_now(&node).await;
    assert!(pass.tombstoned.is_empty(), "{:?}", pass.tombstoned);
    let kept = node.get_json("/v1/skills/flaky").await;
    assert_eq!(kept["skill"]["deprecated"], false, "{kept}");
    assert!(
        kept["skill"]["score"]["retired"]["reason"].as_str().unwrap().contains("5 of its last 5"),
        "{kept}"
    );
    assert_eq!(kept["skill"]["score"]["failures"], 5);
    // Not found by search (#24) while retired.
    assert_eq!(found(&node, "flaky").await, Vec::<String>::new());
    // Withdrawn from sharing: this node is its origin, so peers get a tombstone.
    assert!(!served(&node).await.contains(&"flaky".to_owned()));
    let since = node.get_json("/ecp/skills?since=0").await;
    let withdrawal = since["skills"].as_array().unwrap().iter().find(|p| p["skillName"] == "flaky").cloned();
    assert_eq!(withdrawal.map(|p| p["deprecated"].clone()), Some(json!(true)), "{since}");
    let manifest = node.get_json("/ecp/manifest").await;
    assert!(!manifest["skillNames"].as_array().unwrap().contains(&json!("flaky")), "{manifest}");
    let audit = node.get_json("/v1/audit").await;
    assert!(
        audit["audit"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["skillName"] == "flaky" && e["decision"] == "retired"),
        "{audit}"
    );
    // The status page and the metrics say so.
    let page = node.get("/").await.text();
    assert!(page.contains("5 uses: 0 ok, 5 failed, streak 0") && page.contains("retired (failing"), "{page}");
    let metrics = node.get("/metrics").await.text();
    for line in
        ["ecp_outcomes{outcome=\"failure\"} 5", "ecp_outcomes{outcome=\"success\"} 0", "ecp_skills_retired 1"]
    {
        assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
    }
    // Restored: back in the folder, served again, not imported as a deletion or an edit.
    let restored =
        node.client().post(node.url("/v1/skills/flaky/restore")).json(&json!({})).send().await.unwrap();
    assert_eq!(restored.status(), 200);
    assert_eq!(restored.json::<Value>().await.unwrap()["restored"], true);
    eventually("the restored skill's file is back", SOON, || async { file.exists().then_some(()) }).await;
    let pass = import_now(&node).await;
    assert!(pass.tombstoned.is_empty() && pass.imported.is_empty(), "{pass:?}");
    assert!(served(&node).await.contains(&"flaky".to_owned()));
    let back = skill(&node, "flaky").await;
    assert!(back["score"]["retired"].is_null() && back["score"]["failures"] == 5, "{back}");
    assert_eq!(found(&node, "flaky").await, vec!["flaky".to_owned()], "restored: found by search again");
    // The recent outcomes start afresh: one more failure does not retire it again.
    assert_eq!(report(&node, "flaky", "failure").await["retired"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_external_skill_is_withdrawn_here_only_and_restored() {
    let node = TestNode::start_with(|c| c.outcomes.min_uses = 2).await;
    node.push_ok(&serde_json::to_vec(&update_from("peer-x", &[("borrowed", 0.9)])).unwrap()).await;
    let file = node.config().skills_dir.join("borrowed").join("SKILL.md");
    eventually("the received skill is projected", SOON, || async { file.exists().then_some(()) }).await;
    assert!(served(&node).await.contains(&"borrowed".to_owned()));
    report(&node, "borrowed", "failure").await;
    assert_eq!(report(&node, "borrowed", "failure").await["retired"], true);
    eventually("the retired skill's file goes", SOON, || async { (!file.exists()).then_some(()) }).await;
    // Not served at all (not this node's to tombstone for everyone).
    let since = node.get_json("/ecp/skills?since=0").await;
    let held = since["skills"].as_array().cloned().unwrap_or_default();
    assert!(!held.iter().any(|p| p["skillName"] == "borrowed"), "{since}");
    // A newer version from the peer stays retired: stored, not shown, not served.
    let mut newer = update_from("peer-x", &[("borrowed", 0.9)]);
    newer.skills[0] = ecp_protocol::SkillPacket::new(
        &ecp_protocol::packet::Origin::new("peer-x", "someone", "linux/amd64", "1.0"),
        "borrowed",
        "From a peer",
        &skill_md("borrowed", "tags: [v2]\n"),
        0.9,
        ecp_node::store::now(),
    );
    node.push_ok(&serde_json::to_vec(&newer).unwrap()).await;
    assert_eq!(skill(&node, "borrowed").await["version"], 2);
    assert!(!file.exists() && !served(&node).await.contains(&"borrowed".to_owned()));
    let out =
        node.client().post(node.url("/v1/skills/borrowed/restore")).json(&json!({})).send().await.unwrap();
    assert_eq!(out.status(), 200);
    eventually("the restored skill is back", SOON, || async { file.exists().then_some(()) }).await;
    assert!(std::fs::read_to_string(&file).unwrap().contains("v2"), "the current version is written");
    assert!(served(&node).await.contains(&"borrowed".to_owned()));
}

#[test]
fn through_the_cli_the_numbers_hold_a_skill_retires_out_of_the_folder_and_restore_brings_it_back() {
    let f = Folders::new();
    let src = f.tmp.path().join("src");
    write_skill(&src, "fragile", &skill_md("fragile", "confidence: 0.8\n"));
    write_skill(&src, "promising", &skill_md("promising", "confidence: 0.54\n"));
    let added = f.run(&["--init", "skill", "add", src.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{added:?}");
    let file = f.skills().join("fragile").join("SKILL.md");
    assert!(file.exists());
    let mut last = Value::Null;
    for i in 0..10 {
        let note = format!("attempt {i}");
        last = f.run(&["skill", "outcome", "fragile", "failure", "--note", &note, "--json"]).json();
        f.run(&["skill", "outcome", "promising", "success", "--json"]).json();
    }
    assert!(close(last["confidence"].as_f64().unwrap(), 0.40), "{last}");
    // Retired at its fifth failure (the default line): out of the folder, kept in the store.
    assert!(!file.exists(), "the retired skill's file is removed");
    let listed = f.run(&["skill", "list", "--json"]).json();
    let find =
        |name: &str| listed["skills"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone();
    let fragile = find("fragile");
    assert_eq!((&fragile["deprecated"], &fragile["score"]["uses"]), (&json!(false), &json!(10)), "{fragile}");
    assert!(fragile["score"]["retired"].is_object(), "{fragile}");
    let promising = find("promising");
    assert!(close(promising["confidence"].as_f64().unwrap(), 0.77), "{promising}");
    let table = f.run(&["skill", "list"]);
    assert!(table.stdout.contains("RETIRED") && table.stdout.contains("STREAK"), "{table:?}");
    let shown = f.run(&["skill", "show", "fragile"]);
    assert!(
        shown.stdout.contains("10 uses, 0 successes, 10 failures") && shown.stdout.contains("retired:"),
        "{shown:?}"
    );
    // The same id twice counts once.
    let first = f.run(&["skill", "outcome", "promising", "success", "--id", "job-7", "--json"]).json();
    let again = f.run(&["skill", "outcome", "promising", "success", "--id", "job-7", "--json"]).json();
    assert_eq!(
        (&first["score"]["uses"], &again["score"]["uses"], &again["duplicate"]),
        (&json!(11), &json!(11), &json!(true))
    );
    let bad = f.run(&["skill", "outcome", "promising", "maybe"]);
    assert_ne!(bad.code, 0, "{bad:?}");
    let restored = f.run(&["skill", "restore", "fragile"]);
    assert_eq!(restored.code, 0, "{restored:?}");
    assert!(restored.stdout.contains("restored fragile"), "{restored:?}");
    assert!(file.exists(), "restore writes the file back");
    let again = f.run(&["skill", "restore", "fragile"]);
    assert!(again.stdout.contains("not retired"), "{again:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stats_of_an_update_are_true() {
    let node = TestNode::start().await;
    let text = |name: &str, confidence: f64, tags: &str| {
        format!(
            "---\nname: {name}\ndescription: How to {name}\nconfidence: {confidence}\ntags: [{tags}]\n---\n# {name}\n\n\
             Read the failing output, change one thing, run the tests again.\n"
        )
    };
    crate::util::put_local_text(node.library(), &text("one", 0.6, "ops, git")).await;
    crate::util::put_local_text(node.library(), &text("two", 0.8, "ops")).await;
    for outcome in ["success", "success", "success", "failure"] {
        report(&node, "one", outcome).await;
    }
    let stats = node.get_json("/ecp/skills").await["stats"].clone();
    assert_eq!(stats["totalSkills"], 2, "{stats}");
    assert_eq!(stats["totalExtractions"], 2, "{stats}");
    assert!(close(stats["avgConfidence"].as_f64().unwrap(), 0.7), "{stats}");
    assert!(stats["uptimeHours"].as_f64().is_some_and(|h| h > 0.0), "{stats}");
    assert_eq!(stats["topWorkflows"], json!(["ops", "git"]), "{stats}");
    assert_eq!((&stats["totalUses"], &stats["totalSuccesses"]), (&json!(4), &json!(3)), "{stats}");
}

/// `b` pulls from `a` once; the names `b` holds live.
async fn pull_live(b: &TestNode, a: &TestNode) -> Vec<String> {
    let peers = format!("[[peer]]\nurl = \"{}\"\ntrust = 0.9\n", a.url(""));
    let file = ecp_node::config::PeersConfig::parse(&peers, "test peers").expect("a valid peer");
    let spec = ecp_node::federation::PeerSpec::configured(&file, &file.peers[0]);
    let ctx = ecp_node::federation::Context::new(
        b.library().clone(),
        b.config().policy.clone(),
        true,
        Duration::from_secs(10),
    );
    ecp_node::federation::pull(&ctx, &spec).await.unwrap_or_else(|e| panic!("pull: {e}"));
    let listed = b.get_json("/v1/skills").await;
    let skills = listed["skills"].as_array().cloned().unwrap_or_default();
    skills
        .iter()
        .filter(|s| s["deprecated"] == false)
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proven_node_holds_a_new_skill_back_until_three_successes_then_a_peer_gets_it_until_it_fails() {
    let a = TestNode::start_with(|c| {
        c.sharing.eligible = ecp_node::sharing::Eligible::Proven { streak: 3, confidence: 0.9 };
    })
    .await;
    let b = TestNode::start().await;
    add_local_skill(a.library(), "fresh", 0.8).await;
    let why = skill(&a, "fresh").await;
    assert_eq!(why["private"], "unproven", "{why}");
    assert!(why["privateReason"].as_str().unwrap().contains("3 successes in a row (it has 0)"), "{why}");
    for _ in 0..2 {
        report(&a, "fresh", "success").await;
        assert!(!pull_live(&b, &a).await.contains(&"fresh".to_owned()), "held back before three successes");
    }
    report(&a, "fresh", "success").await;
    assert!(skill(&a, "fresh").await["private"].is_null());
    assert!(pull_live(&b, &a).await.contains(&"fresh".to_owned()), "shared after three successes");
    // A failure: the streak is 0 and 11 / 14 = 0.79 is under 0.9, so it is withdrawn again.
    report(&a, "fresh", "failure").await;
    assert_eq!(skill(&a, "fresh").await["private"], "unproven");
    assert!(
        !pull_live(&b, &a).await.contains(&"fresh".to_owned()),
        "withdrawn from the peer when it degrades"
    );
}
