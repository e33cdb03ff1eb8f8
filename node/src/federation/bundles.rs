//! Bundles between nodes (`SPEC.md` §12.8): the blobs a round moves
//! besides the packets.
//!
//! - A pull fetches, before it merges a page, the blobs of the page's
//!   bundles this node does not hold (`GET /ecp/blobs/{sha256}` from the
//!   peer the packets came from, [`FETCHES_IN_FLIGHT`] at a time within a
//!   budget of bytes), each checked against its name and kept
//!   under the store's cap on blobs (not the quota on uploads ahead of
//!   their packet: this node asked for them). A failed fetch fails the round before the
//!   page is merged: the cursor stays and the next round asks again —
//!   except a 404, a blob the peer does not serve: its bundle is merged as
//!   pending, recorded with its reason, so one such packet does not stop
//!   the peer's other skills. Every later round asks that peer again for
//!   the blobs its pending bundles lack ([`refetch_pending`]), whatever the
//!   cursor, and installs each bundle once all its files are held.
//! - A push asks the peer which of its bundles' blobs it lacks (`POST
//!   /ecp/blobs/missing`), uploads only those (`PUT`), then pushes the packets.
//! - A peer whose manifest does not list `ecp-1.3` (a Go node, an ECP/1.2
//!   node) is never asked for blobs, and is pushed the plain packets:
//!   without `files` and `bundleDigest`, so it serves no listing it cannot back.

use std::collections::BTreeMap;

use ecp_protocol::bundle::{BundleManifest, MAX_BLOBS_PER_QUERY, SKILL_MD};
use ecp_protocol::wire::PROFILE_ECP_1_3;
use ecp_protocol::{Manifest, SkillPacket};
use futures_util::StreamExt;
use tokio::sync::Semaphore;

use super::client::{ClientError, PeerClient};
use super::{Context, SyncError, blocking};
use crate::store::BlobLimits;

/// Whether a peer's manifest says it takes bundles and serves blobs.
pub(super) fn supports_bundles(manifest: &Manifest) -> bool {
    manifest.profiles.iter().any(|p| p == PROFILE_ECP_1_3)
}

/// Most blob requests in flight to one peer: enough that the round trips
/// and the file syncs of many small files overlap.
const FETCHES_IN_FLIGHT: usize = 8;

/// The blobs `packets` list (their bundles' files but `SKILL.md`), each
/// once, with their listed sizes: only of bundles whose listing keeps the
/// rules (a refused one needs none) and of packets that are no tombstones.
fn blobs_of<'a>(ctx: &Context, packets: impl IntoIterator<Item = &'a SkillPacket>) -> BTreeMap<String, u64> {
    let limits = ctx.policy.bundle.clone();
    packets
        .into_iter()
        .filter(|p| !p.deprecated)
        .filter_map(|p| BundleManifest::from_packet(p, &limits).ok().flatten())
        .flat_map(|m| {
            m.files()
                .iter()
                .filter(|f| f.path != SKILL_MD)
                .map(|f| (f.sha256.clone(), f.size))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `bytes` in the budget's units (KiB, at least 1).
fn kib(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX).max(1)
}

/// Fetches from `client` the blobs of `packets` this node lacks, kept as
/// `account`'s; returns how many were fetched.
///
/// Several at a time ([`FETCHES_IN_FLIGHT`]), their listed sizes together
/// within one largest file (the per-file limit): a pull holds no more blob
/// bytes in memory than one blob at a time did.
pub(super) async fn fetch_missing(
    ctx: &Context,
    client: &PeerClient,
    account: &str,
    packets: &[SkillPacket],
) -> Result<usize, SyncError> {
    let wanted = blobs_of(ctx, packets);
    if wanted.is_empty() {
        return Ok(0);
    }
    let (library, ids) = (ctx.library.clone(), wanted.keys().cloned().collect::<Vec<_>>());
    let missing: Vec<String> = blocking(move || {
        library.store().missing_blobs(&ids).map(|m| m.into_iter().map(str::to_owned).collect::<Vec<_>>())
    })
    .await?;
    let limit = ctx.policy.bundle.max_file_bytes;
    let budget = Semaphore::new(kib(limit) as usize);
    let mut fetches = futures_util::stream::iter(missing)
        .map(|sha256| {
            let room = kib(wanted.get(&sha256).copied().unwrap_or(limit)).min(kib(limit));
            fetch_one(ctx, client, account, sha256, (&budget, room))
        })
        .buffer_unordered(FETCHES_IN_FLIGHT);
    let mut fetched = 0;
    while let Some(stored) = fetches.next().await {
        // The first failure fails the round; the fetches in flight are dropped.
        fetched += usize::from(stored?);
    }
    Ok(fetched)
}

/// Fetches blob `sha256` from `client` once the budget has its room, and
/// stores it as `account`'s: false when the peer does not serve it.
async fn fetch_one(
    ctx: &Context,
    client: &PeerClient,
    account: &str,
    sha256: String,
    (budget, room): (&Semaphore, u32),
) -> Result<bool, SyncError> {
    let _room = budget.acquire_many(room).await.map_err(|e| SyncError::Internal(e.to_string()))?;
    let bytes = match client.blob(&sha256, ctx.policy.bundle.max_file_bytes).await {
        Ok(bytes) => bytes,
        // The peer does not serve it (any more): its bundle stays
        // pending, recorded with its reason, and the rest of the peer's
        // skills still arrive.
        Err(ClientError::Status { status, .. }) if status == reqwest::StatusCode::NOT_FOUND => {
            tracing::warn!(peer = %client.base(), blob = %sha256, "the peer lists a blob it does not serve");
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    };
    let (library, account) = (ctx.library.clone(), account.to_owned());
    // Asked for by this node, for a page it merges next: the quota on
    // uploads ahead of their packet does not apply (a page's bundles may
    // well exceed it), the store's cap does. They count as the peer's
    // until the merge lists them, and are collected after the grace
    // period if it does not.
    let blob_limits = BlobLimits { sender_bytes: u64::MAX, ..library.limits().blobs };
    blocking(move || library.store().put_blob_bytes(&bytes, &account, &blob_limits)).await?;
    Ok(true)
}

/// Asks `client` again for the blobs of the bundles pending from it
/// (`account`, its peer; at most [`MAX_BLOBS_PER_QUERY`] a round) — ones it
/// answered 404 for in an earlier round, whose packets the cursor has
/// passed — and installs each bundle whose files are now all held, with
/// `trust` for entries recorded without one. Returns the blobs fetched. A
/// failure is logged, not returned: the round goes on, and the next asks again.
pub(super) async fn refetch_pending(ctx: &Context, client: &PeerClient, account: &str, trust: f64) -> usize {
    let (library, who) = (ctx.library.clone(), account.to_owned());
    let wanted = match blocking(move || library.store().pending_blobs_from(&who, MAX_BLOBS_PER_QUERY)).await {
        Ok(wanted) => wanted,
        Err(e) => {
            tracing::warn!(peer = %client.base(), error = %e, "cannot list the blobs pending bundles lack");
            return 0;
        }
    };
    // One at a time: the sizes are not at hand, so each takes the whole budget.
    let limit = ctx.policy.bundle.max_file_bytes;
    let budget = Semaphore::new(kib(limit) as usize);
    let mut fetched = 0;
    for sha256 in wanted {
        match fetch_one(ctx, client, account, sha256.clone(), (&budget, kib(limit))).await {
            Ok(false) => continue,
            Ok(true) => fetched += 1,
            Err(e) => {
                tracing::warn!(peer = %client.base(), blob = %sha256, error = %e, "cannot fetch a pending bundle's blob");
                break;
            }
        }
        let (library, policy, reshare) = (ctx.library.clone(), ctx.policy.clone(), ctx.reshare);
        let retried = blocking(move || library.retry_pending_bundles(&sha256, &policy, trust, reshare)).await;
        match retried {
            Ok(0) => {}
            Ok(installed) => tracing::info!(peer = %client.base(), installed, "pending bundles installed"),
            Err(e) => tracing::warn!(peer = %client.base(), error = %e, "cannot merge pending bundles"),
        }
    }
    fetched
}

/// Uploads to `client` the blobs of `packets` it lacks; returns how many.
pub(super) async fn upload_missing(
    ctx: &Context,
    client: &PeerClient,
    packets: &[SkillPacket],
) -> Result<usize, SyncError> {
    let wanted: Vec<String> = blobs_of(ctx, packets).into_keys().collect();
    let mut sent = 0;
    for chunk in wanted.chunks(MAX_BLOBS_PER_QUERY) {
        for sha256 in client.missing_blobs(chunk).await? {
            if !chunk.contains(&sha256) {
                return Err(SyncError::Protocol(format!(
                    "answered a missing blob it was not asked about: {sha256}"
                )));
            }
            let library = ctx.library.clone();
            let digest = sha256.clone();
            let bytes = blocking(move || library.store().blob_files().read(&digest).map_err(StoreIo)).await?;
            client.put_blob(&sha256, bytes).await?;
            sent += 1;
        }
    }
    Ok(sent)
}

/// A blob file that cannot be read, as the store's error.
struct StoreIo(std::io::Error);

impl From<StoreIo> for SyncError {
    fn from(StoreIo(e): StoreIo) -> Self {
        SyncError::Store(e.into())
    }
}

/// `json`, a stored packet, as a peer without bundles gets it: without
/// `files` and `bundleDigest` (`SPEC.md` §12.8.8); `None` when it has neither.
pub(super) fn plain(json: &str) -> Result<Option<String>, SyncError> {
    let mut packet: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| SyncError::Decode(e.to_string()))?;
    let files = packet.remove("files");
    let digest = packet.remove("bundleDigest");
    if files.is_none() && digest.is_none() {
        return Ok(None);
    }
    serde_json::to_string(&packet).map(Some).map_err(|e| SyncError::Decode(e.to_string()))
}
