//! `ecp-node peers add` and `peers rm` (#16 item 8), with the real binary:
//! the peers file edited with its comments kept, every refusal named, and a
//! running node picking the edit up.

use std::time::Duration;

use ecp_node::Node;

use crate::cli::{Folders, eventually};

const FILE: &str = "# our mesh\n[federation]\ninterval = \"1h\"\n\n# the hub\n[[peer]]\nurl = \"http://127.0.0.1:9\"\ntrust = 0.8\n";

#[tokio::test(flavor = "multi_thread")]
async fn peers_add_and_rm_edit_the_file_and_the_running_node_follows() {
    let f = Folders::new();
    let file = f.tmp.path().join("peers.toml");
    std::fs::write(&file, FILE).unwrap();
    let watched = file.clone();
    let mut config = f.config();
    config.peers_file = Some(watched);
    let node = Node::bind(config).await.expect("node starts");
    let urls =
        || async { node.federator().active_peers().await.into_iter().map(|p| p.url).collect::<Vec<_>>() };
    assert_eq!(urls().await, ["http://127.0.0.1:9"]);
    let peers = file.to_str().unwrap();

    let added = f
        .run_async(&["peers", "add", "http://127.0.0.1:10/", "--trust", "0.7", "--push", "--peers", peers])
        .await;
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stderr.contains("added peer http://127.0.0.1:10"), "{added:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text, format!("{FILE}\n[[peer]]\nurl = \"http://127.0.0.1:10\"\ntrust = 0.7\npush = true\n"));
    let both = vec!["http://127.0.0.1:10".to_owned(), "http://127.0.0.1:9".to_owned()];
    eventually("the node adds the peer", Duration::from_secs(30), || async {
        let mut now = urls().await;
        now.sort();
        (now == both).then_some(())
    })
    .await;

    let twice = f.run_async(&["peers", "add", "http://127.0.0.1:10", "--peers", peers]).await;
    assert_eq!(twice.code, 2, "{twice:?}");
    assert!(twice.stderr.contains("http://127.0.0.1:10 is already a peer in"), "{twice:?}");
    let bad = f.run_async(&["peers", "add", "ftp://127.0.0.1:10", "--peers", peers]).await;
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("URL: \"ftp://127.0.0.1:10\": the scheme must be http or https"), "{bad:?}");
    let too_much =
        f.run_async(&["peers", "add", "http://127.0.0.1:11", "--trust", "1.01", "--peers", peers]).await;
    assert_eq!(too_much.code, 2, "{too_much:?}");
    assert!(too_much.stderr.contains("--trust"), "{too_much:?}");
    let unknown = f.run_async(&["peers", "rm", "http://127.0.0.1:11", "--peers", peers]).await;
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("http://127.0.0.1:11 is not a peer in"), "{unknown:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "refusals leave the file as it was");

    let removed = f.run_async(&["peers", "rm", "http://127.0.0.1:9", "--peers", peers]).await;
    assert_eq!(removed.code, 0, "{removed:?}");
    let left = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        left,
        "# our mesh\n[federation]\ninterval = \"1h\"\n\n# the hub\n\n[[peer]]\nurl = \"http://127.0.0.1:10\"\ntrust = 0.7\npush = true\n"
    );
    eventually("the node drops the peer", Duration::from_secs(30), || async {
        (urls().await == ["http://127.0.0.1:10"]).then_some(())
    })
    .await;
    node.shutdown().await.unwrap();
}

#[test]
fn peers_add_makes_a_missing_file_and_needs_one_named() {
    let f = Folders::new();
    let file = f.tmp.path().join("new-peers.toml");
    let none = f.run(&["peers", "add", "http://127.0.0.1:10"]);
    assert_eq!(none.code, 2, "{none:?}");
    assert!(none.stderr.contains("no peers file to edit: pass --peers FILE"), "{none:?}");
    let made = f.run(&["peers", "add", "http://127.0.0.1:10", "--peers", file.to_str().unwrap()]);
    assert_eq!(made.code, 0, "{made:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "[[peer]]\nurl = \"http://127.0.0.1:10\"\n");
}
