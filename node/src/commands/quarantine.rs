//! `ecp-node quarantine list | show | approve | drop`: review the packets the
//! node refused. Approving installs through [`Library`], so the skills folder
//! follows and a running server serves the skill within its polling interval;
//! an entry the scan flagged needs `--force`, after its findings are shown.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Overrides;
use ecp_node::library::Library;
use ecp_node::store::StoreError;
use serde_json::json;

use super::output::{Table, body_block, emit, emit_json, label, one_line, provenance, tell, time};
use crate::cli::{GlobalArgs, QuarantineCommand};
use ecp_node::intake::needs_force;
use ecp_node::store::QuarantineEntry;
use ecp_protocol::SkillPacket;

pub(crate) fn run(global: &GlobalArgs, command: QuarantineCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Overrides::default())?;
    let library = super::open_library(&config, false)?;
    match command {
        QuarantineCommand::List(flag) => list(&library, flag.json),
        QuarantineCommand::Show { id, json } => show(&library, id, json.json),
        QuarantineCommand::Approve { id, force } => {
            approve(&library, id, config.default_trust, config.reshare_external, force)
        }
        QuarantineCommand::Drop { id: Some(id), .. } => drop_entry(&library, id),
        QuarantineCommand::Drop { all: true, .. } => drop_older_than(&library, None),
        QuarantineCommand::Drop { older_than: Some(age), .. } => {
            let age = ecp_node::config::parse_duration(&age).context("--older-than")?;
            drop_older_than(&library, Some(age))
        }
        QuarantineCommand::Drop { .. } => bail!("say which entries to drop: an ID, --all or --older-than"),
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

fn show(library: &Library, id: i64, json: bool) -> anyhow::Result<ExitCode> {
    let (entry, packet) = read_held(library, id)?;
    if json {
        emit_json(&json!({ "entry": entry, "packet": packet }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "entry {id}: {} from {}, refused at stage {}",
        one_line(&entry.skill_name),
        one_line(&entry.peer.to_string()),
        entry.stage
    );
    let _ = writeln!(out, "reason: {}", one_line(&entry.reason));
    let _ = writeln!(
        out,
        "received: {}, last seen {}, {} time(s); trust in the sender {}",
        time(&entry.received_at),
        time(&entry.last_seen_at),
        entry.times_seen,
        entry.trust.map_or_else(|| "unknown".to_owned(), |t| format!("{t:.2}"))
    );
    out.push_str(&findings(&entry));
    match &packet {
        Some(packet) => {
            let _ = writeln!(out, "provenance: {}", provenance(packet));
            out.push_str(&body_block(&packet.skill_body));
        }
        None => {
            if let Some(t) = &entry.truncated {
                let _ = writeln!(
                    out,
                    "body: not kept — the packet was {} bytes (SHA-256 {}), over the quarantine's body limit",
                    t.size, t.sha256
                );
            }
        }
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The findings of an entry, one per line with its line number.
fn findings(entry: &QuarantineEntry) -> String {
    let mut out = format!("findings: {}\n", entry.findings.len());
    for f in &entry.findings {
        let _ = writeln!(
            out,
            "  line {}: {} {}: {}",
            f.line,
            label(&f.severity),
            one_line(&f.rule_id),
            one_line(&f.excerpt)
        );
    }
    out
}

fn read_held(library: &Library, id: i64) -> anyhow::Result<(QuarantineEntry, Option<SkillPacket>)> {
    match library.store().quarantined(id) {
        Ok(held) => Ok(held),
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e)),
        Err(e) => Err(e).context("cannot read the quarantine"),
    }
}

fn approve(
    library: &Library,
    id: i64,
    fallback_trust: f64,
    reshare: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let (entry, _) = read_held(library, id)?;
    if needs_force(&entry) {
        // Whoever approves a flagged skill has seen what was found in it.
        emit(&format!(
            "entry {id} ({}) was refused at stage {}: {}\n{}",
            one_line(&entry.skill_name),
            entry.stage,
            one_line(&entry.reason),
            findings(&entry)
        ))?;
        if !force {
            tell(format_args!(
                "ecp-node: not approved: the scan flagged entry {id}. Read it whole with `ecp-node quarantine show \
                 {id}`; if you trust the skill anyway, run `ecp-node quarantine approve {id} --force`"
            ));
            return Ok(ExitCode::from(1));
        }
    }
    let packet = match library.approve(id, fallback_trust, reshare, force) {
        Ok(packet) => packet,
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e)),
        Err(e @ (StoreError::CannotApprove(_) | StoreError::NeedsForce { .. })) => bail!("{e}"),
        Err(e) => return Err(e).context("cannot approve the entry"),
    };
    emit(&format!(
        "approved entry {id}: installed {} as an external skill (confidence {:.2})\n",
        packet.skill_name, packet.confidence
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn drop_older_than(library: &Library, age: Option<std::time::Duration>) -> anyhow::Result<ExitCode> {
    let dropped = library.store().quarantine_drop_older_than(age).context("cannot drop the entries")?;
    let mut out = String::new();
    for e in &dropped {
        let _ = writeln!(
            out,
            "dropped entry {} ({} from {})",
            e.id,
            one_line(&e.skill_name),
            one_line(&e.peer.to_string())
        );
    }
    let _ = writeln!(out, "{} entr{} dropped", dropped.len(), if dropped.len() == 1 { "y" } else { "ies" });
    emit(&out)?;
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
        Ok(_) => {}
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
