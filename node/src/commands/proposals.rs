//! `ecp-node proposals list | show | diff | accept | reject` and `skill
//! fork`: the work is [`ecp_node::proposals`]'s, which the `/v1/proposals`
//! API shares. Reads come from the store; decisions go to the server
//! running on the data folder when there is one (its projection writes the
//! new version, its outbox answers the proposer), else to the store.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Flags;
use ecp_node::library::Library;
use ecp_node::proposals::{self, ProposalsError};
use serde_json::json;

use super::Target;
use super::output::{Table, body_block, emit, emit_json, one_line, time};
use crate::cli::{GlobalArgs, ProposalsCommand};

pub(crate) fn run(global: &GlobalArgs, command: ProposalsCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    match command {
        ProposalsCommand::List(flag) => list(&library, flag.json),
        ProposalsCommand::Show { id, json } => show(&library, &id, json.json),
        ProposalsCommand::Diff { id } => diff(&library, &id),
        ProposalsCommand::Accept { id, note } => {
            decide(&super::write_target(&config, global.init)?, &id, true, note.as_deref().unwrap_or(""))
        }
        ProposalsCommand::Reject { id, note } => {
            decide(&super::write_target(&config, global.init)?, &id, false, note.as_deref().unwrap_or(""))
        }
    }
}

fn list(library: &Library, json: bool) -> anyhow::Result<ExitCode> {
    let all = proposals::list(library).context("cannot read the proposals")?;
    if json {
        emit_json(&json!({ "proposals": all }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        emit("no proposals: an edit of a received skill in the skills folder is proposed to its origin\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "SKILL", "ROLE", "STATE", "ORIGIN", "PROPOSER", "UPDATED", "NOTE"]);
    for p in &all {
        table.row(vec![
            p.id.clone(),
            p.name.clone(),
            format!("{:?}", p.role).to_lowercase(),
            p.state.as_str().to_owned(),
            one_line(&p.derived_from.origin).into_owned(),
            one_line(&p.proposer).into_owned(),
            time(&p.updated_at),
            one_line(&p.note).into_owned(),
        ]);
    }
    let mut out = table.render("");
    let _ = writeln!(
        out,
        "\n`ecp-node proposals show ID` reads one, `proposals diff ID` compares it with the version it edits, \
         `proposals accept|reject ID [--note TEXT]` decides one for your skills"
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn view(library: &Library, id: &str) -> anyhow::Result<proposals::ProposalView> {
    match proposals::show(library, id) {
        Ok(view) => Ok(view),
        Err(e @ ProposalsError::NoSuchProposal(_)) => bail!(e),
        Err(e) => Err(e).context("cannot read the proposal"),
    }
}

fn show(library: &Library, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let view = view(library, id)?;
    if json {
        emit_json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    let p = &view.proposal;
    let mut out = String::new();
    let _ = writeln!(out, "proposal {}: {} ({:?}, {})", p.id, p.name, p.role, p.state.as_str());
    let _ = writeln!(
        out,
        "derives from: {}'s version {}",
        one_line(&p.derived_from.origin),
        p.derived_from.integrity_hash
    );
    let _ = writeln!(out, "proposer: {}", one_line(&p.proposer));
    let _ = writeln!(out, "integrityHash: {}", p.hash);
    if let Some(hop) = &p.next_hop {
        let _ = writeln!(out, "sent to: {}", one_line(hop));
    }
    if !p.note.is_empty() {
        let _ = writeln!(out, "note: {}", one_line(&p.note));
    }
    if !p.published_hash.is_empty() {
        let _ = writeln!(out, "published as: {}", p.published_hash);
    }
    let _ = writeln!(
        out,
        "copies received: {}; first {}; last change {}",
        p.copies,
        time(&p.created_at),
        time(&p.updated_at)
    );
    out.push_str(&body_block(&view.body));
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn diff(library: &Library, id: &str) -> anyhow::Result<ExitCode> {
    let view = view(library, id)?;
    let Some(base) = &view.base_body else {
        bail!(
            "this node no longer keeps the version proposal {id} edits ({}); `proposals show {id}` prints the \
             proposed text",
            view.proposal.derived_from.integrity_hash
        );
    };
    let mut out = format!(
        "--- {} (version {})\n+++ proposal {id}\n",
        view.proposal.name,
        &view.proposal.derived_from.integrity_hash[..12]
    );
    out.push_str(&line_diff(base, &view.body));
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `old` against `new`, line by line: ` ` kept, `-` removed, `+` added
/// (a longest common subsequence; skills are small).
fn line_diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, "  {}", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "- {}", a[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "+ {}", b[j]);
            j += 1;
        }
    }
    out
}

fn decide(target: &Target, id: &str, accept: bool, note: &str) -> anyhow::Result<ExitCode> {
    let (state, published) = match target {
        Target::Server(server) => match server.proposal_decide(id, accept, note)? {
            Ok(p) => (
                p["state"].as_str().unwrap_or_default().to_owned(),
                p["publishedHash"].as_str().unwrap_or_default().to_owned(),
            ),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => {
            let decided = if accept {
                proposals::accept(library, id, note)
            } else {
                proposals::reject(library, id, note)
            };
            match decided {
                Ok(p) => (p.state.as_str().to_owned(), p.published_hash),
                Err(
                    e @ (ProposalsError::NoSuchProposal(_)
                    | ProposalsError::NotIncoming(_)
                    | ProposalsError::Decided { .. }),
                ) => bail!(e),
                Err(e) => return Err(e).context("cannot record the decision"),
            }
        }
    };
    let line = if accept {
        format!("proposal {id} {state}: published as version {published}; peers take it as any update\n")
    } else {
        format!("proposal {id} {state}; the proposer reads the state and note when it next asks\n")
    };
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

/// `skill fork NAME NEW-NAME`.
pub(crate) fn fork(target: &Target, name: &str, new_name: &str) -> anyhow::Result<ExitCode> {
    let hash = match target {
        Target::Server(server) => match server.fork(name, new_name)? {
            Ok(done) => done["integrityHash"].as_str().unwrap_or_default().to_owned(),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match proposals::fork(library, name, new_name) {
            Ok(packet) => packet.integrity_hash,
            Err(
                e @ (ProposalsError::NoDerived(_)
                | ProposalsError::BadName { .. }
                | ProposalsError::Invalid(_)),
            ) => bail!(e),
            Err(e) => return Err(e).context("cannot publish the fork"),
        },
    };
    emit(&format!(
        "published your version of {name} as {new_name} ({}), a skill of this node; {name} is the origin's version again\n",
        &hash[..hash.len().min(12)]
    ))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_diff_marks_kept_removed_and_added_lines() {
        assert_eq!(super::line_diff("a\nb\nc\n", "a\nB\nc\nd\n"), "  a\n- b\n+ B\n  c\n+ d\n");
        assert_eq!(super::line_diff("", "x\n"), "+ x\n");
    }
}
