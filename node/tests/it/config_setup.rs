//! The toolbox of the configuration tests (`config.rs`, `config_show.rs`):
//! a `node.toml` in a fresh folder and a real node started from it, and
//! `ecp-node config show --json` run on a file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ecp_node::config::{Config, Sources};
use serde_json::Value;
use tempfile::TempDir;

use crate::util::{TestNode, skill_md};

/// A `node.toml` in a fresh folder: `entries` (section, `key = value`), plus
/// `listen` on an ephemeral loopback port, `data`, `skills_dir` and
/// `mdns = false` in that folder unless `entries` set them.
pub(super) struct FileSetup {
    dir: TempDir,
}

impl FileSetup {
    pub(super) fn new() -> FileSetup {
        FileSetup { dir: tempfile::tempdir().expect("a temporary folder") }
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `node.toml` with `entries` and returns its path.
    pub(super) fn write(&self, entries: &[(&str, String)]) -> PathBuf {
        let given = |name: &str| {
            entries
                .iter()
                .any(|(s, lines)| s.is_empty() && lines.lines().any(|l| l.starts_with(&format!("{name} "))))
        };
        // Top-level keys first: TOML puts whatever follows a [table] in it.
        let mut text = String::new();
        for (_, lines) in entries.iter().filter(|(s, _)| s.is_empty()) {
            text.push_str(&format!("{lines}\n"));
        }
        for (name, value) in [
            ("listen", "\"127.0.0.1:0\"".to_owned()),
            ("data", toml_path(&self.path("data"))),
            ("skills_dir", toml_path(&self.path("skills"))),
            ("mdns", "false".to_owned()),
        ] {
            if !given(name) {
                text.push_str(&format!("{name} = {value}\n"));
            }
        }
        for (section, lines) in entries.iter().filter(|(s, _)| !s.is_empty()) {
            text.push_str(&format!("[{section}]\n{lines}\n"));
        }
        let file = self.path("node.toml");
        std::fs::write(&file, text).expect("node.toml written");
        file
    }

    /// A real node started from `node.toml` with `entries` (and nothing from
    /// the process's environment).
    pub(super) async fn start(&self, entries: &[(&str, String)]) -> TestNode {
        let config = file_config(&self.write(entries));
        TestNode::start_with(|c| *c = config).await
    }

    /// The `skills` folder, with one SKILL.md per name.
    pub(super) fn skills(&self, names: &[&str]) {
        for name in names {
            crate::cli::write_skill(&self.path("skills"), name, &skill_md(name, "A skill of the folder"));
        }
    }
}

pub(super) fn toml_path(path: &Path) -> String {
    format!("{:?}", path.to_str().expect("a UTF-8 temporary path"))
}

pub(super) fn file_config(file: &Path) -> Config {
    Config::resolve(&Sources { file: Some(file.to_owned()), ..Sources::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", std::fs::read_to_string(file).unwrap_or_default()))
}

/// A node from `node.toml` with the one line `line` in `section`.
pub(super) async fn node_with(section: &str, line: String) -> (FileSetup, TestNode) {
    let setup = FileSetup::new();
    let node = setup.start(&[(section, line)]).await;
    (setup, node)
}

/// `ecp-node config show --json` on `args`, with `env` and nothing else
/// from this process's environment; the whole answer.
pub(super) fn config_show(args: &[&str], env: &[(&str, &str)]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["config", "show", "--json"])
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "config show {args:?}: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("config show: {e}"))
}

/// The setting `key` of a `config show --json` answer.
pub(super) fn shown<'a>(answer: &'a Value, key: &str) -> &'a Value {
    answer["settings"].as_array().unwrap().iter().find(|s| s["key"] == key).unwrap_or_else(|| panic!("{key}"))
}

/// Observes `key` (set to `line` in `section`) in `config show --json`:
/// its value is `expected` and comes from the file.
pub(super) fn shown_from_file(section: &str, line: &str, key: &str, expected: Value) -> Result<(), String> {
    let setup = FileSetup::new();
    let file = setup.write(&[(section, line.to_owned())]);
    let answer = config_show(&["--config", file.to_str().unwrap()], &[]);
    let setting = shown(&answer, key);
    if setting["value"] == expected && setting["source"] == "file" {
        Ok(())
    } else {
        Err(format!("config show: {setting}"))
    }
}

/// A plain client (no API token, no proxy).
pub(super) fn plain() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().unwrap()
}

pub(super) async fn status_of(client: &reqwest::Client, url: String) -> u16 {
    client.get(url).send().await.map(|r| r.status().as_u16()).unwrap_or(0)
}
