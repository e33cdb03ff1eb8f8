//! `ecp-node skill add | list | show | search | rm | private | share | outcome | restore | scan`
//! (`history`, `pin`, `unpin` and `rollback` are [`super::versions`]).
//!
//! Writes (`add`, `rm`) go to the server running on the data folder when
//! there is one (its `/v1/` API: its next answer shows the change), else
//! through [`ecp_node::operator`] to the store. `add` of a folder takes
//! each skill folder whole, as a bundle: to a server, the files it lacks
//! are uploaded before the skill lists them. `scan` reads files only: it
//! needs no data folder.
//!
//! # Layout
//!
//! `add` adds skills; `show` reads them (`list`, `show`, `search`); `scan`
//! scans files. The writes that decide a skill's fate (`rm`, `private`,
//! `share`, `outcome`, `restore`) are here, beside the dispatch.

use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::{Config, Flags};
use ecp_node::operator;
use ecp_node::outcomes::{self, OutcomeError, ReportBody};
use ecp_node::projection::SKILL_FILE;
use ecp_node::sharing::Decision;
use ecp_node::store::StoreError;

use super::Target;
use super::output::{emit, emit_json, one_line, tell};
use crate::cli::{GlobalArgs, SkillCommand};

mod add;
mod scan;
mod show;

use add::add;
use scan::scan;
use show::{list, search, show, show_files};

pub(crate) fn run(global: &GlobalArgs, command: SkillCommand) -> anyhow::Result<ExitCode> {
    if let SkillCommand::Scan { path, json } = command {
        return scan(&path, json.json);
    }
    let config = super::resolve(global, Flags::default())?;
    match command {
        SkillCommand::Add { path } => add(&config, &path, global.init),
        SkillCommand::List(flag) => list(&super::open_library(&config, global.init)?, flag.json),
        SkillCommand::Show { name, files: true, json, .. } => {
            show_files(&super::open_library(&config, global.init)?, &name, json.json)
        }
        SkillCommand::Show { name, json, mesh, .. } => {
            show(&super::open_library(&config, global.init)?, &name, mesh, json.json)
        }
        SkillCommand::Search { query, limit, json } => {
            search(&super::open_library(&config, global.init)?, &query, limit, json.json)
        }
        SkillCommand::Rm { name } => rm(&super::write_target(&config, global.init)?, &name),
        SkillCommand::Private { name } => private(&super::write_target(&config, global.init)?, &name),
        SkillCommand::Share { name, allow_secrets } => {
            share(&super::write_target(&config, global.init)?, &name, allow_secrets)
        }
        SkillCommand::Outcome { name, outcome, note, id, json } => {
            let body = ReportBody { outcome, note, at: Some(chrono::Utc::now().to_rfc3339()), id };
            report_outcome(&config, &super::write_target(&config, global.init)?, &name, body, json.json)
        }
        SkillCommand::Fork { name, new_name } => {
            super::proposals::fork(&super::write_target(&config, global.init)?, &name, &new_name)
        }
        SkillCommand::Restore { name } => {
            restore(&config, &super::write_target(&config, global.init)?, &name)
        }
        SkillCommand::History { name, json } => {
            super::versions::history(&super::open_library(&config, global.init)?, &name, json.json)
        }
        SkillCommand::Pin { name, to } => {
            super::versions::act(&super::write_target(&config, global.init)?, &name, "pin", to.as_deref())
        }
        SkillCommand::Unpin { name } => {
            super::versions::act(&super::write_target(&config, global.init)?, &name, "unpin", None)
        }
        SkillCommand::Rollback { name, to } => super::versions::act(
            &super::write_target(&config, global.init)?,
            &name,
            "rollback",
            to.as_deref(),
        ),
        SkillCommand::Revoke { name, version, reason } => {
            super::versions::revoke(&super::write_target(&config, global.init)?, &name, &version, &reason)
        }
        SkillCommand::Scan { .. } => unreachable!("handled above"),
    }
}

/// Prints where a local skill now stands after `skill private|share`.
fn report_decision(name: &str, decision: &Decision) -> anyhow::Result<()> {
    match &decision.private {
        None => emit(&format!("{name} is shared: peers get it on their next pull or push\n")),
        Some(private) => emit(&format!("{name} stays on this node: {}\n", one_line(&private.reason))),
    }
}

fn private(target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let decision = match target {
        Target::Server(server) => server.make_private(name)?.map_err(|r| refused_decision(name, r))?,
        Target::Store(library) => library.make_private(name).map_err(|e| decision_error(name, e))?,
    };
    report_decision(name, &decision)?;
    Ok(ExitCode::SUCCESS)
}

/// `skill share`: exit 0 when the skill is now shared, 1 when something
/// else still keeps it home (the reason says what to do).
fn share(target: &Target, name: &str, allow_secrets: bool) -> anyhow::Result<ExitCode> {
    let decision = match target {
        Target::Server(server) => {
            server.share(name, allow_secrets)?.map_err(|r| refused_decision(name, r))?
        }
        Target::Store(library) => library.share(name, allow_secrets).map_err(|e| decision_error(name, e))?,
    };
    for finding in &decision.secrets {
        tell(format_args!(
            "ecp-node: {name}/{SKILL_FILE}:{}: secret ({})",
            finding.line,
            one_line(&finding.rule)
        ));
    }
    report_decision(name, &decision)?;
    Ok(if decision.private.is_none() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn decision_error(name: &str, e: StoreError) -> anyhow::Error {
    match e {
        StoreError::NoSuchSkill(_) => anyhow::anyhow!(no_active_skill(name)),
        e => anyhow::Error::new(e).context("cannot change the skill's sharing"),
    }
}

/// [`decision_error`], for the running server's refusal.
fn refused_decision(name: &str, refusal: super::Refusal) -> anyhow::Error {
    match refusal.code.as_str() {
        "no_such_skill" => anyhow::anyhow!(no_active_skill(name)),
        _ => refusal.into(),
    }
}

fn no_active_skill(name: &str) -> String {
    format!("no active skill named {name:?}; `ecp-node skill list` shows the names")
}

fn rm(target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let no_such = || format!("no skill named {name:?}; `ecp-node skill list` shows the names");
    let removed = match target {
        Target::Server(server) => match server.remove_skill(name)? {
            Ok(removed) => removed,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_such()),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match operator::remove_skill(library, name) {
            Ok(removed) => removed,
            Err(StoreError::NoSuchSkill(_)) => bail!(no_such()),
            Err(e) => return Err(e).context("cannot remove the skill"),
        },
    };
    let line = if !removed.removed {
        format!("{name} was already removed\n")
    } else if removed.local {
        format!(
            "removed {name}: version {} is a tombstone, and peers that pull it drop the skill\n",
            removed.version
        )
    } else {
        format!("removed {name} from this node (an external skill is withdrawn only here)\n")
    };
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

// ---- outcome, restore ----

fn report_outcome(
    config: &Config,
    target: &Target,
    name: &str,
    body: ReportBody,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let reported = match target {
        Target::Server(server) => match server.report_outcome(name, &body)? {
            Ok(reported) => reported,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_active_skill(name)),
            Err(refusal) if refusal.status < 500 => bail!("{}", refusal.message),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match outcomes::report(library, config.outcomes, name, body) {
            Ok(reported) => reported,
            Err(OutcomeError::Store(StoreError::NoSuchSkill(_))) => bail!(no_active_skill(name)),
            Err(OutcomeError::Store(e)) => return Err(e).context("cannot record the outcome"),
            Err(e) => bail!("{e}"),
        },
    };
    if json {
        emit_json(&reported)?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &reported.score;
    let mut line = format!(
        "{name}: {} uses, {} successes, {} failures, streak {}; confidence {:.2}{}\n",
        s.uses,
        s.successes,
        s.failures,
        s.streak,
        reported.confidence,
        if reported.duplicate { " (this report was counted before)" } else { "" }
    );
    if reported.retired {
        let reason = s.retired.as_ref().map_or("", |r| r.reason.as_str());
        line.push_str(&format!("{name} is retired: {}\n", one_line(reason)));
    }
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

fn restore(config: &Config, target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let restored = match target {
        Target::Server(server) => match server.restore(name)? {
            Ok(restored) => restored,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_active_skill(name)),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match outcomes::restore(library, config.reshare_external, name) {
            Ok(restored) => restored,
            Err(StoreError::NoSuchSkill(_)) => bail!(no_active_skill(name)),
            Err(e) => return Err(e).context("cannot restore the skill"),
        },
    };
    let line = if restored.restored {
        format!("restored {name}: back in the skills folder, shared as before\n")
    } else {
        format!("{name} is not retired; nothing to restore\n")
    };
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}
