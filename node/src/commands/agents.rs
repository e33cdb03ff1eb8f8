//! `ecp-node agents list | show | add | remove` (#24 item 3): the agents'
//! folders of `node.toml` ([`ecp_node::agents`]). `list` and `show` read the
//! store as the running node would; `add` and `remove` edit the file named
//! by `--config` (created when missing), keeping its comments, and replace
//! it only once the new text resolves as `serve` would resolve it. The node
//! reads `node.toml` at start: a running server is told to restart.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use ecp_node::agents::{self, Agent, Listing};
use ecp_node::config::{Config, Env, Flags, Sources, valid_agent_name};
use serde_json::json;

use super::output::{Table, emit, emit_json, tell};
use crate::cli::{AgentAddArgs, AgentsCommand, GlobalArgs};

pub(crate) fn run(global: &GlobalArgs, command: AgentsCommand) -> anyhow::Result<ExitCode> {
    match command {
        AgentsCommand::List(flag) => list(global, flag.json),
        AgentsCommand::Show { name, json } => show(global, &name, json.json),
        AgentsCommand::Add(args) => add(global, &args),
        AgentsCommand::Remove { name } => remove(global, &name),
    }
}

fn list(global: &GlobalArgs, json: bool) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    let mut listings = Vec::new();
    for agent in library.agents().all() {
        listings.push((agent, library.agents().listing(&library, agent).context("cannot read the store")?));
    }
    if json {
        let agents: Vec<_> = listings
            .iter()
            .map(|(a, l)| {
                json!({
                    "name": a.name, "path": a.path, "budgetChars": a.budget_chars,
                    "select": a.select.to_string(), "tags": a.tags, "include": a.include,
                    "listed": l.listed().count(), "chars": l.chars, "overBudget": l.over_budget,
                })
            })
            .collect();
        emit_json(&json!({ "agents": agents }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if listings.is_empty() {
        emit("no agents: add one with `ecp-node agents add NAME --path DIR --budget-chars N`\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["NAME", "PATH", "SELECT", "BUDGET", "LISTED", "CHARS"]);
    for (a, l) in &listings {
        table.row(vec![
            a.name.clone(),
            a.path.display().to_string(),
            a.select.to_string(),
            a.budget_chars.to_string(),
            l.listed().count().to_string(),
            l.chars.to_string(),
        ]);
    }
    emit(&table.render(""))?;
    Ok(ExitCode::SUCCESS)
}

fn show(global: &GlobalArgs, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    let agent = find(&config, name)?;
    let listing = library.agents().listing(&library, agent).context("cannot read the store")?;
    if json {
        emit_json(&listing)?;
    } else {
        emit(&render(agent, &listing))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The agent `name` of the configuration, or an error listing the names.
pub(crate) fn find<'a>(config: &'a Config, name: &str) -> anyhow::Result<&'a Agent> {
    if let Some(agent) = config.agents.iter().find(|a| a.name == name) {
        return Ok(agent);
    }
    let names: Vec<&str> = config.agents.iter().map(|a| a.name.as_str()).collect();
    if names.is_empty() {
        bail!("no agent named {name:?}: node.toml names no [[agent]] (see `ecp-node agents add`)");
    }
    bail!("no agent named {name:?}; the agents are: {}", names.join(", "))
}

fn render(agent: &Agent, listing: &Listing) -> String {
    let mut table = Table::new(&["", "SKILL", "CHARS", "CONFIDENCE", "WHY"]);
    for line in &listing.lines {
        table.row(vec![
            if line.listed { "in" } else { "out" }.to_owned(),
            line.name.clone(),
            line.chars.to_string(),
            format!("{:.2}", line.confidence),
            line.reason.clone(),
        ]);
    }
    let mut out = format!(
        "agent {} ({}): listing {} of {} characters, select = \"{}\"{}\n",
        agent.name,
        agent.path.display(),
        listing.chars,
        listing.budget_chars,
        agent.select,
        if listing.over_budget { " — over the budget" } else { "" }
    );
    out.push_str(&table.render(""));
    out
}

/// The node.toml `add` and `remove` edit: `--config` (or `ECP_CONFIG`).
fn config_file(global: &GlobalArgs) -> anyhow::Result<&Path> {
    global.config.as_deref().context(
        "no node.toml to edit: pass --config FILE (or set ECP_CONFIG); the file is created when it does not exist",
    )
}

fn add(global: &GlobalArgs, args: &AgentAddArgs) -> anyhow::Result<ExitCode> {
    if !valid_agent_name(&args.name) {
        bail!("{:?} is not an agent name: use 1 to 64 letters, digits, '-' or '_'", args.name);
    }
    let agent = Agent {
        name: args.name.clone(),
        path: args.path.clone(),
        budget_chars: args.budget_chars,
        select: args.select.parse().map_err(anyhow::Error::msg)?,
        tags: args.tags.clone(),
        include: args.include.clone(),
    };
    let path = config_file(global)?;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let edited = agents::add_agent(&text, &agent).map_err(anyhow::Error::msg)?;
    replace(global, path, &edited)?;
    tell(format_args!(
        "ecp-node: added agent {} ({}) to {}",
        agent.name,
        agent.path.display(),
        path.display()
    ));
    Ok(ExitCode::SUCCESS)
}

fn remove(global: &GlobalArgs, name: &str) -> anyhow::Result<ExitCode> {
    let path = config_file(global)?;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let edited = agents::remove_agent(&text, name).map_err(anyhow::Error::msg)?;
    replace(global, path, &edited)?;
    tell(format_args!("ecp-node: removed agent {name} from {}; its folder keeps its files", path.display()));
    Ok(ExitCode::SUCCESS)
}

/// Replaces `path` with `text` once `text` resolves as `serve` would
/// resolve it (written beside it, then renamed over it); tells the user to
/// restart a server running on the data folder.
fn replace(global: &GlobalArgs, path: &Path, text: &str) -> anyhow::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    let sources = Sources { file: Some(tmp.clone()), env: Env::process(), flags: global.keys.0.clone() };
    let config = match Config::resolve(&sources) {
        Ok(config) => config,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            bail!("{} left as it was: the edit would not resolve: {e}", path.display());
        }
    };
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    if super::api::running(&config).ok().flatten().is_some() {
        tell(format_args!(
            "ecp-node: a server runs on {}: restart it to apply the change (node.toml is read at start)",
            config.data_dir.display()
        ));
    }
    Ok(())
}
