//! Running a peer: its job in the cron scheduler (or, under
//! [`SCHEDULER_MIN_INTERVAL`], a plain timer), its ticks, and the [`Slot`]
//! that keeps rounds from overlapping and holds its backoff. What a round
//! does is [`rounds`](super::rounds)'s job.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_cron_scheduler::{Job, JobScheduler};

use crate::config::Schedule;

use super::PeerSpec;
use super::federator::{Federator, Inner, StartError};
use super::rounds::push_on_change;

/// Shortest interval run by the cron scheduler. It checks its jobs every
/// 500 ms and counts intervals in whole seconds, so a round starts up to
/// half a second late; shorter intervals run on a plain timer instead.
pub const SCHEDULER_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// The job scheduler (it has no `Debug` of its own).
#[derive(Clone)]
pub(super) struct Scheduler(JobScheduler);

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobScheduler")
    }
}

impl Scheduler {
    /// A running scheduler with no jobs.
    pub(super) async fn start() -> Result<Scheduler, StartError> {
        let scheduler = JobScheduler::new().await.map_err(|e| StartError(format!("{e:?}")))?;
        scheduler.start().await.map_err(|e| StartError(format!("{e:?}")))?;
        Ok(Scheduler(scheduler))
    }

    /// Stops it; its jobs never run again.
    pub(super) async fn shutdown(&self) {
        let mut scheduler = self.0.clone();
        if let Err(e) = scheduler.shutdown().await {
            tracing::debug!(error = ?e, "scheduler shutdown");
        }
    }
}

/// A peer being run.
#[derive(Debug)]
pub(super) struct Running {
    pub(super) spec: PeerSpec,
    pub(super) slot: Arc<Slot>,
    /// Its job in the scheduler (none for sub-second intervals).
    job: Option<uuid::Uuid>,
    /// Its timer (sub-second intervals), first round and push-on-change task.
    tasks: Vec<JoinHandle<()>>,
}

/// What survives a reload of a peer whose URL stays: the round lock and the backoff.
#[derive(Debug, Default)]
pub(super) struct Slot {
    /// Held while a round runs: a tick that cannot take it skips.
    pub(super) round: Arc<tokio::sync::Mutex<()>>,
    /// No round before this instant (backoff after failures).
    not_before: std::sync::Mutex<Option<Instant>>,
    /// The last round started, so that shutdown can stop it.
    current: std::sync::Mutex<Option<JoinHandle<()>>>,
    /// The last pull failure warned about: the same again is not.
    pub(super) said: super::backoff::Said,
}

impl Slot {
    /// Whether the peer's backoff has not passed yet.
    fn backing_off(&self) -> bool {
        self.not_before.lock().unwrap_or_else(|p| p.into_inner()).is_some_and(|t| Instant::now() < t)
    }

    /// Leaves the peer alone until `until` (`None`: no backoff).
    pub(super) fn back_off(&self, until: Option<Instant>) {
        *self.not_before.lock().unwrap_or_else(|p| p.into_inner()) = until;
    }

    /// Stops the last round started, if it still runs.
    pub(super) fn abort_round(&self) {
        if let Some(round) = self.current.lock().unwrap_or_else(|p| p.into_inner()).take() {
            round.abort();
        }
    }
}

type Tick = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The tick of `url`, if the federator still exists.
fn tick_of(weak: &Weak<Inner>, url: &str) -> Tick {
    let (weak, url) = (weak.clone(), url.to_owned());
    Box::pin(async move {
        if let Some(inner) = weak.upgrade() {
            Federator(inner).tick(&url).await;
        }
    })
}

impl Federator {
    /// Starts a peer's schedule (and first round) and its push-on-change task.
    pub(super) async fn launch(&self, spec: PeerSpec, slot: Arc<Slot>) -> Running {
        let weak = Arc::downgrade(&self.0);
        let url = spec.url.clone();
        let mut tasks = Vec::new();
        let mut job = None;
        match &spec.schedule {
            Schedule::Every(every) if *every < SCHEDULER_MIN_INTERVAL => {
                let (every, weak, url) = (*every, weak.clone(), url.clone());
                tasks.push(tokio::spawn(async move {
                    let mut timer = tokio::time::interval(every);
                    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    loop {
                        timer.tick().await;
                        tick_of(&weak, &url).await;
                    }
                }));
            }
            schedule => {
                let (w, u) = (weak.clone(), url.clone());
                let run = move |_, _| tick_of(&w, &u);
                let made = match schedule {
                    Schedule::Every(every) => {
                        Job::new_repeated_async(Duration::from_secs(every.as_secs()), run)
                    }
                    Schedule::Cron(expr) => Job::new_async(expr.as_str(), run),
                };
                match made {
                    Ok(made) => match self.0.scheduler.0.add(made).await {
                        Ok(id) => job = Some(id),
                        Err(e) => tracing::error!(peer = %url, error = ?e, "cannot schedule the peer"),
                    },
                    Err(e) => tracing::error!(peer = %url, error = ?e, "cannot schedule the peer"),
                }
                tasks.push(tokio::spawn(tick_of(&weak, &url)));
            }
        }
        if spec.push {
            tasks.push(tokio::spawn(push_on_change(weak, url)));
        }
        Running { spec, slot, job, tasks }
    }

    /// Stops a peer's schedule and tasks (a round already running finishes).
    pub(super) async fn stop(&self, running: Running) {
        for task in &running.tasks {
            task.abort();
        }
        if let Some(id) = running.job
            && let Err(e) = self.0.scheduler.0.remove(&id).await
        {
            tracing::debug!(error = ?e, "scheduler job already gone");
        }
        tracing::debug!(peer = %running.spec.url, "peer stopped");
    }

    /// One scheduled tick: starts a round in its own task unless the last one
    /// still runs or the peer's backoff has not passed.
    async fn tick(&self, url: &str) {
        let (spec, slot) = {
            let peers = self.0.peers.lock().await;
            let Some(r) = peers.get(url) else { return };
            (r.spec.clone(), Arc::clone(&r.slot))
        };
        if !spec.pull && self.0.trust.instance_of(&spec).is_some() {
            return;
        }
        if slot.backing_off() {
            tracing::trace!(peer = %url, "backing off; round skipped");
            return;
        }
        let Ok(guard) = Arc::clone(&slot.round).try_lock_owned() else {
            tracing::debug!(peer = %url, "the previous round still runs; round skipped");
            return;
        };
        let (this, in_round) = (self.clone(), Arc::clone(&slot));
        let round = tokio::spawn(async move {
            let _guard = guard;
            this.round(&spec, &in_round).await;
        });
        *slot.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(round);
    }
}
