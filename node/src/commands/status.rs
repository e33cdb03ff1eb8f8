//! `ecp-node status`: the node's identity, sequence number and counts, and
//! the folders it uses — the running server's live view when one runs on
//! the data folder (`GET /v1/status`), else the store's.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use ecp_node::config::Flags;
use serde_json::{Map, Value, json};

use super::output::{emit, emit_json, one_line, time};
use crate::cli::GlobalArgs;

pub(crate) fn run(global: &GlobalArgs, json: bool) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let data_dir = config.data_dir.display().to_string();
    let (mut status, skills_dir, server) = match super::api::running(&config)? {
        Some(server) => {
            let status = server.status()?.map_err(anyhow::Error::new)?;
            let info = server.info();
            let running = format!("running, pid {} at {}", info.pid, info.url);
            (status, info.skills_dir.display().to_string(), Some(running))
        }
        None => {
            let library = super::open_library(&config, global.init)?;
            let status = library.status().context("cannot read the store")?;
            (status, config.skills_dir.display().to_string(), None)
        }
    };
    let folders: Vec<_> = config
        .sharing
        .folders
        .iter()
        .map(|f| json!({ "path": f.path.display().to_string(), "share": f.share }))
        .collect();
    if json {
        status.insert("dataDir".into(), json!(data_dir));
        status.insert("skillsDir".into(), json!(skills_dir));
        status.entry("skillsFolders").or_insert_with(|| json!(folders));
        status.insert("server".into(), json!(server));
        emit_json(&Value::Object(status))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "{:<17}{value}", format!("{key}:"));
    };
    let field = |key: &str| -> String {
        match status.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        }
    };
    line("instance", field("instance"));
    line("sequence", field("sequence"));
    line("shared skills", field("skills"));
    line("local skills", field("localSkills"));
    line("external skills", field("externalSkills"));
    line("tombstones", field("tombstones"));
    line("private skills", field("privateSkills"));
    line(
        "held: secrets",
        match field("heldForSecrets").as_str() {
            "0" | "" => "0".to_owned(),
            n => format!("{n} (see `ecp-node skill list`; share with `skill share NAME --allow-secrets`)"),
        },
    );
    line("quarantine held", field("quarantineHeld"));
    line("inbox waiting", field("inboxWaiting"));
    let held = status.get("heldDeletions").and_then(Value::as_array).cloned().unwrap_or_default();
    line(
        "held deletions",
        match held.len() {
            0 => "0".to_owned(),
            n => {
                let mut from: Vec<&str> = held.iter().filter_map(|d| d["source"].as_str()).collect();
                from.sort_unstable();
                from.dedup();
                format!(
                    "{n} from {} (see `ecp-node deletions list`; release with `deletions accept` or `reject`)",
                    from.join(", ")
                )
            }
        },
    );
    let not_shared = status.get("notShared").and_then(Value::as_array).cloned().unwrap_or_default();
    line("not shared", not_shared.len().to_string());
    let warned = status.get("sharedWithWarnings").and_then(Value::as_array).cloned().unwrap_or_default();
    line("with warnings", warned.len().to_string());
    if let Some(why) = status.get("foldersUnavailable").and_then(Value::as_str) {
        line("unavailable", why.to_owned());
    }
    line("last update", last_update(&status));
    line("server", server.unwrap_or_else(|| "not running".to_owned()));
    line("data folder", data_dir);
    line("skills folder", skills_dir.clone());
    for folder in config.sharing.folders.iter().filter(|f| f.path.display().to_string() != skills_dir) {
        let share = if folder.share { "shared" } else { "private" };
        line("also imports", format!("{} ({share})", folder.path.display()));
    }
    out.push_str(&folder_report(&not_shared, &warned));
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The lines `status` and `skill list` print for the skills not shared
/// (and why) and the skills shared with warnings, from the JSON of
/// [`ecp_node::import::FolderReport`]; empty when there are none.
pub(super) fn folder_report(not_shared: &[Value], warned: &[Value]) -> String {
    let place = |v: &Value| {
        let folder = v["folder"].as_u64().map(|n| format!("folder {n}, ")).unwrap_or_default();
        let path = v["path"].as_str().unwrap_or("-");
        let skill = v["skill"].as_str().map(|s| format!(" ({s})")).unwrap_or_default();
        one_line(&format!("{folder}{path}{skill}")).into_owned()
    };
    let mut out = String::new();
    if !not_shared.is_empty() {
        out.push_str("not shared:\n");
        for n in not_shared {
            let (code, reason) = (n["code"].as_str().unwrap_or(""), n["reason"].as_str().unwrap_or(""));
            let _ = writeln!(out, "  {}: {}: {}", place(n), one_line(code), one_line(reason));
        }
    }
    if !warned.is_empty() {
        out.push_str("shared with warnings:\n");
        for w in warned {
            for warning in w["warnings"].as_array().into_iter().flatten() {
                let (code, message) =
                    (warning["code"].as_str().unwrap_or(""), warning["message"].as_str().unwrap_or(""));
                let _ = writeln!(out, "  {}: {}: {}", place(w), one_line(code), one_line(message));
            }
        }
    }
    out
}

fn last_update(status: &Map<String, Value>) -> String {
    status.get("lastUpdate").and_then(Value::as_str).map_or_else(|| "never".to_owned(), time)
}
