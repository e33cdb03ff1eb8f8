//! Pushing to one peer: send what changed here since the peer last
//! acknowledged, as `POST /ecp/skills`.
//!
//! The packets are the ones `GET /ecp/skills?since=<acked>` would serve
//! ([`Store::served_packets`](crate::store::Store::served_packets)):
//! shareable skills as stored, tombstones included, in sequence order.
//! Packets that originated at the target or already passed through it are
//! left out (it would refuse them as loops), and so are the versions the
//! target is known to hold because it sent them to us itself
//! ([`Holdings`](super::holdings::Holdings)): in a mesh, a new skill reaches a node from
//! several neighbours at once, and those copies would merge as unchanged
//! (`SPEC.md` §10.2.11). Large sets go in several
//! updates. When every update was answered 200 the peer has acknowledged
//! our sequence number as of the read, and the next push starts there.
//!
//! Bundles (`SPEC.md` §12.8.6): to a peer whose manifest lists `ecp-1.3`, the
//! blobs it lacks are uploaded before the packets that list them; any other
//! peer gets the plain packets ([`super::bundles`]).

use std::borrow::Cow;

use ecp_protocol::{Manifest, MergeResult, PeerStats, SkillPacket, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::bundles;
use super::client::{Fetched, PeerClient};
use super::holdings::Version;
use super::{Context, PeerSpec, SyncError, SyncFailure, blocking};
use crate::store::{Served, StoreError, now};

/// Most packets in one pushed update.
pub const MAX_PACKETS_PER_UPDATE: usize = 1000;
/// Largest pushed update body (a node's default body limit is 8 MiB).
pub const MAX_UPDATE_BYTES: usize = 4 * 1024 * 1024;

/// The report of a completed push.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushReport {
    /// The peer.
    pub url: String,
    /// Its instance id.
    pub instance: String,
    /// Our sequence number it had acknowledged before.
    pub since: i64,
    /// Our sequence number it has acknowledged now.
    pub acked: i64,
    /// Packets sent.
    pub sent: usize,
    /// Packets left out because they came from the peer or passed through it.
    pub echoes: usize,
    /// Packets left out because the peer sent us this very version itself.
    pub already_held: usize,
    /// Updates (requests) sent.
    pub updates: usize,
    /// Names of the packets sent, in order.
    pub names: Vec<String>,
    /// The peer's merge results, added up.
    pub result: MergeResult,
    /// Blobs uploaded (the files of bundles the peer lacked).
    pub blobs_sent: usize,
}

/// Pushes what `peer` has not acknowledged; records the outcome in the store
/// (a failed first push to a peer named once on the command line leaves no
/// peer behind, as a pull's does).
pub async fn push(ctx: &Context, peer: &PeerSpec) -> Result<PushReport, SyncFailure> {
    let new_one_off = ctx.is_new_one_off(peer).await;
    let pushed = round(ctx, peer).await;
    ctx.library.metrics().pushed(&peer.url, pushed.is_ok());
    match pushed {
        Ok(report) => Ok(report),
        Err(error) => {
            let (kind, message) = (peer.kind, error.to_string());
            let failures = ctx
                .record_failure(peer, new_one_off, move |store, url| {
                    store.record_push_failure(url, kind, &message)
                })
                .await;
            Err(SyncFailure { error, failures })
        }
    }
}

/// What a push needs of a stored packet to route it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Route {
    #[serde(default)]
    origin_instance: String,
    #[serde(default)]
    skill_name: String,
    #[serde(default)]
    integrity_hash: String,
    #[serde(default)]
    bundle_digest: String,
    #[serde(default)]
    deprecated: bool,
    #[serde(default)]
    confidence: f64,
    #[serde(default)]
    provenance: Option<RouteProvenance>,
    /// A bundle's files (`SPEC.md` §12.2).
    #[serde(default)]
    files: Vec<RouteFile>,
}

/// Of a listed file, only that there is one.
#[derive(Deserialize)]
struct RouteFile {}

#[derive(Deserialize)]
struct RouteProvenance {
    #[serde(default)]
    path: Option<Vec<String>>,
}

/// An update around packets that are already JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Outgoing<'a> {
    id: String,
    peer_instance: &'a str,
    generated_at: Timestamp,
    skills: Vec<&'a RawValue>,
    stats: PeerStats,
    sequence_num: i64,
    /// `SPEC.md` §14: the revocations recorded after the peer's cursor, in
    /// the round's first update; omitted when none (a Go node ignores it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    revocations: Vec<&'a RawValue>,
}

/// The `stats` of a round's updates (#19 item 6): the node's own shared
/// skills, the mean confidence of the packets the round sends, its uptime,
/// its top tags, and the uses its agents reported.
async fn node_stats(ctx: &Context, served: &Served) -> Result<PeerStats, SyncError> {
    let library = ctx.library.clone();
    let (summary, (uses, successes)) = blocking(move || {
        Ok::<_, StoreError>((library.store().summary()?, library.store().outcome_totals()?))
    })
    .await?;
    let count = served.packets.len();
    Ok(PeerStats {
        total_skills: 0,
        total_extractions: summary.local_skills - summary.private_skills,
        avg_confidence: if count == 0 { 0.0 } else { served.confidence_sum / count as f64 },
        uptime_hours: ctx.started.elapsed().as_secs_f64() / 3600.0,
        top_workflows: summary.top_tags,
        total_uses: uses,
        total_successes: successes,
    })
}

async fn round(ctx: &Context, peer: &PeerSpec) -> Result<PushReport, SyncError> {
    let state = ctx.peer_state(peer).await?;
    let client = ctx.client(peer)?;
    let mut instance = peer.instance.clone().unwrap_or_else(|| state.instance.clone());
    let mut manifest = None;
    if instance.is_empty() {
        let fetched = fetch_manifest(&client).await?;
        instance = ctx.check_instance(peer, &fetched.instance)?;
        let (library, url, kind, id) = (ctx.library.clone(), peer.url.clone(), peer.kind, instance.clone());
        blocking(move || library.store().record_peer_instance(&url, kind, &id)).await?;
        manifest = Some(fetched);
    }
    if instance == ctx.instance() {
        return Err(SyncError::ItIsUs);
    }
    let mut report = PushReport {
        url: peer.url.clone(),
        instance: instance.clone(),
        since: state.acked_seq,
        acked: state.acked_seq,
        sent: 0,
        echoes: 0,
        already_held: 0,
        updates: 0,
        names: Vec::new(),
        result: MergeResult::default(),
        blobs_sent: 0,
    };
    if state.last_push.is_some() && ctx.library.sequence() == state.acked_seq {
        return Ok(report);
    }
    let served = {
        let library = ctx.library.clone();
        let mut since = state.acked_seq;
        let served = blocking(move || library.store().served_packets(Some(since))).await?;
        if served.seq < since {
            // Our store is older than what the peer acknowledged (restored
            // from a backup, or recreated): send everything again.
            since = 0;
            report.since = 0;
            let library = ctx.library.clone();
            blocking(move || library.store().served_packets(Some(since))).await?
        } else {
            served
        }
    };

    let mut outgoing: Vec<Cow<'_, str>> = Vec::with_capacity(served.packets.len());
    let mut bundles: Vec<SkillPacket> = Vec::new();
    for json in &served.packets {
        let route: Route = serde_json::from_str(json).map_err(|e| SyncError::Decode(e.to_string()))?;
        let passed = route.provenance.and_then(|p| p.path).unwrap_or_default();
        if route.origin_instance == instance || passed.contains(&instance) {
            report.echoes += 1;
            continue;
        }
        let version = Version {
            name: &route.skill_name,
            hash: &route.integrity_hash,
            bundle: &route.bundle_digest,
            deprecated: route.deprecated,
            confidence: route.confidence,
        };
        if ctx.holdings.holds(&peer.url, &version) {
            report.already_held += 1;
            continue;
        }
        report.names.push(route.skill_name);
        if route.files.is_empty() {
            outgoing.push(Cow::Borrowed(json));
            continue;
        }
        if manifest.is_none() {
            manifest = Some(fetch_manifest(&client).await?);
        }
        if manifest.as_ref().is_some_and(bundles::supports_bundles) {
            bundles.push(
                serde_json::from_str::<SkillPacket>(json).map_err(|e| SyncError::Decode(e.to_string()))?,
            );
            outgoing.push(Cow::Borrowed(json));
        } else {
            outgoing.push(bundles::plain(json)?.map_or(Cow::Borrowed(json.as_str()), Cow::Owned));
        }
    }
    // The blobs first: the packets that list them are accepted only once they are held.
    report.blobs_sent = bundles::upload_missing(ctx, &client, &bundles).await?;

    let mut batch: Vec<&RawValue> = Vec::new();
    let mut batch_bytes = 0;
    let mut batches: Vec<Vec<&RawValue>> = Vec::new();
    for json in &outgoing {
        let json: &str = json;
        let raw: &RawValue = serde_json::from_str(json).map_err(|e| SyncError::Decode(e.to_string()))?;
        if !batch.is_empty()
            && (batch.len() >= MAX_PACKETS_PER_UPDATE || batch_bytes + json.len() > MAX_UPDATE_BYTES)
        {
            batches.push(std::mem::take(&mut batch));
            batch_bytes = 0;
        }
        batch_bytes += json.len() + 1;
        batch.push(raw);
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    let revocations = {
        let (library, since, upto) = (ctx.library.clone(), report.since, served.seq);
        let all = blocking(move || library.store().revocations_after(since)).await?;
        all.into_iter().filter(|(seq, _)| *seq <= upto).map(|(_, json)| json).collect::<Vec<_>>()
    };
    let mut revocations: Vec<&RawValue> = revocations
        .iter()
        .map(|json| serde_json::from_str(json).map_err(|e| SyncError::Decode(e.to_string())))
        .collect::<Result<_, _>>()?;
    if batches.is_empty() && !revocations.is_empty() {
        batches.push(Vec::new());
    }
    let stats = node_stats(ctx, &served).await?;
    for (i, skills) in batches.into_iter().enumerate() {
        let count = skills.len();
        let update = Outgoing {
            id: format!("{}-{}-{i}", ctx.instance(), served.seq),
            peer_instance: ctx.instance(),
            generated_at: now(),
            skills,
            stats: PeerStats { total_skills: i64::try_from(count).unwrap_or(i64::MAX), ..stats.clone() },
            sequence_num: served.seq,
            revocations: std::mem::take(&mut revocations),
        };
        let body = serde_json::to_vec(&update).map_err(|e| SyncError::Decode(e.to_string()))?;
        report.result.absorb(client.post_update(body).await?);
        report.sent += count;
        report.updates += 1;
    }
    report.acked = served.seq;
    let (library, url, kind, acked, sent) = (
        ctx.library.clone(),
        peer.url.clone(),
        peer.kind,
        served.seq,
        i64::try_from(report.sent).unwrap_or(0),
    );
    blocking(move || library.store().record_push_success(&url, kind, acked, sent)).await?;
    Ok(report)
}

/// The peer's manifest, asked without a tag.
async fn fetch_manifest(client: &PeerClient) -> Result<Manifest, SyncError> {
    match client.manifest(None).await? {
        Fetched::Fresh { value, .. } => Ok(value),
        Fetched::NotModified => {
            Err(SyncError::Protocol("answered 304 to a manifest request without a tag".into()))
        }
    }
}
