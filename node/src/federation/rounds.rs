//! What the federator does with a running peer: a scheduled pull round (or,
//! for a peer not pulled from, a probe of its manifest), pushes on change,
//! and [`Federator::sync_now`]. When a tick starts a round is
//! [`schedule`](super::schedule)'s job.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::backoff::{self, Said};
use super::client::Fetched;
use super::federator::{Federator, Inner};
use super::schedule::Slot;
use super::{
    Context, PeerSpec, PeerSync, PullOutcome, SyncError, SyncFailure, blocking, pull, push, sync_peer,
};

/// Shortest time between two pushes on change to one peer. A change after a
/// quiet spell is pushed at once (a skill crosses each hop of a mesh without
/// waiting); changes that follow a push closely are collected and go out
/// together when this much time has passed since it.
pub const PUSH_DEBOUNCE: Duration = Duration::from_millis(200);

impl Federator {
    /// A pull round (or, for a peer not pulled from, learning its instance).
    pub(super) async fn round(&self, spec: &PeerSpec, slot: &Slot) {
        let ctx = self.context();
        let outcome = if spec.pull {
            pull(&ctx, spec).await.map(|r| {
                if r.outcome == PullOutcome::Merged && r.packets > r.echoes {
                    tracing::info!(peer = %spec.url, instance = %r.instance, since = r.since, packets = r.packets,
                        new = r.result.new_skills, updated = r.result.updated_skills,
                        rejected = r.result.rejected_skills, unchanged = r.result.unchanged,
                        held = r.result.held_skills, echoes = r.echoes, "pulled");
                }
                r.instance
            })
        } else {
            probe(&ctx, spec).await
        };
        let mut not_before = None;
        match outcome {
            Ok(instance) => {
                slot.said.succeeded();
                self.0.trust.learned(&spec.url, &instance);
            }
            Err(failure) => {
                let wait = backoff::delay_after(failure.failures);
                not_before = Some(Instant::now() + wait);
                if slot.said.worth_a_warning(&failure.to_string()) {
                    tracing::warn!(peer = %spec.url, failures = failure.failures, retry_in = ?wait,
                        error = %failure, "pull failed; said once until it succeeds or fails otherwise (RUST_LOG=debug shows each)");
                } else {
                    tracing::debug!(peer = %spec.url, failures = failure.failures, error = %failure, "pull failed");
                }
            }
        }
        slot.back_off(not_before);
    }

    /// Pulls from and pushes to every active peer now, all at once, waiting
    /// for a round already running rather than skipping; backoff ignored.
    pub async fn sync_now(&self) -> Vec<PeerSync> {
        let peers: Vec<(PeerSpec, Arc<Slot>)> =
            self.0.peers.lock().await.values().map(|r| (r.spec.clone(), Arc::clone(&r.slot))).collect();
        let tasks: Vec<_> = peers
            .into_iter()
            .map(|(spec, slot)| {
                let this = self.clone();
                tokio::spawn(async move {
                    let _guard = slot.round.lock().await;
                    let ctx = this.context();
                    let synced = sync_peer(&ctx, &spec).await;
                    if let Some(Ok(r)) = &synced.pull {
                        slot.said.succeeded();
                        this.0.trust.learned(&spec.url, &r.instance);
                        slot.back_off(None);
                    }
                    if let Some(Ok(r)) = &synced.push {
                        this.0.trust.learned(&spec.url, &r.instance);
                    }
                    synced
                })
            })
            .collect();
        let mut out = Vec::new();
        for task in tasks {
            if let Ok(synced) = task.await {
                out.push(synced);
            }
        }
        out.sort_by(|a, b| a.url.cmp(&b.url));
        out
    }
}

/// Learns a non-pulled peer's instance from its manifest.
pub(super) async fn probe(ctx: &Context, spec: &PeerSpec) -> Result<String, SyncFailure> {
    let attempt = async {
        let Fetched::Fresh { value: manifest, .. } = ctx.client(spec)?.manifest(None).await? else {
            return Err(SyncError::Protocol("answered 304 to a manifest request without a tag".into()));
        };
        let instance = ctx.check_instance(spec, &manifest.instance)?;
        let (library, url, kind, id) = (ctx.library.clone(), spec.url.clone(), spec.kind, instance.clone());
        blocking(move || library.store().record_peer_instance(&url, kind, &id)).await?;
        Ok(instance)
    };
    match attempt.await {
        Ok(instance) => Ok(instance),
        Err(error) => {
            let (library, url, kind, message) =
                (ctx.library.clone(), spec.url.clone(), spec.kind, error.to_string());
            let at = crate::store::now().to_string();
            let failures = blocking(move || library.store().record_pull_failure(&url, kind, &at, &message))
                .await
                .unwrap_or(0);
            Err(SyncFailure { error, failures })
        }
    }
}

/// Pushes to `url` whenever the library changes (leading-edge debounce, see
/// [`PUSH_DEBOUNCE`]); retries with backoff after a failure. Ends when the
/// peer is no longer run.
pub(super) async fn push_on_change(weak: Weak<Inner>, url: String) {
    let Some(inner) = weak.upgrade() else { return };
    let mut changes = inner.library.subscribe();
    drop(inner);
    let said = Said::default();
    loop {
        changes.borrow_and_update();
        let (ctx, spec) = {
            let Some(inner) = weak.upgrade() else { return };
            let this = Federator(inner);
            let spec = this.0.peers.lock().await.get(&url).map(|r| r.spec.clone());
            let Some(spec) = spec.filter(|s| s.push) else { return };
            (this.context(), spec)
        };
        match push(&ctx, &spec).await {
            Ok(report) => {
                said.succeeded();
                if let Some(inner) = weak.upgrade() {
                    inner.trust.learned(&url, &report.instance);
                }
                if report.sent > 0 {
                    tracing::info!(peer = %url, sent = report.sent, acked = report.acked,
                        new = report.result.new_skills, updated = report.result.updated_skills,
                        rejected = report.result.rejected_skills, held = report.result.held_skills, "pushed");
                }
            }
            Err(failure) => {
                let wait = backoff::delay_after(failure.failures);
                if said.worth_a_warning(&failure.to_string()) {
                    tracing::warn!(peer = %url, failures = failure.failures, retry_in = ?wait, error = %failure,
                        "push failed; said once until it succeeds or fails otherwise (RUST_LOG=debug shows each)");
                } else {
                    tracing::debug!(peer = %url, failures = failure.failures, error = %failure, "push failed");
                }
                tokio::time::sleep(wait).await;
                continue;
            }
        }
        let pushed = tokio::time::Instant::now();
        if changes.changed().await.is_err() {
            return;
        }
        // Changes arriving meanwhile are kept by the watch and go out together.
        tokio::time::sleep_until(pushed + PUSH_DEBOUNCE).await;
    }
}
