//! `ecp-node archive export | import` (#25 item 5): offline archives
//! ([`ecp_node::archive`]) for machines with no network path to the mesh.
//! Import reads the file under its size limit and checks all of it before
//! it changes anything; its skills are merged into the store as an update
//! from the exporter (the server running on the data folder, if any, sees
//! the change as it sees the CLI's other writes).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use ecp_node::archive::{self, DEFAULT_LIMITS};
use ecp_node::config::Flags;
use ecp_node::federation::PeerSpec;

use super::output::{emit, tell};
use crate::cli::{ArchiveCommand, GlobalArgs};

/// Runs one `archive` subcommand.
pub(crate) fn run(global: &GlobalArgs, command: ArchiveCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    match command {
        ArchiveCommand::Export { names, out } => {
            let library = super::open_library(&config, global.init)?;
            let written = archive::export(&library, &names)?;
            let bytes = serde_json::to_vec(&written).context("cannot write the archive")?;
            super::lockfile::write_atomically(&out, &bytes)?;
            emit(&format!(
                "exported {} skill(s) to {}, signed by {} (key {})\n",
                written.entries.len(),
                out.display(),
                written.exporter.instance,
                written.exporter.key_id
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        ArchiveCommand::Import { file, trust } => {
            if let Some(t) = trust
                && !(0.0..=1.0).contains(&t)
            {
                bail!("--trust {t} is not a trust: give a number from 0 to 1");
            }
            let bytes = read(&file)?;
            let checked = archive::check(&bytes, DEFAULT_LIMITS)?;
            let library = super::open_library(&config, global.init)?;
            let peers = super::federation::peers_file(&config)?;
            let configured: HashMap<String, f64> = peers
                .iter()
                .flat_map(|f| f.peers.iter().map(|p| PeerSpec::configured(f, p)))
                .filter_map(|spec| Some((spec.instance?, spec.trust)))
                .collect();
            let fallback = trust.unwrap_or(config.default_trust);
            let trust = archive::exporter_trust(&library, &checked.exporter, &configured, fallback)?;
            let (instance, key) = (checked.exporter.instance.clone(), checked.exporter.key_id.clone());
            let result = archive::import(&library, checked, trust, config.reshare_external, &config.policy)?;
            let mut out = format!(
                "imported from {instance} (key {key}) with trust {trust}: {} new, {} updated, {} unchanged, {} \
                 refused\n",
                result.new_skills, result.updated_skills, result.unchanged, result.rejected_skills
            );
            for line in &result.conflicts {
                let _ = writeln!(out, "  {line}");
            }
            emit(&out)?;
            if result.rejected_skills > 0 {
                tell(format_args!("ecp-node: {} skill(s) of the archive refused", result.rejected_skills));
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The archive's bytes, refused unread when it is over its limit.
fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read the archive {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(DEFAULT_LIMITS.archive_bytes + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the archive {}", path.display()))?;
    Ok(bytes)
}
