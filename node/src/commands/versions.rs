//! `ecp-node skill history | pin | unpin | rollback | revoke` (#25 items 1–2, 4).
//! History reads the store; the others are writes, sent to the server
//! running on the data folder when there is one, else done through
//! [`ecp_node::versions`] on the store.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::library::Library;
use ecp_node::store::Pick;
use ecp_node::versions::{self, Done, VersionError};
use serde_json::json;

use super::Target;
use super::output::{Table, emit, emit_json, time};

/// `skill history NAME [--json]`.
pub(crate) fn history(library: &Library, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let entries = match versions::history(library, name) {
        Ok(entries) => entries,
        Err(e @ VersionError::NoSuchSkill(_)) => bail!(e),
        Err(e) => return Err(e).context("cannot read the store"),
    };
    if json {
        emit_json(&json!({ "name": name, "versions": entries }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table =
        Table::new(&["VERSION", "DIGEST", "ORIGIN", "RECORDED", "ARRIVED", "CONFIDENCE", "STATE"]);
    for e in &entries {
        let mut state = Vec::new();
        if e.current {
            state.push("current");
        }
        if e.pinned {
            state.push("pinned");
        }
        if e.locked {
            state.push("locked");
        }
        if e.deprecated {
            state.push("tombstone");
        }
        if e.revoked.is_some() {
            state.push("revoked");
        }
        table.row(vec![
            e.version.to_string(),
            e.digest.clone(),
            e.origin.clone(),
            time(&e.recorded_at),
            e.source.clone(),
            format!("{:.2}", e.confidence),
            state.join(","),
        ]);
    }
    let mut out = table.render("");
    for e in entries.iter().filter(|e| e.revoked.is_some()) {
        let _ = writeln!(
            out,
            "version {} revoked by its origin: {}",
            e.version,
            e.revoked.as_deref().unwrap_or_default()
        );
    }
    if let Some(pinned) = entries.iter().find(|e| e.pinned)
        && let Some(current) = entries.iter().find(|e| e.current && !e.pinned)
    {
        let _ = writeln!(
            out,
            "pinned at version {}; version {} is available (`ecp-node skill unpin {name}` takes it)",
            pinned.version, current.version
        );
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `skill pin | unpin | rollback NAME [--to VERSION|DIGEST]`.
pub(crate) fn act(target: &Target, name: &str, action: &str, to: Option<&str>) -> anyhow::Result<ExitCode> {
    let pick = to.map(Pick::parse).transpose().map_err(anyhow::Error::msg)?;
    let done = match target {
        Target::Server(server) => server.version_action(name, action, to)?.map_err(anyhow::Error::from)?,
        Target::Store(library) => {
            let done = match action {
                "pin" => versions::pin(library, name, pick.as_ref()),
                "unpin" => versions::unpin(library, name),
                _ => versions::rollback(library, name, pick.as_ref()),
            };
            done.map_err(|e| match e {
                VersionError::Store(e) => anyhow::Error::new(e).context("cannot change the skill's version"),
                e => anyhow::anyhow!(e),
            })?
        }
    };
    emit(&describe(&done))?;
    Ok(ExitCode::SUCCESS)
}

/// `skill revoke NAME --version V --reason TEXT`.
pub(crate) fn revoke(target: &Target, name: &str, version: &str, reason: &str) -> anyhow::Result<ExitCode> {
    let pick = Pick::parse(version).map_err(anyhow::Error::msg)?;
    let done = match target {
        Target::Server(server) => server.revoke(name, version, reason)?.map_err(anyhow::Error::from)?,
        Target::Store(library) => versions::revoke(library, name, &pick, reason).map_err(|e| match e {
            VersionError::Store(e) => anyhow::Error::new(e).context("cannot revoke the version"),
            e => anyhow::anyhow!(e),
        })?,
    };
    emit(&describe(&done))?;
    Ok(ExitCode::SUCCESS)
}

/// One line saying what was done.
fn describe(done: &Done) -> String {
    let Done { name, version, digest, available, .. } = done;
    let available = available
        .map(|v| format!("; version {v} is available (`ecp-node skill unpin {name}` takes it)"))
        .unwrap_or_default();
    match done.action.as_str() {
        "pinned" => format!("{name} pinned at version {version} ({digest}){available}\n"),
        "rolled-back" => {
            format!("{name} rolled back to version {version} ({digest}) and pinned{available}\n")
        }
        "published" => format!(
            "{name} rolled back: version {version} ({digest}) published with the earlier content; peers take it \
             on their next pull or push\n"
        ),
        "unpinned" => format!("{name} unpinned: the skills folder shows version {version} ({digest})\n"),
        "revoked" => format!(
            "{name}: the version is revoked; the skill shows version {version} ({digest}); peers take the \
             revocation on their next pull or push\n"
        ),
        "revoked-removed" => format!(
            "{name}: the version is revoked and no earlier one remains, so the skill is withdrawn; peers take \
             the revocation on their next pull or push\n"
        ),
        _ => format!("{name} was not pinned; it shows version {version} ({digest})\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_with_a_newer_version_says_it_is_available() {
        let done = Done {
            name: "a".into(),
            action: "pinned".into(),
            version: 2,
            digest: "d".into(),
            available: Some(3),
        };
        assert!(describe(&done).contains("version 3 is available"), "{}", describe(&done));
        let done = Done { available: None, ..done };
        assert!(!describe(&done).contains("available"));
    }
}
