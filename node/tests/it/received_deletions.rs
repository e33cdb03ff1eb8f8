//! The deletion guard's receiving side with real nodes: the withdrawals one
//! peer sends in one pull round (all its pages together) or one push are
//! held when they would tombstone more than `max_bulk_delete` (5) and more
//! than half of the skills held from that peer — in the same `deletions`
//! list, naming the peer — while a deliberate removal, a delete at the
//! limit and another origin's skills pass as usual.

use std::time::Duration;

use ecp_node::Node;
use ecp_node::config::{Config, PeersConfig};
use ecp_node::federation::{self, Context, PeerSpec};
use ecp_node::store::Source;

use super::cli::{Folders, eventually, get};
use super::deletion_guard::{
    assert_all_live, deprecated, held, import, names, node_with, pull, remove_while_down, v1_post,
};

/// Tombstones `names` at `node` as `skill rm` does (a deliberate removal).
async fn remove(node: &Node, names: &[String]) {
    let (library, names) = (node.library().clone(), names.to_vec());
    tokio::task::spawn_blocking(move || {
        for name in &names {
            assert!(library.tombstone(name, Source::Operator).expect("tombstoned"), "{name} was live");
        }
    })
    .await
    .unwrap();
}

/// `from` pushes what `to` has not acknowledged, as its federator does.
async fn push(from: &Node, config: &Config, to: &Node) -> federation::PushReport {
    let file = PeersConfig::parse(&format!("[[peer]]\nurl = \"{}\"\n", to.url()), "test peers").unwrap();
    let spec = PeerSpec::configured(&file, &file.peers[0]);
    let ctx = Context::new(from.library().clone(), config.policy.clone(), true, Duration::from_secs(10));
    federation::push(&ctx, &spec).await.expect("the push succeeds")
}

/// The held deletions of `node`, as `/v1/deletions` lists them.
async fn listed(node: &Node) -> Vec<serde_json::Value> {
    get(node, "/v1/deletions").await["deletions"].as_array().unwrap().clone()
}

fn files_there(f: &Folders, names: &[String]) -> bool {
    names.iter().all(|n| f.skills().join(n).join("SKILL.md").is_file())
}

/// Waits until the files of `names` are in `f`'s folder: a running node's
/// worker writes them after the merge that brought them has answered.
async fn files_arrive(f: &Folders, names: &[String]) {
    eventually("the skills are written to the folder", Duration::from_secs(30), || {
        let there = files_there(f, names);
        async move { there.then_some(()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peers_bulk_delete_over_several_pages_is_held_at_the_receiver_until_accepted() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("mesh", 10);
    let a = node_with(&fa, &skills).await;
    // Pages of 3 packets: the 10 withdrawals come over 4 pages of one round.
    let mut config_b = fb.config();
    config_b.policy.max_packets = 3;
    let b = Node::bind(config_b.clone()).await.unwrap();
    pull(&b, &config_b, &a).await;
    assert_all_live(&b, &skills).await;
    files_arrive(&fb, &skills).await;

    // A's folder emptied, its marker kept: A holds it, then its user accepts.
    let a = remove_while_down(a, &fa, &skills).await;
    let [id_a] = held(&a).await[..] else { panic!("A holds its bulk delete") };
    let (status, answer) = v1_post(&a, &format!("/v1/deletions/{id_a}/accept")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(deprecated(&a, &skills).await, skills, "A really tombstones all 10");

    let report = pull(&b, &config_b, &a).await;
    assert_eq!(report.packets, 10, "{report:?}");
    assert_eq!((report.result.held_skills, report.result.updated_skills), (10, 0), "{report:?}");
    assert!(
        report.result.held[0].contains("deletion held: 10 of the 10 skills held from peer:"),
        "{report:?}"
    );
    assert!(deprecated(&b, &skills).await.is_empty());
    assert!(files_there(&fb, &skills), "B's folder keeps the skills");
    let instance_a = a.library().store().instance_id().to_owned();
    let by_cli = fb.run_async(&["deletions", "list", "--json"]).await.json();
    let [deletion] = by_cli["deletions"].as_array().unwrap().as_slice() else { panic!("one held: {by_cli}") };
    assert_eq!(deletion["source"], format!("peer:{instance_a}"), "{deletion}");
    assert_eq!(deletion["via"], format!("peer:{}", a.url()), "{deletion}");
    assert_eq!(deletion["names"].as_array().unwrap().len(), 10, "{deletion}");
    let text = fb.run_async(&["deletions", "list"]).await;
    assert!(text.stdout.contains(&format!("peer:{instance_a} via peer:")), "{text:?}");
    let status = fb.run_async(&["status"]).await;
    assert!(status.stdout.contains(&format!("held deletions:  1 from peer:{instance_a}")), "{status:?}");
    let audit = get(&b, "/v1/audit").await.to_string();
    assert!(audit.contains("deletion-held"), "{audit}");

    // The next round finds nothing new: no second deletion.
    let again = pull(&b, &config_b, &a).await;
    assert_eq!(again.result.held_skills, 0, "the cursor moved past them: {again:?}");
    assert_eq!(held(&b).await.len(), 1);

    // Accepted through the running server: merged as they came.
    let accepted = fb.run_async(&["deletions", "accept"]).await;
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert!(accepted.stdout.contains("10 skill(s) tombstoned"), "{accepted:?}");
    assert_eq!(deprecated(&b, &skills).await, skills);
    let gone = (fb.skills(), skills.clone());
    eventually("B's files are removed", Duration::from_secs(30), move || {
        let (dir, skills) = gone.clone();
        async move { skills.iter().all(|n| !dir.join(n).join("SKILL.md").exists()).then_some(()) }
    })
    .await;
    assert!(listed(&b).await.is_empty());
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pushed_bulk_delete_is_held_and_answered_as_held_then_rejected_keeps_the_skills() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("pushed", 10);
    let a = node_with(&fa, &skills).await;
    let b = Node::bind(fb.config()).await.unwrap();
    let first = push(&a, &fa.config(), &b).await;
    assert_eq!(first.result.new_skills, 10, "{first:?}");
    files_arrive(&fb, &skills).await;

    remove(&a, &skills).await;
    let report = push(&a, &fa.config(), &b).await;
    // The push answer is truthful: every packet counted once, the held ones as held.
    assert_eq!(
        (report.sent, report.result.held_skills, report.result.updated_skills),
        (10, 10, 0),
        "{report:?}"
    );
    assert_eq!(report.result.total(), 10);
    assert_eq!(report.result.held.len(), 10);
    assert!(report.result.held.iter().all(|l| l.contains(": deletion held: 10 of the 10")), "{report:?}");
    assert!(deprecated(&b, &skills).await.is_empty());
    assert!(files_there(&fb, &skills));
    let [deletion] = listed(&b).await.try_into().unwrap_or_else(|all| panic!("one held: {all:?}"));
    let instance_a = a.library().store().instance_id().to_owned();
    assert_eq!(deletion["source"], format!("peer:{instance_a}"));
    assert_eq!(deletion["via"], "addr:127.0.0.1", "an unsigned push is known by its address");

    let id = deletion["id"].as_i64().unwrap();

    // A pull from A brings the same withdrawals again: they stay in that one deletion.
    let pulled = pull(&b, &fb.config(), &a).await;
    assert_eq!(pulled.result.held_skills, 10, "{pulled:?}");
    assert!(pulled.result.held[0].ends_with(&format!("already held as deletion {id}")), "{pulled:?}");
    assert_eq!(listed(&b).await.len(), 1);
    assert!(deprecated(&b, &skills).await.is_empty());

    let (status, answer) = v1_post(&b, &format!("/v1/deletions/{id}/reject")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["restored"].as_array().unwrap().len(), 10, "{answer}");
    assert!(listed(&b).await.is_empty());
    assert_all_live(&b, &skills).await;
    assert!(files_there(&fb, &skills));
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn five_withdrawals_pass_and_six_of_ten_are_held() {
    for (removed, held_expected) in [(5, false), (6, true)] {
        let (fa, fb) = (Folders::new(), Folders::new());
        let skills = names("share", 10);
        let a = node_with(&fa, &skills).await;
        let b = Node::bind(fb.config()).await.unwrap();
        pull(&b, &fb.config(), &a).await;
        remove(&a, &skills[..removed]).await;
        let report = pull(&b, &fb.config(), &a).await;
        if held_expected {
            assert_eq!(report.result.held_skills, 6, "{report:?}");
            assert!(deprecated(&b, &skills).await.is_empty());
            assert_eq!(held(&b).await.len(), 1);
        } else {
            assert_eq!((report.result.updated_skills, report.result.held_skills), (5, 0), "{report:?}");
            assert_eq!(deprecated(&b, &skills).await, skills[..5]);
            assert!(held(&b).await.is_empty());
        }
        a.shutdown().await.unwrap();
        b.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_sender_is_weighed_alone_and_cannot_hold_or_remove_another_origins_skills() {
    let (fa, fb, fc) = (Folders::new(), Folders::new(), Folders::new());
    let (from_a, from_c) = (names("a", 10), names("c", 10));
    let a = node_with(&fa, &from_a).await;
    let c = node_with(&fc, &from_c).await;
    let b = Node::bind(fb.config()).await.unwrap();
    pull(&b, &fb.config(), &a).await;
    pull(&b, &fb.config(), &c).await;

    // 6 of the 10 held from A: held, though B holds 20 skills.
    remove(&a, &from_a[..6]).await;
    let report = pull(&b, &fb.config(), &a).await;
    assert_eq!(report.result.held_skills, 6, "{report:?}");
    // C's one withdrawal passes meanwhile.
    remove(&c, &from_c[..1]).await;
    let report = pull(&b, &fb.config(), &c).await;
    assert_eq!((report.result.updated_skills, report.result.held_skills), (1, 0), "{report:?}");
    assert_eq!(deprecated(&b, &from_c).await, from_c[..1]);

    // Accepting A's deletion withdraws A's six, nothing of C's.
    let [id] = held(&b).await[..] else { panic!("one held") };
    let (status, answer) = v1_post(&b, &format!("/v1/deletions/{id}/accept")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["tombstoned"].as_array().unwrap().len(), 6, "{answer}");
    assert_eq!(deprecated(&b, &from_a).await, from_a[..6]);
    assert_eq!(deprecated(&b, &from_c).await, from_c[..1]);
    for shut in [a, b, c] {
        shut.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deliberate_skill_rm_at_the_origin_passes_at_the_receiver() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("one", 2);
    let a = node_with(&fa, &skills).await;
    let b = Node::bind(fb.config()).await.unwrap();
    pull(&b, &fb.config(), &a).await;
    let out = fa.run_async(&["skill", "rm", &skills[0]]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report = pull(&b, &fb.config(), &a).await;
    // One of two is half, and under max_bulk_delete: it passes.
    assert_eq!((report.result.updated_skills, report.result.held_skills), (1, 0), "{report:?}");
    assert_eq!(deprecated(&b, &skills).await, skills[..1]);
    assert!(held(&b).await.is_empty());
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_newer_version_that_arrived_while_held_wins_over_the_accepted_withdrawal() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("back", 6);
    let a = node_with(&fa, &skills).await;
    let b = Node::bind(fb.config()).await.unwrap();
    pull(&b, &fb.config(), &a).await;
    remove(&a, &skills).await;
    assert_eq!(pull(&b, &fb.config(), &a).await.result.held_skills, 6);

    // A shares one again (a later version); B takes it while the deletion waits.
    super::cli::write_skill(&fa.skills(), &skills[0], &super::cli::skill_md(&skills[0], "tags: [again]\n"));
    let imported = import(&a).await;
    assert_eq!(imported.imported.len(), 1, "{imported:?}");
    let report = pull(&b, &fb.config(), &a).await;
    assert_eq!(report.result.updated_skills, 1, "{report:?}");

    let [id] = held(&b).await[..] else { panic!("one held") };
    let (status, answer) = v1_post(&b, &format!("/v1/deletions/{id}/accept")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["tombstoned"].as_array().unwrap().len(), 5, "{answer}");
    assert_eq!(deprecated(&b, &skills).await, skills[1..], "the newer version of {} stays", skills[0]);
    let status = get(&b, "/v1/status").await;
    assert_eq!(status["quarantineHeld"], 0, "the superseded tombstone is dropped, not quarantined: {status}");
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn ecp_node_pull_reports_the_held_withdrawals_and_warns_naming_the_sender_and_count() {
    let (fa, fb) = (Folders::new(), Folders::new());
    let skills = names("cli", 8);
    let a = node_with(&fa, &skills).await;
    let first = fb.run_async(&["pull", &a.url(), "--init"]).await;
    assert_eq!(first.code, 0, "{first:?}");
    remove(&a, &skills[..7]).await;

    let out = fb.run_async(&["pull", &a.url()]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("updated 0, unchanged 0, rejected 0, held 7"), "{out:?}");
    assert!(
        out.stdout.contains("  held: cli-0: deletion held: 7 of the 8 skills held from peer:"),
        "{out:?}"
    );
    let instance_a = a.library().store().instance_id().to_owned();
    let warning =
        out.stderr.lines().find(|l| l.contains("withdrawals held")).unwrap_or_else(|| panic!("{out:?}"));
    assert!(warning.contains("WARN") && warning.contains(&format!("peer:{instance_a}")), "{warning}");
    assert!(warning.contains("count=7") && warning.contains("of=8"), "{warning}");
    let listed = fb.run_async(&["deletions", "list", "--json"]).await.json();
    assert_eq!(listed["deletions"][0]["names"].as_array().unwrap().len(), 7, "{listed}");
    // Without a server, the CLI decides on the store.
    let accepted = fb.run_async(&["deletions", "accept"]).await;
    assert!(accepted.stdout.contains("7 skill(s) tombstoned"), "{accepted:?}");
    a.shutdown().await.unwrap();
}
