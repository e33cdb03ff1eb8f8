//! One pull round against one peer.
//!
//! 1. `GET /ecp/manifest` (with `If-None-Match` once we hold its tag). If
//!    nothing changed since the last success, stop: for our nodes the
//!    manifest's `sequenceNum` equals the cursor; Go nodes always say 0, so
//!    for them a digest of instance, skill count, names and `lastUpdate` is
//!    compared instead.
//! 2. `GET /ecp/skills?since=<cursor>&limit=<max packets>` with
//!    `If-None-Match: <etag>`. Our nodes answer only what changed after the
//!    cursor, tombstones included, a page at a time (`SPEC.md` §10.2.5): while
//!    an answer names a `next` cursor, the next page is asked for, up to
//!    [`MAX_PAGES_PER_ROUND`] — as soon as the answer is decoded, so that
//!    the peer builds and sends it while this one is merged. Go nodes
//!    ignore `since` and `limit` and answer everything, which the merge
//!    handles (what is held comes back `unchanged`).
//! 3. Merge through [`Library::merge`](crate::library::Library::merge) with
//!    the manifest's instance as sender and the peer's trust, off the async
//!    threads, in transactions of at most [`MERGE_SLICE`] packets (the
//!    skills folder is written as each commits). A failure in a later
//!    slice keeps the earlier ones, and the cursor stays before the page:
//!    the next round asks for it again and what was merged comes back
//!    `unchanged`.
//! 4. Persist the cursor (the answer's `sequenceNum`), the ETags, the digest,
//!    the time and the packet count, after every page (and tell the
//!    context's [`ProgressHook`](super::ProgressHook), if any); a failure persists the consecutive
//!    failure count and the reason instead — except for a peer named once
//!    on the command line that the store held nothing of: its failed first
//!    round leaves no peer behind, also when pages were merged (the next
//!    pull starts from 0; what was merged comes back `unchanged`), unless
//!    it only held skills back over the limits, which is no failure.
//!
//! Withdrawals (tombstones of skills held active) are set aside page by page
//! and weighed together when the round ends, also a round that stopped
//! early: more than the deletion guard allows from this peer at once are
//! held for the user ([`crate::intake::settle`]); the rest of each page is
//! merged as it comes.
//!
//! New skills over an origin's limits (`--origin-limit-hour`, `--origin-limit-day`)
//! are held back: what fits is installed, everything else of the answer is
//! merged, and the round fails with [`SyncError::OriginLimit`] without moving
//! the cursor — so the peer's state shows the error, the round is retried
//! after its backoff, and the held-back packets come again until they fit.
//! Nothing is lost, and one flooding origin does not stop a peer's others.
//!
//! A peer whose instance changed, or whose sequence went backwards (its data
//! was reset), is pulled again from 0.
//!
//! Bundles (`SPEC.md` §12.8.2): before a page is merged, the blobs of its
//! bundles this node lacks are fetched from the peer, when its manifest
//! lists `ecp-1.3` ([`super::bundles`]); a failed fetch fails the round
//! before the page is merged, so the cursor stays and the next round asks
//! again (a blob the peer answers 404 for is skipped: its bundle stays
//! pending, and each later round asks for that blob again before its
//! manifest, whatever the cursor). From any other peer a bundle's packet is merged as it is, and
//! stays pending with its reason.

use ecp_protocol::merge::{GO_DEFAULT_INSTANCE, ScannedAhead, SenderKind};
use ecp_protocol::{KnowledgeUpdate, Manifest, MergeResult, SkillPacket};
use sha2::{Digest, Sha256};

use super::client::{Fetched, PeerClient};
use super::{Context, PeerSpec, PullProgress, SyncError, SyncFailure, blocking, is_echo};
use crate::TIMELINE;
use crate::intake::{Arriving, Sender, peer_account};
use crate::store::OriginExcess;
use crate::store::{PullRecord, now};

/// What a pull round found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PullOutcome {
    /// The manifest showed no change: nothing else was requested.
    Unchanged,
    /// The skills request was answered 304.
    NotModified,
    /// Packets arrived and were merged.
    Merged,
}

/// The report of a completed pull round.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullReport {
    /// The peer.
    pub url: String,
    /// Its instance id.
    pub instance: String,
    /// What happened.
    pub outcome: PullOutcome,
    /// The `since` asked for (the cursor before the round).
    pub since: i64,
    /// The cursor after the round.
    pub cursor: i64,
    /// Packets in the answer.
    pub packets: usize,
    /// Of those, packets that originated at or passed through this node and
    /// were therefore not merged (the merge would refuse them as loops), and
    /// laundered copies of skills held here that a legacy peer served back
    /// under its own origin (`SPEC.md` §7.9.2 rule 3a; counted `unchanged`
    /// in `result` too).
    pub echoes: usize,
    /// The merge of the other packets.
    pub result: MergeResult,
    /// Body bytes received this round (manifest and skills, decoded).
    pub bytes: usize,
    /// Blobs fetched (the files of bundles this node lacked).
    pub blobs_fetched: usize,
}

/// Pulls from `peer` once and records the outcome in the store.
pub async fn pull(ctx: &Context, peer: &PeerSpec) -> Result<PullReport, SyncFailure> {
    let attempted_at = now().to_string();
    let new_one_off = ctx.is_new_one_off(peer).await;
    let mut withdrawn = Withdrawn::default();
    let pulled = round(ctx, peer, &attempted_at, &mut withdrawn).await;
    // The round's withdrawals are weighed together, also when it stopped
    // early: the pages it merged have moved the cursor past them.
    let settled = settle(ctx, withdrawn).await;
    let pulled = match (pulled, settled) {
        (Ok(mut report), Ok(result)) => {
            report.result.absorb(result);
            Ok(report)
        }
        (Ok(_), Err(error)) => Err(error),
        (Err(error), settled) => {
            if let Err(e) = settled {
                tracing::error!(peer = %peer.url, error = %e, "cannot weigh the withdrawals of a failed round");
            }
            Err(error)
        }
    };
    ctx.library.metrics().pulled(&peer.url, pulled.is_ok());
    match pulled {
        Ok(report) => Ok(report),
        Err(error) => {
            let (kind, message) = (peer.kind, error.to_string());
            // Holding back over the limits is the limits working: the peer
            // brought skills, and the next round fetches the rest.
            let forget = new_one_off && !matches!(error, SyncError::OriginLimit(_));
            let failures = ctx
                .record_failure(peer, forget, move |store, url| {
                    store.record_pull_failure(url, kind, &attempted_at, &message)
                })
                .await;
            Err(SyncFailure { error, failures })
        }
    }
}

async fn round(
    ctx: &Context,
    peer: &PeerSpec,
    attempted_at: &str,
    withdrawn: &mut Withdrawn,
) -> Result<PullReport, SyncError> {
    let state = ctx.peer_state(peer).await?;
    let client = ctx.client(peer)?;
    // Before the manifest, which may say nothing changed: the blobs a 404
    // left missing are asked for again whatever the cursor (#26).
    let blobs_refetched =
        super::bundles::refetch_pending(ctx, &client, &peer_account(&peer.url), peer.trust).await;
    let known = state.last_success.is_some();
    let mut report = PullReport {
        url: peer.url.clone(),
        instance: state.instance.clone(),
        outcome: PullOutcome::Unchanged,
        since: state.cursor,
        cursor: state.cursor,
        packets: 0,
        echoes: 0,
        result: MergeResult::default(),
        bytes: 0,
        blobs_fetched: blobs_refetched,
    };
    let mut record = PullRecord {
        instance: state.instance.clone(),
        cursor: state.cursor,
        etag: state.etag.clone(),
        manifest_etag: state.manifest_etag.clone(),
        manifest_digest: state.manifest_digest.clone(),
        packets_received: 0,
    };

    let manifest_tag = known.then_some(state.manifest_etag.as_str());
    let (manifest, manifest_etag) = match client.manifest(manifest_tag).await? {
        Fetched::NotModified if !state.instance.is_empty() => {
            save(ctx, peer, attempted_at, record).await?;
            return Ok(report);
        }
        Fetched::NotModified => {
            return Err(SyncError::Protocol("answered 304 to a first manifest request".into()));
        }
        Fetched::Fresh { value, etag, bytes } => {
            report.bytes += bytes;
            (value, etag.unwrap_or_default())
        }
    };
    let instance = ctx.check_instance(peer, &manifest.instance)?;
    learn_manifest_key(ctx, &manifest, &instance).await?;
    let fetch_blobs = super::bundles::supports_bundles(&manifest).then_some(&client);
    let digest = manifest_digest(&manifest, &instance);
    let reset =
        (!state.instance.is_empty() && state.instance != instance) || manifest.sequence_num < state.cursor;
    if reset {
        tracing::info!(peer = %peer.url, %instance, "peer's data changed identity or went back in sequence; pulling from 0");
        record.cursor = 0;
        record.etag.clear();
    }
    if state.instance.is_empty() {
        // Known before the first merge: `keep-from-trusted` looks the
        // origin's trust up by it (crate::permissions).
        let (library, url, kind, id) = (ctx.library.clone(), peer.url.clone(), peer.kind, instance.clone());
        blocking(move || library.store().record_peer_instance(&url, kind, &id)).await?;
    }
    report.instance.clone_from(&instance);
    report.since = record.cursor;
    record.instance = instance.clone();
    record.manifest_etag = manifest_etag;
    let unchanged = known
        && !reset
        && if manifest.sequence_num > 0 {
            manifest.sequence_num == record.cursor
        } else {
            digest == state.manifest_digest
        };
    record.manifest_digest = digest;
    if unchanged {
        report.cursor = record.cursor;
        save(ctx, peer, attempted_at, record).await?;
        return Ok(report);
    }

    // Page after page (`SPEC.md` §10.2.5), each merged and its cursor saved
    // before the next is asked for, so a backlog of any size drains in
    // bounded steps and a failure keeps what the pages before it brought.
    let mut merged_any = false;
    let mut prefetched: Option<Prefetch> = None;
    for page_no in 0..MAX_PAGES_PER_ROUND {
        let etag = (page_no == 0 && !record.etag.is_empty()).then_some(record.etag.as_str());
        let fetched = match prefetched.take() {
            Some(next) => next.answer().await?,
            None => {
                // The first page is small: nothing is merged before it is
                // whole, and the next one is fetched while it is merged.
                let limit = if page_no == 0 {
                    ctx.policy.max_packets.min(FIRST_PAGE)
                } else {
                    ctx.policy.max_packets
                };
                fetch_decoded(&client, record.cursor, limit, etag, None).await?
            }
        };
        let (decoded, etag) = match fetched {
            Fetched::NotModified => {
                if !merged_any {
                    report.outcome = PullOutcome::NotModified;
                }
                break;
            }
            Fetched::Fresh { value, etag, bytes } => {
                report.bytes += bytes;
                (value, etag.unwrap_or_default())
            }
        };
        let sender = withdrawn.sender.get_or_insert_with(|| sender(ctx, peer, &instance)).clone();
        // The next page is asked for, and decoded, while this one is
        // merged: the peer builds and sends it meanwhile. Dropped (its
        // request aborted) when this page's merge ends the round.
        if let Some(next) = decoded.next.filter(|&n| n > record.cursor)
            && page_no + 1 < MAX_PAGES_PER_ROUND
        {
            // Its first slice is scanned where it is decoded, beside this
            // page's merge, rather than in its own merge (a pull's scan
            // ahead, `scan_ahead`).
            let first = ctx.scan_ahead.then(|| FirstSlice {
                packets: ctx.policy.max_packets.clamp(1, MERGE_SLICE),
                max_bytes: ctx.policy.structure.max_bytes,
            });
            prefetched = Some(Prefetch::start(&client, next, ctx.policy.max_packets, first));
        }
        let mut page = merge_decoded(ctx, sender, decoded, fetch_blobs).await?;
        report.blobs_fetched += page.blobs_fetched;
        withdrawn.packets.append(&mut page.withdrawals);
        if !page.held_back.is_empty() {
            // The cursor stays where it was: the next round fetches the held-back packets again.
            return Err(SyncError::OriginLimit(Box::new(HeldBack {
                excess: page.held_back,
                merged: page.result,
            })));
        }
        let next = page.next.filter(|&n| n > record.cursor);
        if page.next.is_some() && next.is_none() {
            return Err(SyncError::Protocol(format!(
                "answered a page whose next ({}) does not move past since={}",
                page.next.unwrap_or_default(),
                record.cursor
            )));
        }
        record.cursor = page.sequence.max(0);
        record.etag = etag;
        merged_any = true;
        report.outcome = PullOutcome::Merged;
        report.cursor = record.cursor;
        report.packets += page.packets;
        record.packets_received = i64::try_from(report.packets).unwrap_or(i64::MAX);
        report.echoes += page.echoes;
        report.result.absorb(page.result);
        if let Some(hook) = &ctx.progress {
            hook.tell(&PullProgress {
                url: &peer.url,
                pages: page_no + 1,
                packets: report.packets,
                bytes: report.bytes,
                expected: (report.since == 0).then(|| usize::try_from(manifest.skill_count).unwrap_or(0)),
            });
        }
        let mut saved = record.clone();
        if next.is_some() {
            // More remains: the next round must not stop at an unchanged manifest.
            saved.manifest_etag.clear();
        }
        save(ctx, peer, attempted_at, saved).await?;
        if next.is_none() {
            return Ok(report);
        }
        // The cursor of a page is its `next`, which is its `sequenceNum`.
        record.cursor = next.unwrap_or(record.cursor);
    }
    report.cursor = record.cursor;
    if !merged_any {
        save(ctx, peer, attempted_at, record).await?;
    }
    Ok(report)
}

/// Most pages asked for in one round: 64 pages of the default 8 MiB budget
/// are 512 MiB; a larger backlog goes on in the next round, from where this
/// one stopped.
pub const MAX_PAGES_PER_ROUND: usize = 64;

/// Most packets of a page merged in one transaction. A page of the
/// default 8 MiB budget holds about 3,300 skills; its changes reach the
/// skills folder when their transaction commits, so a whole page in one
/// transaction left the folder idle while the first slice was merged and
/// wrote the last page's skills alone at the end of a pull.
pub const MERGE_SLICE: usize = 1_000;

/// Most packets asked for in a round's first page: its merge starts only
/// once it is whole and decoded, and the pages after it are fetched while
/// the one before is merged, so a first page of the default budget (about
/// 3,300 skills, 8 MiB) kept both cores waiting for the peer.
pub const FIRST_PAGE: usize = MERGE_SLICE;

/// One merged answer (or page).
pub(super) struct Page {
    /// Its `sequenceNum`.
    sequence: i64,
    /// Its `next`: more pages follow, from this cursor.
    next: Option<i64>,
    packets: usize,
    echoes: usize,
    pub(super) result: MergeResult,
    pub(super) held_back: Vec<OriginExcess>,
    /// Withdrawals, weighed with the whole round's at its end.
    withdrawals: Vec<SkillPacket>,
    /// Blobs fetched before it was merged.
    blobs_fetched: usize,
}

/// The withdrawals of one round, from its one sender.
#[derive(Default)]
struct Withdrawn {
    sender: Option<Sender>,
    packets: Vec<SkillPacket>,
}

/// Weighs a round's withdrawals against the deletion guard, off the async threads.
async fn settle(ctx: &Context, withdrawn: Withdrawn) -> Result<MergeResult, SyncError> {
    let Withdrawn { sender: Some(sender), packets } = withdrawn else { return Ok(MergeResult::default()) };
    if packets.is_empty() {
        return Ok(MergeResult::default());
    }
    let (library, policy) = (ctx.library.clone(), ctx.policy.clone());
    blocking(move || library.settle_withdrawals(packets, &sender, &policy)).await
}

/// The peer as the sender of what a round brings: a legacy one (`SPEC.md`
/// §6.6.1) when configured so or when its manifest names the Go default identity.
pub(super) fn sender(ctx: &Context, peer: &PeerSpec, instance: &str) -> Sender {
    let legacy = peer.legacy || instance == GO_DEFAULT_INSTANCE;
    Sender {
        instance: instance.to_owned(),
        account: peer_account(&peer.url),
        trust: peer.trust,
        reshare: ctx.reshare,
        kind: if legacy { SenderKind::Legacy } else { SenderKind::Current },
    }
}

/// The part of an answer that says whether it is a page (`SPEC.md` §10.2.5);
/// every other field is the update's.
#[derive(serde::Deserialize)]
struct Paging {
    #[serde(default)]
    next: Option<i64>,
}

/// The first slice of a page, scanned where the page is decoded: its
/// length, and the size over which a body is not scanned (the merge
/// refuses it before its scan).
#[derive(Debug, Clone, Copy)]
struct FirstSlice {
    packets: usize,
    max_bytes: usize,
}

/// Asks for the page after `since` and decodes it (off the async threads),
/// scanning its `first` slice there when given.
async fn fetch_decoded(
    client: &PeerClient,
    since: i64,
    limit: usize,
    etag: Option<&str>,
    first: Option<FirstSlice>,
) -> Result<Fetched<Decoded>, SyncError> {
    tracing::debug!(target: TIMELINE, since, limit, "page requested");
    let Fetched::Fresh { value, etag, bytes } = client.skills(since, limit, etag).await? else {
        return Ok(Fetched::NotModified);
    };
    tracing::debug!(target: TIMELINE, since, bytes, "page received");
    let value = decode_page_scanning(value, first).await?;
    tracing::debug!(target: TIMELINE, since, packets = value.update.skills.len(), scanned = value.first_ahead.len(), "page decoded");
    Ok(Fetched::Fresh { value, etag, bytes })
}

/// The page after the one being merged, asked for and decoded at once.
struct Prefetch(tokio::task::JoinHandle<Result<Fetched<Decoded>, SyncError>>);

impl Prefetch {
    fn start(client: &PeerClient, since: i64, limit: usize, first: Option<FirstSlice>) -> Prefetch {
        let client = client.clone();
        Prefetch(tokio::spawn(async move { fetch_decoded(&client, since, limit, None, first).await }))
    }

    async fn answer(mut self) -> Result<Fetched<Decoded>, SyncError> {
        match (&mut self.0).await {
            Ok(answer) => answer,
            Err(e) => Err(SyncError::Internal(e.to_string())),
        }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One answer decoded: the update, its `next` when it is a page, and what
/// was scanned of its first slice as it was decoded.
pub(super) struct Decoded {
    update: KnowledgeUpdate,
    next: Option<i64>,
    first_ahead: ScannedAhead,
}

/// Decodes one answer, off the async threads.
pub(super) async fn decode_page(body: Vec<u8>) -> Result<Decoded, SyncError> {
    decode_page_scanning(body, None).await
}

/// Decodes one answer, off the async threads, and scans the bodies of its
/// `first` slice there when given: a page fetched while the one before it
/// is merged, whose first slice's merge then finds them scanned. Which
/// packets the merge's first slice holds (echoes set aside) is the merge's
/// to say; a report it does not take costs only its CPU.
async fn decode_page_scanning(body: Vec<u8>, first: Option<FirstSlice>) -> Result<Decoded, SyncError> {
    blocking(move || -> Result<_, SyncError> {
        let update = KnowledgeUpdate::from_json(&body).map_err(|e| SyncError::Decode(e.to_string()))?;
        let next =
            serde_json::from_slice::<Paging>(&body).map_err(|e| SyncError::Decode(e.to_string()))?.next;
        let first_ahead = match first {
            Some(first) => {
                let packets = &update.skills[..update.skills.len().min(first.packets)];
                super::scan_ahead::scan(packets, first.max_bytes)
            }
            None => ScannedAhead::new(),
        };
        Ok(Decoded { update, next, first_ahead })
    })
    .await
}

/// Decodes one answer and merges it ([`merge_decoded`]).
pub(super) async fn merge_page(
    ctx: &Context,
    sender: Sender,
    body: Vec<u8>,
    blobs: Option<&PeerClient>,
) -> Result<Page, SyncError> {
    let decoded = decode_page(body).await?;
    merge_decoded(ctx, sender, decoded, blobs).await
}

/// Fetches the blobs of a decoded answer's bundles from `blobs` (the peer,
/// when it serves them); merges it, off the async threads.
pub(super) async fn merge_decoded(
    ctx: &Context,
    sender: Sender,
    decoded: Decoded,
    blobs: Option<&PeerClient>,
) -> Result<Page, SyncError> {
    let own = ctx.instance().to_owned();
    let Decoded { update, next, first_ahead } = decoded;
    let sequence = update.sequence_num;
    let packets = update.skills.len();
    let mut revocations = update.revocations;
    let (echoes, kept): (Vec<_>, Vec<_>) = update.skills.into_iter().partition(|p| is_echo(p, &own));
    let blobs_fetched = match blobs {
        Some(client) => super::bundles::fetch_missing(ctx, client, &sender.account, &kept).await?,
        None => 0,
    };
    let (library, policy, scan_ahead) = (ctx.library.clone(), ctx.policy.clone(), ctx.scan_ahead);
    blocking(move || -> Result<_, SyncError> {
        // The evidence our own skills come back with (SPEC.md §16.4).
        crate::intake::take_echoed(library.store(), &echoes, &sender)?;
        library.announce(library.store().sequence()?);
        let mut result = MergeResult::default();
        let mut held_back = Vec::new();
        let mut withdrawals = Vec::new();
        let mut laundered = 0;
        // A full pull of a large node may exceed the per-update packet limit;
        // its packets carry unique names, so merging it in slices is the same
        // merge. A slice is at most [`MERGE_SLICE`] packets, so the skills
        // folder is written beside the merge of the next slice rather than
        // after a whole page.
        let slice = policy.max_packets.clamp(1, MERGE_SLICE);
        let mut slices: Vec<Vec<SkillPacket>> = Vec::new();
        let mut kept = kept.into_iter().peekable();
        while kept.peek().is_some() {
            slices.push(kept.by_ref().take(slice).collect());
        }
        // The revocations ride with the first slice, also when no packet came.
        if slices.is_empty() && !revocations.is_empty() {
            slices.push(Vec::new());
        }
        let mut merge_slice = |skills: Vec<SkillPacket>, ahead: ScannedAhead| -> Result<(), SyncError> {
            let revocations = std::mem::take(&mut revocations);
            let update = KnowledgeUpdate { skills, revocations, ..KnowledgeUpdate::default() };
            tracing::debug!(target: TIMELINE, packets = update.skills.len(), ahead = ahead.len(), "slice merge starts");
            let merged = library.merge_what_fits(Arriving { update, ahead }, &sender, &policy)?;
            tracing::debug!(target: TIMELINE, changes = merged.changes.len(), "slice merged and queued");
            result.absorb(merged.result);
            held_back.extend(merged.held_back);
            withdrawals.extend(merged.withdrawals);
            laundered += merged.echoes;
            Ok(())
        };
        if scan_ahead {
            super::scan_ahead::each_scanned(slices, policy.structure.max_bytes, first_ahead, merge_slice)?;
        } else {
            slices.into_iter().try_for_each(|skills| merge_slice(skills, ScannedAhead::new()))?;
        }
        Ok(Page {
            sequence,
            next,
            packets,
            echoes: echoes.len() + laundered,
            result,
            held_back,
            withdrawals,
            blobs_fetched,
        })
    })
    .await
}

async fn save(
    ctx: &Context,
    peer: &PeerSpec,
    attempted_at: &str,
    record: PullRecord,
) -> Result<(), SyncError> {
    let (library, url, kind, at) =
        (ctx.library.clone(), peer.url.clone(), peer.kind, attempted_at.to_owned());
    blocking(move || library.store().record_pull_success(&url, kind, &at, &record)).await?;
    Ok(())
}

/// A pull round whose installs did not all fit under the origin (or sender) limits.
#[derive(Debug)]
pub struct HeldBack {
    /// Each origin with packets held back (once per merged slice).
    pub excess: Vec<OriginExcess>,
    /// What the round merged nevertheless.
    pub merged: MergeResult,
}

impl HeldBack {
    /// Packets held back in all.
    pub fn count(&self) -> u64 {
        self.excess.iter().map(|e| e.arriving - e.room).sum()
    }

    /// Seconds until all the held-back packets fit.
    pub fn retry_after(&self) -> u64 {
        self.excess.iter().map(|e| e.retry_after).max().unwrap_or(1)
    }
}

impl std::fmt::Display for HeldBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(first) = self.excess.first() else { return f.write_str("nothing held back") };
        let OriginExcess { per, origin, window, limit, installed, arriving, room, .. } = first;
        write!(
            f,
            "{per} {origin:?} brought {arriving} installs, over its limit of {limit} per {window} ({installed} \
             installed in the last {window} before): {} held back",
            arriving - room
        )?;
        let mut origins: Vec<&str> = self.excess.iter().map(|e| e.origin.as_str()).collect();
        origins.sort_unstable();
        origins.dedup();
        if self.excess.len() > 1 {
            write!(f, "; {} held back in all, over {} limits", self.count(), origins.len())?;
        }
        let wait = self.retry_after();
        write!(
            f,
            "; the rest of the round is merged ({} new, {} updated, {} rejected); the next rounds fetch the held-back \
             ones again, all fit in {wait} s",
            self.merged.new_skills, self.merged.updated_skills, self.merged.rejected_skills
        )
    }
}

/// What identifies a manifest's skill set when its `sequenceNum` says
/// nothing (always 0 from Go nodes): instance, count, names, `lastUpdate`.
pub fn manifest_digest(manifest: &Manifest, instance: &str) -> String {
    let mut names: Vec<&str> = manifest.skill_names.iter().map(String::as_str).collect();
    names.sort_unstable();
    let mut hash = Sha256::new();
    for part in [instance, &manifest.sequence_num.to_string(), &manifest.skill_count.to_string()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    for name in names {
        hash.update(name.as_bytes());
        hash.update([0]);
    }
    hash.update(manifest.last_update.to_string().as_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// The key the peer's manifest names for itself (`SPEC.md` §13.6),
/// recorded unless its instance is known by a key already; a manifest whose
/// `keyId` is not its `publicKey`'s teaches nothing.
async fn learn_manifest_key(ctx: &Context, manifest: &Manifest, instance: &str) -> Result<(), SyncError> {
    let Some(key_id) = ecp_protocol::identity::key_id_of(&manifest.public_key) else { return Ok(()) };
    if key_id != manifest.key_id {
        tracing::warn!(%instance, "the manifest's keyId is not its publicKey's; its key is not learned");
        return Ok(());
    }
    let (library, instance) = (ctx.library.clone(), instance.to_owned());
    blocking(move || library.store().learn_manifest_key(&instance, &key_id)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_generation_time_and_name_order_but_not_names_or_last_update() {
        let m = Manifest {
            instance: "ok-agent".into(),
            skill_count: 2,
            skill_names: vec!["a".into(), "b".into()],
            ..Manifest::default()
        };
        let d = manifest_digest(&m, "ok-agent");
        let mut later = m.clone();
        later.generated_at = ecp_protocol::Timestamp::parse("2030-01-01T00:00:00Z").unwrap();
        later.skill_names.reverse();
        assert_eq!(manifest_digest(&later, "ok-agent"), d);
        let mut renamed = m.clone();
        renamed.skill_names[1] = "c".into();
        assert_ne!(manifest_digest(&renamed, "ok-agent"), d);
        let mut touched = m.clone();
        touched.last_update = ecp_protocol::Timestamp::parse("2030-01-01T00:00:00Z").unwrap();
        assert_ne!(manifest_digest(&touched, "ok-agent"), d);
    }
}
