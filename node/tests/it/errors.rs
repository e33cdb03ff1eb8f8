//! Errors at start said once, naming the path (#16 item 7): a data folder
//! that is a file or unreadable, a database that is not one, a missing
//! peers file, `node.toml` errors with line and column, `[peer]` for
//! `[[peer]]`; and `--listen localhost:PORT` accepted.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cli::Out;

/// Runs the real binary in `dir` with `args`, the environment cleared.
fn run_in(dir: &Path, args: &[&str]) -> Out {
    let output = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .output()
        .expect("the ecp-node binary runs");
    Out {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Asserts the run failed with exit 2 and one error line holding each of
/// `said` exactly once.
fn said_once(out: &Out, said: &[&str]) {
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(out.stderr.matches("ecp-node: error").count(), 1, "{out:?}");
    for text in said {
        assert_eq!(out.stderr.matches(text).count(), 1, "{text:?} once in {out:?}");
    }
}

const SERVE: &[&str] = &["serve", "--listen", "127.0.0.1:0", "--no-mdns"];

fn serve_with<'a>(more: &[&'a str]) -> Vec<&'a str> {
    SERVE.iter().copied().chain(more.iter().copied()).collect()
}

#[test]
fn a_data_folder_that_is_a_file_is_said_once_by_serve_and_the_other_commands() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("afile"), "").unwrap();
    let said = "the data folder afile is a file, not a folder";
    said_once(&run_in(tmp.path(), &serve_with(&["--data", "afile"])), &[said]);
    said_once(&run_in(tmp.path(), &["status", "--data", "afile"]), &[said]);
}

#[test]
fn an_unreadable_data_folder_or_database_is_reported_as_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("afile"), "").unwrap();
    // The tests may run as root, whom permissions do not stop: a path
    // through a file, and a database that is a symlink loop, cannot be read by anyone.
    let folder = "cannot read the data folder afile/sub: Not a directory";
    said_once(&run_in(tmp.path(), &serve_with(&["--data", "afile/sub"])), &[folder]);
    said_once(&run_in(tmp.path(), &["status", "--data", "afile/sub"]), &[folder]);
    std::fs::create_dir(tmp.path().join("looped")).unwrap();
    std::os::unix::fs::symlink("ecp.sqlite3", tmp.path().join("looped/ecp.sqlite3")).unwrap();
    let out = run_in(tmp.path(), &["status", "--data", "looped"]);
    said_once(&out, &["cannot read looped/ecp.sqlite3: Too many levels of symbolic links"]);
    assert!(!out.stderr.contains("holds no ecp-node data"), "{out:?}");
}

#[test]
fn a_database_that_is_not_one_is_said_once_naming_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("data")).unwrap();
    std::fs::write(tmp.path().join("data/ecp.sqlite3"), vec![0x5a; 4096]).unwrap();
    for args in [serve_with(&["--data", "data"]), vec!["status", "--data", "data"]] {
        let out = run_in(tmp.path(), &args);
        said_once(&out, &["data/ecp.sqlite3", "file is not a database"]);
    }
}

#[test]
fn a_missing_peers_file_is_said_once_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(tmp.path(), &serve_with(&["--data", "data", "--peers", "nope.toml"]));
    said_once(&out, &["nope.toml", "No such file or directory"]);
}

#[test]
fn node_toml_errors_give_the_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("listen = 127.0.0.1\n", "config file node.toml is invalid: line 1, column 15: "),
        (
            "listen = \"127.0.0.1:7000\"\n[limits]\nmax_packets = \"ten\"\n",
            "limits.max_packets: string is not a whole number (config file node.toml, line 3, column 1)",
        ),
        ("[limits]\n\nmax_pakets = 5\n", "is invalid: line 3, column 1: unknown key [limits] max_pakets"),
        (
            "[folder]\npath = \"x\"\n",
            "line 1, column 2: [folder] is one table; write [[folder]] (two brackets)",
        ),
    ];
    for (text, said) in cases {
        std::fs::write(tmp.path().join("node.toml"), text).unwrap();
        said_once(&run_in(tmp.path(), &["config", "show", "--config", "node.toml"]), &[said]);
    }
}

#[test]
fn a_peer_table_where_peers_need_an_array_of_tables_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[federation]\ninterval = \"1h\"\n[peer]\nurl = \"http://127.0.0.1:9\"\n";
    std::fs::write(tmp.path().join("peers.toml"), text).unwrap();
    let out = run_in(tmp.path(), &serve_with(&["--data", "data", "--peers", "peers.toml"]));
    said_once(&out, &["peers file peers.toml, line 3", "write [[peer]] (two brackets)"]);
}

#[test]
fn listen_takes_a_host_name_and_resolves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("localhost:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["serve", "--no-mdns", "--data", "data", "--listen", &listen])
        .current_dir(tmp.path())
        .env_clear()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let info = loop {
        let info = std::fs::read_to_string(tmp.path().join("data/server.json")).ok();
        if let Some(info) = info.filter(|i| i.contains("url")) {
            break info;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("serve --listen {listen} did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
    assert!(info.contains(&format!("http://127.0.0.1:{port}")), "{info}");
}
