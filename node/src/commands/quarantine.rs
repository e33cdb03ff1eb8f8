//! `ecp-node quarantine list | approve | drop`: review the packets the node
//! refused. Approving and dropping go to the server running on the data
//! folder when there is one (its `/v1/` API), else through
//! [`ecp_node::operator`] to the store.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use ecp_node::config::{Config, Overrides};
use ecp_node::library::Library;
use ecp_node::operator;
use ecp_node::store::StoreError;
use serde_json::json;

use super::output::{Table, emit, emit_json, label, one_line, time};
use super::{Refusal, Target};
use crate::cli::{GlobalArgs, QuarantineCommand};

pub(crate) fn run(global: &GlobalArgs, command: QuarantineCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Overrides::default())?;
    match command {
        QuarantineCommand::List(flag) => list(&super::open_library(&config, global.init)?, flag.json),
        QuarantineCommand::Approve { id } => {
            approve(&super::write_target(&config, global.init)?, &config, id)
        }
        QuarantineCommand::Drop { id } => drop_entry(&super::write_target(&config, global.init)?, id),
    }
}

fn list(library: &Library, json: bool) -> anyhow::Result<ExitCode> {
    let entries = library.store().quarantine().context("cannot read the quarantine")?;
    if json {
        emit_json(&json!({ "quarantine": entries }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        emit("the quarantine is empty\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for e in &entries {
        let mut table = Table::new(&["ID", "SKILL", "PEER", "STAGE", "SEEN", "LAST SEEN"]);
        table.row(vec![
            e.id.to_string(),
            e.skill_name.clone(),
            e.peer.to_string(),
            e.stage.clone(),
            e.times_seen.to_string(),
            time(&e.last_seen_at),
        ]);
        if out.is_empty() {
            out.push_str(&table.render(""));
        } else {
            // Same columns for every entry; only the first prints its header.
            out.push_str(table.render("").split_once('\n').map_or("", |(_, rest)| rest));
        }
        let _ = writeln!(out, "    reason: {}", one_line(&e.reason));
        if let Some(t) = &e.truncated {
            let _ = writeln!(
                out,
                "    truncated: the packet was {} bytes (SHA-256 {}); only an excerpt is kept, it cannot be approved",
                t.size, t.sha256
            );
        }
        for f in &e.findings {
            let _ = writeln!(
                out,
                "    line {}: {} {}: {}",
                f.line,
                label(&f.severity),
                one_line(&f.rule_id),
                one_line(&f.excerpt)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{} held; `ecp-node quarantine approve ID` installs one, `ecp-node quarantine drop ID` removes it",
        entries.len()
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn approve(target: &Target, config: &Config, id: i64) -> anyhow::Result<ExitCode> {
    let approved = match target {
        Target::Server(server) => server.approve(id)?.map_err(|r| refused(id, r))?,
        Target::Store(library) => operator::approve(library, config, id).map_err(|e| failed(id, e))?,
    };
    emit(&format!(
        "approved entry {id}: installed {} as an external skill (confidence {:.2})\n",
        approved.name, approved.confidence
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn drop_entry(target: &Target, id: i64) -> anyhow::Result<ExitCode> {
    let dropped = match target {
        Target::Server(server) => server.drop_entry(id)?.map_err(|r| refused(id, r))?,
        Target::Store(library) => operator::drop_quarantined(library, id).map_err(|e| failed(id, e))?,
    };
    emit(&format!("dropped entry {id} ({} from {})\n", dropped.name, one_line(&dropped.peer)))?;
    Ok(ExitCode::SUCCESS)
}

/// The error of an action on entry `id` the store refused or failed.
fn failed(id: i64, e: StoreError) -> anyhow::Error {
    match e {
        StoreError::NoSuchQuarantineEntry(_) => anyhow::anyhow!(no_entry(id)),
        e @ StoreError::QuarantineEntryNotHeld { .. } => anyhow::anyhow!(not_held(&e.to_string())),
        e @ StoreError::CannotApprove(_) => anyhow::anyhow!("{e}"),
        e => anyhow::Error::new(e).context(format!("cannot change quarantine entry {id}")),
    }
}

/// The error of an action on entry `id` the server refused, worded as [`failed`] words it.
fn refused(id: i64, refusal: Refusal) -> anyhow::Error {
    match refusal.code.as_str() {
        "no_such_quarantine_entry" => anyhow::anyhow!(no_entry(id)),
        "quarantine_entry_not_held" => anyhow::anyhow!(not_held(&refusal.message)),
        "cannot_approve" => anyhow::anyhow!(refusal.message),
        _ => refusal.into(),
    }
}

fn no_entry(id: i64) -> String {
    format!("no held quarantine entry with id {id}; `ecp-node quarantine list` shows the held ones")
}

fn not_held(why: &str) -> String {
    format!("{why}; `ecp-node quarantine list` shows the held ones")
}
