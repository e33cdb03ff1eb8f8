//! A weak or placeholder secret (#16 item 8): shorter than 32 bytes, or an
//! example value shipped in `deploy/` or `peers.toml`, refused by `serve`
//! before it opens anything when it would listen beyond loopback (0.0.0.0
//! here: the refusal comes before any socket), a warning on loopback. For
//! the shared secret (flag, environment, node.toml), a `[[key]]` and a
//! `[[peer]]`'s `key_secret`: the secrets requests may be signed with.

use std::path::Path;
use std::process::Command;

use ecp_node::config::PLACEHOLDER_SECRETS;

use super::logs::Logged;

/// `serve ARGS` in `dir` with `env` only; exit code and stderr.
fn serve(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--no-mdns", "--data", "d"])
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Checks that `serve` refused before making the data folder, saying
/// `named` and how to make a secret, never the secret.
fn refused(dir: &Path, (code, stderr): (i32, String), named: &str, secret: &str) {
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(named), "{named} in {stderr}");
    assert!(stderr.contains("openssl rand -hex 32") && stderr.contains("beyond loopback"), "{stderr}");
    assert!(!stderr.contains(secret), "the secret is never shown: {stderr}");
    assert!(!dir.join("d").exists(), "refused before the data folder is made");
}

#[test]
fn a_weak_shared_secret_is_refused_beyond_loopback_from_a_flag_the_environment_or_node_toml() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let beyond = ["--listen", "0.0.0.0:0"];
    let short = "s".repeat(31);
    let out = serve(dir, &[&beyond[..], &["--secret", &short]].concat(), &[]);
    refused(dir, out, "the shared secret (--secret", &short);
    for placeholder in PLACEHOLDER_SECRETS {
        let out = serve(dir, &beyond, &[("ECP_SECRET", placeholder)]);
        refused(dir, out, "an example value shipped with ecp-node", placeholder);
    }
    std::fs::write(dir.join("node.toml"), "secret = \"replace-me-with-a-long-random-secret\"\n").unwrap();
    let out = serve(dir, &[&beyond[..], &["--config", "node.toml"]].concat(), &[]);
    refused(dir, out, "the shared secret", "replace-me-with-a-long-random-secret");
    let file_key = format!("[[key]]\nid = \"k1\"\nsecret = \"{short}\"\n");
    std::fs::write(dir.join("node.toml"), file_key).unwrap();
    let out = serve(dir, &[&beyond[..], &["--config", "node.toml"]].concat(), &[]);
    refused(dir, out, "the secret of [[key]] \"k1\"", &short);
}

#[test]
fn a_weak_peer_key_is_refused_beyond_loopback_and_an_outgoing_only_peer_secret_is_not_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let short = "k".repeat(31);
    let peers = format!(
        "[[peer]]\nurl = \"http://127.0.0.1:9\"\nkey_id = \"b-key\"\nkey_secret = \"{short}\"\npull = false\n"
    );
    std::fs::write(dir.join("peers.toml"), peers).unwrap();
    let out = serve(dir, &["--listen", "0.0.0.0:0", "--peers", "peers.toml"], &[]);
    refused(dir, out, "the key_secret of [[peer]] http://127.0.0.1:9", &short);
    // A [[peer]]'s `secret` only signs what this node sends: its peer judges it.
    let outgoing = "[[peer]]\nurl = \"http://127.0.0.1:9\"\nsecret = \"change-me\"\npull = false\n";
    std::fs::write(dir.join("peers.toml"), outgoing).unwrap();
    let (code, stderr) = serve(dir, &["--listen", "192.0.2.1:0", "--peers", "peers.toml"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot listen on 192.0.2.1:0") && !stderr.contains("openssl"), "{stderr}");
}

#[test]
fn a_secret_of_32_bytes_passes_the_check_beyond_loopback() {
    let tmp = tempfile::tempdir().unwrap();
    let strong = "s".repeat(32);
    // 192.0.2.1 (TEST-NET-1) is no address of this host: the node gets past
    // the check and fails only when it binds, without sending anything.
    let (code, stderr) = serve(tmp.path(), &["--listen", "192.0.2.1:0", "--secret", &strong], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot listen on 192.0.2.1:0"), "{stderr}");
    assert!(!stderr.contains("openssl rand") && !stderr.contains(&strong), "{stderr}");
}

#[test]
fn on_loopback_a_weak_secret_is_a_warning_and_a_strong_one_says_nothing() {
    let short = "w".repeat(31);
    let weak = Logged::start(&["--secret", &short], &[]);
    // Warned before the server is up, so already written once it is.
    let said = weak.stderr();
    assert!(
        said.contains("31 bytes long, shorter than 32") && said.contains("openssl rand -hex 32"),
        "{said}"
    );
    assert!(!said.contains(&short), "{said}");
    let placeholder = Logged::start(&[], &[("ECP_SECRET", "change-me")]);
    assert!(
        placeholder.stderr().contains("an example value shipped with ecp-node"),
        "{}",
        placeholder.stderr()
    );
    let strong = Logged::start(&["--secret", &"s".repeat(32)], &[]);
    assert!(!strong.stderr().contains("openssl rand"), "{}", strong.stderr());
}
