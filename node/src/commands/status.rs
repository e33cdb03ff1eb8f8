//! `ecp-node status`: the node's identity, sequence number and counts, and
//! the folders it uses.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use ecp_node::config::Overrides;
use serde_json::json;

use super::output::{emit, emit_json, time};
use crate::cli::GlobalArgs;

pub(crate) fn run(global: &GlobalArgs, json: bool) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Overrides::default())?;
    let library = super::open_library(&config, false)?;
    let summary = library.store().summary().context("cannot read the store")?;
    let instance = library.store().instance_id();
    let data_dir = config.data_dir.display().to_string();
    let skills_dir = config.skills_dir.display().to_string();
    let folders: Vec<_> = config
        .sharing
        .folders
        .iter()
        .map(|f| json!({ "path": f.path.display().to_string(), "share": f.share }))
        .collect();
    if json {
        let mut status = library.status().context("cannot read the store")?;
        status.insert("dataDir".into(), json!(data_dir));
        status.insert("skillsDir".into(), json!(skills_dir));
        status.insert("skillsFolders".into(), json!(folders));
        emit_json(&serde_json::Value::Object(status))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "{:<17}{value}", format!("{key}:"));
    };
    line("instance", instance.to_owned());
    line("sequence", summary.sequence.to_string());
    line("shared skills", summary.skill_names.len().to_string());
    line("local skills", summary.local_skills.to_string());
    line("external skills", summary.external_skills.to_string());
    line("tombstones", summary.tombstones.to_string());
    line("private skills", summary.private_skills.to_string());
    line(
        "held: secrets",
        match summary.held_for_secrets {
            0 => "0".to_owned(),
            n => format!("{n} (see `ecp-node skill list`; share with `skill share NAME --allow-secrets`)"),
        },
    );
    line("quarantine held", summary.quarantine_held.to_string());
    line("last update", summary.last_update.as_deref().map_or_else(|| "never".to_owned(), time));
    line("data folder", data_dir);
    line("skills folder", skills_dir);
    for folder in config.sharing.folders.iter().filter(|f| f.path != config.skills_dir) {
        let share = if folder.share { "shared" } else { "private" };
        line("also imports", format!("{} ({share})", folder.path.display()));
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}
