//! `ecp-node pull | push | sync | peers`: federation by hand.
//!
//! Each opens the store directly, like the other commands, so it works
//! whether or not a server runs on the same `--data`: merges and cursors go
//! to the same database, and a running server serves the change within its
//! polling interval. Exit 0 when every exchange succeeded (a pull that held
//! skills back over the limits too: the next one fetches them), 2 otherwise.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use ecp_node::config::{Config, Flags};
use ecp_node::config::{PeersConfig, normalise_url, unit};
use ecp_node::federation::{
    self, Context, HeldBack, PeerSpec, PeerSync, PullOutcome, PullReport, PushReport, SyncError, SyncFailure,
};
use ecp_node::tls::{Identity, TrustAnchors};
use ecp_protocol::MergeResult;
use serde_json::json;

use super::output::{Table, emit, emit_json, one_line, tell, time};
use super::progress::Progress;
use crate::cli::{GlobalArgs, PeerArgs, PullArgs, PushArgs, SyncArgs};

/// The peers file of `--peers`, if given.
pub(super) fn peers_file(config: &Config) -> anyhow::Result<Option<PeersConfig>> {
    match &config.peers_file {
        Some(path) => Ok(Some(PeersConfig::load(path)?)),
        None => Ok(None),
    }
}

/// What the rounds need; the node's client certificate (`--tls-client-cert`)
/// is read here.
pub(super) fn context(
    config: &Config,
    library: ecp_node::library::Library,
    peers: Option<&PeersConfig>,
) -> anyhow::Result<Context> {
    let defaults = PeersConfig::default();
    let file = peers.unwrap_or(&defaults);
    let reshare = file.federation.reshare_external.unwrap_or(config.reshare_external);
    let identity = Identity::of_node(&config.tls)?;
    // The node's own key signs towards peers without one, as `serve` does.
    Ok(Context::new(library, config.policy.clone(), reshare, file.federation.timeout)
        .with_client_identity(identity)
        .signing_as(config.own_keys().into_iter().next(), config.secret.clone()))
}

/// The peer of `pull URL` / `push URL`: its [[peer]] when --peers names it,
/// with the flags (and a pull's `trust`) winning; otherwise a manual peer.
fn peer_of(
    config: &Config,
    peers: Option<&PeersConfig>,
    args: &PeerArgs,
    trust: Option<f64>,
) -> anyhow::Result<PeerSpec> {
    let url = normalise_url(&args.url).map_err(|e| anyhow::anyhow!("PEER_URL: {e}"))?;
    if let Some(trust) = trust {
        unit(trust).map_err(|e| anyhow::anyhow!("--trust: {e}"))?;
    }
    let configured = peers
        .and_then(|file| file.peers.iter().find(|p| p.url == url).map(|p| PeerSpec::configured(file, p)));
    let mut spec = configured.unwrap_or_else(|| PeerSpec::manual(&url, None, config.default_trust));
    if let Some(secret) = args.secret.clone().filter(|s| !s.is_empty()) {
        spec.secret = Some(secret);
    }
    if let Some(trust) = trust {
        spec.trust = trust;
    }
    if let Some(ca) = &args.ca {
        if !spec.url.starts_with("https:") {
            bail!("--ca: applies to https URLs only; the URL is {}", spec.url);
        }
        spec.tls.ca = Some(TrustAnchors::load("--ca", ca)?);
    }
    if args.legacy {
        spec.legacy = true;
    }
    Ok(spec)
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

pub(crate) fn pull(global: &GlobalArgs, args: PullArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, args.keys.0)?;
    let peers = peers_file(&config)?;
    let spec = peer_of(&config, peers.as_ref(), &args.peer, args.trust)?;
    let library = super::open_library(&config, global.init)?;
    // An empty store, that no other process has open, is filled with a
    // rollback journal: each new page is written once, not into the WAL
    // and again by a checkpoint (#18 item 2; `store::bulk`).
    let bulk = library.store().begin_bulk().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot switch the store to a rollback journal for the pull; it stays in WAL mode");
        false
    });
    tracing::debug!(target: ecp_node::TIMELINE, bulk, "store ready");
    // The skills folder stays atomic during the fill: writing a new folder's
    // file in place (`Projection::fill_in_place`) saves about 0.06 s of
    // system CPU at 10k, but lets an agent read a skill half written — a
    // truncated playbook it may follow. Measured in session 29, left off.
    let progress = Progress::on_stderr();
    // A pull brings mostly what the node lacks: each slice's bodies are
    // scanned while the slice before is written (`federation::scan_ahead`).
    let ctx = context(&config, library, peers.as_ref())?.with_progress(progress.hook()).with_scan_ahead(true);
    let pulled = runtime()?.block_on(async {
        // The folder is written beside the merge of the next page, not
        // between pages; the command returns once it is all written.
        ctx.library.start_projection_worker();
        let pulled = federation::pull(&ctx, &spec).await;
        tracing::debug!(target: ecp_node::TIMELINE, "pull round done");
        // In WAL mode the database's pages leave the WAL while the folder's
        // last changes are written, not after them when the store closes;
        // in bulk mode they are in the database already, and the store goes
        // back to WAL mode.
        let library = ctx.library.clone();
        let checkpoint = tokio::task::spawn_blocking(move || match bulk {
            true => library.store().end_bulk(),
            false => library.store().checkpoint_beside(),
        });
        ctx.library.projection_flushed().await;
        tracing::debug!(target: ecp_node::TIMELINE, "skills folder written");
        if let Ok(Err(e)) = checkpoint.await {
            tracing::warn!(error = %e, "cannot checkpoint the store beside the skills folder's writes");
        }
        tracing::debug!(target: ecp_node::TIMELINE, "store checkpointed");
        pulled
    });
    progress.finish();
    // The store's last checkpoint is part of the pull's time.
    drop(ctx);
    tracing::debug!(target: ecp_node::TIMELINE, "store closed");
    let report = match pulled {
        // Installing what fits and holding the rest back is the limits
        // working, not a failure: the next pull fetches the rest.
        Err(SyncFailure { error: SyncError::OriginLimit(held), .. }) => {
            return held_back(&spec, &held, args.json);
        }
        pulled => pulled.with_context(|| format!("pull from {} failed", spec.url))?,
    };
    if args.json {
        emit_json(&report)?;
    } else {
        emit(&pull_text(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a pull that held skills back over the limits says; exit 0.
fn held_back(spec: &PeerSpec, held: &HeldBack, json: bool) -> anyhow::Result<ExitCode> {
    let (count, wait) = (held.count(), held.retry_after());
    if json {
        emit_json(
            &json!({ "url": spec.url, "result": held.merged, "heldBack": count, "retryAfterSeconds": wait }),
        )?;
    } else {
        emit(&format!(
            "pulled {}: {}; held back {count}, next round in {}: over the per-origin or per-sender limits \
             ({held}); pull again then\n",
            spec.url,
            counts(&held.merged),
            humanize(wait)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `seconds` as people say it: `45 s`, `12 min`, `3 h`.
fn humanize(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds.div_ceil(60)),
        _ => format!("{} h", seconds.div_ceil(3600)),
    }
}

pub(crate) fn push(global: &GlobalArgs, args: PushArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, args.keys.0)?;
    let peers = peers_file(&config)?;
    let spec = peer_of(&config, peers.as_ref(), &args.peer, None)?;
    let library = super::open_library(&config, global.init)?;
    let ctx = context(&config, library, peers.as_ref())?;
    let report = runtime()?
        .block_on(federation::push(&ctx, &spec))
        .with_context(|| format!("push to {} failed", spec.url))?;
    if args.json {
        emit_json(&report)?;
    } else {
        emit(&push_text(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn sync(global: &GlobalArgs, args: SyncArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, args.keys.0)?;
    let json = args.json.json;
    let Some(peers) = peers_file(&config)? else {
        bail!("sync needs the peers file: pass --peers FILE (or set ECP_PEERS)");
    };
    let library = super::open_library(&config, global.init)?;
    let progress = Progress::on_stderr();
    let ctx = context(&config, library, Some(&peers))?.with_progress(progress.hook());
    let specs: Vec<PeerSpec> = peers.peers.iter().map(|p| PeerSpec::configured(&peers, p)).collect();
    let results = runtime()?.block_on(federation::sync_all(&ctx, &specs));
    progress.finish();
    let failed =
        results.iter().filter(|r| matches!(r.pull, Some(Err(_))) || matches!(r.push, Some(Err(_)))).count();
    if json {
        emit_json(&json!({ "peers": results }))?;
    } else if results.is_empty() {
        emit("no peers in the peers file\n")?;
    } else {
        emit(&results.iter().map(sync_text).collect::<String>())?;
    }
    if failed > 0 {
        tell(format_args!(
            "ecp-node: {failed} of {} peers failed; `ecp-node peers` shows their state",
            results.len()
        ));
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn peers(global: &GlobalArgs, json: bool) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let file = peers_file(&config)?;
    // A running server knows which peers are active (discovered ones too)
    // and has the freshest state: its view wins.
    let (answer, views) = match super::api::running(&config)? {
        Some(server) => server.peers()?.map_err(anyhow::Error::new)?,
        None => {
            let library = super::open_library(&config, global.init)?;
            let states = library.store().peer_states().context("cannot read the store")?;
            let active: Vec<PeerSpec> = file
                .as_ref()
                .map(|f| f.peers.iter().map(|p| PeerSpec::configured(f, p)).collect())
                .unwrap_or_default();
            let views = federation::peer_views(states, &active);
            (json!({ "peers": views }), views)
        }
    };
    if json {
        emit_json(&answer)?;
        return Ok(ExitCode::SUCCESS);
    }
    if views.is_empty() {
        emit("no peers yet: configure them in a peers file (--peers), or run `ecp-node pull URL`\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&[
        "URL",
        "KIND",
        "INSTANCE",
        "LAST SUCCESS",
        "CURSOR",
        "FAILURES",
        "PUSH ACKED",
        "LAST ERROR",
    ]);
    for v in &views {
        let s = &v.state;
        let error = if s.last_error.is_empty() { s.push_error.clone() } else { s.last_error.clone() };
        table.row(vec![
            s.url.clone(),
            serde_json::to_value(s.kind).ok().and_then(|k| k.as_str().map(str::to_owned)).unwrap_or_default(),
            if s.instance.is_empty() { "-".into() } else { s.instance.clone() },
            s.last_success.as_deref().map_or_else(|| "never".to_owned(), time),
            s.cursor.to_string(),
            format!("{}/{}", s.failures, s.push_failures),
            s.acked_seq.to_string(),
            if error.is_empty() { "-".into() } else { error },
        ]);
    }
    emit(&table.render(""))?;
    Ok(ExitCode::SUCCESS)
}

fn packets(n: usize) -> String {
    if n == 1 { "1 packet".to_owned() } else { format!("{n} packets") }
}

fn counts(r: &MergeResult) -> String {
    let held = if r.held_skills > 0 { format!(", held {}", r.held_skills) } else { String::new() };
    format!(
        "new {}, updated {}, unchanged {}, rejected {}{held}",
        r.new_skills, r.updated_skills, r.unchanged, r.rejected_skills
    )
}

fn conflicts(out: &mut String, r: &MergeResult) {
    for line in &r.conflicts {
        let _ = writeln!(out, "  refused: {}", one_line(line));
    }
    for line in &r.held {
        let _ = writeln!(out, "  held: {}", one_line(line));
    }
    // Taken, but something in them is worth a look (a long description).
    for line in &r.warnings {
        let _ = writeln!(out, "  warning: {}", one_line(line));
    }
}

fn pull_text(r: &PullReport) -> String {
    let mut out = String::new();
    let instance = one_line(&r.instance);
    match r.outcome {
        PullOutcome::Unchanged | PullOutcome::NotModified => {
            let _ = writeln!(out, "pulled {} ({instance}): nothing changed since cursor {}", r.url, r.cursor);
        }
        PullOutcome::Merged => {
            let echoes =
                if r.echoes > 0 { format!(", {} of ours left out", r.echoes) } else { String::new() };
            let _ = writeln!(
                out,
                "pulled {} ({instance}): {} since {} (cursor now {}{echoes}); {}",
                r.url,
                packets(r.packets),
                r.since,
                r.cursor,
                counts(&r.result)
            );
            conflicts(&mut out, &r.result);
        }
    }
    out
}

fn push_text(r: &PushReport) -> String {
    let mut out = String::new();
    let instance = one_line(&r.instance);
    let echoes = if r.echoes > 0 {
        format!(" ({} that came from it or through it left out)", packets(r.echoes))
    } else {
        String::new()
    };
    if r.sent == 0 {
        let _ = writeln!(
            out,
            "pushed to {} ({instance}): nothing to send{echoes}; acknowledged up to sequence {}",
            r.url, r.acked
        );
        return out;
    }
    let names = r.names.iter().map(|n| one_line(n).into_owned()).collect::<Vec<_>>().join(", ");
    let _ = writeln!(
        out,
        "pushed to {} ({instance}): {} ({names}){echoes} in {} update(s); acknowledged up to sequence {}; {}",
        r.url,
        packets(r.sent),
        r.updates,
        r.acked,
        counts(&r.result)
    );
    conflicts(&mut out, &r.result);
    out
}

fn sync_text(r: &PeerSync) -> String {
    let mut out = String::new();
    match &r.pull {
        Some(Ok(report)) => out.push_str(&pull_text(report)),
        Some(Err(e)) => {
            let _ = writeln!(out, "pull from {} failed: {}", r.url, one_line(e));
        }
        None => {}
    }
    match &r.push {
        Some(Ok(report)) => out.push_str(&push_text(report)),
        Some(Err(e)) => {
            let _ = writeln!(out, "push to {} failed: {}", r.url, one_line(e));
        }
        None => {}
    }
    out
}
