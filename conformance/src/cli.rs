//! The command line: [`Cli`] is what the user typed (clap), [`Cli::resolve`]
//! turns it into the [`Settings`] the run trusts, [`main`] renders the
//! report and picks the exit code.
//!
//! Exit codes: 0 every MUST check of the profile passed (and every SHOULD,
//! under `--strict`); 1 one failed; 2 the suite could not run (a usage
//! error, a target that does not answer at all, or one that requires
//! authentication when no credentials were given).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::check::Profile;
use crate::report;
use crate::target::Key;
use crate::{RunError, Settings};

const AFTER_HELP: &str = "\
The suite WRITES to the target: every skill it pushes is named ecpconf-<run>-<tag>,
pushed as peer ecpconf-peer-<run> with origin ecpconf-origin-<run>, where <run> is
random hex, new for each run. Afterwards it withdraws them by tombstone (--cleanup, the
default; --no-cleanup keeps them) and says what it could not remove: the target's
quarantine of what it refused, and its neighbours' copies. Point it at a node outside a
live mesh, or one whose peers do not take its skills (peers.toml: push = false) meanwhile.

Profiles:
  ecp-1.1  what the existing Go implementation promises (shared/ECP.md), plus, at
           SHOULD, the ecp-1.2 checks ECP/1.1 implies (origin and frontmatter kept,
           a body limit, ...: marked [ecp-1.1: SHOULD] in --list)
  ecp-1.2  ecp-1.1 plus what ecp-node promises beyond it: truthful merge counts,
           provenance and lowered confidence, limits, sequence numbers, ETag/304,
           ?since=N deltas, tombstones, ECP/1.2 signed requests and responses (SIGN)

Signing: with --key-id/--key-secret every request is signed as ECP/1.2 (SPEC 10.1)
and the SIGN checks run: skew, replay, unknown key, wrong signature, tampered
body/query/method, missing and malformed headers, signed 200 and 304 answers.
Without a key they are skipped. --secret alone signs with the legacy X-ECP-HMAC.
Secrets can come from the environment instead of the command line:
ECP_CONFORMANCE_KEY_SECRET, ECP_CONFORMANCE_SECOND_KEY_SECRET.

Exit codes: 0 every MUST check passed (and every SHOULD, with --strict);
            1 a check that counts failed; 2 usage error, the target does not answer,
            or it requires authentication and no --secret or --key-id/--key-secret was given.";

/// `ecp-conformance`: check an ECP node over HTTP.
#[derive(Debug, Parser)]
#[command(name = "ecp-conformance", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// Base URL of the node under test, e.g. http://127.0.0.1:7327
    #[arg(long, value_name = "URL", required_unless_present = "list")]
    pub target: Option<String>,
    /// The target's shared secret: sign requests with X-ECP-HMAC and run the AUTH checks.
    #[arg(long, value_name = "S")]
    pub secret: Option<String>,
    /// Id of an ECP/1.2 key the target holds: sign every request with it and run the SIGN checks.
    #[arg(long, value_name = "ID")]
    pub key_id: Option<String>,
    /// That key's secret.
    #[arg(long, value_name = "S", env = "ECP_CONFORMANCE_KEY_SECRET", hide_env_values = true)]
    pub key_secret: Option<String>,
    /// Id of a second key the target holds at the same time: the rotation checks.
    #[arg(long, value_name = "ID")]
    pub second_key_id: Option<String>,
    /// The second key's secret.
    #[arg(long, value_name = "S", env = "ECP_CONFORMANCE_SECOND_KEY_SECRET", hide_env_values = true)]
    pub second_key_secret: Option<String>,
    /// The target refuses X-ECP-HMAC: skip the AUTH checks, check that it answers 401 legacy_auth_refused.
    #[arg(long)]
    pub no_legacy: bool,
    /// Which promise to check.
    #[arg(long, value_enum, default_value = "ecp-1.1")]
    pub profile: ProfileArg,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Run only these checks: IDs (PUSH-007) or prefixes (PUSH, AUTH-00); space- or comma-separated.
    #[arg(long, value_name = "ID", num_args = 1.., value_delimiter = ',')]
    pub only: Vec<String>,
    /// List the checks (ID, level, profile, section, title) and exit.
    #[arg(long)]
    pub list: bool,
    /// Time allowed for one exchange: seconds, or a number with ms/s/m.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Count failed SHOULD checks for the exit code too.
    #[arg(long)]
    pub strict: bool,
    /// Afterwards, withdraw the skills the run created (tombstones) and say what stays: the default.
    #[arg(long, overrides_with = "no_cleanup")]
    pub cleanup: bool,
    /// Keep the skills the run created on the target.
    #[arg(long, overrides_with = "cleanup")]
    pub no_cleanup: bool,
}

/// `--profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// What the Go reference implementation promises.
    #[value(name = "ecp-1.1")]
    Ecp11,
    /// ecp-1.1 plus what ecp-node promises beyond it.
    #[value(name = "ecp-1.2")]
    Ecp12,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table per area, the failures in detail, a summary line.
    Text,
    /// One JSON object.
    Json,
    /// JUnit XML.
    Junit,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let n: f64 = number.parse().map_err(|_| format!("{text:?} is not a duration like 10s or 500ms"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?}; use ms, s or m")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("{text:?} must be longer than zero"));
    }
    Ok(Duration::from_secs_f64(secs))
}

impl Cli {
    /// The settings for a run (`--list` needs none).
    pub fn resolve(&self) -> Result<Settings, RunError> {
        let target = self.target.clone().ok_or_else(|| RunError::Usage("--target URL is required".into()))?;
        if self.second_key_id.is_some() && self.key_id.is_none() {
            return Err(RunError::Usage("--second-key-id needs --key-id (the first key) too".into()));
        }
        let mut keys = Vec::new();
        for (flag, id, secret) in [
            ("--key-id", &self.key_id, &self.key_secret),
            ("--second-key-id", &self.second_key_id, &self.second_key_secret),
        ] {
            let Some(id) = id else { continue };
            let secret = secret.clone().filter(|s| !s.is_empty()).ok_or_else(|| {
                RunError::Usage(format!(
                    "{flag} {id:?} needs its secret (the matching --…-secret or environment variable)"
                ))
            })?;
            let key = Key::new(id.clone(), secret).ok_or_else(|| {
                RunError::Usage(format!(
                    "{flag} {id:?} is not a key id: 1 to 64 characters of A-Z a-z 0-9 . _ -"
                ))
            })?;
            keys.push(key);
        }
        if keys.len() == 2 && keys[0].id == keys[1].id {
            return Err(RunError::Usage("--second-key-id must name another key than --key-id".into()));
        }
        Ok(Settings {
            target,
            secret: self.secret.clone().filter(|s| !s.is_empty()),
            keys,
            no_legacy: self.no_legacy,
            profile: match self.profile {
                ProfileArg::Ecp11 => Profile::Ecp11,
                ProfileArg::Ecp12 => Profile::Ecp12,
            },
            timeout: self.timeout,
            only: self.only.clone(),
            strict: self.strict,
            cleanup: !self.no_cleanup,
        })
    }
}

/// Runs the command line; the exit code.
pub fn main(cli: Cli) -> ExitCode {
    match execute(&cli) {
        Ok((text, code)) => {
            print(&text);
            ExitCode::from(code)
        }
        Err(e) => {
            eprintln!("ecp-conformance: {e}");
            ExitCode::from(2)
        }
    }
}

/// The text to print and the exit code.
fn execute(cli: &Cli) -> Result<(String, u8), RunError> {
    if cli.list {
        let checks = crate::select(&cli.only)?;
        let text = match cli.format {
            Format::Json => report::json::list(&checks),
            Format::Text | Format::Junit => report::human::list(&checks),
        };
        return Ok((text, 0));
    }
    let report = crate::run(&cli.resolve()?)?;
    let text = match cli.format {
        Format::Text => report::human::render(&report),
        Format::Json => report::json::render(&report),
        Format::Junit => report::junit::render(&report),
    };
    // The JSON and JUnit shapes are fixed: the cleanup is told on stderr.
    if cli.format != Format::Text
        && let Some(cleanup) = &report.cleanup
    {
        eprint!("{}", report::human::cleanup(cleanup));
    }
    Ok((text, report.exit_code()))
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
