//! `ecp-node config show [--json]`: every key of the key table with its
//! resolved value and where the value came from (default, file, env, flag),
//! resolved exactly as `serve` would (the same flags, environment and
//! `node.toml`), and the file's `[[folder]]` and `[[key]]` entries. Secrets
//! are printed as `********`. It needs no running server and creates
//! nothing: an invalid configuration is the error `serve` would give.

use std::process::ExitCode;

use ecp_node::config::{Config, Resolved, Setting, Value};
use serde_json::{Value as Json, json};

use super::output::{emit, emit_json, one_line};
use crate::cli::{ConfigCommand, GlobalArgs};

/// What a secret is shown as.
const MASK: &str = "********";

pub(crate) fn run(global: &GlobalArgs, command: ConfigCommand) -> anyhow::Result<ExitCode> {
    let ConfigCommand::Show { json, serve } = command;
    let resolved = super::resolved(global, serve.flags())?;
    let config = Config::from_resolved(&resolved)?;
    let settings: Vec<Json> = resolved.settings.iter().map(|s| shown(s, &resolved, &config)).collect();
    let folders: Vec<Json> = resolved
        .folders
        .iter()
        .map(|f| json!({"path": f.path.display().to_string(), "share": f.share.unwrap_or(true)}))
        .collect();
    let keys: Vec<Json> = resolved.keys.iter().map(|k| json!({"id": k.id, "secret": MASK})).collect();
    let file = global.config.as_ref().map(|p| p.display().to_string());
    if json.json {
        emit_json(&json!({"file": file, "settings": settings, "folders": folders, "keys": keys}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!("# node.toml: {}\n", file.as_deref().unwrap_or("none (--config, ECP_CONFIG)"));
    let width = settings.iter().map(|s| s["key"].as_str().map_or(0, str::len)).max().unwrap_or(0);
    for s in &settings {
        let value = match &s["value"] {
            Json::Null => "(none)".to_owned(),
            Json::String(text) => text.clone(),
            other => other.to_string(),
        };
        let key = s["key"].as_str().unwrap_or_default();
        let from = s["from"].as_str().unwrap_or_default();
        out.push_str(&format!("{key:<width$} = {}  # {from}\n", one_line(&value)));
    }
    for f in &folders {
        out.push_str(&format!("[[folder]] path = {} share = {}  # file only\n", f["path"], f["share"]));
    }
    for k in &keys {
        out.push_str(&format!("[[key]] id = {} secret = {MASK}  # file only\n", k["id"]));
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// One setting as `config show` prints it.
fn shown(setting: &Setting, resolved: &Resolved, config: &Config) -> Json {
    let key = setting.key;
    let value = match (&setting.value, key.id().as_str()) {
        (Some(value), _) => json_of(value),
        // Defaults that depend on other keys: shown as they came out.
        (None, "skills_dir") if resolved.folders.is_empty() => {
            json!([config.skills_dir.display().to_string()])
        }
        (None, "limits.body_bytes_in_flight") => json!(config.body_bytes_in_flight),
        (None, _) => Json::Null,
    };
    let from = setting.source.to_string();
    json!({
        "key": key.id(),
        "value": value,
        "source": setting.source.word(),
        "from": from,
        "env": key.env,
        "flag": key.flag.map(|f| format!("--{}", f.long)),
    })
}

fn json_of(value: &Value) -> Json {
    match value {
        Value::Text(text) => json!(text),
        Value::Path(path) => json!(path.display().to_string()),
        Value::Paths(paths) => json!(paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()),
        Value::Addr(addr) => json!(addr.to_string()),
        Value::Bool(b) => json!(b),
        Value::Count(n) => json!(n),
        Value::Share(x) => json!(x),
        Value::Duration(d) => json!(humantime::format_duration(*d).to_string()),
        Value::List(items) => json!(items),
        Value::Secret(_) => json!(MASK),
    }
}
