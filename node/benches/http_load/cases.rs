//! The GET cases: a closed loop of keep-alive clients against one endpoint
//! for a fixed time, every latency kept; and the burst of full listings
//! right after a push.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::ensure;
use hyper::StatusCode;

use crate::Settings;
use crate::client::{Conn, REQUEST_LIMIT, connect, drain, fetch, get};
use crate::load::load;
use crate::node::NodeProcess;
use crate::sampler::{CpuMeter, CpuUse, RssSampler, memory_kib};
use crate::skills::{skill_packets, update_bodies};

/// One of the GET cases.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Case {
    Manifest,
    Skills,
    /// `?since=0`: every packet, as a new peer's first pull asks (#12 item 2).
    SinceZero,
    /// `?since=1`: all but the first packet, a run of the cached feed rather
    /// than the cached full listing.
    SinceOne,
    NotModified,
}

impl Case {
    pub(crate) const ALL: [Case; 5] =
        [Case::Manifest, Case::Skills, Case::SinceZero, Case::SinceOne, Case::NotModified];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Case::Manifest => "GET /ecp/manifest",
            Case::Skills => "GET /ecp/skills",
            Case::SinceZero => "GET /ecp/skills?since=0",
            Case::SinceOne => "GET /ecp/skills?since=1",
            Case::NotModified => "GET /ecp/skills 304",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Case::Manifest => "/ecp/manifest",
            Case::Skills | Case::NotModified => "/ecp/skills",
            Case::SinceZero => "/ecp/skills?since=0",
            Case::SinceOne => "/ecp/skills?since=1",
        }
    }

    fn expect(self) -> StatusCode {
        match self {
            Case::NotModified => StatusCode::NOT_MODIFIED,
            _ => StatusCode::OK,
        }
    }
}

/// The outcome of one closed-loop case.
pub(crate) struct CaseResult {
    pub(crate) case: Case,
    pub(crate) skills: usize,
    /// Every latency of the measured window, sorted, in nanoseconds.
    latencies: Vec<u64>,
    /// From the start of the window to the last completion in it.
    elapsed: Duration,
    bytes: u64,
    /// Answers with another status, or failed requests.
    pub(crate) errors: u64,
    pub(crate) cpu: CpuUse,
    pub(crate) rss_max_kib: u64,
}

impl CaseResult {
    fn requests(&self) -> usize {
        self.latencies.len()
    }

    pub(crate) fn rate(&self) -> f64 {
        self.requests() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile (0..=1) in milliseconds.
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * self.latencies.len() as f64).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[rank - 1] as f64 / 1e6
    }

    pub(crate) fn bytes_per_response(&self) -> u64 {
        self.bytes / self.requests().max(1) as u64
    }

    pub(crate) fn us_per_request(&self, cpu_secs: f64) -> f64 {
        cpu_secs * 1e6 / self.requests().max(1) as f64
    }

    /// CPU seconds as cores busy on average over the window.
    pub(crate) fn cores(&self, cpu_secs: f64) -> f64 {
        cpu_secs / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Checks one answer of the case before loading it, and returns the ETag the
/// 304 case sends.
async fn validate(addr: SocketAddr, case: Case, skills: usize, etag: Option<&str>) -> anyhow::Result<()> {
    let mut conn = connect(addr).await?;
    let (status, _, body) = fetch(&mut conn, addr, case.path(), etag).await?;
    ensure!(status == case.expect(), "{}: expected {}, got {status}", case.label(), case.expect());
    match case {
        Case::Manifest => {
            let manifest: serde_json::Value = serde_json::from_slice(&body)?;
            ensure!(
                manifest["skillCount"] == skills,
                "{}: skillCount is {}",
                case.label(),
                manifest["skillCount"]
            );
        }
        Case::Skills | Case::SinceZero | Case::SinceOne => {
            let update: serde_json::Value = serde_json::from_slice(&body)?;
            let served = update["skills"].as_array().map_or(0, Vec::len);
            // `?since=1` leaves out what the first change brought (a skill or a batch).
            let fits = if case == Case::SinceOne { served > 0 && served < skills } else { served == skills };
            ensure!(fits, "{}: {served} skills served, {skills} stored", case.label());
        }
        Case::NotModified => ensure!(body.is_empty(), "{}: a 304 with a body", case.label()),
    }
    Ok(())
}

/// Runs `case` with `settings.connections` closed-loop clients.
pub(crate) async fn run_case(
    settings: &Settings,
    node: &NodeProcess,
    case: Case,
    skills: usize,
    etag: Option<&str>,
) -> anyhow::Result<CaseResult> {
    validate(node.addr, case, skills, etag).await?;
    let mut conns = Vec::with_capacity(settings.connections);
    for _ in 0..settings.connections {
        conns.push(connect(node.addr).await?);
    }
    let sampler = RssSampler::start(node.pid());
    let begin = Instant::now();
    let measure_from = begin + settings.warmup;
    let end = measure_from + settings.secs;
    let workers: Vec<_> = conns
        .into_iter()
        .map(|conn| {
            let etag = etag.map(str::to_owned);
            tokio::spawn(worker(conn, node.addr, case, etag, measure_from, end))
        })
        .collect();
    tokio::time::sleep_until(measure_from.into()).await;
    let cpu = CpuMeter::begin(node.pid());
    let mut result = CaseResult {
        case,
        skills,
        latencies: Vec::new(),
        elapsed: Duration::ZERO,
        bytes: 0,
        errors: 0,
        cpu: CpuUse::default(),
        rss_max_kib: 0,
    };
    let mut last_done = measure_from;
    for worker in workers {
        let w = worker.await?;
        result.latencies.extend(w.latencies);
        result.bytes += w.bytes;
        result.errors += w.errors;
        last_done = last_done.max(w.last_done);
    }
    result.cpu = cpu.end();
    result.rss_max_kib = sampler.finish();
    result.elapsed = last_done - measure_from;
    result.latencies.sort_unstable();
    Ok(result)
}

/// What one connection measured.
struct WorkerResult {
    latencies: Vec<u64>,
    bytes: u64,
    errors: u64,
    last_done: Instant,
}

/// Sends requests back to back until `end`; records those started after `measure_from`.
async fn worker(
    mut conn: Conn,
    addr: SocketAddr,
    case: Case,
    etag: Option<String>,
    measure_from: Instant,
    end: Instant,
) -> WorkerResult {
    let mut out = WorkerResult { latencies: Vec::new(), bytes: 0, errors: 0, last_done: measure_from };
    loop {
        let sent = Instant::now();
        if sent >= end {
            break;
        }
        let exchange = async {
            conn.ready().await?;
            let response = conn.send_request(get(addr, case.path(), etag.as_deref())).await?;
            let status = response.status();
            Ok::<_, hyper::Error>((status, drain(response.into_body()).await?))
        };
        let answer = tokio::time::timeout(REQUEST_LIMIT, exchange).await.ok().and_then(Result::ok);
        let done = Instant::now();
        let measured = sent >= measure_from;
        match answer {
            Some((status, bytes)) => {
                if measured {
                    out.latencies.push((done - sent).as_nanos() as u64);
                    out.bytes += bytes;
                    out.last_done = done;
                    out.errors += u64::from(status != case.expect());
                }
            }
            None => {
                out.errors += 1;
                // The connection is gone or stuck; a closed-loop client opens another.
                match connect(addr).await {
                    Ok(fresh) => conn = fresh,
                    Err(_) => break,
                }
            }
        }
    }
    out
}

/// A push, then every connection asking for the full skill set at once.
pub(crate) struct Burst {
    pub(crate) elapsed: Duration,
    /// VmHWM afterwards, in KiB.
    pub(crate) peak_kib: u64,
}

/// Pushes one new skill, so the cached `GET /ecp/skills` answer is stale,
/// then sends `settings.connections` of those GETs at the same moment: the
/// memory a node needs when peers pull right after a change.
pub(crate) async fn burst_after_push(
    settings: &Settings,
    node: &NodeProcess,
    skills: usize,
) -> anyhow::Result<Burst> {
    load(node, &update_bodies(skill_packets(skills..skills + 1))?, 1).await?;
    let mut conns = Vec::with_capacity(settings.connections);
    for _ in 0..settings.connections {
        conns.push(connect(node.addr).await?);
    }
    let started = Instant::now();
    let gets: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let addr = node.addr;
            // Counted, not kept: 16 listings of 100,000 skills would be 3.5 GB in the client.
            tokio::spawn(async move {
                conn.ready().await?;
                let response = conn.send_request(get(addr, "/ecp/skills", None)).await?;
                let status = response.status();
                drain(response.into_body()).await?;
                Ok::<_, anyhow::Error>(status)
            })
        })
        .collect();
    for get in gets {
        let status = get.await??;
        ensure!(status == StatusCode::OK, "GET /ecp/skills after a push answered {status}");
    }
    Ok(Burst { elapsed: started.elapsed(), peak_kib: memory_kib(node.pid()).1 })
}
