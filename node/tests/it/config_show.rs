//! The configuration from the outside: flags beat the environment, which
//! beats the file, on real `ecp-node serve` processes; `config show` names
//! where each value came from, masks secrets and creates nothing; the key
//! table is the schema of `node.toml`; the README's table is the key table.

use std::path::Path;
use std::process::{Command, Stdio};

use ecp_node::config::{Config, KEYS, Sources};

use crate::config_setup::{FileSetup, config_show, plain, shown, status_of, toml_path};
use crate::util::{packet, update};

/// The key table is the schema of `node.toml`: a file setting every key of
/// the table is read whole (each key from the file), and a key without a
/// row is refused naming it. (Keys are read through the table alone, so a
/// new key needs a row; a new row needs an arm in [`observe`], or the test
/// above fails.)
#[test]
fn the_key_table_is_the_schema_of_node_toml() {
    use ecp_node::config::{Kind, Resolved, Source};
    let setup = FileSetup::new();
    std::fs::write(setup.path("secret"), "s").unwrap();
    let mut sections: Vec<(&str, String)> = Vec::new();
    for key in KEYS {
        let value = match (key.kind, key.default) {
            (Kind::Count | Kind::Bool | Kind::Share, Some(d)) => d.to_owned(),
            (Kind::Count, None) => "8388608".to_owned(),
            (Kind::List, _) => "[]".to_owned(),
            (Kind::Text, None) => "\"PATH\"".to_owned(),
            (Kind::Addr, None) => "\"127.0.0.1:7400\"".to_owned(),
            (Kind::Path, None) if key.name == "secret_file" => toml_path(&setup.path("secret")),
            (_, Some(d)) => format!("{d:?}"),
            (_, None) => "\"x\"".to_owned(),
        };
        let line = format!("{} = {value}", key.name);
        match sections.iter_mut().find(|(s, _)| *s == key.section) {
            Some((_, lines)) => *lines = format!("{lines}\n{line}"),
            None => sections.push((key.section, line)),
        }
    }
    let mut text = String::new();
    for (section, lines) in &sections {
        if !section.is_empty() {
            text.push_str(&format!("[{section}]\n"));
        }
        text.push_str(&format!("{lines}\n"));
    }
    let file = setup.path("node.toml");
    std::fs::write(&file, &text).unwrap();
    let sources = Sources { file: Some(file.clone()), ..Sources::default() };
    let resolved = Resolved::load(&sources).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for setting in &resolved.settings {
        assert_eq!(setting.source, Source::File, "{} was not read from the file", setting.key.id());
    }
    Config::from_resolved(&resolved).unwrap_or_else(|e| panic!("{e}\n{text}"));
    std::fs::write(&file, format!("{text}new_key = 1\n")).unwrap();
    let err = Config::resolve(&sources).unwrap_err().to_string();
    assert!(err.contains("unknown key [tls] new_key"), "{err}");
}

/// An `ecp-node serve` process on `127.0.0.1:<ephemeral>` started from a
/// `node.toml`, with `env` and `args`; stopped when dropped.
struct Served {
    child: std::process::Child,
    url: String,
}

impl Served {
    fn start(setup: &FileSetup, file: &Path, env: &[(&str, &str)], args: &[&str]) -> Served {
        let child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
            .args(["serve", "--config", file.to_str().unwrap()])
            .args(args)
            .env_clear()
            .envs(env.iter().copied())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        Served::wait_for(&setup.path("data").join("server.json"), child)
    }

    /// The server `child` once it has written `info` (`server.json`).
    fn wait_for(info: &Path, mut child: std::process::Child) -> Served {
        let data = info.parent().expect("server.json is in the data folder");
        let url = crate::util::server_url(data, &mut child);
        Served { child, url }
    }

    /// The status of a push of `n` new packets.
    async fn push(&self, n: usize, prefix: &str) -> u16 {
        let packets: Vec<_> = (0..n).map(|i| packet(&format!("{prefix}-{i}"))).collect();
        let response = plain()
            .post(format!("{}/ecp/skills", self.url))
            .header("content-type", "application/json")
            .body(update("p", &packets))
            .send()
            .await
            .expect("the server answers");
        response.status().as_u16()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_real_serve_process_a_flag_beats_the_environment_which_beats_the_file() {
    let setup = FileSetup::new();
    let file =
        setup.write(&[("limits", "max_packets = 2".into()), ("server", "trust_loopback = false".into())]);

    // The environment over the file.
    let env = [("ECP_MAX_PACKETS", "3"), ("ECP_SERVER_TRUST_LOOPBACK", "true")];
    let served = Served::start(&setup, &file, &env, &[]);
    let (at, past) = (served.push(3, "env-at").await, served.push(4, "env-past").await);
    assert_eq!((at, past), (200, 413), "ECP_MAX_PACKETS=3 over max_packets = 2");
    let status = status_of(&plain(), format!("{}/v1/status", served.url)).await;
    assert_eq!(status, 200, "ECP_SERVER_TRUST_LOOPBACK=true over trust_loopback = false");
    drop(served);

    // A flag over both.
    let served = Served::start(&setup, &file, &env, &["--max-packets", "4"]);
    let (at, past) = (served.push(4, "flag-at").await, served.push(5, "flag-past").await);
    assert_eq!((at, past), (200, 413), "--max-packets 4 over ECP_MAX_PACKETS=3");
    drop(served);

    // The file alone.
    let served = Served::start(&setup, &file, &[], &[]);
    let (at, past) = (served.push(2, "file-at").await, served.push(3, "file-past").await);
    assert_eq!((at, past), (200, 413), "max_packets = 2");
    let status = status_of(&plain(), format!("{}/v1/status", served.url)).await;
    assert_eq!(status, 401, "trust_loopback = false");
}

#[test]
fn config_show_names_where_each_value_came_from_masks_secrets_and_creates_nothing() {
    let setup = FileSetup::new();
    let missing = setup.path("not-yet");
    let file = setup.write(&[
        ("", format!("secret = \"file-secret-1\"\ndata = {}", toml_path(&missing))),
        ("limits", "max_packets = 2\nhistory_depth = 3\nclient_burst = 4".into()),
        // Written as [[key]]: the file's arrays of tables come last.
        ("[key]", "id = \"k1\"\nsecret = \"key-secret-2\"".into()),
    ]);
    let env = [("ECP_MAX_PACKETS", "3"), ("ECP_HISTORY_DEPTH", "5"), ("ECP_SECRET", "env-secret-3")];
    let args = ["--config", file.to_str().unwrap(), "--max-packets", "4"];
    let answer = config_show(&args, &env);
    let seen = |key: &str| {
        let s = shown(&answer, key);
        (s["value"].clone(), s["source"].as_str().unwrap().to_owned())
    };
    assert_eq!(seen("limits.max_packets"), (4.into(), "flag".into()));
    assert_eq!(seen("limits.history_depth"), (5.into(), "env".into()));
    assert_eq!(seen("limits.client_burst"), (4.into(), "file".into()));
    assert_eq!(seen("limits.client_rate_limit"), (600.into(), "default".into()));
    assert_eq!(seen("secret"), ("********".into(), "env".into()));
    assert_eq!(answer["keys"][0]["id"], "k1");
    let printed = answer.to_string();
    for secret in ["file-secret-1", "key-secret-2", "env-secret-3"] {
        assert!(!printed.contains(secret), "{secret} printed");
    }

    // The text form: one line per key, its source named.
    let output = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["config", "show"])
        .args(args)
        .env_clear()
        .envs(env)
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}");
    for line in [
        "limits.max_packets = 4  # flag --max-packets",
        "limits.history_depth = 5  # env ECP_HISTORY_DEPTH",
        "limits.client_burst = 4  # file",
        "secret = ********  # env ECP_SECRET",
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == line.split_whitespace().collect::<Vec<_>>()),
            "{line:?} in\n{text}"
        );
    }
    assert_eq!(text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("[[")).count(), KEYS.len());
    assert!(!text.contains("secret-1") && !text.contains("secret-2") && !text.contains("secret-3"), "{text}");
    assert!(!missing.exists(), "config show made the data folder");

    // An invalid value is the error serve would give, naming the key.
    let output = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["config", "show", "--config", file.to_str().unwrap()])
        .env_clear()
        .env("ECP_LIMITS_MAX_BULK_DELETE_FRACTION", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("limits.max_bulk_delete_fraction")
            && stderr.contains("ECP_LIMITS_MAX_BULK_DELETE_FRACTION"),
        "{stderr}"
    );
}

const TABLE_START: &str =
    "<!-- key table: generated from node/src/config/table.rs; ECP_BLESS=1 rewrites it -->\n";
const TABLE_END: &str = "<!-- end of the key table -->";

/// README's table of keys is [`ecp_node::config::markdown`]; `ECP_BLESS=1`
/// writes it there.
#[test]
fn the_readme_table_is_the_key_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start =
        readme.find(TABLE_START).expect("README has the key table's start marker") + TABLE_START.len();
    let end = readme[start..].find(TABLE_END).expect("and its end marker") + start;
    let table = ecp_node::config::markdown();
    if std::env::var_os("ECP_BLESS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert_eq!(&readme[start..end], table, "README's key table is stale: run with ECP_BLESS=1");
}
