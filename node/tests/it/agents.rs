//! `[[agent]]` folders (#24 item 3) on real nodes and the real binary: the
//! listing the documented rule picks at its budget and one past it,
//! `include`, `select = "all"` over its budget, leaving a listing without a
//! tombstone, one received skill in two agents' folders and an edit in one,
//! and `agents add | remove | show` on node.toml.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ecp_node::agents::{Agent, Select};
use ecp_node::config::Config;
use ecp_node::sharing::Folder;
use ecp_protocol::{Origin, SkillPacket};

use crate::cli::{Folders, ecp_node_bin, eventually, skill_md, write_skill};
use crate::util::{TestNode, update};

const WITHIN: Duration = Duration::from_secs(30);

fn agent(name: &str, path: PathBuf, budget_chars: u64, select: Select, include: &[&str]) -> Agent {
    Agent {
        name: name.into(),
        path,
        budget_chars,
        select,
        tags: Vec::new(),
        include: include.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// The node's test configuration, its folder and its agents.
fn base(c: &mut Config) -> PathBuf {
    c.policy.min_confidence = 0.0;
    c.data_dir.parent().expect("the test folder").to_path_buf()
}

/// A received skill whose listing line `name: description` is `chars` long.
fn received(name: &str, chars: usize, confidence: f64) -> SkillPacket {
    let origin = Origin::new("peer-b", "someone", "linux/amd64", "1.0");
    let description: String = "d".repeat(chars - name.len() - 2);
    SkillPacket::new(&origin, name, &description, &skill_md(name, ""), confidence, ecp_node::store::now())
}

/// The skill folders in `dir` (real folders only: a link would fail the test).
fn folder_names(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeSet::new() };
    entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.path().join("SKILL.md").exists())
        .inspect(|e| {
            let kind = e.file_type().unwrap();
            assert!(kind.is_dir() && !kind.is_symlink(), "{:?} is a real folder", e.path());
            assert!(!std::fs::symlink_metadata(e.path().join("SKILL.md")).unwrap().is_symlink());
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The rule of README "Agents' folders", computed here from the node's own
/// confidences: includes first, then by confidence (highest first), then
/// name, while `name: description` per skill stays within the budget.
fn expected(node: &ecp_node::library::Library, include: &[&str], budget: u64) -> BTreeSet<String> {
    let records = node.store().list_skills().unwrap();
    let cost = |r: &ecp_node::store::SkillRecord| {
        (r.name.chars().count() + 2 + r.description.chars().count()) as u64
    };
    let mut picked: BTreeSet<String> = include.iter().map(|s| (*s).to_owned()).collect();
    let mut used: u64 = records.iter().filter(|r| picked.contains(&r.name)).map(cost).sum();
    let mut ranked: Vec<_> =
        records.iter().filter(|r| !picked.contains(&r.name) && r.kind == "external").collect();
    ranked.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then_with(|| a.name.cmp(&b.name)));
    for r in ranked {
        if used + cost(r) > budget {
            break;
        }
        used += cost(r);
        picked.insert(r.name.clone());
    }
    picked
}

async fn folder_holds(dir: &Path, want: &BTreeSet<String>) {
    let dir = dir.to_path_buf();
    eventually(&format!("{} holds {want:?}", dir.display()), WITHIN, || {
        let now = folder_names(&dir);
        async move { (now == *want).then_some(()) }
    })
    .await;
}

#[tokio::test]
async fn an_agent_folder_holds_exactly_what_the_rule_picks_at_its_budget_and_one_past() {
    let node = TestNode::start_with(|c| {
        let dir = base(c);
        c.agents = vec![
            agent("at", dir.join("at"), 2000, Select::Top, &["must-have"]),
            agent("past", dir.join("past"), 1999, Select::Top, &["must-have"]),
            agent("everything", dir.join("everything"), 100, Select::All, &[]),
        ];
    })
    .await;
    // 25 skills of 100 characters each, by confidence; two tie (their names decide).
    let mut packets: Vec<SkillPacket> =
        (1..=25).map(|i| received(&format!("r{i:02}"), 100, 0.95 - f64::from(i) * 0.01)).collect();
    packets.push(received("tie-b", 100, 0.85));
    packets.push(received("tie-a", 100, 0.85));
    // Included whatever its rank; a short low one stays out after the first miss.
    packets.push(received("must-have", 100, 0.65));
    packets.push(received("tiny", 10, 0.66));
    node.push_ok(&update("peer-b", &packets)).await;

    let at = expected(node.library(), &["must-have"], 2000);
    let past = expected(node.library(), &["must-have"], 1999);
    assert_eq!(at.len(), 20, "must-have and 19 of 100 characters: exactly 2000");
    assert_eq!(past.len(), 19, "one character less: the 19th ranked is out");
    assert!(at.contains("tie-a") && at.contains("tie-b") && !at.contains("tiny"));
    let dir = node.dir().to_path_buf();
    folder_holds(&dir.join("at"), &at).await;
    folder_holds(&dir.join("past"), &past).await;
    let all: BTreeSet<String> = packets.iter().map(|p| p.skill_name.clone()).collect();
    folder_holds(&dir.join("everything"), &all).await;
    // The same received skill is the same file in every folder it is in.
    let text = |folder: &str| std::fs::read(dir.join(folder).join("r01/SKILL.md")).unwrap();
    assert_eq!(text("at"), text("past"));
    assert_eq!(text("at"), text("everything"));
    // With agents, received skills leave the plain skills folder to them.
    assert!(folder_names(&dir.join("skills")).is_empty(), "{:?}", folder_names(&dir.join("skills")));

    let listing = node.library().agents().listing(node.library(), &node.config().agents[2]).unwrap();
    assert!(listing.over_budget && listing.chars == 2810, "{} chars", listing.chars);
    let listing = node.library().agents().listing(node.library(), &node.config().agents[1]).unwrap();
    assert_eq!(listing.chars, 1900);
    let why = |name: &str| listing.lines.iter().find(|l| l.name == name).unwrap().why;
    assert_eq!(why("must-have"), ecp_node::agents::Why::Included);
    assert_eq!(why("tiny"), ecp_node::agents::Why::OverBudget);
}

#[tokio::test]
async fn leaving_a_listing_removes_only_that_copy_and_sends_no_tombstone() {
    let mut node = TestNode::start_with(|c| {
        let dir = base(c);
        // The agent's folder is also a folder the node imports from.
        c.sharing.folders.push(Folder { path: dir.join("agent"), share: true });
        c.agents = vec![agent("one", dir.join("agent"), 300, Select::Top, &[])];
    })
    .await;
    let dir = node.dir().to_path_buf();
    // The agent's own skill there: listed first, never removed.
    write_skill(&dir.join("agent"), "mine", &crate::cli::skill_md("mine", "confidence: 0.7\n"));
    node.restart().await;
    node.push_ok(&update("peer-b", &[received("low", 100, 0.7), received("mid", 100, 0.8)])).await;
    let mut want: BTreeSet<String> = ["mine", "mid", "low"].map(String::from).into();
    let mine_cost = 4 + 2 + "How to mine".len();
    assert!(mine_cost + 200 <= 300);
    folder_holds(&dir.join("agent"), &want).await;
    let before = node.get_json("/v1/status").await;

    // A better skill arrives: "low" no longer fits and leaves the listing.
    node.push_ok(&update("peer-b", &[received("high", 100, 0.9)])).await;
    want.remove("low");
    want.insert("high".into());
    folder_holds(&dir.join("agent"), &want).await;
    // A pass of the importer over the folder after the removal: a new file is imported.
    write_skill(&dir.join("agent"), "sentinel", &crate::cli::skill_md("sentinel", ""));
    eventually("the importer read the folder again", WITHIN, || {
        let found = node.library().store().skill("sentinel").unwrap().is_some();
        async move { found.then_some(()) }
    })
    .await;
    for name in ["high", "mid"] {
        let (record, _, _) = node.library().store().skill(name).unwrap().expect("held");
        assert_eq!(record.kind, "external", "the node's copy of {name} is not taken for the agent's skill");
    }
    let (record, packet, _) = node.library().store().skill("low").unwrap().expect("low is still held");
    assert!(!record.deprecated && !packet.deprecated, "leaving a listing is no deletion");
    let served = node.get_json("/ecp/skills").await;
    assert!(crate::util::served_named(&served, "low").is_some_and(|p| p["deprecated"] == false));
    let after = node.get_json("/v1/status").await;
    assert_eq!(after["tombstones"], before["tombstones"], "no tombstone: {after}");
    assert_eq!(after["tombstones"], 0);
    assert!(dir.join("agent/mine/SKILL.md").exists(), "the local skill stays in its folder");
}

#[tokio::test]
async fn one_received_skill_in_two_agents_folders_is_the_same_and_an_edit_in_one_is_imported_once() {
    let node = TestNode::start_with(|c| {
        let dir = base(c);
        for name in ["a", "b"] {
            c.sharing.folders.push(Folder { path: dir.join(name), share: true });
        }
        c.agents = vec![
            agent("a", dir.join("a"), 1000, Select::Top, &[]),
            agent("b", dir.join("b"), 1000, Select::Top, &[]),
        ];
    })
    .await;
    let dir = node.dir().to_path_buf();
    node.push_ok(&update("peer-b", &[received("shared-skill", 60, 0.8)])).await;
    let want: BTreeSet<String> = ["shared-skill".to_owned()].into();
    folder_holds(&dir.join("a"), &want).await;
    folder_holds(&dir.join("b"), &want).await;
    let (fa, fb) = (dir.join("a/shared-skill/SKILL.md"), dir.join("b/shared-skill/SKILL.md"));
    assert_eq!(std::fs::read(&fa).unwrap(), std::fs::read(&fb).unwrap());
    let versions = || ecp_node::versions::history(node.library(), "shared-skill").unwrap().len();
    assert_eq!(versions(), 1);

    // The agent of folder a edits it: a derived version (#20), not a new
    // version of the origin's skill. It edits after the watcher's window of
    // the node's own writes (5 s; an edit inside it waits for the 30 s
    // rescan), as an agent reading the skill first does.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let edited = format!("{}\nAlso check the logs.\n", std::fs::read_to_string(&fa).unwrap());
    std::fs::write(&fa, &edited).unwrap();
    let body = eventually("the edit is kept as a derived version", WITHIN, || {
        let derived = node.library().store().derived("shared-skill").unwrap();
        async move { derived.filter(|d| d.state == "active").map(|d| d.packet.skill_body) }
    })
    .await;
    assert!(body.contains("Also check the logs."));
    // Folder b gets the edit, as the agent wrote it (the stamp aside).
    eventually("folder b shows the edit", WITHIN, || {
        let now = std::fs::read_to_string(&fb).unwrap_or_default();
        let body = body.clone();
        async move { (now == body).then_some(()) }
    })
    .await;
    // One more pass of the importer over both folders: nothing more imported.
    write_skill(&dir.join("b"), "sentinel", &crate::cli::skill_md("sentinel", ""));
    eventually("the importer read the folders again", WITHIN, || {
        let found = node.library().store().skill("sentinel").unwrap().is_some();
        async move { found.then_some(()) }
    })
    .await;
    assert_eq!(versions(), 1, "the store holds the origin's version only");
    let (record, _, _) = node.library().store().skill("shared-skill").unwrap().unwrap();
    assert_ne!(record.kind, "local", "the node does not serve the edit under the origin's name");
    let outgoing = node.library().store().proposals(Some(ecp_node::store::Role::Outgoing)).unwrap();
    assert_eq!(outgoing.len(), 1, "one edit, one proposal: {outgoing:?}");
    assert_eq!(std::fs::read_to_string(&fa).unwrap(), edited, "the agent's file stays as written");
    let report = node.get_json("/v1/status").await;
    assert!(!report.to_string().contains("duplicate"), "{report}");

    // The origin publishes the edit as its next version: the derived version
    // is retired and both folders show the origin's version again.
    let mut next = received("shared-skill", 60, 0.8);
    next.skill_body = body.clone();
    // Seconds after the first version (the edit's round trips took them);
    // a time far ahead would be refused as clock skew.
    next.created_at = ecp_node::store::now();
    next.reseal();
    node.push_ok(&update("peer-b", &[next])).await;
    eventually("the derived version is retired", WITHIN, || {
        let derived = node.library().store().derived("shared-skill").unwrap();
        async move { derived.filter(|d| d.state == "retired").map(|_| ()) }
    })
    .await;
    eventually("both folders show the origin's version", WITHIN, || {
        let (a, b) = (std::fs::read_to_string(&fa).unwrap_or_default(), std::fs::read_to_string(&fb).unwrap_or_default());
        async move { (a == b && a.contains("Also check the logs.") && a.contains("ecp-origin")).then_some(()) }
    })
    .await;
    assert_eq!(versions(), 2, "the received version and the origin's next one");
}

#[test]
fn agents_add_remove_keep_node_toml_comments_and_show_says_why() {
    let f = Folders::new();
    let toml = f.tmp.path().join("node.toml");
    let original = "# my node\n[limits]\nmax_packets = 500 # plenty\n";
    std::fs::write(&toml, original).unwrap();
    let agent_dir = f.tmp.path().join("claude");
    let conf = toml.to_str().unwrap();
    let path = agent_dir.to_str().unwrap();
    let add = |name: &str, budget: &str| {
        f.run(&[
            "agents",
            "add",
            name,
            "--path",
            path,
            "--budget-chars",
            budget,
            "--include",
            "x",
            "--config",
            conf,
        ])
    };
    let added = add("claude", "2000");
    assert_eq!(added.code, 0, "{added:?}");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.starts_with(original), "{text}");
    assert!(text.contains("[[agent]]\nname = \"claude\"") && text.contains("budget_chars = 2000"), "{text}");
    let again = add("claude", "10");
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("already"), "{again:?}");
    let second = add("codex", "10");
    assert_ne!(second.code, 0, "two agents on one folder: {second:?}");
    assert!(second.stderr.contains("share the folder"), "{second:?}");
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), text, "a refused edit leaves the file");

    let shown = f.run(&["agents", "show", "claude", "--json", "--init", "--config", conf]).json();
    assert_eq!(shown["budgetChars"], 2000);
    let line = &shown["lines"][0];
    assert_eq!((line["name"].as_str(), line["why"].as_str()), (Some("x"), Some("not-held")), "{shown}");
    let listed = f.run(&["agents", "list", "--config", conf]);
    assert!(listed.code == 0 && listed.stdout.contains("claude"), "{listed:?}");
    let unknown = f.run(&["agents", "show", "nobody", "--config", conf]);
    assert!(unknown.code == 2 && unknown.stderr.contains("claude"), "{unknown:?}");

    let removed = f.run(&["agents", "remove", "claude", "--config", conf]);
    assert_eq!(removed.code, 0, "{removed:?}");
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), original);

    // A missing node.toml is created; none named at all is an error saying what to pass.
    let fresh = f.tmp.path().join("fresh.toml");
    let made = f.run(&[
        "agents",
        "add",
        "a",
        "--path",
        path,
        "--budget-chars",
        "5",
        "--config",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(made.code, 0, "{made:?}");
    assert!(std::fs::read_to_string(&fresh).unwrap().contains("name = \"a\""));
    let none = ecp_node_bin(&["agents", "add", "a", "--path", path, "--budget-chars", "5"]);
    assert!(none.code == 2 && none.stderr.contains("--config"), "{none:?}");
}

#[test]
fn select_all_over_its_budget_warns_and_several_agents_need_agent_for_verify() {
    let f = Folders::new();
    let skills = f.skills();
    write_skill(&skills, "alpha", &skill_md("alpha", ""));
    write_skill(&skills, "beta", &skill_md("beta", ""));
    let toml = f.tmp.path().join("node.toml");
    let other = f.tmp.path().join("other");
    std::fs::write(
        &toml,
        format!(
            "[[agent]]\nname = \"all\"\npath = {:?}\nbudget_chars = 10\nselect = \"all\"\n\n\
             [[agent]]\nname = \"other\"\npath = {:?}\nbudget_chars = 10\n",
            skills.to_str().unwrap(),
            other.to_str().unwrap()
        ),
    )
    .unwrap();
    let conf = toml.to_str().unwrap();
    let log = f.tmp.path().join("serve.log");
    let data = f.data();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--config", conf, "--listen", "127.0.0.1:0", "--no-mdns"])
        .args(["--data", data.to_str().unwrap(), "--skills-dir", skills.to_str().unwrap()])
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("ecp-node serve starts");
    let url = crate::util::server_url(&data, &mut child);
    // The warning comes from the first fill, which runs as soon as alpha is
    // imported at start (beta may not be yet): it is killed only once it
    // serves, which it does after the import and the projection at start.
    answers_http(&url);
    let deadline = std::time::Instant::now() + WITHIN;
    let warned = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("over its budget_chars") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(warned.contains("over its budget_chars") && warned.contains("agent=all"), "{warned}");
    // Its local skills stay where they were written.
    assert!(skills.join("alpha/SKILL.md").exists() && skills.join("beta/SKILL.md").exists());

    let verify = f.run(&["verify", "--config", conf]);
    assert!(verify.code == 2 && verify.stderr.contains("--agent"), "{verify:?}");
    let verify = f.run(&["verify", "--agent", "all", "--json", "--config", conf]);
    assert_eq!(verify.code, 0, "{verify:?}");
    let lockfile = f.tmp.path().join("ecp.lock");
    let locked = f.run(&["lock", "--agent", "all", "--out", lockfile.to_str().unwrap(), "--config", conf]);
    assert_eq!(locked.code, 0, "{locked:?}");
    let text = std::fs::read_to_string(&lockfile).unwrap();
    assert!(text.contains("name = \"alpha\"") && text.contains("name = \"beta\""), "{text}");
    let none = f.run(&["lock", "--agent", "nobody", "--config", conf]);
    assert!(none.code == 2 && none.stderr.contains("all, other"), "{none:?}");
    let shown = f.run(&["agents", "show", "all", "--json", "--config", conf]).json();
    assert_eq!(shown["overBudget"], true, "{shown}");
    let whys: BTreeMap<String, String> = shown["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap().to_owned(), l["why"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(whys.get("alpha").map(String::as_str), Some("local"), "{shown}");
}

/// Waits (up to [`WITHIN`]) until the server at `url` (plain HTTP) answers `/livez`.
fn answers_http(url: &str) {
    use std::io::{Read, Write};
    let addr = url.strip_prefix("http://").expect("a plain HTTP url");
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let answer = std::net::TcpStream::connect(addr).and_then(|mut stream| {
            stream.set_read_timeout(Some(WITHIN))?;
            write!(stream, "GET /livez HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
            let mut text = String::new();
            stream.read_to_string(&mut text)?;
            Ok(text)
        });
        if answer.as_deref().is_ok_and(|t| t.starts_with("HTTP/1.1 200")) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no answer from {url} within {WITHIN:?}: {answer:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn agents_add_beside_a_running_server_says_to_restart_it() {
    let f = Folders::new();
    let node = ecp_node::Node::bind(f.config()).await.expect("the node starts");
    let toml = f.tmp.path().join("node.toml");
    let agent_dir = f.tmp.path().join("claude");
    let args = ["agents", "add", "claude", "--path", agent_dir.to_str().unwrap(), "--budget-chars", "100"];
    let added = f.run_async(&[&args[..], &["--config", toml.to_str().unwrap()]].concat()).await;
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stderr.contains("restart it to apply"), "{added:?}");
    node.shutdown().await.expect("the node stops");
}
