//! `ecp-node quarantine list | show | approve | drop`: review the packets the
//! node refused. Reading works on the store; approving and dropping go to
//! the server running on the data folder when there is one (its `/v1/`
//! API), else through [`ecp_node::operator`] to the store. An entry the
//! scan flagged needs `--force`, after its findings are shown. A hub's
//! quarantine (`ECP_STORE`) is reviewed through its replicas' `/v1/` API
//! instead: the command says so.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::{Config, Flags};
use ecp_node::intake::needs_force;
use ecp_node::library::Library;
use ecp_node::operator;
use ecp_node::store::{QuarantineEntry, StoreError};
use ecp_protocol::SkillPacket;
use serde_json::json;

use super::output::{Table, body_block, emit, emit_json, label, one_line, provenance, tell, time};
use super::{Refusal, Target};
use crate::cli::{GlobalArgs, QuarantineCommand};

pub(crate) fn run(global: &GlobalArgs, command: QuarantineCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    if config.store.is_some() {
        // The data folder's own store is not the hub's: reviewing it would show nothing of the hub's.
        bail!(
            "ECP_STORE (--store) names a hub's database, whose quarantine is reviewed at any of its replicas with \
             the replica's API token: GET /v1/quarantine, GET or DELETE /v1/quarantine/ID, POST \
             /v1/quarantine/ID/approve ({{\"force\": true}} past the scan), POST /v1/quarantine/drop; this command \
             reviews a node's own quarantine (unset ECP_STORE for it)"
        );
    }
    match command {
        QuarantineCommand::List(flag) => list(&super::open_library(&config, global.init)?, flag.json),
        QuarantineCommand::Show { id, json } => {
            show(&super::open_library(&config, global.init)?, id, json.json)
        }
        QuarantineCommand::Approve { id, force } => {
            let library = super::open_library(&config, global.init)?;
            approve(&library, &super::write_target(&config, global.init)?, &config, id, force)
        }
        QuarantineCommand::Drop { id: Some(id), .. } => {
            drop_entry(&super::write_target(&config, global.init)?, id)
        }
        QuarantineCommand::Drop { all: true, .. } => {
            drop_many(&super::write_target(&config, global.init)?, None)
        }
        QuarantineCommand::Drop { older_than: Some(age), .. } => {
            let parsed = ecp_node::config::parse_duration(&age).context("--older-than")?;
            drop_many(&super::write_target(&config, global.init)?, Some((age.as_str(), parsed)))
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
    // One table for every entry, so that the columns line up across them;
    // each entry's row is followed by its details.
    let mut table = Table::new(&["ID", "SKILL", "PEER", "STAGE", "SEEN", "LAST SEEN"]);
    for e in &entries {
        table.row(vec![
            e.id.to_string(),
            e.skill_name.clone(),
            e.peer.to_string(),
            e.stage.clone(),
            e.times_seen.to_string(),
            time(&e.last_seen_at),
        ]);
    }
    let rendered = table.render("");
    let mut lines = rendered.lines();
    let mut out = String::new();
    let _ = writeln!(out, "{}", lines.next().unwrap_or_default());
    for (e, row) in entries.iter().zip(lines) {
        let _ = writeln!(out, "{row}");
        let _ = writeln!(out, "    reason: {}", one_line(&e.reason));
        if let Some(t) = &e.truncated {
            let _ = writeln!(
                out,
                "    truncated: the packet was {} bytes (SHA-256 {}); only an excerpt is kept, it cannot be approved",
                t.size, t.sha256
            );
        }
        finding_lines(&mut out, "    ", e);
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
    finding_lines(&mut out, "  ", entry);
    out
}

/// Writes each finding of `entry` to `out` on its own line, after `indent`.
fn finding_lines(out: &mut String, indent: &str, entry: &QuarantineEntry) {
    for f in &entry.findings {
        let _ = writeln!(
            out,
            "{indent}line {}: {} {}: {}",
            f.line,
            label(&f.severity),
            one_line(&f.rule_id),
            one_line(&f.excerpt)
        );
        // Findings stored before messages existed have none.
        if !f.message.is_empty() {
            let _ = writeln!(out, "{indent}  why: {}", one_line(&f.message));
        }
    }
}

fn read_held(library: &Library, id: i64) -> anyhow::Result<(QuarantineEntry, Option<SkillPacket>)> {
    match library.store().quarantined(id) {
        Ok(held) => Ok(held),
        Err(StoreError::NoSuchQuarantineEntry(_)) => bail!(no_entry(id)),
        Err(e @ StoreError::QuarantineEntryNotHeld { .. }) => bail!(not_held(&e.to_string())),
        Err(e) => Err(e).context("cannot read the quarantine"),
    }
}

fn approve(
    library: &Library,
    target: &Target,
    config: &Config,
    id: i64,
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
    let approved = match target {
        Target::Server(server) => server.approve(id, force)?.map_err(|r| refused(id, r))?,
        Target::Store(library) => operator::approve(library, config, id, force).map_err(|e| failed(id, e))?,
    };
    emit(&format!(
        "approved entry {id}: installed {} as an external skill (confidence {:.2})\n",
        approved.name, approved.confidence
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn drop_many(target: &Target, age: Option<(&str, std::time::Duration)>) -> anyhow::Result<ExitCode> {
    let dropped = match target {
        Target::Server(server) => {
            server.drop_many(age.map(|(text, _)| text))?.map_err(anyhow::Error::from)?
        }
        Target::Store(library) => {
            operator::drop_many(library, age.map(|(_, d)| d)).context("cannot drop the entries")?
        }
    };
    let mut out = String::new();
    for e in &dropped {
        let _ = writeln!(out, "dropped entry {} ({} from {})", e.id, one_line(&e.name), one_line(&e.peer));
    }
    let _ = writeln!(out, "{} entr{} dropped", dropped.len(), if dropped.len() == 1 { "y" } else { "ies" });
    emit(&out)?;
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
