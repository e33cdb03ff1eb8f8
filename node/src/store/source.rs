//! Who made a change — a peer, the skills folder, an operator, a
//! quarantine approval — and the one text form it has in the database
//! (`peer:<instance>`, `skills-dir`, …), written and parsed only here.
//! Versions and audit lines name it by its row in `actors` ([`actor_id`],
//! migration 24), the quarantine and held deletions by its text.

use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, ToSql, params};
use serde::{Serialize, Serializer};

use super::StoreError;

/// Who made a change; recorded with every version, audit line and
/// quarantine entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Merged from a peer (push or pull): its instance id.
    Peer(String),
    /// Imported from a SKILL.md in the skills folder.
    SkillsDir,
    /// Added or removed with the CLI or the local API.
    Operator,
    /// Installed from the quarantine by an operator.
    QuarantineApproval,
    /// Decided by the node from the outcomes agents reported (a retirement).
    Outcomes,
}

const PEER_PREFIX: &str = "peer:";

impl Source {
    /// The source a stored label names; `None` for text no version of the
    /// node wrote.
    pub(super) fn from_label(label: &str) -> Option<Source> {
        Some(match label {
            "skills-dir" => Source::SkillsDir,
            "operator" => Source::Operator,
            "quarantine-approval" => Source::QuarantineApproval,
            "outcomes" => Source::Outcomes,
            _ => Source::Peer(label.strip_prefix(PEER_PREFIX)?.to_owned()),
        })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Peer(peer) => write!(f, "{PEER_PREFIX}{peer}"),
            Source::SkillsDir => f.write_str("skills-dir"),
            Source::Operator => f.write_str("operator"),
            Source::QuarantineApproval => f.write_str("quarantine-approval"),
            Source::Outcomes => f.write_str("outcomes"),
        }
    }
}

/// The id of `source`'s row in `actors`, made on its first use (in the
/// caller's transaction: rolled back with it).
pub(super) fn actor_id(conn: &Connection, source: &Source) -> Result<i64, StoreError> {
    let label = source.to_string();
    let known = conn
        .prepare_cached("SELECT id FROM actors WHERE name = ?1")?
        .query_row(params![label], |r| r.get(0))
        .optional()?;
    if let Some(id) = known {
        return Ok(id);
    }
    conn.prepare_cached("INSERT INTO actors (name) VALUES (?1)")?.execute(params![label])?;
    Ok(conn.last_insert_rowid())
}

/// As its label: what the local API and `--json` have always shown.
impl Serialize for Source {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl ToSql for Source {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.to_string()))
    }
}

impl FromSql for Source {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let label = value.as_str()?;
        Source::from_label(label)
            .ok_or_else(|| FromSqlError::Other(format!("unknown source {label:?}").into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_reads_back_from_its_label() {
        for source in [
            Source::Peer("ok-agent".into()),
            Source::Peer("operator".into()),
            Source::Peer(String::new()),
            Source::SkillsDir,
            Source::Operator,
            Source::QuarantineApproval,
            Source::Outcomes,
        ] {
            assert_eq!(Source::from_label(&source.to_string()), Some(source));
        }
        assert_eq!(Source::Peer("a".into()).to_string(), "peer:a");
        assert_eq!(serde_json::to_string(&Source::Peer("a".into())).unwrap(), "\"peer:a\"");
        assert_eq!(Source::from_label("cli"), None);
    }
}
