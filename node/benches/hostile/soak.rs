//! `soak` (#12): `ECP_SOAK_MINUTES` (30) of mixed hostile and legitimate
//! traffic against ONE node (A), with a second real node (B) pulling from it
//! every 10 s. A holds a legacy secret, so every request must be signed; the
//! hostile peers hold it too (a peer can turn hostile), the strangers do not.
//!
//! Goal: A's peak RSS ≤ 150 MB, and no legitimate request failed — neither
//! the bench's own (pushes from 127.0.0.1, manifest and listing reads) nor
//! B's pulls (B's `/v1/peers` is polled for failures).
//!
//! This file runs the soak, samples the nodes and prints the report; the
//! actors are in `attack` and `legit`, the requests they share below.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HOST, HeaderName};
use hyper::{HeaderMap, Method, Request, StatusCode};

use crate::client::{Conn, handshake};
use crate::node::NodeProcess;
use crate::raw::connect_from;
use crate::sampler::memory_kib;
use crate::stats::Tally;
use crate::{Settings, attack, legit, mb};

/// A's legacy secret (`X-ECP-HMAC`), known to the legitimate client, to B
/// and to the hostile peers.
pub(crate) const SECRET: &str = "soak-secret-not-for-production-7f3a91";
/// How often B pulls from A.
const PULL_EVERY: &str = "10s";

/// What every actor needs.
pub(crate) struct Ctx {
    /// Node A.
    pub(crate) addr: SocketAddr,
    /// When the actors stop.
    pub(crate) until: Instant,
    pub(crate) tally: Tally,
    /// The soak is a few seconds of smoke test (`cargo test --benches`).
    pub(crate) smoke: bool,
}

impl Ctx {
    pub(crate) fn running(&self) -> bool {
        Instant::now() < self.until
    }

    /// Sleeps `d`, or until the end; whether the soak is still running.
    pub(crate) async fn pause(&self, d: Duration) -> bool {
        tokio::time::sleep_until((Instant::now() + d).min(self.until).into()).await;
        self.running()
    }
}

/// A GET of `path_and_query`, signed with `X-ECP-HMAC` (which covers the path).
pub(crate) fn signed_get(addr: SocketAddr, path_and_query: &str, etag: Option<&str>) -> Request<Full<Bytes>> {
    let path = path_and_query.split('?').next().unwrap_or(path_and_query);
    let mut request = crate::client::get(addr, path_and_query, etag);
    let hmac = ecp_protocol::legacy_auth::sign_get(SECRET.as_bytes(), path);
    request.headers_mut().insert(HeaderName::from_static("x-ecp-hmac"), hmac.parse().expect("hex"));
    request
}

/// A POST of an update to `/ecp/skills`, signed with `X-ECP-HMAC` unless `hmac` says otherwise.
pub(crate) fn post(addr: SocketAddr, body: Bytes, hmac: Option<String>) -> Request<Full<Bytes>> {
    let hmac = hmac.unwrap_or_else(|| ecp_protocol::legacy_auth::sign_post(SECRET.as_bytes(), &body));
    Request::builder()
        .method(Method::POST)
        .uri("/ecp/skills")
        .header(HOST, addr.to_string())
        .header(CONTENT_TYPE, "application/json")
        .header("x-ecp-hmac", hmac)
        .body(Full::new(body))
        .expect("a POST with valid headers")
}

/// A keep-alive connection from `from` (127.0.0.1 for the legitimate
/// client), opened on first use and again after an error.
pub(crate) struct Client {
    from: IpAddr,
    to: SocketAddr,
    conn: Option<Conn>,
}

/// An answer: status, headers, body.
pub(crate) type Answer = (StatusCode, HeaderMap, Bytes);

impl Client {
    pub(crate) fn new(from: IpAddr, to: SocketAddr) -> Client {
        Client { from, to, conn: None }
    }

    /// Sends `request` and reads the whole answer within `limit`.
    pub(crate) async fn send(
        &mut self,
        request: Request<Full<Bytes>>,
        limit: Duration,
    ) -> anyhow::Result<Answer> {
        let exchange = async {
            // The node closes a keep-alive connection idle for longer than
            // its header read timeout (10 s): a client opens a new one then,
            // as nothing was sent on the old.
            let idle_closed = match self.conn.as_mut() {
                Some(conn) => conn.ready().await.is_err(),
                None => true,
            };
            if idle_closed {
                let mut conn = handshake(connect_from(self.from, self.to).await?).await?;
                conn.ready().await?;
                self.conn = Some(conn);
            }
            let conn = self.conn.as_mut().expect("just opened");
            let response = conn.send_request(request).await?;
            let (parts, body) = response.into_parts();
            Ok::<_, anyhow::Error>((parts.status, parts.headers, body.collect().await?.to_bytes()))
        };
        let answer = match tokio::time::timeout(limit, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(anyhow::anyhow!("no answer within {} s", limit.as_secs())),
        };
        if answer.is_err() {
            self.conn = None;
        }
        answer
    }
}

pub(crate) async fn run(settings: &Settings) -> anyhow::Result<()> {
    // Trust 0.9 for unconfigured senders, so that what the legitimate client
    // pushes travels on to B: at the default 0.6, a packet of confidence 0.9
    // is stored at 0.54 and a second hop falls under the 0.6 threshold.
    let config = tempfile::NamedTempFile::new()?;
    std::fs::write(config.path(), "[policy]\ndefault_trust = 0.9\n")?;
    let a_args = [
        "--secret".to_owned(),
        SECRET.to_owned(),
        "--config".to_owned(),
        config.path().display().to_string(),
    ];
    let a = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), &[], &a_args).await?;
    let peers = tempfile::NamedTempFile::new()?;
    std::fs::write(
        peers.path(),
        format!(
            "[federation]\ninterval = \"{PULL_EVERY}\"\n[discovery]\nenabled = false\n\n[[peer]]\n\
             url = \"http://{}\"\nsecret = \"{SECRET}\"\nlegacy = true\ntrust = 0.9\npull = true\npush = false\n",
            a.addr
        ),
    )?;
    let b_args = ["--peers".to_owned(), peers.path().display().to_string()];
    // A passes on up to 2,000 skills an hour from each hostile sender it
    // admits, besides the legitimate ones: over B's default per-sender
    // limit for A, which would hold A's legitimate skills back. An operator
    // sizes a big peer's limit; here it is off, and the origin limits stay.
    let b_env = [("ECP_SENDER_LIMIT_HOUR", "0"), ("ECP_SENDER_LIMIT_DAY", "0")];
    let b = NodeProcess::start(&settings.bin, settings.data_root.as_deref(), &b_env, &b_args).await?;
    println!(
        "A (pid {}) on {}, B (pid {}) on {} pulling from A every {PULL_EVERY}; {:.1} minutes",
        a.pid(),
        a.addr,
        b.pid(),
        b.addr,
        settings.soak.as_secs_f64() / 60.0
    );
    let started = Instant::now();
    let ctx = Arc::new(Ctx {
        addr: a.addr,
        until: started + settings.soak,
        tally: Tally::default(),
        smoke: settings.smoke,
    });
    let mut actors = attack::spawn(&ctx);
    let pushed = Arc::new(std::sync::Mutex::new(Vec::new()));
    actors.extend(legit::spawn(&ctx, pushed.clone()));

    let mut watch = Watch::default();
    let report_every = if settings.smoke { Duration::from_secs(2) } else { Duration::from_secs(60) };
    let mut next_report = started + report_every;
    while ctx.running() {
        watch.sample(&a, &b).await;
        if Instant::now() >= next_report {
            next_report += report_every;
            let (requests, errors) = ctx.tally.with_legit(|l| (l.latencies.len(), l.errors));
            println!(
                "{:>5.1} min: A VmRSS {:.1} MB (peak {:.1}), data {:.1} MB; B VmRSS {:.1} MB; legit {requests} \
                 requests, {errors} failed; B's failed pulls {}",
                started.elapsed().as_secs_f64() / 60.0,
                mb(memory_kib(a.pid()).0),
                mb(memory_kib(a.pid()).1),
                watch.data_max as f64 / 1e6,
                mb(memory_kib(b.pid()).0),
                watch.pull_failures,
            );
        }
        ctx.pause(Duration::from_secs(5)).await;
    }
    for actor in actors {
        actor.await?;
    }
    let pushed = pushed.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let converged = legit::converged(&b, &pushed).await;
    watch.sample(&a, &b).await;
    report(&ctx, &a, &b, &watch, converged, started.elapsed()).await
}

/// What is sampled every few seconds.
#[derive(Default)]
struct Watch {
    data_max: u64,
    /// B's failed rounds against A: the rises of its consecutive-failure count.
    pull_failures: i64,
    /// That count at the last sample.
    last_failures: i64,
    /// B's distinct last errors.
    pull_errors: Vec<String>,
    /// B's cursor and packets received at the last sample.
    pull_cursor: i64,
    pull_packets: i64,
}

impl Watch {
    async fn sample(&mut self, a: &NodeProcess, b: &NodeProcess) {
        self.data_max = self.data_max.max(a.data_bytes());
        let Ok(token) = b.api_token() else { return };
        let mut local = Client::new(IpAddr::from([127, 0, 0, 1]), b.addr);
        let request = crate::client::get_v1(b.addr, "/v1/peers", &token);
        let Ok((StatusCode::OK, _, body)) = local.send(request, Duration::from_secs(30)).await else {
            return;
        };
        let Ok(peers) = serde_json::from_slice::<serde_json::Value>(&body) else { return };
        for peer in peers["peers"].as_array().into_iter().flatten() {
            let failures = peer["failures"].as_i64().unwrap_or(0);
            // The count rises with each failed round and drops to 0 on a success.
            self.pull_failures +=
                if failures >= self.last_failures { failures - self.last_failures } else { failures };
            self.last_failures = failures;
            let error = peer["lastError"].as_str().unwrap_or("");
            if failures > 0 && !error.is_empty() && !self.pull_errors.iter().any(|e| e == error) {
                self.pull_errors.push(error.to_owned());
            }
            self.pull_cursor = peer["cursor"].as_i64().unwrap_or(0);
            self.pull_packets = peer["packetsReceived"].as_i64().unwrap_or(0);
        }
    }
}

async fn report(
    ctx: &Ctx,
    a: &NodeProcess,
    b: &NodeProcess,
    watch: &Watch,
    converged: anyhow::Result<usize>,
    took: Duration,
) -> anyhow::Result<()> {
    let (_, a_peak) = memory_kib(a.pid());
    let (_, b_peak) = memory_kib(b.pid());
    let mut local = Client::new(IpAddr::from([127, 0, 0, 1]), a.addr);
    let status = local
        .send(crate::client::get_v1(a.addr, "/v1/status", &a.api_token()?), Duration::from_secs(30))
        .await
        .context("A's /v1/status")?;
    let status: serde_json::Value = serde_json::from_slice(&status.2)?;
    println!("\n## soak: {:.1} minutes against one node", took.as_secs_f64() / 60.0);
    println!(
        "A: VmHWM (peak RSS) {:.1} MB; data folder at most {:.1} MB, {:.1} MB at the end",
        mb(a_peak),
        watch.data_max as f64 / 1e6,
        a.data_bytes() as f64 / 1e6
    );
    println!(
        "A's store at the end: {} local, {} external skills, {} held in quarantine; B: VmHWM {:.1} MB",
        status["localSkills"],
        status["externalSkills"],
        status["quarantineHeld"],
        mb(b_peak)
    );
    let (requests, errors, p50, p99, max, by_kind, first) = ctx.tally.with_legit(|l| {
        (
            l.latencies.len(),
            l.errors,
            l.latencies.quantile_ms(0.5),
            l.latencies.quantile_ms(0.99),
            l.latencies.quantile_ms(1.0),
            l.by_kind.clone(),
            l.first_errors.clone(),
        )
    });
    println!(
        "legitimate requests: {requests} ({by_kind:?}), {errors} failed; p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms"
    );
    for error in &first {
        println!("  failed: {error}");
    }
    println!(
        "B's pulls of A: failed rounds {} {:?}; cursor {}, packets received {}; {}",
        watch.pull_failures,
        watch.pull_errors,
        watch.pull_cursor,
        watch.pull_packets,
        match &converged {
            Ok(n) => format!("B holds all {n} skills the legitimate client pushed"),
            Err(e) => format!("B does NOT hold what was pushed: {e:#}"),
        }
    );
    let log = std::fs::read_to_string(&a.log).unwrap_or_default();
    let level = |l: &str| log.lines().filter(|line| line.contains(l)).count();
    println!("A's log: {} lines, {} WARN, {} ERROR", log.lines().count(), level(" WARN"), level("ERROR"));
    for line in log.lines().filter(|l| l.contains("ERROR")).take(5) {
        println!("  {line}");
    }
    println!("hostile outcomes:");
    for (what, n) in ctx.tally.hostile_counts() {
        println!("  {what}: {n}");
    }
    let verdict = |ok: bool| if ok { "PASS" } else { "MISS" };
    let legit_ok = errors == 0 && watch.pull_failures == 0 && converged.is_ok();
    println!("\n| goal | measured | |\n|---|---|---|");
    println!("| A's peak RSS ≤ 150 MB | {:.1} MB | {} |", mb(a_peak), verdict(mb(a_peak) <= 150.0));
    println!(
        "| no legitimate request failed | {errors} of {requests}; B's pull failures {} | {} |",
        watch.pull_failures,
        verdict(legit_ok)
    );
    Ok(())
}
