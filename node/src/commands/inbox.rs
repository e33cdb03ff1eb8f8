//! `ecp-node inbox list | show | accept | reject`: with review intake, the
//! skills peers sent wait here before they reach the skills folder. The
//! decisions are [`Library::inbox_decide`]'s, which the `/v1/inbox` API
//! shares: they go to the server running on the data folder when there is
//! one, else to the store.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Flags;
use ecp_node::intake::IntakeMode;
use ecp_node::library::Library;
use ecp_node::store::{StoreError, Verdict};
use serde_json::json;

use super::Target;
use super::output::{Table, body_block, emit, emit_json, one_line, provenance, time};
use crate::cli::{GlobalArgs, InboxCommand, InboxPick};

pub(crate) fn run(global: &GlobalArgs, command: InboxCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    match command {
        InboxCommand::List(flag) => list(&library, flag.json, config.intake),
        InboxCommand::Show { id, json } => show(&library, id, json.json),
        InboxCommand::Accept(pick) => {
            decide(&library, &super::write_target(&config, global.init)?, &pick, Verdict::Accepted)
        }
        InboxCommand::Reject(pick) => {
            decide(&library, &super::write_target(&config, global.init)?, &pick, Verdict::Rejected)
        }
    }
}

fn list(library: &Library, json: bool, mode: IntakeMode) -> anyhow::Result<ExitCode> {
    let entries = library.store().inbox().context("cannot read the inbox")?;
    if json {
        emit_json(&json!({ "inbox": entries }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        let hint = if mode == IntakeMode::Auto {
            " (intake is auto: skills from peers go to the skills folder at once; --intake review holds them here)"
        } else {
            ""
        };
        emit(&format!("the inbox is empty{hint}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "SKILL", "KIND", "ORIGIN", "CONFIDENCE", "FROM", "RECEIVED"]);
    for e in &entries {
        table.row(vec![
            e.id.to_string(),
            e.skill_name.clone(),
            if e.update { "update" } else { "new" }.to_owned(),
            one_line(&e.origin).into_owned(),
            format!("{:.2}", e.confidence),
            one_line(&e.peer.to_string()).into_owned(),
            time(&e.received_at),
        ]);
    }
    let mut out = table.render("");
    let _ = writeln!(
        out,
        "\n{} waiting; `ecp-node inbox show ID` reads one, `inbox accept ID` writes it to the skills folder, \
         `inbox reject ID` keeps it out",
        entries.len()
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn show(library: &Library, id: i64, json: bool) -> anyhow::Result<ExitCode> {
    let entry = match library.store().inbox_entry(id) {
        Ok(entry) => entry,
        Err(StoreError::NoSuchInboxEntry(_)) => bail!(no_entry(id)),
        Err(e) => return Err(e).context("cannot read the inbox"),
    };
    let Some((_, packet, _)) = library.store().skill(&entry.skill_name).context("cannot read the skill")?
    else {
        bail!(no_entry(id));
    };
    if json {
        emit_json(&json!({ "entry": entry, "packet": packet }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let _ =
        writeln!(out, "entry {id}: {} ({})", entry.skill_name, if entry.update { "update" } else { "new" });
    let _ = writeln!(out, "description: {}", one_line(&entry.description));
    let _ = writeln!(out, "origin: {}", one_line(&entry.origin));
    let _ = writeln!(out, "confidence: {:.2}", entry.confidence);
    let _ = writeln!(out, "provenance: {}", provenance(&packet));
    let _ =
        writeln!(out, "received: {} from {}", time(&entry.received_at), one_line(&entry.peer.to_string()));
    let _ = writeln!(out, "integrityHash: {}", entry.integrity_hash);
    out.push_str(&body_block(&packet.skill_body));
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Decides one entry, or with `--all` every waiting one: through the
/// server running on the data folder when there is one (its projection
/// writes the file), else on the store.
fn decide(
    library: &Library,
    target: &Target,
    pick: &InboxPick,
    verdict: Verdict,
) -> anyhow::Result<ExitCode> {
    let decided: Vec<(i64, String)> = match target {
        Target::Store(library) => match pick.id {
            Some(id) => match library.inbox_decide(id, verdict) {
                Ok(entry) => vec![(entry.id, entry.skill_name)],
                Err(StoreError::NoSuchInboxEntry(_)) => bail!(no_entry(id)),
                Err(e) => return Err(e).context("cannot record the decision"),
            },
            None => library
                .inbox_decide_all(verdict)
                .context("cannot record the decisions")?
                .into_iter()
                .map(|e| (e.id, e.skill_name))
                .collect(),
        },
        Target::Server(server) => {
            let ids = match pick.id {
                Some(id) => vec![id],
                None => {
                    library.store().inbox().context("cannot read the inbox")?.iter().map(|e| e.id).collect()
                }
            };
            let mut decided = Vec::new();
            for id in ids {
                match server.inbox_decide(id, verdict)? {
                    Ok(name) => decided.push((id, name)),
                    Err(refusal) if refusal.code == "no_such_inbox_entry" => bail!(no_entry(id)),
                    Err(refusal) => return Err(refusal.into()),
                }
            }
            decided
        }
    };
    let mut out = String::new();
    for (id, name) in &decided {
        let _ = writeln!(out, "{} entry {id}: {}", done(verdict), describe(name, verdict));
    }
    if decided.is_empty() {
        out.push_str("the inbox is empty; nothing to decide\n");
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn done(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Accepted => "accepted",
        Verdict::Rejected => "rejected",
    }
}

fn describe(name: &str, verdict: Verdict) -> String {
    match verdict {
        Verdict::Accepted => format!("{name} is now in the skills folder"),
        Verdict::Rejected => {
            format!("{name} stays out of the skills folder; this version is not offered again")
        }
    }
}

fn no_entry(id: i64) -> String {
    format!("no waiting inbox entry with id {id}; `ecp-node inbox list` shows the waiting ones")
}
