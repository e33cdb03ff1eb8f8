//! The node's Prometheus metrics: one registry per node, its series, and
//! how each is fed. `GET /metrics` ([`crate::http`]) encodes them.
//!
//! Built on `prometheus-client`, the Prometheus project's own Rust client:
//! a registry is a value, not a process-wide recorder, so every node (and
//! every in-process test node) counts on its own; label sets are types, so
//! a series cannot be fed a label it does not declare.
//!
//! How each series is fed:
//! - decisions: from the audit log, after each commit
//!   ([`crate::store::Store::observe_audit`]) — every merge decision and
//!   operator action is an audit entry, so they are counted where they are
//!   recorded, once, and only when committed;
//! - requests, latency, body bytes, rate-limited requests: the HTTP layer
//!   (`http/observe.rs`);
//! - pulls and pushes: the federation's [`crate::federation::pull()`] and
//!   [`crate::federation::push()`];
//! - refused connections: the accept loop ([`crate::serve`]);
//! - skills, quarantine, inbox, peers' last success, the replay cache,
//!   the outcomes agents reported and the retired skills (#19):
//!   gauges read from the store (and the nonce memory) when scraped
//!   ([`Metrics::refresh`]).

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::library::Library;
use crate::store::{AuditEntry, StoreError};

/// The media type of [`Metrics::encode`]'s text (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A decision: the audit entry's label split at `:` (`rejected:scan` is
/// decision `rejected`, stage `scan`; `new` is decision `new`, stage `none`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: String,
    stage: String,
}

/// A request: the route template (never the raw path), method and status.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

/// A route and method, for the latency histogram.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    method: String,
}

/// A peer (its URL) and how a round with it ended (`ok` or `error`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerResult {
    peer: String,
    result: &'static str,
}

/// A peer, by URL.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerLabel {
    peer: String,
}

/// A kind of skill held: `own` (shared), `private`, `received`, `tombstone`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

/// How a reported use went: `success` or `failure`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// Request or response bodies: `in` or `out`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirectionLabel {
    direction: &'static str,
}

/// The node's metrics (see the module doc for what feeds each).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    decisions: Family<DecisionLabels, Counter>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    body_bytes: Family<DirectionLabel, Counter>,
    rate_limited: Counter,
    connections_refused: Counter,
    pulls: Family<PeerResult, Counter>,
    pushes: Family<PeerResult, Counter>,
    peer_last_success: Family<PeerLabel, Gauge<f64, AtomicU64>>,
    skills: Family<KindLabel, Gauge>,
    quarantine: Gauge,
    inbox: Gauge,
    replay_cache: Gauge,
    outcomes: Family<OutcomeLabel, Gauge>,
    retired: Gauge,
}

/// Request latency buckets: 1 ms to about 16 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ecp");
        let metrics = Metrics {
            decisions: Family::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            body_bytes: Family::default(),
            rate_limited: Counter::default(),
            connections_refused: Counter::default(),
            pulls: Family::default(),
            pushes: Family::default(),
            peer_last_success: Family::default(),
            skills: Family::default(),
            quarantine: Gauge::default(),
            inbox: Gauge::default(),
            replay_cache: Gauge::default(),
            outcomes: Family::default(),
            retired: Gauge::default(),
            registry: Registry::default(),
        };
        let r = &mut registry;
        r.register(
            "decisions",
            "Merge decisions and operator actions, by decision and refusing stage (the audit log's entries)",
            metrics.decisions.clone(),
        );
        r.register(
            "http_requests",
            "HTTP requests answered, by route template, method and status",
            metrics.requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request (to its headers), by route template and method",
            metrics.latency.clone(),
        );
        r.register(
            "http_body_bytes",
            "HTTP body bytes received (in) and sent (out)",
            metrics.body_bytes.clone(),
        );
        r.register(
            "rate_limited_requests",
            "Requests refused with 429 by the per-client rate limit",
            metrics.rate_limited.clone(),
        );
        r.register(
            "connections_refused",
            "Connections closed at once: an address over its share, or every slot taken",
            metrics.connections_refused.clone(),
        );
        r.register("pulls", "Pull rounds, by peer URL and result (ok, error)", metrics.pulls.clone());
        r.register("pushes", "Pushes, by peer URL and result (ok, error)", metrics.pushes.clone());
        r.register(
            "peer_last_success_timestamp_seconds",
            "When a pull round from the peer last completed (Unix time)",
            metrics.peer_last_success.clone(),
        );
        r.register(
            "skills",
            "Skills held, by kind: own (shared), private, received, tombstone",
            metrics.skills.clone(),
        );
        r.register("quarantine_held", "Quarantine entries waiting for review", metrics.quarantine.clone());
        r.register("inbox_waiting", "Skills from peers waiting in the inbox", metrics.inbox.clone());
        r.register(
            "replay_cache_entries",
            "Signed requests remembered against replay (up to replay_cache_capacity)",
            metrics.replay_cache.clone(),
        );
        r.register(
            "outcomes",
            "Uses of skills agents reported, by outcome (success, failure), all skills together",
            metrics.outcomes.clone(),
        );
        r.register(
            "skills_retired",
            "Skills retired for failing (kept in the store, out of the skills folder)",
            metrics.retired.clone(),
        );
        Metrics { registry, ..metrics }
    }
}

impl Metrics {
    /// Counts the decisions of committed audit entries. A summary line of
    /// unchanged packets or echoes (`unchanged`, `echo`, reason `"N
    /// packets"`) counts N.
    pub fn record_audit(&self, entries: &[AuditEntry]) {
        for entry in entries {
            let (decision, stage) = entry.decision.split_once(':').unwrap_or((&entry.decision, "none"));
            let count = match (decision, entry.reason.strip_suffix(" packets")) {
                ("unchanged" | "echo", Some(n)) => n.parse().unwrap_or(1),
                _ => 1,
            };
            let labels = DecisionLabels { decision: decision.to_owned(), stage: stage.to_owned() };
            self.decisions.get_or_create(&labels).inc_by(count);
        }
    }

    /// Counts one answered request: its route template (`None`: no route
    /// matched), method, status and time to answer. Templates are written
    /// `/v1/skills/:name`, not axum's `/v1/skills/{name}`: a `}` inside a
    /// label value is valid, but some scrapers' parsers cut the labels there.
    pub fn request(&self, route: Option<&str>, method: &str, status: u16, took: Duration) {
        let route = match route {
            Some(template) => template.replace('{', ":").replace('}', ""),
            None => "unmatched".to_owned(),
        };
        // Only the methods the router knows: any other token would be a new series.
        let method = match method {
            "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS" => method,
            _ => "other",
        }
        .to_owned();
        self.requests
            .get_or_create(&RequestLabels { route: route.clone(), method: method.clone(), status })
            .inc();
        self.latency.get_or_create(&RouteLabels { route, method }).observe(took.as_secs_f64());
    }

    /// The counter of body bytes received.
    pub fn bytes_in(&self) -> Counter {
        self.body_bytes.get_or_create_owned(&DirectionLabel { direction: "in" })
    }

    /// The counter of body bytes sent.
    pub fn bytes_out(&self) -> Counter {
        self.body_bytes.get_or_create_owned(&DirectionLabel { direction: "out" })
    }

    /// Counts a request refused by the per-client rate limit.
    pub fn rate_limited(&self) {
        self.rate_limited.inc();
    }

    /// Counts a connection the accept loop refused.
    pub fn connection_refused(&self) {
        self.connections_refused.inc();
    }

    /// Counts a pull round from `peer` that ended `ok` or not.
    pub fn pulled(&self, peer: &str, ok: bool) {
        self.pulls.get_or_create(&PeerResult { peer: peer.to_owned(), result: result(ok) }).inc();
    }

    /// Counts a push to `peer` that ended `ok` or not.
    pub fn pushed(&self, peer: &str, ok: bool) {
        self.pushes.get_or_create(&PeerResult { peer: peer.to_owned(), result: result(ok) }).inc();
    }

    /// Sets the gauges read from the store: skills by kind, quarantine,
    /// inbox, outcomes, retired skills, each peer's last success; blocking.
    pub fn refresh(&self, library: &Library) -> Result<(), StoreError> {
        let store = library.store();
        let summary = store.summary()?;
        for (kind, count) in [
            ("own", summary.local_skills - summary.private_skills),
            ("private", summary.private_skills),
            ("received", summary.external_skills),
            ("tombstone", summary.tombstones),
        ] {
            self.skills.get_or_create(&KindLabel { kind }).set(count);
        }
        self.quarantine.set(summary.quarantine_held);
        self.inbox.set(summary.inbox_waiting);
        let (uses, successes) = store.outcome_totals()?;
        self.outcomes.get_or_create(&OutcomeLabel { outcome: "success" }).set(successes);
        self.outcomes.get_or_create(&OutcomeLabel { outcome: "failure" }).set(uses - successes);
        self.retired.set(i64::try_from(store.retired_names()?.len()).unwrap_or(i64::MAX));
        // Peers forgotten since the last scrape leave the series.
        self.peer_last_success.clear();
        for peer in store.peer_states()? {
            let Some(at) =
                peer.last_success.as_deref().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            else {
                continue;
            };
            let seconds = at.timestamp_millis() as f64 / 1000.0;
            self.peer_last_success.get_or_create(&PeerLabel { peer: peer.url }).set(seconds);
        }
        Ok(())
    }

    /// Sets the replay cache's size (signed requests remembered).
    pub fn set_replay_cache(&self, entries: usize) {
        self.replay_cache.set(i64::try_from(entries).unwrap_or(i64::MAX));
    }

    /// Every series in the Prometheus text format ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
            .expect("writing to a String does not fail");
        text
    }
}

fn result(ok: bool) -> &'static str {
    if ok { "ok" } else { "error" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(decision: &str, reason: &str) -> AuditEntry {
        AuditEntry {
            id: 1,
            at: "2026-01-01T00:00:00Z".into(),
            peer: "peer:x".into(),
            skill_name: "s".into(),
            decision: decision.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn decisions_are_split_at_the_stage_and_unchanged_and_echo_summaries_count_their_packets() {
        let m = Metrics::default();
        m.record_audit(&[
            entry("new", "confidence 0.5"),
            entry("rejected:scan", "curl | sh"),
            entry("rejected:scan", "rm -rf"),
            entry("unchanged", "7 packets"),
            entry("echo", "3 packets"),
        ]);
        let text = m.encode();
        assert!(text.contains(r#"ecp_decisions_total{decision="echo",stage="none"} 3"#), "{text}");
        assert!(text.contains(r#"ecp_decisions_total{decision="new",stage="none"} 1"#), "{text}");
        assert!(text.contains(r#"ecp_decisions_total{decision="rejected",stage="scan"} 2"#), "{text}");
        assert!(text.contains(r#"ecp_decisions_total{decision="unchanged",stage="none"} 7"#), "{text}");
    }

    #[test]
    fn unknown_methods_and_unmatched_routes_do_not_become_series_of_their_own() {
        let m = Metrics::default();
        m.request(None, "BREW", 404, Duration::from_millis(2));
        m.request(Some("/v1/skills/{name}/share"), "GET", 200, Duration::from_millis(2));
        let text = m.encode();
        assert!(text.contains(r#"route="unmatched",method="other",status="404""#), "{text}");
        assert!(text.contains(r#"route="/v1/skills/:name/share",method="GET",status="200""#), "{text}");
        assert!(!text.contains("BREW"));
    }
}
