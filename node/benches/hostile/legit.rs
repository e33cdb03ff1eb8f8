//! The soak's legitimate traffic, from 127.0.0.1 and signed: a pusher of new
//! and updated skills within the default limits, and a reader of the
//! manifest, the listing (with its ETag) and the incremental pages. Every
//! request counts; one that fails or answers an unexpected status is an
//! error. Last, whether node B came to hold every pushed skill.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ecp_protocol::{MergeResult, Origin, SkillPacket, Timestamp};
use hyper::StatusCode;
use hyper::header::ETAG;
use tokio::task::JoinHandle;

use crate::client::{connect, fetch};
use crate::node::NodeProcess;
use crate::skills::{skill_packets, update_bodies};
use crate::soak::{Answer, Client, Ctx, post, signed_get};

/// The legitimate client's address.
const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
/// The longest a legitimate request may take before it counts as failed.
const LIMIT: Duration = Duration::from_secs(30);
/// New skills per push, plus one update of an earlier one: 720 an hour at
/// one push every 20 s, within the default per-origin limit (1,000 an hour).
const NEW_PER_PUSH: usize = 3;

/// Starts the legitimate actors; `pushed` collects the names of the skills
/// the node accepted.
pub(crate) fn spawn(ctx: &Arc<Ctx>, pushed: Arc<Mutex<Vec<String>>>) -> Vec<JoinHandle<()>> {
    vec![tokio::spawn(pusher(ctx.clone(), pushed)), tokio::spawn(reader(ctx.clone()))]
}

/// Sends `request` as a legitimate request of `kind`; `expect` says which
/// statuses are right. The answer, when it came.
async fn timed(
    ctx: &Ctx,
    client: &mut Client,
    kind: &'static str,
    request: hyper::Request<http_body_util::Full<hyper::body::Bytes>>,
    expect: &[StatusCode],
) -> Option<Answer> {
    let sent = Instant::now();
    let answer = client.send(request, LIMIT).await;
    let outcome = match &answer {
        Ok((status, _, _)) if expect.contains(status) => Ok(()),
        Ok((status, _, body)) => {
            Err(format!("{status}: {}", String::from_utf8_lossy(&body[..body.len().min(300)])))
        }
        Err(e) => Err(format!("{e:#}")),
    };
    let ok = outcome.is_ok();
    ctx.tally.legit(kind, sent.elapsed(), outcome);
    answer.ok().filter(|_| ok)
}

async fn pusher(ctx: Arc<Ctx>, pushed: Arc<Mutex<Vec<String>>>) {
    let mut client = Client::new(LOCAL, ctx.addr);
    let every = if ctx.smoke { Duration::from_secs(1) } else { Duration::from_secs(20) };
    let mut round = 0;
    while ctx.running() {
        let first = round * NEW_PER_PUSH;
        let mut packets = skill_packets(first..first + NEW_PER_PUSH);
        if round > 0 {
            packets.push(revised(&skill_packets(round - 1..round)[0], round));
        }
        let count = packets.len() as u64;
        let names: Vec<String> = packets[..NEW_PER_PUSH].iter().map(|p| p.skill_name.clone()).collect();
        let body = update_bodies(packets).expect("skills encode").remove(0);
        if let Some((_, _, answer)) =
            timed(&ctx, &mut client, "push", post(ctx.addr, body, None), &[StatusCode::OK]).await
        {
            match serde_json::from_slice::<MergeResult>(&answer) {
                Ok(r) if r.new_skills + r.updated_skills == count && r.rejected_skills == 0 => {
                    pushed.lock().unwrap_or_else(|p| p.into_inner()).extend(names);
                }
                other => {
                    ctx.tally.legit("push result", Duration::ZERO, Err(format!("{count} sent: {other:?}")))
                }
            }
        }
        round += 1;
        ctx.pause(every).await;
    }
}

/// `packet` again, with a revised body: an update from its own origin.
fn revised(packet: &SkillPacket, round: usize) -> SkillPacket {
    let origin = Origin {
        instance: packet.origin_instance.clone(),
        user_hash: packet.origin_user_hash.clone(),
        os: packet.origin_os.clone(),
        version: packet.origin_version.clone(),
    };
    let body = format!("{}\nRevised in round {round}.\n", packet.skill_body);
    let now = Timestamp::from_datetime(chrono::Utc::now());
    SkillPacket::new(&origin, &packet.skill_name, &packet.skill_description, &body, 0.9, now)
        .with_tags(packet.tags.clone())
}

async fn reader(ctx: Arc<Ctx>) {
    let mut client = Client::new(LOCAL, ctx.addr);
    let (mut etag, mut cursor) = (None::<String>, 0i64);
    while ctx.pause(Duration::from_secs(1)).await {
        timed(&ctx, &mut client, "manifest", signed_get(ctx.addr, "/ecp/manifest", None), &[StatusCode::OK])
            .await;
        let listing = signed_get(ctx.addr, "/ecp/skills", etag.as_deref());
        let expect = [StatusCode::OK, StatusCode::NOT_MODIFIED];
        if let Some((_, headers, _)) = timed(&ctx, &mut client, "listing", listing, &expect).await {
            etag = headers.get(ETAG).and_then(|v| v.to_str().ok()).map(str::to_owned).or(etag);
        }
        // The pages since the last cursor, as a peer drains a backlog.
        for _ in 0..50 {
            let page = signed_get(ctx.addr, &format!("/ecp/skills?since={cursor}&limit=100"), None);
            let Some((_, _, body)) = timed(&ctx, &mut client, "page", page, &[StatusCode::OK]).await else {
                break;
            };
            let Ok(update) = serde_json::from_slice::<serde_json::Value>(&body) else { break };
            match update["next"].as_i64() {
                Some(next) => cursor = next,
                None => {
                    cursor = update["sequenceNum"].as_i64().unwrap_or(cursor);
                    break;
                }
            }
        }
    }
}

/// Waits (up to a minute) for B to list every name in `pushed`; how many.
pub(crate) async fn converged(b: &NodeProcess, pushed: &[String]) -> anyhow::Result<usize> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut conn = connect(b.addr).await?;
        let (_, _, body) = fetch(&mut conn, b.addr, "/ecp/manifest", None).await?;
        let manifest: serde_json::Value = serde_json::from_slice(&body)?;
        let held: std::collections::HashSet<&str> =
            manifest["skillNames"].as_array().into_iter().flatten().filter_map(|n| n.as_str()).collect();
        let missing: Vec<&String> = pushed.iter().filter(|n| !held.contains(n.as_str())).collect();
        if missing.is_empty() {
            return Ok(pushed.len());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "{} of {} missing after a minute, e.g. {}",
                missing.len(),
                pushed.len(),
                missing[0]
            );
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}
