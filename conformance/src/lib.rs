//! `ecp-conformance`: a black-box conformance suite for ECP nodes.
//!
//! It speaks only HTTP to a target URL — ours, the Go reference, any other
//! implementation — and reports, check by check, whether the target does
//! what `protocol/SPEC.md` requires.
//!
//! # Design overview
//!
//! What it does not do: it does not depend on `ecp-protocol`. Requests are
//! built from `serde_json::Value`s and raw bytes; SHA-256 and HMAC are
//! computed with `sha2`/`hmac` directly ([`packets`]). A bug shared by the
//! node and the protocol crate therefore cannot pass unnoticed. It does not
//! read the target's store either: what a check knows, it learned over HTTP.
//!
//! How it signs: with a key the target holds (`--key-id`/`--key-secret`)
//! every ordinary request carries ECP/1.2 headers (SPEC §10.1), so the
//! other areas also run against a node that requires them; else, with
//! `--secret`, the legacy `X-ECP-HMAC` (SPEC §6); else nothing. The SIGN
//! and AUTH checks send their own, deliberately wrong, signatures.
//!
//! It writes to the target: every skill it pushes is named
//! `ecpconf-<run>-<tag>` (`<run>` is random hex, new for each run), pushed
//! as peer `ecpconf-peer-<run>` with origin `ecpconf-origin-<run>`; unless
//! told otherwise it withdraws them afterwards ([`cleanup`]).
//!
//! ```text
//!  cli ──Settings──▶ run ──▶ checks::all() ──(Ctx: Target, run id)──▶ CheckResult…
//!                     │                                                 │
//!                     ├─ preflight: no answer at all → exit 2           │
//!                     │  (and: is it a Go node? reference::identify)    │
//!                     └─ afterwards: cleanup::withdraw (--cleanup)      ▼
//!                                                   report::{human, json, junit}
//! ```
//!
//! # Layout
//!
//! - [`cli`]: flags, resolved once into [`Settings`]; exit codes.
//! - [`target`]: the HTTP client, signing (ECP/1.2 and legacy; blob PUTs over their digest), raw streaming POSTs and PUTs.
//! - [`packets`]: requests from raw JSON, SHA-256, HMAC, canonical strings, names, times.
//! - [`check`]: what a check is, its outcomes, and its context [`check::Ctx`].
//! - [`expect`]: field-type matchers for the wire messages.
//! - [`checks`]: every check, one file per area.
//! - [`reference`]: how a Go reference node is recognised, and its known flaws.
//! - [`cleanup`]: `--cleanup`, withdrawing what the run created.
//! - [`report`]: the text, JSON and JUnit reports.

pub mod check;
pub mod checks;
pub mod cleanup;
pub mod cli;
pub mod expect;
pub mod packets;
mod raw_answer;
pub mod reference;
pub mod report;
pub mod target;

use std::time::{Duration, Instant};

use check::{Check, CheckResult, Ctx, Needs, Outcome, Problem, Profile};
use report::Report;
use target::{Key, Sign, Target};

/// The suite's own version.
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What to run, resolved from the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Base URL of the node under test.
    pub target: String,
    /// The target's shared secret; without it the AUTH checks are skipped.
    pub secret: Option<String>,
    /// ECP/1.2 keys the target holds: none, one, or two (rotation). The
    /// first signs every ordinary request; without one the SIGN checks are skipped.
    pub keys: Vec<Key>,
    /// The operator says the target refuses `X-ECP-HMAC` (`--no-legacy`):
    /// the AUTH checks are skipped and SIGN-022 runs.
    pub no_legacy: bool,
    /// Which promise to check.
    pub profile: Profile,
    /// Time allowed for one exchange.
    pub timeout: Duration,
    /// IDs or ID prefixes to run (empty: all).
    pub only: Vec<String>,
    /// SHOULD failures count for the exit code.
    pub strict: bool,
    /// After the checks, withdraw the skills the run created (`--cleanup`,
    /// the default; `--no-cleanup` keeps them).
    pub cleanup: bool,
}

impl Settings {
    /// Settings for `target` with the defaults: profile ecp-1.1, 10 s, all
    /// checks, cleanup on.
    pub fn new(target: impl Into<String>) -> Settings {
        Settings {
            target: target.into(),
            secret: None,
            keys: Vec::new(),
            no_legacy: false,
            profile: Profile::Ecp11,
            timeout: Duration::from_secs(10),
            only: Vec::new(),
            strict: false,
            cleanup: true,
        }
    }
}

/// Why a run could not happen at all (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A flag is wrong: the message says which and how to fix it.
    Usage(String),
    /// The target does not answer at all.
    Unreachable(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(m) => write!(f, "{m}"),
            RunError::Unreachable(m) => write!(f, "the target does not answer: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The checks `only` selects: exact IDs or prefixes (`PUSH`, `PUSH-0`);
/// every check when empty. A selector matching nothing is a usage error.
pub fn select(only: &[String]) -> Result<Vec<&'static Check>, RunError> {
    let all = checks::all();
    if only.is_empty() {
        return Ok(all);
    }
    let wanted: Vec<String> =
        only.iter().map(|s| s.trim().to_ascii_uppercase()).filter(|s| !s.is_empty()).collect();
    for w in &wanted {
        if !all.iter().any(|c| c.id.starts_with(w.as_str())) {
            return Err(RunError::Usage(format!(
                "--only {w}: no check has this ID or ID prefix; see --list"
            )));
        }
    }
    Ok(all.into_iter().filter(|c| wanted.iter().any(|w| c.id.starts_with(w.as_str()))).collect())
}

/// A random hex id for this run: names written by two runs never collide.
fn run_id() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let seed = format!("{nanos}-{}-{:p}", std::process::id(), &nanos);
    packets::sha256_hex(seed.as_bytes())[..8].to_owned()
}

/// Runs the selected checks against the target.
///
/// Fails only when the run cannot happen: a bad flag, a target that does
/// not answer `GET /ecp/manifest` at all (any HTTP answer will do), or one
/// that answers it 401 or 403 when no credentials were given. A check
/// that loses its connection later ends in the Error outcome instead.
pub fn run(settings: &Settings) -> Result<Report, RunError> {
    let selected = select(&settings.only)?;
    if settings.no_legacy && settings.keys.is_empty() {
        return Err(RunError::Usage(
            "--no-legacy says the target refuses X-ECP-HMAC: give --key-id and --key-secret so the suite \
             can sign ECP/1.2 requests"
                .into(),
        ));
    }
    let target = Target::new(&settings.target, settings.secret.clone(), settings.timeout)
        .map_err(RunError::Usage)?
        .with_keys(settings.keys.clone())
        .with_legacy_refused(settings.no_legacy);
    let first = target
        .send(reqwest::Method::GET, "/ecp/manifest", &[], None, &Sign::Auto)
        .map_err(|e| RunError::Unreachable(e.to_string()))?;
    // Without credentials every check that needs none would fail for that
    // one reason: say it once instead. (Checks that need credentials skip.)
    let uncredentialed = !target.has_secret() && settings.keys.is_empty();
    if matches!(first.status, 401 | 403)
        && uncredentialed
        && selected.iter().any(|c| c.needs == Needs::Nothing)
    {
        return Err(RunError::Usage(
            "this node requires authentication: pass --secret or --key-id/--key-secret".into(),
        ));
    }
    let started = Instant::now();
    let reference = identify_reference(&target, &first);
    let mut cx = Ctx::new(&target, run_id(), settings.profile);
    let results = selected.into_iter().map(|check| run_one(&mut cx, check)).collect();
    let duration = started.elapsed();
    let cleanup = settings.cleanup.then(|| cleanup::withdraw(&cx));
    Ok(Report {
        target: settings.target.clone(),
        profile: settings.profile,
        run_id: cx.run_id.clone(),
        strict: settings.strict,
        results,
        duration,
        reference,
        cleanup,
    })
}

/// Whether the target is a Go node ([`reference::identify`]), from the
/// preflight manifest and one listing; the reason when it is.
fn identify_reference(target: &Target, manifest: &target::Exchange) -> Option<String> {
    let manifest = manifest.json().filter(|_| manifest.status == 200)?;
    let listing = target
        .send(reqwest::Method::GET, "/ecp/skills", &[], None, &Sign::Auto)
        .ok()
        .filter(|ex| ex.status == 200)
        .and_then(|ex| ex.json())
        .unwrap_or_default();
    reference::identify(&manifest, &listing)
}

/// Why a check with `needs` cannot run against `target`, if it cannot.
fn unmet(needs: Needs, target: &Target) -> Option<&'static str> {
    let no_key = "no --key-id/--key-secret given; the SIGN checks need an ECP/1.2 key the target holds";
    match needs {
        Needs::Nothing => None,
        Needs::Secret if target.legacy_refused() => {
            Some("--no-legacy: the target refuses X-ECP-HMAC, so the legacy AUTH checks do not apply")
        }
        Needs::Secret if !target.has_secret() => {
            Some("no --secret given; the AUTH checks need the target's shared secret")
        }
        Needs::Secret => None,
        _ if target.key().is_none() => Some(no_key),
        Needs::Key => None,
        Needs::KeyAndSecret if !target.has_secret() => {
            Some("no --secret given; this check sends a valid X-ECP-HMAC beside ECP/1.2 headers")
        }
        Needs::KeyAndSecret => None,
        Needs::LegacyRefused if !target.legacy_refused() => Some(
            "run with --no-legacy when the target refuses X-ECP-HMAC (ecp-node: serve --accept-legacy false)",
        ),
        Needs::LegacyRefused => None,
        Needs::SecondKey if target.keys().len() < 2 => {
            Some("no --second-key-id/--second-key-secret given; rotation needs two keys the target holds")
        }
        Needs::SecondKey => None,
    }
}

fn run_one(cx: &mut Ctx<'_>, check: &'static Check) -> CheckResult {
    let started = Instant::now();
    let level = check.level_under(cx.profile);
    let (outcome, reason, evidence) = if level.is_none() {
        (
            Outcome::Skip,
            format!("{} check; run with --profile {}", check.profile.as_str(), check.profile.as_str()),
            Vec::new(),
        )
    } else if let Some(reason) = unmet(check.needs, cx.target) {
        (Outcome::Skip, reason.to_owned(), Vec::new())
    } else {
        let verdict = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(cx)));
        match verdict {
            Ok(Ok(note)) => (Outcome::Pass, note, Vec::new()),
            Ok(Err(Problem::Fail { reason, evidence })) => (Outcome::Fail, reason, evidence),
            Ok(Err(Problem::Skip(reason))) => (Outcome::Skip, reason, Vec::new()),
            Ok(Err(Problem::Error(reason))) => (Outcome::Error, reason, Vec::new()),
            Err(panic) => {
                let text = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                (Outcome::Error, format!("the check itself failed (a suite bug): {text}"), Vec::new())
            }
        }
    };
    CheckResult {
        check,
        level: level.unwrap_or(check.level),
        outcome,
        reason,
        evidence,
        duration: started.elapsed(),
    }
}
