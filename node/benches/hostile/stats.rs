//! What the actors keep: latencies, and counts of outcomes by name.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Latencies, in nanoseconds.
#[derive(Default)]
pub(crate) struct Latencies {
    ns: Vec<u64>,
}

impl Latencies {
    pub(crate) fn record(&mut self, took: Duration) {
        self.ns.push(took.as_nanos() as u64);
    }

    pub(crate) fn len(&self) -> usize {
        self.ns.len()
    }

    /// The `q` quantile (0..=1) in milliseconds; NaN when there is none.
    pub(crate) fn quantile_ms(&mut self, q: f64) -> f64 {
        if self.ns.is_empty() {
            return f64::NAN;
        }
        self.ns.sort_unstable();
        let rank = ((q * self.ns.len() as f64).ceil() as usize).clamp(1, self.ns.len());
        self.ns[rank - 1] as f64 / 1e6
    }
}

/// The soak's tally, shared by every actor.
#[derive(Default)]
pub(crate) struct Tally {
    legit: Mutex<Legit>,
    /// `"actor: outcome"` → how often.
    hostile: Mutex<BTreeMap<String, u64>>,
}

/// The legitimate requests.
#[derive(Default)]
pub(crate) struct Legit {
    pub(crate) latencies: Latencies,
    /// Requests by kind (`push`, `manifest`, …).
    pub(crate) by_kind: BTreeMap<&'static str, u64>,
    pub(crate) errors: u64,
    /// The first errors, word for word.
    pub(crate) first_errors: Vec<String>,
}

impl Tally {
    /// A legitimate request of `kind` that took `took`; `Err` says why it failed.
    pub(crate) fn legit(&self, kind: &'static str, took: Duration, outcome: Result<(), String>) {
        let mut legit = self.legit.lock().unwrap_or_else(|p| p.into_inner());
        legit.latencies.record(took);
        *legit.by_kind.entry(kind).or_insert(0) += 1;
        if let Err(why) = outcome {
            legit.errors += 1;
            if legit.first_errors.len() < 10 {
                // Printed as it happens too, to be matched with the node's log.
                eprintln!("{} legitimate {kind} failed: {why}", chrono::Utc::now().format("%H:%M:%S"));
                legit.first_errors.push(format!("{kind}: {why}"));
            }
        }
    }

    /// A hostile request of `actor` ended as `outcome` (a status, `reset`, …).
    pub(crate) fn hostile(&self, actor: &str, outcome: impl std::fmt::Display) {
        let mut hostile = self.hostile.lock().unwrap_or_else(|p| p.into_inner());
        *hostile.entry(format!("{actor}: {outcome}")).or_insert(0) += 1;
    }

    /// The legitimate side so far, with `f`.
    pub(crate) fn with_legit<T>(&self, f: impl FnOnce(&mut Legit) -> T) -> T {
        f(&mut self.legit.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The hostile outcomes so far.
    pub(crate) fn hostile_counts(&self) -> BTreeMap<String, u64> {
        self.hostile.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
