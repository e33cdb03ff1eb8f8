//! `ecp-node audit [--since TIME] [--skill NAME] [--peer URL] [--follow]
//! [--json]`: the audit log of the data folder, read-only
//! ([`AuditReader`]), so it works beside a running server and without one.
//! `--follow` polls the log for new entries. How an entry is printed is
//! shared with `events` ([`print`]).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use ecp_node::config::Flags;
use ecp_node::store::{AUDIT_PAGE, AuditEntry, AuditFilter, AuditReader};

use super::output::{emit, one_line};
use crate::cli::{AuditArgs, GlobalArgs};

/// How often `--follow` looks for new entries.
const FOLLOW_POLL: Duration = Duration::from_millis(250);

pub(crate) fn run(global: &GlobalArgs, args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let config = super::resolve(global, Flags::default())?;
    let data = config.data_dir.display();
    let reader = AuditReader::open(&config.data_dir)
        .with_context(|| format!("cannot read the audit log in {data} (see --data)"))?;
    let since = args.since.as_deref().map(|t| parse_time(t, Utc::now())).transpose()?;
    let actor = match &args.peer {
        Some(peer) => Some(actor(&reader, peer)?),
        None => None,
    };
    let mut filter = AuditFilter { after: 0, since, skill: args.skill.clone(), actor };
    loop {
        let entries = reader.read(&filter).context("cannot read the audit log")?;
        for entry in &entries {
            print(entry, args.json)?;
        }
        if let Some(last) = entries.last() {
            filter.after = last.id;
        }
        if entries.len() < AUDIT_PAGE {
            if !args.follow {
                return Ok(ExitCode::SUCCESS);
            }
            std::thread::sleep(FOLLOW_POLL);
        }
    }
}

/// The audit log's actor for `--peer`: the instance of the peer at a URL
/// the node has contacted, or an instance id given as it is.
fn actor(reader: &AuditReader, peer: &str) -> anyhow::Result<String> {
    if let Some(actor) = reader.peer_actor(peer).context("cannot read the peers")? {
        return Ok(actor);
    }
    if peer.contains("://") {
        bail!(
            "this node has not reached {} yet, so no entry can be of it; `ecp-node peers` lists the peers it \
             knows, with their URLs",
            one_line(peer)
        );
    }
    Ok(if peer.starts_with("peer:") { peer.to_owned() } else { format!("peer:{peer}") })
}

/// `--since`: RFC 3339, or an age back from `now` (`30s`, `10m`, `2h`, `1d`).
fn parse_time(text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(at.with_timezone(&Utc));
    }
    let age = ecp_node::config::parse_duration(text).map_err(|e| {
        anyhow::anyhow!(
            "--since {}: neither an RFC 3339 time (2026-01-02T15:04:05Z) nor an age like 30s, 10m, 2h or 1d ({e})",
            one_line(text)
        )
    })?;
    let age = chrono::Duration::from_std(age).context("--since: the age is too long")?;
    now.checked_sub_signed(age).with_context(|| format!("--since {}: the age is too long", one_line(text)))
}

/// Prints one entry: a JSON object on one line, or a line of text whose
/// fields from peers have their control characters escaped.
pub(crate) fn print(entry: &AuditEntry, json: bool) -> anyhow::Result<()> {
    let line = if json {
        serde_json::to_string(entry).context("cannot encode the entry as JSON")?
    } else {
        format!(
            "{} {:<20} {:<24} {:<22} {}",
            super::output::time(&entry.at),
            one_line(&entry.peer),
            one_line(&entry.skill_name),
            one_line(&entry.decision),
            one_line(&entry.reason)
        )
    };
    emit(&format!("{line}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_rfc3339_and_ages_and_says_what_it_wants_otherwise() {
        let now = DateTime::parse_from_rfc3339("2026-03-10T12:00:00Z").unwrap().with_timezone(&Utc);
        let at = |t: &str| parse_time(t, now).unwrap().to_rfc3339();
        assert_eq!(at("2026-03-09T08:30:00+02:00"), "2026-03-09T06:30:00+00:00");
        assert_eq!(at("10m"), "2026-03-10T11:50:00+00:00");
        assert_eq!(at("2h"), "2026-03-10T10:00:00+00:00");
        assert_eq!(at("1d"), "2026-03-09T12:00:00+00:00");
        assert_eq!(at("30s"), "2026-03-10T11:59:30+00:00");
        for bad in ["yesterday", "10", "", "2026-13-01T00:00:00Z"] {
            let error = parse_time(bad, now).unwrap_err().to_string();
            assert!(error.contains("RFC 3339") && error.contains("10m"), "{bad}: {error}");
        }
    }
}
