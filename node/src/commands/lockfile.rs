//! `ecp-node lock`, `install` and `verify` (#25 item 3): the lockfile of
//! the skills folder ([`ecp_node::lockfile`]), installing one — versions
//! from the store, else fetched by digest from the peers of `--peers`
//! through the merge's checks, then pinned (a received skill) or published
//! again (this node's own) through the running server's `/v1/` API when
//! one runs — and the folder's drift.
//!
//! `--agent NAME` picks one agent's folder (`[[agent]]`, #24); without it,
//! the only agent's when there is one, else the skills folder (several
//! agents: `--agent` is required).

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use ecp_node::agents::Agent;
use ecp_node::config::{Config, Flags};
use ecp_node::federation::{self, PeerSpec};
use ecp_node::library::Library;
use ecp_node::lockfile::{self, Drift, Lockfile, MAX_LOCKFILE_BYTES};
use ecp_node::store::{Pick, digest_of};
use serde_json::json;

use super::output::{emit, emit_json, one_line, tell};
use super::{Target, api};
use crate::cli::{GlobalArgs, InstallArgs, LockArgs, VerifyArgs};

/// `lock [--out ecp.lock]`: writes the lockfile of the skills folder and
/// records its versions as locked (history pruning keeps them).
pub(crate) fn lock(global: &GlobalArgs, args: &LockArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let library = super::open_library(&config, global.init)?;
    let agent = pick_agent(&config, args.agent.as_deref())?;
    let lock = Lockfile::of(&library, agent).context("cannot read the store")?;
    write_atomically(&args.out, lock.to_toml().as_bytes())?;
    library.store().set_locks(&lock.holds(&library)?).context("cannot record the locked versions")?;
    emit(&format!("locked {} skill(s) in {}\n", lock.skills.len(), args.out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The folder `--agent NAME` names; without it the only agent's, else
/// none (the skills folder). Several agents and no `--agent` is an error.
fn pick_agent<'a>(config: &'a Config, name: Option<&str>) -> anyhow::Result<Option<&'a Agent>> {
    match (name, config.agents.as_slice()) {
        (Some(name), _) => super::agents::find(config, name).map(Some),
        (None, []) => Ok(None),
        (None, [only]) => Ok(Some(only)),
        (None, several) => {
            let names: Vec<&str> = several.iter().map(|a| a.name.as_str()).collect();
            anyhow::bail!(
                "the node fills several agents' folders; name one with --agent NAME ({})",
                names.join(", ")
            )
        }
    }
}

/// Writes `path` through a temporary sibling renamed over it: a reader never
/// sees half a lockfile.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads and checks the lockfile at `path`.
fn read_lockfile(path: &Path) -> anyhow::Result<Lockfile> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read the lockfile {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_LOCKFILE_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the lockfile {}", path.display()))?;
    if text.len() as u64 > MAX_LOCKFILE_BYTES {
        anyhow::bail!(
            "the lockfile {} is over {MAX_LOCKFILE_BYTES} bytes; is it a lockfile?",
            path.display()
        );
    }
    Lockfile::parse(&text).with_context(|| format!("cannot use the lockfile {}", path.display()))
}

/// Prints `drifts` (one line each, or JSON); exit 0 when there are none, else 1.
fn report(drifts: &[Drift], json: bool, clean: &str) -> anyhow::Result<ExitCode> {
    if json {
        emit_json(&json!({ "clean": drifts.is_empty(), "drift": drifts }))?;
    } else if drifts.is_empty() {
        emit(&format!("{clean}\n"))?;
    } else {
        let mut out = String::new();
        for d in drifts {
            let _ = writeln!(out, "{}", one_line(&d.to_string()));
        }
        emit(&out)?;
    }
    Ok(if drifts.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `verify [--locked FILE] [--json]`: exit 0 clean, 1 drift, 2 error.
pub(crate) fn verify(global: &GlobalArgs, args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let lock = args.locked.as_deref().map(read_lockfile).transpose()?;
    let library = super::open_library(&config, global.init)?;
    let agent = pick_agent(&config, args.agent.as_deref())?;
    let drifts = lockfile::drift(&library, agent, lock.as_ref()).context("cannot read the store")?;
    report(&drifts, args.json.json, "the skills folder holds what the node would write: no drift")
}

/// `install --locked FILE [--frozen]`.
pub(crate) fn install(global: &GlobalArgs, args: &InstallArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let lock = read_lockfile(&args.locked)?;
    let library = super::open_library(&config, global.init)?;
    let agent = pick_agent(&config, args.agent.as_deref())?;
    if args.frozen {
        let drifts = lockfile::drift(&library, agent, Some(&lock)).context("cannot read the store")?;
        let clean = format!("the skills folder holds exactly {}", args.locked.display());
        return report(&drifts, false, &clean);
    }
    let target = match api::running(&config)? {
        Some(server) => Target::Server(server),
        None => Target::Store(library.clone()),
    };
    let peers = super::federation::peers_file(&config)?;
    let ctx = super::federation::context(&config, library.clone(), peers.as_ref())?;
    let specs: Vec<PeerSpec> =
        peers.iter().flat_map(|file| file.peers.iter().map(|p| PeerSpec::configured(file, p))).collect();
    let runtime = super::federation::runtime()?;
    let mut refused = Vec::new();
    let mut out = String::new();
    for locked in &lock.skills {
        let pick = Pick::Digest(locked.digest.clone());
        let mut why = "not held here, and no peer of --peers serves it".to_owned();
        let mut held = library.store().version_packet(&locked.name, &pick)?;
        for spec in &specs {
            if held.is_some() {
                break;
            }
            match runtime.block_on(federation::fetch_version(&ctx, spec, &locked.name, &locked.digest)) {
                Ok(Some(result)) => {
                    held = library.store().version_packet(&locked.name, &pick)?;
                    if held.is_none() {
                        let reasons = result.conflicts.join("; ");
                        why = format!(
                            "{} refused it: {}",
                            spec.url,
                            if reasons.is_empty() { "not installed".into() } else { reasons }
                        );
                    }
                }
                Ok(None) => {}
                Err(e) => tell(format_args!("ecp-node: {}: cannot fetch {}: {e}", spec.url, locked.name)),
            }
        }
        if held.is_none() {
            refused.push(format!("{}: {}", locked.name, one_line(&why)));
            continue;
        }
        let Some((record, current, _)) = library.store().skill(&locked.name)? else { continue };
        let action = if record.kind == "local" {
            // This node's own skill: its versions are edits; an earlier one is published again.
            (digest_of(&current) != locked.digest).then_some("rollback")
        } else {
            Some("pin")
        };
        if let Some(action) = action {
            match act(&target, &locked.name, action, &locked.digest) {
                Ok(()) => {}
                Err(e) => {
                    refused.push(format!("{}: {}", locked.name, one_line(&format!("{e:#}"))));
                    continue;
                }
            }
        }
        let _ = writeln!(out, "installed {} {}", locked.name, locked.digest);
    }
    library.store().set_locks(&lock.holds(&library)?).context("cannot record the locked versions")?;
    for extra in
        lockfile::drift(&library, agent, Some(&lock))?.iter().filter(|d| matches!(d, Drift::Extra { .. }))
    {
        let _ = writeln!(
            out,
            "note: {} — left as it is (`ecp-node skill rm` removes a skill)",
            one_line(&extra.to_string())
        );
    }
    emit(&out)?;
    if refused.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for line in &refused {
        tell(format_args!("ecp-node: not installed: {line}"));
    }
    tell(format_args!("ecp-node: {} of {} locked skill(s) not installed", refused.len(), lock.skills.len()));
    Ok(ExitCode::from(1))
}

/// Pins (or rolls back) `name` to `digest`, through the server when one runs.
fn act(target: &Target, name: &str, action: &str, digest: &str) -> anyhow::Result<()> {
    let pick = Pick::Digest(digest.to_owned());
    match target {
        Target::Server(server) => {
            server.version_action(name, action, Some(digest))?.map_err(anyhow::Error::from)?;
        }
        Target::Store(library) => {
            store_act(library, name, action, &pick)?;
        }
    }
    Ok(())
}

fn store_act(library: &Library, name: &str, action: &str, pick: &Pick) -> anyhow::Result<()> {
    let done = match action {
        "pin" => ecp_node::versions::pin(library, name, Some(pick)),
        _ => ecp_node::versions::rollback(library, name, Some(pick)),
    };
    done.map(|_| ()).map_err(anyhow::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lockfile_is_read_up_to_its_size_limit_and_refused_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ecp.lock");
        let head = "version = 1\n#";
        let at_limit = format!("{head}{}", "x".repeat(MAX_LOCKFILE_BYTES as usize - head.len()));
        std::fs::write(&path, &at_limit).unwrap();
        assert!(read_lockfile(&path).is_ok_and(|l| l.skills.is_empty()));
        std::fs::write(&path, at_limit + "x").unwrap();
        let e = format!("{:#}", read_lockfile(&path).expect_err("one byte over"));
        assert!(e.contains("over 1048576 bytes"), "{e}");
    }
}
