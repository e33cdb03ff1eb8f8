//! `ecp-node quarantine list | approve | drop`: review the packets the node
//! refused. Approving installs through [`Library`], so the skills folder
//! follows and a running server serves the skill within its polling interval.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Overrides;
use ecp_node::library::Library;
use ecp_node::store::StoreError;
use serde_json::json;

use super::output::{Table, emit, emit_json, label, one_line, time};
use crate::cli::{GlobalArgs, QuarantineCommand};

pub(crate) fn run(global: &GlobalArgs, command: QuarantineCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Overrides::default())?;
    let library = super::open_library(&config, false)?;
    match command {
        QuarantineCommand::List(flag) => list(&library, flag.json),
        QuarantineCommand::Approve { id } => {
            approve(&library, id, config.default_trust, config.reshare_external)
        }
        QuarantineCommand::Drop { id } => drop_entry(&library, id),
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

fn approve(library: &Library, id: i64, fallback_trust: f64, reshare: bool) -> anyhow::Result<ExitCode> {
    let packet = match library.approve(id, fallback_trust, reshare) {
        Ok(packet) => packet,
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e)),
        Err(e @ StoreError::CannotApprove(_)) => bail!("{e}"),
        Err(e) => return Err(e).context("cannot approve the entry"),
    };
    emit(&format!(
        "approved entry {id}: installed {} as an external skill (confidence {:.2})\n",
        packet.skill_name, packet.confidence
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn drop_entry(library: &Library, id: i64) -> anyhow::Result<ExitCode> {
    let entry = match library.store().quarantined(id) {
        Ok((entry, _)) => entry,
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e)),
        Err(e) => return Err(e).context("cannot read the quarantine"),
    };
    match library.store().quarantine_drop(id) {
        Ok(()) => {}
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e)),
        Err(e) => return Err(e).context("cannot drop the entry"),
    }
    emit(&format!("dropped entry {id} ({} from {})\n", entry.skill_name, one_line(&entry.peer.to_string())))?;
    Ok(ExitCode::SUCCESS)
}

fn no_entry(id: i64) -> String {
    format!("no held quarantine entry with id {id}; `ecp-node quarantine list` shows the held ones")
}

fn not_held(e: &StoreError) -> String {
    format!("{e}; `ecp-node quarantine list` shows the held ones")
}
