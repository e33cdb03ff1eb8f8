//! Bundles between nodes (`SPEC.md` §12.8): the blobs a round moves
//! besides the packets.
//!
//! - A pull fetches, before it merges a page, the blobs of the page's
//!   bundles this node does not hold (`GET /ecp/blobs/{sha256}` from the
//!   peer the packets came from, [`FETCHES_IN_FLIGHT`] at a time), each
//!   streamed to a temporary file and checked against its name and listed
//!   size as it is written, and kept [`BLOBS_PER_COMMIT`] to a transaction
//!   under the store's cap on blobs (not the quota on uploads ahead of
//!   their packet: this node asked for them). A failed fetch fails the round before the
//!   page is merged: the cursor stays and the next round asks again —
//!   except a 404, a blob the peer does not serve, or other bytes than the
//!   blob's: its bundle is merged as pending, recorded with its reason, so
//!   one such packet does not stop the peer's other skills. Every later round asks that peer again for
//!   the blobs its pending bundles lack ([`refetch_pending`]), whatever the
//!   cursor, and installs each bundle once all its files are held.
//! - A push asks the peer which of its bundles' blobs it lacks (`POST
//!   /ecp/blobs/missing`), uploads only those (`PUT`, several at a time
//!   within a budget of bytes), then pushes the packets.
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
use crate::store::{BlobLimits, VerifiedBlob, WriteError};

/// Whether a peer's manifest says it takes bundles and serves blobs.
pub(super) fn supports_bundles(manifest: &Manifest) -> bool {
    manifest.profiles.iter().any(|p| p == PROFILE_ECP_1_3)
}

/// Most blob requests in flight to one peer: enough that the round trips
/// and the file syncs of many small files overlap.
const FETCHES_IN_FLIGHT: usize = 8;

/// Most fetched blobs kept in one transaction: one commit (and one sync of
/// each blob folder) for many small files, where a commit per blob bound a
/// pull to the disk's syncs. Each waiting blob holds an open temporary file.
const BLOBS_PER_COMMIT: usize = 256;

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
/// Several at a time ([`FETCHES_IN_FLIGHT`]), each streamed to a temporary
/// file and checked as it is written (no blob is held in memory), kept
/// [`BLOBS_PER_COMMIT`] at a time. When a fetch fails, the blobs fetched
/// before it are kept (they are the right bytes, and the next round need
/// not ask for them) and the failure fails the round.
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
    let mut fetches = futures_util::stream::iter(missing)
        .map(|sha256| {
            // A blob is never longer than its listing says (nor than the per-file limit).
            let size = wanted.get(&sha256).copied().unwrap_or(limit).min(limit);
            fetch_one(ctx, client, sha256, size)
        })
        .buffer_unordered(FETCHES_IN_FLIGHT);
    let (mut batch, mut kept, mut failed) = (Vec::new(), 0, None);
    while let Some(fetched) = fetches.next().await {
        match fetched {
            Ok(Some(blob)) => batch.push(blob),
            Ok(None) => {}
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
        if batch.len() >= BLOBS_PER_COMMIT {
            kept += keep(ctx, account, std::mem::take(&mut batch)).await?;
        }
    }
    // The fetches still in flight are dropped, their temporary files with them.
    drop(fetches);
    kept += keep(ctx, account, batch).await?;
    failed.map_or(Ok(kept), Err)
}

/// Keeps fetched `blobs` as `account`'s, in one transaction; returns how many.
async fn keep(ctx: &Context, account: &str, blobs: Vec<VerifiedBlob>) -> Result<usize, SyncError> {
    if blobs.is_empty() {
        return Ok(0);
    }
    let (library, account, count) = (ctx.library.clone(), account.to_owned(), blobs.len());
    // Asked for by this node, for a page it merges next: the quota on
    // uploads ahead of their packet does not apply (a page's bundles may
    // well exceed it), the store's cap does. They count as the peer's
    // until the merge lists them, and are collected after the grace
    // period if it does not.
    let blob_limits = BlobLimits { sender_bytes: u64::MAX, ..library.limits().blobs };
    blocking(move || library.store().put_blobs(blobs, &account, &blob_limits)).await?;
    Ok(count)
}

/// Fetches blob `sha256`, listed with `size` bytes, from `client` into a
/// temporary file, hashed and counted as it is written: `None` when the
/// peer does not serve it, or serves other bytes (longer than listed, or
/// hashing to another digest) — its bundle stays pending, recorded with its
/// reason, the rest of the peer's skills still arrive, and a later round
/// asks again ([`refetch_pending`]). Nothing of a refused blob stays on disk.
async fn fetch_one(
    ctx: &Context,
    client: &PeerClient,
    sha256: String,
    size: u64,
) -> Result<Option<VerifiedBlob>, SyncError> {
    let refused = |why: &dyn std::fmt::Display| {
        tracing::warn!(peer = %client.base(), blob = %sha256, reason = %why, "the peer lists a blob it does not serve");
    };
    let mut answer = match client.blob(&sha256, size).await {
        Ok(answer) => answer,
        Err(ClientError::Status { status, message, .. }) if status == reqwest::StatusCode::NOT_FOUND => {
            refused(&message);
            return Ok(None);
        }
        Err(e @ ClientError::WrongBlob(_)) => {
            refused(&e);
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let mut writer = ctx.library.store().blob_files().writer(size).map_err(StoreIo)?;
    loop {
        match answer.chunk().await {
            Ok(Some(chunk)) => writer.write(chunk.as_ref()).map_err(|e| StoreIo(std::io::Error::other(e)))?,
            Ok(None) => break,
            Err(e @ ClientError::WrongBlob(_)) => {
                refused(&e);
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        }
    }
    answer.verify()?;
    let digest = sha256.clone();
    // The hash is checked, and the file synced, off the async threads.
    match blocking(move || Ok::<_, SyncError>(writer.finish(&digest))).await? {
        Ok(blob) => Ok(Some(blob)),
        Err(e @ WriteError::DigestMismatch { .. }) => {
            refused(&e);
            Ok(None)
        }
        Err(e) => Err(StoreIo(std::io::Error::other(e)).into()),
    }
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
    // One at a time, each kept before its bundles are merged again; the
    // sizes are not at hand, so each may have the per-file limit.
    let limit = ctx.policy.bundle.max_file_bytes;
    let mut fetched = 0;
    for sha256 in wanted {
        let blob = match fetch_one(ctx, client, sha256.clone(), limit).await {
            Ok(None) => continue,
            Ok(Some(blob)) => blob,
            Err(e) => {
                tracing::warn!(peer = %client.base(), blob = %sha256, error = %e, "cannot fetch a pending bundle's blob");
                break;
            }
        };
        if let Err(e) = keep(ctx, account, vec![blob]).await {
            tracing::warn!(peer = %client.base(), blob = %sha256, error = %e, "cannot keep a pending bundle's blob");
            break;
        }
        fetched += 1;
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
///
/// Several at a time ([`FETCHES_IN_FLIGHT`], as a pull fetches them), their
/// listed sizes together within one largest file (the per-file limit): a
/// push holds no more blob bytes in memory than one blob at a time did.
pub(super) async fn upload_missing(
    ctx: &Context,
    client: &PeerClient,
    packets: &[SkillPacket],
) -> Result<usize, SyncError> {
    let wanted = blobs_of(ctx, packets);
    let ids: Vec<String> = wanted.keys().cloned().collect();
    let limit = ctx.policy.bundle.max_file_bytes;
    let budget = Semaphore::new(kib(limit) as usize);
    let mut sent = 0;
    for chunk in ids.chunks(MAX_BLOBS_PER_QUERY) {
        let missing = client.missing_blobs(chunk).await?;
        if let Some(stranger) = missing.iter().find(|sha256| !chunk.contains(sha256)) {
            return Err(SyncError::Protocol(format!(
                "answered a missing blob it was not asked about: {stranger}"
            )));
        }
        let mut uploads = futures_util::stream::iter(missing)
            .map(|sha256| {
                let room = kib(wanted.get(&sha256).copied().unwrap_or(limit)).min(kib(limit));
                upload_one(ctx, client, sha256, (&budget, room))
            })
            .buffer_unordered(FETCHES_IN_FLIGHT);
        while let Some(uploaded) = uploads.next().await {
            // The first failure fails the push; the uploads in flight are dropped.
            uploaded?;
            sent += 1;
        }
    }
    Ok(sent)
}

/// Uploads blob `sha256` to `client` once the budget has its room.
async fn upload_one(
    ctx: &Context,
    client: &PeerClient,
    sha256: String,
    (budget, room): (&Semaphore, u32),
) -> Result<(), SyncError> {
    let _room = budget.acquire_many(room).await.map_err(|e| SyncError::Internal(e.to_string()))?;
    let (library, digest) = (ctx.library.clone(), sha256.clone());
    let bytes = blocking(move || library.store().blob_files().read(&digest).map_err(StoreIo)).await?;
    client.put_blob(&sha256, bytes).await?;
    Ok(())
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
