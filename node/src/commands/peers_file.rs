//! `ecp-node peers add URL [--trust T] [--push]` and `peers rm URL`: edits
//! of the peers file (--peers). The new text must load as the node would
//! load it before it replaces the file (written beside it, then renamed
//! over it), so an edit never leaves a broken file; a running server sees
//! the change and reloads the peers as on any edit.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use ecp_node::config::{Flags, PeersConfig, add_peer, normalise_url, remove_peer, unit};

use super::tell;
use crate::cli::{GlobalArgs, PeersCommand};

pub(crate) fn run(global: &GlobalArgs, command: PeersCommand) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let Some(path) = config.peers_file.as_deref() else {
        bail!("no peers file to edit: pass --peers FILE (or set ECP_PEERS, or peers in node.toml)");
    };
    let name = path.display().to_string();
    match command {
        PeersCommand::Add { url, trust, push } => {
            let url = normalise_url(&url).map_err(|e| anyhow::anyhow!("URL: {e}"))?;
            if let Some(trust) = trust {
                unit(trust).map_err(|e| anyhow::anyhow!("--trust: {e}"))?;
            }
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => bail!("cannot read peers file {name}: {e}"),
            };
            let now = PeersConfig::parse(&text, &name)?;
            if now.peers.iter().any(|p| p.url == url) {
                bail!("{url} is already a peer in {name}; `ecp-node peers rm {url}` first to change it");
            }
            replace(path, &add_peer(&text, &url, trust, push))?;
            tell(format_args!("ecp-node: added peer {url} to {name}"));
        }
        PeersCommand::Rm { url } => {
            let url = normalise_url(&url).map_err(|e| anyhow::anyhow!("URL: {e}"))?;
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read peers file {name}"))?;
            let now = PeersConfig::parse(&text, &name)?;
            if !now.peers.iter().any(|p| p.url == url) {
                bail!("{url} is not a peer in {name}; `ecp-node peers` lists the peers");
            }
            let Some(new) = remove_peer(&text, &url) else {
                bail!("{url} is not written as a [[peer]] table in {name}: remove it by hand");
            };
            replace(path, &new)?;
            tell(format_args!("ecp-node: removed peer {url} from {name}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks `text` as a peers file, then puts it in place of `path` at once.
fn replace(path: &Path, text: &str) -> anyhow::Result<()> {
    let name = path.display().to_string();
    PeersConfig::parse(text, &name).context("the edited peers file would not load; it was left as it was")?;
    let mut temp = path.as_os_str().to_owned();
    temp.push(".ecp-edit");
    let temp = std::path::PathBuf::from(temp);
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).or_else(|e| {
        let _ = std::fs::remove_file(&temp);
        Err(e).with_context(|| format!("cannot replace peers file {name}"))
    })
}
