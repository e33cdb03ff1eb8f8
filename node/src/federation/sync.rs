//! Syncing on demand: [`sync_peer`] pulls from and pushes to one peer once
//! (for `ecp-node sync` through [`sync_all`], and for a running node through
//! [`Federator::sync_now`](super::Federator::sync_now)); [`PeerSync`] is
//! what it reports.

use serde::Serialize;

use super::{Context, PeerSpec, PullReport, PushReport, pull, push};

/// The outcome of syncing one peer once (`ecp-node sync`, [`Federator::sync_now`](super::Federator::sync_now)).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerSync {
    /// The peer.
    pub url: String,
    /// The pull, when the peer is pulled from (JSON: the report, or `{"error": …}`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "report_or_error")]
    pub pull: Option<Result<PullReport, String>>,
    /// The push, when the peer is pushed to (JSON: the report, or `{"error": …}`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "report_or_error")]
    pub push: Option<Result<PushReport, String>>,
}

fn report_or_error<T: Serialize, S: serde::Serializer>(
    value: &Option<Result<T, String>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(Ok(report)) => report.serialize(serializer),
        Some(Err(error)) => serde_json::json!({ "error": error }).serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// Pulls from (if `pull`) and pushes to (if `push`) one peer, once.
pub async fn sync_peer(ctx: &Context, peer: &PeerSpec) -> PeerSync {
    let pulled = if peer.pull { Some(pull(ctx, peer).await.map_err(|f| f.to_string())) } else { None };
    let pushed = if peer.push { Some(push(ctx, peer).await.map_err(|f| f.to_string())) } else { None };
    PeerSync { url: peer.url.clone(), pull: pulled, push: pushed }
}

/// Syncs every peer once, all at the same time; results in the order given.
pub async fn sync_all(ctx: &Context, peers: &[PeerSpec]) -> Vec<PeerSync> {
    let tasks: Vec<_> = peers
        .iter()
        .map(|peer| {
            let (ctx, peer) = (ctx.clone(), peer.clone());
            tokio::spawn(async move { sync_peer(&ctx, &peer).await })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for (task, peer) in tasks.into_iter().zip(peers) {
        out.push(task.await.unwrap_or_else(|e| PeerSync {
            url: peer.url.clone(),
            pull: Some(Err(format!("internal error: {e}"))),
            push: None,
        }));
    }
    out
}
