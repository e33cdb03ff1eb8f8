//! One exact version of a skill fetched from a peer by its digest (`GET
//! /ecp/skills/{name}?digest=HEX`, `SPEC.md` §5.7) and merged like a page
//! of a pull — the same checks, the peer's trust, its bundle's files
//! fetched first — for `ecp-node install` of a lockfile (#25).

use ecp_protocol::MergeResult;

use super::client::ClientError;
use super::{Context, PeerSpec, SyncError};

/// Asks `peer` for the version of `name` whose digest is `digest` and
/// merges it: `None` when the peer serves no such version, else the merge's
/// result (which says whether it was installed, and why not). The caller
/// checks the digest of what was installed.
pub async fn fetch_version(
    ctx: &Context,
    peer: &PeerSpec,
    name: &str,
    digest: &str,
) -> Result<Option<MergeResult>, SyncError> {
    ecp_protocol::skill_doc::validate_name(name)
        .map_err(|e| SyncError::Protocol(format!("invalid skill name {name:?}: {e}")))?;
    let client = ctx.client(peer)?;
    let manifest = match client.manifest(None).await? {
        super::client::Fetched::Fresh { value, .. } => value,
        super::client::Fetched::NotModified => {
            return Err(ClientError::Decode("304 to a request without a tag".into()).into());
        }
    };
    let instance = ctx.check_instance(peer, &manifest.instance)?;
    if !manifest.profiles.iter().any(|p| p == ecp_protocol::wire::PROFILE_VERSIONS) {
        // A node that does not serve exact versions (a Go node) is not asked.
        return Ok(None);
    }
    let Some(body) = client.skill_version(name, digest).await? else { return Ok(None) };
    let blobs = super::bundles::supports_bundles(&manifest).then_some(&client);
    let sender = super::pull::sender(ctx, peer, &instance);
    let page = super::pull::merge_page(ctx, sender, body, blobs).await?;
    if !page.held_back.is_empty() {
        return Err(SyncError::Protocol(format!(
            "{name} is over the per-origin or per-sender limits now; install again later"
        )));
    }
    Ok(Some(page.result))
}
