//! What the node's operator does to its skills and its quarantine: add a
//! skill (a SKILL.md, or a skill folder whole as a bundle), remove a skill, approve or drop held entries. The CLI calls
//! these on the store when no server runs on its data folder; the `/v1/`
//! write endpoints call them inside the server, which is where the CLI
//! sends the same actions when one does. Each returns what it did, in the
//! shape the `/v1/` API answers with, so both paths print the same.

use ecp_protocol::scan::Scanner;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::import::{self, Companion, SkillFileError};
use crate::library::Library;
use crate::store::{Source, StoreError};

/// What adding one SKILL.md did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "camelCase")]
pub enum Added {
    /// Stored as a new version.
    #[serde(rename_all = "camelCase")]
    Added {
        /// The skill's name.
        name: String,
        /// Its new version.
        version: i64,
        /// The safety scan flags it: peers will refuse it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        warning: Option<String>,
    },
    /// Identical to the current version: nothing changed.
    Unchanged {
        /// The skill's name.
        name: String,
    },
}

/// Why a SKILL.md was not added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddError {
    /// The file is not a skill this node takes, or its name is taken; the
    /// message says which and what to do.
    #[error("{0}")]
    Refused(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Adds the SKILL.md `text` as a local skill (`folder`: the name its
/// frontmatter must have, when it came from `<folder>/SKILL.md`), with the
/// other files of its folder, `companions`, as a bundle (`SPEC.md` §12; a
/// plain skill when there are none); blocking.
pub fn add_skill(
    library: &Library,
    config: &Config,
    text: &str,
    folder: Option<&str>,
    companions: &[Companion],
) -> Result<Added, AddError> {
    let limits = &config.policy.structure;
    let origin = import::local_origin(library.store().instance_id());
    let (packet, warnings) = import::local_packet(text, folder, &origin, limits, crate::store::now())
        .map_err(|e| match e {
            SkillFileError::Read(e) => AddError::Refused(format!("cannot read it: {e}")),
            e => AddError::Refused(e.to_string()),
        })?;
    let name = packet.skill_name.clone();
    if let Some((record, _, _)) =
        library.store().skill(&name)?.filter(|(r, _, _)| r.kind == "external" && !r.deprecated)
    {
        return Err(AddError::Refused(format!(
            "this node holds an external skill {name:?} from {}; remove it first with `ecp-node skill rm {name}` \
             (a local skill would take over its name and lose where it came from)",
            record.origin
        )));
    }
    let scan = match Scanner::standard().try_scan(&packet.skill_body) {
        Ok(report) => scan_warning(&report, config.policy.scan_threshold),
        Err(_) => Some(
            "the safety scan failed on this skill (an internal error of the scanner, not a finding); peers \
             will refuse it; please report it to the ecp maintainers with the skill"
                .to_owned(),
        ),
    };
    let warning = warnings.into_iter().map(|w| w.message).chain(scan).reduce(|a, b| format!("{a}; {b}"));
    match library.put_local_bundle(packet, companions, Source::Operator) {
        Ok(true) => {}
        Ok(false) => return Ok(Added::Unchanged { name }),
        Err(StoreError::Bundle(e)) => {
            return Err(AddError::Refused(import::CompanionError::from(e).to_string()));
        }
        Err(e) => return Err(e.into()),
    }
    let record = library.store().skill(&name)?.map(|(r, _, _)| r);
    let version = record.as_ref().map_or(0, |r| r.version);
    // Kept home (private, or a secret found): the operator hears why.
    let held = record.and_then(|r| r.private_reason).map(|reason| format!("not shared: {reason}"));
    let warning = match (warning, held) {
        (Some(w), Some(h)) => Some(format!("{w}; {h}")),
        (w, h) => w.or(h),
    };
    Ok(Added::Added { name, version, warning })
}

fn scan_warning(
    report: &ecp_protocol::scan::ScanReport,
    threshold: ecp_protocol::Severity,
) -> Option<String> {
    let worst = crate::decision_log::top_finding(&report.findings, threshold)?;
    Some(format!(
        "the safety scan flags line {} ({}); peers will refuse this skill — see `ecp-node skill scan`",
        worst.line, worst.rule_id
    ))
}

/// What removing a skill did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    /// The skill's name.
    pub name: String,
    /// `false`: it already was a tombstone.
    pub removed: bool,
    /// A local skill (its tombstone travels to peers) rather than an external one.
    pub local: bool,
    /// The tombstone's version.
    pub version: i64,
}

/// Removes `name`: a tombstone that travels to peers; blocking.
pub fn remove_skill(library: &Library, name: &str) -> Result<Removed, StoreError> {
    let removed = library.tombstone(name, Source::Operator)?;
    let record = library.store().skill(name)?.map(|(r, _, _)| r);
    Ok(Removed {
        name: name.to_owned(),
        removed,
        local: record.as_ref().is_some_and(|r| r.kind == "local"),
        version: record.map_or(0, |r| r.version),
    })
}

/// What approving a quarantine entry did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// The entry.
    pub id: i64,
    /// The skill installed.
    pub name: String,
    /// Its confidence, lowered by the trust its sender had.
    pub confidence: f64,
}

/// Installs held entry `id` as an external skill; blocking. An entry the
/// scan flagged needs `force` ([`StoreError::NeedsForce`] otherwise).
pub fn approve(library: &Library, config: &Config, id: i64, force: bool) -> Result<Approved, StoreError> {
    let packet = library.approve(id, config.default_trust, config.reshare_external, force)?;
    Ok(Approved { id, name: packet.skill_name, confidence: packet.confidence })
}

/// What dropping a quarantine entry did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dropped {
    /// The entry.
    pub id: i64,
    /// The skill it held.
    pub name: String,
    /// Who sent it.
    pub peer: String,
}

/// Removes held entry `id` for good; blocking.
pub fn drop_quarantined(library: &Library, id: i64) -> Result<Dropped, StoreError> {
    let (entry, _) = library.store().quarantined(id)?;
    library.store().quarantine_drop(id)?;
    Ok(Dropped { id, name: entry.skill_name, peer: entry.peer.to_string() })
}

/// Removes every held entry first received longer than `age` ago (`None`:
/// every held entry); blocking.
pub fn drop_many(library: &Library, age: Option<std::time::Duration>) -> Result<Vec<Dropped>, StoreError> {
    let dropped = library.store().quarantine_drop_older_than(age)?;
    Ok(dropped
        .into_iter()
        .map(|e| Dropped { id: e.id, name: e.skill_name, peer: e.peer.to_string() })
        .collect())
}
