//! Loading a node: every batch pushed in turn on one connection and timed,
//! each answer checked to add the whole batch.

use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use ecp_protocol::MergeResult;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};

use crate::client::{REQUEST_LIMIT, connect};
use crate::node::NodeProcess;
use crate::sampler::{CpuMeter, CpuUse, RssSampler};
use crate::skills::BATCH;

/// Loading the skills: the whole push, timed.
pub(crate) struct LoadResult {
    pub(crate) skills: usize,
    pub(crate) elapsed: Duration,
    /// Time of each batch, in order: a trend shows work growing with the store.
    batches: Vec<Duration>,
    pub(crate) bytes: usize,
    pub(crate) cpu: CpuUse,
    pub(crate) rss_max_kib: u64,
}

impl LoadResult {
    pub(crate) fn slowest_batch(&self) -> Duration {
        self.batches.iter().copied().max().unwrap_or_default()
    }

    /// Mean time of the first (`last == false`) or last ten batches, in ms.
    pub(crate) fn mean_of_ten_ms(&self, last: bool) -> f64 {
        let n = self.batches.len().min(10);
        let ten = if last { &self.batches[self.batches.len() - n..] } else { &self.batches[..n] };
        ten.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e3 / n.max(1) as f64
    }
}

/// Pushes every body in turn on one connection; each must add [`BATCH`] skills.
pub(crate) async fn load(node: &NodeProcess, bodies: &[Bytes], skills: usize) -> anyhow::Result<LoadResult> {
    let mut conn = connect(node.addr).await?;
    let sampler = RssSampler::start(node.pid());
    let cpu = CpuMeter::begin(node.pid());
    let started = Instant::now();
    let mut batches = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        let sent = Instant::now();
        let request = Request::builder()
            .method(Method::POST)
            .uri("/ecp/skills")
            .header(HOST, node.addr.to_string())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body.clone()))?;
        let exchange = async {
            conn.ready().await?;
            let response = conn.send_request(request).await?;
            let status = response.status();
            Ok::<_, hyper::Error>((status, response.into_body().collect().await?.to_bytes()))
        };
        let (status, answer) = tokio::time::timeout(REQUEST_LIMIT, exchange)
            .await
            .with_context(|| format!("batch {i}: no answer within {} s", REQUEST_LIMIT.as_secs()))??;
        batches.push(sent.elapsed());
        ensure!(status == StatusCode::OK, "batch {i}: {status}: {}", String::from_utf8_lossy(&answer));
        let result: MergeResult = serde_json::from_slice(&answer)
            .with_context(|| format!("batch {i}: the answer is not a MergeResult"))?;
        let expected = BATCH.min(skills - i * BATCH) as u64;
        ensure!(
            result.new_skills == expected && result.rejected_skills == 0,
            "batch {i}: expected newSkills={expected}, got {result:?}"
        );
    }
    let elapsed = started.elapsed();
    Ok(LoadResult {
        skills,
        elapsed,
        batches,
        bytes: bodies.iter().map(Bytes::len).sum(),
        cpu: cpu.end(),
        rss_max_kib: sampler.finish(),
    })
}
