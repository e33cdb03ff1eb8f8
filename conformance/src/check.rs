//! What a check is ([`Check`]), what it can conclude ([`Problem`],
//! [`Outcome`]) and what it works with ([`Ctx`]).
//!
//! A check is a value: a stable ID (never renumbered, never reused), a
//! level, the profile that promises it, the SPEC section it tests, a title
//! saying what the suite does and a requirement saying what must happen.
//! Its `run` returns `Ok(note)` for a pass or a [`Problem`]; `?` turns a
//! transport error into the Error outcome, so one dead request never
//! aborts the run.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::packets;
use crate::target::{Exchange, Sign, Target, TransportError};

/// How strongly SPEC.md asks for what a check tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A failure makes the target non-conformant (exit 1).
    Must,
    /// A failure is reported; it counts for the exit code only under `--strict`.
    Should,
    /// Optional behaviour, reported for information; never changes the exit code.
    May,
}

impl Level {
    /// `MUST`, `SHOULD` or `MAY`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }
}

/// Which promise a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// What the existing Go implementation promises (shared/ECP.md).
    Ecp11,
    /// ECP/1.1 plus what our node promises beyond it: truthful counts,
    /// provenance and lowered confidence, limits, sequence numbers, ETag,
    /// `?since`, tombstones.
    Ecp12,
}

impl Profile {
    /// `ecp-1.1` or `ecp-1.2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Ecp11 => "ecp-1.1",
            Profile::Ecp12 => "ecp-1.2",
        }
    }

    /// Whether a check of profile `check` runs under this profile.
    pub fn includes(self, check: Profile) -> bool {
        check <= self
    }
}

/// What a check needs from the command line beyond the target. A check
/// whose needs are not met is skipped with the reason, never passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it runs against any target.
    Nothing,
    /// The legacy shared secret (`--secret`), and a target that still
    /// accepts `X-ECP-HMAC` (no `--no-legacy`).
    Secret,
    /// An ECP/1.2 key the target holds (`--key-id`, `--key-secret`).
    Key,
    /// A key and the legacy secret, to send both kinds of signature at once.
    KeyAndSecret,
    /// A key, and `--no-legacy`: the operator says the target refuses `X-ECP-HMAC`.
    LegacyRefused,
    /// Two keys the target holds at once (`--second-key-id`, `--second-key-secret`).
    SecondKey,
}

/// One conformance check.
#[derive(Debug)]
pub struct Check {
    /// Stable ID, area prefix and number, e.g. `PUSH-007`.
    pub id: &'static str,
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// The profile that promises it.
    pub profile: Profile,
    /// The SPEC.md section(s) it tests, e.g. `§7.5`.
    pub spec: &'static str,
    /// What the suite does.
    pub title: &'static str,
    /// What must happen.
    pub requirement: &'static str,
    /// What the suite must have been told for the check to run; skipped otherwise.
    pub needs: Needs,
    /// The check itself.
    pub run: fn(&mut Ctx<'_>) -> Verdict,
}

impl Check {
    /// The area: the ID up to the dash (`PUSH`).
    pub fn area(&self) -> &'static str {
        self.id.split('-').next().unwrap_or(self.id)
    }

    /// The level the check runs at under `profile`: its own when the
    /// profile includes the check's; SHOULD under ecp-1.1 for an ecp-1.2
    /// check that ECP/1.1 implies ([`crate::checks::implied_by_ecp11`]);
    /// else none (skipped).
    pub fn level_under(&self, profile: Profile) -> Option<Level> {
        if profile.includes(self.profile) {
            Some(self.level)
        } else if profile == Profile::Ecp11 && crate::checks::implied_by_ecp11(self.id).is_some() {
            Some(Level::Should)
        } else {
            None
        }
    }

    /// The profile that promises the check, as reports show it under
    /// `profile`: with the reason when it runs because ECP/1.1 implies it.
    pub fn promise(&self, profile: Profile) -> String {
        match crate::checks::implied_by_ecp11(self.id) {
            Some(why) if !profile.includes(self.profile) => {
                format!("{}, SHOULD under ecp-1.1 (implied: {why})", self.profile.as_str())
            }
            _ => self.profile.as_str().to_owned(),
        }
    }
}

/// A check's conclusion: `Ok(note)` passes.
pub type Verdict = Result<String, Problem>;

/// Why a check did not pass.
#[derive(Debug, Clone)]
pub enum Problem {
    /// The target did not do what the requirement says.
    Fail {
        /// One line.
        reason: String,
        /// The request and the relevant part of the answer, one item a line.
        evidence: Vec<String>,
    },
    /// The check does not apply, with the reason.
    Skip(String),
    /// The suite could not run the check (no connection, a timeout).
    Error(String),
}

impl Problem {
    /// Adds the request and the answer of `ex` to a failure's evidence.
    pub fn on(self, ex: &Exchange) -> Problem {
        match self {
            Problem::Fail { reason, mut evidence } => {
                evidence.push(ex.request_line());
                evidence.push(ex.response_line());
                Problem::Fail { reason, evidence }
            }
            other => other,
        }
    }

    /// Adds one labelled line of evidence (e.g. the relevant part of a JSON answer).
    pub fn show(self, label: &str, text: impl std::fmt::Display) -> Problem {
        match self {
            Problem::Fail { reason, mut evidence } => {
                evidence.push(format!("{label}: {}", crate::target::cut(&text.to_string(), 800)));
                Problem::Fail { reason, evidence }
            }
            other => other,
        }
    }
}

impl From<TransportError> for Problem {
    fn from(e: TransportError) -> Self {
        Problem::Error(e.0)
    }
}

/// A failure with a one-line reason.
pub fn fail(reason: impl Into<String>) -> Problem {
    Problem::Fail { reason: reason.into(), evidence: Vec::new() }
}

/// A skip with a reason.
pub fn skip(reason: impl Into<String>) -> Problem {
    Problem::Skip(reason.into())
}

/// `Ok(())` when `cond` holds, else the failure `problem()` builds.
pub fn ensure(cond: bool, problem: impl FnOnce() -> Problem) -> Result<(), Problem> {
    if cond { Ok(()) } else { Err(problem()) }
}

/// What became of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The requirement is met.
    Pass,
    /// The requirement is not met.
    Fail,
    /// Not run (another profile, no secret, nothing to test), with a reason.
    Skip,
    /// The suite could not run it (no connection, a timeout); counts as a failure.
    Error,
}

impl Outcome {
    /// `pass`, `fail` or `skip` as the JSON report writes it: an Error is a `fail`.
    pub fn json_result(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail | Outcome::Error => "fail",
            Outcome::Skip => "skip",
        }
    }
}

/// The result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The check.
    pub check: &'static Check,
    /// The level it ran at under the run's profile ([`Check::level_under`]).
    pub level: Level,
    /// What became of it.
    pub outcome: Outcome,
    /// One line: the pass note, the failure, the skip or error reason.
    pub reason: String,
    /// For failures: the request and the relevant part of the answer.
    pub evidence: Vec<String>,
    /// How long it ran.
    pub duration: Duration,
}

/// What a check works with: the target, this run's unique names, and a
/// few facts fetched once (the target's instance id, the seed skill).
#[derive(Debug)]
pub struct Ctx<'t> {
    /// The node under test.
    pub target: &'t Target,
    /// Random hex unique to this run; every name the suite writes contains it.
    pub run_id: String,
    /// The profile being checked.
    pub profile: Profile,
    seeded: bool,
    instance: Option<String>,
}

impl<'t> Ctx<'t> {
    /// A context for one run.
    pub fn new(target: &'t Target, run_id: String, profile: Profile) -> Ctx<'t> {
        Ctx { target, run_id, profile, seeded: false, instance: None }
    }

    /// A skill name unique to this run: `ecpconf-<run>-<tag>`.
    pub fn name(&self, tag: &str) -> String {
        format!("ecpconf-{}-{tag}", self.run_id)
    }

    /// The `peerInstance` the suite pushes as.
    pub fn peer(&self) -> String {
        format!("ecpconf-peer-{}", self.run_id)
    }

    /// The `originInstance` of the skills the suite authors.
    pub fn origin(&self) -> String {
        format!("ecpconf-origin-{}", self.run_id)
    }

    /// A good packet from [`Ctx::origin`] created an hour ago.
    pub fn good(&self, name: &str) -> Value {
        packets::good_packet(&self.origin(), name, &packets::time_from_now(-3600))
    }

    /// An update from [`Ctx::peer`].
    pub fn update(&self, packets: Vec<Value>) -> Value {
        packets::update(&self.peer(), packets)
    }

    /// Any request.
    pub fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
        sign: Sign,
    ) -> Result<Exchange, Problem> {
        Ok(self.target.send(method, path, headers, body, &sign)?)
    }

    /// A signed GET.
    pub fn get(&self, path: &str) -> Result<Exchange, Problem> {
        self.send(Method::GET, path, &[], None, Sign::Auto)
    }

    /// A signed GET with extra headers.
    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Result<Exchange, Problem> {
        self.send(Method::GET, path, headers, None, Sign::Auto)
    }

    /// A signed `POST /ecp/skills` of exactly `body`.
    pub fn post(&self, body: Vec<u8>) -> Result<Exchange, Problem> {
        self.send(
            Method::POST,
            "/ecp/skills",
            &[("content-type", "application/json")],
            Some(body),
            Sign::Auto,
        )
    }

    /// Pushes a valid update, which must be merged: 200 and a MergeResult object.
    pub fn push(&self, update: &Value) -> Result<(Exchange, Value), Problem> {
        let ex = self.post(packets::encode(update))?;
        let result = ex.json().filter(|v| v.is_object() && ex.status == 200);
        match result {
            Some(result) => Ok((ex, result)),
            None => Err(fail(format!(
                "POST /ecp/skills of a valid update was answered {} without a MergeResult object",
                ex.status
            ))
            .on(&ex)),
        }
    }

    /// `GET path`, which must answer 200 with a JSON object.
    pub fn get_object(&self, path: &str) -> Result<(Exchange, Value), Problem> {
        let ex = self.get(path)?;
        if matches!(ex.status, 401 | 403) && !self.target.has_secret() && self.target.key().is_none() {
            return Err(fail(format!(
                "GET {path} answered {}: the target seems to require authentication; run with \
                 --key-id/--key-secret (ECP/1.2) or --secret (X-ECP-HMAC)",
                ex.status
            ))
            .on(&ex));
        }
        match ex.json() {
            Some(v) if ex.status == 200 && v.is_object() => Ok((ex, v)),
            _ => Err(fail(format!("GET {path} answered {} without a JSON object", ex.status)).on(&ex)),
        }
    }

    /// `GET /ecp/manifest` (200, an object).
    pub fn manifest(&self) -> Result<(Exchange, Value), Problem> {
        self.get_object("/ecp/manifest")
    }

    /// `GET /ecp/skills` (200, an object).
    pub fn listing(&self) -> Result<(Exchange, Value), Problem> {
        self.get_object("/ecp/skills")
    }

    /// The target's instance id, from its manifest.
    pub fn instance(&mut self) -> Result<String, Problem> {
        if let Some(id) = &self.instance {
            return Ok(id.clone());
        }
        let (ex, manifest) = self.manifest()?;
        let id = manifest["instance"]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| fail("the manifest names no instance").on(&ex))?
            .to_owned();
        self.instance = Some(id.clone());
        Ok(id)
    }

    /// Pushes one good skill (`ecpconf-<run>-seed`) once per run, so that
    /// the listing checks have at least one packet to look at. Its outcome
    /// is not judged here.
    pub fn seed(&mut self) {
        if self.seeded {
            return;
        }
        self.seeded = true;
        let name = self.name("seed");
        let _ = self.push(&self.update(vec![self.good(&name)]));
    }

    /// The target still answers `GET /ecp/manifest` with 200.
    pub fn still_answers(&self) -> Result<(), Problem> {
        match self.target.send(Method::GET, "/ecp/manifest", &[], None, &Sign::Auto) {
            Ok(ex) if ex.status == 200 => Ok(()),
            Ok(ex) => Err(fail(format!("afterwards GET /ecp/manifest answered {}", ex.status)).on(&ex)),
            Err(e) => Err(fail(format!("afterwards the target no longer answers: {e}"))),
        }
    }
}

/// The served packet named `name` in a listing.
pub fn served<'v>(listing: &'v Value, name: &str) -> Option<&'v Value> {
    listing["skills"].as_array()?.iter().find(|p| p["skillName"] == name)
}

/// The names in a listing, in order.
pub fn served_names(listing: &Value) -> Vec<String> {
    listing["skills"]
        .as_array()
        .map(|a| a.iter().map(|p| p["skillName"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

/// The `conflicts` lines of a MergeResult (`null` is none).
pub fn conflicts(result: &Value) -> Vec<String> {
    result["conflicts"]
        .as_array()
        .map(|a| a.iter().map(|l| l.as_str().unwrap_or("<not a string>").to_owned()).collect())
        .unwrap_or_default()
}

/// A count of a MergeResult; absent is 0 (`unchanged` is omitted when 0).
pub fn count(result: &Value, key: &str) -> i64 {
    result[key].as_i64().unwrap_or(0)
}

/// The four counts as one short text, for reasons.
pub fn counts_text(result: &Value) -> String {
    format!(
        "new {}, updated {}, unchanged {}, rejected {}, conflicts {}",
        count(result, "newSkills"),
        count(result, "updatedSkills"),
        count(result, "unchanged"),
        count(result, "rejectedSkills"),
        conflicts(result).len()
    )
}

/// The answer must be a 4xx with a JSON object whose `error` is a
/// non-empty string (SPEC §5.5.1); `statuses` narrows the 4xx when not empty.
pub fn expect_json_error(ex: &Exchange, statuses: &[u16]) -> Result<Value, Problem> {
    let wanted = if statuses.is_empty() {
        "a 4xx".to_owned()
    } else {
        statuses.iter().map(u16::to_string).collect::<Vec<_>>().join(" or ")
    };
    let status_ok =
        if statuses.is_empty() { (400..500).contains(&ex.status) } else { statuses.contains(&ex.status) };
    ensure(status_ok, || fail(format!("expected {wanted}, got {}", ex.status)).on(ex))?;
    let body = ex.json().ok_or_else(|| fail(format!("the {} answer is not JSON", ex.status)).on(ex))?;
    let message = body["error"].as_str().unwrap_or_default();
    ensure(!message.trim().is_empty(), || {
        fail(format!("the {} answer has no non-empty \"error\" string", ex.status)).on(ex)
    })?;
    Ok(body)
}
