//! `ecp-node deletions list | accept [ID] | reject [ID]`: the deletions the
//! deletion guard held ([`ecp_node::deletion_guard`]). The decisions are the
//! library's, which `/v1/deletions` shares: they go to the server running on
//! the data folder when there is one, else to the store.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Flags;
use ecp_node::library::Library;
use ecp_node::store::StoreError;
use ecp_protocol::StandardPolicy;
use serde_json::json;

use super::Target;
use super::output::{Table, emit, emit_json, time};
use crate::cli::{DeletionsCommand, GlobalArgs};

pub(crate) fn run(global: &GlobalArgs, command: DeletionsCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    match command {
        DeletionsCommand::List(flag) => list(&library, flag.json),
        DeletionsCommand::Accept { id } => {
            decide(&library, &super::write_target(&config, global.init)?, &config.policy, id, true)
        }
        DeletionsCommand::Reject { id } => {
            decide(&library, &super::write_target(&config, global.init)?, &config.policy, id, false)
        }
    }
}

fn list(library: &Library, json: bool) -> anyhow::Result<ExitCode> {
    let held = library.store().held_deletions().context("cannot read the held deletions")?;
    if json {
        emit_json(&json!({ "deletions": held }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if held.is_empty() {
        emit("no deletion is held\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "SKILLS", "FROM", "HELD", "NAMES"]);
    for d in &held {
        table.row(vec![
            d.id.to_string(),
            d.names.len().to_string(),
            d.via.as_ref().map_or_else(|| d.source.to_string(), |via| format!("{} via {via}", d.source)),
            time(&d.held_at),
            d.names.join(", "),
        ]);
    }
    let mut out = table.render("");
    let _ = writeln!(
        out,
        "\n{} held; `ecp-node deletions accept ID` tombstones the skills (peers learn of it), \
         `deletions reject ID` keeps them (and writes back the files of the skills folder's)",
        held.len()
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Accepts or rejects deletion `id` (or the only one held): through the
/// server running on the data folder when there is one, else on the store.
fn decide(
    library: &Library,
    target: &Target,
    policy: &StandardPolicy,
    id: Option<i64>,
    accept: bool,
) -> anyhow::Result<ExitCode> {
    let id = match id {
        Some(id) => id,
        None => {
            let held = library.store().held_deletions().context("cannot read the held deletions")?;
            match held.as_slice() {
                [] => bail!("no deletion is held; nothing to decide"),
                [one] => one.id,
                many => bail!(
                    "{} deletions are held ({}); name one: `ecp-node deletions list` shows them",
                    many.len(),
                    many.iter().map(|d| d.id.to_string()).collect::<Vec<_>>().join(", ")
                ),
            }
        }
    };
    let done = match target {
        Target::Store(library) => {
            let released =
                if accept { library.accept_deletion(id, policy) } else { library.reject_deletion(id) };
            match released {
                Ok(released) => released.done,
                Err(StoreError::NoSuchDeletion(_)) => bail!(no_deletion(id)),
                Err(e) => return Err(e).context("cannot record the decision"),
            }
        }
        Target::Server(server) => match server.deletion_decide(id, accept)? {
            Ok(done) => done,
            Err(refusal) if refusal.code == "no_such_deletion" => bail!(no_deletion(id)),
            Err(refusal) => return Err(refusal.into()),
        },
    };
    let what = if accept { "tombstoned" } else { "kept" };
    let verdict = if accept { "accepted" } else { "rejected" };
    emit(&format!("{verdict} deletion {id}: {} skill(s) {what}: {}\n", done.len(), done.join(", ")))?;
    Ok(ExitCode::SUCCESS)
}

fn no_deletion(id: i64) -> String {
    format!("no held deletion with id {id}; `ecp-node deletions list` shows the held ones")
}
